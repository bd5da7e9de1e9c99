/*
 * graphs.c - what the graph modes of vmheap-diff (--paths, --suspects)
 * share: both dumps read into heap graphs, NEW's classes grouped by label,
 * and the new objects of NEW marked by the rule of vmheap_identity_diff
 * (OLD holds no object of their id, or one of another class name).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff-internal.h"
#include "vmheap_graph_query.h"

static int by_name(const void *key, const void *elem)
{
	return strcmp(key, *(char *const *)elem);
}

/* mark[i]: group + 1 of the class of object i of NEW when it is new (OLD
 * has no object of its id, or one of another class name), else 0.  OLD's
 * classes are put into NEW's label groups once (UINT32_MAX for a label
 * NEW lacks), so that each object costs a lookup and an integer compare.
 * Returns 0 or VMHEAP_ENOMEM. */
static int mark_new(const struct diff_graphs *dg)
{
	size_t nold = vmheap_graph_class_count(dg->old_g);
	uint32_t *old_group = malloc((nold ? nold : 1) * sizeof(*old_group));

	if (!old_group)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < nold; k++) {
		char *l = vmheap_graph_class_label(
		    dg->old_g, vmheap_graph_class_id(dg->old_g, k));
		char **hit;

		if (!l) {
			free(old_group);
			return VMHEAP_ENOMEM;
		}
		hit = bsearch(l, dg->names, dg->nnames, sizeof(*dg->names),
			      by_name);
		old_group[k] = hit ? (uint32_t)(hit - dg->names) : UINT32_MAX;
		free(l);
	}
	for (uint32_t i = 0; i < vmheap_graph_object_count(dg->new_g); i++) {
		uint32_t grp =
		    dg->group[vmheap_graph_object_class_index(dg->new_g, i)];
		uint32_t j = vmheap_graph_find(
		    dg->old_g, vmheap_graph_object_id(dg->new_g, i));

		dg->mark[i] = j == VMHEAP_GRAPH_NONE ||
				      old_group[vmheap_graph_object_class_index(
					  dg->old_g, j)] != grp
				  ? grp + 1
				  : 0;
	}
	free(old_group);
	return 0;
}

int diff_graphs_read(struct diff_result *res, struct diff_graphs *dg, char *err,
		     size_t errsz)
{
	int rc = vmheap_graph_read(&dg->old_g, res->old_d.reader, err, errsz);
	size_t ncls;
	uint32_t n;

	if (rc == 0)
		rc = vmheap_graph_read(&dg->new_g, res->new_d.reader, err,
				       errsz);
	if (rc < 0)
		return rc;
	/* only NEW's paths are shown: the references left out go there */
	if (vmheap_graph_exclude(dg->new_g, res->exclude) < 0 ||
	    vmheap_graph_set_path_rule(dg->new_g,
				       res->shortest
					   ? VMHEAP_GRAPH_PATHS_SHORTEST
					   : VMHEAP_GRAPH_PATHS_EXPLAINING) < 0) {
		snprintf(err, errsz, "cannot apply --exclude or --shortest");
		return VMHEAP_ESTATE;
	}
	ncls = vmheap_graph_class_count(dg->new_g);
	n = vmheap_graph_object_count(dg->new_g);
	if (!(dg->group = malloc((ncls ? ncls : 1) * sizeof(*dg->group))) ||
	    !(dg->mark = malloc((n ? n : 1) * sizeof(*dg->mark))) ||
	    vmheap_graph_label_groups(dg->new_g, dg->group, &dg->names,
				      &dg->nnames) < 0 ||
	    mark_new(dg) < 0) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	return 0;
}

void diff_graphs_release(struct diff_graphs *dg)
{
	for (size_t x = 0; x < dg->nnames; x++)
		free(dg->names[x]);
	free(dg->names);
	free(dg->group);
	free(dg->mark);
	vmheap_graph_free(dg->old_g);
	vmheap_graph_free(dg->new_g);
}
