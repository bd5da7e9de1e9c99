/*
 * graph_ids.c - find an object's index by its id: the ids in increasing
 * order (the dump's own order when it is already sorted, else a stable
 * radix-sorted index) and a directory of buckets over the id range, so that
 * a lookup is one bucket read and a short binary search.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

static inline uint64_t sorted_id(const vmheap_graph *g, uint32_t k)
{
	return g->ids[g->order ? g->order[k] : k];
}

/* LSD radix sort of the indices 0..n-1 by id, one byte a pass, skipping the
 * bytes that all ids share (an address's top and alignment bytes).  Stable:
 * equal ids keep file order, so a lookup finds the first record. */
static int sort_ids(vmheap_graph *g)
{
	uint32_t n = g->n;
	uint32_t(*hist)[256] = calloc(8, sizeof(*hist));
	uint32_t *order, *tmp;

	if (!hist)
		return VMHEAP_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t id = g->ids[i];
		for (int d = 0; d < 8; d++)
			hist[d][(id >> (8 * d)) & 0xff]++;
	}
	order = malloc((size_t)n * sizeof(*order));
	tmp = malloc((size_t)n * sizeof(*tmp));
	if (!order || !tmp) {
		free(hist);
		free(order);
		free(tmp);
		return VMHEAP_ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	for (int d = 0; d < 8; d++) {
		unsigned shift = 8 * d;
		uint32_t pos[256], sum = 0;

		if (hist[d][(g->ids[0] >> shift) & 0xff] == n)
			continue; /* every id has the same byte here */
		for (int b = 0; b < 256; b++) {
			pos[b] = sum;
			sum += hist[d][b];
		}
		for (uint32_t k = 0; k < n; k++) {
			uint32_t i = order[k];
			tmp[pos[(g->ids[i] >> shift) & 0xff]++] = i;
		}
		uint32_t *swap = order;
		order = tmp;
		tmp = swap;
	}
	free(tmp);
	free(hist);
	g->order = order;
	return 0;
}

int graph_index_ids(vmheap_graph *g, int ids_sorted)
{
	uint32_t n = g->n, buckets = 2; /* 2: the shift stays below 64 */
	uint64_t range;
	unsigned shift = 0;
	int rc;

	if (n == 0)
		return 0;
	if (!ids_sorted && (rc = sort_ids(g)) < 0)
		return rc;
	g->id_min = sorted_id(g, 0);
	g->id_max = sorted_id(g, n - 1);
	while (buckets < n / 4)
		buckets *= 2;
	range = g->id_max - g->id_min;
	while (shift < 64 && (range >> shift) >= buckets)
		shift++;
	g->dir = malloc(((size_t)buckets + 1) * sizeof(*g->dir));
	if (!g->dir)
		return VMHEAP_ENOMEM;
	graph_huge_pages(g->dir, ((size_t)buckets + 1) * sizeof(*g->dir));
	g->dir_buckets = buckets;
	g->dir_shift = shift;
	uint32_t k = 0;
	for (uint64_t b = 0; b <= buckets; b++) {
		while (k < n && ((sorted_id(g, k) - g->id_min) >> shift) < b)
			k++;
		g->dir[b] = k;
	}
	return 0;
}

uint32_t vmheap_graph_find(const vmheap_graph *g, uint64_t id)
{
	uint32_t lo, hi;
	uint64_t b;

	if (g->n == 0 || id < g->id_min || id > g->id_max)
		return VMHEAP_GRAPH_NONE;
	b = (id - g->id_min) >> g->dir_shift;
	lo = g->dir[b];
	hi = g->dir[b + 1];
	while (lo < hi) { /* first k in [lo, hi) with sorted_id >= id */
		uint32_t mid = lo + (hi - lo) / 2;
		if (sorted_id(g, mid) < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == g->dir[b + 1] || sorted_id(g, lo) != id)
		return VMHEAP_GRAPH_NONE;
	return g->order ? g->order[lo] : lo;
}

/* The bucket of an id in range, or dir_buckets (no bucket) outside it. */
static inline uint64_t bucket_of(const vmheap_graph *g, uint64_t id)
{
	if (id < g->id_min || id > g->id_max)
		return g->dir_buckets;
	return (id - g->id_min) >> g->dir_shift;
}

/* How far ahead the lookups are prefetched: the directory entry at
 * 2 * FIND_AHEAD, the first sorted id of its bucket at FIND_AHEAD. */
#define FIND_AHEAD 16

/* ids[lo..hi): each id replaced by its index (as a uint64). */
static void find_range(const vmheap_graph *g, uint64_t *ids, size_t lo,
		       size_t hi)
{
	for (size_t k = lo; k < hi; k++) {
		if (k + 2 * FIND_AHEAD < hi)
			__builtin_prefetch(
			    &g->dir[bucket_of(g, ids[k + 2 * FIND_AHEAD])]);
		if (k + FIND_AHEAD < hi) {
			uint32_t at = g->dir[bucket_of(g, ids[k + FIND_AHEAD])];
			if (g->order)
				__builtin_prefetch(&g->order[at]);
			else
				__builtin_prefetch(&g->ids[at]);
		}
		ids[k] = vmheap_graph_find(g, ids[k]);
	}
}

struct find_part {
	const vmheap_graph *g;
	uint64_t *ids;
	size_t lo, hi;
};

static void *find_half(void *arg)
{
	struct find_part *p = arg;

	find_range(p->g, p->ids, p->lo, p->hi);
	return NULL;
}

void graph_find_many(const vmheap_graph *g, uint64_t *ids, size_t n)
{
	struct find_part first = {g, ids, 0, n / 2},
			 second = {g, ids, n / 2, n};

	if (g->n == 0) {
		for (size_t k = 0; k < n; k++)
			ids[k] = VMHEAP_GRAPH_NONE;
		return;
	}
	/* two halves at once on two processors (each id is replaced where
	 * it is, so the halves share nothing) */
	graph_both_halves(find_half, &first, &second, n >= GRAPH_THREAD_MIN);
}
