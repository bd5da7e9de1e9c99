/*
 * record-internal.h - the recorder's pieces (format/TRACE.md section 8):
 *
 *   record.c         the calls encoded, each thread into a buffer of its
 *                    own: thread states, block ids, the shared pool
 *   record_ids.c     address -> block id of the live recorded blocks,
 *                    and each slot's size
 *   record_fence.c   the asymmetric fence between recording threads and
 *                    the end or a growing table
 *   record_writer.c  the buffers, the queue, the writer thread, the file
 *                    and the end (trailer, end record)
 *
 * interpose.c calls native_record_* while native_recording is set.
 */
#ifndef VMHEAP_RECORD_INTERNAL_H
#define VMHEAP_RECORD_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "vmheap_trace_encode.h"

#define REC_RING 4096u	    /* R: a thread's ring */
#define REC_RING_MIN 1024u  /* M */
#define REC_BATCH 256u	    /* B */
#define REC_BUF_BYTES 65536u /* a buffer: chunk head, payload, CRC */
#define REC_PAYLOAD                                                      \
	(REC_BUF_BYTES - VMHEAP_TRACE_CHUNK_HEAD - VMHEAP_TRACE_CHUNK_CRC)
#define REC_QUEUE_MAX 64u	/* buffers queued before a thread waits */
#define REC_MAX_THREADS 16384u /* thread states at once */
/* A thread reads the clock at its first event, at each new buffer, and
 * then once its events took this many bytes (about 16 events). */
#define REC_CLOCK_BYTES 64u

/* A buffer: one chunk being filled, then queued for the writer. */
struct rec_buf {
	struct rec_buf *next;
	uint32_t thread, count, len; /* len: payload bytes so far */
	uint8_t *mem;		     /* REC_BUF_BYTES, from native_pages */
};
#define REC_PAYLOAD_OF(b) ((b)->mem + VMHEAP_TRACE_CHUNK_HEAD)
#define REC_AT(b) (REC_PAYLOAD_OF(b) + (b)->len)

/* A recording thread's state (one per thread alive at once; a thread
 * that exits leaves it, and its index, to the next). */
struct rec_thread {
	_Atomic int in_use; /* inside a call's recording */
	_Atomic int
	    parked; /* inside, waiting to grow the table (record_ids.c) */
	uint32_t index;
	/* Where the next item goes in buf's payload; the end of the room
	 * for one event with its control items (at >= room: the buffer is
	 * full); where the clock is read next (REC_CLOCK_BYTES after the
	 * last reading, at most room): one compare, at >= mark, finds both.
	 * All NULL without a buffer.  buf's len and count are set from
	 * them when it leaves the thread (native_record_sync). */
	uint8_t *at, *mark, *room;
	uint64_t events;     /* recorded by the thread */
	uint64_t buf_events; /* events when buf was taken */
	struct vmheap_trace_stream st;
	struct rec_buf *buf;
	uint64_t untracked;
	uint32_t slots_hi; /* highest slot named + 1 */
	struct rec_thread *next_free;
	uint64_t ring[REC_RING];
	uint64_t dropped[REC_RING / 2];
};

struct rec_global {
	char path[4096];	 /* VMHEAP_NATIVE_RECORD as given */
	uint64_t start_mono_us;	 /* CLOCK_MONOTONIC_COARSE at the start */
	uint64_t start_unix_us;
	int forked;		 /* this process is a forked child */
	_Atomic uint32_t next_slot;
	/* states made (under record.c's lock; threads[i] is set before
	 * nthreads passes i) */
	_Atomic uint32_t nthreads;
	struct rec_thread *threads[REC_MAX_THREADS];
	_Atomic uint64_t stalls;
};

extern struct rec_global native_rec;
extern _Atomic int native_recording;

/* record.c */
struct rec_old {
	struct rec_thread *thread; /* NULL: not recording this call */
	int found;
	uint64_t id;
};
void native_record_alloc(unsigned op, void *p, uint64_t size, uint64_t nmemb,
			 uint64_t elsize, uint64_t align);
/* malloc(size) returned p: native_record_alloc's common case, shorter. */
void native_record_malloc(void *p, uint64_t size);
void native_record_free(void *p);
/* t's buffer's len and count from t->at and t->events (before the
 * buffer leaves the thread; with t outside its call or t's own). */
void native_record_sync(struct rec_thread *t);
/* Around a realloc of p: begin takes p's id out of the table (before the
 * block can be freed and its address given to another thread), end
 * records the call with its result q.  end must follow every begin that
 * returned 1. */
int native_record_realloc_begin(void *p, struct rec_old *old);
void native_record_realloc_end(unsigned op, const struct rec_old *old,
			       void *p, void *q, uint64_t size, uint64_t nmemb,
			       uint64_t elsize);
int native_record_thread_key(void);
uint64_t native_record_now_us(void);
void native_record_after_fork(void);

/* record_fence.c: membarrier's registration (at the start), and the rare
 * side's fence against the recording threads (record_fence.c says why);
 * the threads use a compiler barrier when native_rec_asymmetric is set,
 * a seq_cst store otherwise. */
extern int native_rec_asymmetric;
void native_record_fences(void);
void native_record_fence_end(void);

/* What a call's recording stops at or waits for, read once by each
 * call after it set its in_use (record_fence.c's pair): 0 while
 * recording runs; REC_GATE_OFF once it stopped for good (set with
 * native_recording cleared); REC_GATE_GROWING while a stripe of
 * record_ids.c grows (a thread that finds it clears its in_use and
 * waits, native_rec_ids_wait_growth, before it goes on). */
#define REC_GATE_OFF 1
#define REC_GATE_GROWING 2
extern _Atomic int native_rec_gate;

/* record_ids.c */
void native_rec_ids_wait_growth(void);
/* insert's size that leaves the slot's size as it is (a block put back). */
#define REC_SIZE_KEEP UINT64_MAX
/* addr's id is id and its slot's size is size, from thread me (inside
 * its call: it may park there while the table grows): 1 when an entry
 * for addr was there already (its id in *stale_id: replaced), 0, or -1
 * without memory or when recording stopped. */
int native_rec_ids_insert(struct rec_thread *me, uint64_t addr, uint64_t id,
			  uint64_t size, uint64_t *stale_id);
/* The id of addr's entry, removed, or REC_ID_NONE when addr was not
 * there (no block has it: its slot would be VMHEAP_TRACE_NONE). */
#define REC_ID_NONE UINT64_MAX
uint64_t native_rec_ids_remove(uint64_t addr);
/* Live blocks and their sizes summed, with no thread inside a call. */
void native_rec_ids_sum(uint64_t *blocks, uint64_t *bytes);
void native_rec_ids_clear(void);
/* Around fork(): no table grows across it. */
void native_rec_ids_lock(void);
void native_rec_ids_unlock(void);

/* record_writer.c */
/* Queue `full` (when it holds events) for thread `thread` and return an
 * empty buffer; waits while REC_QUEUE_MAX buffers are queued; NULL when
 * recording stopped or no memory is left. */
struct rec_buf *native_rec_handoff(struct rec_buf *full, uint32_t thread);
/* Stop recording for good, with one message on stderr naming why. */
void native_rec_stop(const char *why);
/* From the constructor: VMHEAP_NATIVE_RECORD's trace begins. */
void native_record_start(const char *path);
/* At exit: every buffer written, then the trailer and the end record. */
void native_record_finish(void);
/* Around fork(). */
void native_record_fork_prepare(void);
void native_record_fork_parent(void);
void native_record_fork_child(void);

#endif
