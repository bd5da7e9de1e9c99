/*
 * timeline.c - vmheap-diff A B C ...: per class, the count and bytes at
 * each dump, the change from the first to the last, and the growth per
 * minute from the dumps' start times (header time_ms); classes that grew
 * at every step are marked.  Text, JSON and CSV carry the same figures.
 * vmheap-diff --native A B C ... (native.c) gives the same report of
 * native sites through the shared functions below.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timeline-internal.h"

/* The mark of a class that grew at every step, and its legend. */
#define EVERY_MARK "*"
#define EVERY_LEGEND "* grew at every step"

/* Header times are whatever the file says: their arithmetic holds at
 * INT64_MIN and INT64_MAX rather than overflow. */
static int64_t ms_of_seconds(int64_t s)
{
	if (s > INT64_MAX / 1000)
		return INT64_MAX;
	if (s < INT64_MIN / 1000)
		return INT64_MIN;
	return s * 1000;
}

/* b - a, held at INT64_MIN or INT64_MAX. */
static int64_t ms_between(int64_t a, int64_t b)
{
	int64_t d;

	if (__builtin_sub_overflow(b, a, &d))
		return b > a ? INT64_MAX : INT64_MIN;
	return d;
}

int64_t diff_time_ms(const struct vmheap_header *h)
{
	return h->time_ms ? h->time_ms : ms_of_seconds(h->time);
}

/* "3.0 s" or "2.5 min": a span of milliseconds for a person. */
static void span_text(char *buf, size_t len, int64_t ms)
{
	double s = (double)ms / 1000.0;

	if (s < 120.0)
		snprintf(buf, len, "%.1f s", s);
	else if (s < 7200.0)
		snprintf(buf, len, "%.1f min", s / 60.0);
	else
		snprintf(buf, len, "%.1f h", s / 3600.0);
}

void diff_warn_order(struct vmheap_strbuf *w, int two, const char *a_name,
		     int ia, const struct vmheap_header *a, const char *b_name,
		     int ib, const struct vmheap_header *b)
{
	int64_t ta = diff_time_ms(a), tb = diff_time_ms(b);
	char span[32];

	if (tb >= ta)
		return;
	span_text(span, sizeof(span), ms_between(tb, ta));
	if (two)
		vmheap_strbuf_addf(w,
				   "vmheap-diff: warning: NEW (%s) was taken "
				   "%s before OLD (%s): the diff shows NEW "
				   "minus OLD; give the older dump first\n",
				   b_name, span, a_name);
	else
		vmheap_strbuf_addf(w,
				   "vmheap-diff: warning: the dumps are out of "
				   "time order: #%d (%s) was taken %s before "
				   "#%d (%s); give them oldest first\n",
				   ib, b_name, span, ia, a_name);
}

/* ------------------------------------------------------------ figures */

static int entry_by_name(const void *pa, const void *pb)
{
	const struct tl_entry *a = pa, *b = pb;
	int d = strcmp(a->name, b->name);
	return d ? d : (a->dump > b->dump) - (a->dump < b->dump);
}

static int row_by_name(const void *pa, const void *pb)
{
	return strcmp(((const struct tl_row *)pa)->name,
		      ((const struct tl_row *)pb)->name);
}

/* Native sites: most bytes_delta first, then count_delta, then name. */
static int row_by_growth(const void *pa, const void *pb)
{
	const struct tl_row *a = pa, *b = pb;

	if (a->bytes_delta != b->bytes_delta)
		return a->bytes_delta < b->bytes_delta ? 1 : -1;
	if (a->count_delta != b->count_delta)
		return a->count_delta < b->count_delta ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* Put tl->rows (in name order) in the order of the two-dump diff's rows
 * (vmheap_census_deltas_sort on first and last dump). */
static int sort_rows(struct timeline *tl, enum vmheap_sort key)
{
	struct vmheap_census_delta *d = calloc(tl->nrows + 1, sizeof(*d));
	struct tl_row *sorted = calloc(tl->nrows + 1, sizeof(*sorted));
	size_t last = tl->n - 1;

	if (!d || !sorted) {
		free(d);
		free(sorted);
		return VMHEAP_ENOMEM;
	}
	for (size_t i = 0; i < tl->nrows; i++) {
		const struct tl_row *r = &tl->rows[i];
		d[i] = (struct vmheap_census_delta){
		    .name = r->name,
		    .count_old = r->count[0],
		    .count_new = r->count[last],
		    .bytes_old = r->bytes[0],
		    .bytes_new = r->bytes[last],
		    .count_delta = r->count_delta,
		    .bytes_delta = r->bytes_delta};
	}
	vmheap_census_deltas_sort(d, tl->nrows, key);
	for (size_t i = 0; i < tl->nrows; i++) {
		struct tl_row k = {.name = d[i].name};
		sorted[i] = *(struct tl_row *)bsearch(&k, tl->rows, tl->nrows,
						      sizeof(k), row_by_name);
	}
	free(tl->rows);
	free(d);
	tl->rows = sorted;
	return 0;
}

/* The deltas and the every-step mark of a row whose figures are set: by
 * the count (classes) or the bytes (native sites). */
static void row_finish(struct tl_row *r, size_t n, int by_bytes)
{
	const uint64_t *v = by_bytes ? r->bytes : r->count;

	r->count_delta = (int64_t)(r->count[n - 1] - r->count[0]);
	r->bytes_delta = (int64_t)(r->bytes[n - 1] - r->bytes[0]);
	r->every = 1;
	for (size_t k = 1; k < n; k++)
		if (v[k] <= v[k - 1])
			r->every = 0;
}

static int row_changed(const struct tl_row *r, size_t n)
{
	for (size_t k = 1; k < n; k++)
		if (r->count[k] != r->count[0] || r->bytes[k] != r->bytes[0])
			return 1;
	return 0;
}

/* The censuses' rows as entries (*e malloc'd). */
static int census_entries(const struct timeline *tl, struct tl_entry **out,
			  size_t *nout)
{
	struct tl_entry *e = NULL;
	size_t ne = 0, cap = 0;

	for (size_t k = 0; k < tl->n; k++) {
		size_t nr;
		struct vmheap_census_row *rows =
		    vmheap_census_rows(tl->d[k].census, &nr);
		for (size_t i = 0; i < nr; i++) {
			if (ne == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct tl_entry *p = realloc(e, nc * sizeof(*p));
				if (!p) {
					free(e);
					return VMHEAP_ENOMEM;
				}
				e = p;
				cap = nc;
			}
			e[ne++] = (struct tl_entry){rows[i].name, k,
						    rows[i].count,
						    rows[i].bytes};
		}
	}
	*out = e;
	*nout = ne;
	return 0;
}

int diff_timeline_rows(struct timeline *tl, const struct diff_options *o,
		       struct tl_entry *e, size_t ne)
{
	if (ne)
		qsort(e, ne, sizeof(*e), entry_by_name);
	tl->rows = calloc(ne ? ne : 1, sizeof(*tl->rows));
	tl->total.name = "total";
	tl->total.count = calloc(2 * tl->n, sizeof(uint64_t));
	if (!tl->rows || !tl->total.count)
		return VMHEAP_ENOMEM;
	tl->total.bytes = tl->total.count + tl->n;
	for (size_t i = 0; i < ne;) {
		struct tl_row r = {.name = e[i].name};
		size_t j = i;

		r.count = calloc(2 * tl->n, sizeof(uint64_t));
		if (!r.count)
			return VMHEAP_ENOMEM;
		r.bytes = r.count + tl->n;
		for (; j < ne && !strcmp(e[j].name, r.name); j++) {
			r.count[e[j].dump] += e[j].count;
			r.bytes[e[j].dump] += e[j].bytes;
			tl->total.count[e[j].dump] += e[j].count;
			tl->total.bytes[e[j].dump] += e[j].bytes;
		}
		i = j;
		row_finish(&r, tl->n, tl->native);
		if (row_changed(&r, tl->n))
			tl->rows[tl->nrows++] = r;
		else
			free(r.count);
	}
	if (tl->native)
		qsort(tl->rows, tl->nrows, sizeof(*tl->rows), row_by_growth);
	else if (sort_rows(tl, o->report.sort) < 0)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; !tl->native && k < tl->n; k++) {
		const struct vmheap_totals *t =
		    vmheap_census_totals(tl->d[k].census);
		tl->total.count[k] = t->objects;
		tl->total.bytes[k] = t->bytes;
	}
	row_finish(&tl->total, tl->n, tl->native);
	return 0;
}

/* Growth per minute over the timeline's span; NAN when it has none. */
static double per_minute(const struct timeline *tl, int64_t delta)
{
	if (tl->span_ms == 0)
		return NAN;
	return (double)delta * 60000.0 / (double)tl->span_ms;
}

/* ------------------------------------------------------------- output */

static void rate_text(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (fabs(v) < 9.95 && v != 0)
		snprintf(buf, len, "%+.1f", v);
	else if (v == 0)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%+.0f", v);
}

/* Bytes per minute as the bytes column: "+1.20 MiB", "-" without a span
 * (exact, rounded to a byte, with --bytes). */
static void bytes_rate_text(const struct diff_options *o, char *buf,
			    size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		vmheap_report_size_delta(&o->report, buf, len,
					 (int64_t)(v < 0 ? v - 0.5 : v + 0.5));
}

static void signed_text(char *buf, size_t len, int64_t v)
{
	snprintf(buf, len, v > 0 ? "+%" PRId64 : "%" PRId64, v);
}

/* "2026-11-23 04:10:02.123 UTC" */
static void when_text(char *buf, size_t len, int64_t ms)
{
	/* whole seconds rounded down, so that the milliseconds are 0..999
	 * before 1970 too */
	int rem = (int)(ms % 1000);
	time_t s = (time_t)(ms / 1000 - (rem < 0));
	struct tm tm;

	if (!gmtime_r(&s, &tm)) {
		snprintf(buf, len, "%" PRId64 " ms", ms);
		return;
	}
	size_t l = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + l, len - l, ".%03d UTC", rem < 0 ? rem + 1000 : rem);
}

/* The table's columns: the counts at each dump, then these, then the
 * class or site. */
#define TL_COLS 5 /* change, per min, bytes, bytes/min, name */

/* Add a table row: the counts, change, per min, bytes change, bytes per
 * min, class. */
static int add_row(vmheap_table *tab, const struct diff_options *o,
		   const struct timeline *tl, const struct tl_row *r,
		   const char *label)
{
	size_t ncol = tl->n + TL_COLS;
	char(*cells)[64] = calloc(ncol, sizeof(*cells));
	const char **row = calloc(ncol, sizeof(*row));
	int rc = VMHEAP_ENOMEM;

	if (!cells || !row)
		goto out;
	for (size_t k = 0; k < tl->n; k++)
		snprintf(cells[k], sizeof(cells[k]), "%" PRIu64, r->count[k]);
	signed_text(cells[tl->n], sizeof(cells[0]), r->count_delta);
	rate_text(cells[tl->n + 1], sizeof(cells[0]),
		  per_minute(tl, r->count_delta));
	vmheap_report_size_delta(&o->report, cells[tl->n + 2], sizeof(cells[0]),
				 r->bytes_delta);
	bytes_rate_text(o, cells[tl->n + 3], sizeof(cells[0]),
			per_minute(tl, r->bytes_delta));
	for (size_t k = 0; k < ncol - 1; k++)
		row[k] = cells[k];
	{
		size_t l = strlen(label) + 3;
		char *name = malloc(l);
		if (!name)
			goto out;
		snprintf(name, l, "%s%s", r->every ? EVERY_MARK " " : "  ",
			 label);
		row[ncol - 1] = name;
		rc = vmheap_table_add_row(tab, row);
		free(name);
	}
out:
	free(cells);
	free(row);
	return rc;
}

/* "#1 at +0.0 s: NAME (vm VM, pid PID): ..." for dump k. */
static void dump_line(struct vmheap_strbuf *out, const struct diff_options *o,
		      const struct timeline *tl, size_t k)
{
	char off[32], which[64], size[64];

	span_text(off, sizeof(off), ms_between(tl->t_ms[0], tl->t_ms[k]));
	snprintf(which, sizeof(which), "#%zu at %s%s", k + 1,
		 tl->t_ms[k] >= tl->t_ms[0] ? "+" : "", off);
	if (!tl->native) {
		const struct vmheap_totals *t =
		    vmheap_census_totals(tl->d[k].census);
		diff_dump_line(out, o, which, tl->d[k].reader, t->objects,
			       t->bytes);
		return;
	}
	vmheap_report_bytes(&o->report, size, sizeof(size),
			    tl->total.bytes[k]);
	vmheap_strbuf_addf(out, "%s: ", which);
	vmheap_strbuf_add_dump_origin(out, tl->d[k].reader);
	vmheap_strbuf_addf(out, ": %" PRIu64 " live malloc blocks, %s\n",
			   tl->total.count[k], size);
}

static void timeline_text(const struct diff_options *o,
			  const struct timeline *tl, struct vmheap_strbuf *out)
{
	size_t shown = vmheap_report_rows_shown(&o->report, tl->nrows);
	size_t ncol = tl->n + TL_COLS;
	const char *what = tl->native ? "site" : "class";
	char when[64], span[32], label[96];
	char *align = malloc(ncol + 1);
	char(*head)[24] = calloc(ncol, sizeof(*head));
	const char **hrow = calloc(ncol, sizeof(*hrow));
	vmheap_table *tab = NULL;
	int rc = VMHEAP_ENOMEM;

	when_text(when, sizeof(when), tl->t_ms[0]);
	span_text(span, sizeof(span), tl->span_ms);
	vmheap_strbuf_addf(out, "timeline: %zu dumps over %s, from %s\n",
			   tl->n, span, when);
	for (size_t k = 0; k < tl->n; k++)
		dump_line(out, o, tl, k);
	if (tl->native)
		vmheap_strbuf_addf(out, "live malloc memory by call site: "
					"the live blocks at each dump\n");
	if (!align || !head || !hrow)
		goto out;
	memset(align, 'r', ncol - 1);
	align[ncol - 1] = 'l';
	align[ncol] = '\0';
	tab = vmheap_table_new(align);
	if (!tab)
		goto out;
	for (size_t k = 0; k < tl->n; k++) {
		snprintf(head[k], sizeof(head[k]), "#%zu", k + 1);
		hrow[k] = head[k];
	}
	hrow[tl->n] = "change";
	hrow[tl->n + 1] = "per min";
	hrow[tl->n + 2] = "bytes";
	hrow[tl->n + 3] = "bytes/min";
	hrow[tl->n + 4] = tl->native ? "  site" : "  class";
	rc = vmheap_table_add_row(tab, hrow);
	for (size_t i = 0; i < shown && !rc; i++)
		rc = add_row(tab, o, tl, &tl->rows[i], tl->rows[i].name);
	vmheap_report_total_label(label, sizeof(label), "total", tl->nrows,
				  tl->native ? "sites changed"
					     : "classes changed",
				  shown);
	if (!rc)
		rc = add_row(tab, o, tl, &tl->total, label);
out:
	if (rc || !tab)
		out->failed = 1;
	else
		vmheap_table_render(tab, out);
	vmheap_table_free(tab);
	free(align);
	free(head);
	free(hrow);
	if (!out->failed) {
		size_t every = 0;
		for (size_t i = 0; i < tl->nrows; i++)
			every += (size_t)tl->rows[i].every;
		vmheap_strbuf_addf(out,
				   "%s (%zu %s%s); per min, bytes/min: the "
				   "change from #1 to #%zu per minute of the "
				   "%s between them\n",
				   tl->native ? "* live bytes grew at every step"
					      : EVERY_LEGEND,
				   every,
				   what,
				   every == 1 ? "" : tl->native ? "s" : "es",
				   tl->n, span);
	}
}

static void json_rate(struct vmheap_strbuf *out, const char *key, double v)
{
	if (isnan(v))
		vmheap_strbuf_addf(out, ",\"%s\":null", key);
	else
		vmheap_strbuf_addf(out, ",\"%s\":%.3f", key, v);
}

static void json_figures(struct vmheap_strbuf *out, const struct timeline *tl,
			 const struct tl_row *r)
{
	vmheap_strbuf_add(out, "\"counts\":[", 10);
	for (size_t k = 0; k < tl->n; k++)
		vmheap_strbuf_addf(out, "%s%" PRIu64, k ? "," : "",
				   r->count[k]);
	vmheap_strbuf_add(out, "],\"bytes\":[", 11);
	for (size_t k = 0; k < tl->n; k++)
		vmheap_strbuf_addf(out, "%s%" PRIu64, k ? "," : "",
				   r->bytes[k]);
	vmheap_strbuf_addf(out,
			   "],\"count_delta\":%" PRId64
			   ",\"bytes_delta\":%" PRId64,
			   r->count_delta, r->bytes_delta);
	json_rate(out, "count_per_minute", per_minute(tl, r->count_delta));
	json_rate(out, "bytes_per_minute", per_minute(tl, r->bytes_delta));
	vmheap_strbuf_addf(out, ",\"grew_every_step\":%s",
			   r->every ? "true" : "false");
}

/* The members of dump k: "file", ..., "time_ms", and its totals. */
static void json_dump(struct vmheap_strbuf *out, const struct timeline *tl,
		      size_t k)
{
	if (tl->native) {
		vmheap_strbuf_add_dump_json(out, tl->d[k].reader, NULL);
		vmheap_strbuf_addf(out,
				   ",\"live_count\":%" PRIu64
				   ",\"live_bytes\":%" PRIu64,
				   tl->total.count[k], tl->total.bytes[k]);
	} else
		vmheap_strbuf_add_dump_json(
		    out, tl->d[k].reader, vmheap_census_totals(tl->d[k].census));
}

static void timeline_json(const struct diff_options *o,
			  const struct timeline *tl, struct vmheap_strbuf *out)
{
	size_t shown = vmheap_report_rows_shown(&o->report, tl->nrows);
	const char *what = tl->native ? "site" : "class";

	vmheap_strbuf_addf(out, "{%s\"old\":{", tl->native ? "\"native\":true," : "");
	json_dump(out, tl, 0);
	vmheap_strbuf_add(out, "},\"new\":{", 9);
	json_dump(out, tl, tl->n - 1);
	vmheap_strbuf_add(out, "},\"dumps\":[", 11);
	for (size_t k = 0; k < tl->n; k++) {
		vmheap_strbuf_add(out, k ? ",{" : "{", k ? 2 : 1);
		json_dump(out, tl, k);
		vmheap_strbuf_addf(out, ",\"offset_ms\":%" PRId64 "}",
				   ms_between(tl->t_ms[0], tl->t_ms[k]));
	}
	vmheap_strbuf_addf(out, "],\"span_ms\":%" PRId64 ",\"total\":{",
			   tl->span_ms);
	json_figures(out, tl, &tl->total);
	vmheap_strbuf_addf(out, "},\"changed\":%zu,\"%s\":[", tl->nrows,
			   tl->native ? "sites" : "classes");
	for (size_t i = 0; i < shown; i++) {
		vmheap_strbuf_addf(out, "%s{\"%s\":", i ? "," : "", what);
		vmheap_strbuf_add_json(out, tl->rows[i].name);
		vmheap_strbuf_add(out, ",", 1);
		json_figures(out, tl, &tl->rows[i]);
		vmheap_strbuf_add(out, "}", 1);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

static void csv_rate(struct vmheap_strbuf *out, double v)
{
	if (isnan(v))
		vmheap_strbuf_add(out, ",", 1);
	else
		vmheap_strbuf_addf(out, ",%.3f", v);
}

static void timeline_csv(const struct diff_options *o,
			 const struct timeline *tl, struct vmheap_strbuf *out)
{
	size_t shown = vmheap_report_rows_shown(&o->report, tl->nrows);

	vmheap_strbuf_addf(out, "%s", tl->native ? "site" : "class");
	for (size_t k = 0; k < tl->n; k++)
		vmheap_strbuf_addf(out, ",count_%zu", k + 1);
	vmheap_strbuf_addf(out, ",count_delta,count_per_minute");
	for (size_t k = 0; k < tl->n; k++)
		vmheap_strbuf_addf(out, ",bytes_%zu", k + 1);
	vmheap_strbuf_addf(out, ",bytes_delta,bytes_per_minute,"
				"grew_every_step\n");
	for (size_t i = 0; i < shown; i++) {
		const struct tl_row *r = &tl->rows[i];
		vmheap_strbuf_add_csv(out, r->name);
		for (size_t k = 0; k < tl->n; k++)
			vmheap_strbuf_addf(out, ",%" PRIu64, r->count[k]);
		vmheap_strbuf_addf(out, ",%" PRId64, r->count_delta);
		csv_rate(out, per_minute(tl, r->count_delta));
		for (size_t k = 0; k < tl->n; k++)
			vmheap_strbuf_addf(out, ",%" PRIu64, r->bytes[k]);
		vmheap_strbuf_addf(out, ",%" PRId64, r->bytes_delta);
		csv_rate(out, per_minute(tl, r->bytes_delta));
		vmheap_strbuf_addf(out, ",%s\n", r->every ? "true" : "false");
	}
}

void diff_timeline_render(const struct diff_options *o,
			  const struct timeline *tl, struct vmheap_strbuf *out)
{
	if (o->report.format == VMHEAP_OUTPUT_JSON)
		timeline_json(o, tl, out);
	else if (o->report.format == VMHEAP_OUTPUT_CSV)
		timeline_csv(o, tl, out);
	else
		timeline_text(o, tl, out);
}

/* ------------------------------------------------------------ reading */

void diff_timeline_release(struct timeline *tl)
{
	for (size_t i = 0; i < tl->nrows; i++)
		free(tl->rows[i].count);
	free(tl->rows);
	free(tl->total.count);
	for (size_t k = 0; tl->d && k < tl->n; k++) {
		vmheap_census_free(tl->d[k].census);
		vmheap_reader_free(tl->d[k].reader);
	}
	free(tl->d);
	free(tl->t_ms);
}

int diff_timeline_alloc(const struct diff_options *o, struct timeline *tl,
			char *err, size_t errsz)
{
	tl->n = o->ndumps;
	tl->d = calloc(tl->n, sizeof(*tl->d));
	tl->t_ms = calloc(tl->n, sizeof(*tl->t_ms));
	if (!tl->d || !tl->t_ms) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	for (size_t k = 0; k < tl->n; k++)
		tl->d[k].path = o->dumps[k];
	return 0;
}

void diff_timeline_check(struct timeline *tl, struct vmheap_strbuf *w)
{
	tl->span_ms = ms_between(tl->t_ms[0], tl->t_ms[tl->n - 1]);
	for (size_t k = 1; k < tl->n; k++) {
		const struct vmheap_header *a =
		    vmheap_reader_header(tl->d[k - 1].reader);
		const struct vmheap_header *b =
		    vmheap_reader_header(tl->d[k].reader);
		diff_warn_order(w, 0, tl->d[k - 1].path, (int)k, a,
				tl->d[k].path, (int)k + 1, b);
		if (a->pid != b->pid || strcmp(a->vm_name, b->vm_name))
			vmheap_strbuf_addf(
			    w,
			    "vmheap-diff: warning: #%zu (%s) and #%zu (%s) "
			    "come from different processes (%s pid %" PRIu64
			    ", %s pid %" PRIu64 ")\n",
			    k, tl->d[k - 1].path, k + 1, tl->d[k].path,
			    a->vm_name, a->pid, b->vm_name, b->pid);
	}
	if (tl->span_ms == 0)
		vmheap_strbuf_addf(w, "vmheap-diff: warning: the first and the "
				      "last dump have the same start time: "
				      "no growth per minute\n");
}

/* Open and read every dump; the warnings about them into w. */
static int timeline_read(const struct diff_options *o, struct timeline *tl,
			 struct vmheap_strbuf *w, char *err, size_t errsz)
{
	struct tl_entry *e = NULL;
	size_t ne = 0;
	int rc = diff_timeline_alloc(o, tl, err, errsz);

	for (size_t k = 0; rc == 0 && k < tl->n; k++) {
		struct diff_dump *d = &tl->d[k];
		rc = vmheap_dump_open(&d->reader, d->path, &d->size,
				      &d->regular, err, errsz);
		if (rc < 0 && d->reader)
			snprintf(err, errsz, "%s",
				 vmheap_reader_error(d->reader));
		if (rc < 0)
			return rc;
		rc = diff_read_census(o, d, err, errsz);
		if (rc < 0)
			return rc;
		tl->t_ms[k] = diff_time_ms(vmheap_reader_header(d->reader));
	}
	if (rc < 0)
		return rc;
	diff_timeline_check(tl, w);
	if ((rc = census_entries(tl, &e, &ne)) == 0)
		rc = diff_timeline_rows(tl, o, e, ne);
	free(e);
	if (rc < 0)
		snprintf(err, errsz, "out of memory for the timeline");
	return rc;
}

int diff_timeline_main(const struct diff_options *o)
{
	struct timeline tl;
	struct vmheap_strbuf out = VMHEAP_STRBUF_INIT;
	struct vmheap_strbuf warn = VMHEAP_STRBUF_INIT;
	char err[1024];
	int rc;

	memset(&tl, 0, sizeof(tl));
	rc = timeline_read(o, &tl, &warn, err, sizeof(err));
	if (!rc) {
		diff_timeline_render(o, &tl, &out);
		if (out.failed || warn.failed) {
			snprintf(err, sizeof(err),
				 "out of memory for the report");
			rc = VMHEAP_ENOMEM;
		}
	}
	diff_timeline_release(&tl);
	return diff_emit(rc, err, &out, &warn);
}
