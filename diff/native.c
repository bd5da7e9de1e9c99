/*
 * native.c - vmheap-diff --native: the growth of live native (malloc)
 * memory by call site between two dumps, symbolized offline; over three
 * or more dumps, each site's live blocks at each dump and its growth per
 * minute (the timeline of timeline.c).  Sites are matched by their
 * symbolized frames, which stay the same across runs and address-space
 * layouts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff-internal.h"
#include "timeline-internal.h"
#include "vmheap_pprof.h"

#define SITE_FRAMES 5
#define DEFAULT_TOP 20

struct side {
	vmheap_reader *r;
	struct vmheap_native *n;
	struct vmheap_native_row *rows;
	size_t nrows;
};

static void side_release(struct side *s)
{
	vmheap_native_rows_free(s->rows, s->nrows);
	vmheap_native_free(s->n);
	vmheap_reader_free(s->r);
}

/* 0, 1 (no native section, err says so) or a negative code. */
static int load(const char *path, vmheap_symbolizer *sym, struct side *s,
		char *err, size_t errsz)
{
	int rc = vmheap_native_load(path, &s->r, &s->n, err, errsz);

	if (rc < 0)
		return rc;
	if (!s->n)
		return 1;
	if (vmheap_native_rows(s->n, sym, SITE_FRAMES, &s->rows, &s->nrows)) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	return 0;
}

/* The members "old":{...},"new":{...} of the JSON report (after "{"). */
static void dumps_json(struct vmheap_strbuf *out, const struct side *old,
		       const struct side *new)
{
	vmheap_strbuf_add(out, "\"old\": {", 8);
	vmheap_strbuf_add_dump_json(out, old->r, NULL);
	vmheap_strbuf_add(out, "}, \"new\": {", 11);
	vmheap_strbuf_add_dump_json(out, new->r, NULL);
	vmheap_strbuf_add(out, "}, ", 3);
}

/* vmheap-diff --native A B C ...: every dump's sites as the timeline's
 * entries.  The exit status. */
static int native_timeline(const struct diff_options *o, vmheap_symbolizer *sym)
{
	struct timeline tl;
	struct side *sides = calloc(o->ndumps, sizeof(*sides));
	struct tl_entry *e = NULL;
	struct vmheap_strbuf out = VMHEAP_STRBUF_INIT;
	struct vmheap_strbuf warn = VMHEAP_STRBUF_INIT;
	size_t ne = 0;
	char err[1024];
	int rc;

	memset(&tl, 0, sizeof(tl));
	tl.native = 1;
	if (!sides) {
		snprintf(err, sizeof(err), "out of memory");
		rc = VMHEAP_ENOMEM;
	} else
		rc = diff_timeline_alloc(o, &tl, err, sizeof(err));
	for (size_t k = 0; rc == 0 && k < tl.n; k++) {
		rc = load(o->dumps[k], sym, &sides[k], err, sizeof(err));
		if (rc)
			break;
		/* the reader is the timeline's from now on */
		tl.d[k].reader = sides[k].r;
		sides[k].r = NULL;
		tl.t_ms[k] = diff_time_ms(vmheap_reader_header(tl.d[k].reader));
		ne += sides[k].nrows;
	}
	if (rc == 0 && !(e = calloc(ne ? ne : 1, sizeof(*e)))) {
		snprintf(err, sizeof(err), "out of memory");
		rc = VMHEAP_ENOMEM;
	}
	if (rc == 0) {
		ne = 0;
		for (size_t k = 0; k < tl.n; k++)
			for (size_t i = 0; i < sides[k].nrows; i++)
				e[ne++] = (struct tl_entry){
				    sides[k].rows[i].site, k,
				    (uint64_t)sides[k].rows[i].count,
				    (uint64_t)sides[k].rows[i].bytes};
		diff_timeline_check(&tl, &warn);
		if ((rc = diff_timeline_rows(&tl, o, e, ne)) < 0)
			snprintf(err, sizeof(err),
				 "out of memory for the timeline");
	}
	if (rc == 0) {
		diff_timeline_render(o, &tl, &out);
		if (out.failed || warn.failed) {
			snprintf(err, sizeof(err),
				 "out of memory for the report");
			rc = VMHEAP_ENOMEM;
		}
	}
	if (rc == 1) { /* a dump without a native section: said, status 1 */
		fprintf(stderr, "vmheap-diff: %s\n", err);
		vmheap_strbuf_release(&out);
		vmheap_strbuf_release(&warn);
	} else
		rc = diff_emit(rc, err, &out, &warn);
	diff_timeline_release(&tl);
	for (size_t k = 0; sides && k < (size_t)o->ndumps; k++)
		side_release(&sides[k]);
	free(sides);
	free(e);
	return rc;
}

/* --format pprof: the sites of the last dump minus those of the first
 * as one profile on stdout.  The exit status. */
static int native_pprof(const struct diff_options *o, vmheap_symbolizer *sym)
{
	struct side old = {0}, new = {0};
	struct vmheap_strbuf out = VMHEAP_STRBUF_INIT;
	struct vmheap_strbuf c = VMHEAP_STRBUF_INIT;
	struct vmheap_strbuf none = VMHEAP_STRBUF_INIT; /* no warnings */
	vmheap_pprof *p = vmheap_pprof_new();
	char err[1024];
	int rc = p ? 0 : VMHEAP_ENOMEM;

	if (rc == 0)
		rc = vmheap_native_load(o->dumps[0], &old.r, &old.n, err,
					sizeof(err));
	if (rc == 0 && !old.n)
		rc = 1;
	if (rc == 0)
		rc = vmheap_native_load(o->dumps[o->ndumps - 1], &new.r, &new.n,
					err, sizeof(err));
	if (rc == 0 && !new.n)
		rc = 1;
	if (rc == 0 && (vmheap_pprof_add_native(p, old.n, sym, -1) < 0 ||
			vmheap_pprof_add_native(p, new.n, sym, 1) < 0))
		rc = VMHEAP_ENOMEM;
	if (rc == 0) {
		int64_t t0 = vmheap_pprof_nanos(
			    vmheap_reader_header(old.r)->time_ms),
			t1 = vmheap_pprof_nanos(
			    vmheap_reader_header(new.r)->time_ms);
		vmheap_pprof_set_time(p, t1, t0 && t1 > t0 ? t1 - t0 : 0);
		vmheap_strbuf_addf(&c, "vmheap-diff --native: live malloc "
				       "memory by call site, ");
		vmheap_strbuf_add_dump_origin(&c, new.r);
		vmheap_strbuf_addf(&c, " minus ");
		vmheap_strbuf_add_dump_origin(&c, old.r);
		if (c.failed || vmheap_pprof_comment(p, c.buf) < 0 ||
		    vmheap_pprof_write(p, &out) < 0)
			rc = VMHEAP_ENOMEM;
	}
	if (rc == VMHEAP_ENOMEM)
		snprintf(err, sizeof(err), "out of memory");
	if (rc == 1) {
		fprintf(stderr, "vmheap-diff: %s\n", err);
		vmheap_strbuf_release(&out);
	} else
		rc = diff_emit(rc, err, &out, &none);
	vmheap_strbuf_release(&c);
	vmheap_pprof_free(p);
	side_release(&old);
	side_release(&new);
	return rc;
}

/* One side's leak rows: 0, 1 (no native section or no leak scan: err
 * says so) or a negative code. */
static int load_leaks(const char *path, vmheap_symbolizer *sym, struct side *s,
		      struct vmheap_native_leak_row **rows, size_t *nrows,
		      char *err, size_t errsz)
{
	int rc = vmheap_native_load(path, &s->r, &s->n, err, errsz);

	if (rc < 0)
		return rc;
	if (!s->n)
		return 1;
	if (!s->n->leaks) {
		snprintf(err, errsz,
			 "%s has no leak scan in its native section: it is "
			 "made by a dump forked while tracking "
			 "(config.dump.fork)",
			 path);
		return 1;
	}
	if (vmheap_native_leak_rows(s->n, sym, SITE_FRAMES, rows, nrows)) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	return 0;
}

/* vmheap-diff --native --leaks OLD NEW.  The exit status. */
static int native_leaks(const struct diff_options *o, vmheap_symbolizer *sym)
{
	struct side old = {0}, new = {0};
	struct vmheap_native_leak_row *ol = NULL, *nl = NULL;
	struct vmheap_native_leak_delta_row *d = NULL;
	size_t no = 0, nn = 0, nd = 0;
	struct vmheap_strbuf out = VMHEAP_STRBUF_INIT;
	struct vmheap_strbuf none = VMHEAP_STRBUF_INIT; /* no warnings */
	char err[1024];
	int rc = load_leaks(o->old_path, sym, &old, &ol, &no, err, sizeof(err));

	if (!rc)
		rc = load_leaks(o->new_path, sym, &new, &nl, &nn, err,
				sizeof(err));
	if (!rc && (rc = vmheap_native_leak_delta(ol, no, nl, nn, &d, &nd)))
		snprintf(err, sizeof(err), "out of memory");
	if (!rc) {
		size_t top = o->report.top ? o->report.top : DEFAULT_TOP;
		size_t shown = nd < top ? nd : top;
		if (o->report.format == VMHEAP_OUTPUT_JSON) {
			vmheap_strbuf_addf(&out, "{\"native\": true, "
						 "\"leaks\": true, ");
			dumps_json(&out, &old, &new);
			vmheap_native_leak_delta_render(&out, d, nd, shown,
							&o->report);
			vmheap_strbuf_addf(&out, "}\n");
		} else if (o->report.format == VMHEAP_OUTPUT_CSV) {
			vmheap_native_leak_delta_render(&out, d, nd, shown,
							&o->report);
		} else {
			vmheap_strbuf_addf(&out, "old: ");
			vmheap_strbuf_add_dump_origin(&out, old.r);
			vmheap_strbuf_addf(&out, "\nnew: ");
			vmheap_strbuf_add_dump_origin(&out, new.r);
			vmheap_strbuf_addf(&out, "\nlive malloc blocks by call "
						 "site and leak class in new, "
						 "each with its growth since "
						 "old (+/-)\n");
			vmheap_native_leak_delta_render(&out, d, nd, shown,
							&o->report);
		}
		if (out.failed) {
			snprintf(err, sizeof(err),
				 "out of memory for the report");
			rc = VMHEAP_ENOMEM;
		}
	}
	if (rc == 1) {
		fprintf(stderr, "vmheap-diff: %s\n", err);
		vmheap_strbuf_release(&out);
	} else
		rc = diff_emit(rc, err, &out, &none);
	vmheap_native_leak_delta_free(d, nd);
	vmheap_native_leak_rows_free(ol, no);
	vmheap_native_leak_rows_free(nl, nn);
	side_release(&old);
	side_release(&new);
	return rc;
}

int diff_native_main(const struct diff_options *o)
{
	struct side old = {0}, new = {0};
	struct vmheap_native_row *d = NULL;
	struct vmheap_strbuf out = VMHEAP_STRBUF_INIT;
	size_t nd = 0;
	char err[1024];
	vmheap_symbolizer *sym = vmheap_symbolizer_new();
	int rc = sym ? 0 : VMHEAP_ENOMEM;

	if (!sym)
		snprintf(err, sizeof(err), "out of memory");
	else if (o->leaks) {
		rc = native_leaks(o, sym);
		vmheap_symbolizer_free(sym);
		return rc;
	} else if (o->pprof) {
		rc = native_pprof(o, sym);
		vmheap_symbolizer_free(sym);
		return rc;
	} else if (o->ndumps > 2) {
		rc = native_timeline(o, sym);
		vmheap_symbolizer_free(sym);
		return rc;
	}
	if (!rc)
		rc = load(o->old_path, sym, &old, err, sizeof(err));
	if (!rc)
		rc = load(o->new_path, sym, &new, err, sizeof(err));
	if (!rc && (rc = vmheap_native_rows_delta(old.rows, old.nrows,
						   new.rows, new.nrows, &d,
						   &nd)))
		snprintf(err, sizeof(err), "out of memory");
	if (!rc) {
		vmheap_native_rows_sort(d, nd);
		uint64_t ob, oc, nb, nc;
		char own[64], own_d[64];
		vmheap_native_own(old.n, &ob, &oc);
		vmheap_native_own(new.n, &nb, &nc);
		vmheap_report_size(&o->report, own, sizeof(own), nb);
		vmheap_report_size_delta(&o->report, own_d, sizeof(own_d),
					 (int64_t)(nb - ob));
		size_t top = o->report.top ? o->report.top : DEFAULT_TOP;
		size_t shown = nd < top ? nd : top;
		if (o->report.format == VMHEAP_OUTPUT_JSON) {
			vmheap_strbuf_addf(&out,
					   "{\"native\": true, "
					   "\"vmheap_own_bytes\": %llu, "
					   "\"vmheap_own_bytes_delta\": %lld, ",
					   (unsigned long long)nb,
					   (long long)(nb - ob));
			dumps_json(&out, &old, &new);
			vmheap_native_render(&out, d, nd, shown,
					     &o->report, 1);
			vmheap_strbuf_addf(&out, "}\n");
		} else if (o->report.format == VMHEAP_OUTPUT_CSV) {
			vmheap_native_render(&out, d, nd, shown,
					     &o->report, 1);
		} else {
			vmheap_strbuf_addf(&out, "old: ");
			vmheap_strbuf_add_dump_origin(&out, old.r);
			vmheap_strbuf_addf(&out, "\nnew: ");
			vmheap_strbuf_add_dump_origin(&out, new.r);
			vmheap_strbuf_addf(&out, "\nvmheap's own (not a "
						 "site below): %s (%s)",
					   own, own_d);
			vmheap_strbuf_addf(&out, "\nlive malloc memory "
						 "by call site, new minus old\n");
			vmheap_native_render(&out, d, nd, shown,
					     &o->report, 1);
		}
		if (out.failed) {
			snprintf(err, sizeof(err),
				 "out of memory for the report");
			rc = VMHEAP_ENOMEM;
		}
	}
	if (rc)
		fprintf(stderr, "vmheap-diff: %s\n", err);
	else if (vmheap_strbuf_write(&out, 1) < 0) {
		perror("vmheap-diff: writing the output");
		rc = VMHEAP_EIO;
	}
	vmheap_strbuf_release(&out);
	vmheap_native_rows_free(d, nd);
	side_release(&old);
	side_release(&new);
	vmheap_symbolizer_free(sym);
	return rc == 0 ? 0 : rc == 1 ? 1 : 2;
}
