/*
 * graph_group_retained.c - retained bytes per group of classes
 * (vmheap_graph_query.h): one depth-first walk of the dominator tree that
 * counts, per group, the instances on the way down from the virtual root;
 * an instance with no other of its group above it adds its retained size.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"
#include "vmheap_graph_query.h"

/* The dominator tree's children: kids[off[p] .. off[p + 1]) for object p,
 * and slot n for the virtual root.  Unreachable objects are in none. */
static int tree_children(const vmheap_graph *g, uint32_t **off_out,
			 uint32_t **kids_out)
{
	uint32_t n = g->n;
	uint32_t *off = calloc((size_t)n + 2, sizeof(*off));
	uint32_t *kids = malloc((n ? n : 1) * sizeof(*kids));

	if (!off || !kids) {
		free(off);
		free(kids);
		return VMHEAP_ENOMEM;
	}
	for (uint32_t v = 0; v < n; v++) {
		uint32_t d = g->idom[v];
		if (d != VMHEAP_GRAPH_NONE)
			off[(d == VMHEAP_GRAPH_ROOT ? n : d) + 1]++;
	}
	for (size_t p = 0; p <= n; p++)
		off[p + 1] += off[p];
	/* fill with off[p] as the cursor, then shift back */
	for (uint32_t v = 0; v < n; v++) {
		uint32_t d = g->idom[v];
		if (d != VMHEAP_GRAPH_NONE)
			kids[off[d == VMHEAP_GRAPH_ROOT ? n : d]++] = v;
	}
	memmove(off + 1, off, ((size_t)n + 1) * sizeof(*off));
	off[0] = 0;
	*off_out = off;
	*kids_out = kids;
	return 0;
}

int vmheap_graph_group_retained(vmheap_graph *g, const uint32_t *group,
				size_t ngroups, uint64_t *out)
{
	uint32_t *off = NULL, *kids = NULL, *stack = NULL, *next = NULL;
	uint32_t *active = NULL;
	size_t depth = 0;
	int rc;

	if ((rc = vmheap_graph_dominators(g)) < 0)
		return rc;
	memset(out, 0, ngroups * sizeof(*out));
	if ((rc = tree_children(g, &off, &kids)) < 0)
		goto done;
	/* the path from the virtual root: objects and their next child */
	stack = malloc(((size_t)g->n + 1) * sizeof(*stack));
	next = malloc(((size_t)g->n + 1) * sizeof(*next));
	active = calloc(ngroups ? ngroups : 1, sizeof(*active));
	if (!stack || !next || !active) {
		rc = VMHEAP_ENOMEM;
		goto done;
	}
	stack[0] = g->n; /* the virtual root */
	next[0] = off[g->n];
	depth = 1;
	while (depth) {
		uint32_t p = stack[depth - 1];
		if (next[depth - 1] == off[p + 1]) { /* done with p */
			if (p != g->n)
				active[group[g->class_of[p]]]--;
			depth--;
			continue;
		}
		uint32_t v = kids[next[depth - 1]++];
		uint32_t x = group[g->class_of[v]];
		if (!active[x]++)
			graph_add_bytes(g, &out[x], g->retained[v]);
		stack[depth] = v;
		next[depth] = off[v];
		depth++;
	}
done:
	free(off);
	free(kids);
	free(stack);
	free(next);
	free(active);
	if (rc < 0)
		return graph_fail(g, rc, "out of memory for the retained sizes "
					 "per class");
	return 0;
}
