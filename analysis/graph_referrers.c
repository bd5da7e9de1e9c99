/*
 * graph_referrers.c - the reverse references of vmheap_graph (CSR), built
 * on demand.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

int vmheap_graph_index_referrers(vmheap_graph *g)
{
	uint32_t n = g->n, m = g->fwd_off[n];
	uint32_t *off, *rev;

	if (g->rev_off)
		return 0;
	off = calloc((size_t)n + 1, sizeof(*off));
	graph_huge_pages(off, ((size_t)n + 1) * sizeof(*off));
	rev = malloc((m ? m : 1) * sizeof(*rev));
	graph_huge_pages(rev, (m ? m : 1) * sizeof(*rev));
	if (!off || !rev) {
		free(off);
		free(rev);
		return graph_fail(g, VMHEAP_ENOMEM,
				  "out of memory for the reverse references");
	}
	for (uint32_t k = 0; k < m; k++)
		off[g->fwd[k] + 1]++;
	for (uint32_t i = 0; i < n; i++)
		off[i + 1] += off[i];
	/* fill with off[t] as cursor (sources in increasing order), then
	 * shift back */
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t k = g->fwd_off[s]; k < g->fwd_off[s + 1]; k++)
			rev[off[g->fwd[k]]++] = s;
	memmove(off + 1, off, (size_t)n * sizeof(*off));
	off[0] = 0;
	g->rev_off = off;
	g->rev = rev;
	return 0;
}

uint32_t vmheap_graph_referrers(const vmheap_graph *g, uint32_t i,
				const uint32_t **sources)
{
	if (!g->rev_off) {
		*sources = NULL;
		return 0;
	}
	*sources = g->rev + g->rev_off[i];
	return g->rev_off[i + 1] - g->rev_off[i];
}
