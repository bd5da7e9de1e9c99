/*
 * live.c - the live tracked blocks: a hash of pointer -> (site, size),
 * split into stripes that each have their own lock.  A stripe holds
 * whole 1 MiB regions of the address space (a region goes to a stripe by
 * a hash of its number): glibc gives each thread its own arena, so a
 * thread's blocks lie in regions of their own, and its stripes' locks
 * and slots stay in its processor's cache instead of moving between
 * processors on every malloc and free (hashing the pointer itself: 1.1-
 * 1.6 s of CPU for the 4-thread C workload against 0.8-1.0 s, in
 * native/README.md).
 * Each stripe is an open-addressing table with linear probing, kept at
 * most half full, deleted from by shifting back (no tombstones).  Its
 * memory comes from mmap.
 */
#include <sched.h>
#include <string.h>

#include "native-internal.h"

#define STRIPES 256         /* a power of two */
#define FIRST_CAP 256       /* entries of a stripe's first table */
#define REGION_SHIFT 20     /* a stripe holds whole 1 MiB regions */

/* 16 bytes: the size in bits 0-41 (4 TiB; no larger block can be had
 * here) and the site id minus one in bits 42-63 (NATIVE_MAX_SITES is
 * 2^22). */
struct entry {
	uint64_t ptr; /* 0: empty */
	uint64_t rec;
};
#define SIZE_BITS 42
#define SIZE_MAX_REC (((uint64_t)1 << SIZE_BITS) - 1)

static uint64_t rec_of(uint64_t size, uint32_t id)
{
	return (size < SIZE_MAX_REC ? size : SIZE_MAX_REC) |
	       (uint64_t)(id - 1) << SIZE_BITS;
}

static uint64_t size_of(uint64_t rec)
{
	return rec & SIZE_MAX_REC;
}

static uint32_t site_of(uint64_t rec)
{
	return (uint32_t)(rec >> SIZE_BITS) + 1;
}

struct stripe {
	_Alignas(64) _Atomic int lock; /* a spin lock: a probe or a grow */
	struct entry *slots;
	size_t cap;
	_Atomic size_t count; /* written under the lock, read without */
}; /* one cache line each */

static struct stripe stripes[STRIPES];

/* A stripe is held for a few dozen instructions (a grow's rehash is the
 * long case), so a waiter spins, and yields the processor once the
 * holder looks descheduled.  With a pthread mutex a malloc-free pair
 * took 867 instructions against 800 (native/README.md). */
static void stripe_lock(struct stripe *s)
{
	while (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire)) {
		for (unsigned i = 0;
		     atomic_load_explicit(&s->lock, memory_order_relaxed); i++) {
			if (i < 100)
				__builtin_ia32_pause();
			else
				sched_yield();
		}
	}
}

static void stripe_unlock(struct stripe *s)
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

static uint64_t mix(uint64_t p)
{
	p ^= p >> 33;
	p *= 0xff51afd7ed558ccdull;
	p ^= p >> 33;
	return p;
}

/* A block's first slot in its stripe's table: its 16-byte granule, so
 * that blocks near each other have their records near each other (the
 * program touches them together); the region's number folded in keeps
 * regions that share a stripe apart. */
static uint64_t home(uint64_t p)
{
	return (p >> 4) ^ (p >> REGION_SHIFT) * 0x9e3779b1u;
}

static struct stripe *stripe_of(uint64_t p, uint64_t *h)
{
	*h = home(p);
	return &stripes[mix(p >> REGION_SHIFT) >> 32 & (STRIPES - 1)];
}

/* Put e in; returns the slot's old entry when e's pointer was there
 * already (else one with ptr 0). */
static struct entry put(struct entry *slots, size_t cap,
			const struct entry *e, uint64_t h)
{
	size_t i = h & (cap - 1);
	while (slots[i].ptr != 0 && slots[i].ptr != e->ptr)
		i = (i + 1) & (cap - 1);
	struct entry old = slots[i];
	slots[i] = *e;
	return old;
}

/* Make room for one more; 0 on success. */
static int grow(struct stripe *s)
{
	if (s->slots != NULL && (s->count + 1) * 2 <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap * 2 : FIRST_CAP;
	struct entry *slots = native_pages(cap * sizeof *slots);
	if (slots == NULL)
		return -1;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i].ptr != 0)
			put(slots, cap, &s->slots[i], home(s->slots[i].ptr));
	native_pages_free(s->slots, s->cap * sizeof *s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

static void insert(void *p, uint64_t size, uint32_t id, uint64_t state,
		   int count)
{
	uint64_t h;
	struct stripe *s = stripe_of((uint64_t)(uintptr_t)p, &h);
	stripe_lock(s);
	/* Checked under the lock: stop() clears each stripe under its lock
	 * after it changes the state, so a record from an older generation
	 * never survives a stop. */
	if (atomic_load_explicit(&native_state, memory_order_relaxed) ==
		    state && grow(s) == 0) {
		struct entry e = {(uint64_t)(uintptr_t)p, rec_of(size, id)};
		struct entry old = put(s->slots, s->cap, &e, h);
		if (old.ptr == 0)
			count_add(s, 1);
		else /* freed past the tracker; glibc gave p out again */
			native_site_free(site_of(old.rec), size_of(old.rec));
		if (count)
			native_site_alloc(id, size);
	}
	stripe_unlock(s);
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

uint32_t native_live_remove(void *p, uint64_t *size)
{
	uint64_t h, key = (uint64_t)(uintptr_t)p;
	struct stripe *s = stripe_of(key, &h);
	uint32_t id = 0;
	/* A free of a block made before tracking began, when the stripe is
	 * empty, needs no lock.  (p, if it is here, was put here before the
	 * program could free it.) */
	if (atomic_load_explicit(&s->count, memory_order_relaxed) == 0)
		return 0;
	stripe_lock(s);
	if (s->count == 0)
		goto out;
	size_t mask = s->cap - 1, i = h & mask;
	while (s->slots[i].ptr != 0 && s->slots[i].ptr != key)
		i = (i + 1) & mask;
	if (s->slots[i].ptr == 0)
		goto out;
	id = site_of(s->slots[i].rec);
	*size = size_of(s->slots[i].rec);
	native_site_free(id, *size);
	count_add(s, -1);
	/* Shift back the entries of the run that follows. */
	size_t hole = i;
	for (size_t j = (i + 1) & mask; s->slots[j].ptr != 0;
	     j = (j + 1) & mask) {
		size_t at = home(s->slots[j].ptr) & mask;
		/* Move j into the hole unless its home lies in (hole, j]. */
		int stays = hole <= j ? (at > hole && at <= j)
				      : (at > hole || at <= j);
		if (!stays) {
			s->slots[hole] = s->slots[j];
			hole = j;
		}
	}
	memset(&s->slots[hole], 0, sizeof s->slots[hole]);
out:
	stripe_unlock(s);
	return id;
}

void native_live_clear(void)
{
	for (int i = 0; i < STRIPES; i++) {
		struct stripe *s = &stripes[i];
		stripe_lock(s);
		native_pages_free(s->slots, s->cap * sizeof *s->slots);
		s->slots = NULL;
		s->cap = 0;
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
		if (s->slots == NULL)
			continue;
		if (table)
			table(s->slots, s->cap * sizeof *s->slots, arg);
		for (size_t k = 0; k < s->cap; k++)
			if (s->slots[k].ptr != 0)
				block(s->slots[k].ptr, size_of(s->slots[k].rec),
				      site_of(s->slots[k].rec), arg);
	}
}
