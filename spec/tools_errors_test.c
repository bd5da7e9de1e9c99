/*
 * tools_errors_test.c - damaged dumps and bad usage: one clear message
 * naming the file and the byte offset, exit status 2, and nothing at all
 * on standard output (never a partial table).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools_harness-internal.h"
#include "vmheap.h"

const char *write_base_dump(const char *name);

static void assert_dump_error(struct spec_run *r, const char *path,
			      const char *what)
{
	ck_assert_msg(r->status == 2, "exit %d for %s (%s); stderr: %s",
		      r->status, path, what, r->err);
	ck_assert_msg(r->out_len == 0, "output despite an error (%s):\n%s",
		      what, r->out);
	ck_assert_msg(strstr(r->err, path) != NULL,
		      "message does not name %s (%s): %s", path, what, r->err);
	ck_assert_msg(strstr(r->err, "offset") != NULL,
		      "message has no byte offset (%s): %s", what, r->err);
	/* one message: a single line */
	ck_assert_msg(strchr(r->err, '\n') == r->err + strlen(r->err) - 1,
		      "more than one line (%s): %s", what, r->err);
}

START_TEST(every_truncation_point_is_an_error_with_offset_and_no_output)
{
	const char *good = write_base_dump("whole.vmheap");
	const char *old = write_base_dump("whole-old.vmheap");
	size_t len;
	char *bytes = slurp(good, &len);
	const char *cut = tmp_path("cut.vmheap");
	static const char *const modes[] = {NULL, "--objects", "--retainers"};

	ck_assert_uint_gt(len, 100);
	for (size_t n = 0; n < len; n++) {
		char what[64];
		snprintf(what, sizeof(what), "cut at %zu of %zu", n, len);
		spec_write_file(cut, bytes, n);

		struct spec_run r =
		    spec_tool("vmheap-histo", (const char *[]){cut, NULL});
		assert_dump_error(&r, cut, what);
		spec_run_free(&r);

		/* vmheap-diff, truncated NEW, in each mode by turns */
		const char *mode = modes[n % 3];
		const char *argv[] = {mode ? mode : old, mode ? old : cut,
				      mode ? cut : NULL, NULL};
		r = spec_tool("vmheap-diff", argv);
		assert_dump_error(&r, cut, what);
		spec_run_free(&r);
	}
	/* and the whole file is fine */
	struct spec_run r =
	    spec_tool("vmheap-histo", (const char *[]){good, NULL});
	ck_assert_int_eq(r.status, 0);
	spec_run_free(&r);
	free(bytes);
}
END_TEST

START_TEST(truncated_old_dump_is_an_error_for_diff)
{
	const char *good = write_base_dump("whole.vmheap");
	size_t len;
	char *bytes = slurp(good, &len);
	const char *cut = tmp_path("cut-old.vmheap");
	spec_write_file(cut, bytes, len - 20);
	free(bytes);
	struct spec_run r =
	    spec_tool("vmheap-diff", (const char *[]){cut, good, NULL});
	assert_dump_error(&r, cut, "truncated OLD");
	ck_assert_msg(strstr(r.err, "truncated") != NULL, "%s", r.err);
	spec_run_free(&r);
}
END_TEST

/* Offset of the first section with this tag (after the 8-byte magic,
 * sections are tag[4], length u32 BE, records u32 BE, crc u32 BE). */
static size_t find_section(const char *bytes, size_t len, const char *tag)
{
	size_t off = 8;
	while (off + 16 <= len) {
		const unsigned char *h = (const unsigned char *)bytes + off;
		if (!memcmp(h, tag, 4))
			return off;
		size_t plen = ((size_t)h[4] << 24) | ((size_t)h[5] << 16) |
			      ((size_t)h[6] << 8) | h[7];
		off += 16 + plen;
	}
	ck_abort_msg("no %s section", tag);
	return 0;
}

START_TEST(flipped_bit_in_a_block_is_reported_with_offset)
{
	const char *good = write_base_dump("whole.vmheap");
	size_t len;
	char *bytes = slurp(good, &len);
	size_t blk = find_section(bytes, len, "BLCK");
	bytes[blk + 16 + 3] ^= 0x10;
	const char *bad = tmp_path("flipped.vmheap");
	spec_write_file(bad, bytes, len);
	free(bytes);

	struct spec_run r =
	    spec_tool("vmheap-histo", (const char *[]){bad, NULL});
	assert_dump_error(&r, bad, "flipped bit");
	ck_assert_msg(strstr(r.err, "checksum") != NULL, "%s", r.err);
	spec_run_free(&r);

	r = spec_tool("vmheap-diff",
		      (const char *[]){"--objects", bad, good, NULL});
	assert_dump_error(&r, bad, "flipped bit in OLD");
	spec_run_free(&r);
}
END_TEST

START_TEST(wrong_magic_is_refused_with_offset)
{
	const char *good = write_base_dump("whole.vmheap");
	size_t len;
	char *bytes = slurp(good, &len);
	bytes[1] = 'X';
	const char *bad = tmp_path("magic.vmheap");
	spec_write_file(bad, bytes, len);
	free(bytes);
	struct spec_run r =
	    spec_tool("vmheap-histo", (const char *[]){bad, NULL});
	assert_dump_error(&r, bad, "wrong magic");
	spec_run_free(&r);

	/* a text file is no dump either */
	const char *text = tmp_path("notes.txt");
	spec_write_file(text, "hello, world\n", 13);
	r = spec_tool("vmheap-diff", (const char *[]){good, text, NULL});
	assert_dump_error(&r, text, "text file");
	spec_run_free(&r);
}
END_TEST

START_TEST(newer_major_version_is_refused_with_offset)
{
	const char *good = write_base_dump("whole.vmheap");
	size_t len;
	char *bytes = slurp(good, &len);
	size_t head = find_section(bytes, len, "HEAD");
	/* "version": [major, minor] with major a positive fixint */
	char *v = memmem(bytes, len, "\xa7version\x92", 9);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v[9], VMHEAP_FORMAT_MAJOR);
	v[9] = VMHEAP_FORMAT_MAJOR + 1;
	/* the header section's CRC32C covers its 12 header bytes + payload */
	unsigned char *h = (unsigned char *)bytes + head;
	size_t plen = ((size_t)h[4] << 24) | ((size_t)h[5] << 16) |
		      ((size_t)h[6] << 8) | h[7];
	uint32_t crc = vmheap_crc32c(0, h, 12);
	crc = vmheap_crc32c(crc, h + 16, plen);
	h[12] = (unsigned char)(crc >> 24);
	h[13] = (unsigned char)(crc >> 16);
	h[14] = (unsigned char)(crc >> 8);
	h[15] = (unsigned char)crc;
	const char *bad = tmp_path("v2.vmheap");
	spec_write_file(bad, bytes, len);
	free(bytes);

	struct spec_run r =
	    spec_tool("vmheap-histo", (const char *[]){bad, NULL});
	assert_dump_error(&r, bad, "newer major version");
	ck_assert_msg(strstr(r.err, "version") != NULL, "%s", r.err);
	spec_run_free(&r);
}
END_TEST

START_TEST(missing_file_or_directory_is_an_error_naming_it)
{
	const char *missing = tmp_path("no-such.vmheap");
	struct spec_run r =
	    spec_tool("vmheap-histo", (const char *[]){missing, NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_int_eq(r.out_len, 0);
	ck_assert_msg(strstr(r.err, missing) && strstr(r.err, "No such file"),
		      "%s", r.err);
	spec_run_free(&r);

	r = spec_tool("vmheap-diff",
		      (const char *[]){tmp_dir(), missing, NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_int_eq(r.out_len, 0);
	ck_assert_msg(strstr(r.err, "directory"), "%s", r.err);
	spec_run_free(&r);
}
END_TEST

static void assert_usage_error(const char *tool, const char *const *args,
			       const char *what)
{
	struct spec_run r = spec_tool(tool, args);
	ck_assert_msg(r.status == 2, "%s %s: exit %d", tool, what, r.status);
	ck_assert_msg(r.out_len == 0, "%s %s: output %s", tool, what, r.out);
	ck_assert_msg(strstr(r.err, "usage: ") != NULL,
		      "%s %s: no usage line: %s", tool, what, r.err);
	ck_assert_msg(strstr(r.err, what) != NULL, "%s: '%s' not said: %s",
		      tool, what, r.err);
	spec_run_free(&r);
}

/* Bad usage, one row a case: the tool, its arguments ("DUMP" stands for
 * a good dump), and what its one-line message must say. */
static const struct usage_case {
	const char *tool;
	const char *args[5];
	const char *what;
} usage_cases[] = {
    {"vmheap-histo", {NULL}, "no dump given"},
    {"vmheap-histo", {"--sort", "size", "DUMP"}, "unknown sort key 'size'"},
    {"vmheap-histo", {"--top", "0", "DUMP"}, "--top needs a positive number"},
    {"vmheap-histo", {"--top", "-3", "DUMP"}, "--top needs a positive number"},
    {"vmheap-histo", {"--format", "xml", "DUMP"}, "unknown format 'xml'"},
    {"vmheap-histo",
     {"--bogus", "DUMP"},
     "unknown or incomplete option '--bogus'"},
    {"vmheap-histo", {"DUMP", "DUMP"}, "too many arguments"},
    {"vmheap-diff", {"DUMP"}, "two dumps needed"},
    {"vmheap-diff",
     {"--objects", "--retainers", "DUMP", "DUMP"},
     "exclude each other"},
    {"vmheap-diff", {"-", "-"}, "only one of OLD and NEW"},
};

/* one row of usage_cases (_i) */
START_TEST(bad_usage_exits_2_with_a_usage_line)
{
	const struct usage_case *c = &usage_cases[_i];
	const char *dump = write_base_dump("whole.vmheap");
	const char *args[6];
	size_t n;

	for (n = 0; n < 5 && c->args[n]; n++)
		args[n] = strcmp(c->args[n], "DUMP") ? c->args[n] : dump;
	args[n] = NULL;
	assert_usage_error(c->tool, args, c->what);
}
END_TEST

START_TEST(help_exits_0_naming_the_options)
{
	struct spec_run r =
	    spec_tool("vmheap-histo", (const char *[]){"--help", NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "--kind") != NULL, "%s", r.out);
	spec_run_free(&r);
}
END_TEST

TCase *errors_tcase(void)
{
	TCase *tc = tcase_create("errors");
	tcase_set_timeout(tc, 120);
	tcase_add_test(
	    tc, every_truncation_point_is_an_error_with_offset_and_no_output);
	tcase_add_test(tc, truncated_old_dump_is_an_error_for_diff);
	tcase_add_test(tc, flipped_bit_in_a_block_is_reported_with_offset);
	tcase_add_test(tc, wrong_magic_is_refused_with_offset);
	tcase_add_test(tc, newer_major_version_is_refused_with_offset);
	tcase_add_test(tc, missing_file_or_directory_is_an_error_naming_it);
	tcase_add_loop_test(tc, bad_usage_exits_2_with_a_usage_line, 0,
			    sizeof(usage_cases) / sizeof(usage_cases[0]));
	tcase_add_test(tc, help_exits_0_naming_the_options);
	return tc;
}
