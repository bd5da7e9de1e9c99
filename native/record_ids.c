/*
 * record_ids.c - the recorder's table of live recorded blocks: address ->
 * (block id, size).  A lock-striped hash like live.c's (a stripe holds
 * whole 1 MiB regions, so one thread's arena stays in stripes of its own),
 * each stripe an open-addressing array with linear probing, kept at most
 * half full counting tombstones (a delete leaves one: no loop that
 * shifts entries back, whose length the processor cannot predict; a
 * rehash clears them); memory from native_pages.  It is
 * the recorder's own, apart from the live table of tracking, so that
 * recording needs no tracking (and no stacks) and tracking no recording.
 */
#include <sched.h>
#include <string.h>

#include "native-internal.h"

#define STRIPES 256
#define FIRST_SLOTS 256 /* entries of a stripe's first array */
#define REGION_SHIFT 20

#define TOMB 1 /* an address no block has */

struct entry {
	uint64_t addr; /* 0: empty, TOMB: deleted */
	uint64_t size;
	uint64_t id; /* slot << 32 | generation */
};

struct stripe {
	_Alignas(64) _Atomic int lock;
	struct entry *e;
	size_t n, used, tombs;
};

static struct stripe stripes[STRIPES];

static void lock(struct stripe *s)
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

static void unlock(struct stripe *s)
{
	atomic_store_explicit(&s->lock, 0, memory_order_release);
}

static struct stripe *stripe_of(uint64_t a)
{
	return &stripes[(a >> REGION_SHIFT) * 0x9e3779b97f4a7c15ull >> 56];
}

static size_t home(uint64_t a, size_t n)
{
	return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 32) & (n - 1);
}

static void put(struct entry *e, size_t n, const struct entry *x)
{
	size_t i = home(x->addr, n);
	while (e[i].addr != 0)
		i = (i + 1) & (n - 1);
	e[i] = *x;
}

/* Room for one more (at most half full, tombstones counted); 0, or -1
 * without memory.  A table whose live entries fill a quarter or more
 * doubles; else it is rebuilt at its size, without its tombstones. */
static int room(struct stripe *s)
{
	if (s->e != NULL && (s->used + s->tombs + 1) * 2 <= s->n)
		return 0;
	size_t n = s->e == NULL		 ? FIRST_SLOTS
		   : (s->used + 1) * 4 > s->n ? s->n * 2
					   : s->n;
	struct entry *e = native_pages(n * sizeof *e);
	if (e == NULL)
		return -1;
	for (size_t i = 0; s->e != NULL && i < s->n; i++)
		if (s->e[i].addr > TOMB)
			put(e, n, &s->e[i]);
	native_pages_free(s->e, s->n * sizeof *s->e);
	s->e = e;
	s->n = n;
	s->tombs = 0;
	return 0;
}

int native_rec_ids_insert(uint64_t addr, uint64_t id, uint64_t size,
			  uint64_t *stale_id, uint64_t *stale_size)
{
	struct stripe *s = stripe_of(addr);
	int r = 0;
	lock(s);
	if (room(s) != 0) {
		unlock(s);
		return -1;
	}
	size_t i = home(addr, s->n), tomb = SIZE_MAX;
	for (; s->e[i].addr != 0; i = (i + 1) & (s->n - 1)) {
		if (s->e[i].addr == addr) { /* freed past the recorder */
			*stale_id = s->e[i].id;
			*stale_size = s->e[i].size;
			s->e[i].id = id;
			s->e[i].size = size;
			unlock(s);
			return 1;
		}
		if (s->e[i].addr == TOMB && tomb == SIZE_MAX)
			tomb = i;
	}
	if (tomb != SIZE_MAX) {
		i = tomb;
		s->tombs--;
	}
	s->e[i] = (struct entry){addr, size, id};
	s->used++;
	unlock(s);
	return r;
}

int native_rec_ids_remove(uint64_t addr, uint64_t *id, uint64_t *size)
{
	struct stripe *s = stripe_of(addr);
	lock(s);
	if (s->e == NULL) {
		unlock(s);
		return 0;
	}
	size_t mask = s->n - 1, i = home(addr, s->n);
	for (; s->e[i].addr != addr; i = (i + 1) & mask) {
		if (s->e[i].addr == 0) {
			unlock(s);
			return 0;
		}
	}
	*id = s->e[i].id;
	*size = s->e[i].size;
	s->e[i].addr = TOMB;
	s->used--;
	s->tombs++;
	unlock(s);
	return 1;
}

void native_rec_ids_sum(uint64_t *blocks, uint64_t *bytes)
{
	*blocks = *bytes = 0;
	for (size_t k = 0; k < STRIPES; k++) {
		struct stripe *s = &stripes[k];
		lock(s);
		for (size_t i = 0; s->e != NULL && i < s->n; i++) {
			if (s->e[i].addr > TOMB) {
				(*blocks)++;
				*bytes += s->e[i].size;
			}
		}
		unlock(s);
	}
}

void native_rec_ids_clear(void)
{
	for (size_t k = 0; k < STRIPES; k++) {
		struct stripe *s = &stripes[k];
		lock(s);
		native_pages_free(s->e, s->n * sizeof *s->e);
		s->e = NULL;
		s->n = s->used = s->tombs = 0;
		unlock(s);
	}
}

void native_rec_ids_lock(void)
{
	for (size_t k = 0; k < STRIPES; k++)
		lock(&stripes[k]);
}

void native_rec_ids_unlock(void)
{
	for (size_t k = 0; k < STRIPES; k++)
		unlock(&stripes[k]);
}
