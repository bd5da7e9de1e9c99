/*
 * native_leaks.c - issue 25's leak classification of the last dump's
 * native sites (the native section's `leaks` key, as vmheap-histo
 * --native --leaks groups it), looked up by a row's site: what the
 * report says of a native site's blocks, leaked or reachable.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html-internal.h"

static int by_site(const void *x, const void *y)
{
	return strcmp(((const struct vmheap_native_leak_row *)x)->site,
		      ((const struct vmheap_native_leak_row *)y)->site);
}

int html_leaks_load(const struct vmheap_native *n, vmheap_symbolizer *sym,
		    struct html_leaks *out)
{
	out->rows = NULL;
	out->n = 0;
	out->scanned = n && n->leaks;
	if (!out->scanned)
		return 0;
	if (vmheap_native_leak_rows(n, sym, HTML_NATIVE_FRAMES, &out->rows,
				    &out->n) < 0)
		return VMHEAP_ENOMEM;
	qsort(out->rows, out->n, sizeof(*out->rows), by_site);
	return 0;
}

void html_leaks_json(struct vmheap_strbuf *sb, const struct html_leaks *l,
		     const char *site)
{
	struct vmheap_native_leak_row key = {.site = (char *)site};
	const struct vmheap_native_leak_row *r =
	    l->n ? bsearch(&key, l->rows, l->n, sizeof(*l->rows), by_site)
		 : NULL;

	if (!r) {
		/* no scan, or no live block left at the site */
		vmheap_strbuf_add(sb, "null", 4);
		return;
	}
	vmheap_strbuf_addf(sb,
			   "[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			   ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
			   r->l.leaked_count, r->l.leaked_bytes,
			   r->l.indirect_count, r->l.indirect_bytes,
			   r->l.possible_count, r->l.possible_bytes,
			   r->l.reachable_count, r->l.reachable_bytes);
}

void html_leaks_release(struct html_leaks *l)
{
	vmheap_native_leak_rows_free(l->rows, l->n);
	l->rows = NULL;
	l->n = 0;
}
