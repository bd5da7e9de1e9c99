/*
 * record.c - recording the program's malloc-family calls into a trace
 * (format/TRACE.md; `vmheap-run --record`).
 *
 * Each thread encodes its calls into a buffer of its own, with no lock:
 * its state (record_writer.c hands out the buffers and writes them) holds
 * the stream of TRACE.md section 6 (ring, batch, previous slot, time),
 * kept with vmheap_trace_encode.h as the reader keeps it.  A block's id
 * comes from the thread's ring (ids of blocks that ended in the thread,
 * reused once M of them wait), else from the shared pool (slots that
 * other threads' full rings dropped), else from the thread's fresh batch
 * of slots; the address -> id map is record_ids.c.
 *
 * A thread's `in_use` is set while it records one call, table and buffer
 * together; the end (native_record_finish) turns recording off and waits
 * until no thread is inside, so that the table and the events agree when
 * the trailer is written.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "native-internal.h"
#include "record-internal.h"

_Atomic int native_recording;

struct rec_global native_rec;

static __thread struct rec_thread *me
	NATIVE_TLS;
/* This thread is vmheap's own (vmheap_native_own_thread). */
static __thread int own NATIVE_TLS;

VMHEAP_EXPORT void vmheap_native_own_thread(void)
{
	own = 1;
}

/* ------------------------------------------------------------- the pool */

static _Atomic int pool_lock;
static uint64_t *pool;
static _Atomic size_t pool_n; /* changed under pool_lock */
static size_t pool_cap;

static void pool_acquire(void)
{
	while (atomic_exchange_explicit(&pool_lock, 1, memory_order_acquire))
		while (atomic_load_explicit(&pool_lock, memory_order_relaxed))
			__builtin_ia32_pause();
}

static void pool_release(void)
{
	atomic_store_explicit(&pool_lock, 0, memory_order_release);
}

/* Give n dropped ids to the pool (ids the pool cannot keep for want of
 * memory are lost: their slots are never used again). */
static void pool_give(const uint64_t *ids, size_t n)
{
	pool_acquire();
	if (pool_n + n > pool_cap) {
		size_t cap = pool_cap ? pool_cap * 2 : 65536;
		while (cap < pool_n + n)
			cap *= 2;
		uint64_t *p = native_pages(cap * sizeof *p);
		if (p != NULL) {
			if (pool != NULL)
				memcpy(p, pool, pool_n * sizeof *p);
			native_pages_free(pool, pool_cap * sizeof *p);
			pool = p;
			pool_cap = cap;
		}
	}
	for (size_t i = 0; i < n && pool_n < pool_cap; i++)
		pool[pool_n++] = ids[i];
	pool_release();
}

static int pool_take(uint64_t *id)
{
	if (atomic_load_explicit(&pool_n, memory_order_relaxed) == 0)
		return 0;
	int got = 0;
	pool_acquire();
	if (pool_n > 0) {
		*id = pool[--pool_n];
		got = 1;
	}
	pool_release();
	return got;
}

/* ------------------------------------------------------ thread states */

static pthread_key_t exit_key;
static pthread_mutex_t states_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rec_thread *free_states;

/* The thread's exit: its buffer goes to the writer, its state (and its
 * index) to the next thread that starts recording. */
static void thread_exit(void *arg)
{
	struct rec_thread *t = arg;
	if (t == NULL || t != me)
		return;
	atomic_store(&t->in_use, 1);
	if (atomic_load(&native_recording) && t->buf != NULL &&
	    t->buf->len > 0)
		t->buf = native_rec_handoff(t->buf, t->index);
	atomic_store_explicit(&t->in_use, 0, memory_order_release);
	/* What the thread frees or allocates after this (glibc's own exit
	 * path does) is not recorded: a new state here would stay with the
	 * dead thread, and every later thread would need one more. */
	own = 1;
	me = NULL;
	pthread_mutex_lock(&states_lock);
	t->next_free = free_states;
	free_states = t;
	pthread_mutex_unlock(&states_lock);
}

static __attribute__((noinline)) struct rec_thread *new_state(void)
{
	struct rec_thread *t = NULL;
	pthread_mutex_lock(&states_lock);
	if (free_states != NULL) {
		t = free_states;
		free_states = t->next_free;
	} else if (native_rec.nthreads < REC_MAX_THREADS) {
		t = native_pages(sizeof *t);
		if (t != NULL) {
			t->index = native_rec.nthreads;
			t->st.ids = t->ring;
			t->st.cap = REC_RING;
			t->st.min = REC_RING_MIN;
			native_rec.threads[t->index] = t;
			atomic_store_explicit(&native_rec.nthreads,
					      t->index + 1,
					      memory_order_release);
		}
	}
	pthread_mutex_unlock(&states_lock);
	if (t == NULL) {
		native_rec_stop("no memory for one more thread's state");
		return NULL;
	}
	me = t;
	pthread_setspecific(exit_key, t);
	return t;
}

/* ------------------------------------------------------------- events */

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	uint64_t us = (uint64_t)ts.tv_sec * 1000000u +
		      (uint64_t)ts.tv_nsec / 1000u;
	return us > native_rec.start_mono_us
		       ? us - native_rec.start_mono_us
		       : 0;
}

/*
 * Enter: the thread's state with in_use set and room in its buffer for
 * one event, or NULL (not recording, or no memory).  The end (which
 * clears native_recording) and a growing table (which sets
 * native_rec_ids_growing) then wait for in_use to clear: the thread's
 * side of record_fence.c's Dekker pair.
 */
static inline __attribute__((always_inline)) struct rec_thread *enter(void)
{
	struct rec_thread *t = me;
	if (__builtin_expect(t == NULL, 0) &&
	    (own || (t = new_state()) == NULL))
		return NULL;
	for (;;) {
		if (__builtin_expect(native_rec_asymmetric, 1)) {
			atomic_store_explicit(&t->in_use, 1,
					      memory_order_relaxed);
			atomic_signal_fence(memory_order_seq_cst);
		} else {
			atomic_store(&t->in_use, 1);
		}
		if (!atomic_load_explicit(&native_recording,
					  memory_order_relaxed)) {
			atomic_store_explicit(&t->in_use, 0,
					      memory_order_release);
			return NULL;
		}
		if (__builtin_expect(
			!atomic_load_explicit(&native_rec_ids_growing,
					      memory_order_acquire),
			1))
			break;
		atomic_store_explicit(&t->in_use, 0, memory_order_release);
		native_rec_ids_wait_growth();
	}
	if (__builtin_expect(t->buf == NULL ||
				     t->buf->len + VMHEAP_TRACE_ITEM_MAX * 2 >
					     REC_PAYLOAD,
			     0)) {
		t->buf = native_rec_handoff(t->buf, t->index);
		if (t->buf == NULL) {
			atomic_store_explicit(&t->in_use, 0,
					      memory_order_release);
			return NULL;
		}
		t->buf->thread = t->index;
	}
	/* The coarse clock moves once a kernel tick: read it every 16th
	 * event of the thread (and at its first). */
	if ((t->tick++ & 15) != 0)
		return t;
	uint64_t now = now_us();
	if (now != t->st.time_us) {
		uint8_t *p = REC_AT(t->buf);
		p = vmheap_trace_put_time(p, now - t->st.time_us);
		t->buf->len = (uint32_t)(p - REC_PAYLOAD_OF(t->buf));
		t->st.time_us = now;
	}
	return t;
}

static inline void leave(struct rec_thread *t)
{
	atomic_store_explicit(&t->in_use, 0, memory_order_release);
}

static inline void put(struct rec_thread *t,
		       const struct vmheap_trace_event *ev, unsigned source)
{
	uint8_t *p = vmheap_trace_put_event(REC_AT(t->buf), &t->st, ev, source);
	t->buf->len = (uint32_t)(p - REC_PAYLOAD_OF(t->buf));
	t->buf->count++;
	t->events++;
}

/* The block (slot, gen) ended in thread t: into its ring. */
static inline void ended(struct rec_thread *t, uint64_t id)
{
	if (vmheap_trace_ring_put(&t->st, id, t->dropped) != 0)
		pool_give(t->dropped, REC_RING / 2);
}

/* An id for a new block, and its source. */
static inline unsigned new_id(struct rec_thread *t, struct vmheap_trace_block *b)
{
	uint64_t id;
	if (t->st.count >= t->st.min) {
		id = vmheap_trace_ring_take(&t->st);
		b->slot = (uint32_t)(id >> 32);
		b->gen = (uint32_t)id + 1;
		return 0;
	}
	if (pool_take(&id)) {
		b->slot = (uint32_t)(id >> 32);
		b->gen = (uint32_t)id + 1;
		return VMHEAP_TRACE_F_EXPLICIT;
	}
	if (t->st.batch_next == t->st.batch_end) {
		uint32_t first = atomic_fetch_add(&native_rec.next_slot,
						  REC_BATCH);
		uint8_t *p = vmheap_trace_put_batch(REC_AT(t->buf), first);
		t->buf->len = (uint32_t)(p - REC_PAYLOAD_OF(t->buf));
		t->st.batch_next = first;
		t->st.batch_end = first + REC_BATCH;
	}
	b->slot = t->st.batch_next++;
	b->gen = 0;
	return VMHEAP_TRACE_F_BATCH;
}

/* The new block p (not NULL) of event ev: its id, the event, and the
 * free of a block that had p's address and whose free the recorder did
 * not see (freed past it: its own guard, a library bound to glibc). */
static inline __attribute__((always_inline)) void
began(struct rec_thread *t, struct vmheap_trace_event *ev, void *p)
{
	unsigned source = new_id(t, &ev->block);
	uint64_t id = vmheap_trace_id(ev->block.slot, ev->block.gen);
	uint64_t stale;
	if (ev->block.slot + 1 > t->slots_hi)
		t->slots_hi = ev->block.slot + 1;
	/* The event first: the table's line, asked for at the call's
	 * start, arrives meanwhile. */
	put(t, ev, source);
	int r = native_rec_ids_insert(t, (uint64_t)(uintptr_t)p, id, ev->size,
				      &stale);
	if (r == 1) {
		struct vmheap_trace_event f = {0};
		f.op = VMHEAP_TRACE_FREE;
		f.block.slot = (uint32_t)(stale >> 32);
		f.block.gen = (uint32_t)stale;
		put(t, &f, 0);
		ended(t, stale);
	} else if (r < 0) {
		native_rec_stop("no memory for the table of live blocks");
	}
}

void native_record_alloc(unsigned op, void *p, uint64_t size, uint64_t nmemb,
			 uint64_t elsize, uint64_t align)
{
	native_rec_ids_prefetch((uint64_t)(uintptr_t)p);
	struct rec_thread *t = enter();
	if (t == NULL)
		return;
	struct vmheap_trace_event ev;
	ev.op = (uint8_t)op;
	ev.size = size;
	ev.nmemb = nmemb;
	ev.elsize = elsize;
	ev.align = align;
	ev.old_block.slot = VMHEAP_TRACE_NONE;
	if (p == NULL) {
		ev.block.slot = VMHEAP_TRACE_NONE;
		put(t, &ev, 0);
	} else {
		began(t, &ev, p);
	}
	leave(t);
}

void native_record_free(void *p)
{
	native_rec_ids_prefetch((uint64_t)(uintptr_t)p);
	struct rec_thread *t = enter();
	if (t == NULL)
		return;
	struct vmheap_trace_event ev;
	ev.op = VMHEAP_TRACE_FREE;
	uint64_t id;
	if (p == NULL) {
		ev.block.slot = VMHEAP_TRACE_NONE;
		put(t, &ev, 0);
	} else if (native_rec_ids_remove((uint64_t)(uintptr_t)p, &id)) {
		ev.block.slot = (uint32_t)(id >> 32);
		ev.block.gen = (uint32_t)id;
		put(t, &ev, 0);
		ended(t, id);
	} else {
		t->untracked++;
	}
	leave(t);
}

/* Not inlined into interpose.c's realloc (LTO): gcc -O1 then reads the
 * record's fields as maybe uninitialized where it cannot see that they
 * are only read after a begin that returned 1. */
__attribute__((noinline)) int native_record_realloc_begin(void *p,
							  struct rec_old *old)
{
	old->thread = NULL;
	old->found = 0;
	struct rec_thread *t = enter();
	if (t == NULL)
		return 0;
	old->thread = t; /* in_use stays set until the end */
	if (p != NULL)
		old->found =
		    native_rec_ids_remove((uint64_t)(uintptr_t)p, &old->id);
	if (p != NULL && !old->found)
		t->untracked++;
	return 1;
}

__attribute__((noinline)) void
native_record_realloc_end(unsigned op, const struct rec_old *old, void *p,
			  void *q, uint64_t size, uint64_t nmemb,
			  uint64_t elsize)
{
	struct rec_thread *t = old->thread;
	if (t == NULL)
		return;
	struct vmheap_trace_event ev;
	ev.op = (uint8_t)op;
	ev.size = size;
	ev.nmemb = nmemb;
	ev.elsize = elsize;
	ev.align = 0;
	ev.old_block.slot = VMHEAP_TRACE_NONE;
	ev.old_block.gen = 0;
	if (old->found) {
		ev.old_block.slot = (uint32_t)(old->id >> 32);
		ev.old_block.gen = (uint32_t)old->id;
	}
	if (q == NULL) {
		ev.block.slot = VMHEAP_TRACE_NONE;
		put(t, &ev, 0);
		if (old->found && size != 0) { /* failed: p is still live */
			uint64_t s1;
			if (native_rec_ids_insert(t, (uint64_t)(uintptr_t)p,
						  old->id, REC_SIZE_KEEP,
						  &s1) < 0)
				native_rec_stop("no memory for the table of "
						"live blocks");
		} else if (old->found) {
			ended(t, old->id);
		}
	} else {
		/* The old block ends first: its id may name the new one. */
		if (old->found)
			ended(t, old->id);
		began(t, &ev, q);
	}
	leave(t);
}

/* ------------------------------------------------------- start, fork */

int native_record_thread_key(void)
{
	return pthread_key_create(&exit_key, thread_exit);
}

uint64_t native_record_now_us(void)
{
	return now_us();
}

/* The child of a fork: one thread, a trace of its own from here. */
void native_record_after_fork(void)
{
	struct rec_thread *keep = me;
	for (uint32_t i = 0; i < native_rec.nthreads; i++) {
		struct rec_thread *t = native_rec.threads[i];
		if (t != keep)
			native_pages_free(t, sizeof *t);
	}
	atomic_store(&native_rec.nthreads, 0);
	free_states = NULL;
	pool_n = 0;
	atomic_store(&pool_lock, 0);
	pthread_mutex_init(&states_lock, NULL);
	native_rec_ids_clear();
	atomic_store(&native_rec.next_slot, 0);
	if (keep != NULL) {
		struct rec_buf *b = keep->buf;
		memset(keep, 0, sizeof *keep);
		keep->st.ids = keep->ring;
		keep->st.cap = REC_RING;
		keep->st.min = REC_RING_MIN;
		keep->buf = b;
		if (b != NULL)
			b->len = b->count = b->thread = 0;
		native_rec.threads[0] = keep;
		atomic_store(&native_rec.nthreads, 1);
	}
}
