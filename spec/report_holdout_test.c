/*
 * report_holdout_test.c - issue 27's hold-out check on a service the
 * report's tests had not used: a Ruby service whose worker thread serves
 * requests, each of which leaks three ways:
 *
 *  - managed: a Billing::Invoice (with its Array and six Strings) kept by
 *    the constant Billing::RECENT (line 14; its Strings at line 7);
 *  - native: a 3,000-byte buffer a C extension mallocs and forgets
 *    (spec/native/leaky, leaky_forget: every pointer to it dropped, so
 *    the leak scan must call its blocks leaked, none reachable);
 *  - eval: a method compiled by module_eval and kept in Templates' method
 *    table (line 16; its code's objects at "(eval):1").
 *
 * Three dumps (before, after 1,500 requests, after 3,000) under
 * vmheap-run with allocation tracing, forked (so with the leak scan).
 * vmheap-report of the three, as Chromium shows it at 1400x900: the first
 * 2,000 characters of visible text name the top suspect class, its holder
 * constant, its growth per minute and the top native site's C function
 * with its blocks leaked; the answer ends on the first screen; nothing
 * passes the page's right edge or hides its content sideways; the
 * figures are the command line's (vmheap-diff --suspects, vmheap-diff
 * --native, vmheap-histo --native --leaks); the site tables put the rows
 * without a site last.  And `go tool pprof -top` of vmheap-histo
 * --native, vmheap-diff --native and vmheap-histo --by site in
 * --format pprof: leaky_forget the top native entry, the leaking lines
 * among the top 5 sites.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof_harness-internal.h"
#include "tools_harness-internal.h"

static const char
    service[] = "require 'leaky'\n"
		"STDOUT.sync = true\n"
		"module Billing\n"
		"  class Invoice\n"
		"    def initialize(n)\n"
		"      @number = n\n"
		"      @lines = Array.new(6) { |i| \"invoice #{n} line #{i} \" "
		"* 4 }\n" /* 7 */
		"    end\n"
		"  end\n"
		"  RECENT = []\n"
		"end\n"
		"module Templates; end\n"
		"def handle(n)\n"
		"  Billing::RECENT << Billing::Invoice.new(n)\n" /* 14 */
		"  Leaky.forget(1, 3000)\n"			 /* 15 */
		"  Templates.module_eval(\"def self.render_#{n}(x) = "
		"\\\"<p>\\#{x}</p>\\\"\")\n" /* 16 */
		"  ('x' * 300 + n.to_s).upcase\n"
		"end\n"
		"requests, replies = Queue.new, Queue.new\n"
		"worker = Thread.new do\n"
		"  served = 0\n"
		"  loop { requests.pop.times { handle(served += 1) }; "
		"replies << :served }\n"
		"end\n"
		"puts 'ready'\n"
		"$stdin.each_line do |l|\n"
		"  requests << Integer(l[/\\d+/])\n"
		"  replies.pop\n"
		"  puts 'ok'\n"
		"end\n"
		"worker.kill\n";

/* n with thousands separators, as the page writes counts. */
static const char *grouped(long long n, char *buf, size_t len)
{
	char digits[32];
	size_t k = 0, d = (size_t)snprintf(digits, sizeof digits, "%lld", n);
	for (size_t i = 0; i < d && k + 2 < len; i++) {
		if (i && (d - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = '\0';
	return buf;
}

/* The tool's stdout, parsed as JSON (free it). */
static struct jval *tool_json(const char *const *argv)
{
	struct spec_run o;
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 120000, &o), 0);
	ck_assert_msg(o.status == 0, "%s: %s", argv[0], o.err);
	struct jval *j = json_parse(o.out);
	ck_assert_msg(j != NULL, "%s: not JSON: %.2000s", argv[0], o.out);
	spec_run_free(&o);
	return j;
}

/* Whether every row whose site is "-" comes after every row with one
 * (sites: a JSON array of the site cells). */
static int no_site_rows_last(const struct jval *sites, size_t *with_site)
{
	int seen_none = 0;
	*with_site = 0;
	for (size_t i = 0; i < sites->n; i++) {
		int none = !strcmp(sites->items[i]->str, "-");
		if (!none && seen_none)
			return 0;
		seen_none |= none;
		*with_site += !none;
	}
	return 1;
}

START_TEST(service_with_three_leaks_answers_on_the_first_screen)
{
	if (SPEC_SANITIZED)
		return; /* ASan's malloc comes first in an instrumented VM */
	struct spec_native v;
	char path[700], html[700], url[800], a[700], c[700], err[2048];
	snprintf(v.dir, sizeof v.dir, "%s", spec_mkdtemp("holdout"));
	snprintf(path, sizeof path, "%s/service.rb", v.dir);
	spec_write_text(path, service);
	const char *argv[] = {spec_bin("vmheap-run"),	"ruby",	      "-I",
			      spec_build("spec/leaky"), "service.rb", NULL};
	spec_native_start(&v, v.dir, argv, NULL);
	pprof_console(&v, "set config.native.track true");
	pprof_console(&v, "set config.trace.allocations true");
	pprof_dump(&v, "a.vmheap");
	pprof_say(&v, "requests 1500");
	pprof_dump(&v, "b.vmheap");
	pprof_say(&v, "requests 1500");
	pprof_dump(&v, "c.vmheap");
	spec_kill(v.p.pid);
	snprintf(html, sizeof html, "%s/r.html", v.dir);
	snprintf(a, sizeof a, "%s/a.vmheap", v.dir);
	snprintf(c, sizeof c, "%s/c.vmheap", v.dir);
	char b[700];
	snprintf(b, sizeof b, "%s/b.vmheap", v.dir);

	/* the command line's figures */
	struct jval *sus =
	    tool_json((const char *[]){spec_bin("vmheap-diff"), "--suspects",
				       "--format", "json", a, c, NULL});
	const struct jval *want = json_get(sus, "suspects");
	ck_assert_msg(want && want->n > 0, "vmheap-diff found no suspect");
	const struct jval *top = want->items[0];
	ck_assert_str_eq(json_get(top, "class")->str, "Billing::Invoice");
	ck_assert_int_eq(json_get(top, "growth")->inum, 3000);
	ck_assert_msg(strstr(json_get(top, "held_by")->str,
			     "constant Billing::RECENT > Array"),
		      "%s", json_get(top, "held_by")->str);
	struct jval *nat = tool_json(
	    (const char *[]){spec_bin("vmheap-diff"), "--native", "--format",
			     "json", "--top", "5", a, c, NULL});
	const struct jval *nsites = json_get(nat, "sites");
	ck_assert_msg(nsites && nsites->n > 0, "no native site grew");
	const char *top_site = json_get(nsites->items[0], "site")->str;
	ck_assert_msg(!strncmp(top_site, "leaky_forget (leaky.c:", 22), "%s",
		      top_site);
	/* its blocks in c by the leak scan: all 3,000 forgotten, so none
	 * reachable and most leaked (in real ruby some read as possibly
	 * leaked: native/README.md, "The leak scan") */
	struct jval *leaks = tool_json(
	    (const char *[]){spec_bin("vmheap-histo"), "--native", "--leaks",
			     "--format", "json", "--top", "100000", c, NULL});
	const struct jval *lsites = json_get(leaks, "sites"), *lrow = NULL;
	for (size_t i = 0; lsites && i < lsites->n && !lrow; i++)
		if (!strcmp(json_get(lsites->items[i], "site")->str, top_site))
			lrow = lsites->items[i];
	ck_assert_msg(lrow != NULL, "no leak row for %s", top_site);
	long long leaked = json_get(lrow, "leaked_count")->inum;
	long long reachable = json_get(lrow, "reachable_count")->inum;
	long long all = leaked + reachable +
			json_get(lrow, "indirect_count")->inum +
			json_get(lrow, "possible_count")->inum;
	ck_assert_int_eq(all, 3000);
	ck_assert_int_eq(reachable, 0);
	ck_assert_msg(leaked >= 1500, "%lld of 3000 leaked", leaked);

	/* the page, as Chromium shows it at 1400x900 */
	const char *rep[] = {
	    spec_bin("vmheap-report"), "-o", html, a, b, c, NULL};
	struct spec_run o;
	ck_assert_int_eq(spec_run(rep, NULL, NULL, 120000, &o), 0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	spec_run_free(&o);
	snprintf(url, sizeof url, "file://%s", html);
	const char *br[] = {
	    "node", spec_src("spec/report_html_browser.js"), url,
	    "eval:document.body.innerText.slice(0, 2000)", "overflow:",
	    "eval:Math.round(document.getElementById('answer')"
	    ".getBoundingClientRect().bottom + window.scrollY)",
	    "eval:[...document.querySelectorAll('#answer li.suspect')].map(li "
	    "=> [li.querySelector('.cls').textContent, li.dataset.growth, "
	    "(li.querySelector('.holder') || {}).textContent || null])",
	    "eval:[...document.querySelectorAll('#answer li.native-site')]"
	    ".map(li => [li.querySelector('.site').textContent, "
	    "li.dataset.leaked, li.dataset.reachable])",
	    /* the native table: leaked and reachable cells, and the site */
	    "eval:[...document.querySelectorAll('#native-table tr')].slice(1)"
	    ".map(tr => [tr.cells[2].textContent, tr.cells[5].textContent, "
	    "tr.cells[6].textContent])",
	    /* the last dump's sites, every row kept (a click on "show all") */
	    "eval:(document.querySelector('#sites-count button.show-all') || "
	    "{click() {}}).click(), "
	    "[...document.querySelectorAll('#sites-table "
	    "tbody tr')].map(tr => tr.cells[1].textContent)",
	    "eval:[...document.querySelectorAll('#site-growth-table tbody "
	    "tr')].map(tr => tr.cells[1].textContent)",
	    NULL};
	ck_assert_int_eq(spec_run(br, NULL, NULL, 240000, &o), 0);
	ck_assert_msg(o.status == 0, "browser: %s", o.err);
	struct jval *line[9] = {0};
	size_t nl = 0;
	char *save = NULL;
	for (char *l = strtok_r(o.out, "\n", &save); l && nl < 9;
	     l = strtok_r(NULL, "\n", &save)) {
		line[nl] = json_parse(l);
		ck_assert_msg(line[nl], "not JSON: %.300s", l);
		nl++;
	}
	spec_run_free(&o);
	ck_assert_uint_eq(nl, 9);
	const struct jval *fin = line[8];
	const struct jval *vp = json_get(fin, "viewport");
	ck_assert_msg(vp && vp->n == 2 && vp->items[0]->inum == 1400 &&
			  vp->items[1]->inum == 900,
		      "not seen at 1400x900");
	ck_assert_uint_eq(json_get(fin, "exceptions")->n, 0);
	ck_assert_uint_eq(json_get(fin, "console_errors")->n, 0);

	/* the first 2,000 characters */
	const char *text = json_get(line[0], "value")->str;
	char num[32], want_line[128];
	snprintf(want_line, sizeof want_line,
		 "in +3000 blocks, now %s leaked (",
		 grouped(leaked, num, sizeof num));
	const char *nline = strstr(text, "leaky_forget (leaky.c:");
	ck_assert_msg(strstr(text, "\nBilling::Invoice: +3000 (+") &&
			  strstr(text, "/min), holding ") &&
			  strstr(text, "constant Billing::RECENT") && nline,
		      "%s", text);
	/* the leaking C function's line says its blocks are leaked */
	const char *bol = nline;
	while (bol > text && bol[-1] != '\n')
		bol--;
	char nat_line[1024];
	snprintf(nat_line, sizeof nat_line, "%.*s", (int)(nline - bol), bol);
	ck_assert_msg(strstr(nat_line, want_line), "want \"%s\" in \"%s\"",
		      want_line, nat_line);

	/* nothing passes the right edge, nothing hides content sideways */
	const struct jval *ov = json_get(line[1], "value");
	const struct jval *off = json_get(ov, "offenders");
	ck_assert_msg(json_get(ov, "count")->inum == 0, "%lld offenders: %s",
		      json_get(ov, "count")->inum,
		      off->n ? off->items[0]->str : "");
	ck_assert_int_le(json_get(ov, "scroll_width")->inum,
			 json_get(ov, "client_width")->inum);
	/* the answer is on the first screen */
	ck_assert_int_le(json_get(line[2], "value")->inum, 900);

	/* page and command line: the suspects, in order */
	const struct jval *ps = json_get(line[3], "value");
	ck_assert_uint_eq(ps->n, want->n < 5 ? want->n : 5);
	int eval_leak = 0;
	for (size_t k = 0; k < ps->n; k++) {
		const struct jval *w = want->items[k], *g = ps->items[k];
		snprintf(num, sizeof num, "%lld", json_get(w, "growth")->inum);
		ck_assert_str_eq(g->items[0]->str, json_get(w, "class")->str);
		ck_assert_str_eq(g->items[1]->str, num);
		ck_assert_str_eq(g->items[2]->str, json_get(w, "held_by")->str);
		eval_leak |= strstr(g->items[2]->str,
				    "constant Object::Templates") != NULL;
	}
	ck_assert_msg(eval_leak, "the eval leak (Templates) is no suspect");
	/* the native sites: the diff's, and the leak scan's figures */
	const struct jval *pn = json_get(line[4], "value");
	ck_assert_uint_ge(pn->n, 1);
	ck_assert_str_eq(pn->items[0]->items[0]->str, top_site);
	snprintf(num, sizeof num, "%lld", leaked);
	ck_assert_str_eq(pn->items[0]->items[1]->str, num);
	ck_assert_str_eq(pn->items[0]->items[2]->str, "0");
	const struct jval *nt = json_get(line[5], "value"), *nrow = NULL;
	for (size_t i = 0; i < nt->n && !nrow; i++)
		if (!strcmp(nt->items[i]->items[2]->str, top_site))
			nrow = nt->items[i];
	ck_assert_msg(nrow != NULL, "%s not in the native table", top_site);
	ck_assert_str_eq(nrow->items[0]->str, grouped(leaked, num, sizeof num));
	ck_assert_str_eq(nrow->items[1]->str, "0");

	/* the site tables: rows without a site last */
	size_t with_site;
	const struct jval *st = json_get(line[6], "value");
	ck_assert_msg(no_site_rows_last(st, &with_site),
		      "the last dump's sites: a row without a site before one "
		      "with a site");
	ck_assert_uint_gt(with_site, 0);
	ck_assert_uint_lt(with_site, st->n);
	const struct jval *sg = json_get(line[7], "value");
	ck_assert_msg(no_site_rows_last(sg, &with_site),
		      "the sites by growth: a row without a site first");
	int eval_site = 0;
	for (size_t i = 0; i < sg->n; i++)
		eval_site |= !strncmp(sg->items[i]->str, "(eval):1", 8);
	ck_assert_msg(eval_site, "no (eval):1 row among the sites by growth");
	for (size_t i = 0; i < nl; i++)
		json_free(line[i]);

	/* pprof: leaky_forget the top native entry, one dump and the diff */
	const char *histo_n[] = {spec_bin("vmheap-histo"), "--native",
				 "--format", "pprof", NULL};
	const char *diff_n[] = {spec_bin("vmheap-diff"), "--native", "--format",
				"pprof", NULL};
	const char *histo_s[] = {spec_bin("vmheap-histo"),
				 "--by",
				 "site",
				 "--format",
				 "pprof",
				 NULL};
	const char *cs[] = {"c.vmheap", NULL},
		   *acs[] = {"a.vmheap", "c.vmheap", NULL};
	ck_assert_int_eq(
	    pprof_tool_to(&v, "hn.pb.gz", histo_n, cs, err, sizeof err), 0);
	ck_assert_int_eq(
	    pprof_tool_to(&v, "dn.pb.gz", diff_n, acs, err, sizeof err), 0);
	ck_assert_int_eq(
	    pprof_tool_to(&v, "hs.pb.gz", histo_s, cs, err, sizeof err), 0);
	const char *profiles[] = {"hn.pb.gz", "dn.pb.gz"};
	for (size_t i = 0; i < 2; i++) {
		char *t = pprof_run(&v, profiles[i], "-top", NULL);
		const char *r = pprof_top_row(t);
		const char *eol = strchr(r, '\n');
		ck_assert_msg(eol && eol - r > 13 &&
				  !strncmp(eol - 13, " leaky_forget", 13),
			      "%s: %s", profiles[i], t);
		free(t);
	}
	/* the managed leak's Strings (line 7) and the eval leak's code
	 * (line 16) among the top 5 sites by bytes */
	char *t =
	    pprof_run(&v, "hs.pb.gz", "-top", "-lines", "-nodecount=5", NULL);
	ck_assert_msg(pprof_row_of(t, "initialize service.rb:7\n") &&
			  pprof_row_of(t, "handle service.rb:16\n"),
		      "%s", t);
	free(t);
	json_free(leaks);
	json_free(nat);
	json_free(sus);
}
END_TEST

void report_holdout_tests(Suite *s);
void report_holdout_tests(Suite *s)
{
	TCase *t = spec_tcase(s, "holdout", 600);
	tcase_add_test(t, service_with_three_leaks_answers_on_the_first_screen);
}
