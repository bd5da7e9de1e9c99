/*
 * suspects.c - the answer at the top of the page: the leak suspects of
 * the last dump against the first, ranked by libvmheap-analysis
 * (vmheap_suspects_rank, as vmheap-diff --suspects ranks them, with its
 * default rules: no reference kind excluded, explaining paths), each with
 * its growth per minute and its holder as vmheap-path names it; and the
 * native sites that grew most (the rows of vmheap-diff --native), with
 * the leak classes of their blocks in the last dump.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "html-internal.h"
#include "vmheap_suspects.h"

/* The time between the first and the last dump in milliseconds, or 0
 * when the headers do not say (or say backwards). */
static int64_t span_ms(const struct html_report *rep)
{
	int64_t t0 = vmheap_reader_header(rep->dumps[0].reader)->time_ms,
		t1 = vmheap_reader_header(rep->dumps[rep->ndumps - 1].reader)
			 ->time_ms;

	return t0 > 0 && t1 > t0 ? t1 - t0 : 0;
}

/* ,"per_minute":X (a change over span ms), or null without a span. */
static void per_minute(struct vmheap_strbuf *sb, int64_t change, int64_t ms)
{
	if (ms > 0)
		vmheap_strbuf_addf(sb, ",\"per_minute\":%.6g",
				   (double)change * 60000.0 / (double)ms);
	else
		vmheap_strbuf_add(sb, ",\"per_minute\":null", 18);
}

static void suspects_members(struct vmheap_strbuf *sb, const vmheap_graph *g,
			     const struct vmheap_suspects *s, int64_t ms)
{
	vmheap_strbuf_addf(sb,
			   "{\"new_objects\":%" PRIu64 ",\"new_bytes\":%" PRIu64
			   ",\"threshold_bytes\":%" PRIu64
			   ",\"suspect_count\":%zu,\"span_ms\":%" PRId64
			   ",\"rows\":[",
			   s->new_objects, s->new_bytes, s->threshold, s->nrows,
			   ms);
	for (size_t k = 0; k < s->shown; k++) {
		const struct vmheap_suspect *r = &s->rows[k];
		vmheap_strbuf_add(sb, k ? ",{\"class\":" : "{\"class\":",
				  k ? 10 : 9);
		vmheap_strbuf_add_json(sb, s->objects.names[r->name]);
		vmheap_strbuf_addf(sb,
				   ",\"growth\":%" PRId64 ",\"owners\":%" PRIu64
				   ",\"held_objects\":%" PRIu64
				   ",\"held_bytes\":%" PRIu64
				   ",\"ranked_bytes\":%" PRIu64,
				   r->growth, r->owners, r->held_objects,
				   r->held_bytes, r->ranked_bytes);
		per_minute(sb, r->growth, ms);
		vmheap_strbuf_add(sb, ",\"held_by\":", 11);
		if (r->paths && r->paths->group_count) {
			struct vmheap_strbuf h = VMHEAP_STRBUF_INIT;
			vmheap_strbuf_add_held_by(&h, g, &r->paths->groups[0]);
			vmheap_strbuf_add_json(sb, h.buf ? h.buf : "");
			if (h.failed)
				sb->failed = 1;
			vmheap_strbuf_release(&h);
		} else {
			vmheap_strbuf_add(sb, "null", 4);
		}
		vmheap_strbuf_add(sb, "}", 1);
	}
	vmheap_strbuf_add(sb, "]}", 2);
}

int html_suspects_json(const struct html_options *o,
		       const struct html_report *rep, struct vmheap_strbuf *sb,
		       char *err, size_t errsz)
{
	vmheap_reader *ro = NULL, *rn = NULL;
	vmheap_graph *old_g = NULL, *new_g = NULL;
	struct vmheap_suspects *s = NULL;
	struct vmheap_suspects_options opt = VMHEAP_SUSPECTS_OPTIONS_INIT;
	int rc;

	vmheap_strbuf_add(sb, ",\"suspects\":", 12);
	if (o->ndumps < 2 || o->no_graph) {
		vmheap_strbuf_add(sb, "null", 4);
		return 0;
	}
	opt.top = HTML_SUSPECTS;
	rc = vmheap_graph_load(o->dumps[0], &ro, &old_g, err, errsz);
	if (rc == 0)
		rc = vmheap_graph_load(o->dumps[o->ndumps - 1], &rn, &new_g,
				       err, errsz);
	if (rc == 0 &&
	    (vmheap_graph_exclude(new_g, 0) < 0 ||
	     vmheap_graph_set_path_rule(new_g, VMHEAP_GRAPH_PATHS_EXPLAINING) <
		 0)) {
		snprintf(err, errsz, "%s: %s", o->dumps[o->ndumps - 1],
			 vmheap_graph_error(new_g));
		rc = VMHEAP_ESTATE;
	}
	if (rc == 0 && (rc = vmheap_suspects_rank(old_g, new_g, &opt, &s)) < 0)
		snprintf(err, errsz, "%s: %s", o->dumps[o->ndumps - 1],
			 vmheap_graph_error(new_g));
	if (rc == 0)
		suspects_members(sb, new_g, s, span_ms(rep));
	vmheap_suspects_free(s);
	vmheap_graph_free(new_g);
	vmheap_graph_free(old_g);
	vmheap_reader_free(rn);
	vmheap_reader_free(ro);
	return rc;
}

int html_native_growth_json(const struct html_report *rep,
			    const struct vmheap_native *first,
			    const struct vmheap_native *last,
			    struct vmheap_strbuf *sb)
{
	struct vmheap_native_row *a = NULL, *b = NULL, *d = NULL;
	size_t na = 0, nb = 0, nd = 0;
	vmheap_symbolizer *sym = NULL;
	struct html_leaks leaks = {0};
	int rc = 0;

	vmheap_strbuf_add(sb, ",\"native_growth\":", 17);
	if (rep->ndumps < 2 || !first || !last) {
		vmheap_strbuf_add(sb, "null", 4);
		return 0;
	}
	sym = vmheap_symbolizer_new();
	if (!sym ||
	    vmheap_native_rows(first, sym, HTML_NATIVE_FRAMES, &a, &na) < 0 ||
	    vmheap_native_rows(last, sym, HTML_NATIVE_FRAMES, &b, &nb) < 0 ||
	    vmheap_native_rows_delta(a, na, b, nb, &d, &nd) < 0 ||
	    html_leaks_load(last, sym, &leaks) < 0) {
		rc = VMHEAP_ENOMEM;
		goto out;
	}
	vmheap_native_rows_sort(d, nd);
	int64_t ms = span_ms(rep);
	vmheap_strbuf_add(sb, "[", 1);
	for (size_t i = 0; i < nd && i < HTML_NATIVE_GROWTH; i++) {
		vmheap_strbuf_addf(sb,
				   "%s{\"count_delta\":%" PRId64
				   ",\"bytes_delta\":%" PRId64,
				   i ? "," : "", d[i].count, d[i].bytes);
		per_minute(sb, d[i].bytes, ms);
		vmheap_strbuf_add(sb, ",\"leaks\":", 9);
		html_leaks_json(sb, &leaks, d[i].site);
		vmheap_strbuf_add(sb, ",\"site\":", 8);
		vmheap_strbuf_add_json(sb, d[i].site);
		vmheap_strbuf_add(sb, "}", 1);
	}
	vmheap_strbuf_add(sb, "]", 1);
out:
	html_leaks_release(&leaks);
	vmheap_native_rows_free(a, na);
	vmheap_native_rows_free(b, nb);
	vmheap_native_rows_free(d, nd);
	vmheap_symbolizer_free(sym);
	return rc;
}
