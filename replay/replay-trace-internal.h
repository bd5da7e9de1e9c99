/*
 * replay-trace-internal.h - vmheap-replay's side of a malloc trace: the
 * trace reader of libvmheap (vmheap_trace.h) as a source of the program
 * builder (replay-internal.h).  The tool's alone: the engine never sees
 * the trace, only the program built from it.
 */
#ifndef VMHEAP_REPLAY_TRACE_INTERNAL_H
#define VMHEAP_REPLAY_TRACE_INTERNAL_H

#include "replay-internal.h"
#include "vmheap_trace.h"

struct rp_trace_source {
	struct rp_source src; /* give &src to rp_build */
	const char *path, *name;
	vmheap_trace_reader *r;
	struct vmheap_trace_info info; /* the header and trailer */
	uint64_t skipped; /* calls that made and freed nothing (free(NULL),
			   * failed allocations), left out */
};

/*
 * Open the trace at `path` (its header and trailer checked).  Returns 0
 * or a negative VMHEAP_E... code with the reader's message (what, the
 * file, the byte offset) in err.  Close it with rp_trace_source_close in
 * every case.
 */
int rp_trace_source_open(struct rp_trace_source *ts, const char *path,
			 char *err, size_t errsz);

void rp_trace_source_close(struct rp_trace_source *ts);

#endif
