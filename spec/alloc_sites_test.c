/*
 * alloc_sites_test.c - allocation sites and imemo kinds on the real `ruby`
 * (Debian's MRI 3.1): config.trace.allocations, the sites in dumps,
 * vmheap-histo/-diff --by site, vmheap-path's site line, <imemo:TYPE>.
 *
 * Each test runs one Ruby program to its end with the agent loaded
 * (`ruby -I BUILD/ruby -rvmheap_agent program.rb CONSOLE DIR`).  The
 * program drives its own agent with vmheap-console -p its pid (the agent
 * answers from its own thread while the main thread waits for the
 * console), takes its dumps, and prints what MRI itself says at the same
 * moments (ObjectSpace.trace_object_allocations' lines,
 * ObjectSpace.count_imemo_objects): the independent truth the tools'
 * figures are checked against.  Under ASan ruby gets the ASan runtime by
 * LD_PRELOAD (spec/alloc_sites.mk).
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/vmheap_spec.h"

#define RUN_MS 120000

/* The helpers every program starts with: agent(COMMAND) runs
 * vmheap-console -p PID -e COMMAND and returns its output. */
#define PRELUDE                                                                \
	"STDOUT.sync = true\n"                                                 \
	"CONSOLE, DIR = ARGV\n"                                                \
	"def agent(cmd)\n"                                                     \
	"  out = IO.popen([CONSOLE, '-p', Process.pid.to_s, '-e', cmd],\n"     \
	"                 err: [:child, :out], &:read)\n"                      \
	"  $?.success? or abort \"vmheap-console -e #{cmd}: #{out}\"\n"        \
	"  out.strip\n"                                                        \
	"end\n"
#define PRELUDE_LINES 8

/* Run `script` (PRELUDE prepended) as program.rb in a fresh directory,
 * which *dir gets, and from there (its sites read "program.rb:LINE"); its
 * stdout (malloc'd).  Fails the test unless it exits 0. */
static char *run_program(const char *script, char *dir, size_t dirsz)
{
	char path[PATH_MAX + 16], inc[PATH_MAX], tmpdir[PATH_MAX + 32],
	    dumpdir[PATH_MAX + 32], console[PATH_MAX];
	const char *argv[] = {"ruby",	 "-C",	  dir,	   "-I",
			      inc,	 "-rvmheap_agent", "program.rb", console,
			      dir,	 NULL};
	const char *env[] = {tmpdir, dumpdir, "VMHEAP_AGENT_PORT",
#ifdef VMHEAP_ASAN_RUNTIME
			     "LD_PRELOAD=" VMHEAP_ASAN_RUNTIME,
			     "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1",
#endif
			     NULL};
	size_t len = strlen(PRELUDE) + strlen(script) + 1;
	char *text = malloc(len);

	ck_assert_ptr_nonnull(text);
	snprintf(text, len, "%s%s", PRELUDE, script);
	snprintf(dir, dirsz, "%s", spec_mkdtemp("sites"));
	snprintf(path, sizeof(path), "%s/program.rb", dir);
	spec_write_text(path, text);
	free(text);
	/* absolute: the program runs in `dir` */
	ck_assert_ptr_nonnull(realpath(spec_build("ruby"), inc));
	ck_assert_ptr_nonnull(realpath(spec_bin("vmheap-console"), console));
	snprintf(tmpdir, sizeof(tmpdir), "VMHEAP_AGENT_TMPDIR=%s", dir);
	snprintf(dumpdir, sizeof(dumpdir), "VMHEAP_AGENT_DIR=%s", dir);
	return spec_run_stdout(argv, env, RUN_MS);
}

/* The value printed as "KEY=VALUE" on a line of `out`, or fail. */
static long long value_of(const char *out, const char *key)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "%s=", key);
	for (p = out; (p = strstr(p, pat)); p++)
		if (p == out || p[-1] == '\n' || p[-1] == ' ')
			return atoll(p + strlen(pat));
	ck_abort_msg("no %s= in the program's output:\n%s", key, out);
	return 0;
}

/* The first field of the CSV line of `csv` that contains `middle` (a
 * ",CLASS,SITE," part), or LLONG_MIN when there is none. */
static long long csv_count(const char *csv, const char *middle)
{
	const char *p = strstr(csv, middle), *line;

	if (!p)
		return LLONG_MIN;
	for (line = p; line > csv && line[-1] != '\n'; line--)
		;
	return atoll(line);
}

static char *dump_path(const char *dir, const char *name)
{
	static char buf[4][PATH_MAX + 32];
	static int k;
	char *b = buf[k++ % 4];

	snprintf(b, PATH_MAX + 32, "%s/%s", dir, name);
	return b;
}

/* ------------------------------------------------------------ two sites */

/* Items from two lines: `leak` keeps every one (line 16 of the program),
 * `churn` keeps the last 50 (line 17).  Both tracers run: vmheap's and
 * objspace's, whose per-line counts of the live Items are printed next to
 * each dump. */
static const char two_sites_program[] =
    "require 'objspace'\n"			   /* 9 */
    "class Item; end\n"				   /* 10 */
    "$keep = []; $ring = Array.new(50); $i = 0\n"  /* 11 */
    "def counts(tag)\n"				   /* 12 */
    "  ObjectSpace.each_object(Item).group_by { |o| "
    "ObjectSpace.allocation_sourceline(o) }\n"
    "    .each { |l, a| puts \"#{tag}_line#{l}=#{a.size}\" }\n"
    "end\n"
    "def leak(n); n.times { $keep << Item.new }; end\n"		      /* 16 */
    "def churn(n); n.times { $ring[($i += 1) % 50] = Item.new }; end\n" /* 17 */
    "puts agent('set config.trace.allocations true')\n"
    "ObjectSpace.trace_object_allocations_start\n"
    "churn(500)\n"
    "GC.start\n"
    "counts('a')\n"
    "agent(\"set system.memory.dump #{DIR}/a.vmheap\")\n"
    "leak(1234)\n"
    "churn(1000)\n"
    "GC.start\n"
    "counts('b')\n"
    "agent(\"set system.memory.dump #{DIR}/b.vmheap\")\n";
#define LEAK_LINE "16"
#define CHURN_LINE "17"

START_TEST(by_site_puts_the_leaking_line_on_top_and_the_other_unchanged)
{
	char dir[PATH_MAX];
	char *out = run_program(two_sites_program, dir, sizeof(dir));
	const char *a = dump_path(dir, "a.vmheap"),
		   *b = dump_path(dir, "b.vmheap");
	char *diff, *ha, *hb, *path, *first;
	const char *leak = ",Item,program.rb:" LEAK_LINE " in leak,";
	const char *churn = ",Item,program.rb:" CHURN_LINE " in churn,";

	ck_assert_msg(strncmp(out, "true\n", 5) == 0, "%s", out);
	/* objspace, the independent truth: 50 live churned Items at both
	 * dumps, 1234 leaked ones at the second */
	ck_assert_int_eq(value_of(out, "a_line" CHURN_LINE), 50);
	ck_assert_int_eq(value_of(out, "b_line" CHURN_LINE), 50);
	ck_assert_int_eq(value_of(out, "b_line" LEAK_LINE), 1234);

	/* the diff by site: the leaking line on top, exactly +1234 */
	diff = spec_tool_stdout(
	    "vmheap-diff",
	    (const char *[]){"--by", "site", "--format", "csv", a, b, NULL},
	    RUN_MS);
	first = strchr(diff, '\n');
	ck_assert_ptr_nonnull(first);
	ck_assert_msg(strncmp(first + 1, "1234,Item,program.rb:" LEAK_LINE
					 " in leak,",
			      strlen("1234,Item,program.rb:" LEAK_LINE
				     " in leak,")) == 0,
		      "%s", diff);
	/* the churning line did not grow: no row, or a row of 0 */
	ck_assert_msg(csv_count(diff, churn) == LLONG_MIN ||
			  csv_count(diff, churn) == 0,
		      "%s", diff);

	/* each dump's histogram by site agrees with objspace */
	ha = spec_tool_stdout(
	    "vmheap-histo",
	    (const char *[]){"--by", "site", "--format", "csv", a, NULL},
	    RUN_MS);
	hb = spec_tool_stdout(
	    "vmheap-histo",
	    (const char *[]){"--by", "site", "--format", "csv", b, NULL},
	    RUN_MS);
	ck_assert_msg(csv_count(ha, churn) == 50, "%s", ha);
	ck_assert_msg(csv_count(ha, leak) == LLONG_MIN, "%s", ha);
	ck_assert_msg(csv_count(hb, churn) == 50, "%s", hb);
	ck_assert_msg(csv_count(hb, leak) == 1234, "%s", hb);

	/* the text table names the site in its own column */
	free(diff);
	diff = spec_tool_stdout(
	    "vmheap-diff",
	    (const char *[]){"--by", "site", "--top", "1", a, b, NULL}, RUN_MS);
	first = strstr(diff, "\n+1234  Item  ");
	ck_assert_msg(first, "%s", diff);
	first = strchr(first + 1, '\n');
	ck_assert_msg(first && (*first = '\0', 1) &&
			  strstr(strstr(diff, "\n+1234  Item  "),
				 "  program.rb:" LEAK_LINE " in leak  "),
		      "%s", diff);

	/* vmheap-path says where the Items were made, most first */
	path = spec_tool_stdout("vmheap-path",
				(const char *[]){b, "Item", NULL}, RUN_MS);
	ck_assert_msg(strstr(path, "allocated at: 1234 at program.rb:" LEAK_LINE
				   " in leak, 50 at program.rb:" CHURN_LINE
				   " in churn\n"),
		      "%s", path);
	free(out);
	free(diff);
	free(ha);
	free(hb);
	free(path);
}
END_TEST

/* ------------------------------------------------------------ module_eval */

/* Methods defined by module_eval: 300 from a string without a file name
 * (line 11), 200 with __FILE__, __LINE__ (line 12).  First untraced
 * (dumps a, b), then traced (c, d); MRI's own count of iseqs is printed
 * at each dump. */
static const char eval_program[] =
    "require 'objspace'; module Gen; end\n" /* 9 */
    "$n = 0\n"		/* 10 */
    "def define_plain(k); k.times { Gen.module_eval(\"def p#{$n += 1}; "
    "end\") }; end\n" /* 11 */
    "def define_located(k); k.times { Gen.module_eval(\"def q#{$n += 1}; "
    "end\", __FILE__, __LINE__) }; end\n" /* 12 */
    "def step(tag)\n"
    "  GC.start\n"
    "  puts \"#{tag}_iseq=#{ObjectSpace.count_imemo_objects[:imemo_iseq]}\"\n"
    "  agent(\"set system.memory.dump #{DIR}/#{tag}.vmheap\")\n"
    "end\n"
    "step('a')\n"
    "define_plain(300); define_located(200)\n"
    "step('b')\n"
    "agent('set config.trace.allocations true')\n"
    "step('c')\n"
    "define_plain(300); define_located(200)\n"
    "step('d')\n";

START_TEST(module_eval_shows_as_iseq_growth_at_the_eval)
{
	char dir[PATH_MAX];
	char *out = run_program(eval_program, dir, sizeof(dir));
	char *plain, *traced, *classes;

	/* MRI's own count: one iseq per method defined */
	ck_assert_int_eq(value_of(out, "b_iseq") - value_of(out, "a_iseq"),
			 500);
	ck_assert_int_eq(value_of(out, "d_iseq") - value_of(out, "c_iseq"),
			 500);

	/* the class diff: <imemo:iseq>, +500, as MRI says */
	classes = spec_tool_stdout(
	    "vmheap-diff",
	    (const char *[]){"--format", "csv", dump_path(dir, "a.vmheap"),
			     dump_path(dir, "b.vmheap"), NULL},
	    RUN_MS);
	ck_assert_msg(csv_count(classes, ",<imemo:iseq>,") == 500, "%s",
		      classes);
	ck_assert_msg(!strstr(classes, ",<imemo>,"), "%s", classes);

	/* untraced: an iseq's own site; the located eval at its line, the
	 * plain one "(eval):1" */
	plain =
	    spec_tool_stdout("vmheap-diff",
			     (const char *[]){"--by", "site", "--format", "csv",
					      dump_path(dir, "a.vmheap"),
					      dump_path(dir, "b.vmheap"), NULL},
			     RUN_MS);
	ck_assert_msg(csv_count(plain, ",<imemo:iseq>,program.rb:12,") == 200,
		      "%s", plain);
	ck_assert_msg(csv_count(plain, ",<imemo:iseq>,(eval):1,") == 300,
		      "%s", plain);

	/* traced: the plain eval's iseqs at the line of the module_eval */
	traced =
	    spec_tool_stdout("vmheap-diff",
			     (const char *[]){"--by", "site", "--format", "csv",
					      dump_path(dir, "c.vmheap"),
					      dump_path(dir, "d.vmheap"), NULL},
			     RUN_MS);
	ck_assert_msg(csv_count(traced, ",<imemo:iseq>,program.rb:11 in "
					"define_plain,") == 300,
		      "%s", traced);
	ck_assert_msg(csv_count(traced, ",<imemo:iseq>,program.rb:12,") == 200,
		      "%s", traced);
	free(out);
	free(classes);
	free(plain);
	free(traced);
}
END_TEST

/* ------------------------------------------------------------ imemo */

/* An in-process dump with the GC off, between two counts by MRI. */
static const char imemo_program[] =
    "require 'objspace'\n"
    "agent('set config.dump.fork false')\n"
    "GC.start\n"
    "GC.disable\n"
    "before = ObjectSpace.count_imemo_objects\n"
    "agent(\"set system.memory.dump #{DIR}/i.vmheap\")\n"
    "after = ObjectSpace.count_imemo_objects\n"
    "(before.keys | after.keys).each { |k| puts "
    "\"#{k.to_s.sub('imemo_', '')} #{before[k].to_i} #{after[k].to_i}\" }\n";

START_TEST(imemo_classes_count_what_mri_counts_per_imemo_type)
{
	char dir[PATH_MAX];
	char *out = run_program(imemo_program, dir, sizeof(dir));
	char *h =
	    spec_tool_stdout("vmheap-histo",
			     (const char *[]){"--format", "csv",
					      dump_path(dir, "i.vmheap"), NULL},
			     RUN_MS);
	char type[64], middle[96];
	long long before, after, got;
	int types = 0;
	const char *p = out;

	for (; sscanf(p, "%63s %lld %lld", type, &before, &after) == 3;
	     types++) {
		snprintf(middle, sizeof(middle), ",<imemo:%s>,", type);
		got = csv_count(h, middle);
		ck_assert_msg(got >= before && got <= after,
			      "<imemo:%s>: the dump has %lld, MRI counted "
			      "%lld before and %lld after it\n%s",
			      type, got, before, after, h);
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	ck_assert_int_ge(types, 5); /* iseq, ment, cref, callcache, ... */
	ck_assert_msg(!strstr(h, ",<imemo>,"), "%s", h);
	free(out);
	free(h);
}
END_TEST

/* ------------------------------------------------------------ on/off */

static const char onoff_program[] =
    "puts \"was=#{agent('get config.trace.allocations')}\"\n"
    "puts agent('set config.trace.allocations true')\n"
    "keep = Array.new(20000) { Object.new }\n"
    "puts \"live=#{agent('get system.allocations.objects')}\"\n"
    "puts \"sites=#{agent('get system.allocations.sites')}\"\n"
    "puts \"bytes=#{agent('get system.allocations.bytes')[/\\((\\d+) "
    "bytes\\)/, 1]}\"\n"
    "keep = nil\n"
    "GC.start\n"
    "puts \"freed=#{agent('get system.allocations.objects')}\"\n"
    "again = Array.new(300) { Object.new }\n" /* line 18 */
    "agent(\"set system.memory.dump #{DIR}/on.vmheap\")\n"
    "puts agent('set config.trace.allocations false')\n"
    "puts \"off_live=#{agent('get system.allocations.objects')}\"\n"
    "puts \"off_sites=#{agent('get system.allocations.sites')}\"\n"
    "puts \"off_bytes=#{agent('get system.allocations.bytes')}\"\n"
    "agent(\"set system.memory.dump #{DIR}/off.vmheap\")\n"
    "puts again.size\n";

START_TEST(tracing_off_frees_every_record_and_dead_objects_leave_the_table)
{
	char dir[PATH_MAX];
	char *out = run_program(onoff_program, dir, sizeof(dir));
	char *on, *off;
	long long live = value_of(out, "live"), freed = value_of(out, "freed");

	ck_assert_msg(strstr(out, "was=false\ntrue\n"), "%s", out);
	/* 20000 Objects and the Array, and a few of the console's */
	ck_assert_msg(live >= 20001 && live < 20200, "%s", out);
	ck_assert_int_ge(value_of(out, "sites"), 1);
	/* 20000 objects in 40-byte slots: their pages' site arrays */
	ck_assert_int_ge(value_of(out, "bytes"), 20000 * 4);
	/* FREEOBJ took the dead ones out (the console calls in between
	 * make a few) */
	ck_assert_msg(freed <= live - 19900, "%s", out);
	/* false frees everything */
	ck_assert_msg(strstr(out, "false\noff_live=0\noff_sites=0\n"
				  "off_bytes=0 bytes\n"),
		      "%s", out);

	/* the traced objects' site is in the dump made while tracing, and
	 * gone from the one made after */
	on = spec_tool_stdout(
	    "vmheap-histo",
	    (const char *[]){"--by", "site", "--format", "csv",
			     dump_path(dir, "on.vmheap"), NULL},
	    RUN_MS);
	off = spec_tool_stdout(
	    "vmheap-histo",
	    (const char *[]){"--by", "site", "--format", "csv",
			     dump_path(dir, "off.vmheap"), NULL},
	    RUN_MS);
	ck_assert_msg(csv_count(on, ",Object,program.rb:18,") == 300, "%s", on);
	ck_assert_msg(!strstr(off, ",Object,program.rb:"), "%s", off);
	free(out);
	free(on);
	free(off);
}
END_TEST

/* ------------------------------------------------------------ usage */

/* Run a tool that must fail with exit status 2 and say `why` on stderr. */
static void usage_fails(const char *const *argv, const char *why)
{
	struct spec_run r;

	ck_assert(spec_run(argv, NULL, NULL, RUN_MS, &r) == 0);
	ck_assert_msg(r.status == 2 && strstr(r.err, why),
		      "%s: status %d, stderr: %s", argv[0], r.status, r.err);
	spec_run_free(&r);
}

/* ------------------------------------------------------------ compaction */

/* 5000 Items from one line, kept, between as many dead Objects; then
 * GC.compact, which moves some of the Items (the program prints how many,
 * from GC.latest_compact_info).  Every Item keeps its site. */
static const char compact_program[] =
    "class Item; end\n"					 /* 9 */
    "agent('set config.trace.allocations true')\n"		 /* 10 */
    "$junk = []; $keep = []\n"				 /* 11 */
    "5000.times { $junk << Object.new; $keep << Item.new }\n" /* 12 */
    "$junk = nil\n"
    "GC.start\n"
    "GC.compact\n"
    "puts \"moved=#{GC.latest_compact_info[:moved][:T_OBJECT]}\"\n"
    "agent(\"set system.memory.dump #{DIR}/a.vmheap\")\n";

START_TEST(gc_compact_keeps_the_sites_of_the_objects_it_moves)
{
	char dir[PATH_MAX];
	char *out = run_program(compact_program, dir, sizeof(dir));
	char *h =
	    spec_tool_stdout("vmheap-histo",
			     (const char *[]){"--by", "site", "--format", "csv",
					      dump_path(dir, "a.vmheap"), NULL},
			     RUN_MS);

	/* Items moved: the test is not passed by a compaction that moved
	 * none (a run without the fix lost exactly those) */
	long long at = csv_count(h, ",Item,program.rb:12,"),
		  none = csv_count(h, ",Item,,");
	ck_assert_msg(value_of(out, "moved") > 0, "%s", out);
	ck_assert_msg(at == 5000 && none == LLONG_MIN,
		      "Items at program.rb:12: %lld, without a site: %lld "
		      "(moved: %lld)",
		      at, none == LLONG_MIN ? 0 : none, value_of(out, "moved"));
	free(h);
	free(out);
}
END_TEST

START_TEST(by_takes_only_what_it_can_group_by)
{
	usage_fails((const char *[]){spec_bin("vmheap-histo"), "--by", "line",
				     "x.vmheap", NULL},
		    "--by takes class, kind or site, not 'line'");
	usage_fails((const char *[]){spec_bin("vmheap-histo"), "--by", "site",
				     "--retained", "x.vmheap", NULL},
		    "--kind, --by site, --retained and --native exclude");
	usage_fails((const char *[]){spec_bin("vmheap-diff"), "--by", "kind",
				     "a", "b", NULL},
		    "--by takes class or site, not 'kind'");
	usage_fails((const char *[]){spec_bin("vmheap-diff"), "--by", "site",
				     "--objects", "a", "b", NULL},
		    "--by site is a class diff");
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("alloc_sites");
	TCase *t = spec_tcase(s, "ruby", 300);

	tcase_add_test(
	    t, by_site_puts_the_leaking_line_on_top_and_the_other_unchanged);
	tcase_add_test(t, module_eval_shows_as_iseq_growth_at_the_eval);
	tcase_add_test(t, imemo_classes_count_what_mri_counts_per_imemo_type);
	tcase_add_test(
	    t, tracing_off_frees_every_record_and_dead_objects_leave_the_table);
	tcase_add_test(t, gc_compact_keeps_the_sites_of_the_objects_it_moves);
	t = spec_tcase(s, "usage", 30);
	tcase_add_test(t, by_takes_only_what_it_can_group_by);
	return s;
}
