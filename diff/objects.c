/*
 * objects.c - vmheap-diff --objects and --retainers: objects matched by
 * identity, computed by libvmheap-analysis (vmheap_identity_diff), with a
 * progress bar per pass.
 */
#include <string.h>

#include "diff-internal.h"

#define DEFAULT_RETAINER_CLASSES 10

/* The progress bar of the pass in progress. */
struct passes {
	const struct diff_options *o;
	struct diff_result *res;
	struct vmheap_progress bar;
};

static void pass_begin(void *arg, enum vmheap_identity_dump which,
		       struct vmheap_scan_options *sopt)
{
	struct passes *p = arg;
	const struct diff_dump *d =
	    which == VMHEAP_IDENTITY_OLD ? &p->res->old_d : &p->res->new_d;

	diff_scan_options(p->o, d, &p->bar, sopt);
}

static void pass_end(void *arg, enum vmheap_identity_dump which)
{
	struct passes *p = arg;

	(void)which;
	vmheap_progress_clear(&p->bar);
}

int diff_identity(const struct diff_options *o, struct diff_result *res,
		  char *err, size_t errsz)
{
	struct vmheap_identity_options io = VMHEAP_IDENTITY_OPTIONS_INIT;
	struct passes p;

	memset(&p, 0, sizeof(p));
	p.o = o;
	p.res = res;
	io.threads = o->report.threads;
	io.sort = o->report.sort;
	if (o->mode == DIFF_RETAINERS)
		io.retainer_classes =
		    o->report.top ? o->report.top : DEFAULT_RETAINER_CLASSES;
	io.scan_begin = pass_begin;
	io.scan_end = pass_end;
	io.arg = &p;
	int rc =
	    vmheap_identity_diff(res->old_d.reader, &res->new_d.reader,
				 o->new_path, &io, &res->ident, err, errsz);
	/* the dumps own their censuses, as in the class-by-class mode */
	res->old_d.census = res->ident.old_census;
	res->new_d.census = res->ident.new_census;
	res->ident.old_census = res->ident.new_census = NULL;
	return rc;
}
