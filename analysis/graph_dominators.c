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
 * (which becomes the semidominator) + 4 per predecessor; before that, 4 per
 * object for its preorder number.  Two classic arrays are saved: the
 * forest's `label` keeps the least semidominator itself (`best`), since
 * only that value is ever used, and the semidominator of vertex i is
 * stored in the predecessor offset i + 1, which nothing reads once i is
 * done (vertices are done in decreasing order).
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

struct dom {
	vmheap_graph *g;
	uint32_t r;	    /* reachable vertices, the virtual root included */
	uint32_t *pre;	    /* [n] object -> preorder number, NONE */
	uint32_t *vertex;   /* [r] preorder -> object (vertex[0] unused) */
	uint32_t *parent;   /* [r] DFS parent, becomes the idom */
	uint32_t *best;	    /* [r] least semidominator, see forest_eval */
	uint32_t *ancestor; /* [r] compressed forest links */
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

	d->pre = malloc(((size_t)n + 1) * sizeof(*d->pre));
	d->vertex = malloc(((size_t)n + 1) * sizeof(*d->vertex));
	d->parent = malloc(((size_t)n + 1) * sizeof(*d->parent));
	next = malloc(((size_t)n + 1) * sizeof(*next));
	if (!d->pre || !d->vertex || !d->parent || !next) {
		free(next);
		return VMHEAP_ENOMEM;
	}
	memset(d->pre, 0xff, (size_t)n * sizeof(*d->pre));
	d->vertex[0] = VMHEAP_GRAPH_ROOT;
	d->parent[0] = 0;
	for (size_t k = 0; k < g->nroots; k++) {
		uint32_t v = g->roots[k].object, cur;

		if (v == VMHEAP_GRAPH_NONE || d->pre[v] != VMHEAP_GRAPH_NONE)
			continue;
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
			if (d->pre[w] != VMHEAP_GRAPH_NONE)
				continue;
			d->pre[w] = r;
			d->vertex[r] = w;
			d->parent[r] = cur;
			next[r] = g->fwd_off[w];
			cur = r++;
			/* the next vertex's targets are looked up soon: start
			 * loading their preorder numbers (a cache miss each) */
			for (uint32_t k = g->fwd_off[w];
			     k < g->fwd_off[w + 1] && k < g->fwd_off[w] + 4;
			     k++)
				__builtin_prefetch(&d->pre[g->fwd[k]]);
		}
	}
	free(next);
	d->r = r;
	return 0;
}

/* Predecessors in preorder numbers: for each reachable object, its
 * reachable referrers, and the virtual root for a root object. */
static int index_predecessors(struct dom *d)
{
	vmheap_graph *g = d->g;
	uint32_t r = d->r;
	uint64_t m = 0;

	d->pred_off = calloc((size_t)r + 1, sizeof(*d->pred_off));
	if (!d->pred_off)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < g->nroots; k++)
		if (g->roots[k].object != VMHEAP_GRAPH_NONE) {
			d->pred_off[d->pre[g->roots[k].object] + 1]++;
			m++;
		}
	/* objects in file order: the references are read sequentially */
	for (uint32_t v = 0; v < g->n; v++) {
		if (d->pre[v] == VMHEAP_GRAPH_NONE)
			continue;
		for (uint32_t k = g->fwd_off[v]; k < g->fwd_off[v + 1]; k++)
			d->pred_off[d->pre[g->fwd[k]] + 1]++;
		m += g->fwd_off[v + 1] - g->fwd_off[v];
	}
	if (m > UINT32_MAX)
		return graph_fail(g, VMHEAP_ELIMIT,
				  "more than %u references and roots",
				  (unsigned)UINT32_MAX);
	for (uint32_t i = 0; i < r; i++)
		d->pred_off[i + 1] += d->pred_off[i];
	d->pred = malloc((m ? m : 1) * sizeof(*d->pred));
	if (!d->pred)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < g->nroots; k++)
		if (g->roots[k].object != VMHEAP_GRAPH_NONE)
			d->pred[d->pred_off[d->pre[g->roots[k].object]]++] = 0;
	for (uint32_t v = 0; v < g->n; v++) {
		uint32_t i = d->pre[v];
		if (i == VMHEAP_GRAPH_NONE)
			continue;
		for (uint32_t k = g->fwd_off[v]; k < g->fwd_off[v + 1]; k++)
			d->pred[d->pred_off[d->pre[g->fwd[k]]]++] = i;
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
	uint32_t top;

	if (v < linked || d->ancestor[v] < linked) {
		*out = d->best[v];
		return 0;
	}
	/* collect the path, v first, up to the vertex below the tree root */
	d->stack_len = 0;
	for (top = v; d->ancestor[top] >= linked; top = d->ancestor[top]) {
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
		uint32_t a = d->ancestor[x];
		if (d->best[a] < d->best[x])
			d->best[x] = d->best[a];
		d->ancestor[x] = d->ancestor[a];
	}
	*out = d->best[v];
	return 0;
}

static int compute_idoms(struct dom *d)
{
	uint32_t r = d->r;
	uint32_t *semi = d->pred_off + 1; /* semi[i] once i is done */
	int rc;

	d->best = malloc((size_t)r * sizeof(*d->best));
	d->ancestor = malloc((size_t)r * sizeof(*d->ancestor));
	if (!d->best || !d->ancestor)
		return VMHEAP_ENOMEM;
	for (uint32_t i = 0; i < r; i++)
		d->best[i] = i;
	memcpy(d->ancestor, d->parent, (size_t)r * sizeof(*d->ancestor));
	for (uint32_t i = r - 1; i >= 1; i--) {
		uint32_t s = i;
		for (uint32_t k = d->pred_off[i]; k < d->pred_off[i + 1]; k++) {
			uint32_t u;
			if ((rc = forest_eval(d, d->pred[k], i + 1, &u)) < 0)
				return rc;
			if (u < s)
				s = u;
		}
		semi[i] = s;
		d->best[i] = s;
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
	free(d->best);
	free(d->ancestor);
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
	g->retained = calloc((size_t)n + 1, sizeof(*g->retained));
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
	free(d.best);
	free(d.ancestor);
	free(d.pred_off);
	free(d.pred);
	d.best = d.ancestor = d.pred_off = d.pred = NULL;
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
