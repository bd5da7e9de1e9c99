/*
 * pprof_test.c - --format pprof of vmheap-histo and vmheap-diff read by
 * the ecosystem's own reader, Debian's `go tool pprof`: real dumps of the
 * leaker (spec/native/leaker.c) and of real ruby leaking through Fiddle,
 * both under vmheap-run; and the encoder (report/pprof.c) alone, whose
 * samples pprof must read back exactly.  The same leaker's dumps also
 * check vmheap-report's answer, the native sites by growth at the top of
 * the page as Chromium shows it (spec/report_html_browser.js).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof_harness-internal.h"
#include "vmheap_pprof.h"

/* The leaker leaks 1000 blocks of 1234 bytes in leak_in_here(), at
 * leaker.c:33, churns 20,000 malloc/free pairs elsewhere, then frees 400
 * of the blocks in another function: pprof names leak_in_here at the top
 * with exactly those figures, for one dump and for the diffs. */
START_TEST(leaker_profiles_name_the_leaking_function)
{
	if (SPEC_SANITIZED)
		return; /* ASan's malloc comes first in an instrumented VM */
	struct spec_native v;
	char err[2048];
	snprintf(v.dir, sizeof v.dir, "%s", spec_mkdtemp("pprof-leaker"));
	const char *argv[] = {spec_bin("vmheap-run"),
			      spec_build("spec/native_leaker"), NULL};
	const char *histo[] = {spec_bin("vmheap-histo"), "--native",
			       "--format", "pprof", NULL};
	const char *diff[] = {spec_bin("vmheap-diff"), "--native",
			      "--format=pprof", NULL};
	spec_native_start(&v, v.dir, argv, NULL);
	pprof_dump(&v, "plain.vmheap"); /* before tracking: no native section */
	pprof_console(&v, "set config.native.track true");
	pprof_dump(&v, "a.vmheap");
	pprof_say(&v, "leak 1000 1234");
	pprof_say(&v, "churn 20000");
	pprof_dump(&v, "b.vmheap");
	pprof_say(&v, "free 400");
	pprof_dump(&v, "c.vmheap");
	spec_kill(v.p.pid);

	/* one dump: the leaking line first by bytes and by objects */
	const char *b[] = {"b.vmheap", NULL};
	ck_assert_int_eq(pprof_tool_to(&v, "b.pb.gz", histo, b, err, sizeof err), 0);
	pprof_gzip_magic(&v, "b.pb.gz");
	char *t = pprof_run(&v, "b.pb.gz", "-top", "-lines", "-unit=B", NULL);
	ck_assert_msg(!strncmp(pprof_top_row(t), "  1234000B ", 11) &&
			      strstr(pprof_top_row(t), "leak_in_here leaker.c:33\n") ==
				  strchr(pprof_top_row(t), 'l'),
		      "%s", t);
	ck_assert_msg(strstr(t, "Type: space") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "vmheap-histo --native") != NULL, "%s", t);
	free(t);
	t = pprof_run(&v, "b.pb.gz", "-top", "-lines", "-sample_index=objects", NULL);
	ck_assert_msg(!strncmp(pprof_top_row(t), "      1000 ", 11) &&
			      strstr(pprof_top_row(t), "leak_in_here leaker.c:33\n"),
		      "%s", t);
	free(t);
	/* by function: leak_in_here is the top entry; malloc is no frame */
	t = pprof_run(&v, "b.pb.gz", "-top", NULL);
	ck_assert_msg(strstr(pprof_top_row(t), "leak_in_here\n") != NULL, "%s", t);
	ck_assert_msg(pprof_row_of(t, " malloc") == NULL, "%s", t);
	free(t);
	/* the stack: leak_in_here the leaf, main its caller */
	t = pprof_run(&v, "b.pb.gz", "-traces", NULL);
	const char *tr = strstr(t, "   leak_in_here\n");
	ck_assert_msg(tr != NULL, "%s", t);
	ck_assert_msg(!strncmp(strchr(tr, '\n') + 1, "             main\n", 18),
		      "%s", t);
	free(t);

	/* the diff: +1,234,000 bytes at the line; churn_in_here nowhere */
	const char *ab[] = {"a.vmheap", "b.vmheap", NULL};
	ck_assert_int_eq(pprof_tool_to(&v, "ab.pb.gz", diff, ab, err, sizeof err),
			 0);
	t = pprof_run(&v, "ab.pb.gz", "-top", "-lines", "-unit=B", NULL);
	ck_assert_msg(!strncmp(pprof_top_row(t), "  1234000B ", 11) &&
			      strstr(pprof_top_row(t), "leak_in_here leaker.c:33\n"),
		      "%s", t);
	ck_assert_msg(strstr(t, "churn_in_here") == NULL, "%s", t);
	free(t);
	/* freed: -400 x 1234 */
	const char *bc[] = {"b.vmheap", "c.vmheap", NULL};
	ck_assert_int_eq(pprof_tool_to(&v, "bc.pb.gz", diff, bc, err, sizeof err),
			 0);
	t = pprof_run(&v, "bc.pb.gz", "-top", "-lines", "-unit=B", NULL);
	const char *r = pprof_row_of(t, "leak_in_here leaker.c:33\n");
	ck_assert_msg(r && !strncmp(r, "  -493600B ", 11), "%s", t);
	free(t);
	/* three dumps: the last minus the first, 600 x 1234 */
	const char *abc[] = {"a.vmheap", "b.vmheap", "c.vmheap", NULL};
	ck_assert_int_eq(
	    pprof_tool_to(&v, "abc.pb.gz", diff, abc, err, sizeof err), 0);
	t = pprof_run(&v, "abc.pb.gz", "-top", "-lines", "-unit=B", NULL);
	ck_assert_msg(!strncmp(pprof_top_row(t), "   740400B ", 11) &&
			      strstr(pprof_top_row(t), "leak_in_here leaker.c:33\n"),
		      "%s", t);
	free(t);

	/* without a native section: said, status 1, nothing on stdout */
	const char *plain[] = {"plain.vmheap", NULL};
	ck_assert_int_eq(pprof_tool_to(&v, "p.pb.gz", histo, plain, err, sizeof err),
			 1);
	ck_assert_msg(strstr(err, "plain.vmheap has no native section"), "%s",
		      err);
	const char *pb[] = {"plain.vmheap", "b.vmheap", NULL};
	ck_assert_int_eq(pprof_tool_to(&v, "p.pb.gz", diff, pb, err, sizeof err), 1);
	ck_assert_msg(strstr(err, "has no native section"), "%s", err);
}
END_TEST

/* Real ruby keeps 50,000 of 100,000 Fiddle.malloc(1024) blocks made at
 * line 8 of its script: in the profile of its dump, the leaf of that
 * stack is the C function that called the allocator (Fiddle's, not
 * ruby_xmalloc nor malloc) and its root the Ruby line. */
START_TEST(fiddle_stack_from_c_leaf_to_ruby_line)
{
	if (SPEC_SANITIZED)
		return;
	static const char script[] =
		"require 'fiddle'\n"
		"STDOUT.sync = true\n"
		"$kept = []\n"
		"puts 'ready'\n"
		"while (l = STDIN.gets)\n"
		"  w, n = l.split\n"
		"  n = n.to_i\n"
		"  if w == 'leak' then n.times { $kept << Fiddle.malloc(1024) }\n"
		"  else n.times { Fiddle.free($kept.pop) } end\n"
		"  puts 'ok'\n"
		"end\n";
	struct spec_native v;
	char err[2048], path[700], line[800];
	snprintf(v.dir, sizeof v.dir, "%s", spec_mkdtemp("pprof-fiddle"));
	snprintf(path, sizeof path, "%s/program.rb", v.dir);
	spec_write_text(path, script);
	const char *argv[] = {spec_bin("vmheap-run"), "ruby", path, NULL};
	spec_native_start(&v, v.dir, argv, NULL);
	pprof_console(&v, "set config.native.track true");
	pprof_dump(&v, "a.vmheap");
	pprof_say(&v, "leak 100000");
	pprof_say(&v, "free 50000");
	pprof_dump(&v, "b.vmheap");
	spec_kill(v.p.pid);

	const char *histo[] = {spec_bin("vmheap-histo"), "--native",
			       "--format", "pprof", NULL};
	const char *b[] = {"b.vmheap", NULL};
	ck_assert_int_eq(pprof_tool_to(&v, "b.pb.gz", histo, b, err, sizeof err), 0);
	char *t = pprof_run(&v, "b.pb.gz", "-traces", "-unit=B", NULL);
	/* the trace of 51,200,000 bytes */
	const char *tr = strstr(t, "\n 51200000B   ");
	ck_assert_msg(tr != NULL, "%.3000s", t);
	const char *leaf = tr + strlen("\n 51200000B   ");
	ck_assert_msg(strncmp(leaf, "malloc\n", 7) && strncmp(leaf, "ruby_x", 6) &&
			      strncmp(leaf, "objspace_x", 10),
		      "the leaf is the allocator:\n%.3000s", tr);
	const char *end = strstr(tr, "\n-----------+");
	ck_assert_ptr_nonnull(end);
	snprintf(line, sizeof line, "%s/program.rb:8\n", v.dir);
	ck_assert_msg(end - strlen(line) + 1 > tr &&
			      !strncmp(end - strlen(line) + 1, line,
				       strlen(line)),
		      "the root is not %s:\n%.*s", line, (int)(end - tr) % 3000, tr);
	/* MRI's own allocations are rooted at its labels ("<ruby: gc>"),
	 * written so that pprof does not shorten them to nothing */
	ck_assert_msg(strstr(t, "<unknown>") == NULL, "%.3000s", t);
	free(t);
}
END_TEST

/* Real ruby with the agent and allocation tracing keeps 3,000 Items made
 * at line 11 (each with a String made at line 8) and makes 5,000 Strings
 * it drops: in the profiles of vmheap-histo --by site and vmheap-diff
 * --by site the leaking line is among the top 5 sites by bytes, and the
 * Items at it (label class) are as many as ObjectSpace counted. */
START_TEST(sites_by_line_with_class_labels)
{
	static const char script[] =
	    "STDOUT.sync = true\n"
	    "CONSOLE, DIR = ARGV\n"
	    "def agent(cmd)\n"
	    "  out = IO.popen([CONSOLE, '-p', Process.pid.to_s, '-e', cmd],\n"
	    "                 err: [:child, :out], &:read)\n"
	    "  $?.success? or abort \"vmheap-console -e #{cmd}: #{out}\"\n"
	    "end\n"
	    "class Item; def initialize; @pad = 'x' * 100; end; end\n" /* 8 */
	    "$kept = []\n"
	    "agent('set config.trace.allocations true')\n"
	    "def leak(n); n.times { $kept << Item.new }; end\n" /* 11 */
	    "def churn(n); n.times { 'y' * 200 }; end\n"
	    "agent('set system.memory.dump a.vmheap')\n"
	    "leak(3000)\n"
	    "churn(5000)\n"
	    "agent('set system.memory.dump b.vmheap')\n"
	    "puts \"items=#{ObjectSpace.each_object(Item).count}\"\n";
	struct spec_native v;
	char err[2048], path[700], inc[700], tmpdir[700], dumpdir[700];
	snprintf(v.dir, sizeof v.dir, "%s", spec_mkdtemp("pprof-sites"));
	snprintf(path, sizeof path, "%s/program.rb", v.dir);
	spec_write_text(path, script);
	ck_assert_ptr_nonnull(realpath(spec_build("ruby"), inc));
	snprintf(tmpdir, sizeof tmpdir, "VMHEAP_AGENT_TMPDIR=%s", v.dir);
	snprintf(dumpdir, sizeof dumpdir, "VMHEAP_AGENT_DIR=%s", v.dir);
	const char *argv[] = {"ruby", "-C", v.dir, "-I", inc, "-rvmheap_agent",
			      "program.rb", spec_bin("vmheap-console"), v.dir,
			      NULL};
	const char *env[] = {tmpdir, dumpdir, "VMHEAP_AGENT_PORT",
#ifdef VMHEAP_ASAN_RUNTIME
			     "LD_PRELOAD=" VMHEAP_ASAN_RUNTIME,
			     "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1",
#endif
			     NULL};
	struct spec_run o;
	ck_assert_int_eq(spec_run(argv, env, NULL, 120000, &o), 0);
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	ck_assert_msg(strstr(o.out, "items=3000\n") != NULL, "%s", o.out);
	spec_run_free(&o);

	const char *histo[] = {spec_bin("vmheap-histo"), "--by", "site",
			       "--format", "pprof", NULL};
	const char *b[] = {"b.vmheap", NULL};
	ck_assert_int_eq(pprof_tool_to(&v, "b.pb.gz", histo, b, err, sizeof err), 0);
	pprof_gzip_magic(&v, "b.pb.gz");
	/* the line among the first five by bytes */
	char *t = pprof_run(&v, "b.pb.gz", "-top", "-lines", "-nodecount=5", NULL);
	const char *r = pprof_row_of(t, "leak program.rb:11\n");
	ck_assert_msg(r != NULL, "%s", t);
	free(t);
	/* the Items there: exactly ObjectSpace's 3000 */
	t = pprof_run(&v, "b.pb.gz", "-top", "-lines", "-sample_index=objects",
		  "-tagfocus=class=^Item$", NULL);
	ck_assert_msg(!strncmp(pprof_top_row(t), "      3000 ", 11) &&
			      strstr(pprof_top_row(t), "leak program.rb:11\n"),
		      "%s", t);
	free(t);
	t = pprof_run(&v, "b.pb.gz", "-tags", NULL);
	ck_assert_msg(strstr(t, ": Item\n") != NULL, "%.3000s", t);
	free(t);

	/* the diff: the Items at line 11, their Strings at line 8, first */
	const char *diff[] = {spec_bin("vmheap-diff"), "--by", "site",
			      "--format", "pprof", NULL};
	const char *ab[] = {"a.vmheap", "b.vmheap", NULL};
	ck_assert_int_eq(pprof_tool_to(&v, "ab.pb.gz", diff, ab, err, sizeof err),
			 0);
	t = pprof_run(&v, "ab.pb.gz", "-top", "-lines", "-sample_index=objects",
		  "-tagfocus=class=^Item$", NULL);
	ck_assert_msg(!strncmp(pprof_top_row(t), "      3000 ", 11) &&
			      strstr(pprof_top_row(t), "leak program.rb:11\n"),
		      "%s", t);
	free(t);
	t = pprof_run(&v, "ab.pb.gz", "-top", "-lines", "-sample_index=objects",
		  "-tagfocus=class=^String$", NULL);
	ck_assert_msg(!strncmp(pprof_top_row(t), "      3000 ", 11) &&
			      strstr(pprof_top_row(t), "initialize program.rb:8\n"),
		      "%s", t);
	free(t);
	/* vmheap-report of the same dumps: its first 2,000 characters of
	 * visible text name the suspect, its growth per minute, its holder
	 * (the global $kept) and its allocation line; nothing overflows
	 * sideways */
	char html[700], url[800], pa[700], pb[700];
	snprintf(html, sizeof html, "%s/r.html", v.dir);
	snprintf(pa, sizeof pa, "%s/a.vmheap", v.dir);
	snprintf(pb, sizeof pb, "%s/b.vmheap", v.dir);
	const char *rep[] = {spec_bin("vmheap-report"), "-o", html, pa, pb,
			     NULL};
	ck_assert_int_eq(spec_run(rep, NULL, NULL, 120000, &o), 0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	spec_run_free(&o);
	snprintf(url, sizeof url, "file://%s", html);
	const char *br[] = {"node", spec_src("spec/report_html_browser.js"),
			    url, "eval:document.body.innerText.slice(0, 2000)",
			    "eval:String(document.documentElement.scrollWidth <= "
			    "window.innerWidth)",
			    /* the sites by growth: rows as "class|site|count|bytes" */
			    "eval:[...document.querySelectorAll('#site-growth-table "
			    "tbody tr')].map(tr => [...tr.cells].map(c => "
			    "c.textContent).join('|')).join('~')",
			    /* the sites' icicle: the boxes' titles */
			    "eval:[...document.querySelectorAll('#sites-flame "
			    "g.frame > title')].map(t => t.textContent).join('~')",
			    NULL};
	ck_assert_int_eq(spec_run(br, NULL, NULL, 240000, &o), 0);
	ck_assert_msg(o.status == 0, "browser: %s", o.err);
	const char *l2 = strchr(o.out, '\n');
	ck_assert_ptr_nonnull(l2);
	const char *item = strstr(o.out, "Item: +3000 (+");
	ck_assert_msg(item && item < l2, "%.3000s", o.out);
	const char *eol = strstr(item, "\\n");
	ck_assert_msg(eol && eol < l2, "%.3000s", o.out);
	char line[1000];
	snprintf(line, sizeof line, "%.*s", (int)(eol - item), item);
	ck_assert_msg(strstr(l2, "\n{\"value\":\"true\"}\n") == l2,
		      "the page overflows sideways: %.200s", l2);
	ck_assert_msg(strstr(line, "/min), holding ") &&
			      strstr(line, ", held by root global_tbl $kept > "
					   "Array; ") &&
			      strstr(line, " allocated at program.rb:11 in leak "
					   "(3,000 objects)"),
		      "%s", line);
	/* the two leaking lines first, by bytes grown; every row without a
	 * site after every row with one */
	const char *sg = strstr(l2 + 1, "\n{\"value\":\"");
	ck_assert_ptr_nonnull(sg);
	sg += strlen("\n{\"value\":\"");
	ck_assert_msg(!strncmp(sg, "String|program.rb:8 in initialize|+3000|"
				   "+413 KiB~Item|program.rb:11 in leak|+3000|"
				   "+117 KiB~", 80),
		      "%.600s", sg);
	const char *nosite = strstr(sg, "|-|");
	const char *end = strchr(sg, '"');
	ck_assert_ptr_nonnull(end);
	for (const char *q = nosite; q && q < end; q = strchr(q + 1, '~')) {
		const char *next = strchr(q + 1, '~');
		if (!next || next > end)
			break;
		const char *bar = strchr(next + 1, '|');
		ck_assert_msg(bar && !strncmp(bar, "|-|", 3),
			      "a row with a site after one without:\n%.*s",
			      (int)(end - sg) % 3000, sg);
	}
	/* the icicle of the last dump's sites: line 11 with its Items */
	ck_assert_msg(strstr(sg, "~program.rb:11 in leak: ") &&
			      strstr(sg, "~Item: 117 KiB, "),
		      "%.2000s", sg);
	spec_run_free(&o);
	/* vmheap-diff --by site has the same rows, with the same counts */
	const char *dcsv[] = {spec_bin("vmheap-diff"), "--by", "site",
			      "--format", "csv", pa, pb, NULL};
	ck_assert_int_eq(spec_run(dcsv, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(strstr(o.out, "\n3000,String,program.rb:8 in initialize,") &&
			      strstr(o.out, "\n3000,Item,program.rb:11 in leak,"),
		      "%.2000s", o.out);
	spec_run_free(&o);

	/* by site only, as the text diff */
	const char *three[] = {"a.vmheap", "b.vmheap", "b.vmheap", NULL};
	ck_assert_int_eq(pprof_tool_to(&v, NULL, diff, three, err, sizeof err), 2);
	ck_assert_msg(strstr(err, "takes two dumps"), "%s", err);
}
END_TEST

/* vmheap-report of the leaker's dumps before and after its leak: the
 * page's answer lists the native sites by growth as vmheap-diff --native
 * (JSON) lists them, and the first 2,000 characters of the visible text
 * name the leaking C function with its line; the native table's sites
 * wrap (none is cut) and the page does not overflow sideways; the
 * icicle has leak_in_here's box with its bytes. */
START_TEST(report_answer_names_the_leaking_function)
{
	if (SPEC_SANITIZED)
		return;
	struct spec_native v;
	char err[2048], html[700], url[800], a[700], b[700];
	snprintf(v.dir, sizeof v.dir, "%s", spec_mkdtemp("pprof-report"));
	const char *argv[] = {spec_bin("vmheap-run"),
			      spec_build("spec/native_leaker"), NULL};
	spec_native_start(&v, v.dir, argv, NULL);
	pprof_console(&v, "set config.native.track true");
	pprof_dump(&v, "a.vmheap");
	pprof_say(&v, "leak 1000 1234");
	pprof_dump(&v, "b.vmheap");
	spec_kill(v.p.pid);
	snprintf(html, sizeof html, "%s/r.html", v.dir);
	snprintf(a, sizeof a, "%s/a.vmheap", v.dir);
	snprintf(b, sizeof b, "%s/b.vmheap", v.dir);
	const char *rep[] = {spec_bin("vmheap-report"), "-o", html, a, b, NULL};
	struct spec_run o;
	ck_assert_int_eq(spec_run(rep, NULL, NULL, 120000, &o), 0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	spec_run_free(&o);
	const char *diff[] = {spec_bin("vmheap-diff"), "--native", "--format",
			      "csv", "--top", "5", a, b, NULL};
	ck_assert_int_eq(spec_run(diff, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	/* the diff's first row: count_delta,bytes_delta,site */
	const char *row = strchr(o.out, '\n');
	ck_assert_ptr_nonnull(row);
	char first[4096];
	snprintf(first, sizeof first, "%.*s", (int)strcspn(row + 1, "\n"),
		 row + 1);
	spec_run_free(&o);
	ck_assert_msg(!strncmp(first, "1000,1234000,leak_in_here (leaker.c:33) < ",
			       42),
		      "%s", first);
	const char *site = strchr(strchr(first, ',') + 1, ',') + 1;

	snprintf(url, sizeof url, "file://%s", html);
	const char *br[] = {
	    "node", spec_src("spec/report_html_browser.js"), url,
	    "eval:document.body.innerText.slice(0, 2000)",
	    "eval:(document.querySelector('#answer li.native-site .site') || "
	    "{}).textContent",
	    /* the icicle: the boxes' titles, and whether it fits */
	    "eval:JSON.stringify([[...document.querySelectorAll('#native-"
	    "flame g.frame > title')].map(t => t.textContent), document."
	    "querySelector('#native-flame svg').getBoundingClientRect()."
	    "right <= window.innerWidth])",
	    /* no horizontal overflow; every native site shown whole */
	    "eval:JSON.stringify([document.documentElement.scrollWidth <= "
	    "window.innerWidth, document.querySelectorAll('#native-table "
	    "td.wrap').length, [...document.querySelectorAll('#native-table "
	    "td.wrap')].filter(c => c.scrollWidth > c.clientWidth).length, "
	    "[...document.querySelectorAll('body *')].filter(e => "
	    "e.getBoundingClientRect().right > window.innerWidth).slice(0, 5)"
	    ".map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + "
	    "Math.round(e.getBoundingClientRect().right))])",
	    NULL};
	ck_assert_int_eq(spec_run(br, NULL, NULL, 240000, &o), 0);
	ck_assert_msg(o.status == 0, "browser: %s", o.err);
	/* two lines of JSON ({"value": ...}), then the final line */
	ck_assert_msg(strstr(o.out, "\"exceptions\":[]") != NULL, "%s", o.out);
	const char *l2 = strchr(o.out, '\n');
	ck_assert_ptr_nonnull(l2);
	ck_assert_msg(strstr(o.out, "leak_in_here (leaker.c:33)") != NULL &&
			      strstr(o.out, "leak_in_here (leaker.c:33)") < l2,
		      "not in the first 2,000 characters:\n%.3000s", o.out);
	ck_assert_msg(strstr(o.out, "/min") < l2, "%.3000s", o.out);
	/* the page's top native site is the diff's, word for word (JSON
	 * escapes aside: the site has no quote nor backslash) */
	char want[4200];
	snprintf(want, sizeof want, "{\"value\":\"%s\"}", site);
	ck_assert_msg(strstr(l2 + 1, want) == l2 + 1, "want %s:\n%.3000s", want,
		      l2 + 1);
	/* in the icicle, leak_in_here's box holds its 1,234,000 bytes, and
	 * the graph fits the window */
	ck_assert_msg(strstr(o.out, "\\\"leak_in_here (leaker.c:33): 1.18 MiB, ") &&
			      strstr(o.out, "],true]\"}"),
		      "the icicle:\n%.3000s", strchr(l2 + 1, '\n'));
	ck_assert_msg(strstr(o.out, "{\"value\":\"[true,") != NULL &&
			      strstr(o.out, ",0,[]]\"}") != NULL,
		      "overflow or a site cut:\n%.3000s", strchr(l2 + 1, '\n'));
	spec_run_free(&o);
	(void)err;
}
END_TEST

/* A Ruby service with both leaks, under vmheap-run: Items kept in the
 * global $kept and C buffers kept by a C extension (spec/native/leaky,
 * built with -g).  vmheap-report of a dump before and one after: the
 * first 2,000 characters of the page's visible text name the top suspect
 * class, its holder ($kept), its growth per minute and the top native
 * site's C function, leaky_keep, whose 2,000 blocks the leak scan finds
 * all reachable. */
START_TEST(report_answers_a_service_with_both_leaks)
{
	if (SPEC_SANITIZED)
		return;
	static const char script[] =
	    "require 'leaky'\n"
	    "STDOUT.sync = true\n"
	    "class Item; end\n"
	    "$kept = []\n"
	    "puts 'ready'\n"
	    "while (l = STDIN.gets)\n"
	    "  w, n = l.split\n"
	    "  if w == 'items' then n.to_i.times { $kept << Item.new }\n"
	    "  else Leaky.leak(n.to_i, 3000) end\n"
	    "  puts 'ok'\n"
	    "end\n";
	struct spec_native v;
	char path[700], html[700], url[800], a[700], b[700];
	snprintf(v.dir, sizeof v.dir, "%s", spec_mkdtemp("pprof-service"));
	snprintf(path, sizeof path, "%s/program.rb", v.dir);
	spec_write_text(path, script);
	const char *argv[] = {spec_bin("vmheap-run"), "ruby", "-I",
			      spec_build("spec/leaky"), path, NULL};
	spec_native_start(&v, v.dir, argv, NULL);
	pprof_console(&v, "set config.native.track true");
	pprof_dump(&v, "a.vmheap");
	pprof_say(&v, "items 5000");
	pprof_say(&v, "leak 2000");
	pprof_dump(&v, "b.vmheap");
	spec_kill(v.p.pid);

	snprintf(html, sizeof html, "%s/r.html", v.dir);
	snprintf(a, sizeof a, "%s/a.vmheap", v.dir);
	snprintf(b, sizeof b, "%s/b.vmheap", v.dir);
	const char *rep[] = {spec_bin("vmheap-report"), "-o", html, a, b, NULL};
	struct spec_run o;
	ck_assert_int_eq(spec_run(rep, NULL, NULL, 120000, &o), 0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	spec_run_free(&o);
	snprintf(url, sizeof url, "file://%s", html);
	const char *br[] = {"node", spec_src("spec/report_html_browser.js"),
			    url, "eval:document.body.innerText.slice(0, 2000)",
			    NULL};
	ck_assert_int_eq(spec_run(br, NULL, NULL, 240000, &o), 0);
	ck_assert_msg(o.status == 0, "browser: %s", o.err);
	const char *l2 = strchr(o.out, '\n');
	ck_assert_ptr_nonnull(l2);
	static const char *const want[] = {
	    "\\nItem: +5000 (+", "/min), holding ",
	    ", held by root global_tbl $kept > Array",
	    "(+",
	    /* the kept buffers, reachable by the leak scan (held in kept[]) */
	    " in +2000 blocks, now 2,000 reachable (5.72 MiB) at leaky_keep "
	    "(leaky.c:"};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		const char *w = strstr(o.out, want[i]);
		ck_assert_msg(w && w < l2, "no \"%s\" in the first 2,000 "
			      "characters:\n%.2200s", want[i], o.out);
	}
	spec_run_free(&o);
}
END_TEST

/* Wrong uses are said, with the usage status 2 (a dump without a
 * native section: the leaker's test). */
START_TEST(pprof_needs_a_profile_mode)
{
	struct spec_native v;
	char err[2048];
	snprintf(v.dir, sizeof v.dir, "%s", spec_mkdtemp("pprof-usage"));
	const char *none[] = {"x.vmheap", NULL};
	const char *h[] = {spec_bin("vmheap-histo"), "--format", "pprof",
			   NULL};
	ck_assert_int_eq(pprof_tool_to(&v, NULL, h, none, err, sizeof err), 2);
	ck_assert_msg(strstr(err, "--format pprof needs --native or --by "
				  "site") != NULL,
		      "%s", err);
	const char *d[] = {spec_bin("vmheap-diff"), "--suspects",
			   "--format=pprof", NULL};
	const char *two[] = {"x.vmheap", "y.vmheap", NULL};
	ck_assert_int_eq(pprof_tool_to(&v, NULL, d, two, err, sizeof err), 2);
	ck_assert_msg(strstr(err, "--format pprof needs --native or --by "
				  "site") != NULL,
		      "%s", err);
}
END_TEST

/* The encoder alone: stacks that read the same add up, a sample that
 * sums to nothing is left out, names of every shape stay text; pprof
 * reads back each figure. */
START_TEST(encoder_samples_read_back_exactly)
{
	struct spec_native v;
	snprintf(v.dir, sizeof v.dir, "%s", spec_mkdtemp("pprof-encoder"));
	vmheap_pprof *p = vmheap_pprof_new();
	ck_assert_ptr_nonnull(p);
	static char long_name[70000];
	memset(long_name, 'n', sizeof long_name - 1);
	memcpy(long_name, "long_", 5);
	struct vmheap_pprof_frame a[] = {{"grows", "a.c", 10},
					 {"caller", "a.c", 99},
					 {"/app/x.rb:7", "/app/x.rb", 7}};
	struct vmheap_pprof_frame b[] = {{"shrinks", "b.c", 5},
					 {"caller", "a.c", 99}};
	struct vmheap_pprof_frame odd[] = {{"we\"ird\nname <b>", "", 0},
					   {long_name, "l.c", 1}};
	ck_assert_int_eq(vmheap_pprof_add(p, a, 3, 3, 3000), 0);
	ck_assert_int_eq(vmheap_pprof_add(p, a, 3, 4, 4000), 0); /* adds */
	ck_assert_int_eq(vmheap_pprof_add(p, b, 2, 5, 500), 0);
	ck_assert_int_eq(vmheap_pprof_add(p, b, 2, -5, -500), 0); /* gone */
	ck_assert_int_eq(vmheap_pprof_add(p, odd, 2, 1, 77), 0);
	ck_assert_int_eq(vmheap_pprof_add(p, a, 0, 1, 1), VMHEAP_EINVAL);
	ck_assert_uint_eq(vmheap_pprof_samples(p), 2);
	ck_assert_int_eq(vmheap_pprof_comment(p, "a comment"), 0);
	struct vmheap_strbuf out = VMHEAP_STRBUF_INIT;
	ck_assert_int_eq(vmheap_pprof_write(p, &out), 0);
	char path[700];
	snprintf(path, sizeof path, "%s/e.pb.gz", v.dir);
	spec_write_file(path, out.buf, out.len);
	vmheap_strbuf_release(&out);
	vmheap_pprof_free(p);

	char *t = pprof_run(&v, "e.pb.gz", "-raw", NULL);
	/* -raw lists the sample types and each sample's values */
	ck_assert_msg(strstr(t, "objects/count space/bytes[dflt]") != NULL,
		      "%s", t);
	ck_assert_msg(strstr(t, "          7       7000: 1 2 3 \n") != NULL,
		      "%s", t);
	ck_assert_msg(strstr(t, "          1         77: ") != NULL, "%s", t);
	ck_assert_msg(strstr(t, "shrinks") == NULL, "%s", t);
	ck_assert_msg(strstr(t, "grows a.c:10") != NULL &&
			      strstr(t, "caller a.c:99") != NULL &&
			      strstr(t, "/app/x.rb:7 /app/x.rb:7") != NULL,
		      "%s", t);
	ck_assert_msg(strstr(t, "long_nnnnnnnnnnnnnnnnnnnn") != NULL, "%s",
		      "the 70,000-byte name");
	free(t);
	t = pprof_run(&v, "e.pb.gz", "-comments", NULL);
	ck_assert_msg(strstr(t, "a comment") != NULL, "%s", t);
	free(t);

	ck_assert(vmheap_pprof_allocator_frame("malloc"));
	ck_assert(vmheap_pprof_allocator_frame("ruby_xmalloc2"));
	ck_assert(vmheap_pprof_allocator_frame("objspace_xmalloc0"));
	ck_assert(!vmheap_pprof_allocator_frame("mallocate_things"));
	ck_assert(!vmheap_pprof_allocator_frame("leak_in_here"));
}
END_TEST

void report_holdout_tests(Suite *s); /* report_holdout_test.c */

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("pprof");
	TCase *t = spec_tcase(s, "encoder", 120);
	tcase_add_test(t, encoder_samples_read_back_exactly);
	tcase_add_test(t, pprof_needs_a_profile_mode);
	TCase *d = spec_tcase(s, "dumps", 240);
	tcase_add_test(d, leaker_profiles_name_the_leaking_function);
	tcase_add_test(d, fiddle_stack_from_c_leaf_to_ruby_line);
	tcase_add_test(d, sites_by_line_with_class_labels);
	tcase_add_test(d, report_answer_names_the_leaking_function);
	tcase_add_test(d, report_answers_a_service_with_both_leaks);
	report_holdout_tests(s);
	return s;
}
