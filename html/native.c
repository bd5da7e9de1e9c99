/*
 * native.c - the native (malloc) sites of the last dump, grouped and
 * symbolized as vmheap-histo --native shows them, each with its blocks'
 * leak classes when the section has a leak scan (vmheap-histo --native
 * --leaks); vmheap's own memory is no row (own_bytes, its total).
 */
#include <inttypes.h>
#include <stdio.h>

#include "html-internal.h"

int html_native_json(const struct vmheap_native *n, struct vmheap_strbuf *sb)
{
	struct vmheap_native_row *rows = NULL;
	size_t nrows = 0;
	vmheap_symbolizer *sym;
	struct html_leaks leaks = {0};
	int64_t count = 0, bytes = 0;

	if (!n) {
		vmheap_strbuf_add(sb, "null", 4);
		return 0;
	}
	sym = vmheap_symbolizer_new();
	if (!sym ||
	    vmheap_native_rows(n, sym, HTML_NATIVE_FRAMES, &rows, &nrows) < 0 ||
	    html_leaks_load(n, sym, &leaks) < 0) {
		html_leaks_release(&leaks);
		vmheap_native_rows_free(rows, nrows);
		vmheap_symbolizer_free(sym);
		return VMHEAP_ENOMEM;
	}
	vmheap_native_rows_sort(rows, nrows);
	for (size_t i = 0; i < nrows; i++) {
		count += rows[i].count;
		bytes += rows[i].bytes;
	}
	uint64_t own_bytes, own_count;
	vmheap_native_own(n, &own_bytes, &own_count);
	vmheap_strbuf_addf(sb,
			   "{\"sites\":%zu,\"count\":%" PRId64
			   ",\"bytes\":%" PRId64 ",\"own_bytes\":%" PRIu64
			   ",\"leak_scan\":%s,\"rows\":[",
			   nrows, count, bytes, own_bytes,
			   leaks.scanned ? "true" : "false");
	for (size_t i = 0; i < nrows && i < HTML_NATIVE_ROWS; i++) {
		vmheap_strbuf_add(sb, i ? ",[" : "[", i ? 2 : 1);
		vmheap_strbuf_add_json(sb, rows[i].site);
		vmheap_strbuf_addf(sb, ",%" PRId64 ",%" PRId64 ",",
				   rows[i].count, rows[i].bytes);
		html_leaks_json(sb, &leaks, rows[i].site);
		vmheap_strbuf_add(sb, "]", 1);
	}
	vmheap_strbuf_add(sb, "]}", 2);
	html_leaks_release(&leaks);
	vmheap_native_rows_free(rows, nrows);
	vmheap_symbolizer_free(sym);
	return 0;
}
