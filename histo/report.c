/*
 * report.c - vmheap-histo's output: a text table, JSON or CSV.  With
 * --by site each row is a class at an allocation site: a site column
 * follows the class ("-" in text, null in JSON, empty in CSV for objects
 * without a site).
 */
#include <inttypes.h>
#include <stdio.h>

#include "histo-internal.h"

static void render_text(const struct histo_options *o, vmheap_reader *r,
			const struct vmheap_census_row *rows, size_t n,
			size_t shown, const struct vmheap_totals *t,
			int saturated, struct vmheap_strbuf *out)
{
	const char *what = o->by_kind ? "kind" : "class";
	vmheap_table *tab = vmheap_table_new(o->by_site ? "rllrr" : "rlrr");
	char cnt[32], bytes[32], share[16], label[96];
	double total = (double)t->bytes;

	if (!tab) {
		out->failed = 1;
		return;
	}
	vmheap_strbuf_add(out, "dump: ", 6);
	vmheap_strbuf_add_dump_origin(out, r);
	vmheap_strbuf_add(out, "\n", 1);
	vmheap_strbuf_add_memory_line(out, vmheap_reader_header(r), t->bytes);
	int rc = vmheap_table_add_row(
	    tab, o->by_site
		     ? (const char *[]){"count", what, "site", "bytes", "%"}
		     : (const char *[]){"count", what, "bytes", "%"});
	for (size_t i = 0; i < shown && !rc; i++) {
		snprintf(cnt, sizeof(cnt), "%" PRIu64, rows[i].count);
		vmheap_report_size(&o->report, bytes, sizeof(bytes),
				   rows[i].bytes);
		vmheap_format_share(share, sizeof(share), (double)rows[i].bytes,
				    total, 0);
		const char *site = rows[i].site ? rows[i].site : "-";
		rc = vmheap_table_add_row(
		    tab, o->by_site ? (const char *[]){cnt, rows[i].name, site,
						       bytes, share}
				    : (const char *[]){cnt, rows[i].name,
						       bytes, share});
	}
	snprintf(cnt, sizeof(cnt), "%" PRIu64, t->objects);
	vmheap_report_size(&o->report, bytes, sizeof(bytes), t->bytes);
	vmheap_format_share(share, sizeof(share), total, total, 0);
	vmheap_report_total_label(label, sizeof(label), "total", n,
				  o->by_kind   ? "kinds"
				  : o->by_site ? "sites"
					       : "classes",
				  shown);
	if (!rc)
		rc = vmheap_table_add_row(
		    tab, o->by_site ? (const char *[]){cnt, label, "", bytes,
						       share}
				    : (const char *[]){cnt, label, bytes,
						       share});
	if (rc)
		out->failed = 1;
	else
		vmheap_table_render(tab, out);
	vmheap_table_free(tab);
	if (saturated)
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_TEXT);
}

static void render_json(const struct histo_options *o, vmheap_reader *r,
			const struct vmheap_census_row *rows, size_t n,
			size_t shown, const struct vmheap_totals *t,
			int saturated, struct vmheap_strbuf *out)
{
	const char *what = o->by_kind ? "kind" : "class";

	vmheap_strbuf_add(out, "{", 1);
	vmheap_strbuf_add_dump_json(out, r, t);
	if (saturated)
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_JSON);
	vmheap_strbuf_addf(out, ",\"%s\":%zu,\"%s\":[",
			   o->by_kind	? "kind_count"
			   : o->by_site ? "site_count"
					: "class_count",
			   n,
			   o->by_kind	? "kinds"
			   : o->by_site ? "sites"
					: "classes");
	for (size_t i = 0; i < shown; i++) {
		vmheap_strbuf_addf(out, "%s{\"%s\":", i ? "," : "", what);
		vmheap_strbuf_add_json(out, rows[i].name);
		if (o->by_site) {
			vmheap_strbuf_add(out, ",\"site\":", 8);
			if (rows[i].site)
				vmheap_strbuf_add_json(out, rows[i].site);
			else
				vmheap_strbuf_add(out, "null", 4);
		}
		vmheap_strbuf_addf(
		    out, ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
		    rows[i].count, rows[i].bytes);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

static void render_csv(const struct histo_options *o,
		       const struct vmheap_census_row *rows, size_t shown,
		       int saturated, struct vmheap_strbuf *out)
{
	vmheap_strbuf_addf(out, "count,%s,%sbytes\n",
			   o->by_kind ? "kind" : "class",
			   o->by_site ? "site," : "");
	for (size_t i = 0; i < shown; i++) {
		vmheap_strbuf_addf(out, "%" PRIu64 ",", rows[i].count);
		vmheap_strbuf_add_csv(out, rows[i].name);
		if (o->by_site) {
			vmheap_strbuf_add(out, ",", 1);
			vmheap_strbuf_add_csv(out,
					      rows[i].site ? rows[i].site : "");
		}
		vmheap_strbuf_addf(out, ",%" PRIu64 "\n", rows[i].bytes);
	}
	if (saturated)
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_CSV);
}

void histo_render(const struct histo_options *o, vmheap_reader *r,
		  vmheap_census *c, struct vmheap_strbuf *out)
{
	size_t n;
	struct vmheap_census_row *rows = vmheap_census_rows(c, &n);
	const struct vmheap_totals *t = vmheap_census_totals(c);
	int saturated = vmheap_census_saturated(c);

	if (o->pprof) {
		histo_render_pprof(o, r, c, out);
		return;
	}
	vmheap_census_rows_sort(rows, n, o->report.sort);
	size_t shown = vmheap_report_rows_shown(&o->report, n);
	switch (o->report.format) {
	case VMHEAP_OUTPUT_TEXT:
		render_text(o, r, rows, n, shown, t, saturated, out);
		break;
	case VMHEAP_OUTPUT_JSON:
		render_json(o, r, rows, n, shown, t, saturated, out);
		break;
	case VMHEAP_OUTPUT_CSV:
		render_csv(o, rows, shown, saturated, out);
		break;
	}
}
