/*
 * graph_class_paths.c - the shortest paths of every instance of a class,
 * merged by shape (root kind and name, the classes and reference names from
 * the root object down to the instance), counted and summed: the instances of the class handed to
 * vmheap_graph_object_paths() (graph_object_paths.c), which merges any set
 * of objects.
 */
#include <stdlib.h>

#include "graph-internal.h"
#include "vmheap_graph_query.h"

int vmheap_graph_class_paths(vmheap_graph *g, uint64_t class_id,
			     struct vmheap_graph_class_paths **out)
{
	uint32_t n = vmheap_graph_object_count(g), count = 0;
	uint32_t *objects;
	int rc;

	*out = NULL;
	for (uint32_t i = 0; i < n; i++)
		count += vmheap_graph_object_class(g, i) == class_id;
	objects = malloc((count ? count : 1) * sizeof(*objects));
	if (!objects)
		return graph_fail(g, VMHEAP_ENOMEM,
				  "out of memory for the class paths");
	count = 0;
	for (uint32_t i = 0; i < n; i++)
		if (vmheap_graph_object_class(g, i) == class_id)
			objects[count++] = i;
	rc = vmheap_graph_object_paths(g, objects, count, out);
	free(objects);
	if (rc < 0)
		return rc;
	(*out)->class_id = class_id;
	return 0;
}

void vmheap_graph_class_paths_free(struct vmheap_graph_class_paths *paths)
{
	vmheap_graph_object_paths_free(paths);
}
