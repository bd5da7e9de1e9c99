/*
 * record_ids.c - the recorder's table of live recorded blocks: address ->
 * block id (slot << 32 | generation), and each slot's size.
 *
 * No lock on the way of a call.  256 stripes, a stripe per 1 MiB region
 * (one thread's arena stays in stripes of its own), each an array of
 * buckets of one cache line, four addresses each with its id, and apart
 * from them a count per bucket of the entries that lie past their home
 * bucket and passed over it (dense, so mostly in the first-level cache:
 * every insert reads it, a removal only past a home without the address).
 * A block's entry is in its home bucket (a multiplicative hash of its address)
 * unless that was full when it went in; then in the first bucket after it with
 * room.
 *
 * Why it needs no lock: only one thread at a time has a given address
 * (glibc gave it to that thread, and the program frees it once), so the
 * entries of one address are never written by two threads at once.  A
 * new entry takes an empty place with one compare-and-swap (another
 * thread may want the same place for another address); a removal is a
 * plain store of 0.  The counts of the buckets passed over change with an
 * atomic add, on the rare path of an entry that is not in its home.
 * Whoever frees a block learnt its address from the thread that
 * allocated it, after the entry was written: the program's own
 * synchronization orders the two.
 *
 * Growing (a stripe whose entries are too often past their home, or an
 * entry that finds no room within PROBE_MAX buckets) is the one time a
 * stripe changes under other threads: the thread that grows it takes the
 * growth lock, sets native_rec_gate's REC_GATE_GROWING, and waits until every
 * other recording thread is outside its call (in_use clear) or parked, waiting
 * for the same lock; record.c's enter waits while the flag is set.  The
 * two meet through record_fence.c's asymmetric fence.  Growth happens
 * about log2(its live blocks / 130) times a stripe.
 *
 * Sizes live apart, in an array by slot (chunks of 65536 slots, mapped on
 * first use): a free needs only the id, and the sizes are summed at the
 * end (the trailer's live bytes).  Memory from native_pages, never
 * malloc.  It is the recorder's own, apart from the live table of
 * tracking, so that recording needs no tracking (and no stacks) and
 * tracking no recording.
 */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "native-internal.h"
#include "record-internal.h"

#define STRIPES 256
#define REGION_SHIFT 20
#define WAYS 4
#define FIRST_BUCKETS 32 /* with the table's head and counts: a page */
#define PROBE_MAX 16	 /* buckets an entry may lie past its home */
#define SIZE_CHUNK_BITS 16
#define SIZE_CHUNKS (1u << (32 - SIZE_CHUNK_BITS))
/* A growth waits at most this long for a thread to leave its call. */
#define GROW_WAIT_US 10000000u

struct bucket {
	struct {
		_Atomic uint64_t addr; /* 0: empty */
		_Atomic uint64_t id;
	} e[WAYS];
};
_Static_assert(sizeof(struct bucket) == 64, "a bucket is a cache line");

/* Read by every call; the rare path's count on a line of its own. */
struct table {
	size_t nb;	       /* buckets, a power of two */
	unsigned shift;	       /* 64 - log2(nb) */
	size_t bytes;	       /* mapped */
	struct bucket *b;      /* nb buckets, after the counts */
	_Atomic uint8_t *over; /* nb: entries past their home that passed
				  over the bucket; 255 stays */
	_Alignas(64) _Atomic size_t displaced; /* entries not at home */
};

static struct table *_Atomic stripes[STRIPES];

static uint64_t *_Atomic size_chunks[SIZE_CHUNKS];

static _Atomic int grow_lock;

static inline struct table *_Atomic *stripe_of(uint64_t a)
{
	return &stripes[(a >> REGION_SHIFT) * 0x9e3779b97f4a7c15ull >> 56];
}

/* The home bucket: the top bits of a multiplicative hash. */
static inline size_t home(uint64_t a, const struct table *t)
{
	return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> t->shift);
}

static inline size_t next(size_t j, size_t nb)
{
	return (j + 1) & (nb - 1);
}

static inline uint64_t addr_at(struct bucket *b, unsigned i)
{
	return atomic_load_explicit(&b->e[i].addr, memory_order_relaxed);
}

/* Bit i set where bucket b's address i is a: four compares and no
 * branch (where a key lies is not predictable). */
static inline unsigned match(struct bucket *b, uint64_t a)
{
	return (unsigned)(addr_at(b, 0) == a) |
	       (unsigned)(addr_at(b, 1) == a) << 1 |
	       (unsigned)(addr_at(b, 2) == a) << 2 |
	       (unsigned)(addr_at(b, 3) == a) << 3;
}

static inline unsigned over(struct table *t, size_t j)
{
	return atomic_load_explicit(&t->over[j], memory_order_relaxed);
}

/* A count one up or down; one that reached 255 stays (it only makes
 * look-ups of absent addresses go on further). */
static void over_add(struct table *t, size_t j, int d)
{
	uint8_t v = atomic_load_explicit(&t->over[j], memory_order_relaxed);
	while (v != 255 && !atomic_compare_exchange_weak_explicit(
			       &t->over[j], &v, (uint8_t)(v + d),
			       memory_order_relaxed, memory_order_relaxed))
		;
}

/* Take an empty place of b for a (id with it): 1, or 0 when b is full. */
static inline int claim(struct bucket *b, uint64_t a, uint64_t id)
{
	for (unsigned e; (e = match(b, 0)) != 0;) {
		unsigned i = (unsigned)__builtin_ctz(e);
		uint64_t zero = 0;
		if (atomic_compare_exchange_strong_explicit(
			&b->e[i].addr, &zero, a, memory_order_relaxed,
			memory_order_relaxed)) {
			atomic_store_explicit(&b->e[i].id, id,
					      memory_order_relaxed);
			return 1;
		}
	}
	return 0;
}

static struct table *table_new(size_t nb)
{
	size_t head = (sizeof(struct table) + nb + 63) & ~(size_t)63;
	size_t bytes = head + nb * sizeof(struct bucket);
	struct table *t = native_pages(bytes);
	if (t != NULL) {
		t->nb = nb;
		t->shift = 64u - (unsigned)__builtin_ctzll(nb);
		t->bytes = bytes;
		t->over = (_Atomic uint8_t *)(t + 1);
		t->b = (struct bucket *)((char *)t + head);
	}
	return t;
}

/* Where a lies past its home h (the counts say how far to look): its
 * bucket and place, or 0. */
static int find_far(struct table *t, size_t h, uint64_t a, size_t *bj,
		    unsigned *bi)
{
	size_t j = h;
	for (unsigned d = 0; d < PROBE_MAX && over(t, j) != 0; d++) {
		j = next(j, t->nb);
		unsigned m = match(&t->b[j], a);
		if (m != 0) {
			*bj = j;
			*bi = (unsigned)__builtin_ctz(m);
			return 1;
		}
	}
	return 0;
}

/* a into the first bucket after its full home h with room: 0, 1 when
 * it went in but the stripe should grow, -1 when it found no room. */
static int insert_far(struct table *t, size_t h, uint64_t a, uint64_t id)
{
	size_t j = h;
	for (unsigned d = 1; d <= PROBE_MAX; d++) {
		j = next(j, t->nb);
		if (!claim(&t->b[j], a, id))
			continue;
		for (size_t k = h; k != j; k = next(k, t->nb))
			over_add(t, k, 1);
		size_t n = atomic_fetch_add_explicit(&t->displaced, 1,
						     memory_order_relaxed);
		/* Past a little more than half full, more than one entry
		 * in 32 is away from home (a simulation of random
		 * addresses: 0.8% at 40% full, 2.0% at half, 4.1% at
		 * 60%). */
		return (n + 1) * 32 > t->nb * WAYS ? 1 : 0;
	}
	return -1;
}

/* Every entry of `from` into `to` (nothing else runs on either): 0, or
 * -1 when one found no room. */
static int rehash(struct table *to, struct table *from)
{
	for (size_t j = 0; j < from->nb; j++) {
		struct bucket *b = &from->b[j];
		for (unsigned i = 0; i < WAYS; i++) {
			uint64_t a = addr_at(b, i), id = b->e[i].id;
			if (a == 0)
				continue;
			size_t h = home(a, to);
			if (claim(&to->b[h], a, id))
				continue;
			if (insert_far(to, h, a, id) < 0)
				return -1;
		}
	}
	return 0;
}

/* The stripe's first table, made by whoever inserts first (no one can
 * have looked into a table that did not exist). */
static struct table *first_table(struct table *_Atomic *slot)
{
	struct table *t = table_new(FIRST_BUCKETS), *none = NULL;
	if (t == NULL)
		return NULL;
	if (atomic_compare_exchange_strong(slot, &none, t))
		return t;
	native_pages_free(t, t->bytes);
	return none;
}

static uint64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void grow_lock_take(void)
{
	while (atomic_exchange_explicit(&grow_lock, 1, memory_order_acquire))
		while (atomic_load_explicit(&grow_lock, memory_order_relaxed))
			sched_yield();
}

static void grow_lock_drop(void)
{
	atomic_store_explicit(&grow_lock, 0, memory_order_release);
}

/*
 * me, parked, goes on with its call: parked cleared, then the gate read
 * (record_fence.c's pair, as enter's in_use): a growth that began
 * meanwhile (another thread took the lock at once) either sees me no
 * longer parked and waits for me to leave the call, or I see it and
 * wait, parked, until it is done.  Clearing parked with a plain store
 * and going on let that growth take me for parked and rehash the table
 * I was writing (or free it).
 */
static void unpark(struct rec_thread *me)
{
	for (;;) {
		if (native_rec_asymmetric) {
			atomic_store_explicit(&me->parked, 0,
					      memory_order_relaxed);
			atomic_signal_fence(memory_order_seq_cst);
		} else {
			atomic_store(&me->parked, 0);
		}
		if (!(atomic_load_explicit(&native_rec_gate,
					   memory_order_acquire) &
		      REC_GATE_GROWING))
			return;
		atomic_store_explicit(&me->parked, 1, memory_order_release);
		native_rec_ids_wait_growth();
	}
}

/* Every recording thread but me outside its call or parked: 0, or -1
 * (recording stopped) after GROW_WAIT_US. */
static int others_out(const struct rec_thread *me)
{
	uint32_t n =
	    atomic_load_explicit(&native_rec.nthreads, memory_order_acquire);
	uint64_t deadline = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct rec_thread *u = native_rec.threads[i];
		for (unsigned spins = 0;
		     u != me &&
		     atomic_load_explicit(&u->in_use, memory_order_acquire) &&
		     !atomic_load_explicit(&u->parked, memory_order_acquire);
		     spins++) {
			if (spins < 64) {
				__builtin_ia32_pause();
				continue;
			}
			if (deadline == 0)
				deadline = mono_us() + GROW_WAIT_US;
			else if (mono_us() > deadline)
				return -1;
			sched_yield();
		}
	}
	return 0;
}

/* The stripe at slot, whose table was t, twice as big (unless another
 * thread grew it meanwhile): 0, or -1 (no memory, or recording
 * stopped). */
static int grow(struct rec_thread *me, struct table *_Atomic *slot,
		struct table *t)
{
	int r = 0;
	atomic_store_explicit(&me->parked, 1, memory_order_release);
	grow_lock_take();
	if (atomic_load_explicit(slot, memory_order_acquire) != t)
		goto out; /* grown by another thread while I waited */
	atomic_fetch_or_explicit(&native_rec_gate, REC_GATE_GROWING,
				 memory_order_relaxed);
	native_record_fence_end();
	if (others_out(me) != 0) {
		atomic_fetch_and_explicit(&native_rec_gate, ~REC_GATE_GROWING,
					  memory_order_release);
		native_rec_stop("a thread did not leave a call's recording "
				"while the table of live blocks grew");
		r = -1;
		goto out;
	}
	/* Twice the buckets, or more when a cluster of addresses with
	 * nearby homes does not fit within PROBE_MAX of them. */
	struct table *nt = NULL;
	for (size_t nb = t->nb * 2; nb <= ((size_t)1 << 40); nb *= 2) {
		if ((nt = table_new(nb)) == NULL || rehash(nt, t) == 0)
			break;
		native_pages_free(nt, nt->bytes);
		nt = NULL;
	}
	if (nt != NULL) {
		atomic_store_explicit(slot, nt, memory_order_release);
		native_pages_free(t, t->bytes);
	} else {
		r = -1;
	}
	atomic_fetch_and_explicit(&native_rec_gate, ~REC_GATE_GROWING,
				  memory_order_release);
out:
	grow_lock_drop();
	unpark(me);
	return r;
}

void native_rec_ids_wait_growth(void)
{
	for (unsigned spins = 0;
	     atomic_load_explicit(&native_rec_gate, memory_order_acquire) &
	     REC_GATE_GROWING;
	     spins++) {
		if (spins < 64)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
}

/* The size of slot's block is size (the chunk of sizes mapped on first
 * use): 0 or -1. */
static inline int size_put(uint32_t slot, uint64_t size)
{
	uint64_t *c = atomic_load_explicit(
	    &size_chunks[slot >> SIZE_CHUNK_BITS], memory_order_acquire);
	if (__builtin_expect(c == NULL, 0)) {
		c = native_pages_once(
		    (void *_Atomic *)&size_chunks[slot >> SIZE_CHUNK_BITS],
		    sizeof(uint64_t) << SIZE_CHUNK_BITS);
		if (c == NULL)
			return -1;
	}
	c[slot & ((1u << SIZE_CHUNK_BITS) - 1)] = size;
	return 0;
}

/* The insert's every case: a's entry elsewhere (freed past the
 * recorder), a full home, a growth.  The size is put already. */
static __attribute__((noinline)) int
insert_slow(struct rec_thread *me, uint64_t a, uint64_t id, uint64_t *stale_id)
{
	struct table *_Atomic *slot = stripe_of(a);
	for (;;) {
		struct table *t =
		    atomic_load_explicit(slot, memory_order_acquire);
		if (__builtin_expect(t == NULL, 0) &&
		    (t = first_table(slot)) == NULL)
			return -1;
		size_t h = home(a, t), j = h;
		struct bucket *b = &t->b[h];
		unsigned m = match(b, a), i;
		if (m != 0 || (over(t, h) != 0 && find_far(t, h, a, &j, &i))) {
			/* Freed past the recorder: the entry is a's
			 * again, with the new id. */
			if (m != 0)
				i = (unsigned)__builtin_ctz(m);
			*stale_id = atomic_load_explicit(&t->b[j].e[i].id,
							 memory_order_relaxed);
			atomic_store_explicit(&t->b[j].e[i].id, id,
					      memory_order_relaxed);
			return 1;
		}
		if (claim(b, a, id))
			return 0;
		int r = insert_far(t, h, a, id);
		if (r == 0)
			return 0;
		if (grow(me, slot, t) != 0)
			return r == 1 ? 0 : -1;
		if (r == 1)
			return 0; /* it went in, and was moved with the rest */
	}
}

/*
 * Inlined into the calls of record.c (LTO), as the removal is: the
 * common insert (a's home has room, holds no entry of a, and no entry
 * passed over it) reads the four addresses once and takes an empty
 * place; every other case is insert_slow's.
 */
__attribute__((always_inline)) inline int
native_rec_ids_insert(struct rec_thread *me, uint64_t a, uint64_t id,
		      uint64_t size, uint64_t *stale_id)
{
	/* The size after the entry: its store may miss, and the entry's
	 * compare-and-swap would wait for it. */
	int r;
	struct table *t =
	    atomic_load_explicit(stripe_of(a), memory_order_acquire);
	if (__builtin_expect(t != NULL, 1)) {
		size_t h = home(a, t);
		struct bucket *b = &t->b[h];
		uint64_t w0 = addr_at(b, 0), w1 = addr_at(b, 1),
			 w2 = addr_at(b, 2), w3 = addr_at(b, 3);
		/* a is there only when freed past the recorder: compares
		 * that branch (never taken), not a mask. */
		int there = __builtin_expect(w0 == a, 0) ||
			    __builtin_expect(w1 == a, 0) ||
			    __builtin_expect(w2 == a, 0) ||
			    __builtin_expect(w3 == a, 0);
		/* The first empty place (WAYS: none), by conditional moves. */
		unsigned i = w3 == 0 ? 3 : WAYS;
		i = w2 == 0 ? 2 : i;
		i = w1 == 0 ? 1 : i;
		i = w0 == 0 ? 0 : i;
		if (__builtin_expect(!there && over(t, h) == 0 && i < WAYS,
				     1)) {
			uint64_t zero = 0;
			if (__builtin_expect(
				atomic_compare_exchange_strong_explicit(
				    &b->e[i].addr, &zero, a,
				    memory_order_relaxed, memory_order_relaxed),
				1)) {
				atomic_store_explicit(&b->e[i].id, id,
						      memory_order_relaxed);
				r = 0;
				goto size;
			}
		}
	}
	r = insert_slow(me, a, id, stale_id);
	if (r < 0)
		return r;
size:
	if (size != REC_SIZE_KEEP && size_put((uint32_t)(id >> 32), size) != 0)
		return -1;
	return r;
}

/* The removal of an entry past its home (or of none). */
static __attribute__((noinline)) uint64_t remove_far(struct table *t, size_t h,
						     uint64_t a)
{
	size_t j;
	unsigned i;
	if (over(t, h) == 0 || !find_far(t, h, a, &j, &i))
		return REC_ID_NONE;
	uint64_t id =
	    atomic_load_explicit(&t->b[j].e[i].id, memory_order_relaxed);
	atomic_store_explicit(&t->b[j].e[i].addr, 0, memory_order_release);
	for (size_t k = h; k != j; k = next(k, t->nb))
		over_add(t, k, -1);
	atomic_fetch_sub_explicit(&t->displaced, 1, memory_order_relaxed);
	return id;
}

/* Inlined into the calls of record.c (LTO); an entry away from its home
 * is remove_far's. */
__attribute__((always_inline)) inline uint64_t native_rec_ids_remove(uint64_t a)
{
	struct table *t =
	    atomic_load_explicit(stripe_of(a), memory_order_acquire);
	if (__builtin_expect(t == NULL, 0))
		return REC_ID_NONE;
	size_t h = home(a, t);
	struct bucket *b = &t->b[h];
	/* Where a is (WAYS: not at home), by conditional moves. */
	unsigned i = addr_at(b, 3) == a ? 3 : WAYS;
	i = addr_at(b, 2) == a ? 2 : i;
	i = addr_at(b, 1) == a ? 1 : i;
	i = addr_at(b, 0) == a ? 0 : i;
	if (__builtin_expect(i == WAYS, 0))
		return remove_far(t, h, a);
	uint64_t id = atomic_load_explicit(&b->e[i].id, memory_order_relaxed);
	atomic_store_explicit(&b->e[i].addr, 0, memory_order_release);
	return id;
}

/* Called with every recording thread outside its call (the end). */
void native_rec_ids_sum(uint64_t *blocks, uint64_t *bytes)
{
	*blocks = *bytes = 0;
	for (size_t k = 0; k < STRIPES; k++) {
		struct table *t = stripes[k];
		for (size_t j = 0; t != NULL && j < t->nb; j++) {
			for (unsigned i = 0; i < WAYS; i++) {
				if (addr_at(&t->b[j], i) == 0)
					continue;
				uint32_t s = (uint32_t)(t->b[j].e[i].id >> 32);
				uint64_t *c = size_chunks[s >> SIZE_CHUNK_BITS];
				(*blocks)++;
				*bytes += c[s & ((1u << SIZE_CHUNK_BITS) - 1)];
			}
		}
	}
}

/* In a forked child (one thread): every table dropped. */
void native_rec_ids_clear(void)
{
	for (size_t k = 0; k < STRIPES; k++) {
		struct table *t = stripes[k];
		if (t != NULL)
			native_pages_free(t, t->bytes);
		stripes[k] = NULL;
	}
	atomic_fetch_and(&native_rec_gate, ~REC_GATE_GROWING);
}

void native_rec_ids_lock(void)
{
	grow_lock_take();
}

void native_rec_ids_unlock(void)
{
	grow_lock_drop();
}
