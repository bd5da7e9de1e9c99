/*
 * top.c - vmheap-dominators' computation: the dominator tree and the N
 * objects that retain the most (a min-heap of N while scanning every
 * object once).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dominators-internal.h"

/* More retained first; ties: lower index first. */
static int before(const vmheap_graph *g, uint32_t a, uint32_t b)
{
	uint64_t x = vmheap_graph_retained_bytes(g, a);
	uint64_t y = vmheap_graph_retained_bytes(g, b);

	return x != y ? x > y : a < b;
}

/* Restore the min-heap (the entry that comes last at the top) below k. */
static void sift_down(const vmheap_graph *g, uint32_t *h, size_t n, size_t k)
{
	for (;;) {
		size_t l = 2 * k + 1, r = l + 1, m = k;
		if (l < n && before(g, h[m], h[l]))
			m = l;
		if (r < n && before(g, h[m], h[r]))
			m = r;
		if (m == k)
			return;
		uint32_t t = h[k];
		h[k] = h[m];
		h[m] = t;
		k = m;
	}
}

static void sift_up(const vmheap_graph *g, uint32_t *h, size_t k)
{
	while (k) {
		size_t p = (k - 1) / 2;
		if (!before(g, h[p], h[k]))
			return;
		uint32_t t = h[k];
		h[k] = h[p];
		h[p] = t;
		k = p;
	}
}

static const vmheap_graph *sort_graph;
static int compare_top(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return before(sort_graph, x, y) ? -1 : before(sort_graph, y, x);
}

/* The `want` reachable objects (of the masked classes) retaining most. */
static void pick(struct dominators_result *res, const unsigned char *mask,
		 size_t want)
{
	const vmheap_graph *g = res->g;
	uint32_t n = vmheap_graph_object_count(g);

	for (uint32_t i = 0; i < n; i++) {
		if (mask && !mask[vmheap_graph_object_class_index(g, i)])
			continue;
		res->candidates++;
		if (vmheap_graph_idom(g, i) == VMHEAP_GRAPH_NONE)
			continue;
		if (res->ntop < want) {
			res->top[res->ntop] = i;
			sift_up(g, res->top, res->ntop++);
		} else if (want && before(g, i, res->top[0])) {
			res->top[0] = i;
			sift_down(g, res->top, res->ntop, 0);
		}
	}
	sort_graph = g;
	qsort(res->top, res->ntop, sizeof(*res->top), compare_top);
}

int dominators_find(const struct dominators_options *o,
		    struct dominators_result *res, char *err, size_t errsz)
{
	size_t want = o->report.top ? o->report.top : DOMINATORS_DEFAULT_TOP;
	unsigned char *mask = NULL;
	size_t nclasses = 0;
	int rc;

	memset(res, 0, sizeof(*res));
	rc = vmheap_graph_load(o->dump, &res->reader, &res->g, err, errsz);
	if (rc < 0)
		return rc;
	if ((rc = vmheap_graph_exclude(res->g, o->exclude)) < 0) {
		snprintf(err, errsz, "cannot apply --exclude");
		return rc;
	}
	if ((rc = vmheap_graph_dominators(res->g)) < 0) {
		snprintf(err, errsz, "%s", vmheap_graph_error(res->g));
		return rc;
	}
	vmheap_graph_unreachable(res->g, &res->unreachable,
				 &res->unreachable_bytes);
	if (o->cls &&
	    !(mask = vmheap_graph_label_mask(res->g, o->cls, &nclasses))) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	if (want > vmheap_graph_object_count(res->g))
		want = vmheap_graph_object_count(res->g);
	if (!(res->top = malloc((want ? want : 1) * sizeof(*res->top)))) {
		free(mask);
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	pick(res, mask, want);
	free(mask);
	if (o->cls && !res->candidates) {
		struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;
		vmheap_strbuf_add_no_class(&sb, res->g, o->cls, o->dump);
		snprintf(err, errsz, "%s",
			 sb.failed || !sb.buf ? "out of memory" : sb.buf);
		vmheap_strbuf_release(&sb);
		return 1;
	}
	return 0;
}

void dominators_result_release(struct dominators_result *res)
{
	free(res->top);
	vmheap_graph_free(res->g);
	vmheap_reader_free(res->reader);
	memset(res, 0, sizeof(*res));
}
