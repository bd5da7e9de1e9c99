/*
 * classes.c - open the two dumps, and the class-by-class diff: a census of
 * each (matched by class name), then the deltas.
 */
#include <stdio.h>
#include <stdlib.h>

#include "diff-internal.h"

static int open_one(const char *path, struct diff_dump *d, char *err,
		    size_t errsz)
{
	int rc;

	d->path = path;
	rc = vmheap_dump_open(&d->reader, path, &d->size, &d->regular, err,
			      errsz);
	if (rc < 0 && d->reader)
		snprintf(err, errsz, "%s", vmheap_reader_error(d->reader));
	return rc;
}

int diff_open(const struct diff_options *o, struct diff_result *res, char *err,
	      size_t errsz)
{
	int rc = open_one(o->old_path, &res->old_d, err, errsz);
	if (rc < 0)
		return rc;
	return open_one(o->new_path, &res->new_d, err, errsz);
}

void diff_scan_options(const struct diff_options *o, const struct diff_dump *d,
		       struct vmheap_progress *bar,
		       struct vmheap_scan_options *sopt)
{
	vmheap_report_scan_options(&o->report, d->path, d->size, bar, sopt);
}

int diff_read_census(const struct diff_options *o, struct diff_dump *d,
		     char *err, size_t errsz)
{
	return vmheap_census_scan(&o->report, d->reader, d->path, d->size,
				  o->by_site ? VMHEAP_GROUP_SITE
					     : VMHEAP_GROUP_CLASS,
				  &d->census, err, errsz);
}

int diff_classes(const struct diff_options *o, struct diff_result *res,
		 char *err, size_t errsz)
{
	int rc = diff_read_census(o, &res->old_d, err, errsz);
	if (rc < 0)
		return rc;
	rc = diff_read_census(o, &res->new_d, err, errsz);
	if (rc < 0)
		return rc;
	rc = vmheap_census_diff(res->old_d.census, res->new_d.census,
				&res->deltas, &res->ndeltas);
	if (rc < 0) {
		snprintf(err, errsz, "out of memory comparing the censuses");
		return rc;
	}
	vmheap_census_deltas_sort(res->deltas, res->ndeltas, o->report.sort);
	return 0;
}

static void release_dump(struct diff_dump *d)
{
	vmheap_census_free(d->census);
	vmheap_reader_free(d->reader);
	d->census = NULL;
	d->reader = NULL;
}

void diff_result_release(struct diff_result *res)
{
	free(res->deltas);
	vmheap_identity_result_release(&res->ident);
	diff_paths_release(res->paths);
	diff_suspects_release(res->suspects);
	release_dump(&res->old_d);
	release_dump(&res->new_d);
}
