/*
 * trace_test.c - malloc traces (format/TRACE.md): the worked example byte
 * for byte, the reader's refusals (every cut, every damaged byte), and
 * real programs recorded by `vmheap-run --record` (spec/native/
 * trace_victim.c): what they say they did against what the trace holds,
 * a fork's two traces, a file size limit that stops the recording.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_example.h"
#include "lib/vmheap_spec.h"
#include "vmheap_trace.h"
#include "vmheap_trace_encode.h"

#define BASE 40000u /* the victim's sizes: [BASE, BASE + 1000) */

static const char *trace_md(void)
{
	return spec_src("format/TRACE.md");
}

/* ------------------------------------------------------ worked example */

START_TEST(worked_example_in_trace_md_is_what_the_encoder_writes)
{
	size_t n, m;
	uint8_t *doc = spec_md_hex(trace_md(), "trace-example", &m);
	uint8_t *enc = trace_example(&n);
	ck_assert_uint_eq(n, 280);
	ck_assert_uint_eq(m, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(doc[i] == enc[i],
			      "byte 0x%zx: TRACE.md has %02x, the encoder %02x",
			      i, doc[i], enc[i]);
	free(doc);
	free(enc);
}
END_TEST

/* What section 10's tables say each event is. */
static const struct expect {
	uint64_t offset, time;
	uint32_t thread;
	unsigned op;
	uint32_t slot, gen, old_slot, old_gen;
	uint64_t size, nmemb, elsize, align;
} example[] = {
#define N VMHEAP_TRACE_NONE
	{0x42, 0, 0, VMHEAP_TRACE_MALLOC, 0, 0, N, 0, 100, 0, 0, 0},
	{0x44, 0, 0, VMHEAP_TRACE_CALLOC, 1, 0, N, 0, 24, 3, 8, 0},
	{0x47, 0, 0, VMHEAP_TRACE_POSIX_MEMALIGN, 2, 0, N, 0, 40, 0, 0, 64},
	{0x4a, 0, 0, VMHEAP_TRACE_FREE, 1, 0, N, 0, 0, 0, 0, 0},
	{0x4d, 0, 0, VMHEAP_TRACE_REALLOC, 1, 1, 0, 0, 200, 0, 0, 0},
	{0x55, 1500, 0, VMHEAP_TRACE_FREE, 2, 0, N, 0, 0, 0, 0, 0},
	{0x58, 1500, 0, VMHEAP_TRACE_FREE, 1, 1, N, 0, 0, 0, 0, 0},
	{0x71, 0, 1, VMHEAP_TRACE_MALLOC, 4, 0, N, 0, 5000, 0, 0, 0},
	{0x74, 0, 1, VMHEAP_TRACE_CALLOC, 0, 1, N, 0, 32, 1, 32, 0},
	{0x79, 0, 1, VMHEAP_TRACE_FREE, N, 0, N, 0, 0, 0, 0, 0},
	{0x7a, 0, 1, VMHEAP_TRACE_MALLOC, N, 0, N, 0, 1ull << 40, 0, 0, 0},
	{0x81, 0, 1, VMHEAP_TRACE_MEMALIGN, 5, 0, N, 0, 10, 0, 0, 24},
	{0x84, 0, 1, VMHEAP_TRACE_REALLOCARRAY, 6, 0, 0, 1, 32, 4, 8, 0},
	{0xa0, 1750, 0, VMHEAP_TRACE_MALLOC, 2, 1, N, 0, 16, 0, 0, 0},
	{0xa2, 1750, 0, VMHEAP_TRACE_REALLOC, N, 0, 2, 1, 0, 0, 0, 0},
	{0xa6, 1750, 0, VMHEAP_TRACE_REALLOC, 1, 2, N, 0, 64, 0, 0, 0},
#undef N
};

START_TEST(worked_example_reads_back_event_by_event)
{
	size_t n;
	uint8_t *doc = spec_md_hex(trace_md(), "trace-example", &n);
	vmheap_trace_reader *r;
	ck_assert_int_eq(vmheap_trace_open_mem(&r, doc, n, "example"), 0);
	const struct vmheap_trace_info *in = vmheap_trace_info(r);
	ck_assert_uint_eq(in->pid, 4242);
	ck_assert_uint_eq(in->start_unix_us, 1700000000000000ull);
	ck_assert_uint_eq(in->ring, 2);
	ck_assert_uint_eq(in->batch, 4);
	ck_assert_uint_eq(in->events, 16);
	ck_assert_uint_eq(in->threads, 2);
	ck_assert_uint_eq(in->slots, 7);
	ck_assert_uint_eq(in->live_blocks, 4);
	ck_assert_uint_eq(in->live_bytes, 5106);
	ck_assert_uint_eq(in->end_time_us, 2000);
	struct vmheap_trace_event ev;
	size_t i = 0;
	int rc;
	while ((rc = vmheap_trace_next(r, &ev)) > 0) {
		ck_assert_uint_lt(i, sizeof example / sizeof example[0]);
		const struct expect *x = &example[i++];
		ck_assert_uint_eq(ev.offset, x->offset);
		ck_assert_uint_eq(ev.time_us, x->time);
		ck_assert_uint_eq(ev.thread, x->thread);
		ck_assert_uint_eq(ev.op, x->op);
		ck_assert_uint_eq(ev.block.slot, x->slot);
		ck_assert_uint_eq(ev.block.gen, x->gen);
		ck_assert_uint_eq(ev.old_block.slot, x->old_slot);
		ck_assert_uint_eq(ev.old_block.gen, x->old_gen);
		ck_assert_uint_eq(ev.size, x->size);
		ck_assert_uint_eq(ev.nmemb, x->nmemb);
		ck_assert_uint_eq(ev.elsize, x->elsize);
		ck_assert_uint_eq(ev.align, x->align);
	}
	ck_assert_msg(rc == 0, "%s", vmheap_trace_error(r));
	ck_assert_uint_eq(i, 16);
	ck_assert_int_eq(vmheap_trace_next(r, &ev), 0); /* and stays there */
	vmheap_trace_free(r);
	free(doc);
}
END_TEST

/* Read a trace in memory to its end: 0, or the error code (*msg gets the
 * message, malloc'd, when not NULL). */
static int read_all(const uint8_t *data, size_t len, char **msg)
{
	vmheap_trace_reader *r;
	struct vmheap_trace_event ev;
	int rc = vmheap_trace_open_mem(&r, data, len, "t");
	if (rc == 0)
		while ((rc = vmheap_trace_next(r, &ev)) > 0)
			;
	if (msg != NULL)
		*msg = strdup(vmheap_trace_error(r));
	vmheap_trace_free(r);
	return rc;
}

/* Every cut of `data` is refused at open, saying where the file ends. */
static void every_cut_refused(const uint8_t *data, size_t len, size_t step)
{
	for (size_t cut = 0; cut < len; cut += step) {
		char *msg, want[64];
		int rc = read_all(data, cut, &msg);
		ck_assert_msg(rc == VMHEAP_ETRUNCATED ||
				      (cut < 8 && rc == VMHEAP_EMAGIC),
			      "a cut at %zu gives %d: %s", cut, rc, msg);
		snprintf(want, sizeof want, "byte offset %zu", cut);
		ck_assert_msg(cut < 8 || strstr(msg, want) != NULL,
			      "a cut at %zu: %s", cut, msg);
		free(msg);
	}
}

START_TEST(truncated_example_is_refused_at_every_offset)
{
	size_t n;
	uint8_t *doc = spec_md_hex(trace_md(), "trace-example", &n);
	ck_assert_int_eq(read_all(doc, n, NULL), 0);
	every_cut_refused(doc, n, 1);
	free(doc);
}
END_TEST

START_TEST(every_damaged_byte_of_the_example_is_refused)
{
	size_t n;
	uint8_t *doc = spec_md_hex(trace_md(), "trace-example", &n);
	for (size_t i = 0; i < n; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			doc[i] ^= (uint8_t)(1u << bit);
			char *msg;
			int rc = read_all(doc, n, &msg);
			ck_assert_msg(rc < 0, "a flip of bit %d at 0x%zx read "
					      "as whole",
				      bit, i);
			ck_assert_msg(strstr(msg, "byte offset") != NULL ||
					      rc == VMHEAP_EMAGIC,
				      "0x%zx: %s", i, msg);
			free(msg);
			doc[i] ^= (uint8_t)(1u << bit);
		}
	}
	free(doc);
}
END_TEST

START_TEST(chunk_with_a_wrong_count_is_refused_with_its_offset)
{
	size_t n;
	uint8_t *doc = trace_example(&n);
	/* chunk 2 (at 0x5f) says 5 events and holds 6; CRC made right */
	vmheap_trace_put_u32(doc + 0x5f + 8, 5);
	vmheap_trace_put_u32(doc + 0x89, vmheap_crc32c(0, doc + 0x5f, 16 + 26));
	char *msg;
	ck_assert_int_eq(read_all(doc, n, &msg), VMHEAP_EFORMAT);
	ck_assert_msg(strstr(msg, "byte offset 132") != NULL, "%s", msg);
	free(msg);
	free(doc);
}
END_TEST

/* --------------------------------------------------- a recorded program */

struct tally {
	unsigned long ops[VMHEAP_TRACE_OP_MAX + 1]; /* marker-sized calls */
	unsigned long frees;			    /* of marker blocks */
	uint64_t live_blocks, live_bytes;	    /* marker blocks at end */
	uint64_t events;
	struct vmheap_trace_info info;
};

struct idsize {
	uint64_t id, size;
};

static int by_id(const void *a, const void *b)
{
	uint64_t x = ((const struct idsize *)a)->id,
		 y = ((const struct idsize *)b)->id;
	return x < y ? -1 : x > y;
}

static int marker(uint64_t size)
{
	return size >= BASE && size < BASE + 1000;
}

static uint64_t id_of(struct vmheap_trace_block b)
{
	return (uint64_t)b.slot << 32 | b.gen;
}

/*
 * Read the trace at `path` whole (failing the test on any error) and
 * tally the marker-sized calls.  Checks that no block id is confused:
 * each (slot, gen) begins once, ends at most once and only after some
 * event began it, and a slot's generations begin at 0 without a gap.
 */
static void tally_trace(const char *path, struct tally *t)
{
	vmheap_trace_reader *r;
	struct vmheap_trace_event ev;
	memset(t, 0, sizeof *t);
	int rc = vmheap_trace_open_path(&r, path);
	ck_assert_msg(rc == 0, "%s", vmheap_trace_error(r));
	t->info = *vmheap_trace_info(r);
	size_t cap = (size_t)t->info.events + 1, nb = 0, ne = 0;
	struct idsize *begun = malloc(cap * sizeof *begun);
	/* ended: the id, and in `size` 1 for a free (0: a realloc's) */
	struct idsize *ended = malloc(cap * sizeof *ended);
	ck_assert(begun != NULL && ended != NULL);
	while ((rc = vmheap_trace_next(r, &ev)) > 0) {
		t->events++;
		ck_assert_uint_lt(ev.thread, t->info.threads);
		if (ev.op == VMHEAP_TRACE_FREE) {
			if (ev.block.slot != VMHEAP_TRACE_NONE) {
				ended[ne].id = id_of(ev.block);
				ended[ne++].size = 1;
			}
			continue;
		}
		if (marker(ev.size))
			t->ops[ev.op]++;
		if (ev.old_block.slot != VMHEAP_TRACE_NONE &&
		    (ev.block.slot != VMHEAP_TRACE_NONE || ev.size == 0)) {
			ended[ne].id = id_of(ev.old_block);
			ended[ne++].size = 0;
		}
		if (ev.block.slot != VMHEAP_TRACE_NONE) {
			ck_assert_uint_lt(ev.block.slot, t->info.slots);
			begun[nb].id = id_of(ev.block);
			begun[nb++].size = ev.size;
		}
	}
	ck_assert_msg(rc == 0, "%s", vmheap_trace_error(r));
	ck_assert_uint_eq(t->events, t->info.events);
	vmheap_trace_free(r);

	qsort(begun, nb, sizeof *begun, by_id);
	for (size_t i = 1; i < nb; i++) {
		ck_assert_msg(begun[i].id != begun[i - 1].id,
			      "block (%u, %u) begins twice",
			      (unsigned)(begun[i].id >> 32),
			      (unsigned)begun[i].id);
		uint64_t slot = begun[i].id >> 32, gen = begun[i].id & 0xffffffff;
		if (slot == begun[i - 1].id >> 32)
			ck_assert_msg(gen == (begun[i - 1].id & 0xffffffff) + 1,
				      "slot %u skips from generation %u to %u",
				      (unsigned)slot,
				      (unsigned)begun[i - 1].id, (unsigned)gen);
		else
			ck_assert_msg(gen == 0, "slot %u begins at generation %u",
				      (unsigned)slot, (unsigned)gen);
	}
	uint64_t all_live_bytes = 0, all_live_blocks = nb;
	for (size_t i = 0; i < nb; i++) {
		if (marker(begun[i].size)) {
			t->live_blocks++;
			t->live_bytes += begun[i].size;
		}
		all_live_bytes += begun[i].size;
	}
	qsort(ended, ne, sizeof *ended, by_id);
	for (size_t i = 0; i < ne; i++) {
		uint64_t id = ended[i].id;
		struct idsize *b = bsearch(&ended[i], begun, nb, sizeof *begun,
					   by_id);
		ck_assert_msg(b != NULL, "block (%u, %u) ends but never began",
			      (unsigned)(id >> 32), (unsigned)id);
		ck_assert_msg(i == 0 || id != ended[i - 1].id,
			      "block (%u, %u) ends twice", (unsigned)(id >> 32),
			      (unsigned)id);
		all_live_blocks--;
		all_live_bytes -= b->size;
		if (marker(b->size)) {
			t->live_blocks--;
			t->live_bytes -= b->size;
			t->frees += ended[i].size;
		}
	}
	/* the trailer's truth, counted here apart from the reader's check */
	ck_assert_uint_eq(all_live_blocks, t->info.live_blocks);
	ck_assert_uint_eq(all_live_bytes, t->info.live_bytes);
	free(begun);
	free(ended);
}

/* The victim's own account: "NAME N" lines. */
static unsigned long said(const char *out, const char *name)
{
	char key[64];
	snprintf(key, sizeof key, "%s ", name);
	for (const char *p = out; p != NULL && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, key, strlen(key)) == 0)
			return strtoul(p + strlen(key), NULL, 10);
	}
	ck_abort_msg("the victim did not say '%s':\n%s", name, out);
	return 0;
}

static const char *victim(void)
{
	return spec_build("spec/trace_victim");
}

static void record_work(int track)
{
	const char *dir = spec_mkdtemp("trace");
	char path[4096];
	snprintf(path, sizeof path, "%s/work.trace", dir);
	const char *argv_track[] = {spec_bin("vmheap-run"), "--track",
				    "--record", path, victim(), "work", "4",
				    NULL};
	const char *argv_plain[] = {spec_bin("vmheap-run"), "--record", path,
				    victim(), "work", "4", NULL};
	char *out = spec_run_stdout(track ? argv_track : argv_plain, NULL,
				    120000);
	struct tally t;
	tally_trace(path, &t);
	static const char *const names[] = {
		NULL,	   "malloc",	   "calloc",	     "realloc",
		"reallocarray", "free",	   "posix_memalign", "aligned_alloc",
		"memalign",	"valloc",	   "pvalloc"};
	for (unsigned op = 1; op <= VMHEAP_TRACE_OP_MAX; op++) {
		if (op == VMHEAP_TRACE_FREE)
			continue;
		ck_assert_msg(t.ops[op] == said(out, names[op]),
			      "%s: the trace has %lu calls, the program made "
			      "%lu",
			      names[op], t.ops[op], said(out, names[op]));
		ck_assert_uint_gt(t.ops[op], 0);
	}
	ck_assert_uint_eq(t.frees, said(out, "free"));
	ck_assert_uint_eq(t.live_blocks, said(out, "live_blocks"));
	ck_assert_uint_eq(t.live_bytes, said(out, "live_bytes"));
	ck_assert_uint_ge(t.info.threads, 5); /* main and 4 workers */
	ck_assert_uint_eq(t.info.flags, 0);
	/* the recorded trace refuses every cut too (about 300 of them) */
	size_t len;
	char *data = spec_read_file(path, &len);
	every_cut_refused((const uint8_t *)data, len, len / 300 + 1);
	free(data);
	free(out);
}

START_TEST(recorded_program_is_what_it_says_it_did)
{
	record_work(0);
}
END_TEST

START_TEST(recorded_program_with_track_is_what_it_says_it_did)
{
	record_work(1);
}
END_TEST

/* Threads of one arena share the recorder's stripes: its table grows
 * (several times a stripe here) while other threads add and remove
 * entries of the same stripe.  Every block begins once and ends once
 * after it began, and the trailer's live blocks and bytes (summed from
 * the table) agree with the events. */
START_TEST(threads_of_one_arena_while_the_table_grows)
{
	const char *dir = spec_mkdtemp("trace");
	char path[4096];
	snprintf(path, sizeof path, "%s/churn.trace", dir);
	const char *argv[] = {spec_bin("vmheap-run"),
			      "--record",
			      path,
			      victim(),
			      "churn",
			      "4",
			      NULL};
	char *out = spec_run_stdout(argv, NULL, 120000);
	struct tally t;
	tally_trace(path, &t);
	/* 4 threads x 20,000 x (malloc, free, malloc, realloc, free) */
	ck_assert_uint_ge(t.info.events, 400000);
	ck_assert_uint_eq(t.live_blocks, said(out, "live_blocks"));
	ck_assert_uint_eq(t.live_bytes, said(out, "live_bytes"));
	free(out);
}
END_TEST

START_TEST(forked_child_writes_its_own_trace_named_by_the_rule)
{
	const char *dir = spec_mkdtemp("trace-fork");
	char path[4096], child[4096];
	snprintf(path, sizeof path, "%s/f", dir);
	const char *argv[] = {spec_bin("vmheap-run"), "--record", path,
			      victim(), "fork", NULL};
	char *out = spec_run_stdout(argv, NULL, 60000);
	long pid = (long)said(out, "child");
	char *ls = spec_ls(dir, ' '), want[128];
	snprintf(want, sizeof want, "f f.%ld ", pid);
	ck_assert_str_eq(ls, want);
	struct tally p, c;
	tally_trace(path, &p);
	snprintf(child, sizeof child, "%s/f.%ld", dir, pid);
	tally_trace(child, &c);
	ck_assert_uint_eq(p.info.flags, 0);
	ck_assert_uint_eq(c.info.flags, VMHEAP_TRACE_FLAG_FORKED);
	ck_assert_uint_eq(c.info.pid, (uint32_t)pid);
	ck_assert_uint_eq(p.info.pid, (uint32_t)said(out, "parent"));
	/* the parent's one block; the child's 100 pairs and its leak (the
	 * block it inherited is not in its trace) */
	ck_assert_uint_eq(p.live_blocks, 1);
	ck_assert_uint_eq(p.live_bytes, BASE + 5);
	ck_assert_uint_eq(c.ops[VMHEAP_TRACE_MALLOC], 101);
	ck_assert_uint_eq(c.frees, 100);
	ck_assert_uint_eq(c.live_blocks, 1);
	ck_assert_uint_eq(c.live_bytes, BASE + 123);
	free(ls);
	free(out);
}
END_TEST

/* Threads that come and go: an ended thread's index goes to the next
 * (the trace has as many as ran at once, not 350), and a small trace
 * with many fresh batches still reads whole. */
START_TEST(threads_that_come_and_go_share_indexes)
{
	const char *dir = spec_mkdtemp("trace-churn");
	char path[4096];
	snprintf(path, sizeof path, "%s/churn.trace", dir);
	const char *argv[] = {spec_bin("vmheap-run"), "--record", path,
			      victim(), "threads", NULL};
	free(spec_run_stdout(argv, NULL, 60000));
	struct tally t;
	tally_trace(path, &t);
	ck_assert_uint_eq(t.ops[VMHEAP_TRACE_MALLOC], 350);
	ck_assert_uint_eq(t.live_blocks, 350);
	ck_assert_uint_le(t.info.threads, 52);
}
END_TEST

/* A thread marked vmheap's own (the agent marks its loop, job and helper
 * threads so) is not recorded; the program's threads are. */
START_TEST(threads_marked_own_are_left_out)
{
	const char *dir = spec_mkdtemp("trace-own");
	char path[4096];
	snprintf(path, sizeof path, "%s/own.trace", dir);
	const char *argv[] = {spec_bin("vmheap-run"), "--record", path,
			      victim(), "own", NULL};
	free(spec_run_stdout(argv, NULL, 60000));
	vmheap_trace_reader *r;
	struct vmheap_trace_event ev;
	int rc = vmheap_trace_open_path(&r, path);
	ck_assert_msg(rc == 0, "%s", vmheap_trace_error(r));
	unsigned long own = 0, program = 0;
	while ((rc = vmheap_trace_next(r, &ev)) > 0) {
		own += ev.size == BASE + 500;
		program += ev.size == BASE + 501;
	}
	ck_assert_msg(rc == 0, "%s", vmheap_trace_error(r));
	ck_assert_uint_eq(own, 0);
	ck_assert_uint_eq(program, 10);
	vmheap_trace_free(r);
}
END_TEST

/* Real ruby under vmheap-run --record (the agent loaded, as users run
 * it): the script's own Fiddle.malloc calls, 300 blocks of 40,777 bytes
 * with 100 freed by Fiddle.free, are in the trace exactly, with Ruby's own calls
 * around them, and the trace reads whole. */
START_TEST(ruby_under_vmheap_run_is_recorded)
{
	if (SPEC_SANITIZED)
		return; /* the instrumented extension needs ASan's runtime first */
	const char *dir = spec_mkdtemp("trace-ruby");
	char path[4096];
	snprintf(path, sizeof path, "%s/ruby.trace", dir);
	const char *argv[] = {
		spec_bin("vmheap-run"), "--record", path, "ruby", "-rfiddle",
		"-e",
		"k = (1..300).map { Fiddle.malloc(40777) }; "
		"k.first(100).each { |a| Fiddle.free(a) }; "
		"s = (1..20000).map { |i| 'x' * (i % 300) }; puts s.size",
		NULL};
	char *out = spec_run_stdout(argv, NULL, 120000);
	ck_assert_str_eq(out, "20000\n");
	vmheap_trace_reader *r;
	struct vmheap_trace_event ev;
	int rc = vmheap_trace_open_path(&r, path);
	ck_assert_msg(rc == 0, "%s", vmheap_trace_error(r));
	uint64_t events = vmheap_trace_info(r)->events;
	unsigned long made = 0, freed = 0;
	/* the ids of the 40,777-byte blocks, to find their frees */
	uint64_t ids[300];
	while ((rc = vmheap_trace_next(r, &ev)) > 0)
		if (ev.op != VMHEAP_TRACE_FREE && ev.size == 40777 &&
		    made < 300) /* Fiddle.malloc is a calloc in ruby 3.1 */
			ids[made++] = id_of(ev.block);
	ck_assert_msg(rc == 0, "%s", vmheap_trace_error(r));
	ck_assert_uint_eq(made, 300);
	ck_assert_uint_gt(events, 20000);
	vmheap_trace_free(r);
	/* count the frees of those blocks over the whole trace */
	ck_assert_int_eq(vmheap_trace_open_path(&r, path), 0);
	while ((rc = vmheap_trace_next(r, &ev)) > 0)
		if (ev.op == VMHEAP_TRACE_FREE &&
		    ev.block.slot != VMHEAP_TRACE_NONE)
			for (size_t i = 0; i < made; i++)
				freed += ids[i] == id_of(ev.block);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(freed, 100);
	vmheap_trace_free(r);
	free(out);
}
END_TEST

/* TRACE is created with O_EXCL: a file already there is kept as it was,
 * and the program runs on with one message. */
START_TEST(existing_trace_is_never_overwritten)
{
	const char *dir = spec_mkdtemp("trace-excl");
	char path[4096];
	snprintf(path, sizeof path, "%s/t", dir);
	spec_write_text(path, "keep me\n");
	const char *argv[] = {spec_bin("vmheap-run"), "--record", path,
			      victim(), "many", "100000", NULL};
	struct spec_run r;
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &r), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "done 100000\n");
	ck_assert_msg(spec_count(r.err, "vmheap: ") == 1 &&
			      strstr(r.err, "cannot create it: File exists") !=
				      NULL,
		      "stderr: %s", r.err);
	char *kept = spec_read_file(path, NULL);
	ck_assert_str_eq(kept, "keep me\n");
	free(kept);
	spec_run_free(&r);
}
END_TEST

START_TEST(file_size_limit_stops_recording_and_the_program_runs_on)
{
	const char *dir = spec_mkdtemp("trace-full");
	char path[4096], outp[4096], errp[4096];
	snprintf(path, sizeof path, "%s/full.trace", dir);
	snprintf(outp, sizeof outp, "%s/out", dir);
	snprintf(errp, sizeof errp, "%s/err", dir);
	const char *argv[] = {spec_bin("vmheap-run"), "--record", path,
			      victim(), "many", "400000", NULL};
	struct spec_spawn o = {.argv = argv,
			       .stdout_path = outp,
			       .stderr_path = errp,
			       .fsize_limit = 100000};
	pid_t pid = spec_spawn(&o);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(spec_wait(pid, 120000, NULL), 0);
	char *out = spec_read_file(outp, NULL), *err = spec_read_file(errp, NULL);
	ck_assert_str_eq(out, "done 400000\n");
	ck_assert_msg(spec_count(err, "recording the malloc trace") == 1 &&
			      strstr(err, "stopped: write failed") != NULL,
		      "stderr: %s", err);
	vmheap_trace_reader *r;
	ck_assert_int_eq(vmheap_trace_open_path(&r, path), VMHEAP_ETRUNCATED);
	ck_assert_msg(strstr(vmheap_trace_error(r), "end record") != NULL,
		      "%s", vmheap_trace_error(r));
	vmheap_trace_free(r);
	free(out);
	free(err);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = spec_tcase(s, "example", 60);
	tcase_add_test(tc, worked_example_in_trace_md_is_what_the_encoder_writes);
	tcase_add_test(tc, worked_example_reads_back_event_by_event);
	tcase_add_test(tc, truncated_example_is_refused_at_every_offset);
	tcase_add_test(tc, every_damaged_byte_of_the_example_is_refused);
	tcase_add_test(tc, chunk_with_a_wrong_count_is_refused_with_its_offset);
	tc = spec_tcase(s, "record", 240);
	tcase_add_test(tc, recorded_program_is_what_it_says_it_did);
	tcase_add_test(tc, recorded_program_with_track_is_what_it_says_it_did);
	tcase_add_test(tc, threads_of_one_arena_while_the_table_grows);
	tcase_add_test(tc, forked_child_writes_its_own_trace_named_by_the_rule);
	tcase_add_test(tc, threads_marked_own_are_left_out);
	tcase_add_test(tc, threads_that_come_and_go_share_indexes);
	tcase_add_test(tc, ruby_under_vmheap_run_is_recorded);
	tcase_add_test(tc, existing_trace_is_never_overwritten);
	tcase_add_test(tc, file_size_limit_stops_recording_and_the_program_runs_on);
	return s;
}
