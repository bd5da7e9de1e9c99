/*
 * graph_dominators.c - the dominator tree from the virtual root, by the
 * semi-NCA algorithm (semidominators as in Lengauer-Tarjan, with path
 * compression; then each immediate dominator as the nearest common
 * ancestor of the DFS parent and the semidominator), and retained sizes.
 *
 * Nothing recurses.  The depth-first search keeps its path (each vertex
 * on it with its references still to follow) in a growing array: 12
 * bytes a level (a chain of n objects takes 12 n), what it reads on coming
 * back to a vertex in one place.
 * Path compression keeps its path in a growing array.
 *
 * Vertices are numbered in DFS preorder: 0 is the virtual root, whose edges
 * go to the object of every root record (in file order); only the r
 * reachable vertices are numbered.  The predecessors are re-indexed in
 * preorder numbers (a CSR over the reachable part only), so that the
 * semidominator pass runs over small dense arrays.
 *
 * Peak memory while computing, per reachable vertex: 4 vertex + 4 parent
 * (which becomes the idom) + 8 forest + 4 predecessor offset (which
 * becomes the semidominator) + 4 per predecessor other than the DFS tree's
 * edge (that one is read from parent[]); before that, 4 per object for its
 * preorder number, during the search 4 per reference for where its
 * target's references start (reference_starts), and while indexing the
 * predecessors 4 more per vertex (a second half's counts).  The depth-first
 * search tests each reference against a bitmap of the objects seen (n bits stay
 * in the cache) and marks the tree's edges in a bitmap of the references (1 bit
 * each: the predecessors leave them out without reading parent[] at random).
 * Two classic arrays are saved: the forest's `label` keeps the least
 * semidominator itself (`best`), since only that value is ever used, and
 * the semidominator of vertex i is stored in the predecessor offset
 * i + 1, which nothing reads once i is done (vertices are done in
 * decreasing order).
 *
 * The semidominators' time is in forest_eval's walks up the forest, one
 * cache miss a node: prefetch_paths fetches the first nodes of the walks
 * ahead, a level a stage (at 100M objects this took the pass from 36 s
 * to 18 s).  Retained sizes are summed by preorder number, in the
 * forest's memory, and stored by object once (sum_retained).
 *
 * Two processors: the predecessors are counted and stored by two threads
 * (each half of the objects into its own counts, the halves' lists one
 * after the other: the same lists as one thread's), and the idoms by
 * object are stored by one thread while the other sums retained sizes.
 * While one thread searches, numbers and computes semidominators, the
 * other takes the first touches of the arrays it is about to write
 * (graph_prefault.c: the kernel clears each fresh page there).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	uint64_t *tree;	 /* [m / 64 + 1] bit k: fwd[k] is a DFS tree edge */
	uint32_t *stack; /* path compression */
	size_t stack_len, stack_cap;
};

/* A vertex on the depth-first search's path: its preorder number and
 * the range of its references still to follow (fwd[k .. end)). */
struct dfs_frame {
	uint32_t cur, k, end;
};

/* How many targets of a new vertex have their seen bits, the ends of their
 * references and their first references prefetched. */
#define SIB_AHEAD 4

/* How far ahead gather_starts prefetches a target's offset. */
#define START_AHEAD 16

/* Part of reference_starts' work: start[k] for k in [lo, hi). */
struct starts_part {
	const vmheap_graph *g;
	uint32_t *start;
	uint32_t lo, hi;
};

static void *gather_starts(void *arg)
{
	struct starts_part *p = arg;
	const vmheap_graph *g = p->g;

	for (uint32_t k = p->lo; k < p->hi; k++) {
		if (k + START_AHEAD < p->hi)
			__builtin_prefetch(
			    &g->fwd_off[g->fwd[k + START_AHEAD]]);
		p->start[k] = g->fwd_off[g->fwd[k]];
	}
	return NULL;
}

/*
 * start[k]: where the references of reference k's target begin
 * (fwd_off[fwd[k]]), gathered in file order on two threads, or NULL (no
 * memory).  The search reads a new vertex's first references right
 * where it read the reference to it, instead of after a cache miss on
 * fwd_off[] first: one miss a level of the search, not two in a row.
 * 4 bytes a reference, freed before the predecessors are indexed (which
 * take more).
 */
static uint32_t *reference_starts(const vmheap_graph *g)
{
	uint32_t m = g->fwd_off[g->n];
	uint32_t *start = malloc(((size_t)m + 1) * sizeof(*start));
	struct starts_part a = {g, start, 0, m / 2}, b = {g, start, m / 2, m};

	if (!start)
		return NULL;
	graph_huge_pages(start, ((size_t)m + 1) * sizeof(*start));
	graph_both_halves(gather_starts, &a, &b, m >= GRAPH_THREAD_MIN);
	return start;
}

/* Number every object reachable from the roots in DFS preorder, and mark
 * in d->tree the reference that reached each vertex. */
static int number_vertices(struct dom *d)
{
	vmheap_graph *g = d->g;
	uint32_t n = g->n, r = 1;
	/* the path from the root being searched: what the search reads
	 * when it comes back to a vertex stays together (and in the cache)
	 * instead of in three arrays by preorder number */
	struct dfs_frame *path = NULL;
	size_t cap = 0;
	/* seen[]: one bit per object, the test of every edge (a bitmap of n
	 * bits stays in the cache where pre[] would miss it) */
	uint64_t *seen;
	uint32_t *start = reference_starts(g);

	if (!start)
		return VMHEAP_ENOMEM;

	d->pre = malloc(((size_t)n + 1) * sizeof(*d->pre));
	graph_huge_pages(d->pre, ((size_t)n + 1) * sizeof(*d->pre));
	d->vertex = malloc(((size_t)n + 1) * sizeof(*d->vertex));
	graph_huge_pages(d->vertex, ((size_t)n + 1) * sizeof(*d->vertex));
	d->parent = malloc(((size_t)n + 1) * sizeof(*d->parent));
	graph_huge_pages(d->parent, ((size_t)n + 1) * sizeof(*d->parent));
	seen = calloc((size_t)n / 64 + 1, sizeof(*seen));
	graph_huge_pages(seen, ((size_t)n / 64 + 1) * sizeof(*seen));
	d->tree = calloc((size_t)g->fwd_off[n] / 64 + 1, sizeof(*d->tree));
	graph_huge_pages(d->tree,
			 ((size_t)g->fwd_off[n] / 64 + 1) * sizeof(*d->tree));
	if (!d->pre || !d->vertex || !d->parent || !seen || !d->tree) {
		free(seen);
		free(start);
		return VMHEAP_ENOMEM;
	}
	/* the pages' first touches on the other processor: pre[] as it is
	 * set, the bitmaps the search writes at random, then the arrays
	 * it fills in preorder */
	struct graph_prefault pf = {.n = 0};
	graph_prefault_add(&pf, d->pre, (size_t)n * sizeof(*d->pre));
	graph_prefault_add(&pf, seen, ((size_t)n / 64 + 1) * sizeof(*seen));
	graph_prefault_add(&pf, d->tree,
			   ((size_t)g->fwd_off[n] / 64 + 1) * sizeof(*d->tree));
	graph_prefault_add(&pf, d->vertex,
			   ((size_t)n + 1) * sizeof(*d->vertex));
	graph_prefault_add(&pf, d->parent,
			   ((size_t)n + 1) * sizeof(*d->parent));
	graph_prefault_begin(&pf);
	memset(d->pre, 0xff, (size_t)n * sizeof(*d->pre));
	d->vertex[0] = VMHEAP_GRAPH_ROOT;
	d->parent[0] = 0;
	for (size_t k = 0; k < g->nroots; k++) {
		uint32_t v = g->roots[k].object, vs;
		size_t len = 0;

		if (v == VMHEAP_GRAPH_NONE || (seen[v / 64] >> v % 64 & 1))
			continue;
		vs = g->fwd_off[v];
		for (;;) {
			/* v: a new vertex, child of the path's last one */
			if (len == cap) {
				void *p = vmheap_array_grow(
				    path, &cap, sizeof(*path), 1024);
				if (!p) {
					graph_prefault_end(&pf);
					free(path);
					free(seen);
					free(start);
					return VMHEAP_ENOMEM;
				}
				path = p;
			}
			seen[v / 64] |= 1ull << v % 64;
			d->pre[v] = r;
			d->vertex[r] = v;
			d->parent[r] = len ? path[len - 1].cur : 0;
			path[len++] =
			    (struct dfs_frame){r++, vs, g->fwd_off[v + 1]};
			/* its targets are read next (fetched since its
			 * parent's turn, below) */
			__builtin_prefetch(&g->fwd[vs]);
			__builtin_prefetch(&start[vs]);
			/* and, for its first targets, their seen bits, the
			 * ends of their references and their first
			 * references: the search goes to one of them next,
			 * and back to the others after it */
			for (uint32_t k = path[len - 1].k,
				      e = path[len - 1].end;
			     k < e && k < path[len - 1].k + SIB_AHEAD; k++) {
				__builtin_prefetch(&seen[g->fwd[k] / 64]);
				__builtin_prefetch(&g->fwd_off[g->fwd[k] + 1]);
				__builtin_prefetch(&g->fwd[start[k]]);
			}
			/* the next unseen target of the deepest vertex that
			 * has one */
			for (;;) {
				struct dfs_frame *f = &path[len - 1];
				if (f->k == f->end) {
					if (--len == 0)
						break;
					continue;
				}
				v = g->fwd[f->k++];
				if (!(seen[v / 64] >> v % 64 & 1)) {
					d->tree[(f->k - 1) / 64] |=
					    1ull << (f->k - 1) % 64;
					vs = start[f->k - 1];
					break;
				}
			}
			if (len == 0)
				break;
		}
	}
	graph_prefault_end(&pf);
	free(path);
	free(seen);
	free(start);
	d->r = r;
	return 0;
}

/* How far ahead index_predecessors prefetches: the target's preorder
 * number of the reference at k + PRE_AHEAD, and the count or position of
 * the target at k + PRE_AHEAD / 2, whose number is loaded by now. */
#define PRE_AHEAD 16

/* One half of the objects (file order) for index_predecessors: counts,
 * then positions in pred, of its predecessors by target. */
struct pred_part {
	struct dom *d;
	uint32_t lo, hi; /* objects [lo, hi) */
	uint32_t *at;	 /* [r] by target: count, then next position */
	uint64_t m;	 /* predecessors counted */
	int fill;	 /* 0: count, 1: fill pred */
};

/* Whether the reference at fwd position k is the DFS tree's edge to its
 * target: compute_idoms takes that predecessor from parent[]. */
static inline int tree_edge(const struct dom *d, uint32_t k)
{
	return d->tree[k / 64] >> k % 64 & 1;
}

/* Count or store the predecessors that the references of objects
 * [p->lo, p->hi) give their targets: the objects in file order, so the
 * references are read sequentially and their targets' numbers prefetched
 * ahead. */
static void *pred_pass(void *arg)
{
	struct pred_part *p = arg;
	struct dom *d = p->d;
	const vmheap_graph *g = d->g;
	uint32_t end = g->fwd_off[p->hi];

	for (uint32_t v = p->lo; v < p->hi; v++) {
		uint32_t i = d->pre[v];
		if (i == VMHEAP_GRAPH_NONE)
			continue;
		for (uint32_t k = g->fwd_off[v]; k < g->fwd_off[v + 1]; k++) {
			uint32_t t;
			if (k + PRE_AHEAD < end)
				__builtin_prefetch(
				    &d->pre[g->fwd[k + PRE_AHEAD]]);
			if (k + PRE_AHEAD / 2 < end) {
				/* (NONE: the reference of an unreachable
				 * object, skipped) */
				uint32_t a = d->pre[g->fwd[k + PRE_AHEAD / 2]];
				if (a != VMHEAP_GRAPH_NONE)
					__builtin_prefetch(&p->at[a]);
			}
			if (tree_edge(d, k))
				continue;
			t = d->pre[g->fwd[k]];
			if (p->fill)
				d->pred[p->at[t]++] = i;
			else {
				p->at[t]++;
				p->m++;
			}
		}
	}
	return NULL;
}

/* Both halves of a pass, at once on two processors when there are two
 * (they write only their own counts and positions). */
static void pred_passes(struct pred_part *a, struct pred_part *b, int fill)
{
	a->fill = b->fill = fill;
	graph_both_halves(pred_pass, a, b,
			  a->d->g->fwd_off[a->d->g->n] >= GRAPH_THREAD_MIN);
}

/* Predecessors in preorder numbers: for each reachable object, its
 * reachable referrers, and the virtual root for a root object, except the
 * DFS tree's edge (tree_edge; a root object's root records when its DFS
 * parent is the virtual root).  In the order of a sequential pass: the
 * root records, then the references in file order.  The objects are done
 * in two halves, each with its own count per target (4 bytes per vertex
 * while indexing). */
static int index_predecessors(struct dom *d)
{
	vmheap_graph *g = d->g;
	uint32_t r = d->r, n = g->n, lo = 0, hi = n;
	uint32_t *first;
	struct pred_part a = {.d = d}, b = {.d = d};

	/* the halves: the first object whose references start at or past
	 * the middle one */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (g->fwd_off[mid] < g->fwd_off[n] / 2)
			lo = mid + 1;
		else
			hi = mid;
	}
	a.lo = 0;
	a.hi = b.lo = lo;
	b.hi = n;
	d->pred_off = calloc((size_t)r + 1, sizeof(*d->pred_off));
	graph_huge_pages(d->pred_off, ((size_t)r + 1) * sizeof(*d->pred_off));
	first = calloc((size_t)r + 1, sizeof(*first));
	graph_huge_pages(first, ((size_t)r + 1) * sizeof(*first));
	if (!d->pred_off || !first) {
		free(first);
		return VMHEAP_ENOMEM;
	}
	a.at = first;
	b.at = d->pred_off;
	for (size_t k = 0; k < g->nroots; k++) {
		uint32_t v = g->roots[k].object;
		if (v != VMHEAP_GRAPH_NONE && d->parent[d->pre[v]] != 0) {
			a.at[d->pre[v]]++;
			a.m++;
		}
	}
	pred_passes(&a, &b, 0);
	if (a.m + b.m > UINT32_MAX) {
		free(first);
		return graph_fail(g, VMHEAP_ELIMIT,
				  "more than %u references and roots",
				  (unsigned)UINT32_MAX);
	}
	/* positions: each target's predecessors from the first half, then
	 * from the second */
	uint32_t pos = 0;
	for (uint32_t t = 0; t < r; t++) {
		uint32_t ca = a.at[t], cb = b.at[t];
		a.at[t] = pos;
		b.at[t] = pos + ca;
		pos += ca + cb;
	}
	d->pred = malloc((pos ? pos : 1) * sizeof(*d->pred));
	graph_huge_pages(d->pred, (pos ? pos : 1) * sizeof(*d->pred));
	if (!d->pred) {
		free(first);
		return VMHEAP_ENOMEM;
	}
	for (size_t k = 0; k < g->nroots; k++) {
		uint32_t v = g->roots[k].object;
		if (v != VMHEAP_GRAPH_NONE && d->parent[d->pre[v]] != 0)
			d->pred[a.at[d->pre[v]]++] = 0;
	}
	pred_passes(&a, &b, 1);
	free(first);
	/* b.at[t] is now the end of t's predecessors */
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

	if (v < linked) { /* not in the forest yet: its own number */
		*out = v;
		return 0;
	}
	if (f[v].ancestor < linked) {
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

/* How far ahead (downwards in pred) the forest paths of the predecessors
 * are prefetched, and how many nodes of each (see prefetch_paths). */
#define EVAL_AHEAD 8
#define EVAL_LEVELS 5

/*
 * Start loading the forest paths that forest_eval walks next, for the
 * predecessor at pred[k] and those after it (pred is read downwards; i is
 * the vertex whose predecessors are read).  A walk up the forest is a chain
 * of dependent loads, one cache miss a node, so it is fetched in stages:
 * the node of the predecessor EVAL_LEVELS * EVAL_AHEAD entries ahead; the
 * node above that of the one (EVAL_LEVELS - 1) * EVAL_AHEAD ahead, whose
 * own node was fetched a stage earlier; and so on, until forest_eval finds
 * the first EVAL_LEVELS nodes of each path in the cache.  The nodes may
 * change before the walk (a compression in between): a prefetch is only a
 * hint, and most stay right.  A vertex not above i is left out (it is not
 * in the forest, forest_eval reads nothing of it).
 */
static inline void prefetch_paths(const struct dom *d, uint32_t k, uint32_t i)
{
	for (uint32_t level = EVAL_LEVELS; level >= 1; level--) {
		uint32_t ahead = level * EVAL_AHEAD, v, up;

		if (k < ahead)
			continue;
		v = d->pred[k - ahead];
		for (up = EVAL_LEVELS - level; v > i && up > 0; up--)
			v = d->forest[v].ancestor;
		if (v > i)
			__builtin_prefetch(&d->forest[v]);
	}
}

static int compute_idoms(struct dom *d)
{
	uint32_t r = d->r;
	uint32_t *semi = d->pred_off + 1; /* semi[i] once i is done */
	int rc;

	d->forest = malloc((size_t)r * sizeof(*d->forest));
	graph_huge_pages(d->forest, (size_t)r * sizeof(*d->forest));
	if (!d->forest)
		return VMHEAP_ENOMEM;
	struct graph_prefault pf = {.n = 0};
	graph_prefault_add(&pf, d->forest, (size_t)r * sizeof(*d->forest));
	graph_prefault_begin(&pf);
	for (uint32_t i = 0; i < r; i++)
		d->forest[i] = (struct forest_node){d->parent[i], i};
	graph_prefault_end(&pf);
	/* vertices in decreasing order, each one's predecessors from the
	 * last: pred is read backwards, so the paths of the ones ahead are
	 * prefetched (the least semidominator does not depend on the order) */
	for (uint32_t i = r - 1; i >= 1; i--) {
		/* the DFS parent, a predecessor below i (index_predecessors
		 * left it out of pred) */
		uint32_t s = d->parent[i];
		for (uint32_t k = d->pred_off[i + 1]; k-- > d->pred_off[i];) {
			uint32_t u;
			prefetch_paths(d, k, i);
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
	free(d->tree);
	free(d->stack);
	memset(d, 0, sizeof(*d));
}

/* How far ahead the random reads and writes by object index of
 * store_idoms and store_results are prefetched. */
#define STORE_AHEAD 16

/* How far ahead the random reads and writes by object index of
 * store_idoms and store_results are prefetched. */
#define STORE_AHEAD 16

/* The idoms by object index (g->idom, allocated), and the objects no root
 * reaches and their bytes (store_results' part that needs no retained
 * size). */
static void *store_idoms(void *arg)
{
	struct dom *d = arg;
	vmheap_graph *g = d->g;
	uint32_t n = g->n, r = d->r;
	const uint32_t *idom = d->parent, *vertex = d->vertex;

	memset(g->idom, 0xff, (size_t)n * sizeof(*g->idom));
	for (uint32_t i = 1; i < r; i++) {
		if (i + STORE_AHEAD < r) {
			__builtin_prefetch(&g->idom[vertex[i + STORE_AHEAD]],
					   1);
			__builtin_prefetch(&vertex[idom[i + STORE_AHEAD]]);
		}
		g->idom[vertex[i]] =
		    idom[i] ? vertex[idom[i]] : VMHEAP_GRAPH_ROOT;
	}
	/* the objects no root reaches, summed (not the total minus the
	 * others: a total held at UINT64_MAX would make that wrong) */
	g->unreachable_bytes = 0;
	for (uint32_t i = 0; i < n; i++)
		if (g->idom[i] == VMHEAP_GRAPH_NONE)
			graph_add_bytes(g, &g->unreachable_bytes,
					vmheap_graph_object_bytes(g, i));
	return NULL;
}

/* The retained size of every reachable vertex by preorder number, in
 * sum[r]: a vertex's dominator comes before it in preorder, so one pass
 * from the last vertex adds each one's sum to its dominator's (in order,
 * where by object index every addition would be a cache miss).  Returns
 * whether a sum was held at UINT64_MAX. */
static int sum_retained(const struct dom *d, uint64_t *sum)
{
	const vmheap_graph *g = d->g;
	uint32_t r = d->r;
	const uint32_t *idom = d->parent, *vertex = d->vertex;
	int saturated = 0;

	sum[0] = 0;
	for (uint32_t i = 1; i < r; i++) {
		uint32_t b;
		if (i + STORE_AHEAD < r)
			__builtin_prefetch(
			    &g->bytes32[vertex[i + STORE_AHEAD]]);
		b = g->bytes32[vertex[i]];
		sum[i] = b != GRAPH_BYTES_BIG
			     ? b
			     : vmheap_graph_object_bytes(g, vertex[i]);
	}
	for (uint32_t i = r - 1; i >= 1; i--) {
		uint32_t p = idom[i];
		if (i > STORE_AHEAD)
			__builtin_prefetch(&sum[idom[i - STORE_AHEAD]], 1);
		if (p && sum[p] + sum[i] < sum[i]) {
			sum[p] = UINT64_MAX;
			saturated = 1;
		} else if (p) {
			sum[p] += sum[i];
		}
	}
	return saturated;
}

/*
 * Store idoms and retained sizes by object index; count the unreachable.
 * The idoms by object on a second thread when there are two processors,
 * while this one sums the retained sizes by preorder number, in `sum`
 * (r entries: the forest's memory, which nothing reads any more).  Then
 * the idoms by preorder (parent[]) are freed before retained[] is
 * allocated, so that the peak is no higher than with sums made in place.
 */
static int store_results(struct dom *d, uint64_t *sum)
{
	vmheap_graph *g = d->g;
	uint32_t n = g->n, r = d->r;
	const uint32_t *vertex = d->vertex;
	uint64_t *ret;
	int saturated, threaded;
	pthread_t tid;

	g->idom = malloc(((size_t)n + 1) * sizeof(*g->idom));
	if (!g->idom)
		return VMHEAP_ENOMEM;
	graph_huge_pages(g->idom, ((size_t)n + 1) * sizeof(*g->idom));
	/* both parts may set g->saturated: each its own copy */
	saturated = g->saturated;
	threaded = r >= GRAPH_THREAD_MIN && sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
		   pthread_create(&tid, NULL, store_idoms, d) == 0;
	saturated |= sum_retained(d, sum);
	if (threaded)
		pthread_join(tid, NULL);
	else
		store_idoms(d);
	free(d->parent);
	d->parent = NULL;
	g->retained = calloc((size_t)n + 1, sizeof(*g->retained));
	if (!g->retained) {
		free(g->idom);
		g->idom = NULL;
		return VMHEAP_ENOMEM;
	}
	graph_huge_pages(g->retained, ((size_t)n + 1) * sizeof(*g->retained));
	/* retained[] is written at random: its pages' first touches ahead,
	 * in order, on another thread */
	struct graph_prefault pf = {.n = 0};
	graph_prefault_add(&pf, g->retained,
			   ((size_t)n + 1) * sizeof(*g->retained));
	graph_prefault_begin(&pf);
	ret = g->retained;
	for (uint32_t i = 1; i < r; i++) {
		if (i + STORE_AHEAD < r)
			__builtin_prefetch(&ret[vertex[i + STORE_AHEAD]], 1);
		ret[vertex[i]] = sum[i];
	}
	graph_prefault_end(&pf);
	g->saturated |= saturated;
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
	/* the search reads the references at random: on huge pages, one
	 * TLB entry covers 512 times as many */
	graph_collapse_huge_pages(g->fwd_off,
				  ((size_t)g->n + 1) * sizeof(*g->fwd_off));
	graph_collapse_huge_pages(g->fwd,
				  (size_t)g->fwd_off[g->n] * sizeof(*g->fwd));
	if ((rc = number_vertices(&d)) < 0)
		goto fail;
	if ((rc = index_predecessors(&d)) < 0)
		goto fail;
	free(d.pre);
	free(d.tree);
	d.pre = NULL;
	d.tree = NULL;
	if ((rc = compute_idoms(&d)) < 0)
		goto fail;
	free(d.pred_off);
	free(d.pred);
	d.pred_off = d.pred = NULL;
	/* the forest's memory holds the retained sizes by preorder number
	 * (8 bytes a vertex, as a forest node) */
	if ((rc = store_results(&d, (uint64_t *)(void *)d.forest)) < 0)
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
