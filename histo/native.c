/*
 * native.c - vmheap-histo --native: the live native (malloc) bytes of a
 * dump by call site, symbolized offline.
 */
#include <stdio.h>
#include <stdlib.h>

#include "histo-internal.h"
#include "vmheap_pprof.h"

/* Frames of a site shown (and grouped by). */
#define SITE_FRAMES 5
/* Rows shown without --top. */
#define DEFAULT_TOP 20

/* The profile of section n (of reader r's dump) into out: 0 or
 * VMHEAP_ENOMEM. */
static int histo_native_pprof(vmheap_reader *r, const struct vmheap_native *n,
			      vmheap_symbolizer *sym,
			      struct vmheap_strbuf *out)
{
	vmheap_pprof *p = vmheap_pprof_new();
	int rc = p ? vmheap_pprof_add_native(p, n, sym, 1) : VMHEAP_ENOMEM;
	struct vmheap_strbuf c = VMHEAP_STRBUF_INIT;

	if (rc == 0) {
		vmheap_pprof_set_time(
		    p, vmheap_pprof_nanos(vmheap_reader_header(r)->time_ms), 0);
		vmheap_strbuf_addf(&c, "vmheap-histo --native: live malloc "
				       "memory by call site of ");
		vmheap_strbuf_add_dump_origin(&c, r);
		rc = c.failed ? VMHEAP_ENOMEM : vmheap_pprof_comment(p, c.buf);
	}
	if (rc == 0)
		rc = vmheap_pprof_write(p, out);
	vmheap_strbuf_release(&c);
	vmheap_pprof_free(p);
	return rc;
}

/* --native --leaks: the rows of section n by leak class. */
static int histo_native_leaks(const struct histo_options *o, vmheap_reader *r,
			      const struct vmheap_native *n,
			      vmheap_symbolizer *sym,
			      struct vmheap_strbuf *out, char *err,
			      size_t errsz)
{
	struct vmheap_native_leak_row *rows = NULL;
	size_t nrows = 0;
	const struct vmheap_dump_leak_scan *l = n->leaks;

	if (!l) {
		snprintf(err, errsz,
			 "%s has no leak scan in its native section: it is "
			 "made by a dump forked while tracking "
			 "(config.dump.fork)",
			 o->path);
		return 1;
	}
	if (vmheap_native_leak_rows(n, sym, SITE_FRAMES, &rows, &nrows)) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	size_t top = o->report.top ? o->report.top : DEFAULT_TOP;
	size_t shown = nrows < top ? nrows : top;
	if (o->report.format == VMHEAP_OUTPUT_JSON) {
		vmheap_strbuf_addf(
		    out,
		    "{\"native\": true, \"leaks\": true, \"scan\": "
		    "{\"blocks\": %llu, \"root_bytes\": %llu, "
		    "\"skipped_mappings\": %llu, \"skipped_bytes\": %llu, "
		    "\"scan_ns\": %llu, \"memory_bytes\": %llu}, ",
		    (unsigned long long)l->blocks,
		    (unsigned long long)l->root_bytes,
		    (unsigned long long)l->skipped_mappings,
		    (unsigned long long)l->skipped_bytes,
		    (unsigned long long)l->scan_ns,
		    (unsigned long long)l->memory_bytes);
		vmheap_native_leak_render(out, rows, nrows, shown, &o->report);
		vmheap_strbuf_addf(out, "}\n");
	} else if (o->report.format == VMHEAP_OUTPUT_CSV) {
		vmheap_native_leak_render(out, rows, nrows, shown, &o->report);
	} else {
		char roots[64], skipped[64], mem[64];
		vmheap_report_size(&o->report, roots, sizeof(roots),
				   l->root_bytes);
		vmheap_report_size(&o->report, skipped, sizeof(skipped),
				   l->skipped_bytes);
		vmheap_report_size(&o->report, mem, sizeof(mem),
				   l->memory_bytes);
		vmheap_strbuf_addf(out, "native leaks: ");
		vmheap_strbuf_add_dump_origin(out, r);
		vmheap_strbuf_addf(
		    out,
		    ": live malloc blocks by call site and leak class\n"
		    "scan: %llu blocks, %s of roots read, %llu mappings "
		    "skipped (%s unread), %.3f s, %s of memory\n",
		    (unsigned long long)l->blocks, roots,
		    (unsigned long long)l->skipped_mappings, skipped,
		    (double)l->scan_ns / 1e9, mem);
		vmheap_native_leak_render(out, rows, nrows, shown, &o->report);
	}
	vmheap_native_leak_rows_free(rows, nrows);
	return 0;
}

int histo_native(const struct histo_options *o, struct vmheap_strbuf *out,
		 char *err, size_t errsz)
{
	vmheap_reader *r = NULL;
	struct vmheap_native *n = NULL;
	struct vmheap_native_row *rows = NULL;
	size_t nrows = 0;
	vmheap_symbolizer *sym = NULL;
	int rc = vmheap_native_load(o->path, &r, &n, err, errsz);

	if (rc == 0 && !n) {
		rc = 1; /* whole, but without the section */
		goto out;
	}
	if (rc < 0)
		goto out;
	sym = vmheap_symbolizer_new();
	if (sym && o->leaks) {
		rc = histo_native_leaks(o, r, n, sym, out, err, errsz);
		goto out;
	}
	if (sym && o->pprof) {
		rc = histo_native_pprof(r, n, sym, out);
		if (rc < 0)
			snprintf(err, errsz, "out of memory");
		goto out;
	}
	if (!sym || vmheap_native_rows(n, sym, SITE_FRAMES, &rows, &nrows)) {
		snprintf(err, errsz, "out of memory");
		rc = VMHEAP_ENOMEM;
		goto out;
	}
	vmheap_native_rows_sort(rows, nrows);
	uint64_t own_bytes, own_count;
	char own[64];
	vmheap_native_own(n, &own_bytes, &own_count);
	vmheap_report_size(&o->report, own, sizeof(own), own_bytes);
	size_t shown = nrows;
	size_t top = o->report.top ? o->report.top : DEFAULT_TOP;
	if (shown > top)
		shown = top;
	if (o->report.format == VMHEAP_OUTPUT_JSON) {
		vmheap_strbuf_addf(out,
				   "{\"native\": true, \"vmheap_own_bytes\": "
				   "%llu, \"vmheap_own_count\": %llu, ",
				   (unsigned long long)own_bytes,
				   (unsigned long long)own_count);
		vmheap_native_render(out, rows, nrows, shown,
				     &o->report, 0);
		vmheap_strbuf_addf(out, "}\n");
	} else if (o->report.format == VMHEAP_OUTPUT_CSV) {
		vmheap_native_render(out, rows, nrows, shown,
				     &o->report, 0);
	} else {
		vmheap_strbuf_addf(out, "native: ");
		vmheap_strbuf_add_dump_origin(out, r);
		vmheap_strbuf_addf(out, ": live malloc memory by call site\n"
					"vmheap's own (not a site below): %s in "
					"%llu blocks\n",
				   own, (unsigned long long)own_count);
		vmheap_native_render(out, rows, nrows, shown,
				     &o->report, 0);
	}
out:
	vmheap_native_rows_free(rows, nrows);
	vmheap_symbolizer_free(sym);
	vmheap_native_free(n);
	vmheap_reader_free(r);
	return rc;
}
