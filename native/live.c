/*
 * live.c - the live tracked blocks: a hash of pointer -> (stack id, size),
 * split into stripes that each have their own lock.  A stripe holds
 * whole 1 MiB regions of the address space (a region goes to a stripe by
 * a hash of its number): glibc gives each thread its own arena, so a
 * thread's blocks lie in regions of their own, and its stripes' locks
 * and slots stay in its processor's cache instead of moving between
 * processors on every malloc and free (hashing the pointer itself: 1.1-
 * 1.6 s of CPU for the 4-thread C workload against 0.8-1.0 s, in
 * native/README.md).
 * Each stripe is a table of buckets, one cache line of four entries each,
 * kept at most half full; a look-up nearly always reads one line (the
 * block's home bucket, below).  Its memory comes from mmap.
 */
#include <sched.h>
#include <string.h>

#include "native-internal.h"

#define STRIPES 256         /* a power of two */
#define FIRST_BUCKETS 64    /* buckets of a stripe's first table */
#define REGION_SHIFT 20     /* a stripe holds whole 1 MiB regions */
#define WAYS 4              /* entries in a bucket: one cache line */

/* 16 bytes: in ptr, the block's address in bits 0-55 (0: empty; user
 * space ends below 2^56 on x86-64, even with 5-level page tables); in
 * rec, the size in bits 0-41 (4 TiB; no larger block can be had here)
 * and the stack id minus one in bits 42-63 (NATIVE_MAX_STACKS is 2^22).
 * Bits 56-63 of a bucket's first ptr hold the bucket's overflow count
 * (below). */
struct entry {
	uint64_t ptr;
	uint64_t rec;
};
#define KEY_BITS 56
#define KEY_MASK (((uint64_t)1 << KEY_BITS) - 1)
#define OVER_MAX 255u /* a count this high stays: "always look further" */
#define SIZE_BITS 42
#define SIZE_MAX_REC (((uint64_t)1 << SIZE_BITS) - 1)

/*
 * A bucket is one cache line of WAYS entries.  A block's record lies in
 * its home bucket unless that was full when it went in; then it lies in
 * one of the buckets after, and each bucket it passed over counts it in
 * its overflow count.  A look-up reads the home bucket, and goes on to
 * the next only while the one it read has a count: nearly always one
 * line, compared whole without a branch per entry, and nothing moves on
 * a delete (no shifting back, no tombstones).
 */
struct bucket {
	_Alignas(64) struct entry e[WAYS];
};

static uint64_t rec_of(uint64_t size, uint32_t id)
{
	return (size < SIZE_MAX_REC ? size : SIZE_MAX_REC) |
	       (uint64_t)(id - 1) << SIZE_BITS;
}

static uint64_t size_of(uint64_t rec)
{
	return rec & SIZE_MAX_REC;
}

static uint32_t stack_of(uint64_t rec)
{
	return (uint32_t)(rec >> SIZE_BITS) + 1;
}

static uint64_t key_of(const struct entry *e)
{
	return e->ptr & KEY_MASK;
}

static unsigned over_of(const struct bucket *b)
{
	return (unsigned)(b->e[0].ptr >> KEY_BITS);
}

static void over_set(struct bucket *b, unsigned o)
{
	b->e[0].ptr = key_of(&b->e[0]) | (uint64_t)o << KEY_BITS;
}

/* Bit i set when entry i of b holds key (0: is empty); written out, not
 * a loop, so that it compiles to four compares and no branch. */
static inline __attribute__((always_inline)) unsigned
match(const struct bucket *b, uint64_t key)
{
	_Static_assert(WAYS == 4, "match() compares four entries");
	return (unsigned)(key_of(&b->e[0]) == key) |
	       (unsigned)(key_of(&b->e[1]) == key) << 1 |
	       (unsigned)(key_of(&b->e[2]) == key) << 2 |
	       (unsigned)(key_of(&b->e[3]) == key) << 3;
}

struct stripe {
	_Alignas(64) _Atomic int lock; /* a spin lock: a probe or a grow */
	struct bucket *buckets;
	size_t nb;            /* buckets, a power of two */
	_Atomic size_t count; /* written under the lock, read without */
}; /* one cache line each */

static struct stripe stripes[STRIPES];

/* The contended case of stripe_lock. */
static __attribute__((noinline)) void stripe_wait(struct stripe *s)
{
	do {
		for (unsigned i = 0;
		     atomic_load_explicit(&s->lock, memory_order_relaxed); i++) {
			if (i < 100)
				__builtin_ia32_pause();
			else
				sched_yield();
		}
	} while (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire));
}

/* A stripe is held for a few dozen instructions (a grow's rehash is the
 * long case), so a waiter spins, and yields the processor once the
 * holder looks descheduled.  With a pthread mutex a malloc-free pair
 * took 867 instructions against 800 (native/README.md). */
static inline void stripe_lock(struct stripe *s)
{
	if (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire))
		stripe_wait(s);
}

static inline void stripe_unlock(struct stripe *s)
{
	atomic_store_explicit(&s->lock, 0, memory_order_release);
}

/* count changes only under the lock: no read-modify-write needed. */
static void count_add(struct stripe *s, long d)
{
	atomic_store_explicit(
		&s->count,
		atomic_load_explicit(&s->count, memory_order_relaxed) + (size_t)d,
		memory_order_relaxed);
}

/* A block's home bucket (before the mask): its 64-byte granule, so that
 * blocks near each other have their records on the same or nearby lines
 * (the program touches them together); the region's number folded in
 * keeps regions that share a stripe apart. */
static uint64_t home(uint64_t p)
{
	return (p >> 4) * 0x9e3779b97f4a7c15ull >> 32;
}

static struct stripe *stripe_of(uint64_t p)
{
	_Static_assert(STRIPES == 256, "the top 8 bits pick the stripe");
	return &stripes[(p >> REGION_SHIFT) * 0x9e3779b97f4a7c15ull >> 56];
}

/* The entry of key, or NULL; *dist gets how many buckets past its home
 * it lies. */
static inline __attribute__((always_inline)) struct entry *
find(struct bucket *buckets, size_t nb, uint64_t key,
			  size_t *dist)
{
	size_t mask = nb - 1, b = home(key) & mask;
	for (size_t d = 0; d < nb; d++, b = (b + 1) & mask) {
		unsigned m = match(&buckets[b], key);
		if (m != 0) {
			*dist = d;
			return &buckets[b].e[__builtin_ctz(m)];
		}
		if (over_of(&buckets[b]) == 0)
			break;
	}
	return NULL;
}

/* Put a record for key, which is not in the table, into the first free
 * entry from its home bucket on (there is one: the table is never more
 * than half full). */
static inline __attribute__((always_inline)) void
put_new(struct bucket *buckets, size_t nb, uint64_t key,
		    uint64_t rec)
{
	size_t mask = nb - 1, b = home(key) & mask;
	unsigned m;
	while ((m = match(&buckets[b], 0)) == 0) {
		unsigned o = over_of(&buckets[b]);
		if (o < OVER_MAX)
			over_set(&buckets[b], o + 1);
		b = (b + 1) & mask;
	}
	struct entry *e = &buckets[b].e[__builtin_ctz(m)];
	e->ptr = (e->ptr & ~KEY_MASK) | key;
	e->rec = rec;
}

/* Make room for one more; 0 on success. */
static __attribute__((noinline)) int grow_now(struct stripe *s)
{
	size_t nb = s->nb ? s->nb * 2 : FIRST_BUCKETS;
	struct bucket *buckets = native_pages(nb * sizeof *buckets);
	if (buckets == NULL)
		return -1;
	for (size_t i = 0; i < s->nb; i++)
		for (unsigned w = 0; w < WAYS; w++)
			if (key_of(&s->buckets[i].e[w]) != 0)
				put_new(buckets, nb, key_of(&s->buckets[i].e[w]),
					s->buckets[i].e[w].rec);
	native_pages_free(s->buckets, s->nb * sizeof *s->buckets);
	s->buckets = buckets;
	s->nb = nb;
	return 0;
}

static inline int grow(struct stripe *s)
{
	if (__builtin_expect(s->buckets != NULL &&
				     (s->count + 1) * 2 <= s->nb * WAYS,
			     1))
		return 0;
	return grow_now(s);
}

/* insert's other cases: the record past its home bucket, or already
 * there (freed past the tracker; glibc gave p out again). */
static __attribute__((noinline)) void insert_slow(struct stripe *s,
						  uint64_t key, uint64_t rec)
{
	size_t dist;
	struct entry *e = find(s->buckets, s->nb, key, &dist);
	if (e == NULL) {
		put_new(s->buckets, s->nb, key, rec);
		count_add(s, 1);
	} else {
		native_count_free(stack_of(e->rec), size_of(e->rec));
		e->rec = rec;
	}
}

/* insert's whole work with the stripe's lock held, which it releases:
 * for the cases that are not one line of the home bucket (the lock was
 * contended, the table grows, the record goes past home or is there
 * already, the generation moved on). */
static __attribute__((noinline)) void insert_locked(struct stripe *s,
						    uint64_t key, uint64_t size,
						    uint32_t id, uint64_t state,
						    int count)
{
	/* Checked under the lock: stop() clears each stripe under its lock
	 * after it changes the state, so a record from an older generation
	 * never survives a stop. */
	if (atomic_load_explicit(&native_state, memory_order_relaxed) ==
		    state && grow(s) == 0) {
		uint64_t rec = rec_of(size, id);
		struct bucket *b = &s->buckets[home(key) & (s->nb - 1)];
		unsigned empty = match(b, 0);
		if (over_of(b) == 0 && match(b, key) == 0 && empty != 0) {
			struct entry *e = &b->e[__builtin_ctz(empty)];
			e->ptr = (e->ptr & ~KEY_MASK) | key;
			e->rec = rec;
			count_add(s, 1);
		} else {
			insert_slow(s, key, rec);
		}
		if (count)
			native_count_alloc(id, size);
	}
	stripe_unlock(s);
}

/* Inlined into its two callers: the common case (the lock free, the
 * generation current, room in the table, p not there, nothing passed
 * over at home) in one line and a few dozen instructions; the rest in
 * insert_locked. */
static inline __attribute__((always_inline)) void
insert(void *p, uint64_t size, uint32_t id, uint64_t state, int count)
{
	uint64_t key = (uint64_t)(uintptr_t)p;
	if (key > KEY_MASK) /* not a user-space address of x86-64 */
		return;
	struct stripe *s = stripe_of(key);
	if (__builtin_expect(
		atomic_exchange_explicit(&s->lock, 1, memory_order_acquire),
		0)) {
		stripe_wait(s);
		insert_locked(s, key, size, id, state, count);
		return;
	}
	struct bucket *buckets = s->buckets;
	size_t nb = s->nb;
	if (__builtin_expect(
		atomic_load_explicit(&native_state, memory_order_relaxed) ==
			state &&
		    buckets != NULL && (s->count + 1) * 2 <= nb * WAYS,
		1)) {
		struct bucket *b = &buckets[home(key) & (nb - 1)];
		unsigned empty = match(b, 0);
		if (__builtin_expect(over_of(b) == 0 && match(b, key) == 0 &&
					 empty != 0,
				     1)) {
			/* Not in the table, and room at home: one line. */
			struct entry *e = &b->e[__builtin_ctz(empty)];
			e->ptr = (e->ptr & ~KEY_MASK) | key;
			e->rec = rec_of(size, id);
			count_add(s, 1);
			if (count)
				native_count_alloc(id, size);
			stripe_unlock(s);
			return;
		}
	}
	insert_locked(s, key, size, id, state, count);
}

void native_live_add(void *p, uint64_t size, uint32_t id, uint64_t state)
{
	insert(p, size, id, state, 1);
}

void native_live_restore(void *p, uint64_t size, uint32_t id,
			 uint64_t state)
{
	insert(p, size, id, state, 0);
}

/* native_live_remove's other case: the record past its home bucket (or
 * nowhere).  Called under the stripe's lock. */
static __attribute__((noinline)) uint32_t
remove_far(struct stripe *s, uint64_t key, uint64_t *size)
{
	size_t dist;
	struct entry *e = find(s->buckets, s->nb, key, &dist);
	if (e == NULL)
		return 0;
	uint32_t id = stack_of(e->rec);
	*size = size_of(e->rec);
	e->ptr &= ~KEY_MASK; /* keeps a first entry's overflow count */
	e->rec = 0;
	count_add(s, -1);
	/* The buckets it had passed over count it no more. */
	size_t mask = s->nb - 1;
	for (size_t d = 0, b = home(key) & mask; d < dist;
	     d++, b = (b + 1) & mask) {
		unsigned o = over_of(&s->buckets[b]);
		if (o < OVER_MAX)
			over_set(&s->buckets[b], o - 1);
	}
	native_count_free(id, *size);
	return id;
}

uint32_t native_live_remove(void *p, uint64_t *size)
{
	uint64_t key = (uint64_t)(uintptr_t)p;
	struct stripe *s = stripe_of(key);
	uint32_t id = 0;
	/* A free of a block made before tracking began, when the stripe is
	 * empty, needs no lock.  (p, if it is here, was put here before the
	 * program could free it.)  key - 1 wraps for 0. */
	if (atomic_load_explicit(&s->count, memory_order_relaxed) == 0 ||
	    key - 1 >= KEY_MASK)
		return 0;
	stripe_lock(s);
	if (s->count != 0) { /* then it has buckets */
		/* Nearly always: in its home bucket, one line, nothing passed
		 * over to uncount. */
		struct bucket *b = &s->buckets[home(key) & (s->nb - 1)];
		unsigned m = match(b, key);
		if (__builtin_expect(m != 0, 1)) {
			struct entry *e = &b->e[__builtin_ctz(m)];
			uint64_t rec = e->rec;
			e->ptr &= ~KEY_MASK; /* keeps the overflow count */
			e->rec = 0;
			count_add(s, -1);
			id = stack_of(rec);
			*size = size_of(rec);
			native_count_free(id, *size);
		} else if (over_of(b) != 0) {
			id = remove_far(s, key, size);
		}
	}
	stripe_unlock(s);
	return id;
}

void native_live_clear(void)
{
	for (int i = 0; i < STRIPES; i++) {
		struct stripe *s = &stripes[i];
		stripe_lock(s);
		native_pages_free(s->buckets, s->nb * sizeof *s->buckets);
		s->buckets = NULL;
		s->nb = 0;
		s->count = 0;
		stripe_unlock(s);
	}
}

void native_live_lock(void)
{
	for (int i = 0; i < STRIPES; i++)
		stripe_lock(&stripes[i]);
}

void native_live_unlock(void)
{
	for (int i = STRIPES - 1; i >= 0; i--)
		stripe_unlock(&stripes[i]);
}

void native_live_foreach(native_live_block_fn block, native_live_table_fn table,
			 void *arg)
{
	for (int i = 0; i < STRIPES; i++) {
		const struct stripe *s = &stripes[i];
		if (s->buckets == NULL)
			continue;
		if (table)
			table(s->buckets, s->nb * sizeof *s->buckets, arg);
		for (size_t k = 0; k < s->nb; k++)
			for (unsigned w = 0; w < WAYS; w++) {
				const struct entry *e = &s->buckets[k].e[w];
				if (key_of(e) != 0)
					block(key_of(e), size_of(e->rec),
					      stack_of(e->rec), arg);
			}
	}
}
