/*
 * live_test.c - the live histogram (get system.memory.histogram) and the
 * console's `top`, against the real sample VM and a real Ruby VM; and the
 * growth rate of a timeline of a Ruby app that leaks at a known rate.
 *
 * Truths the figures are checked against: a dump of the same heap read
 * by vmheap-histo, the sample VM's own census (sample.census), Ruby's own
 * count of a class's instances (ObjectSpace.each_object), and a Ruby
 * program whose leak follows the wall clock.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmheap_agent.h"
#include "lib/vmheap_spec.h"

#define WAIT_MS 30000

/* ------------------------------------------------------------ helpers */

/* One class of a histogram (the agent's, or vmheap-histo's). */
struct hrow {
	char name[256];
	unsigned long long count, bytes;
};

struct histo {
	struct hrow *rows;
	size_t n;
	unsigned long long objects, bytes;
	int forked, live_only;
};

static void histo_free(struct histo *h)
{
	free(h->rows);
	memset(h, 0, sizeof(*h));
}

static const struct hrow *histo_find(const struct histo *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->rows[i].name, name))
			return &h->rows[i];
	return NULL;
}

/* get system.memory.histogram over `c`, into *h. */
static void live_histogram(vmheap_client *c, struct histo *h)
{
	struct spec_reply r;
	const msgpack_object *cls;
	uint64_t nclasses = UINT64_MAX;
	int rc;

	memset(h, 0, sizeof(*h));
	vmheap_client_set_timeout(c, 120000);
	rc = spec_client_call(c, "get", "system.memory.histogram", NULL, &r);
	ck_assert_msg(rc == 0, "get: %s", vmheap_client_error(c));
	ck_assert_msg(r.ok, "histogram: %s: %s", r.code, r.message);
	ck_assert_int_eq(r.value.type, MSGPACK_OBJECT_MAP);
	cls = NULL;
	for (uint32_t i = 0; i < r.value.via.map.size; i++) {
		const msgpack_object_kv *kv = &r.value.via.map.ptr[i];
		char key[32];

		snprintf(key, sizeof(key), "%.*s", (int)kv->key.via.str.size,
			 kv->key.via.str.ptr);
		if (!strcmp(key, "objects"))
			h->objects = kv->val.via.u64;
		else if (!strcmp(key, "bytes"))
			h->bytes = kv->val.via.u64;
		else if (!strcmp(key, "forked"))
			h->forked = kv->val.via.boolean;
		else if (!strcmp(key, "live_only"))
			h->live_only = kv->val.via.boolean;
		else if (!strcmp(key, "left_out"))
			ck_assert_int_eq(kv->val.via.u64, 0);
		else if (!strcmp(key, "class_count"))
			nclasses = kv->val.via.u64;
		else if (!strcmp(key, "classes"))
			cls = &kv->val;
	}
	ck_assert_msg(cls && cls->type == MSGPACK_OBJECT_ARRAY,
		      "the histogram reply has no classes");
	h->n = cls->via.array.size;
	ck_assert_int_eq(nclasses, h->n);
	h->rows = calloc(h->n + 1, sizeof(*h->rows));
	ck_assert_ptr_nonnull(h->rows);
	for (size_t i = 0; i < h->n; i++) {
		const msgpack_object *e = cls->via.array.ptr[i].via.array.ptr;
		snprintf(h->rows[i].name, sizeof(h->rows[i].name), "%.*s",
			 (int)e[0].via.str.size, e[0].via.str.ptr);
		h->rows[i].count = e[1].via.u64;
		h->rows[i].bytes = e[2].via.u64;
		if (i)
			ck_assert_msg(h->rows[i].count <= h->rows[i - 1].count,
				      "the classes are not by count");
	}
	spec_reply_release(&r);
}

/* vmheap-histo --format csv DUMP, into *h (class names without commas,
 * as in these tests). */
static void dump_histogram(const char *dump, struct histo *h)
{
	const char *const argv[] = {spec_bin("vmheap-histo"), "--format", "csv",
				    dump, NULL};
	struct spec_run r;
	char *line, *save = NULL;

	memset(h, 0, sizeof(*h));
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 120000, &r), 0);
	ck_assert_msg(r.status == 0, "vmheap-histo: %s", r.err);
	h->rows = calloc((size_t)spec_count(r.out, "\n") + 1, sizeof(*h->rows));
	ck_assert_ptr_nonnull(h->rows);
	for (line = strtok_r(r.out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ','), *c2 = strrchr(line, ',');
		if (!strcmp(line, "count,class,bytes") || !c1 || c1 == c2)
			continue;
		*c1 = *c2 = '\0';
		snprintf(h->rows[h->n].name, sizeof(h->rows[h->n].name), "%s",
			 c1 + 1);
		h->rows[h->n].count = strtoull(line, NULL, 10);
		h->rows[h->n].bytes = strtoull(c2 + 1, NULL, 10);
		h->objects += h->rows[h->n].count;
		h->bytes += h->rows[h->n].bytes;
		h->n++;
	}
	spec_run_free(&r);
}

/* Does every class of `a` have the count and bytes it has in `b`, and
 * the other way round?  0, or 1 with what differs first in why. */
static int histogram_differs(const struct histo *a, const struct histo *b,
			     char *why, size_t size)
{
	for (int side = 0; side < 2; side++) {
		const struct histo *x = side ? b : a, *y = side ? a : b;
		for (size_t i = 0; i < x->n; i++) {
			const struct hrow *o = histo_find(y, x->rows[i].name);
			if (o && o->count == x->rows[i].count &&
			    o->bytes == x->rows[i].bytes)
				continue;
			snprintf(why, size,
				 "%s: %llu objects, %llu bytes against %llu, "
				 "%llu",
				 x->rows[i].name, x->rows[i].count,
				 x->rows[i].bytes, o ? o->count : 0,
				 o ? o->bytes : 0);
			return 1;
		}
	}
	return 0;
}

static void assert_same_histogram(const struct histo *a, const struct histo *b)
{
	char why[600];

	ck_assert_msg(!histogram_differs(a, b, why, sizeof(why)), "%s", why);
	ck_assert_uint_eq(a->objects, b->objects);
	ck_assert_uint_eq(a->bytes, b->bytes);
}

static void call_ok(vmheap_client *c, const char *verb, const char *var,
		    const char *value)
{
	struct spec_reply r;
	int rc = spec_client_call_str(c, verb, var, value, &r);

	ck_assert_msg(rc == 0, "%s %s: %s", verb, var, vmheap_client_error(c));
	ck_assert_msg(r.ok, "%s %s: %s: %s", verb, var, r.code, r.message);
	spec_reply_release(&r);
}

/* Wait until the sample VM's mutator has run `ticks` ticks (and so has
 * stopped, started with --ticks). */
static void wait_ticks(vmheap_client *c, int64_t ticks)
{
	spec_wait_uint(c, "sample.ticks", ticks, WAIT_MS);
}

/* sample.census's count of `cls`. */
static long long census_of(vmheap_client *c, const char *cls)
{
	struct spec_reply r;
	long long n = -1;

	ck_assert_int_eq(spec_client_call(c, "get", "sample.census", NULL, &r),
			 0);
	ck_assert(r.ok);
	for (uint32_t i = 0; i < r.value.via.map.size; i++) {
		const msgpack_object_kv *kv = &r.value.via.map.ptr[i];
		if (kv->key.via.str.size == strlen(cls) &&
		    !memcmp(kv->key.via.str.ptr, cls, kv->key.via.str.size))
			n = (long long)kv->val.via.u64;
	}
	spec_reply_release(&r);
	return n;
}

/* ---------------------------------------------------- the sample VM */

START_TEST(histogram_equals_a_dump_of_the_same_heap)
{
	const char *dir = spec_mkdtemp("live");
	const char *const args[] = {"--leak", "Session:7", "--leak", "Buffer:3",
				    "--ticks", "40", NULL};
	struct spec_vm_opts o = {.args = args};
	struct histo live, dumped;
	char dump[600];
	struct spec_vm vm;
	vmheap_client *c;

	spec_vm_start(&vm, dir, dir, &o);
	c = spec_connect(&vm, 10000);
	ck_assert_ptr_nonnull(c);
	wait_ticks(c, 40);

	/* fork mode (the default), after a GC in the child */
	live_histogram(c, &live);
	ck_assert(live.forked);
	ck_assert_int_eq(live.rows[0].count, 7 * 40 + 1);
	ck_assert_str_eq(live.rows[0].name, "Session");
	ck_assert_int_eq(census_of(c, "Session"), 7 * 40 + 1);
	ck_assert_int_eq(census_of(c, "Buffer"), 3 * 40 + 1);
	call_ok(c, "set", "system.memory.dump", "same.vmheap");
	snprintf(dump, sizeof(dump), "%s/same.vmheap", dir);
	dump_histogram(dump, &dumped);
	assert_same_histogram(&live, &dumped);
	histo_free(&live);

	/* in the VM, stopped: the same figures */
	call_ok(c, "set", "config.dump.fork", "false");
	live_histogram(c, &live);
	ck_assert(!live.forked);
	assert_same_histogram(&live, &dumped);
	histo_free(&live);
	histo_free(&dumped);

	/* the fork guard of dumps holds for the histogram too */
	call_ok(c, "set", "config.dump.fork", "true");
	call_ok(c, "set", "config.dump.fork_min_free", "1000000000000000000");
	{
		struct spec_reply r;
		ck_assert_int_eq(spec_client_call(c, "get",
						  "system.memory.histogram",
						  NULL, &r),
				 0);
		ck_assert(!r.ok);
		ck_assert_str_eq(r.code, "dump");
		ck_assert_msg(strstr(r.message, "refusing a fork dump: "
						"MemAvailable is"),
			      "%s", r.message);
		spec_reply_release(&r);
	}
	vmheap_client_close(c);
	spec_vm_stop(&vm);
}
END_TEST

/* A slow walk (--walk-delay-ms) does not hold up other requests: the
 * loop answers while the histogram is taken, and the histogram's reply
 * comes when it is ready. */
START_TEST(histogram_does_not_block_other_requests)
{
	const char *dir = spec_mkdtemp("live");
	const char *const args[] = {"--walk-delay-ms", "1500", NULL};
	struct spec_vm_opts o = {.args = args};
	struct spec_vm vm;
	struct spec_reply r, r2;
	vmheap_client *slow, *fast;
	int64_t t0;
	pid_t child;
	int status;

	spec_vm_start(&vm, dir, dir, &o);
	slow = spec_connect(&vm, 10000);
	fast = spec_connect(&vm, 10000);
	ck_assert_ptr_nonnull(slow);
	ck_assert_ptr_nonnull(fast);
	t0 = spec_now_ms();
	child = fork(); /* the slow client's request, from another process */
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		vmheap_client_set_timeout(slow, 60000);
		int rc = spec_client_call(slow, "get",
					  "system.memory.histogram", NULL, &r);
		if (rc != 0 || !r.ok) /* say why, for the parent's failure */
			fprintf(stderr, "the slow histogram: %s\n",
				rc != 0 ? vmheap_client_error(slow) : r.message);
		_exit(rc == 0 && r.ok ? 0 : 1);
	}
	/* the histogram has started its walk: the VM has forked its
	 * child */
	SPEC_WAIT_UNTIL(spec_children(vm.pid, NULL, 0) > 0, WAIT_MS,
			"the histogram's child of pid %d", (int)vm.pid);
	ck_assert_int_eq(spec_client_call(fast, "get", "system.pid", NULL, &r2),
			 0);
	ck_assert(r2.ok);
	spec_reply_release(&r2);
	/* a second histogram meanwhile is refused as busy: so the reply
	 * above came while the walk ran */
	ck_assert_int_eq(
	    spec_client_call(fast, "get", "system.memory.histogram", NULL, &r2),
	    0);
	ck_assert(!r2.ok);
	ck_assert_str_eq(r2.code, "busy");
	spec_reply_release(&r2);
	ck_assert_int_eq(spec_wait(child, WAIT_MS, &status), 0);
	ck_assert_int_ge(spec_now_ms() - t0, 1500);
	vmheap_client_close(slow);
	vmheap_client_close(fast);
	spec_vm_stop(&vm);
}
END_TEST

/* The last frame of `top` in a pane: from its last "vmheap top:". */
static const char *last_frame(const char *pane)
{
	const char *p = strstr(pane, "vmheap top:"), *q;

	ck_assert_msg(p != NULL, "no top frame in:\n%s", pane);
	while ((q = strstr(p + 1, "vmheap top:")))
		p = q;
	return p;
}

/* The figures of `cls`'s row in a top frame: growth, per min, count. */
static int top_row(const char *frame, const char *cls, long long *growth,
		   double *rate, long long *count)
{
	char pat[300];

	snprintf(pat, sizeof(pat), "  %s\n", cls);
	for (const char *p = frame; (p = strstr(p, pat)); p++) {
		const char *bol = p;
		while (bol > frame && bol[-1] != '\n')
			bol--;
		if (sscanf(bol, "%lld %lf %lld", growth, rate, count) == 3)
			return 1;
	}
	return 0;
}

START_TEST(top_shows_the_growing_classes_first_with_their_rate_and_q_quits)
{
	const char *dir = spec_mkdtemp("live");
	/* 300 ticks of 10 ms: the leak runs for about 3 s, then stops */
	const char *const args[] = {"--leak", "Session:5", "--leak",
				    "Buffer:1", "--ticks", "300", NULL};
	struct spec_vm_opts o = {.args = args};
	struct spec_vm vm;
	struct spec_tmux t;
	char cmd[2048], *pane;
	long long growth, count, g2, c2;
	double rate, r2;
	vmheap_client *c;

	spec_vm_start(&vm, dir, dir, &o);
	spec_console_command(cmd, sizeof(cmd), dir, "");
	spec_tmux_start(&t, cmd);
	spec_tmux_see(&t, spec_console_prompt(vm.pid, ""), WAIT_MS);
	spec_tmux_line(&t, "top 0.5");
	spec_tmux_see(&t, "since top began; q quits", WAIT_MS);

	/* once the leak has stopped: Session on top, grown 5 times as
	 * much as Buffer, at a positive rate */
	c = spec_connect(&vm, 10000);
	ck_assert_ptr_nonnull(c);
	wait_ticks(c, 300);
	/* a frame of the stopped heap: its Session count is the VM's own */
	{
		long long stopped = census_of(c, "Session");
		struct spec_wait w;

		spec_wait_begin(&w, WAIT_MS);
		w.interval_ms = 100;
		for (;;) {
			pane = spec_tmux_capture(&t);
			if (strstr(pane, "vmheap top:") &&
			    top_row(last_frame(pane), "Session", &growth, &rate,
				    &count) &&
			    count == stopped)
				break;
			/* what the console showed last, when it fails */
			if (!spec_wait_next(&w))
				ck_abort_msg("no top frame with %lld Sessions "
					     "in %d ms; the pane:\n%s",
					     stopped, WAIT_MS, pane);
			free(pane);
		}
	}
	{
		const char *f = last_frame(pane);
		const char *table = strstr(f, "growth  per min");
		ck_assert_msg(table, "no table in:\n%s", f);
		ck_assert_msg(top_row(f, "Session", &growth, &rate, &count),
			      "no Session row:\n%s", f);
		ck_assert_msg(top_row(f, "Buffer", &g2, &r2, &c2),
			      "no Buffer row:\n%s", f);
		/* Session is the first row of the table */
		const char *first = strchr(table, '\n') + 1;
		ck_assert_msg(strstr(first, "Session") &&
				  strstr(first, "Session") <
				      strchr(first, '\n'),
			      "Session is not the first row:\n%s", f);
		/* the counts are the VM's own */
		ck_assert_int_eq(count, census_of(c, "Session"));
		ck_assert_int_eq(c2, census_of(c, "Buffer"));
		ck_assert_int_gt(growth, 0);
		ck_assert_int_le(growth, count);
		ck_assert_msg(g2 * 5 >= growth - 5 && g2 * 5 <= growth + 5,
			      "Session +%lld, Buffer +%lld", growth, g2);
		ck_assert(rate > 0 && r2 > 0 && rate > r2);
	}
	free(pane);

	/* q quits: the prompt is back, and the console still works */
	spec_tmux_type(&t, "q");
	ck_assert(spec_tmux_wait_count(&t, spec_console_prompt(vm.pid, ""), 2,
				       WAIT_MS));
	spec_tmux_line(&t, "get system.pid");
	char pid[32];
	snprintf(pid, sizeof(pid), "\n%d\n", (int)vm.pid);
	spec_tmux_see(&t, pid, WAIT_MS);
	spec_tmux_kill(&t);
	vmheap_client_close(c);
	spec_vm_stop(&vm);
}
END_TEST

/* ------------------------------------------------------- real Ruby */

/* The next line of the Ruby program. */
static void ruby_line(struct spec_ruby *vm, char *line, size_t size)
{
	int rc = spec_proc_line(&vm->p, line, size, 60000);
	ck_assert_msg(rc == 1, "no line from ruby (%d): %.*s", rc,
		      (int)vm->p.len, vm->p.buf);
}

static vmheap_client *ruby_connect(struct spec_ruby *vm)
{
	struct vmheap_agent_info info;
	vmheap_client *c = NULL;
	char err[700];

	ck_assert_msg(spec_discovery_wait(vm->dir, vm->p.pid, &info, 60000, err,
					  sizeof(err)) == 0,
		      "discovery: %s", err);
	ck_assert_int_eq(vmheap_client_connect(&c, &info, 10000), 0);
	vmheap_client_set_timeout(c, 120000);
	return c;
}

/* 1234 instances of Kept, held; the program says how many Ruby counts
 * after a full GC, then sleeps (allocating nothing) until killed. */
static const char kept_rb[] =
    "class Kept; def initialize(i); @i = i; end; end\n"
    "$kept = Array.new(1234) { |i| Kept.new(i) }\n"
    "GC.start\n"
    "STDOUT.puts \"kept #{ObjectSpace.each_object(Kept).count}\"\n"
    "STDOUT.flush\n"
    "sleep\n";

START_TEST(ruby_histogram_counts_a_class_as_ruby_does_and_equals_a_dump)
{
	struct spec_ruby vm;
	struct histo live, dumped;
	char line[256], dump[700];
	const struct hrow *kept;
	vmheap_client *c;

	spec_ruby_start(&vm, kept_rb);
	ruby_line(&vm, line, sizeof(line));
	ck_assert_str_eq(line, "kept 1234");
	c = ruby_connect(&vm);

	/* the program has printed; it allocates nothing more once it
	 * sleeps (its first call of sleep makes its call caches): wait
	 * until two histograms agree */
	{
		struct histo before;
		char why[600];
		int64_t deadline = spec_now_ms() + WAIT_MS;

		live_histogram(c, &before);
		for (;;) {
			live_histogram(c, &live);
			if (!histogram_differs(&before, &live, why, sizeof(why)))
				break;
			ck_assert_msg(spec_now_ms() < deadline,
				      "the Ruby heap did not settle: %s", why);
			histo_free(&before);
			before = live;
		}
		histo_free(&before);
	}
	ck_assert(live.forked && live.live_only);
	kept = histo_find(&live, "Kept");
	ck_assert_msg(kept != NULL, "no Kept in the histogram");
	ck_assert_uint_eq(kept->count, 1234);

	/* a dump of the same moment (fork mode with GC, both): every class
	 * the same */
	call_ok(c, "set", "system.memory.dump", "kept.vmheap");
	snprintf(dump, sizeof(dump), "%s/kept.vmheap", vm.dir);
	dump_histogram(dump, &dumped);
	assert_same_histogram(&live, &dumped);
	histo_free(&live);
	histo_free(&dumped);
	vmheap_client_close(c);
	spec_kill(vm.p.pid);
}
END_TEST

/* The live histogram's count of Drip objects. */
static long long drips(vmheap_client *c)
{
	struct histo h;
	const struct hrow *d;
	long long n;

	live_histogram(c, &h);
	d = histo_find(&h, "Drip");
	n = d ? (long long)d->count : 0;
	histo_free(&h);
	return n;
}

/* Leaks Drip objects at 1000 a second, following the wall clock (so
 * that the rate holds whatever the scheduler does). */
static const char drip_rb[] =
    "class Drip; end\n"
    "$drips = []\n"
    "t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)\n"
    "STDOUT.puts 'ready'; STDOUT.flush\n"
    "loop do\n"
    "  want = ((Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0) * "
    "1000).to_i\n"
    "  $drips << Drip.new while $drips.size < want\n"
    "  sleep 0.005\n"
    "end\n";

START_TEST(ruby_timeline_rate_is_within_20_percent_of_the_leak)
{
	struct spec_ruby vm;
	char line[256], name[32];
	vmheap_client *c;
	const char *paths[3];
	char path[3][700];
	long long drips_at = 0;

	spec_ruby_start(&vm, drip_rb);
	ruby_line(&vm, line, sizeof(line));
	ck_assert_str_eq(line, "ready");
	c = ruby_connect(&vm);
	for (int k = 0; k < 3; k++) {
		/* 1500 more Drips (1.5 s of the leak's clock) between two
		 * dumps */
		if (k)
			SPEC_WAIT_UNTIL(drips(c) >= drips_at + 1500, WAIT_MS,
					"1500 more Drips than %lld", drips_at);
		drips_at = drips(c);
		snprintf(name, sizeof(name), "drip%d.vmheap", k + 1);
		call_ok(c, "set", "system.memory.dump", name);
		snprintf(path[k], sizeof(path[k]), "%s/%s", vm.dir, name);
		paths[k] = path[k];
	}
	vmheap_client_close(c);
	spec_kill(vm.p.pid);

	const char *const argv[] = {spec_bin("vmheap-diff"), "--format", "csv",
				    paths[0], paths[1], paths[2], NULL};
	struct spec_run r;
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 120000, &r), 0);
	ck_assert_msg(r.status == 0, "vmheap-diff: %s", r.err);
	ck_assert_str_eq(r.err, "");
	const char *row = strstr(r.out, "\nDrip,");
	ck_assert_msg(row, "no Drip row:\n%s", r.out);
	/* class,count_1,count_2,count_3,count_delta,count_per_minute,... */
	long long c1, c2, c3, delta;
	double per_min;
	ck_assert_int_eq(sscanf(row, "\nDrip,%lld,%lld,%lld,%lld,%lf", &c1,
				&c2, &c3, &delta, &per_min),
			 5);
	ck_assert(c1 < c2 && c2 < c3);
	ck_assert_msg(strstr(row, ",true\n"), "Drip not marked as growing at "
					      "every step: %s", row);
	ck_assert_msg(per_min > 60000 * 0.8 && per_min < 60000 * 1.2,
		      "Drip grows at %.0f per minute; the program leaks 60000",
		      per_min);
	spec_run_free(&r);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("live");
	TCase *tc = spec_tcase(s, "histogram", 120);

	tcase_add_test(tc, histogram_equals_a_dump_of_the_same_heap);
	tcase_add_test(tc, histogram_does_not_block_other_requests);
	tc = spec_tcase(s, "top", 120);
	tcase_add_test(
	    tc,
	    top_shows_the_growing_classes_first_with_their_rate_and_q_quits);
	tc = spec_tcase(s, "ruby", 180);
	tcase_add_test(
	    tc, ruby_histogram_counts_a_class_as_ruby_does_and_equals_a_dump);
	tcase_add_test(tc, ruby_timeline_rate_is_within_20_percent_of_the_leak);
	return s;
}
