/*
 * live.c - the live allocations that carry no header (the aligned ones,
 * and reallocs of blocks made before tracking began): a hash of pointer
 * -> (site, size), split into stripes that each have their own lock, so
 * that threads freeing and allocating different pointers rarely meet.
 * Each stripe is an open-addressing table with linear probing, kept at
 * most half full, deleted from by shifting back (no tombstones).  Its
 * memory comes from mmap.
 */
#include <pthread.h>
#include <string.h>

#include "native-internal.h"

#define STRIPES 64          /* a power of two */
#define FIRST_CAP 1024      /* entries of a stripe's first table */

struct entry {
	uint64_t ptr; /* 0: empty */
	uint64_t size;
	uint32_t site;
};

struct stripe {
	pthread_mutex_t lock;
	struct entry *slots;
	size_t cap;
	_Atomic size_t count; /* written under the lock, read without */
	char pad[64];
};

static struct stripe stripes[STRIPES] = {
#define S PTHREAD_MUTEX_INITIALIZER
	[0 ... STRIPES - 1] = {.lock = S},
#undef S
};

static uint64_t mix(uint64_t p)
{
	p ^= p >> 33;
	p *= 0xff51afd7ed558ccdull;
	p ^= p >> 33;
	return p;
}

static struct stripe *stripe_of(uint64_t p, uint64_t *h)
{
	*h = mix(p);
	return &stripes[*h >> 58 & (STRIPES - 1)];
}

static void put(struct entry *slots, size_t cap, const struct entry *e,
		uint64_t h)
{
	size_t i = h & (cap - 1);
	while (slots[i].ptr != 0)
		i = (i + 1) & (cap - 1);
	slots[i] = *e;
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
			put(slots, cap, &s->slots[i], mix(s->slots[i].ptr));
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
	pthread_mutex_lock(&s->lock);
	/* Checked under the lock: stop() clears each stripe under its lock
	 * after it changes the state, so a record from an older generation
	 * never survives a stop. */
	if (atomic_load(&native_state) == state && grow(s) == 0) {
		struct entry e = {(uint64_t)(uintptr_t)p, size, id};
		put(s->slots, s->cap, &e, h);
		s->count++;
		if (count)
			native_site_alloc(id, size);
	}
	pthread_mutex_unlock(&s->lock);
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
	/* Most frees while tracking are of blocks with a header or made
	 * before tracking began: an empty stripe needs no lock.  (p, if it
	 * is here, was put here before the program could free it.) */
	if (atomic_load_explicit(&s->count, memory_order_relaxed) == 0)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (s->count == 0)
		goto out;
	size_t mask = s->cap - 1, i = h & mask;
	while (s->slots[i].ptr != 0 && s->slots[i].ptr != key)
		i = (i + 1) & mask;
	if (s->slots[i].ptr == 0)
		goto out;
	id = s->slots[i].site;
	*size = s->slots[i].size;
	native_site_free(id, *size);
	s->count--;
	/* Shift back the entries of the run that follows. */
	size_t hole = i;
	for (size_t j = (i + 1) & mask; s->slots[j].ptr != 0;
	     j = (j + 1) & mask) {
		size_t home = mix(s->slots[j].ptr) & mask;
		/* Move j into the hole unless its home lies in (hole, j]. */
		int stays = hole <= j ? (home > hole && home <= j)
				      : (home > hole || home <= j);
		if (!stays) {
			s->slots[hole] = s->slots[j];
			hole = j;
		}
	}
	memset(&s->slots[hole], 0, sizeof s->slots[hole]);
out:
	pthread_mutex_unlock(&s->lock);
	return id;
}

void native_live_clear(void)
{
	for (int i = 0; i < STRIPES; i++) {
		struct stripe *s = &stripes[i];
		pthread_mutex_lock(&s->lock);
		native_pages_free(s->slots, s->cap * sizeof *s->slots);
		s->slots = NULL;
		s->cap = 0;
		s->count = 0;
		pthread_mutex_unlock(&s->lock);
	}
}

void native_live_lock(void)
{
	for (int i = 0; i < STRIPES; i++)
		pthread_mutex_lock(&stripes[i].lock);
}

void native_live_unlock(void)
{
	for (int i = STRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&stripes[i].lock);
}
