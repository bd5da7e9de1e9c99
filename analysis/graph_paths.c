/*
 * graph_paths.c - shortest paths from the roots: a breadth-first search
 * from the virtual root that keeps the parent of every object, so that any
 * object's path is walked back from it.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Root record indices ordered by object, then by record, so that the first
 * record of an object is found by binary search. */
static int index_roots(vmheap_graph *g)
{
	size_t k, m = 0;
	uint64_t *keys;

	if (g->nroots > UINT32_MAX)
		return graph_fail(g, VMHEAP_ELIMIT, "more than %u roots",
				  (unsigned)UINT32_MAX);
	keys = malloc((g->nroots ? g->nroots : 1) * sizeof(*keys));
	g->root_by_obj =
	    malloc((g->nroots ? g->nroots : 1) * sizeof(*g->root_by_obj));
	if (!keys || !g->root_by_obj) {
		free(keys);
		free(g->root_by_obj);
		g->root_by_obj = NULL;
		return VMHEAP_ENOMEM;
	}
	for (k = 0; k < g->nroots; k++)
		if (g->roots[k].object != VMHEAP_GRAPH_NONE)
			keys[m++] = (uint64_t)g->roots[k].object << 32 | k;
	qsort(keys, m, sizeof(*keys), compare_u64);
	for (k = 0; k < m; k++)
		g->root_by_obj[k] = (uint32_t)keys[k];
	free(keys);
	g->nroot_by_obj = m;
	return 0;
}

/* The first root record of root object `v`. */
static size_t first_root_of(const vmheap_graph *g, uint32_t v)
{
	size_t lo = 0, hi = g->nroot_by_obj;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->roots[g->root_by_obj[mid]].object < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return g->root_by_obj[lo];
}

int vmheap_graph_shortest_paths(vmheap_graph *g)
{
	uint32_t n = g->n, head = 0, tail = 0;
	uint32_t *parent, *queue, *edge = NULL;
	int rc;

	if (g->path_parent)
		return 0;
	parent = malloc(((size_t)n + 1) * sizeof(*parent));
	queue = malloc(((size_t)n + 1) * sizeof(*queue));
	if (g->edge_name) /* names on the paths: the edge of each object */
		edge = malloc(((size_t)n + 1) * sizeof(*edge));
	if (!parent || !queue || (g->edge_name && !edge)) {
		free(parent);
		free(queue);
		free(edge);
		return graph_fail(g, VMHEAP_ENOMEM,
				  "out of memory for the shortest paths");
	}
	if ((rc = index_roots(g)) < 0) {
		free(parent);
		free(queue);
		free(edge);
		return rc == VMHEAP_ENOMEM
			   ? graph_fail(g, rc, "out of memory for the roots")
			   : rc;
	}
	memset(parent, 0xff, (size_t)n * sizeof(*parent));
	for (size_t k = 0; k < g->nroots; k++) {
		uint32_t v = g->roots[k].object;
		if (v != VMHEAP_GRAPH_NONE && parent[v] == VMHEAP_GRAPH_NONE) {
			parent[v] = VMHEAP_GRAPH_ROOT;
			queue[tail++] = v;
		}
	}
	while (head < tail) {
		uint32_t v = queue[head++];
		for (uint32_t k = g->fwd_off[v]; k < g->fwd_off[v + 1]; k++) {
			uint32_t w = g->fwd[k];
			if (parent[w] == VMHEAP_GRAPH_NONE) {
				parent[w] = v;
				if (edge)
					edge[w] = k;
				queue[tail++] = w;
			}
		}
	}
	free(queue);
	g->path_parent = parent;
	g->path_edge = edge;
	if (!g->have_unreachable) {
		g->unreachable = n - tail;
		g->unreachable_bytes = 0;
		for (uint32_t i = 0; i < n; i++)
			if (parent[i] == VMHEAP_GRAPH_NONE)
				graph_add_bytes(g, &g->unreachable_bytes,
						vmheap_graph_object_bytes(g, i));
		g->have_unreachable = 1;
	}
	return 0;
}

uint32_t vmheap_graph_path_parent(const vmheap_graph *g, uint32_t i)
{
	return g->path_parent ? g->path_parent[i] : VMHEAP_GRAPH_NONE;
}

int64_t vmheap_graph_path(const vmheap_graph *g, uint32_t i, uint32_t *path,
			  size_t cap, size_t *root)
{
	uint32_t v = i;
	int64_t len = 0;

	if (!g->path_parent)
		return VMHEAP_ESTATE;
	if (g->path_parent[i] == VMHEAP_GRAPH_NONE)
		return 0;
	/* count, then fill from the end */
	for (v = i;; v = g->path_parent[v]) {
		len++;
		if (g->path_parent[v] == VMHEAP_GRAPH_ROOT)
			break;
	}
	if (root)
		*root = first_root_of(g, v);
	if (path) {
		int64_t k = len - 1;
		for (v = i; k >= 0; v = g->path_parent[v], k--)
			if ((size_t)k < cap)
				path[k] = v;
	}
	return len;
}
