/*
 * native_leaks_test.c - the leak scan against the truth: spec/native/
 * scanned.c makes blocks of every leak class at functions of their own,
 * runs under vmheap-run --track and is dumped through the console (a
 * forked dump: the scan runs in the child); vmheap-histo --native --leaks
 * must give each function its class, and the leaked count of each losing
 * function must be valgrind memcheck's "definitely lost" count for it on
 * the same program.  Part of the native suite.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/vmheap_spec.h"
#include "tools_harness-internal.h"

/* spec_native_start's program: native_scanned under vmheap-run. */

static void scanned_start_with(struct spec_native *r, const char *extra_env);

static void scanned_start(struct spec_native *r)
{
	scanned_start_with(r, NULL);
}

/* scanned under vmheap-run --track, `extra_env` ("NAME=VALUE", may be
 * NULL) in its environment. */
static void scanned_start_with(struct spec_native *r, const char *extra_env)
{
	const char *env[] = {extra_env, NULL};

	spec_native_start(r, NULL,
			  ARGS(spec_bin("vmheap-run"), "--track",
			       spec_build("spec/native_scanned")),
			  env);
}

static void console(struct spec_native *r, const char *c1, const char *c2)
{
	char pid[32];
	struct spec_run o;
	snprintf(pid, sizeof pid, "%d", (int)r->p.pid);
	const char *argv[] = {spec_bin("vmheap-console"), "-p", pid, "--tmpdir",
			      r->dir, "-e", c1, c2 ? "-e" : NULL, c2, NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	spec_run_free(&o);
}

/* vmheap-histo --native --leaks --top 1000 [--format F] DUMP (in r->dir);
 * its exit status must be `status`. */
static void histo(struct spec_native *r, const char *format, const char *dump,
		  int status, struct spec_run *o)
{
	char path[700];
	snprintf(path, sizeof path, "%s/%s", r->dir, dump);
	const char *argv[] = {spec_bin("vmheap-histo"), "--native", "--leaks",
			      "--top", "1000", format ? "--format" : path,
			      format, format ? path : NULL, NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, o), 0);
	ck_assert_msg(o->status == status, "status %d: %s%s", o->status,
		      o->out, o->err);
}

/* The sum of the rows whose site starts with "FN (" (a function's
 * sites), for JSON key `key`. */
static long long by_function(const struct jval *sites, const char *fn,
			     const char *key)
{
	char prefix[128];
	long long sum = 0;
	snprintf(prefix, sizeof prefix, "%s (", fn);
	for (size_t i = 0; i < sites->n; i++) {
		const struct jval *s = sites->items[i];
		const struct jval *name = json_get(s, "site");
		ck_assert_ptr_nonnull(name);
		if (strncmp(name->str, prefix, strlen(prefix)) != 0)
			continue;
		const struct jval *v = json_get(s, key);
		ck_assert_msg(v != NULL && v->type == J_NUM, "no %s", key);
		sum += v->inum;
	}
	return sum;
}

static const char *const keys[8] = {
    "leaked_count",   "leaked_bytes",   "indirect_count",  "indirect_bytes",
    "possible_count", "possible_bytes", "reachable_count", "reachable_bytes"};

/* fn's eight figures must be these. */
static void expect(const struct jval *sites, const char *fn,
		   const long long want[8])
{
	for (int k = 0; k < 8; k++) {
		long long got = by_function(sites, fn, keys[k]);
		ck_assert_msg(got == want[k], "%s %s: %lld, want %lld", fn,
			      keys[k], got, want[k]);
	}
}

/* Dump the scanned program and parse its --leaks JSON into *j. */
static struct jval *scanned_dump(struct spec_native *r)
{
	struct spec_run o;
	scanned_start(r);
	console(r, "set system.memory.dump leaks.vmheap", NULL);
	histo(r, "json", "leaks.vmheap", 0, &o);
	struct jval *j = json_parse(o.out);
	ck_assert_msg(j != NULL, "%s", o.out);
	spec_run_free(&o);
	return j;
}

START_TEST(leak_classes_are_the_truth)
{
	if (SPEC_SANITIZED)
		return; /* ASan's malloc comes first in an instrumented VM */
	struct spec_native r;
	struct jval *j = scanned_dump(&r);
	const struct jval *sites = json_get(j, "sites");
	const struct jval *scan = json_get(j, "scan");
	ck_assert_ptr_nonnull(sites);
	ck_assert_ptr_nonnull(scan);
	/* scanned.c's write-only page and its file mapping's page past
	 * the file's end: skipped and said; the write-only page's pointer
	 * is no root, the file's readable page's is */
	ck_assert_int_eq(json_get(scan, "skipped_mappings")->inum, 2);
	ck_assert_int_eq(json_get(scan, "skipped_bytes")->inum, 2 * 4096);
	static const long long unread[8] = {1, 88, 0, 0, 0, 0, 1, 88};
	expect(sites, "unread_here", unread);
	/* every block of scanned.c (3,100) and the agent's */
	ck_assert_int_ge(json_get(scan, "blocks")->inum, 3100);

	/* forgotten: 1000 x 48 bytes; a stale copy of a pointer may keep a
	 * handful (none seen so far) from "leaked" */
	long long lost = by_function(sites, "forget_here", "leaked_count");
	ck_assert_msg(lost >= 997 && lost <= 1000, "forget_here: %lld", lost);
	ck_assert_int_eq(by_function(sites, "forget_here", "leaked_bytes"),
			 lost * 48);
	long long all = 0;
	for (int k = 0; k < 8; k += 2)
		all += by_function(sites, "forget_here", keys[k]);
	ck_assert_int_eq(all, 1000);

	static const long long keep[8] = {0, 0, 0, 0, 0, 0, 1000, 64000};
	expect(sites, "keep_here", keep);
	static const long long parent[8] = {100, 4000, 0, 0, 0, 0, 0, 0};
	expect(sites, "parent_here", parent);
	static const long long child[8] = {0, 0, 500, 16000, 0, 0, 0, 0};
	expect(sites, "child_here", child);
	static const long long interior[8] = {0, 0, 0, 0, 100, 8000, 0, 0};
	expect(sites, "interior_here", interior);
	static const long long hidden[8] = {0, 0, 0, 0, 0, 0, 100, 2400};
	expect(sites, "hidden_here", hidden);
	static const long long self[8] = {100, 4000, 0, 0, 0, 0, 0, 0};
	expect(sites, "self_here", self);
	static const long long cycle[8] = {50, 2800, 50, 2800, 0, 0, 0, 0};
	expect(sites, "cycle_here", cycle);
	static const long long old[8] = {0, 0, 0, 0, 0, 0, 100, 7200};
	expect(sites, "from_old_here", old);

	/* leaked first: the first row is forget_here's */
	const struct jval *first = json_get(sites->items[0], "site");
	ck_assert_msg(strncmp(first->str, "forget_here (", 13) == 0, "%s",
		      first->str);
	json_free(j);

	/* CSV and text: the same columns */
	struct spec_run o;
	histo(&r, "csv", "leaks.vmheap", 0, &o);
	ck_assert_msg(strncmp(o.out,
			      "leaked_count,leaked_bytes,indirect_count,"
			      "indirect_bytes,possible_count,possible_bytes,"
			      "reachable_count,reachable_bytes,site\n",
			      strlen("leaked_count,leaked_bytes,indirect_"
				     "count,indirect_bytes,possible_count,"
				     "possible_bytes,reachable_count,"
				     "reachable_bytes,site\n")) == 0,
		      "%s", o.out);
	ck_assert_msg(strstr(o.out, "\n0,0,0,0,0,0,1000,64000,keep_here (") !=
			  NULL,
		      "%s", o.out);
	spec_run_free(&o);
	histo(&r, NULL, "leaks.vmheap", 0, &o);
	ck_assert_msg(strstr(o.out, "scan: ") != NULL &&
			  strstr(o.out, "2 mappings skipped (8.00 KiB unread)") != NULL,
		      "%s", o.out);
	ck_assert_msg(strstr(o.out, "leaked     bytes  indirect") != NULL, "%s",
		      o.out);
	spec_run_free(&o);

	/* a dump made in-process has no scan: --leaks says so, exit 1 */
	console(&r, "set config.dump.fork false",
		"set system.memory.dump inproc.vmheap");
	histo(&r, "json", "inproc.vmheap", 1, &o);
	ck_assert_msg(strstr(o.err, "has no leak scan in its native section") !=
			  NULL,
		      "%s", o.err);
	spec_run_free(&o);
	spec_kill(r.p.pid);
}
END_TEST

/* valgrind's "definitely lost" blocks of each function that called the
 * allocator (the first "by" line of a record) into *counts[]. */
static long long valgrind_lost(const char *out, const char *kind,
			       const char *fn)
{
	long long sum = 0;
	char want[64], by[128];
	snprintf(want, sizeof want, "are %s in loss record", kind);
	snprintf(by, sizeof by, ": %s (", fn);
	for (const char *p = strstr(out, want); p; p = strstr(p + 1, want)) {
		/* "==PID== 48,000 bytes in 1,000 blocks are ..." */
		const char *line = p;
		while (line > out && line[-1] != '\n')
			line--;
		const char *in = strstr(line, " bytes in ");
		ck_assert_ptr_nonnull(in);
		long long blocks = 0;
		for (const char *d = in + 10; *d != ' '; d++)
			if (*d >= '0' && *d <= '9')
				blocks = blocks * 10 + (*d - '0');
		/* the record's stack: "at malloc", then "by FN (" */
		const char *next = strstr(p, "\n==");
		const char *at = next ? strstr(next + 1, "\n==") : NULL;
		const char *end = at ? strchr(at + 1, '\n') : NULL;
		if (at && end) {
			const char *hit = strstr(at, by);
			if (hit && hit < end)
				sum += blocks;
		}
	}
	return sum;
}

START_TEST(leaked_counts_match_valgrind_definitely_lost)
{
	if (SPEC_SANITIZED)
		return;
	struct spec_native r;
	struct jval *j = scanned_dump(&r);
	spec_kill(r.p.pid);
	const struct jval *sites = json_get(j, "sites");

	/* the same program under valgrind (no agent, no tracker): it makes
	 * the same blocks and exits */
	const char *argv[] = {"valgrind", "--leak-check=full",
			      "--show-leak-kinds=all",
			      spec_build("spec/native_scanned"), "exit", NULL};
	struct spec_run o;
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 300000, &o), 0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	static const char *const losing[] = {"forget_here", "parent_here",
					     "self_here", "cycle_here"};
	for (size_t i = 0; i < 4; i++) {
		long long vg = valgrind_lost(o.err, "definitely lost",
					     losing[i]);
		long long us = by_function(sites, losing[i], "leaked_count");
		ck_assert_msg(vg > 0, "valgrind found no loss at %s:\n%s",
			      losing[i], o.err);
		/* within a handful: 3 stale slots of a stack */
		ck_assert_msg(us >= vg - 3 && us <= vg + 3,
			      "%s: vmheap %lld leaked, valgrind %lld definitely "
			      "lost",
			      losing[i], us, vg);
	}
	/* and none where valgrind finds none */
	ck_assert_int_eq(valgrind_lost(o.err, "definitely lost", "keep_here"),
			 0);
	ck_assert_int_eq(by_function(sites, "keep_here", "leaked_count"), 0);
	ck_assert_int_eq(valgrind_lost(o.err, "possibly lost", "interior_here"),
			 by_function(sites, "interior_here", "possible_count"));
	spec_run_free(&o);
	json_free(j);
}
END_TEST

/* vmheap-diff --native --leaks [--format F] [extra] OLD NEW (in r->dir);
 * its exit status must be `status`. */
static void diff_leaks(struct spec_native *r, const char *format, const char *a,
		       const char *b, int status, struct spec_run *o)
{
	char pa[700], pb[700];
	snprintf(pa, sizeof pa, "%s/%s", r->dir, a);
	snprintf(pb, sizeof pb, "%s/%s", r->dir, b);
	const char *argv[] = {spec_bin("vmheap-diff"),
			      "--native",
			      "--leaks",
			      "--top",
			      "1000",
			      format ? "--format" : pa,
			      format ? format : pb,
			      format ? pa : NULL,
			      format ? pb : NULL,
			      NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, o), 0);
	ck_assert_msg(o->status == status, "status %d: %s%s", o->status, o->out,
		      o->err);
}

/* vmheap-diff --native --leaks: NEW's figures and their growth since OLD
 * per site, leaked first; the program forgot 1,000 more blocks at
 * forget_here, 100 parents (and their 500 children) more, and dropped
 * the 1,000 blocks keep_here kept before for 1,000 new ones. */
START_TEST(leak_diff_is_the_growth)
{
	if (SPEC_SANITIZED)
		return;
	struct spec_native r;
	struct spec_run o;
	scanned_start(&r);
	console(&r, "set system.memory.dump a.vmheap", NULL);
	r.p.len = 0;
	r.p.buf[0] = '\0';
	spec_proc_write(&r.p, "more\n");
	ck_assert_msg(spec_proc_wait_for(&r.p, "ok\n", 60000), "%s", r.p.buf);
	console(&r, "set system.memory.dump b.vmheap",
		"set config.dump.fork false");
	console(&r, "set system.memory.dump inproc.vmheap", NULL);
	spec_kill(r.p.pid);

	diff_leaks(&r, "json", "a.vmheap", "b.vmheap", 0, &o);
	struct jval *j = json_parse(o.out);
	ck_assert_msg(j != NULL, "%s", o.out);
	spec_run_free(&o);
	const struct jval *sites = json_get(j, "sites");
	ck_assert_ptr_nonnull(sites);
	ck_assert_ptr_nonnull(json_get(j, "old"));
	ck_assert_ptr_nonnull(json_get(j, "new"));
	/* keep_here: 1,000 leaked now (64,000 bytes, all growth), 1,000
	 * reachable as before */
	static const long long keep[8] = {1000, 64000, 0, 0, 0, 0, 1000, 64000};
	static const long long keep_d[8] = {1000, 64000, 0, 0, 0, 0, 0, 0};
	static const long long parent[8] = {200, 8000, 0, 0, 0, 0, 0, 0};
	static const long long parent_d[8] = {100, 4000, 0, 0, 0, 0, 0, 0};
	static const long long child[8] = {0, 0, 1000, 32000, 0, 0, 0, 0};
	static const long long child_d[8] = {0, 0, 500, 16000, 0, 0, 0, 0};
	static const long long inner[8] = {0, 0, 0, 0, 100, 8000, 0, 0};
	static const long long none[8] = {0};
	char key[64];
	expect(sites, "keep_here", keep);
	expect(sites, "parent_here", parent);
	expect(sites, "child_here", child);
	expect(sites, "interior_here", inner);
	for (int k = 0; k < 8; k++) {
		snprintf(key, sizeof key, "%s_delta", keys[k]);
		ck_assert_int_eq(by_function(sites, "keep_here", key),
				 keep_d[k]);
		ck_assert_int_eq(by_function(sites, "parent_here", key),
				 parent_d[k]);
		ck_assert_int_eq(by_function(sites, "child_here", key),
				 child_d[k]);
		ck_assert_int_eq(by_function(sites, "interior_here", key),
				 none[k]);
	}
	/* forget_here: about 2,000 leaked, about 1,000 of them new (a stale
	 * slot may keep a handful from "leaked": the histo test says) */
	long long lost = by_function(sites, "forget_here", "leaked_count");
	long long grew =
	    by_function(sites, "forget_here", "leaked_count_delta");
	ck_assert_msg(lost >= 1994 && lost <= 2000, "%lld", lost);
	ck_assert_msg(grew >= 994 && grew <= 1006, "%lld", grew);
	/* leaked first: the most leaked bytes grown (keep_here's 64,000,
	 * then forget_here's 48,000) */
	ck_assert_msg(strncmp(json_get(sites->items[0], "site")->str,
			      "keep_here (", 11) == 0 &&
			  strncmp(json_get(sites->items[1], "site")->str,
				  "forget_here (", 13) == 0,
		      "%s, %s", json_get(sites->items[0], "site")->str,
		      json_get(sites->items[1], "site")->str);
	json_free(j);

	/* CSV: each figure and its growth; text: the same, "+/-" */
	diff_leaks(&r, "csv", "a.vmheap", "b.vmheap", 0, &o);
	ck_assert_msg(
	    strncmp(o.out,
		    "leaked_count,leaked_count_delta,leaked_bytes,"
		    "leaked_bytes_delta,indirect_count,",
		    strlen("leaked_count,leaked_count_delta,leaked_"
			   "bytes,leaked_bytes_delta,indirect_count,")) == 0,
	    "%s", o.out);
	/* (two rows: keep_here called from make_all, whose blocks were
	 * dropped, and from main's loop, whose blocks are kept now) */
	ck_assert_msg(strstr(o.out, "\n1000,1000,64000,64000,0,0,0,0,0,0,0,0,"
				    "0,-1000,0,-64000,keep_here (") != NULL &&
			  strstr(o.out, "\n0,0,0,0,0,0,0,0,0,0,0,0,1000,1000,"
					"64000,64000,keep_here (") != NULL,
		      "%.3000s", o.out);
	spec_run_free(&o);
	diff_leaks(&r, NULL, "a.vmheap", "b.vmheap", 0, &o);
	const char *row = strstr(o.out, "keep_here (");
	ck_assert_msg(strstr(o.out, "leaked    +/-     bytes") != NULL &&
			  row != NULL,
		      "%.3000s", o.out);
	while (row > o.out && row[-1] != '\n')
		row--;
	char cell[8][32];
	ck_assert_msg(sscanf(row, "%31s %31s %31s %31s %31s %31s %31s %31s",
			     cell[0], cell[1], cell[2], cell[3], cell[4],
			     cell[5], cell[6], cell[7]) == 8 &&
			  !strcmp(cell[0], "1000") &&
			  !strcmp(cell[1], "+1000") &&
			  !strcmp(cell[2], "62.5") && !strcmp(cell[4], "+62.5"),
		      "%.3000s", o.out);
	spec_run_free(&o);

	/* NEW without a scan (an in-process dump): said, exit 1 */
	diff_leaks(&r, "json", "a.vmheap", "inproc.vmheap", 1, &o);
	ck_assert_msg(strstr(o.err, "inproc.vmheap has no leak scan") != NULL,
		      "%s", o.err);
	spec_run_free(&o);
	/* usage: --leaks needs --native, and takes two dumps */
	const char *alone[] = {spec_bin("vmheap-diff"), "--leaks", "x", "y",
			       NULL};
	ck_assert_int_eq(spec_run(alone, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 2 && strstr(o.err, "--leaks needs --native"),
		      "%d %s", o.status, o.err);
	spec_run_free(&o);
	const char *three[] = {spec_bin("vmheap-diff"),
			       "--native",
			       "--leaks",
			       "x",
			       "y",
			       "z",
			       NULL};
	ck_assert_int_eq(spec_run(three, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 2 && strstr(o.err, "takes two dumps"),
		      "%d %s", o.status, o.err);
	spec_run_free(&o);
}
END_TEST

/* The CPU time pid has used, in clock ticks (utime + stime of
 * /proc/PID/stat), or -1 once it is gone. */
static long cpu_ticks(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	char *text = spec_read_file(path, NULL);
	if (!text)
		return -1;
	const char *p = strrchr(text, ')');
	unsigned long ut = 0, st = 0;
	char state = 0;
	/* after ")": state, then fields 4 to 13, utime (14), stime (15) */
	int got = p ? sscanf(p + 1,
			     " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			     "%lu %lu",
			     &state, &ut, &st)
		    : 0;
	free(text);
	return got == 3 && state != 'Z' ? (long)(ut + st) : -1;
}

/* A dump's child killed by SIGKILL while it scans (as soon as it exists,
 * and after it has used 5 and 15 ticks of CPU: the scan of a 256 MiB
 * heap takes about 36): the dump fails and says so, the dump directory
 * holds what it held (the earlier dump unchanged, no partial file), and
 * the program runs on: a dump after it carries its leak scan. */
START_TEST(scan_child_killed_leaves_the_vm_and_the_dumps)
{
	if (SPEC_SANITIZED)
		return;
	struct spec_native r;
	struct spec_run o;
	scanned_start_with(&r, "SCANNED_BULK_MIB=256");
	console(&r, "set system.memory.dump a.vmheap", NULL);
	char apath[700];
	snprintf(apath, sizeof apath, "%s/a.vmheap", r.dir);
	size_t alen = 0, alen2 = 0;
	char *a = spec_read_file(apath, &alen);
	ck_assert_ptr_nonnull(a);
	char *before = spec_ls(r.dir, ' ');
	static const long at_ticks[] = {0, 5, 15};
	for (size_t k = 0; k < sizeof at_ticks / sizeof at_ticks[0]; k++) {
		char pid[32], cmd[64];
		snprintf(pid, sizeof pid, "%d", (int)r.p.pid);
		snprintf(cmd, sizeof cmd, "set system.memory.dump k%zu.vmheap",
			 k);
		const char *argv[] = {spec_bin("vmheap-console"),
				      "-p",
				      pid,
				      "--tmpdir",
				      r.dir,
				      "-e",
				      cmd,
				      NULL};
		struct spec_spawn sp = {0};
		struct spec_proc con;
		sp.argv = argv;
		spec_proc_start(&con, &sp, 1);
		pid_t child = 0;
		SPEC_WAIT_UNTIL(spec_children(r.p.pid, &child, 1) == 1, 60000,
				"the dump's child of %d", (int)r.p.pid);
		long t = 0;
		struct spec_wait w;
		spec_wait_begin(&w, 60000);
		w.interval_ms = 1;
		while ((t = cpu_ticks(child)) >= 0 && t < at_ticks[k])
			spec_wait_or_fail(&w, "child %d at %ld ticks",
					  (int)child, at_ticks[k]);
		ck_assert_msg(t >= 0,
			      "the child ended before %ld ticks: the "
			      "scan was not killed",
			      at_ticks[k]);
		ck_assert_int_eq(kill(child, SIGKILL), 0);
		int status = spec_proc_wait_exit(&con, 60000);
		ck_assert_msg(status != 0 &&
				  strstr(con.buf, "killed by signal 9"),
			      "%d: %s", status, con.buf);
		printf("scan child killed at %ld ticks: %s", t, con.buf);
		char *after = spec_ls(r.dir, ' ');
		ck_assert_str_eq(after, before);
		free(after);
		char *a2 = spec_read_file(apath, &alen2);
		ck_assert_msg(a2 && alen2 == alen && !memcmp(a, a2, alen),
			      "a.vmheap changed");
		free(a2);
	}
	free(before);
	free(a);
	/* the program runs on, and its next dump has its scan */
	console(&r, "set system.memory.dump b.vmheap", NULL);
	histo(&r, "json", "b.vmheap", 0, &o);
	struct jval *j = json_parse(o.out);
	ck_assert_msg(j && json_get(j, "scan"), "%.2000s", o.out);
	ck_assert_int_ge(json_get(json_get(j, "scan"), "blocks")->inum,
			 256 * 1024);
	json_free(j);
	spec_run_free(&o);
	spec_kill(r.p.pid);
}
END_TEST

/* get system.native.leaks: the scan now, in a forked child, without a
 * dump: the same classes as the dump's (1,000 forgotten at the top, the
 * parents' 500 children and the cycles' 50 indirect, 100 possibly
 * leaked), nothing written to the dump directory; with tracking off it
 * says how to start it. */
START_TEST(live_leak_scan)
{
	if (SPEC_SANITIZED)
		return;
	struct spec_native r;
	struct spec_run o;
	char pid[32];
	scanned_start(&r);
	char *before = spec_ls(r.dir, ' ');
	snprintf(pid, sizeof pid, "%d", (int)r.p.pid);
	const char *argv[] = {spec_bin("vmheap-console"),
			      "-p",
			      pid,
			      "--tmpdir",
			      r.dir,
			      "--json",
			      "-e",
			      "get system.native.leaks",
			      NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0, "%.2000s%.1000s", o.out, o.err);
	struct jval *j = json_parse(o.out);
	ck_assert_msg(j != NULL, "%.2000s", o.out);
	const struct jval *scan = json_get(j, "scan");
	const struct jval *sites = json_get(j, "sites");
	const struct jval *total = json_get(j, "total");
	ck_assert_msg(scan && sites && total && sites->n > 0, "%.2000s", o.out);
	ck_assert_int_ge(json_get(scan, "blocks")->inum, 3100);
	ck_assert_int_eq(json_get(scan, "skipped_mappings")->inum, 2);
	/* most leaked bytes first: forget_here's 1,000 x 48 bytes */
	long long lost = json_get(sites->items[0], "leaked_count")->inum;
	ck_assert_msg(lost >= 997 && lost <= 1000, "%.2000s", o.out);
	ck_assert_int_eq(json_get(sites->items[0], "leaked_bytes")->inum,
			 lost * 48);
	ck_assert_int_eq(json_get(total, "indirect_count")->inum, 550);
	ck_assert_int_ge(json_get(total, "possible_count")->inum, 100);
	ck_assert_int_ge(json_get(total, "reachable_count")->inum, 1200);
	json_free(j);
	spec_run_free(&o);
	char *after = spec_ls(r.dir, ' ');
	ck_assert_str_eq(after, before);
	free(after);
	free(before);
	/* a dump's reply says what its scan could not read */
	const char *dump[] = {spec_bin("vmheap-console"),
			      "-p",
			      pid,
			      "--tmpdir",
			      r.dir,
			      "-e",
			      "set system.memory.dump d.vmheap",
			      NULL};
	ck_assert_int_eq(spec_run(dump, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0 && strstr(o.out, "\nleak scan: ") != NULL &&
			  strstr(o.out,
				 "; 2 writable mappings could not be read "
				 "and were skipped (8.00 KiB unread") != NULL,
		      "%.2000s%.1000s", o.out, o.err);
	spec_run_free(&o);
	/* tracking off: said, with what to do */
	console(&r, "set config.native.track false", NULL);
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status != 0 &&
			  (strstr(o.out, "set config.native.track true") ||
			   strstr(o.err, "set config.native.track true")),
		      "%d %.2000s%.1000s", o.status, o.out, o.err);
	spec_run_free(&o);
	spec_kill(r.p.pid);
}
END_TEST

void native_leaks_tests(Suite *s);
void native_leaks_tests(Suite *s)
{
	TCase *t = tcase_create("leaks");
	tcase_set_timeout(t, 600);
	tcase_add_test(t, leak_classes_are_the_truth);
	tcase_add_test(t, leaked_counts_match_valgrind_definitely_lost);
	tcase_add_test(t, leak_diff_is_the_growth);
	tcase_add_test(t, scan_child_killed_leaves_the_vm_and_the_dumps);
	tcase_add_test(t, live_leak_scan);
	suite_add_tcase(s, t);
}
