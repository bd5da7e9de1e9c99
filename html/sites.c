/*
 * sites.c - the allocation sites of the last dump (format 1.1 site
 * records: Ruby's config.trace.allocations), by class and site, as
 * vmheap-histo --by site counts them: most bytes first, as vmheap-histo
 * --by site --sort bytes, but the rows without a site (objects made
 * before tracing began) last, not first however many bytes they hold.
 */
#include <inttypes.h>
#include <stdio.h>

#include "html-internal.h"

/* Row r as the k-th element of the JSON array. */
static void add_row(struct vmheap_strbuf *sb, const struct vmheap_census_row *r,
		    size_t k)
{
	vmheap_strbuf_add(sb, k ? ",[" : "[", k ? 2 : 1);
	vmheap_strbuf_add_json(sb, r->name);
	vmheap_strbuf_add(sb, ",", 1);
	if (r->site)
		vmheap_strbuf_add_json(sb, r->site);
	else
		vmheap_strbuf_add(sb, "null", 4);
	vmheap_strbuf_addf(sb, ",%" PRIu64 ",%" PRIu64 "]", r->count, r->bytes);
}

int html_sites_json(const char *arg, struct vmheap_strbuf *sb, char *err,
		    size_t errsz)
{
	struct vmheap_report_options ro = VMHEAP_REPORT_OPTIONS_INIT;
	vmheap_reader *r = NULL;
	vmheap_census *c = NULL;
	uint64_t size;
	int regular;
	int rc = vmheap_dump_open(&r, arg, &size, &regular, err, errsz);

	if (rc < 0 && r)
		snprintf(err, errsz, "%s", vmheap_reader_error(r));
	if (rc == 0)
		rc = vmheap_census_scan(&ro, r, arg, size, VMHEAP_GROUP_SITE,
					&c, err, errsz);
	if (rc == 0) {
		size_t n = 0, shown;
		struct vmheap_census_row *rows = vmheap_census_rows(c, &n);
		vmheap_census_rows_sort(rows, n, VMHEAP_SORT_BYTES);
		shown = n < HTML_SITES_MAX ? n : HTML_SITES_MAX;
		/* rows: [class, site or null, count, bytes]: the `shown` rows
		 * with most bytes, those with a site first (pass 0), then those
		 * without (pass 1), each most bytes first */
		vmheap_strbuf_addf(sb, "{\"total\":%zu,\"rows\":[", n);
		size_t k = 0;
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < shown; i++) {
				if ((rows[i].site == NULL) != pass)
					continue;
				add_row(sb, &rows[i], k++);
			}
		vmheap_strbuf_add(sb, "]}", 2);
	}
	vmheap_census_free(c);
	vmheap_reader_free(r);
	return rc;
}
