/*
 * trace_stat.c - one line about a malloc trace, read whole through
 * libvmheap's reader (make bench-record): its events, bytes, bytes per
 * event, threads, and the calls that allocate.  Exits 1 (with the
 * reader's message) on a trace that does not read whole.
 *
 * usage: trace_stat TRACE
 */
#include <inttypes.h>
#include <stdio.h>

#include "vmheap_trace.h"

int main(int argc, char **argv)
{
	vmheap_trace_reader *r = NULL;
	struct vmheap_trace_event ev;
	uint64_t allocs = 0;
	if (argc != 2) {
		fprintf(stderr, "usage: trace_stat TRACE\n");
		return 2;
	}
	int rc = vmheap_trace_open_path(&r, argv[1]);
	if (rc == 0)
		while ((rc = vmheap_trace_next(r, &ev)) > 0)
			allocs += ev.op != VMHEAP_TRACE_FREE;
	if (rc < 0) {
		fprintf(stderr, "trace_stat: %s\n", vmheap_trace_error(r));
		vmheap_trace_free(r);
		return 1;
	}
	const struct vmheap_trace_info *in = vmheap_trace_info(r);
	printf("events %" PRIu64 " bytes %" PRIu64 " per_event %.2f threads %u "
	       "allocs %" PRIu64 " live_bytes %" PRIu64 "\n",
	       in->events, in->file_size,
	       in->events ? (double)in->file_size / (double)in->events : 0.0,
	       in->threads, allocs, in->live_bytes);
	vmheap_trace_free(r);
	return 0;
}
