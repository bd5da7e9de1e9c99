/*
 * census.c - vmheap-report's figures from the censuses: the dumps'
 * summary, the class table of the last dump, the growth of the top
 * classes across the dumps and the diff of the first and last dumps,
 * computed and sorted as vmheap-diff does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html-internal.h"

static int read_one(struct html_dump *d, char *err, size_t errsz)
{
	struct vmheap_report_options ro = VMHEAP_REPORT_OPTIONS_INIT;
	uint64_t size;
	int regular;
	int rc =
	    vmheap_dump_open(&d->reader, d->arg, &size, &regular, err, errsz);

	if (rc < 0) {
		if (d->reader)
			snprintf(err, errsz, "%s",
				 vmheap_reader_error(d->reader));
		return rc;
	}
	return vmheap_census_scan(&ro, d->reader, d->arg, size,
				  VMHEAP_GROUP_CLASS, &d->census, err, errsz);
}

int html_read_censuses(const struct html_options *o, struct html_report *rep,
		       char *err, size_t errsz)
{
	int rc;

	rep->dumps = calloc(o->ndumps, sizeof(*rep->dumps));
	if (!rep->dumps) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	rep->ndumps = o->ndumps;
	for (size_t k = 0; k < o->ndumps; k++) {
		rep->dumps[k].arg = o->dumps[k];
		rc = read_one(&rep->dumps[k], err, errsz);
		if (rc < 0)
			return rc;
	}
	if (rep->ndumps < 2)
		return 0;
	rc = vmheap_census_diff(rep->dumps[0].census,
				rep->dumps[rep->ndumps - 1].census,
				&rep->deltas, &rep->ndeltas);
	if (rc < 0) {
		snprintf(err, errsz, "out of memory comparing the censuses");
		return rc;
	}
	vmheap_census_deltas_sort(rep->deltas, rep->ndeltas, VMHEAP_SORT_COUNT);
	return 0;
}

void html_report_release(struct html_report *rep)
{
	for (size_t k = 0; k < rep->ndumps; k++) {
		vmheap_census_free(rep->dumps[k].census);
		vmheap_reader_free(rep->dumps[k].reader);
	}
	free(rep->dumps);
	free(rep->deltas);
	memset(rep, 0, sizeof(*rep));
}

/* ------------------------------------------------------------- dumps */

static void dump_json(struct vmheap_strbuf *sb, const struct html_dump *d)
{
	const struct vmheap_header *h = vmheap_reader_header(d->reader);
	const struct vmheap_totals *t = vmheap_census_totals(d->census);
	size_t nclasses = 0;

	vmheap_census_rows(d->census, &nclasses);
	vmheap_strbuf_add(sb, "{", 1);
	vmheap_strbuf_add_dump_json(sb, d->reader, t);
	if (vmheap_census_saturated(d->census))
		vmheap_strbuf_add_saturated(sb, VMHEAP_OUTPUT_JSON);
	/* time_ms_text: the exact figure, for a time JavaScript's Date
	 * cannot show (a number past 2^53 loses digits in JavaScript) */
	vmheap_strbuf_addf(sb,
			   ",\"time_ms\":%" PRId64 ",\"time_ms_text\":\"%" PRId64
			   "\",\"format\":\"%" PRIu32 ".%" PRIu32 "\"",
			   h->time_ms, h->time_ms, h->major, h->minor);
	vmheap_strbuf_addf(sb, ",\"classes\":%zu", nclasses);
	if (h->has_memory)
		vmheap_strbuf_addf(
		    sb,
		    ",\"memory\":{\"rss\":%" PRIu64
		    ",\"malloc_in_use\":%" PRIu64 ",\"malloc_free\":%" PRIu64
		    ",\"malloc_mmap\":%" PRIu64 "}",
		    h->memory.rss, h->memory.malloc_in_use,
		    h->memory.malloc_free, h->memory.malloc_mmap);
	else
		vmheap_strbuf_add(sb, ",\"memory\":null", 14);
	vmheap_strbuf_add(sb, "}", 1);
}

/* ------------------------------------------------------------- classes */

static void classes_json(struct vmheap_strbuf *sb, vmheap_census *c)
{
	size_t n = 0;
	struct vmheap_census_row *rows = vmheap_census_rows(c, &n);
	size_t shown = n < HTML_CLASSES_MAX ? n : HTML_CLASSES_MAX;

	vmheap_census_rows_sort(rows, n, VMHEAP_SORT_BYTES);
	vmheap_strbuf_addf(sb, "{\"total\":%zu,\"rows\":[", n);
	for (size_t i = 0; i < shown; i++) {
		vmheap_strbuf_add(sb, i ? ",[" : "[", i ? 2 : 1);
		vmheap_strbuf_add_json(sb, rows[i].name);
		vmheap_strbuf_addf(sb, ",%" PRIu64 ",%" PRIu64 "]",
				   rows[i].count, rows[i].bytes);
	}
	vmheap_strbuf_add(sb, "]}", 2);
}

/* ------------------------------------------------------------- growth */

/* The count (or with `bytes`, the bytes) of the class named `name` in
 * census c; 0 when absent. */
static uint64_t find_row(vmheap_census *c, const char *name, int bytes)
{
	size_t n = 0;
	const struct vmheap_census_row *rows = vmheap_census_rows(c, &n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return bytes ? rows[i].bytes : rows[i].count;
	return 0;
}

/* "KEY":[the class's count (or bytes) in each dump] */
static void series_json(struct vmheap_strbuf *sb, const struct html_report *rep,
			const char *name, int bytes)
{
	vmheap_strbuf_addf(sb, "\"%s\":[", bytes ? "bytes" : "count");
	for (size_t k = 0; k < rep->ndumps; k++)
		vmheap_strbuf_addf(sb, "%s%" PRIu64, k ? "," : "",
				   find_row(rep->dumps[k].census, name, bytes));
	vmheap_strbuf_add(sb, "]", 1);
}

static void growth_json(struct vmheap_strbuf *sb, const struct html_report *rep)
{
	size_t shown = 0;

	vmheap_strbuf_add(sb, "{\"classes\":[", 12);
	for (size_t i = 0; i < rep->ndeltas && shown < HTML_GROWTH_CLASSES;
	     i++) {
		const struct vmheap_census_delta *d = &rep->deltas[i];
		if (d->count_delta <= 0 && d->bytes_delta <= 0)
			continue;
		vmheap_strbuf_add(
		    sb, shown ? ",{\"name\":" : "{\"name\":", shown ? 9 : 8);
		vmheap_strbuf_add_json(sb, d->name);
		vmheap_strbuf_add(sb, ",", 1);
		series_json(sb, rep, d->name, 0);
		vmheap_strbuf_add(sb, ",", 1);
		series_json(sb, rep, d->name, 1);
		vmheap_strbuf_add(sb, "}", 1);
		shown++;
	}
	vmheap_strbuf_add(sb, "]}", 2);
}

/* ------------------------------------------------------------- diff */

/* The diff as vmheap-diff prints it: its rows' order (count change,
 * then name), their exact figures, and the bytes and % cells as its text
 * table has them. */
static void diff_json(struct vmheap_strbuf *sb, const struct html_report *rep)
{
	struct vmheap_report_options ro = VMHEAP_REPORT_OPTIONS_INIT;
	const struct vmheap_totals *to =
	    vmheap_census_totals(rep->dumps[0].census);
	const struct vmheap_totals *tn =
	    vmheap_census_totals(rep->dumps[rep->ndumps - 1].census);
	size_t shown =
	    rep->ndeltas < HTML_DIFF_MAX ? rep->ndeltas : HTML_DIFF_MAX;
	int64_t dc = (int64_t)(tn->objects - to->objects);
	int64_t db = (int64_t)(tn->bytes - to->bytes);
	char bytes[32], share[32];

	vmheap_report_size_delta(&ro, bytes, sizeof(bytes), db);
	vmheap_format_share(share, sizeof(share), (double)db, (double)to->bytes,
			    1);
	vmheap_strbuf_addf(sb,
			   "{\"old\":0,\"new\":%zu,\"changed\":%zu,"
			   "\"count_delta\":%" PRId64
			   ",\"bytes_delta\":%" PRId64
			   ",\"bytes_text\":\"%s\",\"share_text\":\"%s\","
			   "\"rows\":[",
			   rep->ndumps - 1, rep->ndeltas, dc, db, bytes, share);
	for (size_t i = 0; i < shown; i++) {
		const struct vmheap_census_delta *d = &rep->deltas[i];
		vmheap_report_size_delta(&ro, bytes, sizeof(bytes),
					 d->bytes_delta);
		vmheap_format_share(share, sizeof(share),
				    (double)d->bytes_delta, (double)to->bytes,
				    1);
		vmheap_strbuf_add(sb, i ? ",[" : "[", i ? 2 : 1);
		vmheap_strbuf_add_json(sb, d->name);
		vmheap_strbuf_addf(
		    sb,
		    ",%" PRId64 ",%" PRId64 ",\"%s\",\"%s\",%" PRIu64
		    ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
		    d->count_delta, d->bytes_delta, bytes, share, d->count_old,
		    d->count_new, d->bytes_old, d->bytes_new);
	}
	vmheap_strbuf_add(sb, "]}", 2);
}

void html_census_json(const struct html_report *rep, struct vmheap_strbuf *sb)
{
	vmheap_strbuf_add(sb, "\"dumps\":[", 9);
	for (size_t k = 0; k < rep->ndumps; k++) {
		if (k)
			vmheap_strbuf_add(sb, ",", 1);
		dump_json(sb, &rep->dumps[k]);
	}
	vmheap_strbuf_add(sb, "],\"classes\":", 12);
	classes_json(sb, rep->dumps[rep->ndumps - 1].census);
	if (rep->ndumps < 2) {
		vmheap_strbuf_add(sb, ",\"growth\":null,\"diff\":null", 26);
		return;
	}
	vmheap_strbuf_add(sb, ",\"growth\":", 10);
	growth_json(sb, rep);
	vmheap_strbuf_add(sb, ",\"diff\":", 8);
	diff_json(sb, rep);
}

size_t html_path_classes(const struct html_report *rep, const char **names,
			 size_t cap)
{
	size_t k = 0;

	if (rep->ndumps > 1) {
		for (size_t i = 0; i < rep->ndeltas && k < cap; i++)
			if (rep->deltas[i].count_delta > 0)
				names[k++] = rep->deltas[i].name;
		return k;
	}
	size_t n = 0;
	struct vmheap_census_row *rows =
	    vmheap_census_rows(rep->dumps[0].census, &n);
	vmheap_census_rows_sort(rows, n, VMHEAP_SORT_BYTES);
	for (size_t i = 0; i < n && k < cap; i++)
		names[k++] = rows[i].name;
	return k;
}
