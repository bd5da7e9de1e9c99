/*
 * vmheap_trace.h - libvmheap's reader of malloc traces.
 *
 * A malloc trace is what `vmheap-run --record TRACE COMMAND` writes: every
 * malloc-family call of the program, with its thread, sizes, alignment, a
 * block id instead of the address, and a coarse time.  The format is
 * specified in format/TRACE.md (normative); this header is the C interface
 * of its reader.  The encoder the recorder uses is
 * format/vmheap_trace_encode.h.
 *
 * Conventions (those of vmheap.h)
 * -------------------------------
 *  - Functions return 0 (or 1 where documented) on success and a negative
 *    VMHEAP_E... code of vmheap.h on failure; vmheap_strerror() names it.
 *  - The reader is opaque and keeps the message of its last error, which
 *    says what is wrong first and then where (the file, the byte offset):
 *    vmheap_trace_error().  It returns "" for NULL or when there was no
 *    error, and stays valid until the next call on the reader or its free.
 *  - A failed open sets *out either to NULL (only for a NULL `out`, which
 *    is refused with VMHEAP_EINVAL) or to a failed reader that holds the
 *    reason and is good only for vmheap_trace_error() and
 *    vmheap_trace_free().  vmheap_trace_free() accepts NULL.
 *  - The library never prints and never exits.  A reader is used by one
 *    thread at a time.
 *
 * Reading
 * -------
 *	vmheap_trace_reader *r;
 *	struct vmheap_trace_event ev;
 *	int rc = vmheap_trace_open_path(&r, "app.trace");
 *	if (rc == 0) {
 *		const struct vmheap_trace_info *in = vmheap_trace_info(r);
 *		// in->threads, in->events, in->slots: size the tables now
 *		while ((rc = vmheap_trace_next(r, &ev)) > 0) { ... }
 *	}
 *	if (rc < 0) fprintf(stderr, "%s\n", vmheap_trace_error(r));
 *	vmheap_trace_free(r);
 *
 * Whole or refused: vmheap_trace_open_* checks the header and the
 * trailer (both checksums) before it returns, so a trace cut anywhere is
 * refused at open with the offset where it ends.  vmheap_trace_next()
 * checks each chunk's checksum before it hands out the chunk's first event
 * and returns 0 only after every count of the trailer matched what was
 * decoded (events, threads, slots, and the live blocks and bytes at the
 * end).  A replayer that must never act on a damaged trace reads it whole
 * (into its own tables) before it replays any of it.
 *
 * Memory: the reader maps the file (mmap, read only) and keeps, with
 * malloc, 16 bytes per slot (the live check) and the state of each
 * thread's stream (8 bytes per entry of the ring, TRACE.md section 6).
 */
#ifndef VMHEAP_TRACE_H
#define VMHEAP_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The trace format version this library reads and writes. */
#define VMHEAP_TRACE_MAJOR 1
#define VMHEAP_TRACE_MINOR 0

/* The operations (TRACE.md section 5).  The values are the format's. */
enum vmheap_trace_op {
	VMHEAP_TRACE_MALLOC = 1,
	VMHEAP_TRACE_CALLOC = 2,
	VMHEAP_TRACE_REALLOC = 3,
	VMHEAP_TRACE_REALLOCARRAY = 4,
	VMHEAP_TRACE_FREE = 5,
	VMHEAP_TRACE_POSIX_MEMALIGN = 6,
	VMHEAP_TRACE_ALIGNED_ALLOC = 7,
	VMHEAP_TRACE_MEMALIGN = 8,
	VMHEAP_TRACE_VALLOC = 9,
	VMHEAP_TRACE_PVALLOC = 10,
};
#define VMHEAP_TRACE_OP_MAX 10

/* The slot of no block (a NULL pointer). */
#define VMHEAP_TRACE_NONE UINT32_MAX

/*
 * A block id: a dense slot (0 .. slots-1, so a replayer keeps arrays
 * indexed by slot) and the slot's generation.  The blocks that take one
 * slot in turn have generations 0, 1, 2, ...: a slot's generation g+1 is
 * allocated only after its generation g was freed, so a free of (s, g)
 * frees exactly the block that the allocation of (s, g) made, however the
 * threads interleave.  slot == VMHEAP_TRACE_NONE (gen 0) is NULL.
 */
struct vmheap_trace_block {
	uint32_t slot;
	uint32_t gen;
};

/* One malloc-family call. */
struct vmheap_trace_event {
	uint64_t offset;     /* byte offset of the event in the file */
	uint64_t time_us;    /* coarse time, microseconds since the start */
	uint32_t thread;     /* the recording thread, 0 .. threads-1 */
	uint8_t op;	     /* enum vmheap_trace_op */
	/* The block the call returned (NONE: it returned NULL or failed);
	 * for free, the block it freed (NONE: free(NULL)). */
	struct vmheap_trace_block block;
	/* realloc, reallocarray: the block passed in (NONE: NULL passed,
	 * the call was a malloc).  It was freed when `block` is not NONE,
	 * or when `size` is 0 (glibc's realloc(p, 0) frees p and returns
	 * NULL); else (the call failed) it is still live.  NONE for the
	 * other operations. */
	struct vmheap_trace_block old_block;
	/* Bytes asked: calloc and reallocarray the product of nmemb and
	 * elsize (UINT64_MAX when it overflows), 0 for free. */
	uint64_t size;
	/* calloc, reallocarray: the two factors; 0 otherwise. */
	uint64_t nmemb, elsize;
	/* posix_memalign, aligned_alloc, memalign: the alignment asked
	 * (memalign takes any value; glibc rounds it up to a power of
	 * two); 0 otherwise (valloc and pvalloc align to the page). */
	uint64_t align;
};

/* trailer flags (TRACE.md section 7) */
#define VMHEAP_TRACE_FLAG_FORKED 1u /* written by a forked child: blocks
				     * inherited from the parent were left
				     * out (their frees are untracked) */

/* What the header and the trailer say, checked at open. */
struct vmheap_trace_info {
	uint32_t major, minor;
	uint32_t pid;		/* of the recorded process */
	uint64_t start_unix_us; /* when recording began, since the epoch */
	uint32_t ring, ring_min, batch; /* the slot rules (section 6) */
	uint64_t events;	/* events in the trace (control items not
				 * counted) */
	uint32_t threads;	/* thread indexes 0 .. threads-1 */
	uint32_t slots;		/* slot numbers 0 .. slots-1 */
	/* The truth at the end: the blocks the recorded process had live
	 * (allocated and not freed, among the recorded ones) when the
	 * recording ended, and their requested bytes.  The reader checks
	 * that the events give the same. */
	uint64_t live_blocks, live_bytes;
	uint64_t end_time_us;	  /* the time of the end, since the start */
	uint64_t untracked_frees; /* frees and reallocs of blocks the trace
				   * does not hold (made before recording
				   * began): left out, or realloc'd as from
				   * NULL */
	uint64_t stalls;	  /* times a program thread waited for the
				   * writer (section 8) */
	uint32_t flags;		  /* VMHEAP_TRACE_FLAG_* */
	uint64_t file_size;
};

typedef struct vmheap_trace_reader vmheap_trace_reader;

/*
 * Open the trace at `path` (read only) and check its header and trailer.
 * Returns 0; or VMHEAP_EIO (cannot open or map), VMHEAP_EMAGIC (not a
 * trace), VMHEAP_EVERSION (a newer major version), VMHEAP_ETRUNCATED (the
 * file ends early: no end record, or the trailer is not where the end
 * record says), VMHEAP_ECHECKSUM, VMHEAP_EFORMAT, VMHEAP_ELIMIT (a count
 * beyond what the file's size allows), VMHEAP_ENOMEM.  See the rule for
 * failed constructors above; *out owns the mapping and the file.
 */
VMHEAP_EXPORT int vmheap_trace_open_path(vmheap_trace_reader **out,
					 const char *path);

/* The same on an open file (mapped; the caller keeps and closes fd). */
VMHEAP_EXPORT int vmheap_trace_open_fd(vmheap_trace_reader **out, int fd,
				       const char *name);

/* The same on bytes in memory, which the caller keeps until the free
 * (tests, fuzzing).  `name` is used in messages (NULL: "trace"). */
VMHEAP_EXPORT int vmheap_trace_open_mem(vmheap_trace_reader **out,
					const void *data, size_t len,
					const char *name);

/* What the header and trailer say (valid after a successful open, until
 * the free). */
VMHEAP_EXPORT const struct vmheap_trace_info *
vmheap_trace_info(const vmheap_trace_reader *r);

/*
 * The next event, in file order (each thread's events are in the order
 * its calls were made; the threads' chunks interleave in the order they
 * were written).  Returns 1 and fills *ev; 0 at the end, after every
 * count of the trailer was matched; or a negative code (VMHEAP_EFORMAT,
 * VMHEAP_ECHECKSUM, VMHEAP_ETOTALS, VMHEAP_ELIMIT) with the message,
 * which names the byte offset.  After an error or the end it returns the
 * same again.
 */
VMHEAP_EXPORT int vmheap_trace_next(vmheap_trace_reader *r,
				    struct vmheap_trace_event *ev);

/* The message of the reader's last error ("" when none, or for NULL). */
VMHEAP_EXPORT const char *vmheap_trace_error(const vmheap_trace_reader *r);

/* The name of an operation ("malloc", ...), "?" when unknown. */
VMHEAP_EXPORT const char *vmheap_trace_op_name(unsigned op);

/* Unmap, close (what open_path opened) and free.  NULL is fine. */
VMHEAP_EXPORT void vmheap_trace_free(vmheap_trace_reader *r);

#ifdef __cplusplus
}
#endif

#endif /* VMHEAP_TRACE_H */
