/*
 * suspects.c - vmheap-diff --suspects and the class diff's section: both
 * dumps read into heap graphs, the suspects ranked by libvmheap-analysis
 * (vmheap_suspects.h says how); suspects_report.c prints them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "diff-internal.h"

int diff_suspects(const struct diff_options *o, struct diff_result *res,
		  char *err, size_t errsz)
{
	struct diff_suspects *ds = calloc(1, sizeof(*ds));
	struct vmheap_suspects_options opt = VMHEAP_SUSPECTS_OPTIONS_INIT;
	int rc;

	if (!ds) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	res->suspects = ds;
	opt.top = o->report.top;
	rc = vmheap_graph_read(&ds->old_g, res->old_d.reader);
	if (rc < 0)
		snprintf(err, errsz, "%s", vmheap_graph_error(ds->old_g));
	if (rc == 0 &&
	    (rc = vmheap_graph_read(&ds->new_g, res->new_d.reader)) < 0)
		snprintf(err, errsz, "%s", vmheap_graph_error(ds->new_g));
	/* --exclude and --shortest shape NEW's paths (graphs.c too) */
	if (rc == 0 &&
	    (vmheap_graph_exclude(ds->new_g, res->exclude) < 0 ||
	     vmheap_graph_set_path_rule(ds->new_g,
					res->shortest
					    ? VMHEAP_GRAPH_PATHS_SHORTEST
					    : VMHEAP_GRAPH_PATHS_EXPLAINING) <
		 0)) {
		snprintf(err, errsz, "cannot apply --exclude or --shortest");
		rc = VMHEAP_ESTATE;
	}
	if (rc == 0 &&
	    (rc = vmheap_suspects_rank(ds->old_g, ds->new_g, &opt, &ds->s)) < 0)
		snprintf(err, errsz, "%s", vmheap_graph_error(ds->new_g));
	return rc;
}

void diff_suspects_release(struct diff_suspects *ds)
{
	if (!ds)
		return;
	vmheap_suspects_free(ds->s);
	vmheap_graph_free(ds->old_g);
	vmheap_graph_free(ds->new_g);
	free(ds);
}
