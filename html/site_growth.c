/*
 * site_growth.c - the allocation sites by growth between the first and
 * the last dump: both read into censuses by class and site, compared as
 * vmheap-diff --by site compares them (vmheap_census_diff), most bytes
 * grown first and the rows without a site last.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "html-internal.h"

/* Read dump `arg` into a census by class and site. */
static int scan(const char *arg, vmheap_reader **r, vmheap_census **c,
		char *err, size_t errsz)
{
	struct vmheap_report_options ro = VMHEAP_REPORT_OPTIONS_INIT;
	uint64_t size;
	int regular;
	int rc = vmheap_dump_open(r, arg, &size, &regular, err, errsz);

	if (rc < 0 && *r)
		snprintf(err, errsz, "%s", vmheap_reader_error(*r));
	if (rc == 0)
		rc = vmheap_census_scan(&ro, *r, arg, size, VMHEAP_GROUP_SITE, c,
					err, errsz);
	return rc;
}

/* Rows with a site first, then most bytes grown, then as the census
 * sorted them (by name): a total order, for the same page every time. */
static int by_growth(const void *x, const void *y)
{
	const struct vmheap_census_delta *a = x, *b = y;

	if (!a->site != !b->site)
		return a->site ? -1 : 1;
	if (a->bytes_delta != b->bytes_delta)
		return a->bytes_delta > b->bytes_delta ? -1 : 1;
	if (a->count_delta != b->count_delta)
		return a->count_delta > b->count_delta ? -1 : 1;
	return a < b ? -1 : a > b;
}

int html_site_growth_json(const struct html_options *o,
			  struct vmheap_strbuf *sb, char *err, size_t errsz)
{
	vmheap_reader *r0 = NULL, *r1 = NULL;
	vmheap_census *c0 = NULL, *c1 = NULL;
	struct vmheap_census_delta *d = NULL;
	size_t n = 0;
	int rc = scan(o->dumps[0], &r0, &c0, err, errsz);

	if (rc == 0)
		rc = scan(o->dumps[o->ndumps - 1], &r1, &c1, err, errsz);
	if (rc == 0 && (rc = vmheap_census_diff(c0, c1, &d, &n)) < 0)
		snprintf(err, errsz, "out of memory");
	if (rc == 0) {
		/* the census order first (by name), then ours: qsort is not
		 * stable, the comparison's last key keeps it total */
		vmheap_census_deltas_sort(d, n, VMHEAP_SORT_NAME);
		qsort(d, n, sizeof(*d), by_growth);
		size_t shown = n < HTML_SITES_MAX ? n : HTML_SITES_MAX;
		/* rows: [class, site or null, count change, bytes change] */
		vmheap_strbuf_addf(sb, "{\"total\":%zu,\"rows\":[", n);
		for (size_t i = 0; i < shown; i++) {
			vmheap_strbuf_add(sb, i ? ",[" : "[", i ? 2 : 1);
			vmheap_strbuf_add_json(sb, d[i].name);
			vmheap_strbuf_add(sb, ",", 1);
			if (d[i].site)
				vmheap_strbuf_add_json(sb, d[i].site);
			else
				vmheap_strbuf_add(sb, "null", 4);
			vmheap_strbuf_addf(sb, ",%" PRId64 ",%" PRId64 "]",
					   d[i].count_delta, d[i].bytes_delta);
		}
		vmheap_strbuf_add(sb, "]}", 2);
	}
	free(d);
	vmheap_census_free(c0);
	vmheap_census_free(c1);
	vmheap_reader_free(r0);
	vmheap_reader_free(r1);
	return rc;
}
