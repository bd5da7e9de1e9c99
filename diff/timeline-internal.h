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

#endif /* DIFF_TIMELINE_INTERNAL_H */
