/*
 * replay_test.c - vmheap-replay (issue 31).
 *
 *  - "engine": synthetic traces in memory, made as a real run of threads
 *    would make them (one global order of calls, each thread's events
 *    buffered and written out in chunks at random moments, so a free often
 *    comes in the file before the allocation another thread made), through
 *    the program builder and the engine in this process: the live bytes at
 *    the end equal the brute-force sum of the global order, on the
 *    recorded threads and on one; cross-thread frees, reallocs of another
 *    thread's block and slots reused by many generations; traces that no
 *    order can replay are refused with the byte offset.
 *  - "tool": the real vmheap-replay on trace files (see the second half).
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../replay/replay-internal.h"
#include "lib/vmheap_spec.h"

/* ------------------------------------------------ a source over an array */

struct arr_src {
	struct rp_input *ev;
	size_t n, i;
};

static int arr_next(void *ctx, struct rp_input *out, char *err, size_t errsz)
{
	struct arr_src *a = ctx;

	(void)err;
	(void)errsz;
	if (a->i == a->n)
		return 0;
	*out = a->ev[a->i++];
	return 1;
}

static int arr_rewind(void *ctx, char *err, size_t errsz)
{
	(void)err;
	(void)errsz;
	((struct arr_src *)ctx)->i = 0;
	return 0;
}

static int build(struct rp_input *ev, size_t n, int *fd, struct rp_program *p,
		 char *err, size_t errsz)
{
	struct arr_src a = {ev, n, 0};
	struct rp_source src = {arr_next, arr_rewind, &a, "synthetic", 0,
				UINT32_MAX};

	return rp_build(&src, fd, p, err, errsz);
}

/* Build and replay both ways; the live bytes at the end must be `live`. */
static void replay_both(struct rp_input *ev, size_t n, uint64_t live,
			uint64_t ops)
{
	struct rp_program hdr;
	const struct rp_program *p;
	struct rp_result r;
	char err[300];
	int fd, serial;

	ck_assert_msg(build(ev, n, &fd, &hdr, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(hdr.live_end, live);
	p = rp_program_map(fd, err, sizeof err);
	ck_assert_msg(p != NULL, "%s", err);
	for (serial = 0; serial < 2; serial++) {
		ck_assert_int_eq(rp_replay(p, serial, &r), 0);
		ck_assert_uint_eq(r.ops, ops);
		ck_assert_uint_eq(r.live_end, live);
		ck_assert_uint_eq(r.live_deltas, live);
		ck_assert_uint_eq(r.failures, 0);
	}
	rp_program_unmap(p);
	close(fd);
}

/* ------------------------------------------------ a run of threads, made */

struct blk {
	uint32_t slot, gen;
	uint64_t size;
};

struct run {
	unsigned threads;
	/* the slots: next generation of each, and which are free */
	uint32_t *next_gen, *free_slots, nfree, nslots;
	struct blk *live; /* live blocks, any order */
	size_t nlive;
	uint64_t live_bytes; /* the truth: summed in the global order */
	/* each thread's buffered events, then the file */
	struct rp_input **buf;
	size_t *nbuf;
	struct rp_input *file;
	size_t nfile, ops;
	unsigned seed;
};

static unsigned rnd(struct run *w, unsigned n)
{
	w->seed = w->seed * 1103515245u + 12345u;
	return (w->seed >> 8) % n;
}

static void flush(struct run *w, unsigned t)
{
	for (size_t i = 0; i < w->nbuf[t]; i++) {
		w->file[w->nfile] = w->buf[t][i];
		w->file[w->nfile].offset = 48 + 8 * w->nfile;
		w->nfile++;
	}
	w->nbuf[t] = 0;
}

static struct blk new_block(struct run *w, uint64_t size)
{
	struct blk b;

	/* the lowest free slot first: slots are reused at once */
	if (w->nfree) {
		uint32_t k = 0;

		for (uint32_t i = 1; i < w->nfree; i++)
			if (w->free_slots[i] < w->free_slots[k])
				k = i;
		b.slot = w->free_slots[k];
		w->free_slots[k] = w->free_slots[--w->nfree];
	} else {
		b.slot = w->nslots++;
	}
	b.gen = w->next_gen[b.slot]++;
	b.size = size;
	w->live_bytes += size;
	return b;
}

static void end_block(struct run *w, size_t k)
{
	w->live_bytes -= w->live[k].size;
	w->free_slots[w->nfree++] = w->live[k].slot;
	w->live[k] = w->live[--w->nlive];
}

static void emit(struct run *w, unsigned t, const struct rp_input *in)
{
	w->buf[t][w->nbuf[t]++] = *in;
	w->ops++;
	if (rnd(w, 8) == 0) /* a thread's buffer is written out */
		flush(w, rnd(w, w->threads));
}

static void make_run(struct run *w, unsigned threads, size_t calls,
		     unsigned seed)
{
	static const uint8_t makers[] = {RP_MALLOC,	 RP_CALLOC,
					 RP_MEMALIGN,	 RP_POSIX_MEMALIGN,
					 RP_ALIGNED_ALLOC, RP_VALLOC,
					 RP_MALLOC,	 RP_MALLOC};

	memset(w, 0, sizeof *w);
	w->threads = threads;
	w->seed = seed;
	w->next_gen = calloc(calls + 1, sizeof *w->next_gen);
	w->free_slots = calloc(calls + 1, sizeof *w->free_slots);
	w->live = calloc(calls + 1, sizeof *w->live);
	w->buf = calloc(threads, sizeof *w->buf);
	w->nbuf = calloc(threads, sizeof *w->nbuf);
	w->file = calloc(calls + 1, sizeof *w->file);
	for (unsigned t = 0; t < threads; t++)
		w->buf[t] = calloc(calls + 1, sizeof **w->buf);
	for (size_t c = 0; c < calls; c++) {
		unsigned t = rnd(w, threads), what = rnd(w, 10);
		struct rp_input in = {0};

		in.thread = t;
		if (w->nlive && what < 4) { /* free any thread's block */
			size_t k = rnd(w, (unsigned)w->nlive);

			in.op = RP_FREE;
			in.slot = w->live[k].slot;
			in.gen = w->live[k].gen;
			end_block(w, k);
		} else if (w->nlive && what < 6) { /* realloc it */
			size_t k = rnd(w, (unsigned)w->nlive);
			struct blk old = w->live[k], b;

			in.op = rnd(w, 2) ? RP_REALLOC : RP_REALLOCARRAY;
			in.old_slot = old.slot;
			in.old_gen = old.gen;
			end_block(w, k);
			b = new_block(w, 1 + rnd(w, 5000));
			in.slot = b.slot;
			in.gen = b.gen;
			in.size = b.size;
			w->live[w->nlive++] = b;
		} else {
			struct blk b;

			in.op = makers[rnd(w, sizeof makers)];
			b = new_block(w, rnd(w, 3) ? rnd(w, 300)
						   : rnd(w, 200000));
			if (in.op == RP_MEMALIGN || in.op == RP_ALIGNED_ALLOC ||
			    in.op == RP_POSIX_MEMALIGN)
				in.align = 16u << rnd(w, 6);
			in.slot = b.slot;
			in.gen = b.gen;
			in.size = b.size;
			w->live[w->nlive++] = b;
		}
		emit(w, t, &in);
	}
	/* the rest, threads in the reverse order: frees first again */
	for (unsigned t = threads; t-- > 0;)
		flush(w, t);
}

static void free_run(struct run *w)
{
	for (unsigned t = 0; t < w->threads; t++)
		free(w->buf[t]);
	free(w->buf);
	free(w->nbuf);
	free(w->file);
	free(w->next_gen);
	free(w->free_slots);
	free(w->live);
}

/* How many events of the file come before the event that makes the block
 * they end (frees and reallocs of a block another thread made, written
 * out first). */
static size_t frees_before_their_allocation(const struct run *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nfile; i++) {
		const struct rp_input *e = &w->file[i];
		uint64_t slot = e->op == RP_FREE ? e->slot : e->old_slot;
		uint64_t gen = e->op == RP_FREE ? e->gen : e->old_gen;
		int made = 0;

		if (e->op != RP_FREE && e->op != RP_REALLOC &&
		    e->op != RP_REALLOCARRAY)
			continue;
		for (size_t j = 0; j < i && !made; j++)
			made = w->file[j].op != RP_FREE &&
			       w->file[j].slot == slot &&
			       w->file[j].gen == gen;
		n += !made;
	}
	return n;
}

START_TEST(cross_thread_frees_wait_for_their_allocation)
{
	struct run w;

	make_run(&w, 4, 20000, 7);
	/* the shape this test is about is really there */
	ck_assert_uint_gt(frees_before_their_allocation(&w), 100);
	replay_both(w.file, w.nfile, w.live_bytes, w.ops);
	free_run(&w);
}
END_TEST

START_TEST(slots_reused_by_many_generations_stay_apart)
{
	struct run w;
	uint32_t most = 0;

	/* few live blocks: the same slots come back thousands of times */
	make_run(&w, 3, 30000, 11);
	for (uint32_t s = 0; s < w.nslots; s++)
		if (w.next_gen[s] > most)
			most = w.next_gen[s];
	ck_assert_uint_gt(most, 300);
	replay_both(w.file, w.nfile, w.live_bytes, w.ops);
	free_run(&w);
}
END_TEST

START_TEST(one_thread_replays_without_waits)
{
	struct run w;

	make_run(&w, 1, 5000, 3);
	replay_both(w.file, w.nfile, w.live_bytes, w.ops);
	free_run(&w);
}
END_TEST

/* Build `ev` and expect a refusal whose message holds `want`. */
static void refused(struct rp_input *ev, size_t n, const char *want)
{
	struct rp_program hdr;
	char err[300];
	int fd;

	ck_assert_int_lt(build(ev, n, &fd, &hdr, err, sizeof err), 0);
	ck_assert_int_eq(fd, -1);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
	ck_assert_msg(strstr(err, "synthetic: ") == err, "%s", err);
}

START_TEST(free_of_a_block_never_made_is_refused_with_its_offset)
{
	struct rp_input ev[] = {
	    {.thread = 0, .op = RP_MALLOC, .slot = 0, .size = 10, .offset = 48},
	    {.thread = 1, .op = RP_FREE, .slot = 0, .gen = 0, .offset = 60},
	    {.thread = 1, .op = RP_FREE, .slot = 1, .gen = 0, .offset = 72},
	};

	refused(ev, 3, "free of block 1#0, which no order of the threads makes live first");
	refused(ev, 3, "(byte offset 72)");
}
END_TEST

START_TEST(a_second_free_of_a_block_is_refused)
{
	struct rp_input ev[] = {
	    {.thread = 0, .op = RP_MALLOC, .slot = 0, .size = 10, .offset = 48},
	    {.thread = 0, .op = RP_FREE, .slot = 0, .gen = 0, .offset = 60},
	    {.thread = 1, .op = RP_FREE, .slot = 0, .gen = 0, .offset = 70},
	};

	refused(ev, 3, "(byte offset 70)");
}
END_TEST

START_TEST(threads_that_would_wait_for_each_other_are_refused)
{
	/* thread 0 frees what thread 1 makes after it frees what thread 0
	 * makes after...: no order replays it */
	struct rp_input ev[] = {
	    {.thread = 0, .op = RP_FREE, .slot = 1, .offset = 100},
	    {.thread = 0, .op = RP_MALLOC, .slot = 0, .size = 8, .offset = 101},
	    {.thread = 1, .op = RP_FREE, .slot = 0, .offset = 200},
	    {.thread = 1, .op = RP_MALLOC, .slot = 1, .size = 8, .offset = 201},
	};

	refused(ev, 4, "(byte offset 100)");
}
END_TEST

START_TEST(a_generation_skipped_is_refused)
{
	struct rp_input ev[] = {
	    {.thread = 0, .op = RP_MALLOC, .slot = 0, .size = 8, .offset = 48},
	    {.thread = 0, .op = RP_FREE, .slot = 0, .offset = 50},
	    {.thread = 0, .op = RP_MALLOC, .slot = 0, .gen = 2, .size = 8,
	     .offset = 52},
	};

	refused(ev, 3, "never reaches that generation (byte offset 52)");
}
END_TEST

START_TEST(an_alignment_not_a_power_of_two_is_refused)
{
	struct rp_input ev[] = {
	    {.thread = 0, .op = RP_MEMALIGN, .align = 24, .size = 8,
	     .offset = 90},
	};

	refused(ev, 1, "memalign alignment is not a power of two (byte "
		       "offset 90)");
}
END_TEST

START_TEST(an_empty_trace_replays_nothing)
{
	replay_both(NULL, 0, 0, 0);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("replay");
	TCase *e = spec_tcase(s, "engine", 60);

	tcase_add_test(e, cross_thread_frees_wait_for_their_allocation);
	tcase_add_test(e, slots_reused_by_many_generations_stay_apart);
	tcase_add_test(e, one_thread_replays_without_waits);
	tcase_add_test(e, free_of_a_block_never_made_is_refused_with_its_offset);
	tcase_add_test(e, a_second_free_of_a_block_is_refused);
	tcase_add_test(e, threads_that_would_wait_for_each_other_are_refused);
	tcase_add_test(e, a_generation_skipped_is_refused);
	tcase_add_test(e, an_alignment_not_a_power_of_two_is_refused);
	tcase_add_test(e, an_empty_trace_replays_nothing);
	return s;
}
