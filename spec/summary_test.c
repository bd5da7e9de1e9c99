/*
 * summary_test.c - Check suite for block summaries (FORMAT.md section 6,
 * "Block summary record"): the writer puts one first in every block of
 * at least 64 objects, the census reads such blocks through it without
 * decoding their objects, and every other reader skips it.
 *
 * The truth is what the test wrote: random heaps (classes with small and
 * large ids, kinds, sizes up to 2^62, strings, roots and objects with
 * more references than a record holds, all interleaved) are counted here
 * by class and by kind as they are written, and the census of the file,
 * on one thread and on two, must say the same.  Damaged summaries,
 * resealed with a valid CRC, must be refused with the byte offset.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap.h"
#include "vmheap_analysis.h"
#include "crc32c-internal.h"
#include "lib/vmheap_spec.h"

#define CLASSES 300 /* ids 1..150 and 1<<40 + 1..150: both census paths */
#define KINDS 5

struct truth {
	uint64_t count[CLASSES], bytes[CLASSES];
	uint64_t kcount[KINDS], kbytes[KINDS];
	uint64_t objects, references;
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t class_id(size_t i)
{
	return i < CLASSES / 2 ? i + 1 : (1ull << 40) + (i - CLASSES / 2) + 1;
}

/* The census holds a sum of sizes at UINT64_MAX (vmheap_analysis.h). */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static const char *path_of(const char *name)
{
	static char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s/%s", spec_root(), name);
	return buf;
}

/* Write a random heap of `n` objects to scratch/name in blocks of
 * `block_bytes`, counting it into *t.  Returns the path. */
static const char *write_heap(const char *name, size_t n, uint32_t block_bytes,
			      uint64_t seed, struct truth *t)
{
	static const char *const kinds[KINDS] = {"a", "b", "c", "d", "e"};
	static uint64_t refs[VMHEAP_MAX_REFS_PER_RECORD + 40];
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	const char *path = path_of(name);
	vmheap_writer *w;
	FILE *f = fopen(path, "wbx");

	ck_assert_ptr_nonnull(f);
	memset(t, 0, sizeof(*t));
	rng_state = seed;
	opt.kind_names = kinds;
	opt.kind_count = KINDS;
	opt.block_bytes = block_bytes;
	ck_assert_int_eq(vmheap_writer_open(&w, fileno(f), &opt), 0);
	for (size_t i = 0; i < CLASSES; i++) {
		char cname[32];
		int len = snprintf(cname, sizeof(cname), "C%zu", i);
		ck_assert_int_eq(vmheap_writer_add_class(w, class_id(i), cname,
							 (size_t)len, 0, 0),
				 0);
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t r = rnd();
		/* a few classes most of the time, as in a real heap */
		size_t cls = r % 8 ? (r >> 8) % 6 : (r >> 8) % CLASSES;
		uint32_t kind = (uint32_t)((r >> 20) % KINDS);
		uint64_t bytes = (r >> 30) % 7 ? (r >> 24) % 200
				 : (rnd() >> 2); /* up to 2^62 */
		size_t nrefs = (r >> 40) % 100 ? (r >> 44) % 4
			       : VMHEAP_MAX_REFS_PER_RECORD + (r >> 44) % 40;
		uint64_t id = 0x100000 + 16 * (uint64_t)i;

		for (size_t k = 0; k < nrefs; k++)
			refs[k] = 0x100000 + 16 * (rnd() % (n + 1));
		if ((r >> 50) % 97 == 0)
			ck_assert_int_eq(
			    vmheap_writer_add_string(w, 1000 + i, "s", 1), 0);
		if ((r >> 50) % 89 == 1)
			ck_assert_int_eq(vmheap_writer_add_root(w, 1000, id),
					 0);
		ck_assert_int_eq(vmheap_writer_add_object(w, id, class_id(cls),
							  bytes, kind, refs,
							  nrefs),
				 0);
		t->count[cls]++;
		t->bytes[cls] = sat_add(t->bytes[cls], bytes);
		t->kcount[kind]++;
		t->kbytes[kind] = sat_add(t->kbytes[kind], bytes);
		t->objects++;
		t->references += nrefs;
	}
	ck_assert_msg(vmheap_writer_finish(w) == 0, "%s",
		      vmheap_writer_error(w));
	vmheap_writer_free(w);
	fclose(f);
	return path;
}

/* Blocks of the dump at path, and how many begin with a summary. */
static void count_summaries(const char *path, uint64_t *blocks,
			    uint64_t *summarized)
{
	vmheap_reader *r;
	struct vmheap_block blk;
	int rc;

	*blocks = *summarized = 0;
	ck_assert_int_eq(vmheap_reader_open_path(&r, path), 0);
	while ((rc = vmheap_reader_next_block(r, &blk)) > 0) {
		(*blocks)++;
		*summarized += vmheap_block_has_summary(&blk);
	}
	ck_assert_int_eq(rc, 0);
	vmheap_reader_free(r);
}

static vmheap_census *census(const char *path, enum vmheap_census_group g,
			     unsigned threads, int *rc, char *err, size_t errsz)
{
	struct vmheap_scan_options opt = VMHEAP_SCAN_OPTIONS_INIT;
	vmheap_census *c;
	vmheap_reader *r;

	opt.threads = threads;
	ck_assert_int_eq(vmheap_reader_open_path(&r, path), 0);
	ck_assert_int_eq(vmheap_census_new(&c, g, threads), 0);
	*rc = vmheap_census_read(c, r, &opt);
	snprintf(err, errsz, "%s", vmheap_census_error(c));
	vmheap_reader_free(r);
	return c;
}

/* The census of path by class and by kind, on `threads`, equals *t. */
static void check_census(const char *path, const struct truth *t,
			 unsigned threads)
{
	char err[512];
	int rc;
	size_t n, seen = 0;
	vmheap_census *c =
	    census(path, VMHEAP_GROUP_CLASS, threads, &rc, err, sizeof(err));

	ck_assert_msg(rc == 0, "%s", err);
	struct vmheap_census_row *rows = vmheap_census_rows(c, &n);
	for (size_t i = 0; i < n; i++) {
		size_t cls = (size_t)strtoul(rows[i].name + 1, NULL, 10);
		ck_assert_uint_lt(cls, CLASSES);
		ck_assert_uint_eq(rows[i].count, t->count[cls]);
		ck_assert_uint_eq(rows[i].bytes, t->bytes[cls]);
		seen += rows[i].count;
	}
	ck_assert_uint_eq(seen, t->objects);
	ck_assert_uint_eq(vmheap_census_totals(c)->objects, t->objects);
	ck_assert_uint_eq(vmheap_census_totals(c)->references, t->references);
	vmheap_census_free(c);

	c = census(path, VMHEAP_GROUP_KIND, threads, &rc, err, sizeof(err));
	ck_assert_msg(rc == 0, "%s", err);
	rows = vmheap_census_rows(c, &n);
	ck_assert_uint_eq(n, KINDS);
	for (size_t i = 0; i < n; i++) {
		size_t k = (size_t)(rows[i].name[0] - 'a');
		ck_assert_uint_eq(rows[i].count, t->kcount[k]);
		ck_assert_uint_eq(rows[i].bytes, t->kbytes[k]);
	}
	vmheap_census_free(c);
}

/* Random heaps in blocks of several sizes: blocks of 64 objects or more
 * have a summary (a third at least: objects with thousands of references
 * fill some blocks alone), small ones only with a more-references record
 * (counted from its array's header), and either way the census says what was
 * written. */
START_TEST(census_through_summaries_counts_what_was_written)
{
	static const uint32_t block_sizes[] = {512, 4096, 65536, 1 << 20};
	for (size_t s = 0; s < 4; s++) {
		struct truth t;
		char name[32];
		uint64_t blocks, summarized;
		snprintf(name, sizeof(name), "heap%zu.vmheap", s);
		const char *path = write_heap(name, 20000 + 7000 * s,
					      block_sizes[s], 0x9e37 + s, &t);
		count_summaries(path, &blocks, &summarized);
		if (block_sizes[s] >= 4096)
			ck_assert_msg(summarized * 3 >= blocks,
				      "%llu of %llu blocks summarized",
				      (unsigned long long)summarized,
				      (unsigned long long)blocks);
		else /* at most ~30 objects a block: only the blocks of
		      * more-references records have one */
			ck_assert(summarized > 0 && summarized * 2 < blocks);
		check_census(path, &t, 1);
		check_census(path, &t, 2);
	}
}
END_TEST

/* Every reader that decodes records skips the summary: the record
 * stream has exactly the objects written, and the footer check passes. */
START_TEST(record_readers_skip_the_summary)
{
	struct truth t;
	const char *path = write_heap("skip.vmheap", 5000, 65536, 7, &t);
	struct vmheap_record rec;
	vmheap_reader *r;
	uint64_t objects = 0;
	int rc;

	ck_assert_int_eq(vmheap_reader_open_path(&r, path), 0);
	while ((rc = vmheap_reader_next(r, &rec)) > 0)
		objects += rec.type == VMHEAP_RECORD_OBJECT;
	ck_assert_msg(rc == 0, "%s", vmheap_reader_error(r));
	ck_assert_uint_eq(objects, t.objects);
	vmheap_reader_free(r);
}
END_TEST

/* The file's bytes, and the offset of the first block with a summary. */
static uint8_t *load_with_summary(const char *path, size_t *len, size_t *at)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	uint8_t *b = malloc(*len);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, *len, f), *len);
	fclose(f);
	for (size_t i = 8; i + 18 < *len; i++)
		if (!memcmp(b + i, "BLCK", 4) && b[i + 16] == 0x95 &&
		    b[i + 17] == 7) {
			*at = i;
			return b;
		}
	ck_abort_msg("no block with a summary in %s", path);
	return NULL;
}

/* Recompute the CRC of the section at `at` (FORMAT.md section 4). */
static void reseal(uint8_t *b, size_t at)
{
	uint32_t len = (uint32_t)b[at + 4] << 24 | (uint32_t)b[at + 5] << 16 |
		       (uint32_t)b[at + 6] << 8 | b[at + 7];
	uint32_t crc = vmheap_crc32c(0, b + at, 12);
	crc = vmheap_crc32c(crc, b + at + 16, len);
	b[at + 12] = (uint8_t)(crc >> 24);
	b[at + 13] = (uint8_t)(crc >> 16);
	b[at + 14] = (uint8_t)(crc >> 8);
	b[at + 15] = (uint8_t)crc;
}

/* A summary whose object count disagrees with its rows and with the
 * block's record count, under a valid CRC: refused, with its offset. */
START_TEST(a_damaged_summary_is_refused_with_its_offset)
{
	struct truth t;
	const char *path = write_heap("dmg.vmheap", 3000, 65536, 11, &t);
	size_t len, at;
	uint8_t *b = load_with_summary(path, &len, &at);
	char want[64], err[512];
	int rc;

	/* objects, element 2: a fixint, or a uint 16 (0xcd) */
	if (b[at + 18] == 0xcd)
		b[at + 20] ^= 1;
	else
		b[at + 18] ^= 1;
	reseal(b, at);
	const char *bad = path_of("dmg-bad.vmheap");
	FILE *f = fopen(bad, "wbx");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, len, f), len);
	fclose(f);
	free(b);
	vmheap_census *c =
	    census(bad, VMHEAP_GROUP_CLASS, 1, &rc, err, sizeof(err));
	ck_assert_int_eq(rc, VMHEAP_EFORMAT);
	ck_assert_msg(strstr(err, "malformed block summary") != NULL, "%s",
		      err);
	snprintf(want, sizeof(want), "(block at %zu)", at);
	ck_assert_msg(strstr(err, want) != NULL, "%s (want %s)", err, want);
	vmheap_census_free(c);
}
END_TEST

/* FORMAT.md section 6's example, byte for byte. */
START_TEST(the_format_pages_example_summary_byte_for_byte)
{
	static const uint8_t want[] = {0x95, 0x07, 0x40, 0x00, 0x94, 0x05,
				       0x00, 0x40, 0xcd, 0x06, 0x00, 0x93,
				       0x00, 0x0a, 0xcd, 0x01, 0xd4};
	const char *path = path_of("example.vmheap");
	FILE *f = fopen(path, "wbx");
	vmheap_writer *w;
	vmheap_reader *r;
	struct vmheap_block blk;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(vmheap_writer_open(&w, fileno(f), NULL), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, 1, "global", 6), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 5, "Item", 4, 0, 0), 0);
	for (uint64_t id = 16; id <= 1024; id += 16)
		ck_assert_int_eq(
		    vmheap_writer_add_object(w, id, 5, 24, 0, NULL, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_root(w, 1, 16), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	fclose(f);

	ck_assert_int_eq(vmheap_reader_open_path(&r, path), 0);
	ck_assert_int_eq(vmheap_reader_next_block(r, &blk), 1);
	ck_assert_uint_eq(blk.records, 68);
	ck_assert_uint_ge(blk.length, sizeof(want));
	for (size_t i = 0; i < sizeof(want); i++)
		ck_assert_msg(blk.data[i] == want[i],
			      "byte %zu: %02x, FORMAT.md says %02x", i,
			      blk.data[i], want[i]);
	/* the root is where the last offset says */
	ck_assert_uint_eq(blk.data[sizeof(want) + 468], 0x93);
	ck_assert_uint_eq(blk.data[sizeof(want) + 469], 0x04);
	vmheap_reader_free(r);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("summary");
	TCase *tc = spec_tcase(s, "summary", 120);

	tcase_add_test(tc, census_through_summaries_counts_what_was_written);
	tcase_add_test(tc, record_readers_skip_the_summary);
	tcase_add_test(tc, a_damaged_summary_is_refused_with_its_offset);
	tcase_add_test(tc, the_format_pages_example_summary_byte_for_byte);
	return s;
}
