/*
 * tools_timeline_test.c - vmheap-diff A B C: the timeline of three dumps
 * with known contents and start times, and the time-order warnings.
 *
 *            #1 (t0)   #2 (t0 + 30.3 s)   #3 (t0 + 60 s)
 *   Leak     100       200                300       x 40 bytes
 *   Churn    50        40                 60        x 16 bytes
 *   Steady   10        10                 10        x 8 bytes
 *   Gone     5         -                  -         x 100 bytes
 *
 * Over one minute Leak grows by 200 (+200 per minute, at every step),
 * Churn by 10 (not at every step), Gone by -5; Steady does not change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools_harness-internal.h"

#define T0_MS 1700000000000LL

static const struct tclass classes[] = {
    {1, "Leak"}, {2, "Churn"}, {3, "Steady"}, {4, "Gone"}};

/* Dump k (0..2) of the table above taken at `ms`, written as `name`. */
static const char *timeline_dump_at(const char *name, int k, int64_t ms)
{
	static const uint64_t counts[3][4] = {
	    {100, 50, 10, 5}, {200, 40, 10, 0}, {300, 60, 10, 0}};
	static const uint64_t bytes[4] = {40, 16, 8, 100};
	struct tobj *objs = calloc(400, sizeof(*objs));
	struct tdump d = {0};
	size_t n = 0;
	const char *path;

	ck_assert_ptr_nonnull(objs);
	for (int c = 0; c < 4; c++)
		for (uint64_t i = 0; i < counts[k][c]; i++) {
			objs[n].id = 0x10000 * (uint64_t)(c + 1) + 0x10 * i;
			objs[n].cls = (uint64_t)c + 1;
			objs[n].bytes = bytes[c];
			n++;
		}
	d.time_ms = ms;
	d.classes = classes;
	d.nclasses = 4;
	d.objs = objs;
	d.nobjs = n;
	path = write_dump(name, &d);
	free(objs);
	return path;
}

/* Dump k (0..2) of the table above, written as `name`. */
static const char *timeline_dump(const char *name, int k)
{
	static const int64_t at[3] = {T0_MS, T0_MS + 30300, T0_MS + 60000};

	return timeline_dump_at(name, k, at[k]);
}

/* The three dumps, as TAG1.vmheap, TAG2.vmheap, TAG3.vmheap. */
static void three_dumps(const char *tag, const char *path[3])
{
	char name[64];

	for (int k = 0; k < 3; k++) {
		snprintf(name, sizeof(name), "%s%d.vmheap", tag, k + 1);
		path[k] = timeline_dump(name, k);
	}
}

/* The line of `out` that ends with `tail`, copied into line (or fail). */
static void line_ending(const char *out, const char *tail, char *line,
			size_t size)
{
	size_t tl = strlen(tail);

	for (const char *p = out; *p;) {
		size_t l = strcspn(p, "\n");
		if (l >= tl && !memcmp(p + l - tl, tail, tl)) {
			snprintf(line, size, "%.*s", (int)l, p);
			return;
		}
		p += l + (p[l] == '\n');
	}
	ck_abort_msg("no line ends with '%s' in:\n%s", tail, out);
}

/* `line` with runs of spaces made one (tables pad their columns). */
static char *squeeze(char *line)
{
	char *w = line;

	for (const char *r = line; *r; r++)
		if (!(*r == ' ' && (w == line || w[-1] == ' ')))
			*w++ = *r;
	while (w > line && w[-1] == ' ')
		w--;
	*w = '\0';
	return line;
}

START_TEST(timeline_text_gives_counts_change_rate_and_the_every_step_mark)
{
	const char *d[3];
	char line[512];
	struct spec_run r;

	three_dumps("tl", d);
	r = spec_tool("vmheap-diff",
		      (const char *[]){"--bytes", d[0], d[1], d[2], NULL});

	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	ck_assert_str_eq(r.err, "");
	ck_assert_msg(strstr(r.out, "timeline: 3 dumps over 60.0 s, from "
				    "2023-11-14 22:13:20.000 UTC\n") == r.out,
		      "%s", r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "#2 at +30.3 s: "));
	ck_assert_ptr_nonnull(strstr(r.out, "#3 at +60.0 s: "));
	/* the rows: counts at each dump, change, per min, bytes, bytes per
	 * min, class */
	line_ending(r.out, "Leak", line, sizeof(line));
	ck_assert_str_eq(squeeze(line),
			 "100 200 300 +200 +200 +8000 +8000 * Leak");
	line_ending(r.out, "Churn", line, sizeof(line));
	ck_assert_str_eq(squeeze(line), "50 40 60 +10 +10 +160 +160 Churn");
	line_ending(r.out, "Gone", line, sizeof(line));
	ck_assert_str_eq(squeeze(line), "5 0 0 -5 -5.0 -500 -500 Gone");
	ck_assert_ptr_null(strstr(r.out, "Steady")); /* unchanged */
	line_ending(r.out, "total (3 classes changed)", line, sizeof(line));
	ck_assert_str_eq(squeeze(line),
			 "165 250 370 +205 +205 +7660 +7660 * total (3 classes "
			 "changed)");
	/* biggest growth first */
	ck_assert(strstr(r.out, "Leak") < strstr(r.out, "Churn"));
	ck_assert(strstr(r.out, "Churn") < strstr(r.out, "Gone"));
	ck_assert_ptr_nonnull(strstr(r.out, "* grew at every step (1 class)"));
	spec_run_free(&r);

	/* #1 #2 #2: 30.3 s, so the rates are not the changes: 4000 bytes
	 * and 100 Leaks in 30.3 s are 7921 bytes and 198 per minute */
	r = spec_tool("vmheap-diff",
		      (const char *[]){"--bytes", d[0], d[1], d[1], NULL});
	ck_assert_int_eq(r.status, 0);
	line_ending(r.out, "Leak", line, sizeof(line));
	ck_assert_str_eq(squeeze(line),
			 "100 200 200 +100 +198 +4000 +7921 Leak");
	ck_assert_ptr_nonnull(strstr(r.out, "bytes/min"));
	spec_run_free(&r);

	/* --top 1: the leak and the total only */
	r = spec_tool("vmheap-diff",
		      (const char *[]){"--top", "1", d[0], d[1], d[2], NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_null(strstr(r.out, "Churn"));
	ck_assert_ptr_nonnull(strstr(r.out, "total (3 classes changed, top 1 "
					    "shown)"));
	spec_run_free(&r);
}
END_TEST

START_TEST(timeline_json_and_csv_carry_the_same_figures)
{
	const char *d[3];
	struct spec_run r;
	struct jval *j;
	const struct jval *cls, *leak, *churn;
	size_t nrows;
	char ***rows;

	three_dumps("tj", d);
	r = spec_tool("vmheap-diff", (const char *[]){"--format", "json", d[0],
						      d[1], d[2], NULL});

	ck_assert_msg(r.status == 0, "%s", r.err);
	j = json_parse(r.out);
	ck_assert_msg(j != NULL, "not JSON: %s", r.out);
	ck_assert_int_eq(json_get(j, "span_ms")->inum, 60000);
	ck_assert_int_eq(json_get(j, "dumps")->n, 3);
	ck_assert_int_eq(
	    json_get(json_get(j, "dumps")->items[1], "offset_ms")->inum, 30300);
	ck_assert_int_eq(
	    json_get(json_get(j, "dumps")->items[1], "time_ms")->inum,
	    T0_MS + 30300);
	ck_assert_int_eq(json_get(j, "changed")->inum, 3);
	/* old and new: the first and the last dump */
	ck_assert_int_eq(json_get(json_get(j, "old"), "time_ms")->inum, T0_MS);
	ck_assert_int_eq(json_get(json_get(j, "new"), "time_ms")->inum,
			 T0_MS + 60000);
	ck_assert_ptr_nonnull(strstr(json_get(json_get(j, "new"), "file")->str,
				     "tj3.vmheap"));
	ck_assert_int_eq(json_get(json_get(j, "old"), "pid")->inum, 1234);
	ck_assert_str_eq(json_get(json_get(j, "old"), "vm")->str, "sample");
	cls = json_get(j, "classes");
	ck_assert_int_eq(cls->n, 3);
	leak = cls->items[0];
	churn = cls->items[1];
	ck_assert_str_eq(json_get(leak, "class")->str, "Leak");
	ck_assert_int_eq(json_get(leak, "counts")->n, 3);
	ck_assert_int_eq(json_get(leak, "counts")->items[2]->inum, 300);
	ck_assert_int_eq(json_get(leak, "bytes")->items[0]->inum, 4000);
	ck_assert_int_eq(json_get(leak, "count_delta")->inum, 200);
	ck_assert_int_eq(json_get(leak, "bytes_delta")->inum, 8000);
	ck_assert_double_eq_tol(json_get(leak, "count_per_minute")->num, 200.0,
				1e-9);
	ck_assert_double_eq_tol(json_get(leak, "bytes_per_minute")->num,
				8000.0, 1e-9);
	ck_assert_int_eq(json_get(leak, "grew_every_step")->type, J_BOOL);
	ck_assert_int_eq(json_get(leak, "grew_every_step")->inum, 1);
	ck_assert_str_eq(json_get(churn, "class")->str, "Churn");
	ck_assert_int_eq(json_get(churn, "grew_every_step")->inum, 0);
	ck_assert_int_eq(
	    json_get(json_get(j, "total"), "counts")->items[0]->inum, 165);
	json_free(j);
	spec_run_free(&r);

	r = spec_tool("vmheap-diff", (const char *[]){"--format", "csv", d[0],
						      d[1], d[2], NULL});
	ck_assert_int_eq(r.status, 0);
	rows = parse_csv(r.out, &nrows);
	ck_assert_int_eq(nrows, 4);
	ck_assert_str_eq(rows[0][0], "class");
	ck_assert_str_eq(rows[0][4], "count_delta");
	ck_assert_str_eq(rows[1][0], "Leak");
	const char *want[] = {"Leak",	  "100",  "200",   "300",
			      "200",	  "200.000", "4000", "8000",
			      "12000",	  "8000", "8000.000", "true"};
	for (size_t k = 0; k < sizeof(want) / sizeof(*want); k++)
		ck_assert_str_eq(rows[1][k], want[k]);
	ck_assert_str_eq(rows[2][0], "Churn");
	ck_assert_str_eq(rows[2][11], "false");
	csv_free(rows, nrows);
	spec_run_free(&r);
}
END_TEST

START_TEST(dumps_out_of_time_order_get_a_warning)
{
	const char *d[3];
	struct spec_run r;

	three_dumps("to", d);

	/* a timeline given #1 #3 #2 */
	r = spec_tool("vmheap-diff", (const char *[]){d[0], d[2], d[1], NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.err, "vmheap-diff: warning: the dumps are out "
				    "of time order: #3 (") &&
			  strstr(r.err, "to2.vmheap) was taken 29.7 s before "
					"#2 (") &&
			  strstr(r.err, "give them oldest first"),
		      "stderr: %s", r.err);
	spec_run_free(&r);

	/* OLD and NEW swapped: the two-dump diff warns, its table stays */
	r = spec_tool("vmheap-diff", (const char *[]){d[1], d[0], NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.err, "vmheap-diff: warning: NEW (") &&
			  strstr(r.err, "to1.vmheap) was taken 30.3 s before "
					"OLD (") &&
			  strstr(r.err, "give the older dump first"),
		      "stderr: %s", r.err);
	ck_assert_msg(strstr(r.out, "old: ") == r.out, "%s", r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "-100  Leak"));
	spec_run_free(&r);

	/* in order: no warning, and the two-dump diff as before */
	r = spec_tool("vmheap-diff", (const char *[]){d[0], d[1], NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	ck_assert_msg(strstr(r.out, "old: ") == r.out, "%s", r.out);
	ck_assert_ptr_null(strstr(r.out, "timeline"));
	spec_run_free(&r);
}
END_TEST

/*
 * Header times at the ends of int64 (a corrupt or hostile header): the
 * span and the warnings hold at the largest value instead of overflowing
 * (the sanitizer run catches an overflow), and the rates keep their
 * sign: Leak grew.
 */
START_TEST(extreme_header_times_do_not_overflow)
{
	const char *d[3];
	struct spec_run r;

	d[0] = timeline_dump_at("x1.vmheap", 0, INT64_MIN + 5);
	d[1] = timeline_dump_at("x2.vmheap", 1, 1);
	d[2] = timeline_dump_at("x3.vmheap", 2, INT64_MAX);
	r = spec_tool("vmheap-diff", (const char *[]){"--format", "json", d[0],
						      d[1], d[2], NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\"span_ms\":9223372036854775807,"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "\"time_ms\":-9223372036854775803") &&
			  strstr(r.out, "\"offset_ms\":9223372036854775807}"),
		      "%s", r.out);
	{
		struct jval *j = json_parse(r.out);
		const struct jval *leak;

		ck_assert_msg(j != NULL, "not JSON: %s", r.out);
		leak = json_get(j, "classes")->items[0];
		ck_assert_str_eq(json_get(leak, "class")->str, "Leak");
		ck_assert(json_get(leak, "count_per_minute")->num >= 0);
		json_free(j);
	}
	spec_run_free(&r);
	r = spec_tool("vmheap-diff", (const char *[]){d[0], d[1], d[2], NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	spec_run_free(&r);
	/* newest first: the warning's span holds too */
	r = spec_tool("vmheap-diff", (const char *[]){d[2], d[0], NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.err, "was taken 2562047788015.2 h before"),
		      "%s", r.err);
	spec_run_free(&r);
}
END_TEST

START_TEST(modes_other_than_classes_take_two_dumps)
{
	const char *d[3];
	struct spec_run r;

	three_dumps("tm", d);
	r = spec_tool("vmheap-diff",
		      (const char *[]){"--objects", d[0], d[1], d[2], NULL});

	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "take two dumps, OLD NEW (three or more "
				    "give the class timeline, or with --native "
				    "the native one)"),
		      "%s", r.err);
	ck_assert_str_eq(r.out, "");
	spec_run_free(&r);
	r = spec_tool("vmheap-diff",
		      (const char *[]){d[0], "-", d[2], "-", NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "only one dump can be - (stdin)"));
	spec_run_free(&r);
}
END_TEST

TCase *timeline_tcase(void)
{
	TCase *tc = tcase_create("timeline");

	tcase_set_timeout(tc, 120);
	tcase_add_test(
	    tc, timeline_text_gives_counts_change_rate_and_the_every_step_mark);
	tcase_add_test(tc, timeline_json_and_csv_carry_the_same_figures);
	tcase_add_test(tc, dumps_out_of_time_order_get_a_warning);
	tcase_add_test(tc, extreme_header_times_do_not_overflow);
	tcase_add_test(tc, modes_other_than_classes_take_two_dumps);
	return tc;
}
