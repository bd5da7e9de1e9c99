/*
 * graphs.c - what the graph modes of vmheap-diff (--paths, --suspects)
 * share: both dumps read into heap graphs, NEW's classes grouped by label,
 * and the new objects of NEW marked by the rule of vmheap_identity_diff
 * (vmheap_new_objects_mark, libvmheap-analysis).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff-internal.h"
#include "vmheap_suspects.h"

int diff_graphs_read(struct diff_result *res, struct diff_graphs *dg, char *err,
		     size_t errsz)
{
	int rc = vmheap_graph_read(&dg->old_g, res->old_d.reader);
	struct vmheap_new_objects nw;

	if (rc < 0) {
		snprintf(err, errsz, "%s", vmheap_graph_error(dg->old_g));
		return rc;
	}
	rc = vmheap_graph_read(&dg->new_g, res->new_d.reader);
	if (rc < 0) {
		snprintf(err, errsz, "%s", vmheap_graph_error(dg->new_g));
		return rc;
	}
	/* only NEW's paths are shown: the references left out go there */
	if (vmheap_graph_exclude(dg->new_g, res->exclude) < 0 ||
	    vmheap_graph_set_path_rule(dg->new_g,
				       res->shortest
					   ? VMHEAP_GRAPH_PATHS_SHORTEST
					   : VMHEAP_GRAPH_PATHS_EXPLAINING) < 0) {
		snprintf(err, errsz, "cannot apply --exclude or --shortest");
		return VMHEAP_ESTATE;
	}
	if ((rc = vmheap_new_objects_mark(dg->old_g, dg->new_g, &nw)) < 0) {
		snprintf(err, errsz, "%s", vmheap_graph_error(dg->new_g));
		return rc;
	}
	dg->names = nw.names;
	dg->nnames = nw.nnames;
	dg->group = nw.group;
	dg->mark = nw.mark;
	return 0;
}

void diff_graphs_release(struct diff_graphs *dg)
{
	struct vmheap_new_objects nw = {dg->names, dg->nnames, dg->group,
					dg->mark};

	vmheap_new_objects_release(&nw);
	vmheap_graph_free(dg->old_g);
	vmheap_graph_free(dg->new_g);
}
