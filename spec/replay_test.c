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
#include "tools_harness-internal.h"
#include "vmheap.h"
#include "vmheap_trace_encode.h"

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
		ck_assert_int_eq(rp_replay(p, serial, serial, 1, &r), 0);
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

struct workload {
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

static unsigned rnd(struct workload *w, unsigned n)
{
	w->seed = w->seed * 1103515245u + 12345u;
	return (w->seed >> 8) % n;
}

static void flush(struct workload *w, unsigned t)
{
	for (size_t i = 0; i < w->nbuf[t]; i++) {
		w->file[w->nfile] = w->buf[t][i];
		w->file[w->nfile].offset = 48 + 8 * w->nfile;
		w->nfile++;
	}
	w->nbuf[t] = 0;
}

static struct blk new_block(struct workload *w, uint64_t size)
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

static void end_block(struct workload *w, size_t k)
{
	w->live_bytes -= w->live[k].size;
	w->free_slots[w->nfree++] = w->live[k].slot;
	w->live[k] = w->live[--w->nlive];
}

static void emit(struct workload *w, unsigned t, const struct rp_input *in)
{
	w->buf[t][w->nbuf[t]++] = *in;
	w->ops++;
	if (rnd(w, 8) == 0) /* a thread's buffer is written out */
		flush(w, rnd(w, w->threads));
}

static void make_run(struct workload *w, unsigned threads, size_t calls,
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
			if (in.op == RP_ALIGNED_ALLOC) { /* C11: a multiple */
				w->live_bytes -= b.size;
				b.size = (b.size + in.align - 1) & ~(in.align - 1);
				w->live_bytes += b.size;
			}
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

static void free_run(struct workload *w)
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
static size_t frees_before_their_allocation(const struct workload *w)
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
	struct workload w;

	make_run(&w, 4, 20000, 7);
	/* the shape this test is about is really there */
	ck_assert_uint_gt(frees_before_their_allocation(&w), 100);
	replay_both(w.file, w.nfile, w.live_bytes, w.ops);
	free_run(&w);
}
END_TEST

START_TEST(slots_reused_by_many_generations_stay_apart)
{
	struct workload w;
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
	struct workload w;

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

START_TEST(a_realloc_that_returns_its_own_id_is_refused)
{
	/* realloc ends its block and begins the slot's next generation:
	 * the same id again would let two threads resize one block at once
	 * (found by fuzz_replay, spec/regress/replay/) */
	struct rp_input ev[] = {
	    {.thread = 0, .op = RP_MALLOC, .size = 8, .offset = 48},
	    {.thread = 1, .op = RP_REALLOC, .size = 16, .offset = 60},
	    {.thread = 2, .op = RP_REALLOC, .size = 0, .offset = 70},
	};
	struct rp_input ok[] = {
	    {.thread = 0, .op = RP_MALLOC, .size = 8, .offset = 48},
	    {.thread = 1, .op = RP_REALLOC, .gen = 1, .size = 16, .offset = 60},
	    {.thread = 2, .op = RP_REALLOC, .gen = 2, .old_gen = 1, .size = 0,
	     .offset = 70},
	};

	refused(ev, 3, "realloc of block 0#0 returns block 0#0: the block it "
		       "returns is its slot's next generation (byte offset "
		       "60)");
	replay_both(ok, 3, 0, 3);
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

/* ------------------------------------------------ trace files, written */

/* The trace event of a synthetic one (the engine's ops are the trace's
 * minus 1). */
static struct vmheap_trace_event trace_event(const struct rp_input *in)
{
	struct vmheap_trace_event ev;

	memset(&ev, 0, sizeof ev);
	ev.thread = in->thread;
	ev.op = (uint8_t)(in->op + 1);
	ev.block.slot = (uint32_t)in->slot;
	ev.block.gen = (uint32_t)in->gen;
	ev.old_block.slot = VMHEAP_TRACE_NONE;
	ev.size = in->size;
	ev.align = in->align;
	if (in->op == RP_REALLOC || in->op == RP_REALLOCARRAY) {
		ev.old_block.slot = (uint32_t)in->old_slot;
		ev.old_block.gen = (uint32_t)in->old_gen;
	}
	if (in->op == RP_CALLOC || in->op == RP_REALLOCARRAY) {
		ev.nmemb = 1;
		ev.elsize = in->size;
	}
	return ev;
}

static void put_chunk(FILE *f, uint8_t kind, uint32_t thread, uint32_t count,
		      const uint8_t *payload, uint32_t len)
{
	uint8_t head[VMHEAP_TRACE_CHUNK_HEAD], crc[4];
	uint32_t c;

	vmheap_trace_put_chunk_head(head, kind, thread, count, len);
	c = vmheap_crc32c(0, head, sizeof head);
	c = vmheap_crc32c(c, payload, len);
	vmheap_trace_put_u32(crc, c);
	fwrite(head, 1, sizeof head, f);
	fwrite(payload, 1, len, f);
	fwrite(crc, 1, 4, f);
}

/*
 * Write w's file order as a trace (TRACE.md): each run of one thread's
 * events a chunk, every block id explicit, the trailer with the
 * brute-force live blocks and bytes.  Returns the path.
 */
static const char *write_trace(const char *name, const struct workload *w)
{
	const char *path = tmp_path(name);
	struct vmheap_trace_stream *st = calloc(w->threads, sizeof *st);
	uint8_t *payload = malloc(w->nfile * VMHEAP_TRACE_ITEM_MAX + 1);
	uint8_t head[VMHEAP_TRACE_HEADER_BYTES], trailer[72], end[16];
	struct vmheap_trace_info info;
	FILE *f = fopen(path, "wbx");
	long trailer_at;
	size_t i = 0;

	ck_assert_ptr_nonnull(f);
	vmheap_trace_put_header(head, 4096, 1024, 256, 4242, 1);
	vmheap_trace_put_u32(head + 44, vmheap_crc32c(0, head, 44));
	fwrite(head, 1, sizeof head, f);
	while (i < w->nfile) {
		uint32_t t = w->file[i].thread, count = 0;
		uint8_t *p = payload;

		for (; i < w->nfile && w->file[i].thread == t; i++, count++) {
			struct vmheap_trace_event ev = trace_event(&w->file[i]);

			p = vmheap_trace_put_event(p, &st[t], &ev,
						   VMHEAP_TRACE_F_EXPLICIT);
		}
		put_chunk(f, VMHEAP_TRACE_KIND_EVENTS, t, count, payload,
			  (uint32_t)(p - payload));
	}
	memset(&info, 0, sizeof info);
	info.events = w->nfile;
	info.threads = w->threads;
	info.slots = w->nslots;
	info.live_blocks = w->nlive;
	info.live_bytes = w->live_bytes;
	vmheap_trace_put_trailer(trailer, &info);
	trailer_at = ftell(f);
	put_chunk(f, VMHEAP_TRACE_KIND_TRAILER, 0xffffffffu, 0, trailer,
		  sizeof trailer);
	vmheap_trace_put_end(end, (uint64_t)trailer_at);
	fwrite(end, 1, sizeof end, f);
	ck_assert_int_eq(fclose(f), 0);
	free(payload);
	free(st);
	return path;
}

/* ------------------------------------------------ the tool */

static const char *const row_keys[] = {
    "allocator",	  "ops",	     "seconds",
    "cpu_seconds",	  "ns_per_op",	     "peak_rss",
    "rss_end",		  "live_bytes_peak", "live_bytes_end",
    "fragmentation_peak", "fragmentation_end",
};

/* Check the JSON rows: exactly the keys, the ops and live bytes of the
 * workload; returns how many rows. */
static size_t check_rows(const char *out, const struct workload *w,
			 const char *const *names, size_t nnames)
{
	struct jval *j = json_parse(out);
	size_t i, k;

	ck_assert_msg(j && j->type == J_ARR, "not a JSON array: %s", out);
	ck_assert_uint_eq(j->n, nnames);
	for (i = 0; i < j->n; i++) {
		const struct jval *row = j->items[i];

		ck_assert_int_eq(row->type, J_OBJ);
		ck_assert_uint_eq(row->n, sizeof row_keys / sizeof row_keys[0]);
		for (k = 0; k < row->n; k++)
			ck_assert_str_eq(row->keys[k], row_keys[k]);
		ck_assert_str_eq(json_get(row, "allocator")->str, names[i]);
		ck_assert_int_eq(json_get(row, "ops")->inum, (long long)w->ops);
		ck_assert_int_eq(json_get(row, "live_bytes_end")->inum,
				 (long long)w->live_bytes);
		ck_assert_int_gt(json_get(row, "live_bytes_peak")->inum,
				 (long long)w->live_bytes / 2);
		ck_assert_int_gt(json_get(row, "seconds")->num * 1e9, 0);
	}
	json_free(j);
	return nnames;
}

START_TEST(every_allocator_ends_with_the_recorded_live_bytes)
{
	static const char *const names[] = {"glibc", "jemalloc", "tcmalloc",
					    "mimalloc"};
	const char *threads[] = {"recorded", "1"};
	struct workload w;
	const char *trace;

	make_run(&w, 4, 20000, 5);
	ck_assert_uint_gt(frees_before_their_allocation(&w), 100);
	trace = write_trace("four.trace", &w);
	for (int t = 0; t < 2; t++) {
		struct spec_run r =
		    spec_tool("vmheap-replay",
			      (const char *[]){"--format", "json", "--threads",
					       threads[t], trace, NULL});

		ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
		ck_assert_msg(r.err_len == 0, "stderr: %s", r.err);
		check_rows(r.out, &w, names, 4);
		spec_run_free(&r);
	}
	free_run(&w);
}
END_TEST

START_TEST(a_missing_allocator_is_skipped_with_a_message)
{
	static const char *const names[] = {"glibc"};
	const char *empty = spec_mkdtemp("nolibs");
	char libdir[600];
	struct workload w;
	struct spec_run r;
	const char *trace;

	snprintf(libdir, sizeof libdir, "VMHEAP_REPLAY_LIBDIR=%s", empty);
	make_run(&w, 2, 2000, 9);
	trace = write_trace("missing.trace", &w);
	r = spec_tool_with(
	    "vmheap-replay",
	    (const char *[]){"--allocator", "glibc", "--allocator", "jemalloc",
			     "--allocator", "/no/such/libmalloc.so", "--format",
			     "json", trace, NULL},
	    &(struct spec_tool_opts){.env = (const char *[]){libdir, NULL}});
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "vmheap-replay: skipping jemalloc: "
				    "libjemalloc.so.2 is not in "
				    "VMHEAP_REPLAY_LIBDIR") != NULL,
		      "%s", r.err);
	ck_assert_msg(strstr(r.err, "vmheap-replay: skipping libmalloc.so: "
				    "/no/such/libmalloc.so is missing") !=
			  NULL,
		      "%s", r.err);
	check_rows(r.out, &w, names, 1);
	spec_run_free(&r);
	free_run(&w);
}
END_TEST

START_TEST(a_library_that_is_no_allocator_is_caught)
{
	/* libm preloads fine but malloc stays glibc's: the tool sees it */
	struct workload w;
	struct spec_run r;
	const char *trace, *libm = "/lib/x86_64-linux-gnu/libm.so.6";

	ck_assert_int_eq(access(libm, R_OK), 0);
	make_run(&w, 1, 100, 1);
	trace = write_trace("libm.trace", &w);
	r = spec_tool("vmheap-replay",
		      (const char *[]){"--allocator", libm, trace, NULL});
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "libm.so.6: malloc in the replay came "
				    "from ") != NULL &&
			  strstr(r.err, "libc.so.6, not from the preloaded "),
		      "%s", r.err);
	spec_run_free(&r);
	free_run(&w);
}
END_TEST

START_TEST(text_and_csv_show_the_same_rows)
{
	struct workload w;
	struct spec_run r;
	const char *trace;
	char ***rows;
	size_t n;

	make_run(&w, 2, 3000, 13);
	trace = write_trace("text.trace", &w);
	r = spec_tool("vmheap-replay",
		      (const char *[]){"--allocator", "glibc", "--allocator",
				       "mimalloc", "--format", "csv", trace,
				       NULL});
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	rows = parse_csv(r.out, &n);
	ck_assert_uint_eq(n, 3);
	for (size_t k = 0; k < sizeof row_keys / sizeof row_keys[0]; k++)
		ck_assert_str_eq(rows[0][k], row_keys[k]);
	ck_assert_str_eq(rows[1][0], "glibc");
	ck_assert_str_eq(rows[2][0], "mimalloc");
	ck_assert_int_eq(atoll(rows[2][8]), (long long)w.live_bytes);
	csv_free(rows, n);
	spec_run_free(&r);
	r = spec_tool("vmheap-replay",
		      (const char *[]){"--allocator", "glibc", "--allocator",
				       "mimalloc", trace, NULL});
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, trace) == r.out, "%s", r.out);
	ck_assert_msg(strstr(r.out, "3000 events of 2 threads"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "\nallocator "), "%s", r.out);
	ck_assert_msg(strstr(r.out, "\nglibc ") && strstr(r.out, "\nmimalloc "),
		      "%s", r.out);
	/* every ranked column has its best marked once: 7 marks */
	ck_assert_int_eq(spec_count(r.out, "*"), 7 + 1);
	ck_assert_msg(strstr(r.out, "* the lowest of the column"), "%s", r.out);
	spec_run_free(&r);
	free_run(&w);
}
END_TEST

/* Replay a damaged copy of `trace`: refused, with `want` in the message. */
static void refused_file(const char *trace, const char *name, size_t cut,
			 long flip, const char *want)
{
	size_t len;
	char *bytes = slurp(trace, &len);
	const char *bad = tmp_path(name);
	struct spec_run r;

	if (flip >= 0)
		bytes[flip] ^= 0x40;
	spec_write_file(bad, bytes, cut ? cut : len);
	r = spec_tool("vmheap-replay",
		      (const char *[]){"--allocator", "glibc", bad, NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_uint_eq(r.out_len, 0);
	ck_assert_msg(strstr(r.err, "vmheap-replay: ") == r.err, "%s", r.err);
	ck_assert_msg(strstr(r.err, bad) && strstr(r.err, want), "'%s' lacks %s",
		      r.err, want);
	spec_run_free(&r);
	free(bytes);
}

START_TEST(a_damaged_trace_is_refused_with_its_offset)
{
	struct workload w;
	const char *trace;
	size_t len;
	char *bytes;

	make_run(&w, 3, 3000, 17);
	trace = write_trace("good.trace", &w);
	free(slurp(trace, &len));
	refused_file(trace, "cut.trace", len / 2, -1, "offset");
	refused_file(trace, "flipped.trace", 0, (long)(len / 3), "offset");
	refused_file(trace, "late.trace", 0, (long)(len * 2 / 3), "offset");
	refused_file(trace, "header.trace", 0, 3, "offset");
	bytes = slurp(trace, &len);
	ck_assert_uint_gt(len, 100);
	free(bytes);
	free_run(&w);
}
END_TEST

START_TEST(touch_pages_makes_a_big_block_resident)
{
	/* one block of 32 MiB, live at the end: its first byte alone keeps
	 * one page resident, a byte of each page all of it */
	struct rp_input ev = {.thread = 0, .op = RP_MALLOC, .size = 32 << 20};
	struct workload w;
	const char *trace;
	long long rss[2];

	memset(&w, 0, sizeof w);
	w.threads = 1;
	w.file = &ev;
	w.nfile = w.nslots = w.nlive = w.ops = 1;
	w.live_bytes = ev.size;
	trace = write_trace("big.trace", &w);
	for (int pages = 0; pages < 2; pages++) {
		struct spec_run r = spec_tool(
		    "vmheap-replay",
		    (const char *[]){"--allocator", "glibc", "--touch",
				     pages ? "pages" : "first", "--format",
				     "json", trace, NULL});
		struct jval *j;

		ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
		j = json_parse(r.out);
		ck_assert_ptr_nonnull(j);
		rss[pages] = json_get(j->items[0], "peak_rss")->inum;
		ck_assert_int_eq(json_get(j->items[0], "live_bytes_end")->inum,
				 32 << 20);
		json_free(j);
		spec_run_free(&r);
	}
	ck_assert_int_lt(rss[0], 16 << 20);
	ck_assert_int_ge(rss[1], 32 << 20);
	ck_assert_int_lt(rss[1], 40 << 20);
}
END_TEST

START_TEST(a_replay_that_gives_no_answer_fails_the_command)
{
	/* an engine that dies at once: an error, no row made up for it */
	struct workload w;
	struct spec_run r;
	struct jval *j;
	const char *trace;

	make_run(&w, 1, 100, 21);
	trace = write_trace("noanswer.trace", &w);
	r = spec_tool_with("vmheap-replay",
			   (const char *[]){"--allocator", "glibc", "--format",
					    "json", trace, NULL},
			   &(struct spec_tool_opts){
			       .env = (const char *[]){
				   "VMHEAP_REPLAY_ENGINE=/bin/false", NULL}});
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "vmheap-replay: glibc: the replay gave no "
				    "answer (exit status 1)"),
		      "%s", r.err);
	j = json_parse(r.out);
	ck_assert_msg(j && j->type == J_ARR && j->n == 0, "%s", r.out);
	json_free(j);
	spec_run_free(&r);
	free_run(&w);
}
END_TEST

START_TEST(the_allocator_sees_the_program_calls_and_little_else)
{
	/* a counting allocator: every call the replay makes goes through
	 * it; the engine's tables, the program and the threads do not */
	struct workload w;
	struct spec_run r;
	const char *trace;
	unsigned long calls = 0;
	const char *line;

	make_run(&w, 4, 20000, 23);
	trace = write_trace("counted.trace", &w);
	r = spec_tool("vmheap-replay",
		      (const char *[]){"--allocator",
				       spec_build("spec/replay_counter.so"),
				       "--format", "csv", trace, NULL});
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	line = strstr(r.err, "replay_counter: ");
	ck_assert_msg(line && sscanf(line, "replay_counter: %lu", &calls) == 1,
		      "%s", r.err);
	ck_assert_uint_ge(calls, w.ops);
	ck_assert_uint_lt(calls, w.ops + 100);
	ck_assert_msg(strstr(r.out, "\nreplay_counter.so,20000,"), "%s", r.out);
	spec_run_free(&r);
	free_run(&w);
}
END_TEST

/* ------------------------------------------------ a real program */

START_TEST(a_recorded_program_replays_to_its_live_bytes_everywhere)
{
	static const char *const names[] = {"glibc", "jemalloc", "tcmalloc",
					    "mimalloc"};
	const char *trace = tmp_path("victim.trace");
	const char *rec[] = {spec_bin("vmheap-run"), "--record", trace,
			     spec_build("spec/replay_victim"), "4", "5000",
			     NULL};
	unsigned long long own_live = 0, own_calls = 0;
	long long live_end = -1;
	struct spec_run r;
	struct jval *j;

	ck_assert_int_ge(spec_run(rec, NULL, NULL, 120000, &r), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_int_eq(sscanf(r.out, "live %llu calls %llu", &own_live,
				&own_calls),
			 2);
	spec_run_free(&r);
	r = spec_tool("vmheap-replay",
		      (const char *[]){"--format", "json", trace, NULL});
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	j = json_parse(r.out);
	ck_assert_msg(j && j->type == J_ARR && j->n == 4, "%s", r.out);
	for (size_t i = 0; i < j->n; i++) {
		const struct jval *row = j->items[i];
		long long end = json_get(row, "live_bytes_end")->inum;

		ck_assert_str_eq(json_get(row, "allocator")->str, names[i]);
		/* the same whatever the allocator */
		if (live_end < 0)
			live_end = end;
		ck_assert_int_eq(end, live_end);
		/* the program's own blocks, plus a few of the C library's */
		ck_assert_int_ge(end, (long long)own_live);
		ck_assert_int_lt(end, (long long)own_live + 1024 * 1024);
		ck_assert_int_ge(json_get(row, "ops")->inum,
				 (long long)own_calls);
		ck_assert_int_gt(json_get(row, "peak_rss")->inum, 0);
	}
	json_free(j);
	spec_run_free(&r);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("replay");
	TCase *e = spec_tcase(s, "engine", 60);
	TCase *t = spec_tcase(s, "tool", 120);

	tcase_add_test(e, cross_thread_frees_wait_for_their_allocation);
	tcase_add_test(e, slots_reused_by_many_generations_stay_apart);
	tcase_add_test(e, one_thread_replays_without_waits);
	tcase_add_test(e, free_of_a_block_never_made_is_refused_with_its_offset);
	tcase_add_test(e, a_second_free_of_a_block_is_refused);
	tcase_add_test(e, threads_that_would_wait_for_each_other_are_refused);
	tcase_add_test(e, a_generation_skipped_is_refused);
	tcase_add_test(e, an_alignment_not_a_power_of_two_is_refused);
	tcase_add_test(e, a_realloc_that_returns_its_own_id_is_refused);
	tcase_add_test(e, an_empty_trace_replays_nothing);
	tcase_add_test(t, every_allocator_ends_with_the_recorded_live_bytes);
	tcase_add_test(t, a_missing_allocator_is_skipped_with_a_message);
	tcase_add_test(t, a_library_that_is_no_allocator_is_caught);
	tcase_add_test(t, text_and_csv_show_the_same_rows);
	tcase_add_test(t, a_damaged_trace_is_refused_with_its_offset);
	tcase_add_test(t, a_recorded_program_replays_to_its_live_bytes_everywhere);
	tcase_add_test(t, touch_pages_makes_a_big_block_resident);
	tcase_add_test(t, a_replay_that_gives_no_answer_fails_the_command);
	tcase_add_test(t, the_allocator_sees_the_program_calls_and_little_else);
	return s;
}
