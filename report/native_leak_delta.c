/*
 * native_leak_delta.c - the leak classification of two dumps' native
 * sections side by side (vmheap-diff --native --leaks): each site's eight
 * figures in NEW and their growth since OLD, leaked first, in text, CSV
 * or JSON.  Sites are matched by their names, as vmheap_native_leak_rows
 * groups them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_report.h"

/* The keys of the eight figures, in the order of struct vmheap_dump_leaks. */
static const char *const keys[8] = {
    "leaked_count",   "leaked_bytes",	"indirect_count",  "indirect_bytes",
    "possible_count", "possible_bytes", "reachable_count", "reachable_bytes"};

static const uint64_t *fields(const struct vmheap_dump_leaks *l)
{
	return &l->leaked_count;
}

static int64_t minus(uint64_t a, uint64_t b)
{
	return a >= b ? (int64_t)(a - b) : -(int64_t)(b - a);
}

/* Leaked first: the growth of leaked bytes, then the leaked bytes in NEW,
 * then the growth of indirect, possible and reachable bytes, then site. */
static int leaked_growth_first(const void *x, const void *y)
{
	const struct vmheap_native_leak_delta_row *a = x, *b = y;
	if (a->growth[1] != b->growth[1])
		return a->growth[1] < b->growth[1] ? 1 : -1;
	if (a->l.leaked_bytes != b->l.leaked_bytes)
		return a->l.leaked_bytes < b->l.leaked_bytes ? 1 : -1;
	for (int i = 3; i < 8; i += 2)
		if (a->growth[i] != b->growth[i])
			return a->growth[i] < b->growth[i] ? 1 : -1;
	return strcmp(a->site, b->site);
}

static int by_site(const void *x, const void *y)
{
	return strcmp(((const struct vmheap_native_leak_row *)x)->site,
		      ((const struct vmheap_native_leak_row *)y)->site);
}

static int sorted_copy(const struct vmheap_native_leak_row *v, size_t n,
		       struct vmheap_native_leak_row **out)
{
	*out = malloc((n ? n : 1) * sizeof(**out));
	if (!*out)
		return VMHEAP_ENOMEM;
	if (n)
		memcpy(*out, v, n * sizeof(*v));
	qsort(*out, n, sizeof(**out), by_site);
	return 0;
}

int vmheap_native_leak_delta(const struct vmheap_native_leak_row *old,
			     size_t no,
			     const struct vmheap_native_leak_row *new,
			     size_t nn,
			     struct vmheap_native_leak_delta_row **rows,
			     size_t *nrows)
{
	struct vmheap_native_leak_row *a = NULL, *b = NULL;
	struct vmheap_native_leak_delta_row *v = NULL;
	size_t i = 0, j = 0, k = 0;
	int rc = VMHEAP_ENOMEM;

	*rows = NULL;
	*nrows = 0;
	if (sorted_copy(old, no, &a) || sorted_copy(new, nn, &b) ||
	    !(v = calloc(no + nn ? no + nn : 1, sizeof(*v))))
		goto out;
	while (i < no || j < nn) {
		int c = i == no	  ? 1
			: j == nn ? -1
				  : strcmp(a[i].site, b[j].site);
		const struct vmheap_dump_leaks *ol = c <= 0 ? &a[i].l : NULL;
		const struct vmheap_dump_leaks *nl = c >= 0 ? &b[j].l : NULL;
		const char *site = c <= 0 ? a[i].site : b[j].site;
		struct vmheap_native_leak_delta_row *r = &v[k];
		int any = 0;

		if (nl)
			r->l = *nl;
		for (int f = 0; f < 8; f++) {
			uint64_t was = ol ? fields(ol)[f] : 0;
			r->growth[f] = minus(fields(&r->l)[f], was);
			any |= r->growth[f] != 0 || fields(&r->l)[f] != 0;
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
		if (!any)
			continue;
		if (!(r->site = strdup(site))) {
			vmheap_native_leak_delta_free(v, k);
			v = NULL;
			goto out;
		}
		k++;
	}
	qsort(v, k, sizeof(*v), leaked_growth_first);
	*rows = v;
	*nrows = k;
	v = NULL;
	rc = 0;
out:
	free(v);
	free(a);
	free(b);
	return rc;
}

void vmheap_native_leak_delta_free(struct vmheap_native_leak_delta_row *rows,
				   size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i].site);
	free(rows);
}

static void json_row(struct vmheap_strbuf *sb, const uint64_t *f,
		     const int64_t *g)
{
	for (int e = 0; e < 8; e++)
		vmheap_strbuf_addf(sb, "%s\"%s\": %llu, \"%s_delta\": %lld",
				   e ? ", " : "", keys[e],
				   (unsigned long long)f[e], keys[e],
				   (long long)g[e]);
}

void vmheap_native_leak_delta_render(
    struct vmheap_strbuf *sb, const struct vmheap_native_leak_delta_row *rows,
    size_t n, size_t shown, const struct vmheap_report_options *o)
{
	uint64_t total[8] = {0};
	int64_t growth[8] = {0};
	for (size_t i = 0; i < n; i++)
		for (int e = 0; e < 8; e++) {
			total[e] += fields(&rows[i].l)[e];
			growth[e] += rows[i].growth[e];
		}

	if (o->format == VMHEAP_OUTPUT_JSON) {
		vmheap_strbuf_addf(sb, "\"sites\": [");
		for (size_t i = 0; i < shown; i++) {
			vmheap_strbuf_addf(sb, "%s{", i ? ", " : "");
			json_row(sb, fields(&rows[i].l), rows[i].growth);
			vmheap_strbuf_addf(sb, ", \"site\": ");
			vmheap_strbuf_add_json(sb, rows[i].site);
			vmheap_strbuf_add(sb, "}", 1);
		}
		vmheap_strbuf_addf(sb, "], \"total\": {\"sites\": %zu, ", n);
		json_row(sb, total, growth);
		vmheap_strbuf_add(sb, "}", 1);
		return;
	}
	if (o->format == VMHEAP_OUTPUT_CSV) {
		for (int e = 0; e < 8; e++)
			vmheap_strbuf_addf(sb, "%s,%s_delta,", keys[e],
					   keys[e]);
		vmheap_strbuf_addf(sb, "site\n");
		for (size_t i = 0; i < shown; i++) {
			const uint64_t *f = fields(&rows[i].l);
			for (int e = 0; e < 8; e++)
				vmheap_strbuf_addf(
				    sb, "%llu,%lld,", (unsigned long long)f[e],
				    (long long)rows[i].growth[e]);
			vmheap_strbuf_add_csv(sb, rows[i].site);
			vmheap_strbuf_add(sb, "\n", 1);
		}
		return;
	}
	/* text: each figure in NEW with its growth after it */
	vmheap_table *t = vmheap_table_new("rrrrrrrrrrrrrrrrl");
	if (!t) {
		sb->failed = 1;
		return;
	}
	const char *head[] = {
	    "leaked",	 "+/-", "bytes",    "+/-", "indirect", "+/-",
	    "bytes",	 "+/-", "possible", "+/-", "bytes",    "+/-",
	    "reachable", "+/-", "bytes",    "+/-", "site"};
	vmheap_table_add_row(t, head);
	char cells[16][32], label[128];
	for (size_t i = 0; i <= shown; i++) {
		const uint64_t *f = i < shown ? fields(&rows[i].l) : total;
		const int64_t *g = i < shown ? rows[i].growth : growth;
		for (int e = 0; e < 8; e += 2) {
			snprintf(cells[2 * e], sizeof(cells[0]), "%llu",
				 (unsigned long long)f[e]);
			snprintf(cells[2 * e + 1], sizeof(cells[0]), "%+lld",
				 (long long)g[e]);
			vmheap_report_size(o, cells[2 * e + 2],
					   sizeof(cells[0]), f[e + 1]);
			vmheap_report_size_delta(o, cells[2 * e + 3],
						 sizeof(cells[0]), g[e + 1]);
		}
		if (i == shown)
			vmheap_report_total_label(label, sizeof(label), "total",
						  n, "sites", shown);
		const char *row[17];
		for (int c = 0; c < 16; c++)
			row[c] = cells[c];
		row[16] = i < shown ? rows[i].site : label;
		vmheap_table_add_row(t, row);
	}
	vmheap_table_render(t, sb);
	vmheap_table_free(t);
}
