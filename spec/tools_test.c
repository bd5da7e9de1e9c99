/*
 * tools_test.c - the suite of vmheap-histo and vmheap-diff: dumps written
 * by the real writer with exactly known contents, read by the real
 * binaries ($VMHEAP_BUILD/bin), their output parsed back.
 *
 * This file: main, vmheap-histo, and names that are not UTF-8 in both.
 * tools_diff_test.c: vmheap-diff. tools_errors_test.c: damaged dumps and bad
 * usage, for both tools.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools_harness-internal.h"
#include "vmheap.h"

/*
 * The base dump: 14 objects in 5 classes plus one object whose class id
 * (99 = 0x63) has no class record.
 *
 *   class          count  bytes        kind
 *   String             5  5 x 40       string
 *   Array              3  80+80+100    array
 *   Hash               2  2 x 200      hash
 *   Odd,"Name"         2  2 x 16       object
 *   My::Thing          1  1000         object
 *   (class 99)         1  10           7 (no such kind name)
 */
static const struct tclass base_classes[] = {
    {1, "String"},    {2, "Array"},	   {3, "Hash"},
    {4, "My::Thing"}, {5, "Odd,\"Name\""},
};

static const struct tobj base_objs[] = {
    {0x1000, 1, 40, 1, 0, {0}, NULL},
    {0x1010, 1, 40, 1, 0, {0}, NULL},
    {0x1020, 1, 40, 1, 0, {0}, NULL},
    {0x1030, 1, 40, 1, 0, {0}, NULL},
    {0x1040, 1, 40, 1, 0, {0}, NULL},
    {0x2000, 2, 80, 2, 2, {0x1000, 0x1010}, NULL},
    {0x2050, 2, 80, 2, 1, {0x2000}, NULL},
    {0x20a0, 2, 100, 2, 0, {0}, NULL},
    {0x3000, 3, 200, 3, 2, {0x1020, 0x2000}, NULL},
    {0x30c8, 3, 200, 3, 0, {0}, NULL},
    {0x4000, 5, 16, 0, 0, {0}, NULL},
    {0x4010, 5, 16, 0, 0, {0}, NULL},
    {0x5000, 4, 1000, 0, 1, {0x3000}, NULL},
    {0x6000, 99, 10, 7, 0, {0}, NULL},
};

const char *write_base_dump(const char *name);

const char *write_base_dump(const char *name)
{
	struct tdump d = {0};
	d.classes = base_classes;
	d.nclasses = sizeof(base_classes) / sizeof(base_classes[0]);
	d.objs = base_objs;
	d.nobjs = sizeof(base_objs) / sizeof(base_objs[0]);
	d.block_bytes = 64; /* several blocks even for a small dump */
	return write_dump(name, &d);
}

struct expect {
	const char *name;
	long long count, bytes;
};

static void assert_rows(const struct trow *got, size_t ngot,
			const struct expect *want, size_t nwant)
{
	ck_assert_msg(ngot == nwant, "%zu rows, expected %zu", ngot, nwant);
	for (size_t i = 0; i < nwant; i++) {
		ck_assert_msg(!strcmp(got[i].name, want[i].name),
			      "row %zu is '%s', expected '%s'", i, got[i].name,
			      want[i].name);
		ck_assert_msg(got[i].count == want[i].count &&
				  got[i].bytes == want[i].bytes,
			      "row %zu (%s): %lld objects %lld bytes, expected "
			      "%lld and %lld",
			      i, want[i].name, got[i].count, got[i].bytes,
			      want[i].count, want[i].bytes);
	}
}

/* Run histo --bytes with args + the base dump; expect success and parse
 * rows. */
static size_t histo_rows(const char *const *args, struct trow *rows, size_t max)
{
	const char *path = write_base_dump("base.vmheap");
	const char *argv[16] = {"--bytes"};
	size_t n = 1;
	for (; args && *args; args++)
		argv[n++] = *args;
	argv[n++] = path;
	argv[n] = NULL;
	struct spec_run r = spec_tool("vmheap-histo", argv);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	size_t got = parse_text_rows(r.out, rows, max);
	spec_run_free(&r);
	return got;
}

START_TEST(histo_counts_objects_and_bytes_per_class_by_count)
{
	struct trow rows[16];
	size_t n = histo_rows(NULL, rows, 16);
	const struct expect want[] = {
	    {"String", 5, 200},
	    {"Array", 3, 260},
	    {"Hash", 2, 400},
	    {"Odd,\"Name\"", 2, 32},
	    {"<unknown class 0x63>", 1, 10},
	    {"My::Thing", 1, 1000},
	    {"total (6 classes)", 14, 1902},
	};
	assert_rows(rows, n, want, sizeof(want) / sizeof(want[0]));
}
END_TEST

START_TEST(histo_text_has_header_and_right_aligned_numbers)
{
	const char *path = write_base_dump("base.vmheap");
	struct spec_run r =
	    spec_tool("vmheap-histo", (const char *[]){path, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "vm sample 1.0") != NULL, "%s", r.out);
	/* every table line has the same length up to the bytes column end:
	 * right-aligned counts mean the first column ends at one place */
	const char *hdr = strstr(r.out, "count  class");
	ck_assert_msg(hdr != NULL, "no header in:\n%s", r.out);
	const char *hdr_line = hdr;
	while (hdr_line > r.out && hdr_line[-1] != '\n')
		hdr_line--;
	size_t count_end = (size_t)(hdr - hdr_line) + strlen("count");
	const char *line = strchr(hdr, '\n') + 1;
	while (*line) {
		const char *eol = strchr(line, '\n');
		size_t digits_end = strspn(line, " ");
		digits_end += strspn(line + digits_end, "0123456789");
		ck_assert_msg(digits_end == count_end,
			      "count column not right-aligned: '%.*s'",
			      (int)(eol - line), line);
		line = eol + 1;
	}
	spec_run_free(&r);
}
END_TEST

/* By default sizes are in human units with a % column of the total;
 * --bytes gives the exact figures.  The shares are checked against the
 * base dump's known sizes (1000 of 1902 bytes is 52.6%). */
START_TEST(histo_prints_human_sizes_and_shares_unless_bytes)
{
	const char *path = write_base_dump("base.vmheap");
	struct spec_run r =
	    spec_tool("vmheap-histo", (const char *[]){path, NULL});
	char want[64];

	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "count  class") &&
			  strstr(r.out, "bytes       %\n"),
		      "no bytes and %% header:\n%s", r.out);
	snprintf(want, sizeof(want), "%.1f%%", 100.0 * 1000 / 1902);
	ck_assert_str_eq(want, "52.6%");
	ck_assert_msg(strstr(r.out, "My::Thing") &&
			  strstr(r.out, "1000 B   52.6%\n"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "String") &&
			  strstr(r.out, "200 B   10.5%\n"),
		      "%s", r.out);
	/* 1902 bytes = 1.857 KiB */
	ck_assert_msg(strstr(r.out, "total (6 classes)") &&
			  strstr(r.out, " 1.86 KiB  100.0%\n"),
		      "%s", r.out);
	spec_run_free(&r);

	r = spec_tool("vmheap-histo", (const char *[]){"--bytes", path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "total (6 classes)") &&
			  strstr(r.out, " 1902  100.0%\n"),
		      "%s", r.out);
	spec_run_free(&r);
}
END_TEST

/* Every program under build/bin answers --version with "NAME VERSION",
 * VERSION as report/vmheap_tool.h defines it; a program there that is
 * not in the table fails the test, so a new tool cannot miss it. */
START_TEST(every_tool_prints_its_version)
{
	static const char *const tools[] = {
	    "vmheap-console", "vmheap-diff", "vmheap-dominators",
	    "vmheap-histo",   "vmheap-import", "vmheap-path",
	    "vmheap-replay",  "vmheap-report", "vmheap-run",
	    "vmheap-sample",
	};
	const size_t ntools = sizeof(tools) / sizeof(tools[0]);
	char *hdr = spec_read_file(spec_src("report/vmheap_tool.h"), NULL);
	char *bins = spec_ls(spec_build("bin"), '\n');
	const char *v;
	char want[128];

	ck_assert_ptr_nonnull(hdr);
	v = strstr(hdr, "#define VMHEAP_VERSION \"");
	ck_assert_ptr_nonnull(v);
	v += strlen("#define VMHEAP_VERSION \"");
	for (size_t i = 0; i < ntools; i++) {
		struct spec_run r =
		    spec_tool(tools[i], (const char *[]){"--version", NULL});
		snprintf(want, sizeof(want), "%s %.*s\n", tools[i],
			 (int)strcspn(v, "\""), v);
		ck_assert_msg(r.status == 0, "%s: status %d: %s", tools[i],
			      r.status, r.err);
		ck_assert_str_eq(r.out, want);
		ck_assert_str_eq(r.err, "");
		spec_run_free(&r);
	}
	for (char *name = bins, *nl; (nl = strchr(name, '\n')); name = nl + 1) {
		size_t i = 0;
		*nl = '\0';
		while (i < ntools && strcmp(tools[i], name))
			i++;
		ck_assert_msg(i < ntools,
			      "build/bin/%s is not in the --version table",
			      name);
	}
	free(bins);
	free(hdr);
}
END_TEST

/* Every tool (report/tool.c's vmheap_tool_usage_error) answers a bad
 * option the same way: exit status 2, nothing on stdout, its own name
 * first on stderr ("vmheap-histo: unknown ... '--no-such-option'", not
 * argv[0]'s path), then its usage line.  vmheap-sample, the test VM, is
 * no tool. */
START_TEST(every_tool_reports_a_bad_option_the_same_way)
{
	static const char *const tools[] = {
	    "vmheap-console", "vmheap-diff",   "vmheap-dominators",
	    "vmheap-histo",   "vmheap-import", "vmheap-path",
	    "vmheap-replay",  "vmheap-report", "vmheap-run",
	};
	char want[128];

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		struct spec_run r = spec_tool(
		    tools[i], (const char *[]){"--no-such-option", "x", NULL});
		ck_assert_msg(r.status == 2, "%s: status %d: %s", tools[i],
			      r.status, r.err);
		ck_assert_msg(r.out[0] == '\0', "%s wrote to stdout: %s",
			      tools[i], r.out);
		snprintf(want, sizeof(want), "%s: ", tools[i]);
		ck_assert_msg(!strncmp(r.err, want, strlen(want)),
			      "%s: stderr does not start with its name: %s",
			      tools[i], r.err);
		ck_assert_msg(strstr(r.err, "'--no-such-option'"),
			      "%s: the option is not named: %s", tools[i],
			      r.err);
		snprintf(want, sizeof(want), "\nusage: %s ", tools[i]);
		ck_assert_msg(strstr(r.err, want), "%s: no usage line: %s",
			      tools[i], r.err);
		spec_run_free(&r);
	}
}
END_TEST

START_TEST(histo_sorts_by_bytes)
{
	struct trow rows[16];
	size_t n =
	    histo_rows((const char *[]){"--sort", "bytes", NULL}, rows, 16);
	const struct expect want[] = {
	    {"My::Thing", 1, 1000},
	    {"Hash", 2, 400},
	    {"Array", 3, 260},
	    {"String", 5, 200},
	    {"Odd,\"Name\"", 2, 32},
	    {"<unknown class 0x63>", 1, 10},
	    {"total (6 classes)", 14, 1902},
	};
	assert_rows(rows, n, want, sizeof(want) / sizeof(want[0]));
}
END_TEST

START_TEST(histo_sorts_by_name)
{
	struct trow rows[16];
	size_t n = histo_rows((const char *[]){"--sort=name", NULL}, rows, 16);
	const struct expect want[] = {
	    {"<unknown class 0x63>", 1, 10},
	    {"Array", 3, 260},
	    {"Hash", 2, 400},
	    {"My::Thing", 1, 1000},
	    {"Odd,\"Name\"", 2, 32},
	    {"String", 5, 200},
	    {"total (6 classes)", 14, 1902},
	};
	assert_rows(rows, n, want, sizeof(want) / sizeof(want[0]));
}
END_TEST

START_TEST(histo_top_limits_rows_but_the_total_counts_everything)
{
	struct trow rows[16];
	size_t n = histo_rows((const char *[]){"--top", "2", NULL}, rows, 16);
	const struct expect want[] = {
	    {"String", 5, 200},
	    {"Array", 3, 260},
	    {"total (6 classes, top 2 shown)", 14, 1902},
	};
	assert_rows(rows, n, want, sizeof(want) / sizeof(want[0]));
}
END_TEST

START_TEST(histo_kind_groups_by_the_headers_kind_names)
{
	struct trow rows[16];
	size_t n = histo_rows((const char *[]){"--kind", NULL}, rows, 16);
	const struct expect want[] = {
	    {"string", 5, 200},		 {"array", 3, 260},
	    {"object", 3, 1032},	 {"hash", 2, 400},
	    {"<unknown kind 7>", 1, 10}, {"total (5 kinds)", 14, 1902},
	};
	assert_rows(rows, n, want, sizeof(want) / sizeof(want[0]));
}
END_TEST

START_TEST(histo_json_holds_vm_totals_and_every_class)
{
	const char *path = write_base_dump("base.vmheap");
	struct spec_run r = spec_tool(
	    "vmheap-histo", (const char *[]){"--format", "json", path, NULL});
	ck_assert_int_eq(r.status, 0);
	struct jval *v = json_parse(r.out);
	ck_assert_msg(v != NULL, "not JSON:\n%s", r.out);
	ck_assert_str_eq(json_get(v, "vm")->str, "sample");
	ck_assert_int_eq(json_get(v, "objects")->inum, 14);
	ck_assert_int_eq(json_get(v, "bytes")->inum, 1902);
	const struct jval *cl = json_get(v, "classes");
	ck_assert_int_eq(cl->type, J_ARR);
	ck_assert_int_eq(cl->n, 6);
	ck_assert_str_eq(json_get(cl->items[0], "class")->str, "String");
	ck_assert_int_eq(json_get(cl->items[0], "count")->inum, 5);
	ck_assert_int_eq(json_get(cl->items[0], "bytes")->inum, 200);
	ck_assert_str_eq(json_get(cl->items[3], "class")->str, "Odd,\"Name\"");
	ck_assert_int_eq(json_get(cl->items[3], "count")->inum, 2);
	long long sum = 0;
	for (size_t i = 0; i < cl->n; i++)
		sum += json_get(cl->items[i], "count")->inum;
	ck_assert_int_eq(sum, 14);
	json_free(v);
	spec_run_free(&r);
}
END_TEST

/*
 * Sizes that cannot all be true: three objects of 2^63 bytes in one
 * class.  Their sum (and the total's) is held at 2^64 - 1, never wrapped
 * to 2^63 + 40, and each format says so; the footer (modulo 2^64, as
 * FORMAT.md says) still checks.
 */
START_TEST(histo_saturates_byte_sums_and_says_so_in_every_format)
{
	static const struct tclass classes[] = {{1, "Big"}, {2, "Small"}};
	static const struct tobj objs[] = {
	    {0x1000, 1, 1ull << 63, 0, 0, {0}, NULL},
	    {0x2000, 1, 1ull << 63, 0, 0, {0}, NULL},
	    {0x3000, 1, 1ull << 63, 0, 0, {0}, NULL},
	    {0x4000, 2, 40, 0, 0, {0}, NULL},
	};
	struct tdump d = {0};
	const char *path;
	struct spec_run r;

	d.classes = classes;
	d.nclasses = 2;
	d.objs = objs;
	d.nobjs = 4;
	path = write_dump("big.vmheap", &d);
	r = spec_tool("vmheap-histo", (const char *[]){"--bytes", path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "total (2 classes)  18446744073709551615") &&
			  strstr(r.out, "warning: byte sums passed 2^64 - 1"),
		      "%s", r.out);
	ck_assert_ptr_null(strstr(r.out, "9223372036854775848"));
	spec_run_free(&r);
	r = spec_tool("vmheap-histo",
		      (const char *[]){"--format=csv", path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "3,Big,18446744073709551615\n") &&
			  strstr(r.out, "\n# warning: byte sums passed"),
		      "%s", r.out);
	spec_run_free(&r);
	r = spec_tool("vmheap-histo",
		      (const char *[]){"--format=json", path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\"bytes\":18446744073709551615,") &&
			  strstr(r.out, "\"saturated\":true") &&
			  strstr(r.out, "{\"class\":\"Big\",\"count\":3,"
					"\"bytes\":18446744073709551615}"),
		      "%s", r.out);
	{
		struct jval *j = json_parse(r.out);

		ck_assert_msg(j != NULL, "not JSON: %s", r.out);
		json_free(j);
	}
	spec_run_free(&r);
	/* the graph's sums too: --retained and vmheap-dominators (no root
	 * reaches them: the unreachable bytes are the sum) */
	r = spec_tool("vmheap-histo",
		      (const char *[]){"--retained", "--bytes", path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "4 objects, 18446744073709551615") &&
			  strstr(r.out, "warning: byte sums passed 2^64 - 1"),
		      "%s", r.out);
	spec_run_free(&r);
	r = spec_tool("vmheap-dominators",
		      (const char *[]){"--format=json", path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\"saturated\":true") &&
			  strstr(r.out, "\"unreachable_bytes\":"
					"18446744073709551615"),
		      "%s", r.out);
	spec_run_free(&r);
	/* vmheap-path of the class: its instances' bytes */
	r = spec_tool("vmheap-path",
		      (const char *[]){"--bytes", path, "Big", NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "3 instances, 18446744073709551615") &&
			  strstr(r.out, "warning: byte sums passed 2^64 - 1"),
		      "%s", r.out);
	spec_run_free(&r);
	r = spec_tool("vmheap-path",
		      (const char *[]){"--format", "json", path, "Big", NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\"saturated\":true") &&
			  strstr(r.out, "\"instance_bytes\":"
					"18446744073709551615"),
		      "%s", r.out);
	spec_run_free(&r);
	/* and vmheap-diff of it, in text and JSON */
	r = spec_tool("vmheap-diff", (const char *[]){path, path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "warning: byte sums passed 2^64 - 1"),
		      "%s", r.out);
	spec_run_free(&r);
	r = spec_tool("vmheap-diff",
		      (const char *[]){"--format=json", path, path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\"saturated\":true"), "%s", r.out);
	spec_run_free(&r);
}
END_TEST

START_TEST(histo_csv_has_header_and_quotes_names_per_rfc4180)
{
	const char *path = write_base_dump("base.vmheap");
	struct spec_run r = spec_tool(
	    "vmheap-histo", (const char *[]){"--format=csv", path, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "\"Odd,\"\"Name\"\"\"") != NULL,
		      "name not quoted:\n%s", r.out);
	size_t n;
	char ***rows = parse_csv(r.out, &n);
	ck_assert_int_eq(n, 7);
	ck_assert_str_eq(rows[0][0], "count");
	ck_assert_str_eq(rows[0][1], "class");
	ck_assert_str_eq(rows[0][2], "bytes");
	ck_assert_ptr_null(rows[0][3]);
	ck_assert_str_eq(rows[4][1], "Odd,\"Name\"");
	ck_assert_str_eq(rows[4][0], "2");
	ck_assert_str_eq(rows[4][2], "32");
	ck_assert_str_eq(rows[6][1], "My::Thing");
	ck_assert_str_eq(rows[6][2], "1000");
	csv_free(rows, n);
	spec_run_free(&r);
}
END_TEST

START_TEST(histo_csv_top_and_kind_combine)
{
	const char *path = write_base_dump("base.vmheap");
	struct spec_run r =
	    spec_tool("vmheap-histo",
		      (const char *[]){"--kind", "--top", "1", "--sort",
				       "bytes", "--format", "csv", path, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "count,kind,bytes\n3,object,1032\n");
	spec_run_free(&r);
}
END_TEST

START_TEST(histo_reads_a_dump_from_stdin)
{
	const char *path = write_base_dump("base.vmheap");
	struct spec_run r =
	    spec_tool_with("vmheap-histo", ARGS("--format", "csv", "-"),
			   &(struct spec_tool_opts){.stdin_path = path});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(!strncmp(r.out, "count,class,bytes\n5,String,200\n", 31),
		      "%s", r.out);
	spec_run_free(&r);
}
END_TEST

/*
 * Many blocks, many classes: the same census whatever the threads.  The
 * values take every integer encoding: class ids small, above 127 and far
 * above any dense range; sizes from fixints to 32 bits; object ids in
 * shuffled order (negative deltas); kinds past the header's names.
 */
START_TEST(histo_counts_the_same_on_one_two_and_three_threads)
{
	enum { N = 20000, C = 50, K = 6 };
	static struct tobj objs[N];
	static struct tclass classes[C];
	static char names[C][24];
	static const char *const kind_names[K] = {
	    "object", "string",		  "array",
	    "hash",   "<unknown kind 4>", "<unknown kind 5>"};
	long long count[C] = {0}, bytes[C] = {0};
	long long kcount[K] = {0}, kbytes[K] = {0};

	for (int c = 0; c < C; c++) {
		snprintf(names[c], sizeof(names[c]), "Gen::C%02d", c + 1);
		uint64_t id = c < 20   ? (uint64_t)c + 1
			      : c < 40 ? (uint64_t)c + 200
				       : (uint64_t)c * 1000003u + 0x7f00000000u;
		classes[c] = (struct tclass){id, names[c]};
	}
	for (int i = 0; i < N; i++) {
		int c = i * 7 % C;
		uint64_t size = 16 + 8 * (uint64_t)(i % 13);
		if (i % 5 == 0)
			size += 1000;
		if (i % 11 == 0)
			size += 100000;
		if (i % 97 == 0)
			size += 5000000000ull;
		uint32_t kind = (uint32_t)(i % K);
		uint64_t slot = (uint64_t)i * 7919 % N; /* shuffled ids */
		objs[i] = (struct tobj){0x100000 + 24 * slot,
					classes[c].id,
					size,
					kind,
					0,
					{0},
					NULL};
		if (i) {
			objs[i].nrefs = (size_t)(i % 5);
			for (size_t k = 0; k < objs[i].nrefs; k++)
				objs[i].refs[k] = objs[(i * (k + 3)) % i].id;
		}
		count[c]++;
		bytes[c] += (long long)size;
		kcount[kind]++;
		kbytes[kind] += (long long)size;
	}
	struct tdump d = {0};
	d.classes = classes;
	d.nclasses = C;
	d.objs = objs;
	d.nobjs = N;
	d.block_bytes = 4096;
	const char *path = write_dump("many.vmheap", &d);

	for (int t = 1; t <= 3; t++) {
		char th[16];
		snprintf(th, sizeof(th), "%d", t);
		struct spec_run r = spec_tool(
		    "vmheap-histo",
		    (const char *[]){"--threads", th, "--format", "csv",
				     "--sort", "name", path, NULL});
		ck_assert_msg(r.status == 0, "%s", r.err);
		size_t n;
		char ***rows = parse_csv(r.out, &n);
		ck_assert_int_eq(n, C + 1);
		for (int c = 0; c < C; c++) {
			ck_assert_str_eq(rows[c + 1][1], names[c]);
			ck_assert_int_eq(atoll(rows[c + 1][0]), count[c]);
			ck_assert_int_eq(atoll(rows[c + 1][2]), bytes[c]);
		}
		csv_free(rows, n);
		spec_run_free(&r);

		r = spec_tool("vmheap-histo",
			      (const char *[]){"--threads", th, "--kind",
					       "--format", "json", path, NULL});
		ck_assert_msg(r.status == 0, "%s", r.err);
		struct jval *v = json_parse(r.out);
		ck_assert_ptr_nonnull(v);
		const struct jval *ks = json_get(v, "kinds");
		ck_assert_int_eq(ks->n, K);
		for (size_t i = 0; i < ks->n; i++) {
			const char *name = json_get(ks->items[i], "kind")->str;
			int k = 0;
			while (k < K && strcmp(kind_names[k], name))
				k++;
			ck_assert_msg(k < K, "unexpected kind %s", name);
			ck_assert_int_eq(json_get(ks->items[i], "count")->inum,
					 kcount[k]);
			ck_assert_int_eq(json_get(ks->items[i], "bytes")->inum,
					 kbytes[k]);
		}
		json_free(v);
		spec_run_free(&r);
	}
}
END_TEST

/* Two class ids with one name (e.g. a class reloaded) make one row. */
START_TEST(histo_merges_class_ids_that_share_a_name)
{
	static const struct tclass classes[] = {
	    {1, "Thing"}, {2, "Thing"}, {3, ""}};
	static const struct tobj objs[] = {
	    {0x10, 1, 8, 0, 0, {0}, NULL},
	    {0x20, 2, 8, 0, 0, {0}, NULL},
	    {0x30, 3, 4, 0, 0, {0}, NULL},
	};
	struct tdump d = {0};
	d.classes = classes;
	d.nclasses = 3;
	d.objs = objs;
	d.nobjs = 3;
	const char *path = write_dump("same-name.vmheap", &d);
	struct spec_run r = spec_tool(
	    "vmheap-histo", (const char *[]){"--format", "csv", path, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(
	    r.out, "count,class,bytes\n2,Thing,16\n1,<anonymous class>,4\n");
	spec_run_free(&r);
}
END_TEST

/* Names with control characters, quotes and line breaks survive every
 * format: escaped in text (one line per row), JSON and CSV. */
START_TEST(histo_escapes_odd_class_names_in_every_format)
{
	static const struct tclass classes[] = {{1, "Bad\nName\t\"q\""}};
	static const struct tobj objs[] = {{0x10, 1, 8, 0, 0, {0}, NULL}};
	struct tdump d = {0};
	d.classes = classes;
	d.nclasses = 1;
	d.objs = objs;
	d.nobjs = 1;
	const char *path = write_dump("odd.vmheap", &d);

	struct spec_run r =
	    spec_tool("vmheap-histo", (const char *[]){path, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "Bad\\x0aName\\x09\"q\"") != NULL, "%s",
		      r.out);
	spec_run_free(&r);

	r = spec_tool("vmheap-histo",
		      (const char *[]){"--format", "json", path, NULL});
	ck_assert_int_eq(r.status, 0);
	struct jval *v = json_parse(r.out);
	ck_assert_msg(v != NULL, "not JSON: %s", r.out);
	const struct jval *cl = json_get(v, "classes");
	ck_assert_str_eq(json_get(cl->items[0], "class")->str,
			 "Bad\nName\t\"q\"");
	json_free(v);
	spec_run_free(&r);

	r = spec_tool("vmheap-histo",
		      (const char *[]){"--format", "csv", path, NULL});
	ck_assert_int_eq(r.status, 0);
	size_t n;
	char ***rows = parse_csv(r.out, &n);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(rows[1][1], "Bad\nName\t\"q\"");
	csv_free(rows, n);
	spec_run_free(&r);
}
END_TEST

/* A dump of more than 100 MiB (padded with 64 KiB string records) read
 * with standard error on a terminal: a bar is drawn, then erased. */
START_TEST(histo_draws_a_progress_bar_on_a_terminal_for_a_big_dump)
{
	const char *path = tmp_path("big.vmheap");
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	opt.vm_name = "sample";
	vmheap_writer *w;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	static char pad[VMHEAP_MAX_STRING_BYTES];
	memset(pad, 'x', sizeof(pad));
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Big", 3, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_object(w, 0x10, 1, 7, 0, NULL, 0),
			 0);
	for (uint64_t i = 0; i < 1700; i++)
		ck_assert_int_eq(
		    vmheap_writer_add_string(w, i + 1, pad, sizeof(pad)), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	ck_assert_uint_ge(vmheap_writer_bytes_written(w), 100u << 20);
	vmheap_writer_free(w);
	close(fd);

	struct spec_tool_opts tty = {.stderr_tty = 1};
	struct spec_run r =
	    spec_tool_with("vmheap-histo", ARGS("--bytes", path), &tty);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "big.vmheap") && strstr(r.err, "% [") &&
			  strstr(r.err, " MB"),
		      "no progress bar on the terminal: '%s'", r.err);
	size_t len = strlen(r.err);
	ck_assert_msg(len >= 4 && !strcmp(r.err + len - 4, "\r\033[K"),
		      "the bar is not erased at the end: '%s'", r.err);
	struct trow rows[4];
	ck_assert_int_eq(parse_text_rows(r.out, rows, 4), 2);
	ck_assert_str_eq(rows[0].name, "Big");
	ck_assert_int_eq(rows[0].count, 1);
	ck_assert_int_eq(rows[0].bytes, 7);
	spec_run_free(&r);

	r = spec_tool_with("vmheap-histo", ARGS("--no-progress", path), &tty);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	spec_run_free(&r);
	remove(path);
}
END_TEST

/* ------------------------------------------------------------ UTF-8 */

/*
 * Class names that are not UTF-8: a Latin-1 "Ärger" (0xC4), a truncated
 * sequence, a stray continuation byte, an overlong "/", a surrogate, and
 * a valid UTF-8 "Ärger" beside them.  OLD holds one object of each, NEW
 * two of each (new ids), so every name shows in every diff mode.
 */
static const struct tclass latin1_classes[] = {
    {1, "\xc4rger"},	 {2, "cut\xe2\x82"},	 {3, "\x80stray"},
    {4, "over\xc0\xaf"}, {5, "sur\xed\xa0\x80"}, {6, "\xc3\x84rger"},
};

static const char *write_latin1_dump(const char *name, size_t per_class)
{
	static struct tobj objs[12];
	struct tdump d = {0};
	size_t n = 0;
	for (uint64_t c = 1; c <= 6; c++)
		for (size_t k = 0; k < per_class; k++, n++)
			objs[n] =
			    (struct tobj){0x1000 + n * 16, c,	     8 * c, 0,
					  n ? 1 : 0,	   {0x1000}, NULL};
	d.classes = latin1_classes;
	d.nclasses = 6;
	d.objs = objs;
	d.nobjs = n;
	return write_dump(name, &d);
}

/* Ruby's JSON parser accepts the text, and Ruby finds it valid UTF-8. */
static void assert_valid_utf8_json(const struct spec_run *r, const char *what)
{
	const char *path = tmp_path("utf8.json");
	char cmd[512];
	spec_write_file(path, r->out, r->out_len);
	snprintf(cmd, sizeof(cmd),
		 "ruby -rjson -e 'd = File.binread(ARGV[0]).force_encoding("
		 "\"UTF-8\"); abort(\"not UTF-8\") unless d.valid_encoding?; "
		 "JSON.parse(d)' '%s'",
		 path);
	ck_assert_msg(system(cmd) == 0, "%s: not valid UTF-8 JSON:\n%s", what,
		      r->out);
}

START_TEST(histo_shows_bytes_that_are_not_utf8_in_every_format)
{
	const char *path = write_latin1_dump("latin1.vmheap", 1);

	struct spec_run r = spec_tool(
	    "vmheap-histo", (const char *[]){"--sort", "name", path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	const char *const shown[] = {"\\xc4rger",	   "cut\\xe2\\x82",
				     "\\x80stray",	   "over\\xc0\\xaf",
				     "sur\\xed\\xa0\\x80", "\xc3\x84rger"};
	for (size_t i = 0; i < 6; i++)
		ck_assert_msg(strstr(r.out, shown[i]) != NULL,
			      "'%s' missing in:\n%s", shown[i], r.out);
	ck_assert_msg(strchr(r.out, 0xc4) == NULL, "raw 0xC4 in:\n%s", r.out);
	spec_run_free(&r);

	r = spec_tool("vmheap-histo",
		      (const char *[]){"--format", "json", path, NULL});
	ck_assert_int_eq(r.status, 0);
	assert_valid_utf8_json(&r, "histo --format json");
	ck_assert_msg(strstr(r.out, "\"\\ufffdrger\"") != NULL, "%s", r.out);
	ck_assert_msg(strstr(r.out, "\"sur\\ufffd\\ufffd\\ufffd\"") != NULL,
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "\"\xc3\x84rger\"") != NULL, "%s", r.out);
	spec_run_free(&r);

	r = spec_tool("vmheap-histo",
		      (const char *[]){"--format", "csv", path, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, ",\\xc4rger,") != NULL, "%s", r.out);
	ck_assert_msg(strchr(r.out, 0xc4) == NULL, "raw 0xC4 in:\n%s", r.out);
	spec_run_free(&r);
}
END_TEST

START_TEST(diff_json_is_valid_utf8_in_every_mode)
{
	const char *old_path = write_latin1_dump("latin1-old.vmheap", 1);
	const char *new_path = write_latin1_dump("latin1-new.vmheap", 2);
	const char *const modes[] = {"--format", "--objects", "--retainers"};

	for (size_t m = 0; m < 3; m++) {
		const char *args[] = {modes[m], "json", old_path,
				      new_path, NULL,	NULL};
		if (m) { /* the mode, then --format json */
			args[1] = "--format";
			args[2] = "json";
			args[3] = old_path;
			args[4] = new_path;
		}
		struct spec_run r = spec_tool("vmheap-diff", args);
		ck_assert_msg(r.status == 0, "%s %s", modes[m], r.err);
		assert_valid_utf8_json(&r, modes[m]);
		ck_assert_msg(strstr(r.out, "\"\\ufffdrger\"") != NULL,
			      "%s:\n%s", modes[m], r.out);
		spec_run_free(&r);
	}

	/* text: every byte visible, in the tables and the retainers' titles */
	struct spec_run r =
	    spec_tool("vmheap-diff", (const char *[]){"--retainers", old_path,
						      new_path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\n\\xc4rger: ") != NULL, "%s", r.out);
	ck_assert_msg(strchr(r.out, 0xc4) == NULL, "raw 0xC4 in:\n%s", r.out);
	spec_run_free(&r);
}
END_TEST

/* Names that are not UTF-8 in histo's and diff's output. */
static TCase *utf8_tcase(void)
{
	TCase *tc = tcase_create("utf-8");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, histo_shows_bytes_that_are_not_utf8_in_every_format);
	tcase_add_test(tc, diff_json_is_valid_utf8_in_every_mode);
	return tc;
}

TCase *histo_tcase(void)
{
	TCase *tc = tcase_create("histo");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, histo_counts_objects_and_bytes_per_class_by_count);
	tcase_add_test(tc, histo_text_has_header_and_right_aligned_numbers);
	tcase_add_test(tc, histo_sorts_by_bytes);
	tcase_add_test(tc, histo_prints_human_sizes_and_shares_unless_bytes);
	tcase_add_test(tc, every_tool_prints_its_version);
	tcase_add_test(tc, every_tool_reports_a_bad_option_the_same_way);
	tcase_add_test(tc, histo_sorts_by_name);
	tcase_add_test(tc,
		       histo_top_limits_rows_but_the_total_counts_everything);
	tcase_add_test(tc, histo_kind_groups_by_the_headers_kind_names);
	tcase_add_test(tc, histo_json_holds_vm_totals_and_every_class);
	tcase_add_test(tc,
		       histo_saturates_byte_sums_and_says_so_in_every_format);
	tcase_add_test(tc, histo_csv_has_header_and_quotes_names_per_rfc4180);
	tcase_add_test(tc, histo_csv_top_and_kind_combine);
	tcase_add_test(tc, histo_reads_a_dump_from_stdin);
	tcase_add_test(tc, histo_counts_the_same_on_one_two_and_three_threads);
	tcase_add_test(tc, histo_merges_class_ids_that_share_a_name);
	tcase_add_test(tc, histo_escapes_odd_class_names_in_every_format);
	tcase_add_test(tc,
		       histo_draws_a_progress_bar_on_a_terminal_for_a_big_dump);
	return tc;
}

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("tools");
	suite_add_tcase(s, histo_tcase());
	suite_add_tcase(s, diff_tcase());
	suite_add_tcase(s, errors_tcase());
	suite_add_tcase(s, timeline_tcase());
	suite_add_tcase(s, utf8_tcase());
	return s;
}
