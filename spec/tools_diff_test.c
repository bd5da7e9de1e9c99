/*
 * tools_diff_test.c - vmheap-diff on pairs of dumps with known contents.
 *
 * OLD                              NEW (other class ids, same names)
 *   String  5 x 40   0x1000..0x1040  String  8 x 40: the 5 old + 0x7000,
 *                                             0x7010, 0x7020
 *   Array   80, 80, 100              Array   80, 80, 140 (bytes only)
 *   Hash    2 x 200                  Hash    1 x 200 (0x3000 stays)
 *   Gone    2 x 50  0x4000, 0x4010   -       (class gone)
 *   Same    1 x 10  0x5000           Same    1 x 10 0x5000 (unchanged)
 *   -                                New     4 x 30: 0x4000 (an old
 *                                            address, another class),
 *                                            0x8010, 0x8020, 0x8030
 *
 * References in NEW into new objects: Array 0x2000 -> 0x7000, 0x7010;
 * Hash 0x3000 -> 0x7020, 0x4000; New 0x8010 -> 0x8020; Same 0x5000 ->
 * 0x8030 (and the old 0x1000); root "vm" -> 0x8010.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools_harness-internal.h"

static const struct tclass old_classes[] = {
    {1, "String"}, {2, "Array"}, {3, "Hash"}, {4, "Gone"}, {5, "Same"},
};

static const struct tobj old_objs[] = {
    {0x1000, 1, 40, 1, 0, {0}, NULL},  {0x1010, 1, 40, 1, 0, {0}, NULL},
    {0x1020, 1, 40, 1, 0, {0}, NULL},  {0x1030, 1, 40, 1, 0, {0}, NULL},
    {0x1040, 1, 40, 1, 0, {0}, NULL},  {0x2000, 2, 80, 2, 0, {0}, NULL},
    {0x2050, 2, 80, 2, 0, {0}, NULL},  {0x20a0, 2, 100, 2, 0, {0}, NULL},
    {0x3000, 3, 200, 3, 0, {0}, NULL}, {0x30c8, 3, 200, 3, 0, {0}, NULL},
    {0x4000, 4, 50, 0, 0, {0}, NULL},  {0x4010, 4, 50, 0, 0, {0}, NULL},
    {0x5000, 5, 10, 0, 0, {0}, NULL},
};

static const struct tclass new_classes[] = {
    {10, "Same"}, {11, "String"}, {12, "Array"}, {13, "Hash"}, {14, "New"},
};

static const struct tobj new_objs[] = {
    {0x1000, 11, 40, 1, 0, {0}, NULL},
    {0x1010, 11, 40, 1, 0, {0}, NULL},
    {0x1020, 11, 40, 1, 0, {0}, NULL},
    {0x1030, 11, 40, 1, 0, {0}, NULL},
    {0x1040, 11, 40, 1, 0, {0}, NULL},
    {0x7000, 11, 40, 1, 0, {0}, NULL},
    {0x7010, 11, 40, 1, 0, {0}, NULL},
    {0x7020, 11, 40, 1, 0, {0}, NULL},
    {0x2000, 12, 80, 2, 2, {0x7000, 0x7010}, NULL},
    {0x2050, 12, 80, 2, 0, {0}, NULL},
    {0x20a0, 12, 140, 2, 0, {0}, NULL},
    {0x3000, 13, 200, 3, 2, {0x7020, 0x4000}, NULL},
    {0x4000, 14, 30, 0, 0, {0}, NULL},
    {0x8010, 14, 30, 0, 1, {0x8020}, NULL},
    {0x8020, 14, 30, 0, 0, {0}, NULL},
    {0x8030, 14, 30, 0, 0, {0}, NULL},
    {0x5000, 10, 10, 0, 2, {0x8030, 0x1000}, NULL},
};

static const struct troot new_roots[] = {{1, "vm", 0x8010}};

static const char *old_path, *new_path;

static void write_pair(void)
{
	struct tdump d = {0};
	d.classes = old_classes;
	d.nclasses = sizeof(old_classes) / sizeof(old_classes[0]);
	d.objs = old_objs;
	d.nobjs = sizeof(old_objs) / sizeof(old_objs[0]);
	d.time = 1700000000;
	d.block_bytes = 64;
	old_path = write_dump("old.vmheap", &d);

	struct tdump n = {0};
	n.classes = new_classes;
	n.nclasses = sizeof(new_classes) / sizeof(new_classes[0]);
	n.objs = new_objs;
	n.nobjs = sizeof(new_objs) / sizeof(new_objs[0]);
	n.roots = new_roots;
	n.nroots = 1;
	n.time = 1700000060;
	n.block_bytes = 64;
	new_path = write_dump("new.vmheap", &n);
}

struct expect {
	const char *name;
	long long count, bytes;
};

static void assert_rows(const char *out, const struct expect *want,
			size_t nwant)
{
	struct trow rows[32];
	size_t n = parse_text_rows(out, rows, 32);
	ck_assert_msg(n == nwant, "%zu rows, expected %zu in:\n%s", n, nwant,
		      out);
	for (size_t i = 0; i < nwant; i++) {
		ck_assert_msg(!strcmp(rows[i].name, want[i].name),
			      "row %zu is '%s', expected '%s'", i, rows[i].name,
			      want[i].name);
		ck_assert_msg(rows[i].count == want[i].count &&
				  rows[i].bytes == want[i].bytes,
			      "row %zu (%s): %lld, %lld; expected %lld, %lld",
			      i, want[i].name, rows[i].count, rows[i].bytes,
			      want[i].count, want[i].bytes);
	}
}

/* vmheap-diff --bytes OPTS OLD NEW (exact byte counts in text). */
static struct spec_run diff(const char *const *opts)
{
	const char *argv[16] = {"--bytes"};
	size_t n = 1;
	for (; opts && *opts; opts++)
		argv[n++] = *opts;
	argv[n++] = old_path;
	argv[n++] = new_path;
	argv[n] = NULL;
	return spec_tool("vmheap-diff", argv);
}

START_TEST(diff_shows_new_gone_and_bytes_only_classes_matched_by_name)
{
	write_pair();
	struct spec_run r = diff(NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.err, ""); /* same VM, different dumps: quiet */
	const struct expect want[] = {
	    {"New", 4, 120},	{"String", 3, 120},
	    {"Array", 0, 40},	{"Hash", -1, -200},
	    {"Gone", -2, -100}, {"total (5 classes changed)", 4, -20},
	};
	assert_rows(r.out, want, sizeof(want) / sizeof(want[0]));
	ck_assert_msg(strstr(r.out, "Same") == NULL,
		      "an unchanged class is listed:\n%s", r.out);
	ck_assert_msg(strstr(r.out, "+4  New") != NULL,
		      "growth not signed:\n%s", r.out);
	spec_run_free(&r);
}
END_TEST

/* Without --bytes: sizes in units, and a % column whose total row says
 * by how much the heap changed (-20 of OLD's 970 bytes is -2.1%). */
START_TEST(diff_prints_human_sizes_and_growth_shares_by_default)
{
	char want[32];

	write_pair();
	const char *argv[] = {old_path, new_path, NULL};
	struct spec_run r = spec_tool("vmheap-diff", argv);

	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "bytes       %\n") != NULL, "%s", r.out);
	snprintf(want, sizeof(want), "%.1f%%\n", -100.0 * 20 / 970);
	ck_assert_str_eq(want, "-2.1%\n");
	const char *total = strstr(r.out, "total (5 classes changed)");
	ck_assert_msg(total &&
			  strstr(total, "   -20 B   -2.1%\n") == total + 25,
		      "total row in:\n%s", r.out);
	ck_assert_msg(strstr(r.out, "  Hash                       -200 B  "
				    "-20.6%\n"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "970 bytes\n") != NULL, "%s", r.out);
	spec_run_free(&r);
}
END_TEST

START_TEST(diff_sorts_by_bytes_then_count)
{
	write_pair();
	struct spec_run r = diff((const char *[]){"--sort", "bytes", NULL});
	ck_assert_int_eq(r.status, 0);
	const struct expect want[] = {
	    {"New", 4, 120},	{"String", 3, 120},
	    {"Array", 0, 40},	{"Gone", -2, -100},
	    {"Hash", -1, -200}, {"total (5 classes changed)", 4, -20},
	};
	assert_rows(r.out, want, sizeof(want) / sizeof(want[0]));
	spec_run_free(&r);
}
END_TEST

START_TEST(diff_sorts_by_name_and_top_limits_rows)
{
	write_pair();
	struct spec_run r =
	    diff((const char *[]){"--sort", "name", "--top", "3", NULL});
	ck_assert_int_eq(r.status, 0);
	const struct expect want[] = {
	    {"Array", 0, 40},
	    {"Gone", -2, -100},
	    {"Hash", -1, -200},
	    {"total (5 classes changed, top 3 shown)", 4, -20},
	};
	assert_rows(r.out, want, sizeof(want) / sizeof(want[0]));
	spec_run_free(&r);
}
END_TEST

START_TEST(diff_json_rows_carry_old_new_and_deltas)
{
	write_pair();
	struct spec_run r = diff((const char *[]){"--format", "json", NULL});
	ck_assert_int_eq(r.status, 0);
	struct jval *v = json_parse(r.out);
	ck_assert_msg(v != NULL, "not JSON:\n%s", r.out);
	ck_assert_str_eq(json_get(json_get(v, "old"), "vm")->str, "sample");
	ck_assert_int_eq(json_get(json_get(v, "old"), "objects")->inum, 13);
	ck_assert_int_eq(json_get(json_get(v, "new"), "objects")->inum, 17);
	ck_assert_int_eq(json_get(json_get(v, "new"), "bytes")->inum, 950);
	ck_assert_int_eq(json_get(v, "count_delta")->inum, 4);
	ck_assert_int_eq(json_get(v, "bytes_delta")->inum, -20);
	const struct jval *cl = json_get(v, "classes");
	ck_assert_int_eq(cl->n, 5);
	const struct jval *gone = cl->items[4];
	ck_assert_str_eq(json_get(gone, "class")->str, "Gone");
	ck_assert_int_eq(json_get(gone, "count_old")->inum, 2);
	ck_assert_int_eq(json_get(gone, "count_new")->inum, 0);
	ck_assert_int_eq(json_get(gone, "count_delta")->inum, -2);
	ck_assert_int_eq(json_get(gone, "bytes_old")->inum, 100);
	ck_assert_int_eq(json_get(gone, "bytes_new")->inum, 0);
	ck_assert_int_eq(json_get(gone, "bytes_delta")->inum, -100);
	const struct jval *arr = cl->items[2];
	ck_assert_str_eq(json_get(arr, "class")->str, "Array");
	ck_assert_int_eq(json_get(arr, "count_delta")->inum, 0);
	ck_assert_int_eq(json_get(arr, "bytes_old")->inum, 260);
	ck_assert_int_eq(json_get(arr, "bytes_new")->inum, 300);
	json_free(v);
	spec_run_free(&r);
}
END_TEST

/* Every JSON document of a two-dump diff describes both dumps as "old"
 * and "new" objects: file, vm, pid and time_ms (the writer's time, 60 s
 * apart); removing one of them fails here. */
START_TEST(every_diff_json_has_old_and_new)
{
	static const char *const modes[] = {NULL, "--objects", "--retainers",
					    "--paths", "--suspects"};
	static const char *const keys[] = {"file", "vm", "vm_version", "pid",
					   "time", "time_ms"};

	write_pair();
	for (size_t m = 0; m < sizeof(modes) / sizeof(*modes); m++) {
		struct spec_run r =
		    diff((const char *[]){"--format", "json", modes[m], NULL});
		ck_assert_msg(r.status == 0, "%s: %s", modes[m], r.err);
		struct jval *v = json_parse(r.out);
		ck_assert_msg(v != NULL, "%s: not JSON:\n%s", modes[m], r.out);
		const struct jval *o = json_get(v, "old"), *n = json_get(v, "new");
		ck_assert_msg(o && n && o->type == J_OBJ && n->type == J_OBJ,
			      "%s: old/new: %s", modes[m], r.out);
		for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++)
			ck_assert_msg(json_get(o, keys[k]) && json_get(n, keys[k]),
				      "%s: no %s in old/new: %s", modes[m],
				      keys[k], r.out);
		ck_assert_str_eq(json_get(o, "file")->str, old_path);
		ck_assert_str_eq(json_get(n, "file")->str, new_path);
		ck_assert_int_eq(json_get(o, "time_ms")->inum, 1700000000000LL);
		ck_assert_int_eq(json_get(n, "time_ms")->inum, 1700000060000LL);
		ck_assert_int_eq(json_get(n, "pid")->inum, 1234);
		json_free(v);
		spec_run_free(&r);
	}
}
END_TEST

START_TEST(diff_csv_has_the_documented_header_and_rows)
{
	write_pair();
	struct spec_run r = diff((const char *[]){"--format", "csv", NULL});
	ck_assert_int_eq(r.status, 0);
	size_t n;
	char ***rows = parse_csv(r.out, &n);
	ck_assert_int_eq(n, 6);
	const char *hdr[] = {"count_delta", "class",	 "bytes_delta",
			     "count_old",   "count_new", "bytes_old",
			     "bytes_new"};
	for (int i = 0; i < 7; i++)
		ck_assert_str_eq(rows[0][i], hdr[i]);
	ck_assert_ptr_null(rows[0][7]);
	/* New: +4 objects, +120 bytes, 0 -> 4, 0 -> 120 */
	const char *new_row[] = {"4", "New", "120", "0", "4", "0", "120"};
	for (int i = 0; i < 7; i++)
		ck_assert_str_eq(rows[1][i], new_row[i]);
	ck_assert_str_eq(rows[5][1], "Gone");
	ck_assert_str_eq(rows[5][0], "-2");
	csv_free(rows, n);
	spec_run_free(&r);
}
END_TEST

START_TEST(diff_objects_finds_new_objects_by_id_and_class)
{
	write_pair();
	struct spec_run r = diff((const char *[]){"--objects", NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	/* 0x4000 was a Gone in OLD and is a New in NEW: new.  Array 0x20a0
	 * grew but is the same object: not new. */
	const struct expect want[] = {
	    {"New", 4, 120},
	    {"String", 3, 120},
	    {"total new (2 classes)", 7, 240},
	};
	assert_rows(r.out, want, sizeof(want) / sizeof(want[0]));
	spec_run_free(&r);

	r = diff((const char *[]){"--objects", "--format", "json", NULL});
	ck_assert_int_eq(r.status, 0);
	struct jval *v = json_parse(r.out);
	ck_assert_msg(v != NULL, "not JSON:\n%s", r.out);
	ck_assert_int_eq(json_get(v, "new_objects")->inum, 7);
	ck_assert_int_eq(json_get(v, "new_bytes")->inum, 240);
	const struct jval *cl = json_get(v, "classes");
	ck_assert_int_eq(cl->n, 2);
	ck_assert_str_eq(json_get(cl->items[1], "class")->str, "String");
	ck_assert_int_eq(json_get(cl->items[1], "count")->inum, 3);
	json_free(v);
	spec_run_free(&r);

	r = diff((const char *[]){"--objects", "--format", "csv", "--top", "1",
				  NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "count,class,bytes\n4,New,120\n");
	spec_run_free(&r);
}
END_TEST

START_TEST(diff_retainers_name_referrer_classes_and_roots)
{
	write_pair();
	struct spec_run r =
	    diff((const char *[]){"--retainers", "--format", "csv", NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.out,
			 "class,new_count,new_bytes,retainer,references\n"
			 "New,4,120,<root vm>,1\n"
			 "New,4,120,Hash,1\n"
			 "New,4,120,New,1\n"
			 "New,4,120,Same,1\n"
			 "String,3,120,Array,2\n"
			 "String,3,120,Hash,1\n");
	spec_run_free(&r);

	r = diff((const char *[]){"--retainers", "--top", "1", NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "New: 4 new objects, 120 bytes") != NULL,
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "String:") == NULL,
		      "--top 1 shows a second class:\n%s", r.out);
	spec_run_free(&r);

	r = diff((const char *[]){"--retainers", "--format", "json", NULL});
	ck_assert_int_eq(r.status, 0);
	struct jval *v = json_parse(r.out);
	ck_assert_msg(v != NULL, "not JSON:\n%s", r.out);
	const struct jval *cl = json_get(v, "classes");
	ck_assert_int_eq(cl->n, 2);
	const struct jval *ret = json_get(cl->items[1], "retainers");
	ck_assert_str_eq(json_get(ret->items[0], "class")->str, "Array");
	ck_assert_int_eq(json_get(ret->items[0], "references")->inum, 2);
	json_free(v);
	spec_run_free(&r);
}
END_TEST

/* One holder with more references than one record carries: the rest go
 * in more-references records, and still count for the holder's class. */
START_TEST(diff_retainers_count_references_continued_past_one_record)
{
	enum { N = 70000 };
	static struct tobj objs[N + 2];
	static uint64_t held[N];
	static const struct tclass classes[] = {
	    {1, "Msg"}, {2, "Holder"}, {3, "Array"}};
	static const struct tobj old_objs[] = {{0x10, 3, 40, 0, 0, {0}, NULL}};

	for (int i = 0; i < N; i++) {
		held[i] = 0x100000 + 16 * (uint64_t)i;
		objs[i] = (struct tobj){held[i], 1, 16, 0, 0, {0}, NULL};
	}
	objs[N] = (struct tobj){0x10, 3, 40, 0, 1, {held[5]}, NULL};
	objs[N + 1] = (struct tobj){0x20, 2, 64, 0, N, {0}, held};
	struct tdump o = {0}, n = {0};
	o.classes = n.classes = classes;
	o.nclasses = n.nclasses = 3;
	o.objs = old_objs;
	o.nobjs = 1;
	n.objs = objs;
	n.nobjs = N + 2;
	n.time = 1700000099;
	old_path = write_dump("big-old.vmheap", &o);
	new_path = write_dump("big-new.vmheap", &n);

	struct spec_run r =
	    diff((const char *[]){"--retainers", "--format", "csv", NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.out,
			 "class,new_count,new_bytes,retainer,references\n"
			 "Msg,70000,1120000,Holder,70000\n"
			 "Msg,70000,1120000,Array,1\n"
			 "Holder,1,64,(none),0\n");
	spec_run_free(&r);
}
END_TEST

START_TEST(diff_retainers_refuse_stdin_as_new)
{
	write_pair();
	struct spec_run r =
	    spec_tool_with("vmheap-diff", ARGS("--retainers", old_path, "-"),
			   &(struct spec_tool_opts){.stdin_path = new_path});
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strstr(r.err, "regular file") && strstr(r.err, "usage:"),
		      "%s", r.err);
	spec_run_free(&r);
}
END_TEST

START_TEST(diff_reads_old_from_stdin)
{
	write_pair();
	struct spec_run r = spec_tool_with(
	    "vmheap-diff", ARGS("--format", "csv", "-", new_path),
	    &(struct spec_tool_opts){.stdin_path = old_path});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\n4,New,120,0,4,0,120\n") != NULL, "%s",
		      r.out);
	spec_run_free(&r);
}
END_TEST

START_TEST(diff_warns_when_the_same_dump_is_given_twice)
{
	write_pair();
	struct spec_run r = spec_tool(
	    "vmheap-diff", (const char *[]){old_path, old_path, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.err, "warning") && strstr(r.err, "same dump"),
		      "%s", r.err);
	ck_assert_msg(strstr(r.out, "total (0 classes changed)") != NULL, "%s",
		      r.out);
	spec_run_free(&r);

	/* a copy under another name: same vm, pid and time */
	size_t len;
	char *bytes = slurp(old_path, &len);
	const char *copy = tmp_path("old-copy.vmheap");
	spec_write_file(copy, bytes, len);
	free(bytes);
	r = spec_tool("vmheap-diff", (const char *[]){old_path, copy, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.err, "same dump") && strstr(r.err, "pid 1234"),
		      "%s", r.err);
	spec_run_free(&r);

	/* two dumps of one VM in the same second, different contents: quiet */
	struct tdump d = {0};
	d.classes = new_classes;
	d.nclasses = sizeof(new_classes) / sizeof(new_classes[0]);
	d.objs = new_objs;
	d.nobjs = sizeof(new_objs) / sizeof(new_objs[0]);
	d.time = 1700000000; /* OLD's time, and the same pid */
	const char *quick = write_dump("quick.vmheap", &d);
	r = spec_tool("vmheap-diff", (const char *[]){old_path, quick, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	spec_run_free(&r);
}
END_TEST

START_TEST(diff_warns_when_the_dumps_are_of_different_vms)
{
	write_pair();
	struct tdump d = {0};
	d.vm = "ruby";
	d.vm_version = "3.1.2";
	d.classes = new_classes;
	d.nclasses = sizeof(new_classes) / sizeof(new_classes[0]);
	d.objs = new_objs;
	d.nobjs = sizeof(new_objs) / sizeof(new_objs[0]);
	d.time = 1700000500;
	const char *other = write_dump("ruby.vmheap", &d);
	struct spec_run r =
	    spec_tool("vmheap-diff", (const char *[]){old_path, other, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.err, "different VMs") &&
			  strstr(r.err, "sample 1.0") &&
			  strstr(r.err, "ruby 3.1.2"),
		      "%s", r.err);
	/* the diff itself is still printed */
	ck_assert_msg(strstr(r.out, "New") != NULL, "%s", r.out);
	spec_run_free(&r);
}
END_TEST

TCase *diff_tcase(void)
{
	TCase *tc = tcase_create("diff");
	tcase_set_timeout(tc, 60);
	tcase_add_test(
	    tc, diff_shows_new_gone_and_bytes_only_classes_matched_by_name);
	tcase_add_test(tc, diff_sorts_by_bytes_then_count);
	tcase_add_test(tc,
		       diff_prints_human_sizes_and_growth_shares_by_default);
	tcase_add_test(tc, diff_sorts_by_name_and_top_limits_rows);
	tcase_add_test(tc, diff_json_rows_carry_old_new_and_deltas);
	tcase_add_test(tc, every_diff_json_has_old_and_new);
	tcase_add_test(tc, diff_csv_has_the_documented_header_and_rows);
	tcase_add_test(tc, diff_objects_finds_new_objects_by_id_and_class);
	tcase_add_test(tc, diff_retainers_name_referrer_classes_and_roots);
	tcase_add_test(
	    tc, diff_retainers_count_references_continued_past_one_record);
	tcase_add_test(tc, diff_retainers_refuse_stdin_as_new);
	tcase_add_test(tc, diff_reads_old_from_stdin);
	tcase_add_test(tc, diff_warns_when_the_same_dump_is_given_twice);
	tcase_add_test(tc, diff_warns_when_the_dumps_are_of_different_vms);
	return tc;
}
