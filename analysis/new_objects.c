/*
 * new_objects.c - NEW's classes grouped by label and its new objects
 * marked against OLD (vmheap_suspects.h): the rule of
 * vmheap_identity_diff, on heap graphs.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"
#include "vmheap_graph_query.h"
#include "vmheap_suspects.h"

static int by_name(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/* mark[i]: group + 1 of the class of object i of NEW when it is new (OLD
 * has no object of its id, or one of another class name), else 0.  OLD's
 * classes are put into NEW's label groups once (UINT32_MAX for a label
 * NEW lacks), so that each object costs a lookup and an integer compare.
 * Returns 0 or VMHEAP_ENOMEM. */
static int mark(const vmheap_graph *old_g, const vmheap_graph *new_g,
		struct vmheap_new_objects *nw)
{
	size_t nold = vmheap_graph_class_count(old_g);
	uint32_t *old_group = malloc((nold ? nold : 1) * sizeof(*old_group));

	if (!old_group)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < nold; k++) {
		char *l = vmheap_graph_class_label(
		    old_g, vmheap_graph_class_id(old_g, k));
		char **hit;

		if (!l) {
			free(old_group);
			return VMHEAP_ENOMEM;
		}
		hit = bsearch(l, nw->names, nw->nnames, sizeof(*nw->names),
			      by_name);
		old_group[k] = hit ? (uint32_t)(hit - nw->names) : UINT32_MAX;
		free(l);
	}
	for (uint32_t i = 0; i < vmheap_graph_object_count(new_g); i++) {
		uint32_t grp =
		    nw->group[vmheap_graph_object_class_index(new_g, i)];
		uint32_t j =
		    vmheap_graph_find(old_g, vmheap_graph_object_id(new_g, i));

		nw->mark[i] = j == VMHEAP_GRAPH_NONE ||
				      old_group[vmheap_graph_object_class_index(
					  old_g, j)] != grp
				  ? grp + 1
				  : 0;
	}
	free(old_group);
	return 0;
}

int vmheap_new_objects_mark(const vmheap_graph *old_g, vmheap_graph *new_g,
			    struct vmheap_new_objects *out)
{
	size_t ncls = vmheap_graph_class_count(new_g);
	uint32_t n = vmheap_graph_object_count(new_g);

	memset(out, 0, sizeof(*out));
	if (!(out->group = malloc((ncls ? ncls : 1) * sizeof(*out->group))) ||
	    !(out->mark = malloc((n ? n : 1) * sizeof(*out->mark))) ||
	    vmheap_graph_label_groups(new_g, out->group, &out->names,
				      &out->nnames) < 0 ||
	    mark(old_g, new_g, out) < 0) {
		vmheap_new_objects_release(out);
		return graph_fail(new_g, VMHEAP_ENOMEM,
				  "out of memory marking the new objects");
	}
	return 0;
}

void vmheap_new_objects_release(struct vmheap_new_objects *nw)
{
	if (!nw)
		return;
	for (size_t x = 0; x < nw->nnames; x++)
		free(nw->names[x]);
	free(nw->names);
	free(nw->group);
	free(nw->mark);
	memset(nw, 0, sizeof(*nw));
}
