/*
 * timeline-internal.h - vmheap-diff A B C ...: the class counts of three
 * or more dumps over time (timeline.c), and the time-order check that the
 * two-dump diff shares.
 */
#ifndef DIFF_TIMELINE_INTERNAL_H
#define DIFF_TIMELINE_INTERNAL_H

#include <stdint.h>

#include "diff-internal.h"

/* When the dump started, in milliseconds since the epoch: the header's
 * time_ms (format 1.1), else its time in seconds times 1000. */
int64_t diff_time_ms(const struct vmheap_header *h);

/*
 * Append to `w` a warning when dump `b` (named b_name, the later
 * argument) was taken before dump `a` (a_name): "vmheap-diff: warning:
 * NEW was taken 3.0 s before OLD ..." when `two` (OLD and NEW), else the
 * timeline's form naming both dumps' positions ia and ib (from 1).
 */
void diff_warn_order(struct vmheap_strbuf *w, int two, const char *a_name,
		     int ia, const struct vmheap_header *a, const char *b_name,
		     int ib, const struct vmheap_header *b);

/* The timeline of o->ndumps (3 or more) dumps, class by class: prints
 * it and returns the exit status (0, or 2 for an unreadable dump). */
int diff_timeline_main(const struct diff_options *o);

/* ------------------------------------------- what both timelines share */

/* One class or native site over the dumps. */
struct tl_row {
	const char *name; /* owned by a census or the native rows */
	uint64_t *count;  /* per dump */
	uint64_t *bytes;
	int64_t count_delta, bytes_delta; /* last minus first */
	int every; /* grew at every step: the count (a class), the live
		      bytes (a native site) */
};

struct timeline {
	size_t n; /* dumps */
	struct diff_dump *d; /* census NULL in a native timeline */
	int64_t *t_ms;
	int64_t span_ms; /* last minus first */
	struct tl_row *rows;
	size_t nrows;
	struct tl_row total;
	int native; /* rows are native sites (native.c), not classes */
};

/* One (name, dump) figure, before grouping by name. */
struct tl_entry {
	const char *name;
	size_t dump;
	uint64_t count, bytes;
};

/* tl->n, tl->d and tl->t_ms allocated for o->ndumps dumps, their paths
 * set.  0 or VMHEAP_ENOMEM (err set). */
int diff_timeline_alloc(const struct diff_options *o, struct timeline *tl,
			char *err, size_t errsz);

/* After every dump's reader and t_ms are set: span_ms, and the warnings
 * about the dumps' order and processes into w. */
void diff_timeline_check(struct timeline *tl, struct vmheap_strbuf *w);

/* Group the entries (any order; sorted here) by name into tl->rows, the
 * changed ones only, in the report's order: the two-dump diff's for
 * classes, most bytes_delta first for native sites; the total row from
 * the censuses, or for native sites the sum of every entry.  0 or
 * VMHEAP_ENOMEM. */
int diff_timeline_rows(struct timeline *tl, const struct diff_options *o,
		       struct tl_entry *e, size_t ne);

/* Render tl in o's format into out (out->failed when out of memory). */
void diff_timeline_render(const struct diff_options *o,
			  const struct timeline *tl, struct vmheap_strbuf *out);

/* Free what tl holds (not the native rows its names point into). */
void diff_timeline_release(struct timeline *tl);

#endif /* DIFF_TIMELINE_INTERNAL_H */
