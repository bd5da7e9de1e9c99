/*
 * replay-internal.h - vmheap-replay's parts and the one structure they
 * hand each other: the replay program.
 *
 * vmheap-replay (main.c) reads a malloc trace, checks it and turns it into
 * a replay program (program.c: one array of events per recorded thread,
 * each free or realloc naming the use of the block it ends, and one serial
 * order of all of them that respects every block's life).  The program is
 * written into a sealed memfd.  For each allocator a child,
 * vmheap-replay-engine (engine_main.c), is exec'ed with the allocator in
 * LD_PRELOAD; it maps the program read-only and replays it (engine.c),
 * with its own tables in mmap'ed memory, never from the allocator under
 * test, and writes a struct rp_result on a pipe.
 *
 * Errors: 0 or a negative VMHEAP_E... code (vmheap.h's values, repeated
 * here so that the engine needs no header of the format), the message in
 * the caller's err buffer: what is wrong first, then where.
 */
#ifndef VMHEAP_REPLAY_INTERNAL_H
#define VMHEAP_REPLAY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* The operations, as the engine replays them. */
enum rp_op {
	RP_MALLOC,
	RP_CALLOC,
	RP_REALLOC,
	RP_REALLOCARRAY,
	RP_FREE,
	RP_POSIX_MEMALIGN,
	RP_ALIGNED_ALLOC,
	RP_MEMALIGN,
	RP_VALLOC,
	RP_PVALLOC,
	RP_OP_COUNT
};

/* The name of an operation ("malloc", ...), or "?" */
const char *rp_op_name(unsigned op);

/*
 * One event of the program.  A block is a slot of the engine's table and
 * the use of that slot (0 for the first block that lived in it, then 1,
 * ...): the slot's state word is 2*use+1 while the block lives and 2*use+2
 * once it is freed, so an event that needs a block (or a free slot) waits
 * for exactly one value.
 *
 *  - malloc/calloc/memalign family: makes block (slot, use) of `size`
 *    bytes (calloc: the product, made as calloc(1, size)), aligned to
 *    1 << align_shift for the aligned ones;
 *  - free: ends block (slot, use);
 *  - realloc/reallocarray: ends block (old_slot, old_use) and makes
 *    (slot, use) of `size` bytes; the two may be the same slot (then use
 *    is old_use + 1).  realloc(NULL, n) comes as a malloc,
 *    realloc(p, 0) that freed p as a free.
 */
struct rp_event {
	uint64_t size;
	uint32_t slot, use;
	uint32_t old_slot, old_use;
	uint8_t op, align_shift;
	uint8_t pad[6];
};

#define RP_PROGRAM_MAGIC 0x31676f7270706572ull /* "repprog1" */

/* The program as it lies in the memfd: this header, then the threads,
 * the events (grouped by thread, each thread's in its recorded order) and
 * the serial order (indices into the events). */
struct rp_program {
	uint64_t magic;
	uint64_t bytes;	      /* of the whole mapping */
	uint32_t nthreads;    /* recorded threads that have events */
	uint32_t nslots;      /* entries of the engine's block table */
	uint64_t nevents;
	uint64_t threads_off; /* struct rp_thread[nthreads] */
	uint64_t events_off;  /* struct rp_event[nevents] */
	uint64_t serial_off;  /* uint64_t[nevents] */
	/* the program's live bytes (sum of the sizes of its live blocks) at
	 * the end and at their peak, in the serial order */
	uint64_t live_end, live_peak;
};

struct rp_thread {
	uint64_t first, count; /* events[first .. first + count) */
	uint32_t recorded;     /* its index in the trace */
	uint32_t pad;
};

/* The parts of a mapped program. */
static inline const struct rp_thread *rp_threads(const struct rp_program *p)
{
	return (const struct rp_thread *)((const char *)p + p->threads_off);
}
static inline const struct rp_event *rp_events(const struct rp_program *p)
{
	return (const struct rp_event *)((const char *)p + p->events_off);
}
static inline const uint64_t *rp_serial(const struct rp_program *p)
{
	return (const uint64_t *)((const char *)p + p->serial_off);
}

/* ------------------------------------------------------------ building */

/*
 * One event as the trace gives it, to the builder.  Blocks are the
 * trace's ids: a slot and its generation (the trace's counter of the
 * slot's uses, modulo gen_mask + 1: see rp_builder_begin).
 */
struct rp_input {
	uint32_t thread; /* dense index of the recorded thread */
	uint8_t op;	 /* enum rp_op */
	uint64_t slot, gen;	    /* the block made or freed */
	uint64_t old_slot, old_gen; /* realloc: the block it ends */
	uint64_t size;		    /* bytes made (calloc: the product) */
	uint64_t align;		    /* aligned ones: the alignment */
	uint64_t offset;	    /* where it lies in the trace (messages) */
};

/*
 * A source of events: next() fills *out and returns 1, 0 at the end, or a
 * negative code with a message in err; rewind() starts again (0 or
 * negative).  The builder reads the source twice.
 */
struct rp_source {
	int (*next)(void *ctx, struct rp_input *out, char *err, size_t errsz);
	int (*rewind)(void *ctx, char *err, size_t errsz);
	void *ctx;
	const char *name; /* the trace's name, for messages */
	/* the rule of generations: a slot's first block has generation
	 * first_gen, each next one the previous plus 1 modulo gen_mask + 1 */
	uint64_t first_gen, gen_mask;
};

/*
 * Build the program of `src` into a new sealed memfd.  Refuses, with the
 * trace's offset in the message, an event that names a thread, a slot or
 * an operation out of range, an alignment that is not a power of two, a
 * free of a block that is not live, and a trace whose events no order can
 * replay.  On success *fd is the memfd (the caller closes it) and *out a
 * copy of the program's header.
 */
int rp_build(const struct rp_source *src, int *fd, struct rp_program *out,
	     char *err, size_t errsz);

/* Map the program of `fd` read-only (MAP_POPULATE), checking its header
 * against the file's size.  Returns the mapping or NULL with err set. */
const struct rp_program *rp_program_map(int fd, char *err, size_t errsz);

/* Unmap it. */
void rp_program_unmap(const struct rp_program *p);

/* ------------------------------------------------------------ replaying */

/* What one replay measured (the engine's answer, written on a pipe). */
struct rp_result {
	uint64_t magic;	      /* RP_RESULT_MAGIC */
	int32_t status;	      /* 0, or a negative code: see message */
	uint32_t threads;     /* threads it replayed on */
	uint64_t ops;	      /* events replayed */
	uint64_t failures;    /* allocations the allocator refused */
	uint64_t wall_ns;     /* of the replay alone */
	uint64_t cpu_ns;      /* the process's CPU during it */
	uint64_t rss_base;    /* RSS before (the engine's own tables) */
	uint64_t rss_peak;    /* peak RSS during the replay, over rss_base */
	uint64_t rss_end;     /* RSS at the end, over rss_base */
	uint64_t live_end;    /* sum of the sizes of the live blocks at end */
	uint64_t live_deltas; /* the same, from each thread's running sum */
	char malloc_from[256]; /* the object that malloc resolved to */
	char message[256];
};
#define RP_RESULT_MAGIC 0x31746c7573657270ull /* "presult1" */

/*
 * Replay program `p` in this process: each thread's events on a thread of
 * its own (serial = 0) or all of them in the serial order on this thread
 * (serial = 1), writing each block's first byte (pages = 0) or one byte
 * of each 4 KiB page of it (pages = 1).  Fills *r (status 0, or a
 * negative code with r->message).  The block table and the threads'
 * stacks are mmap'ed; nothing of it comes from malloc.  The blocks still
 * live at the end stay allocated (the engine's process exits with them),
 * unless release is set (tests that replay in their own process).
 */
int rp_replay(const struct rp_program *p, int serial, int pages, int release,
	      struct rp_result *r);

/* The negative codes (vmheap.h's VMHEAP_E... values). */
#define RP_EIO (-1)
#define RP_ENOMEM (-2)
#define RP_EINVAL (-3)
#define RP_EFORMAT (-8)

#endif
