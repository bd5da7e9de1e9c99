/*
 * sites.c - the allocation sites of the last dump (format 1.1 site
 * records: Ruby's config.trace.allocations), by class and site, as
 * vmheap-histo --by site counts them.
 */
#include <inttypes.h>
#include <stdio.h>

#include "html-internal.h"

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
		/* rows: [class, site or null, count, bytes] */
		vmheap_strbuf_addf(sb, "{\"total\":%zu,\"rows\":[", n);
		for (size_t i = 0; i < shown; i++) {
			vmheap_strbuf_add(sb, i ? ",[" : "[", i ? 2 : 1);
			vmheap_strbuf_add_json(sb, rows[i].name);
			vmheap_strbuf_add(sb, ",", 1);
			if (rows[i].site)
				vmheap_strbuf_add_json(sb, rows[i].site);
			else
				vmheap_strbuf_add(sb, "null", 4);
			vmheap_strbuf_addf(sb, ",%" PRIu64 ",%" PRIu64 "]",
					   rows[i].count, rows[i].bytes);
		}
		vmheap_strbuf_add(sb, "]}", 2);
	}
	vmheap_census_free(c);
	vmheap_reader_free(r);
	return rc;
}
