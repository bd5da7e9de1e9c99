/*
 * report.c - vmheap-diff's output in text, JSON or CSV for each mode.
 * With --by site a row of the class diff is a class at an allocation
 * site: a site column follows the class ("-", null or empty for objects
 * without a site).
 */
#include <inttypes.h>
#include <stdio.h>

#include "diff-internal.h"

static void signed_text(char *buf, size_t sz, int64_t v)
{
	if (v > 0)
		snprintf(buf, sz, "+%" PRId64, v);
	else
		snprintf(buf, sz, "%" PRId64, v);
}

void diff_dump_line(struct vmheap_strbuf *out, const struct diff_options *o,
		    const char *which, vmheap_reader *r, uint64_t objects,
		    uint64_t bytes)
{
	char size[64];

	vmheap_report_bytes(&o->report, size, sizeof(size), bytes);
	vmheap_strbuf_addf(out, "%s: ", which);
	vmheap_strbuf_add_dump_origin(out, r);
	vmheap_strbuf_addf(out, ": %" PRIu64 " objects, %s\n", objects, size);
}

/* The old and new dump lines of the census modes. */
static void dump_lines(struct vmheap_strbuf *out, const struct diff_options *o,
		       const struct diff_result *res)
{
	const struct diff_dump *d[2] = {&res->old_d, &res->new_d};

	for (int k = 0; k < 2; k++) {
		const struct vmheap_totals *t =
		    vmheap_census_totals(d[k]->census);
		diff_dump_line(out, o, k ? "new" : "old", d[k]->reader,
			       t->objects, t->bytes);
	}
	vmheap_strbuf_add_memory_delta(
	    out, NULL, vmheap_reader_header(d[0]->reader),
	    vmheap_reader_header(d[1]->reader),
	    vmheap_census_totals(d[0]->census)->bytes,
	    vmheap_census_totals(d[1]->census)->bytes);
}

/* Whether a census's sum of sizes is held at 2^64 - 1. */
static int saturated(const struct diff_result *res)
{
	return (res->old_d.census && vmheap_census_saturated(res->old_d.census)) ||
	       (res->new_d.census && vmheap_census_saturated(res->new_d.census));
}

/* Open the JSON report: {"old":{...},"new":{...} */
static void dumps_json(struct vmheap_strbuf *out, const struct diff_result *res)
{
	vmheap_strbuf_add(out, "{\"old\":{", 8);
	vmheap_strbuf_add_dump_json(out, res->old_d.reader,
				    vmheap_census_totals(res->old_d.census));
	vmheap_strbuf_add(out, "},\"new\":{", 9);
	vmheap_strbuf_add_dump_json(out, res->new_d.reader,
				    vmheap_census_totals(res->new_d.census));
	vmheap_strbuf_add(out, "}", 1);
	if (saturated(res))
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_JSON);
}

/* Start element i of a JSON array of classes: [,]{"class":"NAME" */
static void json_class(struct vmheap_strbuf *out, size_t i, const char *name)
{
	vmheap_strbuf_add(out, i ? ",{\"class\":" : "{\"class\":", i ? 10 : 9);
	vmheap_strbuf_add_json(out, name);
}

static void render_table(vmheap_table *tab, struct vmheap_strbuf *out, int rc)
{
	if (rc || !tab)
		out->failed = 1;
	else
		vmheap_table_render(tab, out);
	vmheap_table_free(tab);
}

/* Row i of a count/class/bytes/% table: its numbers as text (each
 * buffer `size` bytes), its name. */
typedef const char *(*row_fn)(const struct diff_options *o,
			      const struct diff_result *res, size_t i,
			      char *count, char *bytes, char *share,
			      size_t size);

/* The site of delta i (--by site), "-" for none. */
static const char *delta_site(const struct diff_result *res, size_t i)
{
	return res->deltas[i].site ? res->deltas[i].site : "-";
}

/* A count/class/bytes/% table of `shown` rows and a total row; with
 * `site` (NULL: none) a site column after the class. */
static void count_table(struct vmheap_strbuf *out, const struct diff_options *o,
			const struct diff_result *res, size_t shown, row_fn row,
			const char *const total[4],
			const char *(*site)(const struct diff_result *res,
					    size_t i))
{
	vmheap_table *tab = vmheap_table_new(site ? "rllrr" : "rlrr");
	char cnt[32], bytes[32], share[32];
	int rc = tab ? 0 : -1;

	if (!rc)
		rc = vmheap_table_add_row(
		    tab, site ? (const char *[]){"count", "class", "site",
						 "bytes", "%"}
			      : (const char *[]){"count", "class", "bytes",
						 "%"});
	for (size_t i = 0; i < shown && !rc; i++) {
		const char *name =
		    row(o, res, i, cnt, bytes, share, sizeof(cnt));
		rc = vmheap_table_add_row(
		    tab, site ? (const char *[]){cnt, name, site(res, i), bytes,
						 share}
			      : (const char *[]){cnt, name, bytes, share});
	}
	if (!rc)
		rc = vmheap_table_add_row(
		    tab, site ? (const char *[]){total[0], total[1], "",
						 total[2], total[3]}
			      : total);
	render_table(tab, out, rc);
}

/* ------------------------------------------------------------ classes */

/* NEW's totals less OLD's. */
static void total_deltas(const struct diff_result *res, int64_t *count,
			 int64_t *bytes)
{
	const struct vmheap_totals *to =
	    vmheap_census_totals(res->old_d.census);
	const struct vmheap_totals *tn =
	    vmheap_census_totals(res->new_d.census);

	*count = (int64_t)(tn->objects - to->objects);
	*bytes = (int64_t)(tn->bytes - to->bytes);
}

/* The deltas' % column: a share of OLD's bytes, so that the total row
 * says by how much the heap grew. */
static double old_bytes(const struct diff_result *res)
{
	return (double)vmheap_census_totals(res->old_d.census)->bytes;
}

static const char *delta_row(const struct diff_options *o,
			     const struct diff_result *res, size_t i,
			     char *count, char *bytes, char *share, size_t size)
{
	const struct vmheap_census_delta *d = &res->deltas[i];

	signed_text(count, size, d->count_delta);
	vmheap_report_size_delta(&o->report, bytes, size, d->bytes_delta);
	vmheap_format_share(share, size, (double)d->bytes_delta, old_bytes(res),
			    1);
	return d->name;
}

static void classes_text(const struct diff_options *o, struct diff_result *res,
			 struct vmheap_strbuf *out)
{
	size_t shown = vmheap_report_rows_shown(&o->report, res->ndeltas);
	int64_t count_delta, bytes_delta;
	char cnt[32], bytes[32], share[32], label[96];

	dump_lines(out, o, res);
	diff_suspects_section_text(o, res, out);
	total_deltas(res, &count_delta, &bytes_delta);
	signed_text(cnt, sizeof(cnt), count_delta);
	vmheap_report_size_delta(&o->report, bytes, sizeof(bytes), bytes_delta);
	vmheap_format_share(share, sizeof(share), (double)bytes_delta,
			    old_bytes(res), 1);
	vmheap_report_total_label(label, sizeof(label), "total", res->ndeltas,
				  o->by_site ? "sites changed"
					     : "classes changed",
				  shown);
	count_table(out, o, res, shown, delta_row,
		    (const char *[]){cnt, label, bytes, share},
		    o->by_site ? delta_site : NULL);
}

static void classes_json(const struct diff_options *o, struct diff_result *res,
			 struct vmheap_strbuf *out)
{
	size_t shown = vmheap_report_rows_shown(&o->report, res->ndeltas);
	int64_t count_delta, bytes_delta;

	total_deltas(res, &count_delta, &bytes_delta);
	dumps_json(out, res);
	diff_suspects_section_json(o, res, out);
	vmheap_strbuf_addf(out,
			   ",\"count_delta\":%" PRId64
			   ",\"bytes_delta\":%" PRId64
			   ",\"changed\":%zu,\"classes\":[",
			   count_delta, bytes_delta, res->ndeltas);
	for (size_t i = 0; i < shown; i++) {
		const struct vmheap_census_delta *d = &res->deltas[i];
		json_class(out, i, d->name);
		if (o->by_site) {
			vmheap_strbuf_add(out, ",\"site\":", 8);
			if (d->site)
				vmheap_strbuf_add_json(out, d->site);
			else
				vmheap_strbuf_add(out, "null", 4);
		}
		vmheap_strbuf_addf(
		    out,
		    ",\"count_old\":%" PRIu64 ",\"count_new\":%" PRIu64
		    ",\"count_delta\":%" PRId64 ",\"bytes_old\":%" PRIu64
		    ",\"bytes_new\":%" PRIu64 ",\"bytes_delta\":%" PRId64 "}",
		    d->count_old, d->count_new, d->count_delta, d->bytes_old,
		    d->bytes_new, d->bytes_delta);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

static void classes_csv(const struct diff_options *o, struct diff_result *res,
			struct vmheap_strbuf *out)
{
	size_t shown = vmheap_report_rows_shown(&o->report, res->ndeltas);

	vmheap_strbuf_addf(out,
			   "count_delta,class,%sbytes_delta,count_old,"
			   "count_new,bytes_old,bytes_new\n",
			   o->by_site ? "site," : "");
	for (size_t i = 0; i < shown; i++) {
		const struct vmheap_census_delta *d = &res->deltas[i];
		vmheap_strbuf_addf(out, "%" PRId64 ",", d->count_delta);
		vmheap_strbuf_add_csv(out, d->name);
		if (o->by_site) {
			vmheap_strbuf_add(out, ",", 1);
			vmheap_strbuf_add_csv(out, d->site ? d->site : "");
		}
		vmheap_strbuf_addf(out,
				   ",%" PRId64 ",%" PRIu64 ",%" PRIu64
				   ",%" PRIu64 ",%" PRIu64 "\n",
				   d->bytes_delta, d->count_old, d->count_new,
				   d->bytes_old, d->bytes_new);
	}
}

/* ------------------------------------------------------------ objects */

/* The new objects' % column: a share of NEW's bytes. */
static double new_bytes(const struct diff_result *res)
{
	return (double)vmheap_census_totals(res->new_d.census)->bytes;
}

static const char *new_class_row(const struct diff_options *o,
				 const struct diff_result *res, size_t i,
				 char *count, char *bytes, char *share,
				 size_t size)
{
	const struct vmheap_new_class *c = &res->ident.news[i];

	snprintf(count, size, "%" PRIu64, c->count);
	vmheap_report_size(&o->report, bytes, size, c->bytes);
	vmheap_format_share(share, size, (double)c->bytes, new_bytes(res), 0);
	return c->name;
}

static void objects_text(const struct diff_options *o, struct diff_result *res,
			 struct vmheap_strbuf *out)
{
	size_t shown = vmheap_report_rows_shown(&o->report, res->ident.nnews);
	char cnt[32], bytes[32], share[32], label[96];

	dump_lines(out, o, res);
	vmheap_strbuf_addf(out, "objects in new but not in old (by id and "
				"class):\n");
	snprintf(cnt, sizeof(cnt), "%" PRIu64, res->ident.new_objects);
	vmheap_report_size(&o->report, bytes, sizeof(bytes),
			   res->ident.new_bytes);
	vmheap_format_share(share, sizeof(share), (double)res->ident.new_bytes,
			    new_bytes(res), 0);
	vmheap_report_total_label(label, sizeof(label), "total new",
				  res->ident.nnews, "classes", shown);
	count_table(out, o, res, shown, new_class_row,
		    (const char *[]){cnt, label, bytes, share}, NULL);
}

static void objects_json(const struct diff_options *o, struct diff_result *res,
			 struct vmheap_strbuf *out)
{
	size_t shown = vmheap_report_rows_shown(&o->report, res->ident.nnews);

	dumps_json(out, res);
	vmheap_strbuf_addf(out,
			   ",\"new_objects\":%" PRIu64 ",\"new_bytes\":%" PRIu64
			   ",\"class_count\":%zu,\"classes\":[",
			   res->ident.new_objects, res->ident.new_bytes,
			   res->ident.nnews);
	for (size_t i = 0; i < shown; i++) {
		json_class(out, i, res->ident.news[i].name);
		vmheap_strbuf_addf(
		    out, ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
		    res->ident.news[i].count, res->ident.news[i].bytes);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

static void objects_csv(const struct diff_options *o, struct diff_result *res,
			struct vmheap_strbuf *out)
{
	size_t shown = vmheap_report_rows_shown(&o->report, res->ident.nnews);

	vmheap_strbuf_addf(out, "count,class,bytes\n");
	for (size_t i = 0; i < shown; i++) {
		vmheap_strbuf_addf(out, "%" PRIu64 ",",
				   res->ident.news[i].count);
		vmheap_strbuf_add_csv(out, res->ident.news[i].name);
		vmheap_strbuf_addf(out, ",%" PRIu64 "\n",
				   res->ident.news[i].bytes);
	}
}

/* ---------------------------------------------------------- retainers */

static void retainers_text(const struct diff_options *o,
			   struct diff_result *res, struct vmheap_strbuf *out)
{
	char cnt[32], size[32];

	dump_lines(out, o, res);
	if (!res->ident.nretained)
		vmheap_strbuf_addf(out, "no new objects\n");
	for (size_t k = 0; k < res->ident.nretained; k++) {
		const struct vmheap_retained *r = &res->ident.retained[k];
		vmheap_strbuf_add(out, "\n", 1);
		vmheap_strbuf_add_text(out, r->cls.name);
		vmheap_report_amount(&o->report, size, sizeof(size),
				     r->cls.bytes);
		vmheap_strbuf_addf(out,
				   ": %" PRIu64 " new objects, %s; referenced "
				   "from:\n",
				   r->cls.count, size);
		vmheap_table *tab = vmheap_table_new("rl");
		int rc = tab ? 0 : -1;
		if (!rc)
			rc = vmheap_table_add_row(
			    tab, (const char *[]){"references", "class"});
		for (size_t i = 0; i < r->nretainers && !rc; i++) {
			snprintf(cnt, sizeof(cnt), "%" PRIu64,
				 r->retainers[i].references);
			rc = vmheap_table_add_row(
			    tab, (const char *[]){cnt, r->retainers[i].name});
		}
		if (!rc && !r->nretainers)
			rc = vmheap_table_add_row(
			    tab, (const char *[]){"0", "(none)"});
		render_table(tab, out, rc);
	}
}

static void retainers_json(const struct diff_options *o,
			   struct diff_result *res, struct vmheap_strbuf *out)
{
	(void)o; /* every top class is shown */
	dumps_json(out, res);
	vmheap_strbuf_addf(out,
			   ",\"new_objects\":%" PRIu64 ",\"new_bytes\":%" PRIu64
			   ",\"classes\":[",
			   res->ident.new_objects, res->ident.new_bytes);
	for (size_t k = 0; k < res->ident.nretained; k++) {
		const struct vmheap_retained *r = &res->ident.retained[k];
		json_class(out, k, r->cls.name);
		vmheap_strbuf_addf(out,
				   ",\"new_count\":%" PRIu64
				   ",\"new_bytes\":%" PRIu64 ",\"retainers\":[",
				   r->cls.count, r->cls.bytes);
		for (size_t i = 0; i < r->nretainers; i++) {
			json_class(out, i, r->retainers[i].name);
			vmheap_strbuf_addf(out, ",\"references\":%" PRIu64 "}",
					   r->retainers[i].references);
		}
		vmheap_strbuf_add(out, "]}", 2);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

static void retainers_csv(const struct diff_options *o, struct diff_result *res,
			  struct vmheap_strbuf *out)
{
	(void)o; /* every top class is shown */
	vmheap_strbuf_addf(out,
			   "class,new_count,new_bytes,retainer,references\n");
	for (size_t k = 0; k < res->ident.nretained; k++) {
		const struct vmheap_retained *r = &res->ident.retained[k];
		if (!r->nretainers) {
			vmheap_strbuf_add_csv(out, r->cls.name);
			vmheap_strbuf_addf(
			    out, ",%" PRIu64 ",%" PRIu64 ",(none),0\n",
			    r->cls.count, r->cls.bytes);
		}
		for (size_t i = 0; i < r->nretainers; i++) {
			vmheap_strbuf_add_csv(out, r->cls.name);
			vmheap_strbuf_addf(out, ",%" PRIu64 ",%" PRIu64 ",",
					   r->cls.count, r->cls.bytes);
			vmheap_strbuf_add_csv(out, r->retainers[i].name);
			vmheap_strbuf_addf(out, ",%" PRIu64 "\n",
					   r->retainers[i].references);
		}
	}
}

typedef void (*render_fn)(const struct diff_options *o, struct diff_result *res,
			  struct vmheap_strbuf *out);

/* The renderer of each mode, by output format. */
static const render_fn renderers[][3] = {
    [DIFF_CLASSES] = {[VMHEAP_OUTPUT_TEXT] = classes_text,
		      [VMHEAP_OUTPUT_JSON] = classes_json,
		      [VMHEAP_OUTPUT_CSV] = classes_csv},
    [DIFF_OBJECTS] = {[VMHEAP_OUTPUT_TEXT] = objects_text,
		      [VMHEAP_OUTPUT_JSON] = objects_json,
		      [VMHEAP_OUTPUT_CSV] = objects_csv},
    [DIFF_RETAINERS] = {[VMHEAP_OUTPUT_TEXT] = retainers_text,
			[VMHEAP_OUTPUT_JSON] = retainers_json,
			[VMHEAP_OUTPUT_CSV] = retainers_csv},
    [DIFF_PATHS] = {[VMHEAP_OUTPUT_TEXT] = diff_paths_text,
		    [VMHEAP_OUTPUT_JSON] = diff_paths_json,
		    [VMHEAP_OUTPUT_CSV] = diff_paths_csv},
    [DIFF_SUSPECTS] = {[VMHEAP_OUTPUT_TEXT] = diff_suspects_text,
		       [VMHEAP_OUTPUT_JSON] = diff_suspects_json,
		       [VMHEAP_OUTPUT_CSV] = diff_suspects_csv},
};

void diff_render(const struct diff_options *o, struct diff_result *res,
		 struct vmheap_strbuf *out)
{
	renderers[o->mode][o->report.format](o, res, out);
	/* JSON says it next to the dumps' figures (dumps_json) */
	if (o->report.format != VMHEAP_OUTPUT_JSON && saturated(res))
		vmheap_strbuf_add_saturated(out, o->report.format);
}
