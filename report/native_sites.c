/*
 * native_sites.c - the native section for people, shared by vmheap-histo
 * --native and vmheap-diff --native: reading a dump to its native
 * section, its sites grouped by their symbolized innermost frames, and
 * the table of such rows (text, JSON or CSV).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_report.h"

/* Decode block `blk` into the sums *t (the records' checks too); 0 or
 * the cursor's error in err. */
static int count_block(vmheap_block_cursor *c, const struct vmheap_block *blk,
		       vmheap_reader *r, struct vmheap_totals *t, char *err,
		       size_t errsz)
{
	struct vmheap_record recs[64];
	int n;

	vmheap_block_cursor_reset(c, blk);
	while ((n = vmheap_block_cursor_next_shallow_batch(c, recs, 64)) > 0)
		for (int i = 0; i < n; i++)
			vmheap_totals_add_record(t, &recs[i]);
	if (n < 0)
		snprintf(err, errsz, "%s: %s", vmheap_reader_name(r),
			 vmheap_block_cursor_error(c));
	return n;
}

/* The footer's totals against the records' (FORMAT.md section 5, check
 * 6), as every other mode of the tools checks them. */
static int check_totals(vmheap_reader *r, const struct vmheap_totals *t,
			char *err, size_t errsz)
{
	static const char *const names[] = {"objects", "bytes of objects",
					    "classes", "roots",
					    "references", "strings", "sites"};
	const struct vmheap_totals *f = vmheap_reader_totals(r);
	const uint64_t fv[] = {f->objects,    f->bytes,	  f->classes,
			       f->roots,      f->references, f->strings,
			       f->sites},
		       tv[] = {t->objects,    t->bytes,	  t->classes,
			       t->roots,      t->references, t->strings,
			       t->sites};

	for (size_t i = 0; i < sizeof(fv) / sizeof(fv[0]); i++)
		if (fv[i] != tv[i]) {
			snprintf(err, errsz,
				 "%s: footer totals disagree with the records: "
				 "the footer says %llu %s, the blocks hold %llu "
				 "(footer at byte offset %llu)",
				 vmheap_reader_name(r),
				 (unsigned long long)fv[i], names[i],
				 (unsigned long long)tv[i],
				 (unsigned long long)
				     vmheap_reader_footer_offset(r));
			return VMHEAP_ETOTALS;
		}
	return 0;
}

int vmheap_native_load(const char *arg, vmheap_reader **r,
		       struct vmheap_native **out, char *err, size_t errsz)
{
	struct vmheap_block blk;
	vmheap_block_cursor *cur = NULL;
	struct vmheap_totals t = {0};
	uint64_t size;
	int regular, rc, own_message = 0;

	*out = NULL;
	rc = vmheap_dump_open(r, arg, &size, &regular, err, errsz);
	if (rc < 0)
		return rc;
	while ((rc = vmheap_reader_next_block(*r, &blk)) == 1) {
		if (!cur && (rc = vmheap_block_cursor_open(&cur, &blk)) < 0) {
			snprintf(err, errsz, "%s",
				 vmheap_block_cursor_error(cur));
			own_message = 1;
			break;
		}
		rc = count_block(cur, &blk, *r, &t, err, errsz);
		if (rc < 0) {
			own_message = 1;
			break;
		}
	}
	vmheap_block_cursor_free(cur);
	if (rc == 0) {
		rc = check_totals(*r, &t, err, errsz);
		own_message = rc < 0;
	}
	if (rc == 0)
		rc = vmheap_reader_native(*r, out);
	if (rc < 0 && !own_message && vmheap_reader_error(*r)[0])
		snprintf(err, errsz, "%s", vmheap_reader_error(*r));
	if (rc == 0 && !*out) {
		snprintf(err, errsz,
			 "%s has no native section: the VM was not tracking "
			 "malloc when it was dumped (start it with vmheap-run "
			 "and `set config.native.track true` in "
			 "vmheap-console before the dump)",
			 arg);
		return 0;
	}
	return rc;
}

int vmheap_native_is_own(const struct vmheap_dump_stack *s)
{
	return s->vm_file && s->vm_line == 0 &&
	       s->vm_file_len == sizeof(VMHEAP_NATIVE_OWN) - 1 &&
	       !memcmp(s->vm_file, VMHEAP_NATIVE_OWN, s->vm_file_len);
}

void vmheap_native_own(const struct vmheap_native *n, uint64_t *bytes,
		       uint64_t *count)
{
	*bytes = *count = 0;
	for (size_t i = 0; i < n->nstacks; i++)
		if (vmheap_native_is_own(&n->stacks[i])) {
			*bytes += n->stacks[i].live_bytes;
			*count += n->stacks[i].live_count;
		}
}

char *vmheap_native_stack_name(const struct vmheap_native *n,
			       vmheap_symbolizer *sym, size_t i, size_t frames)
{
	const struct vmheap_dump_stack *s = &n->stacks[i];
	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;
	char f[1024];

	for (size_t d = 0; d < s->depth && d < frames; d++) {
		vmheap_symbolize(sym, n, &s->frames[d], f, sizeof(f));
		if (d)
			vmheap_strbuf_add(&sb, " < ", 3);
		vmheap_strbuf_add(&sb, f, strlen(f));
	}
	if (s->vm_file && s->vm_line == 0) /* a label: <ruby: gc> */
		vmheap_strbuf_addf(&sb, "%s%.*s", sb.len ? " < " : "",
				   (int)s->vm_file_len, s->vm_file);
	else if (s->vm_file) /* the VM's line, outermost */
		vmheap_strbuf_addf(&sb, "%s%.*s:%llu", sb.len ? " < " : "",
				   (int)s->vm_file_len, s->vm_file,
				   (unsigned long long)s->vm_line);
	if (sb.failed) {
		vmheap_strbuf_release(&sb);
		return NULL;
	}
	return sb.len ? sb.buf : strdup("");
}

static int by_site(const void *x, const void *y)
{
	return strcmp(((const struct vmheap_native_row *)x)->site,
		      ((const struct vmheap_native_row *)y)->site);
}

int vmheap_native_rows(const struct vmheap_native *n, vmheap_symbolizer *sym,
		       size_t frames, struct vmheap_native_row **rows,
		       size_t *nrows)
{
	struct vmheap_native_row *v =
	    calloc(n->nstacks ? n->nstacks : 1, sizeof(*v));
	size_t k = 0;

	*rows = NULL;
	*nrows = 0;
	if (!v)
		return VMHEAP_ENOMEM;
	for (size_t i = 0; i < n->nstacks; i++) {
		const struct vmheap_dump_stack *s = &n->stacks[i];

		if (vmheap_native_is_own(s))
			continue; /* vmheap_native_own counts it */
		v[k].site = vmheap_native_stack_name(n, sym, i, frames);
		if (!v[k].site)
			goto nomem;
		v[k].count = (int64_t)s->live_count;
		v[k].bytes = (int64_t)s->live_bytes;
		k++;
	}
	/* Sites that name the same frames are one row. */
	qsort(v, k, sizeof(*v), by_site);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && !strcmp(v[m - 1].site, v[i].site)) {
			v[m - 1].count += v[i].count;
			v[m - 1].bytes += v[i].bytes;
			free(v[i].site);
			continue;
		}
		v[m++] = v[i];
	}
	*rows = v;
	*nrows = m;
	return 0;
nomem:
	vmheap_native_rows_free(v, k);
	return VMHEAP_ENOMEM;
}

void vmheap_native_rows_free(struct vmheap_native_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i].site);
	free(rows);
}

/* new minus old, row by row (both sorted by site); unchanged rows go. */
int vmheap_native_rows_delta(const struct vmheap_native_row *o, size_t no,
			     const struct vmheap_native_row *n, size_t nn,
			     struct vmheap_native_row **out, size_t *nout)
{
	struct vmheap_native_row *d =
	    calloc(no + nn + 1, sizeof(*d));
	size_t i = 0, j = 0, k = 0;

	if (!d)
		return VMHEAP_ENOMEM;
	while (i < no || j < nn) {
		int c = i == no   ? 1
			: j == nn ? -1
					: strcmp(o[i].site, n[j].site);
		const char *site = c <= 0 ? o[i].site : n[j].site;
		int64_t dc = 0, db = 0;
		if (c <= 0) {
			dc -= o[i].count;
			db -= o[i].bytes;
			i++;
		}
		if (c >= 0) {
			dc += n[j].count;
			db += n[j].bytes;
			j++;
		}
		if (dc == 0 && db == 0)
			continue;
		d[k].site = strdup(site);
		if (!d[k].site) {
			vmheap_native_rows_free(d, k);
			return VMHEAP_ENOMEM;
		}
		d[k].count = dc;
		d[k].bytes = db;
		k++;
	}
	*out = d;
	*nout = k;
	return 0;
}

static int by_bytes(const void *x, const void *y)
{
	const struct vmheap_native_row *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return strcmp(a->site, b->site);
}

void vmheap_native_rows_sort(struct vmheap_native_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), by_bytes);
}

static void num(char *buf, size_t len, int64_t v, int sign)
{
	snprintf(buf, len, sign && v > 0 ? "+%lld" : "%lld", (long long)v);
}

/* A bytes cell: human units unless --bytes, signed in a diff. */
static void native_size(const struct vmheap_report_options *o, char *buf,
			size_t len, int64_t v, int sign)
{
	if (sign)
		vmheap_report_size_delta(o, buf, len, v);
	else
		vmheap_report_size(o, buf, len, (uint64_t)v);
}

void vmheap_native_render(struct vmheap_strbuf *sb,
			  const struct vmheap_native_row *rows, size_t n,
			  size_t shown, const struct vmheap_report_options *o,
			  int sign)
{
	enum vmheap_output_format format = o->format;
	char c[32], b[32];
	int64_t tc = 0, tb = 0;

	for (size_t i = 0; i < n; i++) {
		tc += rows[i].count;
		tb += rows[i].bytes;
	}
	/* a diff's figures are changes: count_delta and bytes_delta */
	const char *ck = sign ? "count_delta" : "count";
	const char *bk = sign ? "bytes_delta" : "bytes";

	if (format == VMHEAP_OUTPUT_JSON) {
		vmheap_strbuf_addf(sb, "\"sites\": [");
		for (size_t i = 0; i < shown; i++) {
			vmheap_strbuf_addf(sb,
					   "%s{\"%s\": %lld, \"%s\": %lld, "
					   "\"site\": ",
					   i ? ", " : "", ck,
					   (long long)rows[i].count, bk,
					   (long long)rows[i].bytes);
			vmheap_strbuf_add_json(sb, rows[i].site);
			vmheap_strbuf_add(sb, "}", 1);
		}
		vmheap_strbuf_addf(sb,
				   "], \"total\": {\"sites\": %zu, \"%s\": "
				   "%lld, \"%s\": %lld}",
				   n, ck, (long long)tc, bk, (long long)tb);
		return;
	}
	if (format == VMHEAP_OUTPUT_CSV) {
		vmheap_strbuf_addf(sb, "%s,%s,site\n", ck, bk);
		for (size_t i = 0; i < shown; i++) {
			vmheap_strbuf_addf(sb, "%lld,%lld,",
					   (long long)rows[i].count,
					   (long long)rows[i].bytes);
			vmheap_strbuf_add_csv(sb, rows[i].site);
			vmheap_strbuf_add(sb, "\n", 1);
		}
		return;
	}
	vmheap_table *t = vmheap_table_new("rrl");
	if (!t) {
		sb->failed = 1;
		return;
	}
	const char *head[] = {"count", "bytes", "site"};
	vmheap_table_add_row(t, head);
	for (size_t i = 0; i < shown; i++) {
		num(c, sizeof(c), rows[i].count, sign);
		native_size(o, b, sizeof(b), rows[i].bytes, sign);
		const char *row[] = {c, b, rows[i].site};
		vmheap_table_add_row(t, row);
	}
	char label[128];
	vmheap_report_total_label(label, sizeof(label), "total", n,
				  sign ? "sites changed" : "sites", shown);
	num(c, sizeof(c), tc, sign);
	native_size(o, b, sizeof(b), tb, sign);
	const char *total[] = {c, b, label};
	vmheap_table_add_row(t, total);
	vmheap_table_render(t, sb);
	vmheap_table_free(t);
}
