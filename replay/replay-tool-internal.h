/*
 * replay-tool-internal.h - the parts of the vmheap-replay command: which
 * allocator library each --allocator names (allocators.c), one replay in
 * a child with it preloaded (child.c), and the table of the results
 * (render.c).
 */
#ifndef VMHEAP_REPLAY_TOOL_INTERNAL_H
#define VMHEAP_REPLAY_TOOL_INTERNAL_H

#include <limits.h>
#include <stdint.h>

#include "replay-internal.h"
#include "vmheap_report.h"

/* One allocator of the command line and, once run, what it measured. */
struct rp_row {
	char name[64];	     /* "glibc", "jemalloc", ..., or the file's name */
	char lib[PATH_MAX];  /* what LD_PRELOAD gets; "" for glibc */
	struct rp_result r;  /* the engine's answer */
	uint64_t live_peak;  /* the program's (the same for every row) */
};

/*
 * Resolve `arg` (glibc, jemalloc, tcmalloc, mimalloc, or the path of a
 * shared library: it holds a '/') into row->name and row->lib.  The named
 * ones are Debian's libjemalloc.so.2, libtcmalloc_minimal.so.4 and
 * libmimalloc.so.2, looked for in $VMHEAP_REPLAY_LIBDIR when it is set,
 * else in the directory of the C library and the usual lib directories.
 * Returns 1 when found, 0 when missing (why in `why`, for the skip
 * message), -1 for a name that is none of these (why says so).
 */
int rp_allocator_resolve(const char *arg, struct rp_row *row, char *why,
			 size_t whysz);

/*
 * Replay the program of `program_fd` in a child, vmheap-replay-engine
 * (`engine`: its path) with row->lib preloaded, on the recorded threads
 * or on one (serial), writing the first byte of each block or a byte of
 * each of its pages (pages).  Fills row->r.  Returns 0, or a negative code with
 * the message in err (the child could not start, died, or gave no
 * answer); a replay that ran but failed returns 0 with row->r.status set.
 */
int rp_child_replay(const char *engine, int program_fd, int serial,
		    int pages, struct rp_row *row, char *err, size_t errsz);

/* Append the rows as a table (best per column marked), JSON or CSV. */
void rp_render(struct vmheap_strbuf *sb, enum vmheap_output_format fmt,
	       const struct rp_row *rows, int n);

#endif
