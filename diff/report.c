/*
 * report.c - vmheap-diff's output in text, JSON or CSV for each mode.
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

static size_t shown_rows(const struct diff_options *o, size_t n)
{
	return o->top && o->top < n ? o->top : n;
}

static void dump_line(struct vmheap_strbuf *out, const char *label,
		      const struct diff_dump *d)
{
	const struct vmheap_header *h = vmheap_reader_header(d->reader);
	const struct vmheap_totals *t = vmheap_census_totals(d->census);
	vmheap_strbuf_addf(out,
			   "%s: %s (vm %s %s, pid %" PRIu64 "): %" PRIu64
			   " objects, %" PRIu64 " bytes\n",
			   label, vmheap_reader_name(d->reader), h->vm_name,
			   h->vm_version, h->pid, t->objects, t->bytes);
}

static void dump_json(struct vmheap_strbuf *out, const char *key,
		      const struct diff_dump *d)
{
	const struct vmheap_header *h = vmheap_reader_header(d->reader);
	const struct vmheap_totals *t = vmheap_census_totals(d->census);
	vmheap_strbuf_addf(out, "\"%s\":{\"file\":", key);
	vmheap_strbuf_add_json(out, vmheap_reader_name(d->reader));
	vmheap_strbuf_add(out, ",\"vm\":", 6);
	vmheap_strbuf_add_json(out, h->vm_name);
	vmheap_strbuf_add(out, ",\"vm_version\":", 14);
	vmheap_strbuf_add_json(out, h->vm_version);
	vmheap_strbuf_addf(out,
			   ",\"pid\":%" PRIu64 ",\"time\":%" PRId64
			   ",\"objects\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
			   h->pid, h->time, t->objects, t->bytes);
}

static void render_table(vmheap_table *tab, struct vmheap_strbuf *out, int rc)
{
	if (rc || !tab)
		out->failed = 1;
	else
		vmheap_table_render(tab, out);
	vmheap_table_free(tab);
}

/* ------------------------------------------------------------ classes */

static void classes_text(const struct diff_options *o, struct diff_result *res,
			 struct vmheap_strbuf *out)
{
	const struct vmheap_totals *to =
	    vmheap_census_totals(res->old_d.census);
	const struct vmheap_totals *tn =
	    vmheap_census_totals(res->new_d.census);
	size_t shown = shown_rows(o, res->ndeltas);
	vmheap_table *tab = vmheap_table_new("rlr");
	char cnt[32], bytes[32], label[96];
	int rc = tab ? 0 : -1;

	dump_line(out, "old", &res->old_d);
	dump_line(out, "new", &res->new_d);
	if (!rc)
		rc = vmheap_table_add_row(
		    tab, (const char *[]){"count", "class", "bytes"});
	for (size_t i = 0; i < shown && !rc; i++) {
		signed_text(cnt, sizeof(cnt), res->deltas[i].count_delta);
		signed_text(bytes, sizeof(bytes), res->deltas[i].bytes_delta);
		rc = vmheap_table_add_row(
		    tab, (const char *[]){cnt, res->deltas[i].name, bytes});
	}
	signed_text(cnt, sizeof(cnt), (int64_t)(tn->objects - to->objects));
	signed_text(bytes, sizeof(bytes), (int64_t)(tn->bytes - to->bytes));
	if (shown < res->ndeltas)
		snprintf(label, sizeof(label),
			 "total (%zu classes changed, top %zu shown)",
			 res->ndeltas, shown);
	else
		snprintf(label, sizeof(label), "total (%zu classes changed)",
			 res->ndeltas);
	if (!rc)
		rc = vmheap_table_add_row(tab,
					  (const char *[]){cnt, label, bytes});
	render_table(tab, out, rc);
}

static void classes_json(const struct diff_options *o, struct diff_result *res,
			 struct vmheap_strbuf *out)
{
	const struct vmheap_totals *to =
	    vmheap_census_totals(res->old_d.census);
	const struct vmheap_totals *tn =
	    vmheap_census_totals(res->new_d.census);
	size_t shown = shown_rows(o, res->ndeltas);

	vmheap_strbuf_add(out, "{", 1);
	dump_json(out, "old", &res->old_d);
	vmheap_strbuf_add(out, ",", 1);
	dump_json(out, "new", &res->new_d);
	vmheap_strbuf_addf(out,
			   ",\"count_delta\":%" PRId64
			   ",\"bytes_delta\":%" PRId64
			   ",\"changed\":%zu,\"classes\":[",
			   (int64_t)(tn->objects - to->objects),
			   (int64_t)(tn->bytes - to->bytes), res->ndeltas);
	for (size_t i = 0; i < shown; i++) {
		const struct vmheap_census_delta *d = &res->deltas[i];
		vmheap_strbuf_add(
		    out, i ? ",{\"class\":" : "{\"class\":", i ? 10 : 9);
		vmheap_strbuf_add_json(out, d->name);
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
	size_t shown = shown_rows(o, res->ndeltas);

	vmheap_strbuf_addf(out, "count_delta,class,bytes_delta,count_old,"
				"count_new,bytes_old,bytes_new\n");
	for (size_t i = 0; i < shown; i++) {
		const struct vmheap_census_delta *d = &res->deltas[i];
		vmheap_strbuf_addf(out, "%" PRId64 ",", d->count_delta);
		vmheap_strbuf_add_csv(out, d->name);
		vmheap_strbuf_addf(out,
				   ",%" PRId64 ",%" PRIu64 ",%" PRIu64
				   ",%" PRIu64 ",%" PRIu64 "\n",
				   d->bytes_delta, d->count_old, d->count_new,
				   d->bytes_old, d->bytes_new);
	}
}

/* ------------------------------------------------------------ objects */

static void objects_text(const struct diff_options *o, struct diff_result *res,
			 struct vmheap_strbuf *out)
{
	size_t shown = shown_rows(o, res->nnews);
	vmheap_table *tab = vmheap_table_new("rlr");
	char cnt[32], bytes[32], label[96];
	int rc = tab ? 0 : -1;

	dump_line(out, "old", &res->old_d);
	dump_line(out, "new", &res->new_d);
	vmheap_strbuf_addf(out, "objects in new but not in old (by id and "
				"class):\n");
	if (!rc)
		rc = vmheap_table_add_row(
		    tab, (const char *[]){"count", "class", "bytes"});
	for (size_t i = 0; i < shown && !rc; i++) {
		snprintf(cnt, sizeof(cnt), "%" PRIu64, res->news[i].count);
		snprintf(bytes, sizeof(bytes), "%" PRIu64, res->news[i].bytes);
		rc = vmheap_table_add_row(
		    tab, (const char *[]){cnt, res->news[i].name, bytes});
	}
	snprintf(cnt, sizeof(cnt), "%" PRIu64, res->new_objects);
	snprintf(bytes, sizeof(bytes), "%" PRIu64, res->new_bytes);
	if (shown < res->nnews)
		snprintf(label, sizeof(label),
			 "total new (%zu classes, top %zu shown)", res->nnews,
			 shown);
	else
		snprintf(label, sizeof(label), "total new (%zu classes)",
			 res->nnews);
	if (!rc)
		rc = vmheap_table_add_row(tab,
					  (const char *[]){cnt, label, bytes});
	render_table(tab, out, rc);
}

static void objects_json(const struct diff_options *o, struct diff_result *res,
			 struct vmheap_strbuf *out)
{
	size_t shown = shown_rows(o, res->nnews);

	vmheap_strbuf_add(out, "{", 1);
	dump_json(out, "old", &res->old_d);
	vmheap_strbuf_add(out, ",", 1);
	dump_json(out, "new", &res->new_d);
	vmheap_strbuf_addf(out,
			   ",\"new_objects\":%" PRIu64 ",\"new_bytes\":%" PRIu64
			   ",\"class_count\":%zu,\"classes\":[",
			   res->new_objects, res->new_bytes, res->nnews);
	for (size_t i = 0; i < shown; i++) {
		vmheap_strbuf_add(
		    out, i ? ",{\"class\":" : "{\"class\":", i ? 10 : 9);
		vmheap_strbuf_add_json(out, res->news[i].name);
		vmheap_strbuf_addf(
		    out, ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
		    res->news[i].count, res->news[i].bytes);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

static void objects_csv(const struct diff_options *o, struct diff_result *res,
			struct vmheap_strbuf *out)
{
	size_t shown = shown_rows(o, res->nnews);

	vmheap_strbuf_addf(out, "count,class,bytes\n");
	for (size_t i = 0; i < shown; i++) {
		vmheap_strbuf_addf(out, "%" PRIu64 ",", res->news[i].count);
		vmheap_strbuf_add_csv(out, res->news[i].name);
		vmheap_strbuf_addf(out, ",%" PRIu64 "\n", res->news[i].bytes);
	}
}

/* ---------------------------------------------------------- retainers */

static void retainers_text(struct diff_result *res, struct vmheap_strbuf *out)
{
	char cnt[32];

	dump_line(out, "old", &res->old_d);
	dump_line(out, "new", &res->new_d);
	if (!res->nretained)
		vmheap_strbuf_addf(out, "no new objects\n");
	for (size_t k = 0; k < res->nretained; k++) {
		const struct diff_retained *r = &res->retained[k];
		vmheap_strbuf_addf(out,
				   "\n%s: %" PRIu64 " new objects, %" PRIu64
				   " bytes; referenced from:\n",
				   r->cls.name, r->cls.count, r->cls.bytes);
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

static void retainers_json(struct diff_result *res, struct vmheap_strbuf *out)
{
	vmheap_strbuf_add(out, "{", 1);
	dump_json(out, "old", &res->old_d);
	vmheap_strbuf_add(out, ",", 1);
	dump_json(out, "new", &res->new_d);
	vmheap_strbuf_addf(out,
			   ",\"new_objects\":%" PRIu64 ",\"new_bytes\":%" PRIu64
			   ",\"classes\":[",
			   res->new_objects, res->new_bytes);
	for (size_t k = 0; k < res->nretained; k++) {
		const struct diff_retained *r = &res->retained[k];
		vmheap_strbuf_add(
		    out, k ? ",{\"class\":" : "{\"class\":", k ? 10 : 9);
		vmheap_strbuf_add_json(out, r->cls.name);
		vmheap_strbuf_addf(out,
				   ",\"new_count\":%" PRIu64
				   ",\"new_bytes\":%" PRIu64 ",\"retainers\":[",
				   r->cls.count, r->cls.bytes);
		for (size_t i = 0; i < r->nretainers; i++) {
			vmheap_strbuf_add(
			    out,
			    i ? ",{\"class\":" : "{\"class\":", i ? 10 : 9);
			vmheap_strbuf_add_json(out, r->retainers[i].name);
			vmheap_strbuf_addf(out, ",\"references\":%" PRIu64 "}",
					   r->retainers[i].references);
		}
		vmheap_strbuf_add(out, "]}", 2);
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

static void retainers_csv(struct diff_result *res, struct vmheap_strbuf *out)
{
	vmheap_strbuf_addf(out,
			   "class,new_count,new_bytes,retainer,references\n");
	for (size_t k = 0; k < res->nretained; k++) {
		const struct diff_retained *r = &res->retained[k];
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

void diff_render(const struct diff_options *o, struct diff_result *res,
		 struct vmheap_strbuf *out)
{
	switch (o->mode) {
	case DIFF_CLASSES:
		if (o->format == VMHEAP_OUTPUT_JSON)
			classes_json(o, res, out);
		else if (o->format == VMHEAP_OUTPUT_CSV)
			classes_csv(o, res, out);
		else
			classes_text(o, res, out);
		break;
	case DIFF_OBJECTS:
		if (o->format == VMHEAP_OUTPUT_JSON)
			objects_json(o, res, out);
		else if (o->format == VMHEAP_OUTPUT_CSV)
			objects_csv(o, res, out);
		else
			objects_text(o, res, out);
		break;
	case DIFF_RETAINERS:
		if (o->format == VMHEAP_OUTPUT_JSON)
			retainers_json(res, out);
		else if (o->format == VMHEAP_OUTPUT_CSV)
			retainers_csv(res, out);
		else
			retainers_text(res, out);
		break;
	}
}
