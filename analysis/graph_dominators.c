/*
 * graph_dominators.c - the dominator tree from the virtual root, by the
 * semi-NCA algorithm (semidominators as in Lengauer-Tarjan, with path
 * compression; then each immediate dominator as the nearest common
 * ancestor of the DFS parent and the semidominator), and retained sizes.
 *
 * Nothing recurses.  The depth-first search keeps no stack: the DFS tree's
 * parent links are the way back up, and each vertex keeps its next edge.
 * Path compression keeps its path in a growing array.
 *
 * Vertices are numbered in DFS preorder: 0 is the virtual root, whose edges
 * go to the object of every root record (in file order); only the r
 * reachable vertices are numbered.  The predecessors are re-indexed in
 * preorder numbers (a CSR over the reachable part only), so that the
 * semidominator pass runs over small dense arrays.
 *
 * Peak memory while computing, per reachable vertex: 4 vertex + 4 parent
 * (which becomes the idom) + 4 ancestor + 4 best + 4 predecessor offset
 * (which becomes the semidominator) + 4 per predecessor other than the DFS
 * parent (that one is read from parent[]); before that, 4 per object for
 * its preorder number.  The depth-first search tests each reference
 * against a bitmap of the objects seen (n bits stay in the cache).
 * Two classic arrays are saved: the forest's `label` keeps the least
 * semidominator itself (`best`), since only that value is ever used, and
 * the semidominator of vertex i is stored in the predecessor offset
 * i + 1, which nothing reads once i is done (vertices are done in
 * decreasing order).
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

/* A vertex in the forest of compute_idoms: its compressed forest link
 * and the least semidominator above it (one cache line holds both: the
 * predecessors are read in random order). */
struct forest_node {
	uint32_t ancestor, best;
};

struct dom {
	vmheap_graph *g;
	uint32_t r;	    /* reachable vertices, the virtual root included */
	uint32_t *pre;	    /* [n] object -> preorder number, NONE */
	uint32_t *vertex;   /* [r] preorder -> object (vertex[0] unused) */
	uint32_t *parent;   /* [r] DFS parent, becomes the idom */
	struct forest_node *forest; /* [r] see forest_eval */
	uint32_t *pred_off; /* [r + 1] */
	uint32_t *pred;
	uint32_t *stack; /* path compression */
	size_t stack_len, stack_cap;
};

/* Number every object reachable from the roots in DFS preorder. */
static int number_vertices(struct dom *d)
{
	vmheap_graph *g = d->g;
	uint32_t n = g->n, r = 1;
	uint32_t *next; /* [r] next forward edge of a vertex on the path */
	/* seen[]: one bit per object, the test of every edge (a bitmap of n
	 * bits stays in the cache where pre[] would miss it) */
	uint64_t *seen;

	d->pre = malloc(((size_t)n + 1) * sizeof(*d->pre));
	graph_huge_pages(d->pre, ((size_t)n + 1) * sizeof(*d->pre));
	d->vertex = malloc(((size_t)n + 1) * sizeof(*d->vertex));
	graph_huge_pages(d->vertex, ((size_t)n + 1) * sizeof(*d->vertex));
	d->parent = malloc(((size_t)n + 1) * sizeof(*d->parent));
	graph_huge_pages(d->parent, ((size_t)n + 1) * sizeof(*d->parent));
	next = malloc(((size_t)n + 1) * sizeof(*next));
	graph_huge_pages(next, ((size_t)n + 1) * sizeof(*next));
	seen = calloc((size_t)n / 64 + 1, sizeof(*seen));
	if (!d->pre || !d->vertex || !d->parent || !next || !seen) {
		free(next);
		free(seen);
		return VMHEAP_ENOMEM;
	}
	memset(d->pre, 0xff, (size_t)n * sizeof(*d->pre));
	d->vertex[0] = VMHEAP_GRAPH_ROOT;
	d->parent[0] = 0;
	for (size_t k = 0; k < g->nroots; k++) {
		uint32_t v = g->roots[k].object, cur;

		if (v == VMHEAP_GRAPH_NONE || (seen[v / 64] >> v % 64 & 1))
			continue;
		seen[v / 64] |= 1ull << v % 64;
		d->pre[v] = r;
		d->vertex[r] = v;
		d->parent[r] = 0;
		next[r] = g->fwd_off[v];
		cur = r++;
		while (cur != 0) {
			uint32_t obj = d->vertex[cur];
			if (next[cur] == g->fwd_off[obj + 1]) {
				cur = d->parent[cur];
				continue;
			}
			uint32_t w = g->fwd[next[cur]++];
			if (seen[w / 64] >> w % 64 & 1)
				continue;
			seen[w / 64] |= 1ull << w % 64;
			d->pre[w] = r;
			d->vertex[r] = w;
			d->parent[r] = cur;
			next[r] = g->fwd_off[w];
			cur = r++;
			/* the next vertex's targets are read soon: start
			 * loading them (a cache miss) */
			__builtin_prefetch(&g->fwd[g->fwd_off[w]]);
		}
	}
	free(next);
	free(seen);
	d->r = r;
	return 0;
}

/* Start loading what the reference at fwd position k + PRE_AHEAD needs:
 * its target's preorder number, and the predecessor offset of the target
 * at k + PRE_AHEAD / 2, whose number is loaded by now. */
#define PRE_AHEAD 16

static inline void prefetch_pre(const struct dom *d, uint32_t k)
{
	const vmheap_graph *g = d->g;
	uint32_t m = g->fwd_off[g->n];

	if (k + PRE_AHEAD < m)
		__builtin_prefetch(&d->pre[g->fwd[k + PRE_AHEAD]]);
	if (k + PRE_AHEAD / 2 < m) {
		uint32_t p = d->pre[g->fwd[k + PRE_AHEAD / 2]];
		if (p != VMHEAP_GRAPH_NONE) {
			__builtin_prefetch(&d->pred_off[p]);
			__builtin_prefetch(&d->parent[p]);
		}
	}
}

/* Whether the reference u -> t (preorder numbers, u 0 for a root record)
 * is kept as a predecessor: not when u is t's DFS parent, which
 * compute_idoms takes from parent[] (a duplicate of that reference adds
 * nothing either).  Saves one predecessor per vertex. */
static inline int kept_pred(const struct dom *d, uint32_t u, uint32_t t)
{
	return d->parent[t] != u;
}

/* Predecessors in preorder numbers: for each reachable object, its
 * reachable referrers, and the virtual root for a root object, except the
 * DFS parent (kept_pred). */
static int index_predecessors(struct dom *d)
{
	vmheap_graph *g = d->g;
	uint32_t r = d->r;
	uint64_t m = 0;

	d->pred_off = calloc((size_t)r + 1, sizeof(*d->pred_off));
	graph_huge_pages(d->pred_off, ((size_t)r + 1) * sizeof(*d->pred_off));
	if (!d->pred_off)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < g->nroots; k++) {
		uint32_t v = g->roots[k].object;
		if (v != VMHEAP_GRAPH_NONE && kept_pred(d, 0, d->pre[v])) {
			d->pred_off[d->pre[v] + 1]++;
			m++;
		}
	}
	/* objects in file order: the references are read sequentially,
	 * their targets' numbers are prefetched ahead */
	for (uint32_t v = 0; v < g->n; v++) {
		uint32_t i = d->pre[v];
		if (i == VMHEAP_GRAPH_NONE)
			continue;
		for (uint32_t k = g->fwd_off[v]; k < g->fwd_off[v + 1]; k++) {
			uint32_t t;
			prefetch_pre(d, k);
			t = d->pre[g->fwd[k]];
			if (kept_pred(d, i, t)) {
				d->pred_off[t + 1]++;
				m++;
			}
		}
	}
	if (m > UINT32_MAX)
		return graph_fail(g, VMHEAP_ELIMIT,
				  "more than %u references and roots",
				  (unsigned)UINT32_MAX);
	for (uint32_t i = 0; i < r; i++)
		d->pred_off[i + 1] += d->pred_off[i];
	d->pred = malloc((m ? m : 1) * sizeof(*d->pred));
	graph_huge_pages(d->pred, (m ? m : 1) * sizeof(*d->pred));
	if (!d->pred)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < g->nroots; k++) {
		uint32_t v = g->roots[k].object;
		if (v != VMHEAP_GRAPH_NONE && kept_pred(d, 0, d->pre[v]))
			d->pred[d->pred_off[d->pre[v]]++] = 0;
	}
	for (uint32_t v = 0; v < g->n; v++) {
		uint32_t i = d->pre[v];
		if (i == VMHEAP_GRAPH_NONE)
			continue;
		for (uint32_t k = g->fwd_off[v]; k < g->fwd_off[v + 1]; k++) {
			uint32_t t;
			prefetch_pre(d, k);
			t = d->pre[g->fwd[k]];
			if (kept_pred(d, i, t))
				d->pred[d->pred_off[t]++] = i;
		}
	}
	memmove(d->pred_off + 1, d->pred_off, (size_t)r * sizeof(*d->pred_off));
	d->pred_off[0] = 0;
	return 0;
}

/*
 * The least semidominator of the vertices on the forest path from `v` up
 * to, but not including, the root of its tree in the forest.  The forest
 * holds the vertices numbered `linked` and above (those done), each linked
 * to its DFS parent; a vertex below `linked` is a tree root by itself, and
 * its best[] is still its own number.  Compresses the path so that every
 * vertex on it links to that tree root and keeps the least value above it.
 */
static int forest_eval(struct dom *d, uint32_t v, uint32_t linked,
		       uint32_t *out)
{
	struct forest_node *f = d->forest;
	uint32_t top;

	if (v < linked || f[v].ancestor < linked) {
		*out = f[v].best;
		return 0;
	}
	/* collect the path, v first, up to the vertex below the tree root */
	d->stack_len = 0;
	for (top = v; f[top].ancestor >= linked; top = f[top].ancestor) {
		if (d->stack_len == d->stack_cap) {
			void *p = vmheap_array_grow(d->stack, &d->stack_cap,
						    sizeof(*d->stack), 256);
			if (!p)
				return VMHEAP_ENOMEM;
			d->stack = p;
		}
		d->stack[d->stack_len++] = top;
	}
	/* from the top down: take the ancestor's value if less, and link to
	 * the tree root */
	while (d->stack_len > 0) {
		uint32_t x = d->stack[--d->stack_len];
		uint32_t a = f[x].ancestor;
		if (f[a].best < f[x].best)
			f[x].best = f[a].best;
		f[x].ancestor = f[a].ancestor;
	}
	*out = f[v].best;
	return 0;
}

/* How far ahead (downwards in pred) the forest nodes of the predecessors
 * are prefetched. */
#define EVAL_AHEAD 8

static int compute_idoms(struct dom *d)
{
	uint32_t r = d->r;
	uint32_t *semi = d->pred_off + 1; /* semi[i] once i is done */
	int rc;

	d->forest = malloc((size_t)r * sizeof(*d->forest));
	graph_huge_pages(d->forest, (size_t)r * sizeof(*d->forest));
	if (!d->forest)
		return VMHEAP_ENOMEM;
	for (uint32_t i = 0; i < r; i++)
		d->forest[i] = (struct forest_node){d->parent[i], i};
	/* vertices in decreasing order, each one's predecessors from the
	 * last: pred is read backwards, so the nodes of the ones ahead are
	 * prefetched (the least semidominator does not depend on the order) */
	for (uint32_t i = r - 1; i >= 1; i--) {
		/* the DFS parent, a predecessor below i (index_predecessors
		 * left it out of pred) */
		uint32_t s = d->parent[i];
		for (uint32_t k = d->pred_off[i + 1]; k-- > d->pred_off[i];) {
			uint32_t u;
			if (k >= EVAL_AHEAD)
				__builtin_prefetch(
				    &d->forest[d->pred[k - EVAL_AHEAD]]);
			if ((rc = forest_eval(d, d->pred[k], i + 1, &u)) < 0)
				return rc;
			if (u < s)
				s = u;
		}
		semi[i] = s;
		d->forest[i].best = s;
	}
	/* idom(i): walk up from the DFS parent while above semi(i) */
	uint32_t *idom = d->parent;
	for (uint32_t i = 1; i < r; i++) {
		uint32_t j = idom[i];
		while (j > semi[i])
			j = idom[j];
		idom[i] = j;
	}
	return 0;
}

static void free_work(struct dom *d)
{
	free(d->pre);
	free(d->vertex);
	free(d->parent);
	free(d->forest);
	free(d->pred_off);
	free(d->pred);
	free(d->stack);
	memset(d, 0, sizeof(*d));
}

/* Store idoms and retained sizes by object index; count the unreachable. */
static int store_results(struct dom *d)
{
	vmheap_graph *g = d->g;
	uint32_t n = g->n, r = d->r;
	uint32_t *idom = d->parent, *vertex = d->vertex;
	uint64_t *ret;

	g->idom = malloc(((size_t)n + 1) * sizeof(*g->idom));
	graph_huge_pages(g->idom, ((size_t)n + 1) * sizeof(*g->idom));
	g->retained = calloc((size_t)n + 1, sizeof(*g->retained));
	graph_huge_pages(g->retained, ((size_t)n + 1) * sizeof(*g->retained));
	if (!g->idom || !g->retained) {
		free(g->idom);
		free(g->retained);
		g->idom = NULL;
		g->retained = NULL;
		return VMHEAP_ENOMEM;
	}
	ret = g->retained;
	for (uint32_t i = 1; i < r; i++)
		ret[vertex[i]] = vmheap_graph_object_bytes(g, vertex[i]);
	/* children come after their idom in preorder: sum bottom-up */
	for (uint32_t i = r - 1; i >= 1; i--)
		if (idom[i])
			graph_add_bytes(g, &ret[vertex[idom[i]]],
					ret[vertex[i]]);
	memset(g->idom, 0xff, (size_t)n * sizeof(*g->idom));
	for (uint32_t i = 1; i < r; i++)
		g->idom[vertex[i]] =
		    idom[i] ? vertex[idom[i]] : VMHEAP_GRAPH_ROOT;
	/* the objects no root reaches, summed (not the total minus the
	 * others: a total held at UINT64_MAX would make that wrong) */
	g->unreachable_bytes = 0;
	for (uint32_t i = 0; i < n; i++)
		if (g->idom[i] == VMHEAP_GRAPH_NONE)
			graph_add_bytes(g, &g->unreachable_bytes,
					vmheap_graph_object_bytes(g, i));
	g->unreachable = n - (r - 1);
	g->have_unreachable = 1;
	return 0;
}

int vmheap_graph_dominators(vmheap_graph *g)
{
	struct dom d = {.g = g};
	int rc;

	if (g->idom)
		return 0;
	if ((rc = number_vertices(&d)) < 0 || (rc = index_predecessors(&d)) < 0)
		goto fail;
	free(d.pre);
	d.pre = NULL;
	if ((rc = compute_idoms(&d)) < 0)
		goto fail;
	free(d.forest);
	free(d.pred_off);
	free(d.pred);
	d.forest = NULL;
	d.pred_off = d.pred = NULL;
	if ((rc = store_results(&d)) < 0)
		goto fail;
	free_work(&d);
	return 0;
fail:
	free_work(&d);
	if (rc == VMHEAP_ENOMEM)
		graph_fail(g, rc, "out of memory for the dominator tree");
	return rc;
}

uint32_t vmheap_graph_idom(const vmheap_graph *g, uint32_t i)
{
	return g->idom ? g->idom[i] : VMHEAP_GRAPH_NONE;
}

uint64_t vmheap_graph_retained_bytes(const vmheap_graph *g, uint32_t i)
{
	return g->retained ? g->retained[i] : 0;
}
