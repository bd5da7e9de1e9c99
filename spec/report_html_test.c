/*
 * report_html_test.c - vmheap-report as a person sees it: the real tool
 * writes the HTML file, a real headless Chromium loads it with its
 * JavaScript (spec/report_html_browser.js drives it over the DevTools
 * protocol) and the tests read what the page shows and click what a
 * person would click:
 *
 *  - the leaking class is the first bar of the class chart;
 *  - the growth chart has one line per class in its legend, the classes
 *    that grew;
 *  - the diff table has vmheap-diff's rows, in its order, with its figures
 *    (vmheap-diff's text output is the independent truth);
 *  - the dominator tree expands on a click, down to the leak, and says how
 *    many objects it leaves out;
 *  - the class table sorts on a click and filters as one types;
 *  - class names holding HTML and JavaScript (<script>, </script>, quotes,
 *    <img onerror=...>, <!--) are shown as text and never run;
 *  - the console shows no error and no exception;
 *  - a real sample VM's dumps, and a single dump, give a full report;
 *  - a native section's sites are listed as vmheap-histo --native lists
 *    them.
 *
 * Dumps come from the real writer (tools_harness.c) or the real sample
 * VM.  Timeouts are generous (Chromium starts slowly on a loaded machine)
 * and nothing is timed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools_harness-internal.h"
#include "vmheap_agent.h"

/* ------------------------------------------------------------ dumps */

enum { CL_HASH = 1, CL_ARRAY, CL_LEAK, CL_MINOR, CL_NOISE, CL_SHRINK };

/* Dump k (0, 1, 2) of a leaking heap: a Hash under the root "globals"
 * holds an Array that holds 100 + 500 k objects of class `leak` (200
 * bytes each); a second Hash (root "stack") holds 10 + 10 k `minor`
 * objects (24 bytes); 50 Noise objects and 60 - 20 k `shrink` objects
 * are held by nothing.  Taken at `time_ms` (0: 1700000000 s + 60 k). */
static const char *leak_dump_at(const char *name, int k, const char *leak,
				const char *minor, const char *shrink,
				int64_t time_ms)
{
	const struct tclass classes[] = {
	    {CL_HASH, "Hash"}, {CL_ARRAY, "Array"}, {CL_LEAK, leak},
	    {CL_MINOR, minor}, {CL_NOISE, "Noise"}, {CL_SHRINK, shrink},
	};
	size_t nleak = 100 + 500 * (size_t)k, nminor = 10 + 10 * (size_t)k;
	size_t nshrink = 60 - 20 * (size_t)k, n = 0;
	struct tobj *objs =
	    calloc(4 + nleak + nminor + 50 + nshrink, sizeof(*objs));
	uint64_t *leaks = calloc(nleak, sizeof(*leaks));
	uint64_t *minors = calloc(nminor, sizeof(*minors));
	const struct troot roots[] = {{1, "globals", 0x1000},
				      {2, "stack", 0x3000}};

	ck_assert(objs && leaks && minors);
	for (size_t i = 0; i < nleak; i++)
		leaks[i] = 0x100000 + 16 * i;
	for (size_t i = 0; i < nminor; i++)
		minors[i] = 0x200000 + 16 * i;
	objs[n++] = (struct tobj){.id = 0x1000,
				  .cls = CL_HASH,
				  .bytes = 40,
				  .nrefs = 1,
				  .refs = {0x2000}};
	objs[n++] = (struct tobj){.id = 0x2000,
				  .cls = CL_ARRAY,
				  .bytes = 64,
				  .nrefs = nleak,
				  .many = leaks};
	objs[n++] = (struct tobj){.id = 0x3000,
				  .cls = CL_HASH,
				  .bytes = 40,
				  .nrefs = nminor,
				  .many = minors};
	for (size_t i = 0; i < nleak; i++)
		objs[n++] =
		    (struct tobj){.id = leaks[i], .cls = CL_LEAK, .bytes = 200};
	for (size_t i = 0; i < nminor; i++)
		objs[n++] = (struct tobj){
		    .id = minors[i], .cls = CL_MINOR, .bytes = 24};
	for (size_t i = 0; i < 50; i++)
		objs[n++] = (struct tobj){
		    .id = 0x300000 + 16 * i, .cls = CL_NOISE, .bytes = 16};
	for (size_t i = 0; i < nshrink; i++)
		objs[n++] = (struct tobj){
		    .id = 0x400000 + 16 * i, .cls = CL_SHRINK, .bytes = 32};
	struct tdump d = {.time = 1700000000 + 60 * k,
			  .time_ms = time_ms,
			  .classes = classes,
			  .nclasses = sizeof(classes) / sizeof(*classes),
			  .objs = objs,
			  .nobjs = n,
			  .roots = roots,
			  .nroots = 2};
	const char *path = write_dump(name, &d);
	free(objs);
	free(leaks);
	free(minors);
	return path;
}

static const char *leak_dump(const char *name, int k, const char *leak,
			     const char *minor, const char *shrink)
{
	return leak_dump_at(name, k, leak, minor, shrink, 0);
}

/* Run vmheap-report -o OUT on the dumps (NULL-terminated); fails the
 * test unless it succeeds.  Returns OUT's path. */
static const char *report(const char *out_name, const char *const *dumps)
{
	const char *args[16];
	const char *out = tmp_path(out_name);
	size_t n = 0;

	args[n++] = "-o";
	args[n++] = out;
	while (*dumps && n < 15)
		args[n++] = *dumps++;
	args[n] = NULL;
	struct spec_run r = spec_tool("vmheap-report", args);
	ck_assert_msg(r.status == 0, "vmheap-report: status %d: %s", r.status,
		      r.err);
	ck_assert_msg(strstr(r.out, "report written: "), "%s", r.out);
	spec_run_free(&r);
	return out;
}

/* ------------------------------------------------------------ browser */

/* What the browser saw: one value per step, then the final line. */
struct seen {
	struct jval *lines[32];
	size_t n;
	const struct jval *final; /* console_errors, exceptions, dialogs */
};

/* Load `html` in headless Chromium and run `steps` (NULL-terminated,
 * see report_html_browser.js).  Fails the test if the browser cannot. */
static void browse(const char *html, const char *const *steps, struct seen *s)
{
	const char *argv[40];
	char url[4200], *line, *save = NULL;
	struct spec_run r;
	size_t n = 0;

	snprintf(url, sizeof(url), "file://%s", html);
	argv[n++] = "node";
	argv[n++] = spec_src("spec/report_html_browser.js");
	argv[n++] = url;
	while (*steps && n < 39)
		argv[n++] = *steps++;
	argv[n] = NULL;
	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 240000, &r), 0);
	ck_assert_msg(r.status == 0, "browser: status %d: %s", r.status, r.err);
	for (line = strtok_r(r.out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		ck_assert_uint_lt(s->n, 32);
		s->lines[s->n] = json_parse(line);
		ck_assert_msg(s->lines[s->n], "not JSON: %s", line);
		s->n++;
	}
	ck_assert_uint_gt(s->n, 0);
	s->final = s->lines[s->n - 1];
	ck_assert_ptr_nonnull(json_get(s->final, "console_errors"));
	spec_run_free(&r);
}

/* The value of step i. */
static const struct jval *value(const struct seen *s, size_t i)
{
	ck_assert_uint_lt(i, s->n - 1);
	const struct jval *v = json_get(s->lines[i], "value");
	ck_assert_ptr_nonnull(v);
	return v;
}

static const char *value_str(const struct seen *s, size_t i)
{
	const struct jval *v = value(s, i);
	ck_assert_int_eq(v->type, J_STR);
	return v->str;
}

static long long value_int(const struct seen *s, size_t i)
{
	const struct jval *v = value(s, i);
	ck_assert_int_eq(v->type, J_NUM);
	return v->inum;
}

/* No console error, no uncaught exception, no dialog, and the page's
 * script ran to its end. */
static void assert_clean(const struct seen *s)
{
	static const char *const keys[] = {"console_errors", "exceptions",
					   "dialogs"};
	const struct jval *rendered = json_get(s->final, "rendered");

	for (size_t k = 0; k < 3; k++) {
		const struct jval *v = json_get(s->final, keys[k]);
		ck_assert_ptr_nonnull(v);
		ck_assert_msg(v->n == 0, "%s: %s", keys[k],
			      v->n && v->items[0]->type == J_STR
				  ? v->items[0]->str
				  : "?");
	}
	ck_assert_msg(rendered && rendered->type == J_BOOL && rendered->inum,
		      "the page's script did not finish");
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		json_free(s->lines[i]);
}

/* A JSON array of the texts of the elements matching `sel`. */
#define TEXTS(sel)                                                             \
	"eval:JSON.stringify([...document.querySelectorAll('" sel              \
	"')].map(e => e.textContent))"

static struct jval *texts(const struct seen *s, size_t i)
{
	struct jval *v = json_parse(value_str(s, i));
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(v->type, J_ARR);
	return v;
}

/* The first object of the dominator tree, its toggle, its first child's
 * toggle, and the labels of its grandchildren. */
#define FIRST_NODE "#tree-body > ul > li.node:first-child"
#define CLICK_FIRST "click:" FIRST_NODE " > button.toggle"
#define CLICK_FIRST_CHILD                                                      \
	"click:" FIRST_NODE " > ul > li.node:first-child > button.toggle"
#define GRANDCHILDREN                                                          \
	TEXTS(FIRST_NODE " > ul > li.node > ul > li.node > .label")

/* vmheap-report of dumps 0 and 2 of the plain leak (names Leak, Minor,
 * Shrink): TAG0.vmheap, TAG2.vmheap into TAG.html.  Returns its path. */
static const char *leak_report(const char *tag)
{
	char n0[64], n2[64], out[64];

	snprintf(n0, sizeof(n0), "%s0.vmheap", tag);
	snprintf(n2, sizeof(n2), "%s2.vmheap", tag);
	snprintf(out, sizeof(out), "%s.html", tag);
	const char *d0 = leak_dump(n0, 0, "Leak", "Minor", "Shrink");
	const char *d2 = leak_dump(n2, 2, "Leak", "Minor", "Shrink");
	return report(out, (const char *[]){d0, d2, NULL});
}

/* ------------------------------------------------------------ tests */

/* Three dumps of a leak: the leaking class is the first bar, the growth
 * chart has a line for each class that grew (and its legend names them),
 * and the diff table is vmheap-diff's, row for row. */
START_TEST(leak_is_the_first_bar_and_each_growing_class_has_a_line)
{
	const char *d0 = leak_dump("a0.vmheap", 0, "Leak", "Minor", "Shrink");
	const char *d1 = leak_dump("a1.vmheap", 1, "Leak", "Minor", "Shrink");
	const char *d2 = leak_dump("a2.vmheap", 2, "Leak", "Minor", "Shrink");
	const char *html = report("a.html", (const char *[]){d0, d1, d2, NULL});
	struct seen s;

	browse(html,
	       (const char *[]){
		   TEXTS("#class-bars .bar-name"),
		   "eval:document.querySelectorAll('#growth-chart "
		   "path.growth-line').length",
		   TEXTS("#growth-body .legend-name"),
		   "eval:JSON.stringify([...document.querySelectorAll('#diff-"
		   "table tbody tr')].map(tr => [...tr.cells].slice(0, "
		   "4).map(c => c.textContent)))",
		   "eval:document.querySelectorAll('#summary-table tr').length",
		   "eval:document.querySelector('#summary-table "
		   "tr:nth-child(2)').cells[1].textContent",
		   NULL},
	       &s);
	assert_clean(&s);
	/* the writer makes 1.0 dumps of these (no names, sites, native) */
	ck_assert_str_eq(value_str(&s, 5), "1.0");

	struct jval *bars = texts(&s, 0);
	ck_assert_uint_ge(bars->n, 3);
	ck_assert_str_eq(bars->items[0]->str, "Leak");

	/* Leak and Minor grew; Shrink shrank; Hash, Array, Noise stayed */
	ck_assert_int_eq(value_int(&s, 1), 2);
	struct jval *legend = texts(&s, 2);
	ck_assert_uint_eq(legend->n, 2);
	ck_assert_str_eq(legend->items[0]->str, "Leak");
	ck_assert_str_eq(legend->items[1]->str, "Minor");

	/* the diff: vmheap-diff's text rows, tokens for tokens */
	struct spec_run r =
	    spec_tool("vmheap-diff", (const char *[]){d0, d2, NULL});
	ck_assert_int_eq(r.status, 0);
	struct jval *rows = json_parse(value_str(&s, 3));
	ck_assert_ptr_nonnull(rows);
	ck_assert_uint_eq(rows->n, 3); /* Leak, Minor, Shrink changed */
	const char *at = r.out;
	for (size_t i = 0; i < rows->n; i++) {
		const struct jval *c = rows->items[i];
		char want[256];
		snprintf(want, sizeof(want), "%s  %s", c->items[0]->str,
			 c->items[1]->str);
		at = strstr(at, want);
		ck_assert_msg(at,
			      "row %zu '%s' not in vmheap-diff's order:\n%s", i,
			      want, r.out);
		/* the same line ends with its bytes and % cells */
		const char *eol = strchr(at, '\n');
		char line[256];
		snprintf(line, sizeof(line), "%.*s", (int)(eol - at), at);
		ck_assert_msg(strstr(line, c->items[2]->str) &&
				  strstr(line, c->items[3]->str),
			      "row %zu: page '%s %s', vmheap-diff '%s'", i,
			      c->items[2]->str, c->items[3]->str, line);
	}
	ck_assert_str_eq(rows->items[0]->items[0]->str, "+1000");
	ck_assert_int_eq(value_int(&s, 4), 4); /* header and three dumps */
	spec_run_free(&r);
	json_free(rows);
	json_free(legend);
	json_free(bars);
	seen_free(&s);
}
END_TEST

/* The dominator tree: a click on the first object (the Hash under the
 * globals root) shows the Array it holds; a click on the Array shows the
 * leaked objects, 25 of them, and a line for the 1075 left out. */
START_TEST(tree_expands_on_a_click)
{
	const char *html = leak_report("t");
	char kids[200], more[200], exp[160];
	struct seen s;

	snprintf(kids, sizeof(kids), TEXTS("%s > ul > li.node > .label"),
		 FIRST_NODE);
	snprintf(exp, sizeof(exp),
		 "eval:document.querySelector('%s > "
		 "button').getAttribute('aria-expanded')",
		 FIRST_NODE);
	snprintf(more, sizeof(more), TEXTS("%s > ul > li.node > ul > li.more"),
		 FIRST_NODE);
	browse(
	    html,
	    (const char *[]){
		TEXTS("#tree-body > ul > li.node > .label"),
		"eval:document.querySelectorAll('#tree-body li.node').length",
		kids, CLICK_FIRST, kids, exp, CLICK_FIRST_CHILD, GRANDCHILDREN,
		more, TEXTS("#tree-body > ul > li.node > .root-kind"), NULL},
	    &s);
	assert_clean(&s);

	struct jval *top = texts(&s, 0);
	ck_assert_uint_eq(top->n, 2); /* the two roots' Hashes */
	ck_assert_str_eq(top->items[0]->str, "Hash");
	ck_assert_int_eq(value_int(&s, 1), 2); /* nothing expanded yet */
	struct jval *before = texts(&s, 2);
	ck_assert_uint_eq(before->n, 0);
	struct jval *after = texts(&s, 4);
	ck_assert_uint_eq(after->n, 1);
	ck_assert_str_eq(after->items[0]->str, "Array");
	ck_assert_str_eq(value_str(&s, 5), "true");
	struct jval *leaks = texts(&s, 7);
	ck_assert_uint_eq(leaks->n, 25);
	for (size_t i = 0; i < leaks->n; i++)
		ck_assert_str_eq(leaks->items[i]->str, "Leak");
	struct jval *m = texts(&s, 8);
	ck_assert_uint_eq(m->n, 1);
	ck_assert_msg(strstr(m->items[0]->str, "1,075 more objects"), "%s",
		      m->items[0]->str);
	/* each top object names the root that holds it */
	struct jval *roots = texts(&s, 9);
	ck_assert_uint_eq(roots->n, 2);
	ck_assert_str_eq(roots->items[0]->str, "  (root globals)");
	ck_assert_str_eq(roots->items[1]->str, "  (root stack)");
	json_free(roots);
	json_free(m);
	json_free(leaks);
	json_free(after);
	json_free(before);
	json_free(top);
	seen_free(&s);
}
END_TEST

/* Class names that are HTML and JavaScript show as text, everywhere, and
 * none of them runs: no global set, no dialog, no element made. */
/*
 * Header times JavaScript's Date cannot show (past +-8.64e15 ms): the
 * page renders, without an exception, and shows the header's figures;
 * its answer names the suspect, with no growth per minute.
 */
START_TEST(times_past_javascripts_dates_render_as_figures)
{
	const char *d0 = leak_dump_at("t0.vmheap", 0, "Leak", "Minor",
				      "Shrink", INT64_MIN + 5);
	const char *d2 = leak_dump_at("t2.vmheap", 2, "Leak", "Minor",
				      "Shrink", INT64_MAX);
	const char *html = report("t.html", (const char *[]){d0, d2, NULL});
	struct seen s;

	browse(html,
	       (const char *[]){TEXTS("#summary-table td:nth-child(5)"),
				TEXTS("#class-bars .bar-name"),
				TEXTS("#answer li.suspect"), NULL},
	       &s);
	assert_clean(&s);
	struct jval *t = texts(&s, 0);
	ck_assert_uint_eq(t->n, 2);
	ck_assert_str_eq(t->items[0]->str, "-9223372036854775803 ms (not a "
					   "date JavaScript shows)");
	ck_assert_str_eq(t->items[1]->str, "9223372036854775807 ms (not a "
					   "date JavaScript shows)");
	struct jval *bars = texts(&s, 1);
	ck_assert_str_eq(bars->items[0]->str, "Leak");
	/* the answer still comes first, without a rate: the times give no
	 * span a minute can be taken of */
	struct jval *sus = texts(&s, 2);
	ck_assert_uint_ge(sus->n, 1);
	ck_assert_msg(!strncmp(sus->items[0]->str, "Leak: +1000, holding ", 21) &&
			  !strstr(sus->items[0]->str, "/min"),
		      "%s", sus->items[0]->str);
	json_free(sus);
	json_free(bars);
	json_free(t);
	seen_free(&s);
}
END_TEST

/* Sizes whose sum passes 2^64 - 1 (three objects of 2^63 bytes): the
 * page renders and says the sums are held, as the other tools do. */
START_TEST(saturated_sums_are_said_on_the_page)
{
	static const struct tclass classes[] = {{1, "Big"}};
	static const struct tobj objs[] = {
	    {0x1000, 1, 1ull << 63, 0, 0, {0}, NULL},
	    {0x2000, 1, 1ull << 63, 0, 0, {0}, NULL},
	    {0x3000, 1, 1ull << 63, 0, 0, {0}, NULL},
	};
	struct tdump d = {.time = 1700000000,
			  .classes = classes,
			  .nclasses = 1,
			  .objs = objs,
			  .nobjs = 3};
	const char *dump = write_dump("big.vmheap", &d);
	const char *html = report("big.html", (const char *[]){dump, NULL});
	struct seen s;

	browse(html,
	       (const char *[]){"eval:document.getElementById('saturated') ? "
				"document.getElementById('saturated')"
				".textContent : 'none'",
				NULL},
	       &s);
	assert_clean(&s);
	ck_assert_msg(strstr(value_str(&s, 0), "warning: byte sums passed "
					       "2^64 - 1 and are held at "
					       "18446744073709551615"),
		      "%s", value_str(&s, 0));
	seen_free(&s);
}
END_TEST

START_TEST(hostile_class_names_are_text_and_never_run)
{
	const char *leak = "</script><script>window.__pwned=1;alert(1)"
			   "</script><img src=x onerror=\"window.__pwned=2\">";
	const char *minor = "\"quoted' & <!-- <b>bold</b> &lt;";
	const char *shrink = "<script>window.__pwned=3</script>";
	const char *d0 = leak_dump("x0.vmheap", 0, leak, minor, shrink);
	const char *d2 = leak_dump("x2.vmheap", 2, leak, minor, shrink);
	const char *html = report("x.html", (const char *[]){d0, d2, NULL});
	struct seen s;
	size_t len;
	char *raw = slurp(html, &len);

	/* the file: our two script elements, no other tag from the names */
	ck_assert_int_eq(spec_count(raw, "<script"), 2);
	ck_assert_int_eq(spec_count(raw, "</script>"), 2);
	ck_assert_int_eq(spec_count(raw, "<img"), 0);
	ck_assert_int_eq(spec_count(raw, "<!-- <b>"), 0);
	free(raw);

	browse(html,
	       (const char *[]){
		   TEXTS("#class-bars .bar-name"),
		   TEXTS("#class-table td.name"),
		   TEXTS("#growth-body .legend-name"),
		   TEXTS("#diff-table td.name"), TEXTS(".path-class-name"),
		   CLICK_FIRST, CLICK_FIRST_CHILD, GRANDCHILDREN,
		   "eval:typeof window.__pwned",
		   "eval:document.querySelectorAll('img, b').length",
		   "eval:document.scripts.length", "click:#class-filter",
		   TEXTS("#answer li.suspect .cls"), NULL},
	       &s);
	assert_clean(&s);

	/* a bar's name is cut after 47 characters, with an ellipsis */
	struct jval *bars = texts(&s, 0);
	char cut[64];
	snprintf(cut, sizeof(cut), "%.47s\u2026", leak);
	ck_assert_str_eq(bars->items[0]->str, cut);
	for (size_t i = 1; i <= 3; i++) {
		struct jval *t = texts(&s, i);
		int has[3] = {0};
		for (size_t k = 0; k < t->n; k++) {
			has[0] |= !strcmp(t->items[k]->str, leak);
			has[1] |= !strcmp(t->items[k]->str, minor);
			has[2] |= !strcmp(t->items[k]->str, shrink);
		}
		ck_assert_msg(has[0] && has[1] && (i == 2 || has[2]),
			      "step %zu shows the names as text: %d %d %d", i,
			      has[0], has[1], has[2]);
		json_free(t);
	}
	struct jval *paths = texts(&s, 4);
	ck_assert_uint_ge(paths->n, 1);
	ck_assert_str_eq(paths->items[0]->str, leak);
	struct jval *kids = texts(&s, 7);
	ck_assert_uint_eq(kids->n, 25);
	ck_assert_str_eq(kids->items[0]->str, leak);
	ck_assert_str_eq(value_str(&s, 8), "undefined");
	ck_assert_int_eq(value_int(&s, 9), 0);
	ck_assert_int_eq(value_int(&s, 10), 2);
	/* the leak suspect at the top of the page: the name, as text */
	struct jval *sus = texts(&s, 12);
	ck_assert_uint_ge(sus->n, 1);
	ck_assert_str_eq(sus->items[0]->str, leak);
	json_free(sus);
	json_free(kids);
	json_free(paths);
	json_free(bars);
	seen_free(&s);
}
END_TEST

/* The class table sorts on a click on a column's title and filters as
 * one types. */
START_TEST(class_table_sorts_on_a_click_and_filters_as_you_type)
{
	const char *html = leak_report("s");
	struct seen s;

	browse(html,
	       (const char *[]){"click:#class-table th[data-col='0']",
				TEXTS("#class-table td.name"),
				"click:#class-table th[data-col='1']",
				TEXTS("#class-table td.name"),
				"type:#class-filter=iN",
				TEXTS("#class-table td.name"),
				"eval:document.getElementById('class-count')."
				"textContent",
				NULL},
	       &s);
	assert_clean(&s);
	static const char *const by_name[] = {"Array", "Hash",	"Leak",
					      "Minor", "Noise", "Shrink"};
	struct jval *names = texts(&s, 1);
	ck_assert_uint_eq(names->n, 6);
	for (size_t i = 0; i < 6; i++)
		ck_assert_str_eq(names->items[i]->str, by_name[i]);
	json_free(names);
	/* most objects first: 1100 Leak, 50 Noise, 30 Minor, 20 Shrink */
	names = texts(&s, 3);
	ck_assert_str_eq(names->items[0]->str, "Leak");
	ck_assert_str_eq(names->items[1]->str, "Noise");
	ck_assert_str_eq(names->items[2]->str, "Minor");
	json_free(names);
	/* "iN" matches Minor and Shrink, in the count order, any case */
	names = texts(&s, 5);
	ck_assert_uint_eq(names->n, 2);
	ck_assert_str_eq(names->items[0]->str, "Minor");
	ck_assert_str_eq(names->items[1]->str, "Shrink");
	ck_assert_msg(strstr(value_str(&s, 6), "2 of 6 classes shown"), "%s",
		      value_str(&s, 6));
	json_free(names);
	seen_free(&s);
}
END_TEST

/* Dump the sample VM into `dir`/`name` through its agent. */
static void vm_dump(const struct spec_vm *vm, const char *path)
{
	vmheap_client *c = spec_connect(vm, 30000);
	struct spec_reply r;

	ck_assert_ptr_nonnull(c);
	vmheap_client_set_timeout(c, 120000);
	ck_assert_int_eq(
	    spec_client_call_str(c, "set", "system.memory.dump", path, &r), 0);
	ck_assert_msg(r.ok, "dump %s failed", path);
	spec_reply_release(&r);
	vmheap_client_close(c);
}

/* The real sample VM leaking Sessions: two dumps a second apart give a
 * report whose first bar and first diff row are Session, whose summary
 * shows the VM's RSS, that fits 1400 px, and one dump alone gives a
 * report without growth and diff, with the rest; no console error in
 * either. */
START_TEST(sample_vm_report_shows_the_leak_and_one_dump_works_alone)
{
	const char *dir = spec_mkdtemp("report-vm");
	struct spec_vm vm;
	struct spec_vm_opts vo = {
	    .args = (const char *const[]){"--leak", "Session:50", NULL}};
	char h1[512], h2[512];
	struct seen s;

	snprintf(h1, sizeof(h1), "%s/h1.vmheap", dir);
	snprintf(h2, sizeof(h2), "%s/h2.vmheap", dir);
	spec_vm_start(&vm, dir, dir, &vo);
	/* 2500 Sessions first: the class bars of h1 alone lead with them
	 * (a dump taken as the VM starts holds more Objects) */
	spec_vm_wait_ticks(&vm, 50, 30000);
	vm_dump(&vm, h1);
	spec_vm_wait_ticks(&vm, 50, 30000); /* 2500 more Sessions */
	vm_dump(&vm, h2);
	spec_vm_stop(&vm);

	const char *two = report("vm2.html", (const char *[]){h1, h2, NULL});
	browse(two,
	       (const char *[]){
		   TEXTS("#class-bars .bar-name"), TEXTS("#diff-table td.name"),
		   "eval:document.querySelector('#summary-table "
		   "tr:nth-child(2)').cells[8].textContent",
		   "eval:document.getElementById('tree').hidden",
		   TEXTS(".path-class-name"), TEXTS(".path .root-text"),
		   TEXTS(".path .holder"), TEXTS("#tree-body .root-kind"),
		   "overflow:", NULL},
	       &s);
	assert_clean(&s);
	/* at 1400 px nothing passes the page's right edge */
	const struct jval *ov = value(&s, 8);
	ck_assert_msg(json_get(ov, "count")->inum == 0, "overflow: %s",
		      json_get(ov, "offenders")->items[0]->str);
	/* the sample's dumps name roots and references (format 1.1): its
	 * leak hangs in the Array at :leaks of the Hash of $globals */
	struct jval *pc = texts(&s, 4), *pr = texts(&s, 5), *ph = texts(&s, 6),
		    *tr = texts(&s, 7);
	ck_assert_uint_ge(pc->n, 1);
	ck_assert_str_eq(pc->items[0]->str, "Session");
	ck_assert_uint_ge(pr->n, 1);
	ck_assert_str_eq(pr->items[0]->str, "root globals $globals");
	ck_assert_uint_ge(ph->n, 2);
	ck_assert_str_eq(ph->items[0]->str, "  \u2190 Hash[:leaks]");
	ck_assert_msg(!strncmp(ph->items[1]->str, "  \u2190 Array[", 10), "%s",
		      ph->items[1]->str);
	ck_assert_uint_ge(tr->n, 1);
	ck_assert_str_eq(tr->items[0]->str, "  (root globals $globals)");
	json_free(tr);
	json_free(ph);
	json_free(pr);
	json_free(pc);
	struct jval *bars = texts(&s, 0);
	ck_assert_str_eq(bars->items[0]->str, "Session");
	struct jval *diff = texts(&s, 1);
	ck_assert_str_eq(diff->items[0]->str, "Session");
	ck_assert_msg(strstr(value_str(&s, 2), "iB"), "RSS: %s",
		      value_str(&s, 2)); /* the header's RSS, in units */
	ck_assert_int_eq(value(&s, 3)->type, J_BOOL);
	ck_assert_int_eq(value(&s, 3)->inum, 0);
	json_free(diff);
	json_free(bars);
	seen_free(&s);

	const char *one = report("vm1.html", (const char *[]){h1, NULL});
	browse(one,
	       (const char *[]){
		   "eval:document.getElementById('growth').hidden",
		   "eval:document.getElementById('diff').hidden",
		   "eval:document.querySelectorAll('#class-table "
		   "tbody tr').length",
		   TEXTS("#class-bars .bar-name"),
		   "eval:document.querySelectorAll('#tree-body li.node')."
		   "length > 0",
		   NULL},
	       &s);
	assert_clean(&s);
	ck_assert_int_eq(value(&s, 0)->inum, 1);
	ck_assert_int_eq(value(&s, 1)->inum, 1);
	/* every class of the dump, as vmheap-histo counts them (the
	 * sample's mutator makes their number vary from dump to dump) */
	struct spec_run hr =
	    spec_tool("vmheap-histo", (const char *[]){h1, NULL});
	const char *tot = strstr(hr.out, "total (");
	ck_assert_msg(tot, "%s", hr.out);
	ck_assert_int_eq(value_int(&s, 2), atoi(tot + 7));
	spec_run_free(&hr);
	bars = texts(&s, 3);
	ck_assert_str_eq(bars->items[0]->str, "Session");
	ck_assert_int_eq(value(&s, 4)->inum, 1);
	json_free(bars);
	seen_free(&s);
}
END_TEST

/* A writer on a new file `path` for a 1.1 dump of the sample VM with one
 * kind, with a native section or site records as asked; *fd to close
 * after vmheap_writer_free. */
static vmheap_writer *open_writer(const char *path, int *fd, int native,
				  int sites)
{
	static const char *const kinds[] = {"object"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;

	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(*fd, 0);
	opt.vm_name = "sample";
	opt.kind_names = kinds;
	opt.kind_count = 1;
	opt.native = native;
	opt.sites = sites;
	ck_assert_int_eq(vmheap_writer_open(&w, *fd, &opt), 0);
	return w;
}

/* A dump with a native section (written here with the real writer):
 * the page lists its sites in vmheap-histo --native's order with its
 * figures, and a hostile module path shows as text. */
START_TEST(native_sites_show_as_vmheap_histo_lists_them)
{
	static const char module[] = "/nowhere/<b>lib</b><img src=x "
				     "onerror=\"window.__pwned=4\">.so";
	const char *path = tmp_path("n.vmheap");
	const char *html = tmp_path("n.html");
	struct vmheap_dump_module mod = {
	    .path = module, .path_len = strlen(module), .base = 0x7f0000000000};
	struct vmheap_dump_frame frames[3][2] = {{{0, 0x1100}, {0, 0x2200}},
						 {{0, 0x3300}, {0, 0x2200}},
						 {{0, 0x4400}, {0, 0x2200}}};
	struct vmheap_dump_stack sites[3] = {{.live_bytes = 4096,
					      .live_count = 4,
					      .allocs = 9,
					      .frees = 5,
					      .frames = frames[0],
					      .depth = 2},
					     {.live_bytes = 1 << 20,
					      .live_count = 16,
					      .allocs = 16,
					      .frames = frames[1],
					      .depth = 2},
					     {.live_bytes = 64,
					      .live_count = 1,
					      .allocs = 1,
					      .frames = frames[2],
					      .depth = 2}};
	int fd;
	vmheap_writer *w = open_writer(path, &fd, 1, 0);
	struct seen s;

	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Blob", 4, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, 2, "globals", 7), 0);
	ck_assert_int_eq(vmheap_writer_add_object(w, 0x1000, 1, 48, 0, NULL, 0),
			 0);
	ck_assert_int_eq(vmheap_writer_add_root(w, 2, 0x1000), 0);
	ck_assert_int_eq(vmheap_writer_add_native(w, &mod, 1, sites, 3), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	close(fd);

	report("n.html", (const char *[]){path, NULL});
	browse(html,
	       (const char *[]){
		   "eval:JSON.stringify([...document.querySelectorAll('#native-"
		   "table tr')].slice(1).map(tr => [...tr.cells].map(c => "
		   "c.textContent)))",
		   "eval:document.getElementById('native').hidden",
		   "eval:typeof window.__pwned + ' ' + "
		   "document.querySelectorAll('img, b').length",
		   "eval:document.querySelector('#summary-table "
		   "tr:nth-child(2)').cells[1].textContent",
		   NULL},
	       &s);
	assert_clean(&s);
	ck_assert_str_eq(value_str(&s, 3), "1.1"); /* a native section */
	ck_assert_int_eq(value(&s, 1)->inum, 0);
	ck_assert_str_eq(value_str(&s, 2), "undefined 0");

	/* vmheap-histo --native --format csv: count,bytes,site per row */
	struct spec_run r =
	    spec_tool("vmheap-histo", (const char *[]){"--native", "--format",
						       "csv", path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	size_t nrows;
	char ***csv = parse_csv(r.out, &nrows);
	struct jval *rows = json_parse(value_str(&s, 0));
	ck_assert_ptr_nonnull(rows);
	ck_assert_uint_eq(nrows, 4); /* header and three sites */
	ck_assert_uint_eq(rows->n, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct jval *row = rows->items[i];
		char count[32];
		snprintf(count, sizeof(count), "%s", csv[i + 1][0]);
		ck_assert_str_eq(row->items[0]->str, count);
		ck_assert_str_eq(row->items[2]->str, csv[i + 1][2]);
		ck_assert_msg(strstr(row->items[2]->str, "<img src=x"),
			      "the module path as text: %s",
			      row->items[2]->str);
	}
	ck_assert_str_eq(rows->items[0]->items[1]->str, "1.00 MiB");
	csv_free(csv, nrows);
	json_free(rows);
	spec_run_free(&r);
	seen_free(&s);
}
END_TEST

/* A dump with allocation sites (format 1.1, written here): the page
 * lists class and site pairs with vmheap-histo --by site's figures, most
 * bytes first but the row without a site last (its object, made before
 * tracing, holds the most: vmheap-histo lists it first), and filters them
 * by site. */
START_TEST(allocation_sites_show_by_class_and_site)
{
	const char *path = tmp_path("st.vmheap");
	const char *html = tmp_path("st.html");
	int fd;
	vmheap_writer *w = open_writer(path, &fd, 0, 1);
	struct seen s;

	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Leak", 4, 0, 0), 0);
	ck_assert_int_eq(
	    vmheap_writer_add_site(w, 1, "app.rb", 6, 12, "handle", 6), 0);
	ck_assert_int_eq(
	    vmheap_writer_add_site(w, 2, "<script>x.rb", 12, 3, "", 0), 0);
	for (uint64_t i = 0; i < 30; i++)
		ck_assert_int_eq(vmheap_writer_add_object_named(
				     w, 0x1000 + 16 * i, 1, 40, 0, NULL, NULL,
				     0, i < 20 ? 1 : 2),
				 0);
	ck_assert_int_eq(vmheap_writer_add_object(w, 0x9000, 1, 4000, 0, NULL, 0),
			 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	close(fd);

	report("st.html", (const char *[]){path, NULL});
	browse(html,
	       (const char *[]){
		   "eval:JSON.stringify([...document.querySelectorAll('#sites-"
		   "table tbody tr')].map(tr => [...tr.cells].map(c => "
		   "c.textContent)))",
		   "type:#sites-filter=x.rb", TEXTS("#sites-table tbody tr"),
		   NULL},
	       &s);
	assert_clean(&s);
	struct jval *rows = json_parse(value_str(&s, 0));
	ck_assert_ptr_nonnull(rows);
	ck_assert_uint_eq(rows->n, 3);
	/* vmheap-histo --by site --sort bytes --format csv:
	 * count,class,site,bytes */
	struct spec_run r = spec_tool(
	    "vmheap-histo", (const char *[]){"--by", "site", "--sort", "bytes",
					     "--format", "csv", path, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	size_t nrows;
	char ***csv = parse_csv(r.out, &nrows);
	ck_assert_uint_eq(nrows, 4);
	ck_assert_str_eq(csv[1][2], ""); /* histo: the row without a site */
	for (size_t i = 0; i < 3; i++) {
		const struct jval *row = rows->items[i];
		size_t k = i < 2 ? i + 2 : 1; /* the page: it comes last */
		ck_assert_str_eq(row->items[0]->str, csv[k][1]);
		ck_assert_str_eq(row->items[2]->str, csv[k][0]);
	}
	ck_assert_str_eq(rows->items[0]->items[1]->str, "app.rb:12 in handle");
	ck_assert_str_eq(rows->items[1]->items[1]->str, "<script>x.rb:3");
	ck_assert_str_eq(rows->items[2]->items[1]->str, "-");
	struct jval *left = texts(&s, 2); /* the rows the filter leaves */
	ck_assert_uint_eq(left->n, 1);
	ck_assert_msg(strstr(left->items[0]->str, "<script>x.rb:3"), "%s",
		      left->items[0]->str);
	json_free(left);
	csv_free(csv, nrows);
	json_free(rows);
	spec_run_free(&r);
	seen_free(&s);
}
END_TEST

/* A 1.1 dump (k = 0 or 2) whose every name is 64 KiB and hostile: the
 * class of the 100 + 500 k leaking objects (held by a Short under the
 * root "globals"), the file of their allocation site, and the module
 * path and Ruby file of the native site that grows, with a leak scan. */
static const char *long_names_dump(const char *name, int k, const char *big)
{
	const char *path = tmp_path(name);
	size_t n = 100 + 500 * (size_t)k, len = strlen(big);
	uint64_t *refs = calloc(n, sizeof(*refs));
	struct vmheap_dump_module mod = {
	    .path = big, .path_len = len, .base = 0x7f0000000000};
	struct vmheap_dump_frame frames[2] = {{0, 0x1100}, {0, 0x2200}};
	struct vmheap_dump_stack site = {.live_bytes = 1000 * n,
					 .live_count = n,
					 .allocs = n,
					 .frames = frames,
					 .depth = 2,
					 .vm_file = big,
					 .vm_file_len = len,
					 .vm_line = 7};
	struct vmheap_dump_leaks lk = {.leaked_count = n,
				       .leaked_bytes = 1000 * n};
	struct vmheap_dump_leak_scan scan = {.stacks = &lk, .blocks = n};
	int fd;
	vmheap_writer *w = open_writer(path, &fd, 1, 1);

	ck_assert_ptr_nonnull(refs);
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, big, len, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 2, "Short", 5, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, 9, "globals", 7), 0);
	ck_assert_int_eq(vmheap_writer_add_site(w, 1, big, len, 3, "m", 1), 0);
	for (size_t i = 0; i < n; i++) {
		refs[i] = 0x100000 + 16 * i;
		ck_assert_int_eq(vmheap_writer_add_object_named(
				     w, refs[i], 1, 100, 0, NULL, NULL, 0, 1),
				 0);
	}
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x1000, 2, 40, 0,
							refs, NULL, n, 0),
			 0);
	ck_assert_int_eq(vmheap_writer_add_root(w, 9, 0x1000), 0);
	ck_assert_int_eq(
	    vmheap_writer_add_native_leaks(w, &mod, 1, &site, 1, &scan), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	close(fd);
	free(refs);
	return path;
}

/* 64 KiB names (HTML in them) everywhere: every table cuts them with an
 * ellipsis in a cell no wider than 36em, the lines of their own (the
 * answer, the legend, the tree, the paths, a native site's frames) cut
 * them at 200 characters and keep them whole in a title, nothing passes
 * the page's right edge, and none of them runs. */
START_TEST(names_of_64_kib_are_cut_with_an_ellipsis)
{
	static char big[65537];
	static const char lead[] = "<script>window.__pwned=9</script><b>";
	memset(big, 'N', sizeof big - 1);
	memcpy(big, lead, sizeof lead - 1);
	const char *d0 = long_names_dump("l0.vmheap", 0, big);
	const char *d2 = long_names_dump("l2.vmheap", 2, big);
	const char *html = report("l.html", (const char *[]){d0, d2, NULL});
	struct seen s;

	browse(html,
	       (const char *[]){
		   /* per table: [id, cells of 1,000+ characters, of them cut
		    * with an ellipsis in at most 36em] */
		   "eval:JSON.stringify(['class-table', 'diff-table', "
		   "'sites-table', 'site-growth-table'].map(id => { const c = "
		   "[...document.querySelectorAll('#' + id + ' td.name')]"
		   ".filter(td => td.textContent.length >= 1000); return [id, "
		   "c.length, c.filter(td => getComputedStyle(td).textOverflow "
		   "=== 'ellipsis' && td.scrollWidth > td.clientWidth && "
		   "td.getBoundingClientRect().width <= 36 * 14 + 20).length]; "
		   "}))",
		   CLICK_FIRST, /* the Short: its children, the long class */
		   /* the lines of their own: [text length, ends with an
		    * ellipsis, title length] */
		   "eval:JSON.stringify(['#answer .cls', '#answer "
		   ".native-site .site', '#growth-body .legend-name', "
		   "'#tree-body .label', '.path-class-name', '.path "
		   ".step-class', '#native-table td.wrap'].map(q => { const e = "
		   "[...document.querySelectorAll(q)].find(e => "
		   "e.textContent.length > 100) || document.querySelector(q); "
		   "return e ? [q, "
		   "e.textContent.length, e.textContent.includes('\\u2026'), "
		   "(e.getAttribute('title') || '').length] : [q]; }))",
		   "overflow:", "eval:typeof window.__pwned",
		   "eval:document.querySelectorAll('b, #answer script').length",
		   /* the end of the native site, as shown: its Ruby line */
		   "eval:[...document.querySelectorAll('#native-table td.wrap, "
		   "#answer .native-site .site')].map(e => e.textContent.slice("
		   "-4)).join(' ')",
		   NULL},
	       &s);
	assert_clean(&s);
	struct jval *tables = json_parse(value_str(&s, 0));
	ck_assert_ptr_nonnull(tables);
	ck_assert_uint_eq(tables->n, 4);
	for (size_t i = 0; i < tables->n; i++) {
		const struct jval *t = tables->items[i];
		ck_assert_msg(t->items[1]->inum >= 1 &&
				  t->items[2]->inum == t->items[1]->inum,
			      "%s: %lld long cells, %lld cut with an ellipsis",
			      t->items[0]->str, t->items[1]->inum,
			      t->items[2]->inum);
	}
	json_free(tables);
	struct jval *lines = json_parse(value_str(&s, 2));
	ck_assert_ptr_nonnull(lines);
	for (size_t i = 0; i < lines->n; i++) {
		const struct jval *l = lines->items[i];
		ck_assert_msg(l->n == 4, "%s: no such element", l->items[0]->str);
		/* the native site: two frames and the Ruby line, each cut */
		long long max = strstr(l->items[0]->str, "native") ? 700 : 400;
		ck_assert_msg(l->items[1]->inum <= max && l->items[2]->inum &&
				  l->items[3]->inum >= 65536,
			      "%s: %lld characters, ellipsis %lld, title %lld",
			      l->items[0]->str, l->items[1]->inum,
			      l->items[2]->inum, l->items[3]->inum);
	}
	json_free(lines);
	const struct jval *ov = value(&s, 3);
	ck_assert_msg(json_get(ov, "count")->inum == 0, "overflow: %s",
		      json_get(ov, "offenders")->items[0]->str);
	ck_assert_str_eq(value_str(&s, 4), "undefined");
	ck_assert_int_eq(value_int(&s, 5), 0);
	/* the Ruby file is cut, its line stays: "...NNN\u2026:7" */
	ck_assert_str_eq(value_str(&s, 6), "N\u2026:7 N\u2026:7");
	seen_free(&s);
}
END_TEST

/* The answer comes first: the page's leak suspects are vmheap-diff
 * --suspects's (class, growth, held bytes and holder, in its order, from
 * its JSON), each with its growth per minute (1000 Leak objects in the
 * two minutes between the dumps: +500/min), and the first 2,000
 * characters of the page's visible text name the top suspect and its
 * holder; the section ends within the first 900 pixels; in the growth
 * chart the suspect's line is in color and the others grey. */
START_TEST(leak_suspects_first_as_vmheap_diff_ranks_them)
{
	const char *d0 = leak_dump("s0.vmheap", 0, "Leak", "Minor", "Shrink");
	const char *d2 = leak_dump("s2.vmheap", 2, "Leak", "Minor", "Shrink");
	const char *html = report("s.html", (const char *[]){d0, d2, NULL});
	struct spec_run r =
	    spec_tool("vmheap-diff", (const char *[]){"--suspects", "--format",
						      "json", d0, d2, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	struct jval *j = json_parse(r.out);
	ck_assert_ptr_nonnull(j);
	spec_run_free(&r);
	const struct jval *want = json_get(j, "suspects");
	ck_assert_msg(want && want->type == J_ARR && want->n > 0,
		      "vmheap-diff --suspects found no suspect");

	struct seen s;
	browse(html,
	       (const char *[]){
		   "eval:JSON.stringify([...document.querySelectorAll("
		   "'#answer li.suspect')].map(li => [li.querySelector('.cls')"
		   ".textContent, li.dataset.growth, li.dataset.heldBytes, "
		   "(li.querySelector('.holder') || {}).textContent || null, "
		   "(li.querySelector('.rate') || {}).textContent || null]))",
		   "eval:document.body.innerText.slice(0, 2000)",
		   "eval:String(Math.round(document.getElementById('answer')"
		   ".getBoundingClientRect().bottom + window.scrollY))",
		   TEXTS("#growth-chart path.growth-line.suspect > title"),
		   TEXTS("#growth-chart path.growth-line:not(.suspect) > title"),
		   NULL},
	       &s);
	assert_clean(&s);
	struct jval *got = texts(&s, 0);
	size_t n = want->n < 5 ? want->n : 5;
	ck_assert_uint_eq(got->n, n);
	for (size_t k = 0; k < n; k++) {
		const struct jval *w = want->items[k], *g = got->items[k];
		char num[64];
		ck_assert_int_eq(g->type, J_ARR);
		ck_assert_str_eq(g->items[0]->str, json_get(w, "class")->str);
		snprintf(num, sizeof num, "%lld", json_get(w, "growth")->inum);
		ck_assert_str_eq(g->items[1]->str, num);
		snprintf(num, sizeof num, "%lld",
			 json_get(w, "held_bytes")->inum);
		ck_assert_str_eq(g->items[2]->str, num);
		const struct jval *hb = json_get(w, "held_by");
		ck_assert_ptr_nonnull(hb);
		ck_assert_int_eq(g->items[3]->type, J_STR);
		ck_assert_str_eq(g->items[3]->str, hb->str);
	}
	/* the top suspect: Leak, 1000 more in 120 s */
	const struct jval *top = got->items[0];
	ck_assert_str_eq(top->items[0]->str, "Leak");
	ck_assert_str_eq(top->items[1]->str, "1000");
	ck_assert_str_eq(top->items[4]->str, "+500/min");
	const char *text = value_str(&s, 1);
	const char *holder = json_get(want->items[0], "held_by")->str;
	ck_assert_msg(strstr(text, "Leak: +1000 (+500/min)") != NULL, "%s",
		      text);
	ck_assert_msg(strstr(text, holder) != NULL, "no \"%s\" in:\n%s", holder,
		      text);
	ck_assert_msg(atoll(value_str(&s, 2)) <= 900, "the answer ends at %s px",
		      value_str(&s, 2));
	json_free(got);
	/* the growth chart: the suspect in color, the other lines grey */
	struct jval *colored = texts(&s, 3), *grey = texts(&s, 4);
	ck_assert_uint_eq(colored->n, 1);
	ck_assert_msg(!strncmp(colored->items[0]->str, "Leak: ", 6), "%s",
		      colored->items[0]->str);
	ck_assert_uint_gt(grey->n, 0);
	json_free(colored);
	json_free(grey);
	seen_free(&s);
	json_free(j);
}
END_TEST

/* A damaged dump: exit status 2, one message naming the file, and no
 * report left behind (not even half of one). */
START_TEST(damaged_dump_gives_status_2_and_no_file)
{
	const char *d0 = leak_dump("b0.vmheap", 0, "Leak", "Minor", "Shrink");
	size_t len;
	char *bytes = slurp(d0, &len);
	const char *cut = tmp_path("b-cut.vmheap");
	const char *out = tmp_path("b.html");

	spec_write_file(cut, bytes, len / 2);
	free(bytes);
	struct spec_run r = spec_tool(
	    "vmheap-report", (const char *[]){"-o", out, d0, cut, NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "vmheap-report: ") && strstr(r.err, cut),
		      "%s", r.err);
	ck_assert_int_eq(access(out, F_OK), -1);
	char *left = spec_ls(tmp_dir(), ' ');
	ck_assert_msg(!strstr(left, "b.html"), "left behind: %s", left);
	free(left);
	spec_run_free(&r);

	r = spec_tool("vmheap-report", (const char *[]){NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "no dump given"));
	spec_run_free(&r);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("report_html");
	TCase *b = spec_tcase(s, "browser", 600);
	TCase *t = spec_tcase(s, "tool", 60);

	tcase_add_test(b,
		       leak_is_the_first_bar_and_each_growing_class_has_a_line);
	tcase_add_test(b, tree_expands_on_a_click);
	tcase_add_test(b, class_table_sorts_on_a_click_and_filters_as_you_type);
	tcase_add_test(b, hostile_class_names_are_text_and_never_run);
	tcase_add_test(b, times_past_javascripts_dates_render_as_figures);
	tcase_add_test(b, saturated_sums_are_said_on_the_page);
	tcase_add_test(
	    b, sample_vm_report_shows_the_leak_and_one_dump_works_alone);
	tcase_add_test(b, native_sites_show_as_vmheap_histo_lists_them);
	tcase_add_test(b, allocation_sites_show_by_class_and_site);
	tcase_add_test(b, leak_suspects_first_as_vmheap_diff_ranks_them);
	tcase_add_test(b, names_of_64_kib_are_cut_with_an_ellipsis);
	tcase_add_test(t, damaged_dump_gives_status_2_and_no_file);
	return s;
}
