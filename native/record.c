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
_Atomic int native_rec_gate = REC_GATE_OFF;

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

static int refill(struct rec_thread *t);

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
	/* The handoff may start the writer thread, whose pthread_create
	 * allocates (the tracker's own: not recorded, and never into the
	 * buffer being handed off). */
	native_guard_hold();
	atomic_store(&t->in_use, 1);
	if (atomic_load(&native_recording) && t->buf != NULL &&
	    t->at > REC_PAYLOAD_OF(t->buf) && refill(t) == 0)
		t->mark = t->at; /* the next thread reads the clock first */
	atomic_store_explicit(&t->in_use, 0, memory_order_release);
	native_guard_drop();
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

/* ----------------------------------------------------------- buffers */

void native_record_sync(struct rec_thread *t)
{
	if (t->buf == NULL)
		return;
	t->buf->len = (uint32_t)(t->at - REC_PAYLOAD_OF(t->buf));
	t->buf->count = (uint32_t)(t->events - t->buf_events);
}

/* t's buffer is full (or t has none): to the writer, and an empty one
 * in its place; 0, or -1 (recording stopped). */
static __attribute__((noinline)) int refill(struct rec_thread *t)
{
	native_record_sync(t);
	t->buf = native_rec_handoff(t->buf, t->index);
	if (t->buf == NULL) {
		t->at = t->room = NULL;
		return -1;
	}
	t->buf->thread = t->index;
	t->at = REC_PAYLOAD_OF(t->buf);
	t->room = t->at + REC_PAYLOAD - VMHEAP_TRACE_ITEM_MAX * 2;
	t->buf_events = t->events;
	return 0;
}

/* t->at reached t->mark: a new buffer when this one is full, and the
 * clock read (a time item when it moved); 0, or -1 (recording
 * stopped). */
static __attribute__((noinline)) int at_mark(struct rec_thread *t)
{
	if (t->at >= t->room && refill(t) != 0) {
		t->mark = NULL;
		return -1;
	}
	uint64_t now = now_us();
	if (now != t->st.time_us) {
		t->at = vmheap_trace_put_time(t->at, now - t->st.time_us);
		t->st.time_us = now;
	}
	/* At most room: past it (the time item may end there), the next
	 * call hands the buffer off.  The room keeps VMHEAP_TRACE_ITEM_MAX
	 * twice, for this call's items. */
	t->mark = t->at + REC_CLOCK_BYTES < t->room ? t->at + REC_CLOCK_BYTES
						    : t->room;
	return 0;
}

/*
 * Enter: the thread's state with in_use set and room in its buffer for
 * one event, or NULL (not recording, or no memory).  The end and a
 * growing table (which set native_rec_gate's bits) then wait for in_use
 * to clear: the thread's side of record_fence.c's Dekker pair.
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
		int gate = atomic_load_explicit(&native_rec_gate,
						memory_order_acquire);
		if (__builtin_expect(gate == 0, 1))
			break;
		atomic_store_explicit(&t->in_use, 0, memory_order_release);
		if (gate & REC_GATE_OFF)
			return NULL;
		native_rec_ids_wait_growth();
	}
	/* A full buffer, and the coarse clock (it moves once a kernel
	 * tick), read every REC_CLOCK_BYTES of the thread's events. */
	if (__builtin_expect(t->at >= t->mark, 0) && at_mark(t) != 0) {
		atomic_store_explicit(&t->in_use, 0, memory_order_release);
		return NULL;
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
	t->at = vmheap_trace_put_event(t->at, &t->st, ev, source);
	t->events++;
}

/* A varint, the common short ones without a loop. */
static inline __attribute__((always_inline)) uint8_t *varint(uint8_t *p,
							     uint64_t v)
{
	if (__builtin_expect(v < 0x80, 1)) {
		*p = (uint8_t)v;
		return p + 1;
	}
	if (v < 0x4000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7);
		return p + 2;
	}
	return vmheap_trace_put_varint(p, v);
}

/* The free of block `id` (slot, gen): TRACE.md's free event, as
 * vmheap_trace_put_event writes it. */
static inline __attribute__((always_inline)) void put_free(struct rec_thread *t,
							   uint64_t id)
{
	uint32_t slot = (uint32_t)(id >> 32);
	int64_t d = (int64_t)slot - (int64_t)t->st.prev_slot;
	uint8_t *p = t->at;
	*p++ = VMHEAP_TRACE_FREE;
	p = varint(p, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
	t->st.prev_slot = slot;
	t->at = varint(p, (uint32_t)id);
	t->events++;
}

/* The ring's full case: its older half to the pool. */
static __attribute__((noinline)) void ended_full(struct rec_thread *t,
						 uint64_t id)
{
	if (vmheap_trace_ring_put(&t->st, id, t->dropped) != 0)
		pool_give(t->dropped, REC_RING / 2);
}

/* The block (slot, gen) ended in thread t: into its ring. */
static inline __attribute__((always_inline)) void ended(struct rec_thread *t,
							uint64_t id)
{
	if (__builtin_expect(t->st.count == REC_RING, 0)) {
		ended_full(t, id);
		return;
	}
	t->ring[(t->st.head + t->st.count) & (REC_RING - 1)] = id;
	t->st.count++;
}

/* An id for a new block from the pool or the thread's fresh batch (its
 * ring holds fewer than M), and its source. */
static __attribute__((noinline)) unsigned
new_id_slow(struct rec_thread *t, struct vmheap_trace_block *b)
{
	uint64_t id;
	if (pool_take(&id)) {
		b->slot = (uint32_t)(id >> 32);
		b->gen = (uint32_t)id + 1;
		return VMHEAP_TRACE_F_EXPLICIT;
	}
	if (t->st.batch_next == t->st.batch_end) {
		uint32_t first = atomic_fetch_add(&native_rec.next_slot,
						  REC_BATCH);
		t->at = vmheap_trace_put_batch(t->at, first);
		t->st.batch_next = first;
		t->st.batch_end = first + REC_BATCH;
	}
	b->slot = t->st.batch_next++;
	b->gen = 0;
	if (b->slot + 1 > t->slots_hi)
		t->slots_hi = b->slot + 1;
	return VMHEAP_TRACE_F_BATCH;
}

/* An id for a new block, and its source: the oldest of the thread's
 * ring once M wait (a slot the ring holds was named before: slots_hi
 * has it). */
static inline __attribute__((always_inline)) unsigned
new_id(struct rec_thread *t, struct vmheap_trace_block *b)
{
	if (__builtin_expect(t->st.count < REC_RING_MIN, 0))
		return new_id_slow(t, b);
	uint64_t id = t->ring[t->st.head];
	t->st.head = (t->st.head + 1) & (REC_RING - 1);
	t->st.count--;
	b->slot = (uint32_t)(id >> 32);
	b->gen = (uint32_t)id + 1;
	return 0;
}

/* What an insert that was not plain left to do: the free of a block
 * that had p's address and whose free the recorder did not see (freed
 * past it: its own guard, a library bound to glibc), or a stop. */
static __attribute__((noinline)) void inserted(struct rec_thread *t, int r,
					       uint64_t stale)
{
	if (r == 1) {
		put_free(t, stale);
		ended(t, stale);
	} else if (r < 0) {
		native_rec_stop("no memory for the table of live blocks");
	}
}

/* The new block p (not NULL) of event ev: its id, the event, its entry. */
static inline __attribute__((always_inline)) void
began(struct rec_thread *t, struct vmheap_trace_event *ev, void *p)
{
	unsigned source = new_id(t, &ev->block);
	uint64_t id = vmheap_trace_id(ev->block.slot, ev->block.gen);
	uint64_t stale;
	/* The event first: the table's line, which the insert may miss,
	 * is not waited for meanwhile. */
	put(t, ev, source);
	int r = native_rec_ids_insert(t, (uint64_t)(uintptr_t)p, id, ev->size,
				      &stale);
	if (__builtin_expect(r != 0, 0))
		inserted(t, r, stale);
}

void native_record_alloc(unsigned op, void *p, uint64_t size, uint64_t nmemb,
			 uint64_t elsize, uint64_t align)
{
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

void native_record_malloc(void *p, uint64_t size)
{
	if (__builtin_expect(p == NULL, 0)) {
		native_record_alloc(VMHEAP_TRACE_MALLOC, p, size, 0, 0, 0);
		return;
	}
	struct rec_thread *t = enter();
	if (t == NULL)
		return;
	uint64_t id;
	uint8_t *at = t->at;
	if (__builtin_expect(t->st.count >= REC_RING_MIN, 1)) {
		/* TRACE.md: malloc, its id from the ring (no bytes). */
		id = t->ring[t->st.head];
		id = vmheap_trace_id((uint32_t)(id >> 32), (uint32_t)id + 1);
		t->st.head = (t->st.head + 1) & (REC_RING - 1);
		t->st.count--;
		*at++ = VMHEAP_TRACE_MALLOC;
		t->at = varint(at, size);
		t->events++;
	} else {
		struct vmheap_trace_event ev;
		ev.op = VMHEAP_TRACE_MALLOC;
		ev.size = size;
		ev.old_block.slot = VMHEAP_TRACE_NONE;
		unsigned source = new_id_slow(t, &ev.block);
		id = vmheap_trace_id(ev.block.slot, ev.block.gen);
		put(t, &ev, source);
	}
	uint64_t stale;
	int r =
	    native_rec_ids_insert(t, (uint64_t)(uintptr_t)p, id, size, &stale);
	if (__builtin_expect(r != 0, 0))
		inserted(t, r, stale);
	leave(t);
}

void native_record_free(void *p)
{
	struct rec_thread *t = enter();
	if (t == NULL)
		return;
	uint64_t id;
	if (__builtin_expect(p == NULL, 0)) {
		*t->at++ = VMHEAP_TRACE_FREE | VMHEAP_TRACE_F_NONE;
		t->events++;
	} else if (__builtin_expect((id = native_rec_ids_remove((
					 uint64_t)(uintptr_t)p)) != REC_ID_NONE,
				    1)) {
		put_free(t, id);
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
	if (p != NULL) {
		old->id = native_rec_ids_remove((uint64_t)(uintptr_t)p);
		old->found = old->id != REC_ID_NONE;
	}
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
		if (b != NULL) {
			b->len = b->count = b->thread = 0;
			keep->at = keep->mark = REC_PAYLOAD_OF(b);
			keep->room =
			    keep->at + REC_PAYLOAD - VMHEAP_TRACE_ITEM_MAX * 2;
		}
		native_rec.threads[0] = keep;
		atomic_store(&native_rec.nthreads, 1);
	}
}
