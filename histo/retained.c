/*
 * retained.c - vmheap-histo --retained: the per-class histogram read from
 * the heap graph, with each class's retained bytes: the sum of the
 * retained sizes of its instances that no other instance of the class
 * dominates (vmheap_graph_group_retained; classes are grouped by the name
 * the histogram prints, so class ids sharing a name are one class).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histo-internal.h"
#include "vmheap_graph_query.h"

struct rrow {
	char *name;
	uint64_t count, bytes, retained;
};

struct rtable {
	vmheap_reader *reader;
	vmheap_graph *g;
	struct rrow *rows; /* one per class name, then only those with
			      objects */
	size_t nrows;
	uint64_t unreachable, unreachable_bytes;
	int saturated; /* a sum of sizes is held at UINT64_MAX */
};

/* One row per class name; group[k] is the row of class k. */
static int group_classes(struct rtable *t, uint32_t *group)
{
	char **names;
	size_t n;

	if (vmheap_graph_label_groups(t->g, group, &names, &n) < 0)
		return VMHEAP_ENOMEM;
	t->rows = calloc(n ? n : 1, sizeof(*t->rows));
	for (size_t x = 0; x < n; x++) {
		if (t->rows)
			t->rows[x].name = names[x];
		else
			free(names[x]);
	}
	free(names);
	if (!t->rows)
		return VMHEAP_ENOMEM;
	t->nrows = n;
	return 0;
}

static int compute(struct rtable *t)
{
	size_t n = vmheap_graph_class_count(t->g);
	uint32_t *group = malloc((n ? n : 1) * sizeof(*group));
	uint64_t *retained = NULL;
	size_t kept = 0;
	int rc;

	if (!group || (rc = group_classes(t, group)) < 0) {
		free(group);
		return VMHEAP_ENOMEM;
	}
	for (uint32_t i = 0; i < vmheap_graph_object_count(t->g); i++) {
		struct rrow *r =
		    &t->rows[group[vmheap_graph_object_class_index(t->g, i)]];
		uint64_t b = vmheap_graph_object_bytes(t->g, i);

		r->count++;
		r->bytes += b;
		if (r->bytes < b) { /* held, as the graph's sums are */
			r->bytes = UINT64_MAX;
			t->saturated = 1;
		}
	}
	retained = malloc((t->nrows ? t->nrows : 1) * sizeof(*retained));
	rc = retained ? vmheap_graph_group_retained(t->g, group, t->nrows,
						    retained)
		      : VMHEAP_ENOMEM;
	if (rc == 0) {
		vmheap_graph_unreachable(t->g, &t->unreachable,
					 &t->unreachable_bytes);
		t->saturated |= vmheap_graph_saturated(t->g);
		for (size_t x = 0; x < t->nrows; x++) {
			t->rows[x].retained = retained[x];
			if (t->rows[x].count)
				t->rows[kept++] = t->rows[x];
			else
				free(t->rows[x].name);
		}
		t->nrows = kept;
	}
	free(group);
	free(retained);
	return rc;
}

static enum vmheap_sort sort_key;
static int compare_rows(const void *a, const void *b)
{
	const struct rrow *x = a, *y = b;
	uint64_t p, q;

	switch (sort_key) {
	case VMHEAP_SORT_COUNT:
		p = x->count, q = y->count;
		break;
	case VMHEAP_SORT_BYTES:
		p = x->bytes, q = y->bytes;
		break;
	default: /* by name alone */
		return strcmp(x->name, y->name);
	}
	if (p != q)
		return p > q ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int compare_retained(const void *a, const void *b)
{
	const struct rrow *x = a, *y = b;

	if (x->retained != y->retained)
		return x->retained > y->retained ? -1 : 1;
	return strcmp(x->name, y->name);
}

static double share(const struct rtable *t, uint64_t bytes)
{
	uint64_t total = vmheap_graph_total_bytes(t->g);

	return total ? 100.0 * (double)bytes / (double)total : 0.0;
}

static void render_text(const struct rtable *t,
			const struct vmheap_report_options *o, size_t shown,
			struct vmheap_strbuf *out)
{
	vmheap_table *tab = vmheap_table_new("rlrrr");
	double total = (double)vmheap_graph_total_bytes(t->g);
	char cnt[32], bytes[32], ret[32], pct[16], label[96], lost[64];
	int rc;

	if (!tab) {
		out->failed = 1;
		return;
	}
	vmheap_strbuf_add(out, "dump: ", 6);
	vmheap_strbuf_add_dump_origin(out, t->reader);
	vmheap_strbuf_add(out, "\n", 1);
	rc = vmheap_table_add_row(tab, (const char *[]){"count", "class",
							"bytes", "retained",
							"%"});
	for (size_t k = 0; k < shown && !rc; k++) {
		const struct rrow *r = &t->rows[k];
		snprintf(cnt, sizeof(cnt), "%" PRIu64, r->count);
		vmheap_report_size(o, bytes, sizeof(bytes), r->bytes);
		vmheap_report_size(o, ret, sizeof(ret), r->retained);
		vmheap_format_share(pct, sizeof(pct), (double)r->retained,
				    total, 0);
		rc = vmheap_table_add_row(
		    tab, (const char *[]){cnt, r->name, bytes, ret, pct});
	}
	snprintf(cnt, sizeof(cnt), "%" PRIu32,
		 vmheap_graph_object_count(t->g));
	vmheap_report_size(o, bytes, sizeof(bytes),
			   vmheap_graph_total_bytes(t->g));
	vmheap_report_total_label(label, sizeof(label), "total", t->nrows,
				  "classes", shown);
	if (!rc)
		rc = vmheap_table_add_row(
		    tab, (const char *[]){cnt, label, bytes, "", ""});
	if (rc)
		out->failed = 1;
	else
		vmheap_table_render(tab, out);
	vmheap_table_free(tab);
	vmheap_report_bytes(o, lost, sizeof(lost), t->unreachable_bytes);
	vmheap_strbuf_addf(out,
			   "unreachable from the roots (in no retained size): "
			   "%" PRIu64 " objects, %s\n",
			   t->unreachable, lost);
	if (t->saturated)
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_TEXT);
}

static void render_json(const struct rtable *t, size_t shown,
			struct vmheap_strbuf *out)
{
	struct vmheap_totals tot = {0};

	tot.objects = vmheap_graph_object_count(t->g);
	tot.bytes = vmheap_graph_total_bytes(t->g);
	vmheap_strbuf_add(out, "{", 1);
	vmheap_strbuf_add_dump_json(out, t->reader, &tot);
	if (t->saturated)
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_JSON);
	vmheap_strbuf_addf(out,
			   ",\"unreachable\":%" PRIu64
			   ",\"unreachable_bytes\":%" PRIu64
			   ",\"class_count\":%zu,\"classes\":[",
			   t->unreachable, t->unreachable_bytes, t->nrows);
	for (size_t k = 0; k < shown; k++) {
		const struct rrow *r = &t->rows[k];
		vmheap_strbuf_addf(out, "%s{\"class\":", k ? "," : "");
		vmheap_strbuf_add_json(out, r->name);
		vmheap_strbuf_addf(out,
				   ",\"count\":%" PRIu64 ",\"bytes\":%" PRIu64
				   ",\"retained_bytes\":%" PRIu64
				   ",\"retained_percent\":%.4f}",
				   r->count, r->bytes, r->retained,
				   share(t, r->retained));
	}
	vmheap_strbuf_add(out, "]}\n", 3);
}

static void render_csv(const struct rtable *t, size_t shown,
		       struct vmheap_strbuf *out)
{
	vmheap_strbuf_addf(out,
			   "count,class,bytes,retained_bytes,retained_percent\n");
	for (size_t k = 0; k < shown; k++) {
		const struct rrow *r = &t->rows[k];
		vmheap_strbuf_addf(out, "%" PRIu64 ",", r->count);
		vmheap_strbuf_add_csv(out, r->name);
		vmheap_strbuf_addf(out, ",%" PRIu64 ",%" PRIu64 ",%.4f\n",
				   r->bytes, r->retained,
				   share(t, r->retained));
	}
	if (t->saturated)
		vmheap_strbuf_add_saturated(out, VMHEAP_OUTPUT_CSV);
}

int histo_run_retained(const struct histo_options *o,
		       struct vmheap_strbuf *out, char *err, size_t errsz)
{
	struct rtable t = {0};
	int rc = vmheap_graph_load(o->path, &t.reader, &t.g, err, errsz);

	if (rc < 0)
		return rc;
	if ((rc = compute(&t)) < 0) {
		snprintf(err, errsz, "%s", *vmheap_graph_error(t.g)
					       ? vmheap_graph_error(t.g)
					       : "out of memory");
	} else {
		size_t shown = vmheap_report_rows_shown(&o->report, t.nrows);
		sort_key = o->report.sort;
		qsort(t.rows, t.nrows, sizeof(*t.rows),
		      o->sort_given ? compare_rows : compare_retained);
		if (o->report.format == VMHEAP_OUTPUT_JSON)
			render_json(&t, shown, out);
		else if (o->report.format == VMHEAP_OUTPUT_CSV)
			render_csv(&t, shown, out);
		else
			render_text(&t, &o->report, shown, out);
		if (out->failed) {
			snprintf(err, errsz, "out of memory for the report");
			rc = VMHEAP_ENOMEM;
		}
	}
	for (size_t k = 0; k < t.nrows; k++)
		free(t.rows[k].name);
	free(t.rows);
	vmheap_graph_free(t.g);
	vmheap_reader_free(t.reader);
	return rc;
}
