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

/* The label of each class of g's class table. */
static char **class_labels(const vmheap_graph *g)
{
	size_t n = vmheap_graph_class_count(g);
	char **l = calloc(n ? n : 1, sizeof(*l));

	for (size_t k = 0; l && k < n; k++)
		if (!(l[k] = vmheap_graph_class_label(
			  g, vmheap_graph_class_id(g, k)))) {
			while (k--)
				free(l[k]);
			free(l);
			return NULL;
		}
	return l;
}

/* 1 when object i of NEW is new: OLD has no object of its id, or one of
 * another class name. */
static int is_new(const vmheap_graph *old_g, const vmheap_graph *new_g,
		  char **old_labels, char **new_labels, uint32_t i)
{
	uint32_t j = vmheap_graph_find(old_g, vmheap_graph_object_id(new_g, i));

	if (j == VMHEAP_GRAPH_NONE)
		return 1;
	return strcmp(new_labels[vmheap_graph_object_class_index(new_g, i)],
		      old_labels[vmheap_graph_object_class_index(old_g, j)]) !=
	       0;
}

/* mark[i]: group + 1 of the class of object i of NEW when it is new, else
 * 0.  Returns 0 or VMHEAP_ENOMEM. */
static int mark_new(const vmheap_graph *old_g, const vmheap_graph *new_g,
		    const uint32_t *group, uint32_t *mark)
{
	char **old_labels = class_labels(old_g);
	char **new_labels = class_labels(new_g);
	size_t nold = vmheap_graph_class_count(old_g);
	size_t nnew = vmheap_graph_class_count(new_g);
	int rc = 0;

	if (!old_labels || !new_labels) {
		rc = VMHEAP_ENOMEM;
		goto done;
	}
	for (uint32_t i = 0; i < vmheap_graph_object_count(new_g); i++)
		mark[i] =
		    is_new(old_g, new_g, old_labels, new_labels, i)
			? group[vmheap_graph_object_class_index(new_g, i)] + 1
			: 0;
done:
	for (size_t k = 0; old_labels && k < nold; k++)
		free(old_labels[k]);
	for (size_t k = 0; new_labels && k < nnew; k++)
		free(new_labels[k]);
	free(old_labels);
	free(new_labels);
	return rc;
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
	ncls = vmheap_graph_class_count(dg->new_g);
	n = vmheap_graph_object_count(dg->new_g);
	if (!(dg->group = malloc((ncls ? ncls : 1) * sizeof(*dg->group))) ||
	    !(dg->mark = malloc((n ? n : 1) * sizeof(*dg->mark))) ||
	    vmheap_graph_label_groups(dg->new_g, dg->group, &dg->names,
				      &dg->nnames) < 0 ||
	    mark_new(dg->old_g, dg->new_g, dg->group, dg->mark) < 0) {
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
