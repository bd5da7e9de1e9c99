/*
 * native_live_test.c - the tracker's live table (native/live.c) on its
 * own, against a brute-force record of what it was given: random adds,
 * removes and re-adds (a block freed past the tracker and handed out
 * again), with addresses packed into one region so that buckets fill and
 * records lie past their home bucket, and spread over many regions.
 * Every remove must return the record last put for that address, every
 * address never put must read as untracked, and native_live_foreach must
 * visit exactly the live records.  live.c is compiled into this test;
 * the site counters and the page allocator are the small versions below.
 */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "native-internal.h"

_Atomic uint64_t native_state = 3;

#define SITES 64
/* bytes, as counters.c would sum them (atomic: two threads in one test) */
static _Atomic long long site_live[SITES];
static _Atomic long site_allocs, site_frees;

void native_count_alloc(uint32_t id, uint64_t bytes)
{
	ck_assert_uint_lt(id, SITES);
	site_live[id] += (long long)bytes;
	site_allocs++;
}

void native_count_free(uint32_t id, uint64_t bytes)
{
	ck_assert_uint_lt(id, SITES);
	site_live[id] -= (long long)bytes;
	site_frees++;
}

void *native_pages(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void native_pages_free(void *p, size_t bytes)
{
	if (p != NULL)
		munmap(p, bytes);
}

#define KEYS 70000

struct model {
	uint64_t key[KEYS], size[KEYS];
	uint32_t site[KEYS];
	char in[KEYS];
	long live;
	unsigned long long bytes;
};

struct seen {
	long n;
	unsigned long long bytes;
	const struct model *m;
};

static void visit(uint64_t ptr, uint64_t size, uint32_t id, void *arg)
{
	struct seen *s = arg;
	s->n++;
	s->bytes += size;
	ck_assert_uint_ne(ptr, 0);
	ck_assert_uint_ge(id, 1);
}

static void check_foreach(const struct model *m)
{
	struct seen s = {0, 0, m};
	native_live_foreach(visit, NULL, &s);
	ck_assert_int_eq(s.n, m->live);
	ck_assert_uint_eq(s.bytes, m->bytes);
	long long sum = 0;
	for (int i = 0; i < SITES; i++)
		sum += site_live[i];
	ck_assert_int_eq(sum, (long long)m->bytes);
}

static void run(struct model *m, long steps, unsigned seed)
{
	srand(seed);
	for (long step = 0; step < steps; step++) {
		int i = rand() % KEYS;
		uint64_t size = (uint64_t)(rand() % 5000);
		uint32_t site = 1 + (uint32_t)(rand() % (SITES - 1));
		if (!m->in[i]) {
			native_live_add((void *)m->key[i], size, site, 3);
			m->in[i] = 1;
			m->live++;
			m->bytes += size;
		} else if (rand() % 4 == 0) {
			/* freed past the tracker, given out again */
			native_live_add((void *)m->key[i], size, site, 3);
			m->bytes += size - m->size[i];
		} else {
			uint64_t got = 0;
			uint32_t id = native_live_remove((void *)m->key[i], &got);
			ck_assert_uint_eq(id, m->site[i]);
			ck_assert_uint_eq(got, m->size[i]);
			m->in[i] = 0;
			m->live--;
			m->bytes -= m->size[i];
			continue;
		}
		m->size[i] = size;
		m->site[i] = site;
		if (rand() % 16 == 0) { /* an address never put: untracked */
			uint64_t got = 0;
			ck_assert_uint_eq(
				native_live_remove(
					(void *)(m->key[rand() % KEYS] + 8), &got),
				0);
		}
		if (step % 100000 == 0)
			check_foreach(m);
	}
	check_foreach(m);
	for (int i = 0; i < KEYS; i++) /* drain: each record once */
		if (m->in[i]) {
			uint64_t got = 0;
			ck_assert_uint_eq(native_live_remove((void *)m->key[i],
							     &got),
					  m->site[i]);
			ck_assert_uint_eq(got, m->size[i]);
			m->in[i] = 0;
			m->live--;
			m->bytes -= m->size[i];
		}
	check_foreach(m);
	ck_assert_int_eq(site_allocs - site_frees, 0);
}

/* 65,536 addresses 16 bytes apart fill one 1 MiB region (one stripe):
 * the table grows and many records lie past their home bucket. */
START_TEST(packed_region_matches_brute_force)
{
	static struct model m;
	for (int i = 0; i < KEYS; i++)
		m.key[i] = 0x7f1200000000ull + (uint64_t)(i % 65536) * 16 +
			   (uint64_t)(i / 65536) * 64 * 1048576;
	run(&m, 600000, 7);
}
END_TEST

START_TEST(spread_regions_match_brute_force)
{
	static struct model m;
	for (int i = 0; i < KEYS; i++) /* distinct: i times an odd number */
		m.key[i] = 0x7f3400000000ull +
			   ((uint64_t)i * 2654435761u % (1u << 28)) * 16;
	run(&m, 600000, 11);
}
END_TEST

START_TEST(restore_stale_state_and_clear)
{
	uint64_t got = 0;
	void *p = (void *)0x7f5600000040ull;
	native_live_add(p, 100, 5, 3);
	ck_assert_uint_eq(native_live_remove(p, &got), 5);
	ck_assert_uint_eq(got, 100);
	native_live_restore(p, 100, 5, 3); /* a failed realloc: no count */
	ck_assert_int_eq(site_live[5], 0);
	ck_assert_uint_eq(native_live_remove(p, &got), 5);
	native_live_add(p, 7, 6, 1); /* an older generation: not kept */
	ck_assert_uint_eq(native_live_remove(p, &got), 0);
	native_live_add(p, 7, 6, 3);
	native_live_clear();
	ck_assert_uint_eq(native_live_remove(p, &got), 0);
	site_live[6] = 0;
}
END_TEST

/*
 * Two threads in the same stripes: each round the owner adds a batch of
 * 2,048 records in a fresh region (one stripe) alone, then hands them to
 * the other thread, which removes them while the owner adds and removes
 * records of its own in the same region.  (Written for a version of
 * live.c whose stripes were biased to one thread, native/README.md; it
 * failed there when a taker did not revoke the bias.)  Every remove must return
 * the record put; at the end the table is empty and the site counters balance.
 */
#define BATCH 2048
#define ROUNDS 150
#define HAND_BASE 0x7f7000000000ull

static _Atomic int handed; /* rounds handed to the taker */
static _Atomic int taken;  /* rounds the taker finished */
static _Atomic long wrong; /* removes that returned another record */

static uint64_t hand_key(int round, int i)
{
	return HAND_BASE + ((uint64_t)round << 20) + (uint64_t)i * 16;
}

static void hand_check(uint64_t key, int i)
{
	uint64_t got = 0;
	uint32_t id = native_live_remove((void *)key, &got);
	if (id != 1u + (uint32_t)(i % (SITES - 1)) || got != (uint64_t)i * 3)
		atomic_fetch_add(&wrong, 1);
}

static void *taker(void *arg)
{
	(void)arg;
	for (int r = 0; r < ROUNDS; r++) {
		while (atomic_load(&handed) <= r)
			sched_yield();
		for (int i = 0; i < BATCH; i++)
			hand_check(hand_key(r, i), i);
		atomic_store(&taken, r + 1);
	}
	return NULL;
}

START_TEST(two_threads_hand_blocks_in_one_stripe)
{
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, taker, NULL), 0);
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < BATCH; i++)
			native_live_add((void *)hand_key(r, i), (uint64_t)i * 3,
					1u + (uint32_t)(i % (SITES - 1)), 3);
		atomic_store(&handed, r + 1);
		/* The owner's own records, in the same region, while the
		 * taker removes the batch there. */
		for (int i = BATCH; atomic_load(&taken) <= r; i++) {
			int k = BATCH + i % BATCH;
			native_live_add((void *)hand_key(r, k), (uint64_t)k * 3,
					1u + (uint32_t)(k % (SITES - 1)), 3);
			hand_check(hand_key(r, k), k);
		}
	}
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(wrong, 0);
	struct model *m = calloc(1, sizeof *m);
	ck_assert_ptr_nonnull(m);
	check_foreach(m); /* nothing left */
	free(m);
	ck_assert_int_eq(site_allocs - site_frees, 0);
}
END_TEST

static Suite *live_suite(void)
{
	Suite *s = suite_create("native_live");
	TCase *t = tcase_create("table");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, packed_region_matches_brute_force);
	tcase_add_test(t, spread_regions_match_brute_force);
	tcase_add_test(t, restore_stale_state_and_clear);
	tcase_add_test(t, two_threads_hand_blocks_in_one_stripe);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(live_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
