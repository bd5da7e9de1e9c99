/*
 * native_rates_test.c - part of the native suite (native_test.c): the
 * native timeline of vmheap-diff --native over three dumps, and the hint
 * that growth is outside the heap, on real processes.
 *
 *  - the leaker (spec/native/leaker.c, a C VM with the agent) under
 *    vmheap-run: a thread leaks 1 MiB a second by the monotonic clock, so
 *    the site's bytes_per_minute must be 60 MiB within 20%; and exact
 *    leaks between the dumps give known counts and bytes at each dump;
 *  - real ruby under vmheap-run, a thread keeping Fiddle.malloc blocks at
 *    1 MiB a second: the top site is at the leaking Ruby line, at that
 *    rate within 20%;
 *  - real ruby with the agent: a mixed leak (Strings in the heap and
 *    Fiddle.malloc outside it, both growing) gets the hint, naming the
 *    figure that triggered it, as the rule computed here from the dumps'
 *    headers says; a leak of Strings alone does not;
 *  - the console's top: the RSS (against /proc) and, while tracking, the
 *    live tracked malloc bytes (against what the leaker keeps).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/vmheap_spec.h"
#include "tools_harness-internal.h"
#include "vmheap.h"

/* vmheap-console -e CMD on the VM; it must succeed. */
static void vmp_console(struct spec_native *v, const char *cmd)
{
	char pid[32];
	struct spec_run o;

	snprintf(pid, sizeof pid, "%d", (int)v->p.pid);
	const char *argv[] = {spec_bin("vmheap-console"), "-p", pid,
			      "--tmpdir", v->dir, "--json", "-e", cmd, NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0, "%s: %s%s", cmd, o.out, o.err);
	spec_run_free(&o);
}

/* A command line to the VM; wait for its "ok". */
static void vmp_say(struct spec_native *v, const char *cmd)
{
	v->p.len = 0;
	v->p.buf[0] = '\0';
	spec_proc_write(&v->p, cmd);
	spec_proc_write(&v->p, "\n");
	ck_assert_msg(spec_proc_wait_for(&v->p, "ok\n", 120000), "%s: %s", cmd,
		      v->p.buf);
}

/* Dump the VM as dir/name; the path (ring of 4). */
static const char *vmp_dump(struct spec_native *v, const char *name)
{
	static char path[4][700];
	static int k;
	char cmd[256];

	snprintf(cmd, sizeof cmd, "set system.memory.dump %s", name);
	vmp_console(v, cmd);
	k = (k + 1) % 4;
	snprintf(path[k], sizeof path[k], "%s/%s", v->dir, name);
	return path[k];
}

/* The element of JSON array `sites` whose "site" contains `fn`. */
static const struct jval *site_named(const struct jval *sites, const char *fn)
{
	for (size_t i = 0; i < sites->n; i++)
		if (strstr(json_get(sites->items[i], "site")->str, fn))
			return sites->items[i];
	return NULL;
}

/* "leak_in_here (leaker.c:N)": the leaker's line that leaks, read from
 * its source (the realloc of its list is in leak_in_here too). */
static const char *leak_site(void)
{
	static char site[64];
	size_t len;
	char *src = spec_read_file(spec_src("spec/native/leaker.c"), &len);
	ck_assert_ptr_nonnull(src);
	char *at = strstr(src, "/* the leak */");
	ck_assert_ptr_nonnull(at);
	int line = 1;
	for (char *p = src; p < at; p++)
		line += *p == '\n';
	snprintf(site, sizeof site, "leak_in_here (leaker.c:%d)", line);
	free(src);
	return site;
}

/* The line of `out` that contains `needle` (copied into line). */
static void line_with(const char *out, const char *needle, char *line,
		      size_t size)
{
	const char *p = strstr(out, needle);

	ck_assert_msg(p != NULL, "no '%s' in:\n%s", needle, out);
	while (p > out && p[-1] != '\n')
		p--;
	snprintf(line, size, "%.*s", (int)strcspn(p, "\n"), p);
}

#define RATE (1024 * 1024) /* the steady leak, bytes a second */

/*
 * Three dumps of the leaker: the steady thread runs throughout; 100
 * blocks of 1000 bytes leak in leak_in_here() before #2, 100 more before
 * #3, then 150 are freed: that site holds 0, 100 and 50 blocks, and did
 * not grow at every step; the steady site did, at RATE.
 */
START_TEST(native_timeline_gives_each_sites_rate)
{
	if (SPEC_SANITIZED)
		return; /* ASan's malloc comes first in an instrumented VM */
	struct spec_native v;
	const char *argv[] = {spec_bin("vmheap-run"),
			      spec_build("spec/native_leaker"), NULL};
	char cmd[64];

	spec_native_start(&v, NULL, argv, NULL);
	vmp_console(&v, "set config.native.track true");
	snprintf(cmd, sizeof cmd, "steady %d", RATE);
	vmp_say(&v, cmd);
	snprintf(cmd, sizeof cmd, "waitsteady %d", RATE / 4);
	vmp_say(&v, cmd);
	const char *a = vmp_dump(&v, "a.vmheap");
	vmp_say(&v, "leak 100 1000");
	snprintf(cmd, sizeof cmd, "waitsteady %d", 2 * RATE);
	vmp_say(&v, cmd);
	const char *b = vmp_dump(&v, "b.vmheap");
	vmp_say(&v, "leak 100 1000");
	vmp_say(&v, "free 150");
	snprintf(cmd, sizeof cmd, "waitsteady %d", 4 * RATE);
	vmp_say(&v, cmd);
	const char *c = vmp_dump(&v, "c.vmheap");
	spec_kill(v.p.pid);

	struct spec_run r =
	    spec_tool("vmheap-diff", (const char *[]){"--native", "--format",
						      "json", a, b, c, NULL});
	ck_assert_msg(r.status == 0, "%d: %s", r.status, r.err);
	struct jval *j = json_parse(r.out);
	ck_assert_msg(j != NULL, "not JSON: %s", r.out);
	const struct jval *dumps = json_get(j, "dumps");
	ck_assert_uint_eq(dumps->n, 3);
	long long t0 = json_get(json_get(j, "old"), "time_ms")->inum;
	long long t2 = json_get(json_get(j, "new"), "time_ms")->inum;
	ck_assert_int_eq(json_get(dumps->items[0], "time_ms")->inum, t0);
	ck_assert_int_eq(json_get(dumps->items[2], "time_ms")->inum, t2);
	ck_assert_int_gt(t2, t0);

	/* the steady site: RATE a second, within 20%, grew at every step */
	const struct jval *sites = json_get(j, "sites");
	const struct jval *st = site_named(sites, "steady_leak_here");
	ck_assert_msg(st != NULL, "no steady_leak_here row: %s", r.out);
	double bpm = json_get(st, "bytes_per_minute")->num;
	double truth = 60.0 * RATE;
	fprintf(stderr, "rates: steady_leak_here %.0f bytes/min, truth %.0f, "
			"span %lld ms\n", bpm, truth, t2 - t0);
	ck_assert_msg(fabs(bpm - truth) <= 0.2 * truth,
		      "bytes_per_minute %.0f, truth %.0f (span %lld ms)", bpm,
		      truth, t2 - t0);
	/* the bytes at each dump: RATE x the time since the thread started,
	 * so their differences follow the dumps' time_ms */
	long long s0 = json_get(st, "bytes")->items[0]->inum;
	long long s2 = json_get(st, "bytes")->items[2]->inum;
	double want = (double)RATE * (double)(t2 - t0) / 1000.0;
	ck_assert_msg(fabs((double)(s2 - s0) - want) <= 0.2 * want,
		      "steady bytes %lld -> %lld over %lld ms", s0, s2, t2 - t0);
	ck_assert_int_eq(json_get(st, "grew_every_step")->inum, 1);
	ck_assert_int_eq(json_get(st, "bytes_delta")->inum, s2 - s0);

	/* the exact site: counts and bytes at each dump */
	const struct jval *lk = site_named(sites, leak_site());
	ck_assert_msg(lk != NULL, "no leak_in_here row: %s", r.out);
	static const long long counts[3] = {0, 100, 50};
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(json_get(lk, "counts")->items[k]->inum,
				 counts[k]);
		ck_assert_int_eq(json_get(lk, "bytes")->items[k]->inum,
				 counts[k] * 1000);
	}
	ck_assert_int_eq(json_get(lk, "count_delta")->inum, 50);
	ck_assert_int_eq(json_get(lk, "bytes_delta")->inum, 50000);
	ck_assert_int_eq(json_get(lk, "grew_every_step")->inum, 0);
	/* the steady site leaks most: first */
	ck_assert_ptr_eq(sites->items[0], st);
	json_free(j);
	spec_run_free(&r);

	/* the two-dump diff of #1 and #3: old and new describe the dumps,
	 * rows and total carry count_delta and bytes_delta */
	r = spec_tool("vmheap-diff", (const char *[]){"--native", "--format",
						      "json", a, c, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	j = json_parse(r.out);
	ck_assert_msg(j != NULL, "not JSON: %s", r.out);
	static const char *const dkeys[] = {"file", "vm", "pid", "time_ms"};
	for (int k = 0; k < 4; k++) {
		ck_assert_msg(json_get(json_get(j, "old"), dkeys[k]) &&
				  json_get(json_get(j, "new"), dkeys[k]),
			      "no old/new %s: %s", dkeys[k], r.out);
	}
	ck_assert_int_eq(json_get(json_get(j, "old"), "time_ms")->inum, t0);
	ck_assert_int_eq(json_get(json_get(j, "new"), "time_ms")->inum, t2);
	ck_assert_str_eq(json_get(json_get(j, "old"), "vm")->str, "leaker");
	sites = json_get(j, "sites");
	for (size_t i = 0; i < sites->n; i++) {
		ck_assert_ptr_nonnull(json_get(sites->items[i], "count_delta"));
		ck_assert_ptr_nonnull(json_get(sites->items[i], "bytes_delta"));
		ck_assert_ptr_null(json_get(sites->items[i], "count"));
		ck_assert_ptr_null(json_get(sites->items[i], "bytes"));
	}
	lk = site_named(sites, leak_site());
	ck_assert_ptr_nonnull(lk);
	ck_assert_int_eq(json_get(lk, "count_delta")->inum, 50);
	ck_assert_int_eq(json_get(lk, "bytes_delta")->inum, 50000);
	ck_assert_ptr_nonnull(json_get(json_get(j, "total"), "bytes_delta"));
	json_free(j);
	spec_run_free(&r);

	/* text: counts at each dump, change, per min, bytes, bytes/min */
	char line[4096];
	r = spec_tool("vmheap-diff",
		      (const char *[]){"--native", "--bytes", a, b, c, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "timeline: 3 dumps over ") == r.out, "%s",
		      r.out);
	line_with(r.out, "bytes/min", line, sizeof line);
	ck_assert_msg(strstr(line, "change") && strstr(line, "per min") &&
			  strstr(line, "site"),
		      "%s", line);
	line_with(r.out, leak_site(), line, sizeof line);
	ck_assert_msg(strstr(line, " 0  ") && strstr(line, " 100 ") &&
			  strstr(line, " +50000 ") &&
			  !strstr(line, "* leak_in_here"),
		      "%s", line);
	line_with(r.out, "steady_leak_here", line, sizeof line);
	ck_assert_msg(strstr(line, "* steady_leak_here"), "%s", line);
	ck_assert_msg(strstr(r.out, "* live bytes grew at every step ("), "%s",
		      r.out);
	spec_run_free(&r);

	/* CSV: the same figures */
	r = spec_tool("vmheap-diff", (const char *[]){"--native", "--format",
						      "csv", a, b, c, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	size_t nrows;
	char ***rows = parse_csv(r.out, &nrows);
	ck_assert_str_eq(rows[0][0], "site");
	ck_assert_str_eq(rows[0][4], "count_delta");
	ck_assert_str_eq(rows[0][10], "bytes_per_minute");
	int found = 0;
	for (size_t i = 1; i < nrows; i++) {
		if (!strstr(rows[i][0], leak_site()))
			continue;
		const char *want_row[] = {"0",	   "100", "50", "50", NULL,
					  "0",	   "100000", "50000",
					  "50000", NULL,  "false"};
		for (int k = 0; k < 11; k++)
			if (want_row[k])
				ck_assert_str_eq(rows[i][k + 1], want_row[k]);
		found = 1;
	}
	ck_assert(found);
	csv_free(rows, nrows);
	spec_run_free(&r);
}
END_TEST

/* Real ruby under vmheap-run: a thread keeps Fiddle.malloc(4096) blocks
 * at RATE bytes a second by the monotonic clock, at line LEAK_LINE;
 * "wait N" answers once it has kept N bytes. */
#define LEAK_LINE 11
static const char steady_script[] =
    "require 'fiddle'\n"
    "STDOUT.sync = true\n"
    "$kept = []\n"
    "$leaked = 0\n"
    "rate = 1024 * 1024\n"
    "Thread.new do\n"
    "  start = Process.clock_gettime(Process::CLOCK_MONOTONIC)\n"
    "  loop do\n"
    "    due = ((Process.clock_gettime(Process::CLOCK_MONOTONIC) - start) * rate).to_i\n"
    "    while $leaked + 4096 <= due\n"
    "      $kept << Fiddle.malloc(4096)\n" /* line 11 */
    "      $leaked += 4096\n"
    "    end\n"
    "    sleep 0.005\n"
    "  end\n"
    "end\n"
    "puts 'ready'\n"
    "while (l = STDIN.gets)\n"
    "  w, n = l.split\n"
    "  sleep 0.005 while w == 'wait' && $leaked < n.to_i\n"
    "  puts 'ok'\n"
    "end\n";

/*
 * The native timeline of real ruby: the site at the leaking Ruby line
 * grows at RATE (within 20%), at every step, and leads the sites.
 */
START_TEST(native_timeline_rate_in_ruby)
{
	if (SPEC_SANITIZED)
		return;
	struct spec_native v;
	char script[700], cmd[64], line[32];
	snprintf(script, sizeof script, "%s/steady.rb", spec_mkdtemp("rbsrc"));
	spec_write_text(script, steady_script);
	const char *argv[] = {spec_bin("vmheap-run"), "ruby", script, NULL};

	spec_native_start(&v, NULL, argv, NULL);
	vmp_console(&v, "set config.native.track true");
	snprintf(cmd, sizeof cmd, "wait %d", RATE / 4);
	vmp_say(&v, cmd);
	const char *a = vmp_dump(&v, "a.vmheap");
	snprintf(cmd, sizeof cmd, "wait %d", 2 * RATE);
	vmp_say(&v, cmd);
	const char *b = vmp_dump(&v, "b.vmheap");
	snprintf(cmd, sizeof cmd, "wait %d", 4 * RATE);
	vmp_say(&v, cmd);
	const char *c = vmp_dump(&v, "c.vmheap");
	spec_kill(v.p.pid);

	struct spec_run r =
	    spec_tool("vmheap-diff", (const char *[]){"--native", "--format",
						      "json", a, b, c, NULL});
	ck_assert_msg(r.status == 0, "%d: %s", r.status, r.err);
	struct jval *j = json_parse(r.out);
	ck_assert_msg(j != NULL, "not JSON: %s", r.out);
	const struct jval *sites = json_get(j, "sites");
	ck_assert_uint_gt(sites->n, 0);
	/* the first row: the leak, at its Ruby line */
	const struct jval *top = sites->items[0];
	const char *site = json_get(top, "site")->str;
	snprintf(line, sizeof line, "steady.rb:%d", LEAK_LINE);
	ck_assert_msg(strlen(site) > strlen(line) &&
			  !strcmp(site + strlen(site) - strlen(line), line),
		      "the top site does not end in %s: %s", line, r.out);
	double bpm = json_get(top, "bytes_per_minute")->num;
	double truth = 60.0 * RATE;
	long long t0 = json_get(json_get(j, "old"), "time_ms")->inum;
	long long t2 = json_get(json_get(j, "new"), "time_ms")->inum;
	fprintf(stderr, "ruby rates: %s %.0f bytes/min, truth %.0f, span "
			"%lld ms\n", line, bpm, truth, t2 - t0);
	ck_assert_msg(fabs(bpm - truth) <= 0.2 * truth,
		      "bytes_per_minute %.0f, truth %.0f", bpm, truth);
	ck_assert_int_eq(json_get(top, "grew_every_step")->inum, 1);
	json_free(j);
	spec_run_free(&r);
}
END_TEST

/* ------------------------------------------------------------ top */

/* vmheap-console -e "top 0.1 N" on the VM: its output. */
static char *vmp_top(struct spec_native *v, const char *cmd)
{
	char pid[32];
	struct spec_run o;

	snprintf(pid, sizeof pid, "%d", (int)v->p.pid);
	const char *argv[] = {spec_bin("vmheap-console"), "-p", pid,
			      "--tmpdir", v->dir, "-e", cmd, NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0, "%s: %s%s", cmd, o.out, o.err);
	char *out = strdup(o.out);
	spec_run_free(&o);
	return out;
}

/* The size after `label` in `text` ("1.18 MiB", "512 B"), in bytes. */
static double size_after(const char *text, const char *label)
{
	const char *p = strstr(text, label);
	char *end;

	ck_assert_msg(p != NULL, "no '%s' in:\n%s", label, text);
	double v = strtod(p + strlen(label), &end);
	while (*end == ' ')
		end++;
	if (!strncmp(end, "KiB", 3))
		v *= 1024;
	else if (!strncmp(end, "MiB", 3))
		v *= 1024 * 1024;
	else if (!strncmp(end, "GiB", 3))
		v *= 1024.0 * 1024 * 1024;
	else
		ck_assert_msg(*end == 'B', "no unit after '%s' in:\n%s", label,
			      text);
	return v;
}

/* The VM's RSS from /proc, as the agent reads it. */
static double proc_rss(pid_t pid)
{
	char path[64];
	size_t len;
	long long size, resident;

	snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
	char *t = spec_read_file(path, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(sscanf(t, "%lld %lld", &size, &resident), 2);
	free(t);
	return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

/*
 * top shows the RSS (against /proc's own figure) and, once tracking is
 * on, the live tracked malloc bytes: at least the 1,234,000 the leaker
 * keeps, and not much more (the agent's own few allocations).
 */
START_TEST(top_shows_rss_and_native_live_bytes)
{
	if (SPEC_SANITIZED)
		return;
	struct spec_native v;
	const char *argv[] = {spec_bin("vmheap-run"),
			      spec_build("spec/native_leaker"), NULL};

	spec_native_start(&v, NULL, argv, NULL);
	vmp_say(&v, "leak 1000 4000"); /* before tracking: RSS only */
	char *out = vmp_top(&v, "top 0.1 1");
	double rss = size_after(out, "process: RSS ");
	double truth = proc_rss(v.p.pid);
	ck_assert_msg(fabs(rss - truth) <= 0.1 * truth,
		      "top's RSS %.0f, /proc %.0f:\n%s", rss, truth, out);
	ck_assert_msg(!strstr(out, "native live"), "%s", out);
	free(out);

	vmp_console(&v, "set config.native.track true");
	vmp_say(&v, "leak 1000 1234");
	out = vmp_top(&v, "top 0.1 2");
	double live = size_after(out, "native live ");
	fprintf(stderr, "top: RSS %.0f (/proc %.0f), native live %.0f\n",
		rss, truth, live);
	/* 3 significant digits: 1234000 bytes print as 1.18 MiB */
	ck_assert_msg(live >= 1.17 * 1024 * 1024 &&
			  live <= 1234000.0 + 512 * 1024,
		      "native live %.0f:\n%s", live, out);
	ck_assert_msg(strstr(out, "(tracked malloc)") || strstr(out, "tracked malloc"),
		      "%s", out);
	free(out);
	spec_kill(v.p.pid);
}
END_TEST

/* ------------------------------------------------------------ the hint */

static const char mixed_script[] =
    "require 'fiddle'\n"
    "STDOUT.sync = true\n"
    "$strings = []\n"
    "$blocks = []\n"
    "puts 'ready'\n"
    "while (l = STDIN.gets)\n"
    "  w, n = l.split\n"
    "  n = n.to_i\n"
    "  if w == 'mixed'\n"
    "    n.times { $strings << ('m' * 2000); $blocks << Fiddle.malloc(4096) }\n"
    "  elsif w == 'strings'\n"
    "    n.times { $strings << ('s' * 2000) }\n"
    "  end\n"
    "  puts 'ok'\n"
    "end\n";

/* The heap's object bytes of a dump, as vmheap-histo's JSON totals. */
static long long heap_bytes(const char *dump)
{
	struct spec_run r = spec_tool(
	    "vmheap-histo", (const char *[]){"--format", "json", dump, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	struct jval *j = json_parse(r.out);
	ck_assert_ptr_nonnull(j);
	long long b = json_get(j, "bytes")->inum;
	json_free(j);
	spec_run_free(&r);
	return b;
}

static struct vmheap_process_memory memory_of(const char *dump)
{
	vmheap_reader *rd;
	ck_assert_int_eq(vmheap_reader_open_path(&rd, dump), 0);
	const struct vmheap_header *h = vmheap_reader_header(rd);
	ck_assert(h->has_memory);
	struct vmheap_process_memory m = h->memory;
	vmheap_reader_free(rd);
	return m;
}

/*
 * The rule, from the headers and the heap's bytes: which of RSS and
 * malloc (in use and mmapped) grew by more than 1 MiB and more than twice
 * the heap; then the diff's stderr must name exactly those.  Returns the
 * figures found: bit 0 RSS, bit 1 malloc.
 */
static int check_hint(const char *a, const char *b)
{
	struct vmheap_process_memory ma = memory_of(a), mb = memory_of(b);
	long long dheap = heap_bytes(b) - heap_bytes(a);
	long long drss = (long long)mb.rss - (long long)ma.rss;
	long long dmal = (long long)(mb.malloc_in_use + mb.malloc_mmap) -
			 (long long)(ma.malloc_in_use + ma.malloc_mmap);
	long long floor2 = 2 * (dheap > 0 ? dheap : 0);
	int rss_out = drss > 1048576 && drss > floor2;
	int mal_out = dmal > 1048576 && dmal > floor2;

	fprintf(stderr, "hint: heap %+lld, RSS %+lld, malloc %+lld: %s%s\n",
		dheap, drss, dmal, rss_out ? "RSS " : "",
		mal_out ? "malloc" : "");
	struct spec_run r = spec_tool(
	    "vmheap-diff", (const char *[]){"--no-suspects", a, b, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	const char *w = strstr(r.err, "the growth is outside the VM heap");
	const char *want = rss_out && mal_out ? "warning: RSS grew by "
			   : rss_out	      ? "warning: RSS grew by "
					      : "warning: malloc grew by ";
	if (!rss_out && !mal_out)
		ck_assert_msg(w == NULL,
			      "hint without cause (heap %+lld, RSS %+lld, "
			      "malloc %+lld):\n%s",
			      dheap, drss, dmal, r.err);
	else {
		ck_assert_msg(w != NULL && strstr(r.err, want),
			      "no hint '%s' (heap %+lld, RSS %+lld, malloc "
			      "%+lld):\n%s",
			      want, dheap, drss, dmal, r.err);
		ck_assert_msg(!!strstr(r.err, " and malloc by ") ==
				  (rss_out && mal_out),
			      "%s", r.err);
		ck_assert_ptr_nonnull(strstr(
		    r.err, "(more than 1 MiB and more than twice the heap's "
			   "growth)"));
	}
	spec_run_free(&r);
	return rss_out | mal_out << 1;
}

START_TEST(hint_fires_on_a_mixed_leak_and_names_its_figure)
{
	if (SPEC_SANITIZED)
		return; /* the agent in ruby needs ASan's runtime there */
	struct spec_native v;
	char script[700];
	snprintf(script, sizeof script, "%s/mixed.rb", spec_mkdtemp("mixsrc"));
	spec_write_text(script, mixed_script);
	const char *argv[] = {"ruby", "-I", spec_build("ruby"),
			      "-rvmheap_agent", script, NULL};

	spec_native_start(&v, NULL, argv, NULL);
	const char *a = vmp_dump(&v, "a.vmheap");
	/* 2 MB of Strings in the heap, 4 MB more of malloc outside it */
	vmp_say(&v, "mixed 1000");
	const char *b = vmp_dump(&v, "b.vmheap");
	/* the same growth again: the same hint (it must not come and go) */
	vmp_say(&v, "mixed 1000");
	const char *c = vmp_dump(&v, "c.vmheap");
	/* 8 MB of Strings alone: their buffers are malloc'd, but no more
	 * than the heap's own growth */
	vmp_say(&v, "strings 4000");
	const char *d = vmp_dump(&v, "d.vmheap");
	spec_kill(v.p.pid);

	ck_assert_int_ne(check_hint(a, b) & 2, 0); /* malloc, by design */
	ck_assert_int_ne(check_hint(b, c) & 2, 0);
	ck_assert_int_eq(check_hint(c, d) & 2, 0); /* malloc never */
}
END_TEST

void native_rates_tests(Suite *s)
{
	TCase *t = spec_tcase(s, "rates", 240);
	tcase_add_test(t, native_timeline_gives_each_sites_rate);
	tcase_add_test(t, native_timeline_rate_in_ruby);
	tcase_add_test(t, hint_fires_on_a_mixed_leak_and_names_its_figure);
	tcase_add_test(t, top_shows_rss_and_native_live_bytes);
}
