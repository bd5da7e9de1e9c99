/*
 * histo-internal.h - the parts of vmheap-histo.
 */
#ifndef HISTO_INTERNAL_H
#define HISTO_INTERNAL_H

#include "vmheap_analysis.h"
#include "vmheap_report.h"

struct histo_options {
	const char *path; /* the dump, or "-" */
	struct vmheap_report_options report; /* --sort, --top, --format... */
	int by_kind;			     /* group by object kind */
	int by_site;			     /* --by site: class and site */
	int retained;			     /* --retained (retained.c) */
	int sort_given;			     /* --sort was on the line */
	int native;			     /* --native: malloc sites */
	int leaks;			     /* --leaks: by leak class */
	int pprof;			     /* --format pprof */
};

/*
 * Read the dump and render the whole report into `out`.  Returns 0, or a
 * negative code with one message in err (naming the file and the byte
 * offset); `out` is then to be discarded.
 */
int histo_run(const struct histo_options *o, struct vmheap_strbuf *out,
	      char *err, size_t errsz);

/* Render the sorted rows of a finished census in o->format. */
void histo_render(const struct histo_options *o, vmheap_reader *r,
		  vmheap_census *c, struct vmheap_strbuf *out);

/* --by site --format pprof (pprof.c): every row of the census as a
 * sample of a pprof profile into `out` (out->failed when out of memory). */
void histo_render_pprof(const struct histo_options *o, vmheap_reader *r,
			vmheap_census *c, struct vmheap_strbuf *out);

/*
 * --retained (retained.c): the histogram from the heap graph, with the
 * retained bytes of each class.  Same contract as histo_run().
 */
int histo_run_retained(const struct histo_options *o,
		       struct vmheap_strbuf *out, char *err, size_t errsz);

/*
 * --native (native.c): the dump's native section by call site into
 * `out` (with --leaks, their blocks by leak class).  0; 1 when the dump
 * is whole but has no native section, or with --leaks no leak scan (err
 * says so); or a negative code with err set.
 */
int histo_native(const struct histo_options *o, struct vmheap_strbuf *out,
		 char *err, size_t errsz);

#endif /* HISTO_INTERNAL_H */
