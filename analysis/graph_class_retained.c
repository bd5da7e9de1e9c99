/*
 * graph_class_retained.c - retained bytes per class: the grouping of
 * vmheap_graph_group_retained() (graph_group_retained.c) where each class
 * is a group of its own.
 */
#include <stdlib.h>

#include "graph-internal.h"
#include "vmheap_graph_query.h"

int vmheap_graph_class_retained(vmheap_graph *g, uint64_t *retained)
{
	size_t n = vmheap_graph_class_count(g);
	uint32_t *group;
	int rc;

	group = malloc((n ? n : 1) * sizeof(*group));
	if (!group)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < n; k++)
		group[k] = (uint32_t)k;
	rc = vmheap_graph_group_retained(g, group, n, retained);
	free(group);
	return rc;
}
