/*
 * native_leaks.c - a native section's leak classification by call site
 * (vmheap-histo --native --leaks): rows grouped as the native rows are,
 * leaked first, in text, CSV or JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_report.h"

/* The classes in the order of their columns and JSON keys. */
static const char *const class_names[4] = {"leaked", "indirect", "possible",
					   "reachable"};

static const uint64_t *fields(const struct vmheap_dump_leaks *l)
{
	return &l->leaked_count; /* count, bytes, count, bytes... */
}

static void add(struct vmheap_dump_leaks *to,
		const struct vmheap_dump_leaks *l)
{
	uint64_t *t = &to->leaked_count;
	const uint64_t *f = fields(l);
	for (int i = 0; i < 8; i++)
		t[i] = t[i] + f[i] < t[i] ? UINT64_MAX : t[i] + f[i];
}

static int by_site(const void *x, const void *y)
{
	return strcmp(((const struct vmheap_native_leak_row *)x)->site,
		      ((const struct vmheap_native_leak_row *)y)->site);
}

static int leaked_first(const void *x, const void *y)
{
	const struct vmheap_native_leak_row *a = x, *b = y;
	const uint64_t *fa = fields(&a->l), *fb = fields(&b->l);

	for (int i = 1; i < 8; i += 2) /* the bytes, class by class */
		if (fa[i] != fb[i])
			return fa[i] < fb[i] ? 1 : -1;
	if (fa[0] != fb[0])
		return fa[0] < fb[0] ? 1 : -1;
	return strcmp(a->site, b->site);
}

int vmheap_native_leak_rows(const struct vmheap_native *n,
			    vmheap_symbolizer *sym, size_t frames,
			    struct vmheap_native_leak_row **rows, size_t *nrows)
{
	struct vmheap_native_leak_row *v;
	size_t k = 0;

	*rows = NULL;
	*nrows = 0;
	if (!n->leaks)
		return 0;
	v = calloc(n->nstacks ? n->nstacks : 1, sizeof(*v));
	if (!v)
		return VMHEAP_ENOMEM;
	for (size_t i = 0; i < n->nstacks; i++) {
		if (vmheap_native_is_own(&n->stacks[i]))
			continue;
		v[k].site = vmheap_native_stack_name(n, sym, i, frames);
		if (!v[k].site) {
			vmheap_native_leak_rows_free(v, k);
			return VMHEAP_ENOMEM;
		}
		v[k].l = n->leaks->stacks[i];
		k++;
	}
	qsort(v, k, sizeof(*v), by_site);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && !strcmp(v[m - 1].site, v[i].site)) {
			add(&v[m - 1].l, &v[i].l);
			free(v[i].site);
			continue;
		}
		v[m++] = v[i];
	}
	qsort(v, m, sizeof(*v), leaked_first);
	*rows = v;
	*nrows = m;
	return 0;
}

void vmheap_native_leak_rows_free(struct vmheap_native_leak_row *rows,
				  size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i].site);
	free(rows);
}

static void json_counts(struct vmheap_strbuf *sb,
			const struct vmheap_dump_leaks *l)
{
	const uint64_t *f = fields(l);
	for (int c = 0; c < 4; c++)
		vmheap_strbuf_addf(sb, "%s\"%s_count\": %llu, \"%s_bytes\": %llu",
				   c ? ", " : "", class_names[c],
				   (unsigned long long)f[2 * c], class_names[c],
				   (unsigned long long)f[2 * c + 1]);
}

void vmheap_native_leak_render(struct vmheap_strbuf *sb,
			       const struct vmheap_native_leak_row *rows,
			       size_t n, size_t shown,
			       const struct vmheap_report_options *o)
{
	struct vmheap_dump_leaks total;
	memset(&total, 0, sizeof(total));
	for (size_t i = 0; i < n; i++)
		add(&total, &rows[i].l);

	if (o->format == VMHEAP_OUTPUT_JSON) {
		vmheap_strbuf_addf(sb, "\"sites\": [");
		for (size_t i = 0; i < shown; i++) {
			vmheap_strbuf_addf(sb, "%s{", i ? ", " : "");
			json_counts(sb, &rows[i].l);
			vmheap_strbuf_addf(sb, ", \"site\": ");
			vmheap_strbuf_add_json(sb, rows[i].site);
			vmheap_strbuf_add(sb, "}", 1);
		}
		vmheap_strbuf_addf(sb, "], \"total\": {\"sites\": %zu, ", n);
		json_counts(sb, &total);
		vmheap_strbuf_add(sb, "}", 1);
		return;
	}
	if (o->format == VMHEAP_OUTPUT_CSV) {
		for (int c = 0; c < 4; c++)
			vmheap_strbuf_addf(sb, "%s_count,%s_bytes,",
					   class_names[c], class_names[c]);
		vmheap_strbuf_addf(sb, "site\n");
		for (size_t i = 0; i < shown; i++) {
			const uint64_t *f = fields(&rows[i].l);
			for (int e = 0; e < 8; e++)
				vmheap_strbuf_addf(sb, "%llu,",
						   (unsigned long long)f[e]);
			vmheap_strbuf_add_csv(sb, rows[i].site);
			vmheap_strbuf_add(sb, "\n", 1);
		}
		return;
	}
	vmheap_table *t = vmheap_table_new("rrrrrrrrl");
	if (!t) {
		sb->failed = 1;
		return;
	}
	const char *head[] = {"leaked",	  "bytes",	"indirect",
			      "bytes",	  "possible",	"bytes",
			      "reachable", "bytes",	"site"};
	vmheap_table_add_row(t, head);
	char cells[8][32], label[128];
	for (size_t i = 0; i <= shown; i++) {
		const struct vmheap_dump_leaks *l = i < shown ? &rows[i].l
							      : &total;
		const uint64_t *f = fields(l);
		for (int e = 0; e < 8; e += 2) {
			snprintf(cells[e], sizeof(cells[e]), "%llu",
				 (unsigned long long)f[e]);
			vmheap_report_size(o, cells[e + 1], sizeof(cells[e + 1]),
					   f[e + 1]);
		}
		if (i == shown)
			vmheap_report_total_label(label, sizeof(label), "total",
						  n, "sites", shown);
		const char *row[] = {cells[0], cells[1], cells[2],
				     cells[3], cells[4], cells[5],
				     cells[6], cells[7],
				     i < shown ? rows[i].site : label};
		vmheap_table_add_row(t, row);
	}
	vmheap_table_render(t, sb);
	vmheap_table_free(t);
}
