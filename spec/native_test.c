/*
 * native_test.c - the malloc tracker (libvmheap-malloc.so) in real
 * processes: spec/native/victim.c runs under LD_PRELOAD, switches tracking
 * through the tracker's API and prints the tracker's sites next to its
 * own count of what it did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/vmheap_spec.h"
#include "tools_harness-internal.h"

static const char *preload_env(void)
{
	static char buf[4096];
	snprintf(buf, sizeof buf, "LD_PRELOAD=%s",
		 spec_build("lib/libvmheap-malloc.so"));
	return buf;
}

/* Run the victim with the tracker; fails the test unless it exits 0. */
static void victim(struct spec_run *r, const char *const *args)
{
	const char *argv[8] = {spec_build("spec/native_victim")};
	for (int i = 0; args[i] != NULL && i < 6; i++)
		argv[i + 1] = args[i];
	const char *env[] = {preload_env(), NULL};
	ck_assert_int_eq(spec_run(argv, env, NULL, 60000, r), 0);
	ck_assert_msg(r->status == 0, "victim exited %d: %s%s", r->status,
		      r->out, r->err);
}

/* The numbers of the "site" line of function `fn` in `out` after
 * `from` (NULL: the start); fails the test when there is none. */
static void site_of(const char *out, const char *fn,
		    unsigned long long v[4])
{
	char want[128];
	snprintf(want, sizeof want, " %s\n", fn);
	const char *line = out;
	while ((line = strstr(line, "site ")) != NULL) {
		const char *eol = strchr(line, '\n');
		ck_assert_ptr_nonnull(eol);
		if ((size_t)(eol - line) + 1 >= strlen(want) &&
		    strncmp(eol + 1 - strlen(want), want, strlen(want)) == 0) {
			ck_assert_int_eq(sscanf(line, "site %llu %llu %llu %llu",
						&v[0], &v[1], &v[2], &v[3]),
					 4);
			return;
		}
		line = eol + 1;
	}
	ck_abort_msg("no site in %s in:\n%s", fn, out);
}

static unsigned long long own(const char *out, const char *name)
{
	char want[64];
	snprintf(want, sizeof want, "own %s ", name);
	const char *p = strstr(out, want);
	ck_assert_msg(p != NULL, "no \"%s\" in:\n%s", want, out);
	return strtoull(p + strlen(want), NULL, 10);
}

START_TEST(leak_named_with_exact_bytes)
{
	struct spec_run r;
	victim(&r, (const char *[]){"leak", "1000", "1234", NULL});
	unsigned long long v[4];
	site_of(r.out, "leak_here", v);
	ck_assert_uint_eq(v[0], 1000);             /* live count */
	ck_assert_uint_eq(v[1], own(r.out, "leaked")); /* 1234000 bytes */
	ck_assert_uint_eq(v[1], 1234000);
	ck_assert_uint_eq(v[2], 1000);
	ck_assert_uint_eq(v[3], 0);
	/* malloc and free in balance: 10000 each way, nothing live */
	site_of(r.out, "churn_here", v);
	ck_assert_uint_eq(v[0], 0);
	ck_assert_uint_eq(v[1], 0);
	ck_assert_uint_eq(v[2], 10000);
	ck_assert_uint_eq(v[3], 10000);
	spec_run_free(&r);
}
END_TEST

/* The stack cache tells apart two paths that differ only in an outer
 * frame, called alternately from the same place. */
START_TEST(paths_that_differ_two_frames_up_are_two_sites)
{
	struct spec_run r;
	victim(&r, (const char *[]){"paths", "30000", NULL});
	unsigned long long v[4];
	site_of(r.out, "path_a_here", v);
	ck_assert_uint_eq(v[2], 10000); /* allocations */
	ck_assert_uint_eq(v[0], 10000); /* all live */
	ck_assert_uint_eq(v[1], own(r.out, "a-bytes"));
	site_of(r.out, "path_b_here", v);
	ck_assert_uint_eq(v[2], 20000);
	ck_assert_uint_eq(v[1], own(r.out, "b-bytes"));
	spec_run_free(&r);
}
END_TEST

/* Stacks through frames without frame pointers and frames with
 * variable-length arrays, at a new stack address nearly every call: the
 * tracker's own walker reads their unwind rules, and each path's counts
 * are exact two frames up. */
START_TEST(stacks_through_frames_without_frame_pointers)
{
	struct spec_run r;
	victim(&r, (const char *[]){"vla", "30000", NULL});
	unsigned long long v[4];
	site_of(r.out, "vla_a_here", v);
	ck_assert_uint_eq(v[2], own(r.out, "a-count"));
	ck_assert_uint_eq(v[0], own(r.out, "a-count"));
	ck_assert_uint_eq(v[1], own(r.out, "a-bytes"));
	site_of(r.out, "vla_b_here", v);
	ck_assert_uint_eq(v[2], own(r.out, "b-count"));
	ck_assert_uint_eq(v[1], own(r.out, "b-bytes"));
	ck_assert_uint_eq(own(r.out, "a-count") + own(r.out, "b-count"), 30000);
	spec_run_free(&r);
}
END_TEST

/* libgcc mallocs while it holds its lock (sorting frame information
 * that was registered at run time): the tracker does not unwind that
 * malloc through libgcc, which would wait for the lock for ever (it did,
 * before). */
START_TEST(malloc_inside_libgcc_unwinder)
{
	struct spec_run r;
	victim(&r, (const char *[]){"registered", "1", NULL});
	ck_assert_uint_eq(own(r.out, "found"), 1);
	spec_run_free(&r);
}
END_TEST

/* A signal handler that allocates, run while the thread is inside a
 * tracked malloc: no deadlock, no count, and the leak's counts exact. */
START_TEST(allocation_in_a_signal_handler_inside_the_tracker)
{
	struct spec_run r;
	victim(&r, (const char *[]){"signal", "20000", NULL});
	unsigned long long v[4];
	site_of(r.out, "leak_here", v);
	ck_assert_uint_eq(v[2], 20000);
	ck_assert_uint_eq(v[1], 20000 * 48);
	ck_assert_uint_eq(own(r.out, "hook-calls"), 20000);
	ck_assert_uint_eq(own(r.out, "handler-allocs"), 200);
	ck_assert_msg(strstr(r.out, "on_signal_here") == NULL,
		      "the handler's allocations were tracked:\n%s", r.out);
	spec_run_free(&r);
}
END_TEST

/* dlopen and dlclose on one thread while others allocate from new
 * stacks: no deadlock, and every allocation counted once. */
START_TEST(dlopen_while_threads_allocate)
{
	struct spec_run r;
	victim(&r, (const char *[]){"dlopen", "300", NULL});
	unsigned long long v[4];
	site_of(r.out, "deep_here", v);
	ck_assert_uint_eq(own(r.out, "opened"), 300);
	ck_assert_uint_eq(v[2], own(r.out, "deep-allocs"));
	ck_assert_uint_eq(v[2], 80000);
	ck_assert_uint_eq(v[3], 80000);
	ck_assert_uint_eq(v[0], 0);
	spec_run_free(&r);
}
END_TEST

START_TEST(eight_threads_lose_no_count)
{
	struct spec_run r;
	victim(&r, (const char *[]){"threads", "8", "100000", NULL});
	unsigned long long v[4];
	site_of(r.out, "thread_here", v);
	ck_assert_uint_eq(v[2], own(r.out, "allocs"));
	ck_assert_uint_eq(v[2], 800000);
	ck_assert_uint_eq(v[3], own(r.out, "frees"));
	ck_assert_uint_eq(v[0], 400000);
	spec_run_free(&r);
}
END_TEST

/* Four waves of sixteen threads: more threads than cores and than any
 * fixed set of counters, each wave taking the counter tables the last one
 * left at exit. */
START_TEST(waves_of_threads_lose_no_count)
{
	struct spec_run r;
	victim(&r, (const char *[]){"waves", "4", "16", NULL});
	unsigned long long v[4];
	site_of(r.out, "thread_here", v);
	ck_assert_uint_eq(v[2], own(r.out, "allocs"));
	ck_assert_uint_eq(v[2], 4 * 16 * 20000);
	ck_assert_uint_eq(v[3], own(r.out, "frees"));
	ck_assert_uint_eq(v[0], 4 * 16 * 10000);
	ck_assert_uint_eq(v[1] > 0, 1);
	spec_run_free(&r);
}
END_TEST

START_TEST(fork_while_tracking)
{
	struct spec_run r;
	victim(&r, (const char *[]){"fork", "500", NULL});
	ck_assert_uint_eq(own(r.out, "child-status"), 0);
	const char *child = strstr(r.out, "child:\n");
	const char *parent = strstr(r.out, "parent:\n");
	ck_assert_ptr_nonnull(child);
	ck_assert_ptr_nonnull(parent);
	unsigned long long v[4];
	/* The child inherited the parent's 500 and made 500 of its own. */
	char *c = strndup(child, (size_t)(parent > child ? parent - child
						       : (long)strlen(child)));
	site_of(c, "leak_here", v);
	ck_assert_uint_eq(v[0], 1000);
	ck_assert_uint_eq(v[1], 100000);
	free(c);
	/* The parent's own 500 only; its threads went on. */
	site_of(parent, "leak_here", v);
	ck_assert_uint_eq(v[0], 500);
	site_of(parent, "thread_here", v);
	ck_assert_uint_eq(v[2], 800000);
	ck_assert_uint_eq(v[0], 400000);
	spec_run_free(&r);
}
END_TEST

START_TEST(switched_on_and_off_repeatedly)
{
	struct spec_run r;
	victim(&r, (const char *[]){"onoff", "300", NULL});
	ck_assert_uint_eq(own(r.out, "bad-rounds"), 0);
	spec_run_free(&r);
}
END_TEST

/* malloc, calloc, realloc (of a block made while tracking, and of one
 * made before) and posix_memalign while tracking, one freed; then a
 * realloc after a stop and frees in a new generation: contents, usable
 * sizes and alignment hold, and the site's counts are exact (the first
 * realloc frees the 1000-byte block). */
START_TEST(blocks_keep_their_contents_and_counts)
{
	struct spec_run r;
	unsigned long long v[4];
	victim(&r, (const char *[]){"blocks", "1", NULL});
	site_of(r.out, "blocks_here", v);
	ck_assert_uint_eq(v[0], 3);
	ck_assert_uint_eq(v[1], 50000 + 4096 + 200);
	ck_assert_uint_eq(v[2], 5);
	ck_assert_uint_eq(v[3], 2);
	ck_assert_uint_eq(own(r.out, "bad"), 0);
	spec_run_free(&r);
}
END_TEST

/* Real programs run under it unharmed, with tracking on from the start:
 * ruby (threads, fork, dlopen of extensions). */
START_TEST(ruby_runs_under_tracking)
{
	const char *argv[] = {"ruby", "-e",
		"t = 4.times.map { Thread.new { 20000.times { 'x' * 300 } } }; "
		"t.each(&:join); pid = fork { require 'json'; "
		"exit!(JSON.generate([1]) == '[1]' ? 0 : 1) }; "
		"Process.wait(pid); require 'fiddle'; "
		"puts $?.exitstatus", NULL};
	const char *env[] = {preload_env(), "VMHEAP_NATIVE_TRACK=1", NULL};
	struct spec_run r;
	ck_assert_int_eq(spec_run(argv, env, NULL, 60000, &r), 0);
	ck_assert_msg(r.status == 0, "ruby: %d %s", r.status, r.err);
	ck_assert_str_eq(r.out, "0\n");
	spec_run_free(&r);
}
END_TEST

/* The library exports the allocator's entry points and its API, and
 * nothing else; so does the build for dlopen (native/got.c). */
START_TEST(exports_only_the_allocator_and_api)
{
	static const char *const libs[] = {"lib/libvmheap-malloc.so",
					   "lib/libvmheap-malloc-attach.so"};
	for (int i = 0; i < 2; i++) {
		char cmd[4096];
		snprintf(cmd, sizeof cmd,
			 "nm -D --defined-only %s | awk 'NF >= 3 {print $3}' "
			 "| sort | tr '\\n' ' '",
			 spec_build(libs[i]));
		const char *argv[] = {"sh", "-c", cmd, NULL};
		struct spec_run r;
		ck_assert_int_eq(spec_run(argv, NULL, NULL, 20000, &r), 0);
		ck_assert_str_eq(
		    r.out, "aligned_alloc calloc dlclose free malloc memalign "
			   "posix_memalign pvalloc realloc reallocarray valloc "
			   "vmheap_native_get_totals "
			   "vmheap_native_modules vmheap_native_output_name "
			   "vmheap_native_own_thread vmheap_native_route "
			   "vmheap_native_scan vmheap_native_scan_prepare "
			   "vmheap_native_set_location "
			   "vmheap_native_stacks vmheap_native_start "
			   "vmheap_native_stop vmheap_native_tracking ");
		spec_run_free(&r);
	}
}
END_TEST

/* The attach build dlopen'ed into a program running four allocating
 * threads, routed through the GOT (no preload): exact counts for what is
 * made after, blocks from before freed uncounted, tracked blocks freed
 * after a stop, a second start and stop; spec/native/routed.c. */
START_TEST(routed_while_threads_allocate)
{
	const char *argv[] = {spec_build("spec/native_routed"),
			      spec_build("lib/libvmheap-malloc-attach.so"),
			      NULL};
	const char *env[] = {"LD_PRELOAD", "VMHEAP_NATIVE_TRACK", NULL};
	struct spec_run r;

	if (SPEC_SANITIZED)
		return; /* the program is not instrumented, the suite is */
	ck_assert_int_eq(spec_run(argv, env, NULL, 120000, &r), 0);
	ck_assert_msg(r.status == 0 && !strncmp(r.out, "ok ", 3),
		      "%d: %s%s", r.status, r.out, r.err);
	spec_run_free(&r);
}
END_TEST

/* vmheap-run appends the tracker to an existing LD_PRELOAD, and the
 * program it starts is tracked (the victim finds the API). */
START_TEST(run_appends_to_ld_preload)
{
	const char *argv[] = {spec_bin("vmheap-run"), "sh", "-c",
			      "echo \"$LD_PRELOAD\"", NULL};
	const char *env[] = {"LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6",
			     NULL};
	struct spec_run r;
	ck_assert_int_eq(spec_run(argv, env, NULL, 20000, &r), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strncmp(r.out, "/lib/x86_64-linux-gnu/libm.so.6:", 32) == 0 &&
			      strstr(r.out, "/libvmheap-malloc.so:") != NULL &&
			      strstr(r.out, "/libvmheap-native-agent.so\n") != NULL,
		      "LD_PRELOAD=%s", r.out);
	spec_run_free(&r);

	const char *v[] = {spec_bin("vmheap-run"),
			   spec_build("spec/native_victim"), "leak", "10", "7",
			   NULL};
	ck_assert_int_eq(spec_run(v, NULL, NULL, 20000, &r), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "site 10 70 10 0 leak_here\n"));
	spec_run_free(&r);
}
END_TEST

/* For ruby it also loads the agent: the VM's discovery file appears. */
START_TEST(run_loads_the_agent_into_ruby)
{
	if (SPEC_SANITIZED)
		return; /* the instrumented extension needs ASan's runtime first */
	const char *dir = spec_mkdtemp("run");
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "VMHEAP_AGENT_TMPDIR=%s", dir);
	const char *argv[] = {spec_bin("vmheap-run"), "ruby", "-e",
		"f = File.join(ENV['VMHEAP_AGENT_TMPDIR'], \"vmheap-agent.#{$$}\"); "
		"50.times { break if File.exist?(f); sleep 0.1 }; "
		"puts File.exist?(f)", NULL};
	const char *env[] = {tmp, NULL};
	struct spec_run r;
	ck_assert_int_eq(spec_run(argv, env, NULL, 30000, &r), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.out, "true\n");
	spec_run_free(&r);
}
END_TEST

/* Without its library it says which file is missing and exits 2. */
START_TEST(run_without_the_library)
{
	const char *argv[] = {spec_bin("vmheap-run"), "true", NULL};
	const char *env[] = {"VMHEAP_MALLOC_LIB=/nonexistent/libvmheap-malloc.so",
			     NULL};
	struct spec_run r;
	ck_assert_int_eq(spec_run(argv, env, NULL, 20000, &r), 0);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "/nonexistent/libvmheap-malloc.so is missing") != NULL,
		      "%s", r.err);
	spec_run_free(&r);
}
END_TEST

/* ------------------------------------------- glibc's own semantics */

/* How semantics_env runs spec/native/semantics.c: without vmheap, under
 * `vmheap-run --track`, or under `vmheap-run --record` (not tracking). */
enum { PLAIN, TRACKED, RECORDED };

/* spec/native/semantics.c without the tracker and under `vmheap-run
 * --track`: the same output, byte for byte. */
static void semantics_env(struct spec_run *r, int how, const char *const *env,
			  const char *mode, const char *arg1, const char *arg2)
{
	const char *argv[10];
	char trace[4096];
	int n = 0, tracked = how == TRACKED;
	/* No agent: its thread's own allocations would move mallinfo2's
	 * process-wide figures that the check compares with glibc's. */
	if (how != PLAIN) {
		argv[n++] = spec_bin("vmheap-run");
		argv[n++] = tracked ? "--track" : "--record";
		if (!tracked) {
			snprintf(trace, sizeof trace, "%s/t",
				 spec_mkdtemp("semantics-record"));
			argv[n++] = trace;
		}
		argv[n++] = "--no-agent";
	}
	argv[n++] = spec_build("spec/native_semantics");
	argv[n++] = mode;
	argv[n++] = arg1;
	argv[n++] = arg2;
	argv[n] = NULL;
	ck_assert_int_eq(spec_run(argv, env, NULL, 120000, r), 0);
	ck_assert_msg(strstr(r->err, tracked ? "tracking 1\n" : "tracking 0\n")
			      != NULL, "%s", r->err);
}

static void semantics(struct spec_run *r, int how, const char *mode,
		      const char *arg1, const char *arg2)
{
	semantics_env(r, how, NULL, mode, arg1, arg2);
}

/* realloc(p, 0) frees p and returns NULL (100,000 of them hold no
 * memory); malloc_usable_size, mallinfo2, malloc_trim, the overflows of
 * reallocarray, realloc, calloc and malloc (NULL, ENOMEM, the block as it
 * was) and memalign, aligned_alloc, posix_memalign, valloc, pvalloc with
 * odd alignments answer as glibc does without the tracker. */
START_TEST(glibc_semantics_hold_under_tracking)
{
	struct spec_run plain, tracked;
	semantics(&plain, PLAIN, "check", NULL, NULL);
	ck_assert_msg(plain.status == 0, "%s", plain.out);
	ck_assert_ptr_nonnull(strstr(plain.out, "realloc(p, 0): NULL, in use -"));
	ck_assert_ptr_nonnull(strstr(plain.out,
		"100000 x realloc(malloc(5000), 0): in use +0\n"));
	semantics(&tracked, TRACKED, "check", NULL, NULL);
	/* From the start of the first line that differs, if any. */
	size_t at = 0;
	while (plain.out[at] != '\0' && plain.out[at] == tracked.out[at])
		at++;
	while (at > 0 && plain.out[at - 1] != '\n')
		at--;
	const char *a = plain.out + at, *b = tracked.out + at;
	ck_assert_msg(strcmp(a, b) == 0, "without the tracker:\n%.200s\nunder it:\n%.200s",
		      a, b);
	ck_assert_int_eq(tracked.status, 0);
	spec_run_free(&plain);
	spec_run_free(&tracked);
}
END_TEST

/* A block the tracker hands out is cleared of its earlier life up to
 * 32 KiB (the leak scan takes no stale word for a pointer), above it not;
 * VMHEAP_NATIVE_CLEAR sets the limit, 0 turns it off.  Without the
 * tracker glibc gives each block back as it was freed. */
START_TEST(fresh_blocks_are_cleared_up_to_the_limit)
{
	static const struct {
		int how;
		const char *env; /* VMHEAP_NATIVE_CLEAR=..., or NULL */
		const char *want;
	} rows[] = {
	    {PLAIN, NULL,
	     "1000 bytes: same stale\n32000 bytes: same stale\n"
	     "40000 bytes: same stale\n"},
	    {TRACKED, NULL,
	     "1000 bytes: same cleared\n32000 bytes: same cleared\n"
	     "40000 bytes: same stale\n"},
	    {TRACKED, "VMHEAP_NATIVE_CLEAR=0",
	     "1000 bytes: same stale\n32000 bytes: same stale\n"
	     "40000 bytes: same stale\n"},
	    {TRACKED, "VMHEAP_NATIVE_CLEAR=2000",
	     "1000 bytes: same cleared\n32000 bytes: same stale\n"
	     "40000 bytes: same stale\n"},
	    /* Recording alone leaves the program's memory as glibc gives
	     * it, unless asked to clear. */
	    {RECORDED, NULL,
	     "1000 bytes: same stale\n32000 bytes: same stale\n"
	     "40000 bytes: same stale\n"},
	    {RECORDED, "VMHEAP_NATIVE_CLEAR=32768",
	     "1000 bytes: same cleared\n32000 bytes: same cleared\n"
	     "40000 bytes: same stale\n"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		const char *env[] = {rows[i].env, NULL};
		struct spec_run r;
		semantics_env(&r, rows[i].how, env, "stale", NULL, NULL);
		ck_assert_msg(r.status == 0 && strstr(r.out, rows[i].want),
			      "row %zu (%s%s): status %d, got\n%s", i,
			      rows[i].how == TRACKED	? "tracked "
			      : rows[i].how == RECORDED ? "recorded "
							: "plain ",
			      rows[i].env ? rows[i].env : "", r.status, r.out);
		spec_run_free(&r);
	}
}
END_TEST

/* A library opened with RTLD_DEEPBIND calls glibc's free and realloc
 * itself: on blocks the program made while tracking (malloc'ed and
 * aligned), and the program frees and reallocs the library's blocks. */
START_TEST(deepbind_library_shares_blocks_with_the_program)
{
	struct spec_run r;
	semantics(&r, TRACKED, "deepbind", spec_build("spec/native_deeplib.so"),
		  "3000");
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_str_eq(r.out, "deepbind: 3000 of 3000 rounds whole\nbad 0\n");
	/* The library's free is glibc's, not the tracker's. */
	ck_assert_msg(strstr(r.err, "separate-free 1\n") != NULL, "%s", r.err);
	spec_run_free(&r);
}
END_TEST

/* ------------------------------------------------------- the console */

/* A ruby under vmheap-run (or not) that mallocs N x 1024 bytes through
 * Fiddle each time it reads a line, and says "done N". */
static const char fiddle_script[] =
	"require 'fiddle'\n"
	"STDOUT.sync = true\n"
	"$kept = []\n"
	"puts 'ready'\n"
	"while (l = STDIN.gets)\n"
	"  n = l.to_i\n"
	"  n.times { $kept << Fiddle.malloc(1024) }\n"
	"  puts \"done #{n}\"\n"
	"end\n";

/* A Ruby VM or a victim program under test is a struct spec_native
 * (spec_native_start; rb_start fills its p and dir only). */

static void rb_start(struct spec_native *r, int with_tracker)
{
	char script[700], tmpdir[600];
	snprintf(r->dir, sizeof r->dir, "%s", spec_mkdtemp("rb"));
	snprintf(script, sizeof script, "%s/program.rb", r->dir);
	spec_write_text(script, fiddle_script);
	snprintf(tmpdir, sizeof tmpdir, "VMHEAP_AGENT_TMPDIR=%s", r->dir);
	const char *tracked[] = {spec_bin("vmheap-run"), "ruby", script, NULL};
	char ext[700];
	snprintf(ext, sizeof ext, "%s", spec_build("ruby"));
	if (with_tracker == 2) {
		/* the extension alone, no tracker near it */
		char cp[2200];
		snprintf(ext, sizeof ext, "%s/ext", r->dir);
		snprintf(cp, sizeof cp, "mkdir '%s' && cp '%s' '%s/'", ext,
			 spec_build("ruby/vmheap_agent.so"), ext);
		const char *sh[] = {"sh", "-c", cp, NULL};
		struct spec_run c;
		ck_assert_int_eq(spec_run(sh, NULL, NULL, 20000, &c), 0);
		ck_assert_int_eq(c.status, 0);
		spec_run_free(&c);
	}
	const char *plain[] = {"ruby", "-I", ext, "-rvmheap_agent",
			       script, NULL};
	const char *env[] = {tmpdir, "VMHEAP_AGENT_PORT", "VMHEAP_MALLOC_LIB",
			     "LD_LIBRARY_PATH", NULL};
	struct spec_spawn o = {0};
	o.argv = with_tracker == 1 ? tracked : plain;
	o.env = env;
	o.dir = r->dir;
	spec_proc_start(&r->p, &o, 1);
	ck_assert_msg(spec_proc_wait_for(&r->p, "ready\n", 30000),
		      "ruby did not start: %s", r->p.buf);
	struct vmheap_agent_info info;
	char err[700];
	ck_assert_msg(spec_discovery_wait(r->dir, r->p.pid, &info, 30000, err,
					  sizeof err) == 0,
		      "discovery: %s", err);
}

/* vmheap-console -p PID --tmpdir DIR --json -e C1 [-e C2] */
static void console(struct spec_native *r, struct spec_run *out, const char *c1,
		    const char *c2)
{
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)r->p.pid);
	const char *argv[] = {spec_bin("vmheap-console"), "-p", pid, "--tmpdir",
			      r->dir, "--json", "-e", c1, c2 ? "-e" : NULL, c2,
			      NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 30000, out), 0);
}

static void rb_alloc(struct spec_native *r, const char *n)
{
	char want[64];
	snprintf(want, sizeof want, "done %s\n", n);
	r->p.len = 0;
	r->p.buf[0] = '\0'; /* strstr reads up to the NUL */
	spec_proc_write(&r->p, n);
	spec_proc_write(&r->p, "\n");
	ck_assert_msg(spec_proc_wait_for(&r->p, want, 60000), "%s", r->p.buf);
}

START_TEST(console_switches_tracking)
{
	if (SPEC_SANITIZED)
		return; /* ASan's malloc comes first in an instrumented agent */
	struct spec_native r;
	struct spec_run o;
	rb_start(&r, 1);
	rb_alloc(&r, "100"); /* before tracking: not counted */
	console(&r, &o, "get config.native.track", NULL);
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	ck_assert_str_eq(o.out, "false\n");
	spec_run_free(&o);
	console(&r, &o, "set config.native.track true", NULL);
	ck_assert_str_eq(o.out, "true\n");
	spec_run_free(&o);
	rb_alloc(&r, "3000");
	console(&r, &o, "get system.native.sites", NULL);
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	/* The top site: the 3000 Fiddle.malloc(1024), exactly. */
	const char *top = "[{\"live_bytes\":3072000,\"live_count\":3000,"
			  "\"allocs\":3000,\"frees\":0,\"site\":";
	ck_assert_msg(strncmp(o.out, top, strlen(top)) == 0, "%s", o.out);
	/* named from the files, as vmheap-histo --native names them */
	ck_assert_msg(strstr(o.out, "< fiddle.so+0x") != NULL, "%s", o.out);
	spec_run_free(&o);
	/* Off forgets; on again starts from nothing. */
	console(&r, &o, "set config.native.track false", "get system.native.sites");
	ck_assert_int_eq(o.status, 1);
	ck_assert_msg(strstr(o.err, "native tracking is off") != NULL, "%s", o.err);
	spec_run_free(&o);
	console(&r, &o, "set config.native.track on", NULL);
	spec_run_free(&o);
	rb_alloc(&r, "7");
	console(&r, &o, "get system.native.sites", NULL);
	/* (the agent's own read buffer is no row: vmheap's own memory) */
	ck_assert_msg(strstr(o.out, "vmheap_agent") == NULL, "%s", o.out);
	const char *row = strstr(o.out, "{\"live_bytes\":7168,\"live_count\":7,"
				       "\"allocs\":7,\"frees\":0,\"site\":");
	ck_assert_msg(row != NULL, "%s", o.out);
	ck_assert_msg(strstr(row, "< fiddle.so+0x") != NULL, "%s", row);
	spec_run_free(&o);
	spec_kill(r.p.pid);
}
END_TEST

/* A ruby started with -rvmheap_agent and no vmheap-run: `set
 * config.native.track true` loads the tracker built for dlopen and
 * tracks (spec/attach_test.c tests what it counts); an agent whose
 * directory has no tracker beside it says it cannot load one, and how to
 * get one. */
START_TEST(console_without_the_tracker)
{
	if (SPEC_SANITIZED)
		return; /* the agent needs ASan's runtime preloaded there */
	struct spec_native r;
	struct spec_run o;
	rb_start(&r, 0);
	console(&r, &o, "set config.native.track true", NULL);
	ck_assert_msg(o.status == 0 && !strcmp(o.out, "true\n"), "%d: %s%s",
		      o.status, o.out, o.err);
	spec_run_free(&o);
	rb_alloc(&r, "7");
	console(&r, &o, "get system.native.sites", NULL);
	ck_assert_msg(strstr(o.out, "{\"live_bytes\":7168,\"live_count\":7,"
				    "\"allocs\":7,\"frees\":0,\"site\":") != NULL,
		      "%s", o.out);
	spec_run_free(&o);
	spec_kill(r.p.pid);

	rb_start(&r, 2);
	console(&r, &o, "set config.native.track true", NULL);
	ck_assert_int_eq(o.status, 1);
	ck_assert_msg(strstr(o.err, "the malloc tracker cannot be loaded into "
				    "this VM") &&
			  strstr(o.err, "libvmheap-malloc-attach.so") &&
			  strstr(o.err, "vmheap-run"),
		      "%s", o.err);
	spec_run_free(&o);
	console(&r, &o, "get config.native.track", NULL);
	ck_assert_str_eq(o.out, "false\n");
	spec_run_free(&o);
	spec_kill(r.p.pid);
}
END_TEST

/* ------------------------------------------------------------- dumps */

/* The leaker (a C VM with the agent) under vmheap-run. */
static void leaker_start(struct spec_native *r)
{
	spec_native_start(
	    r, NULL,
	    ARGS(spec_bin("vmheap-run"), spec_build("spec/native_leaker")),
	    NULL);
}

/* Send a command line, wait for its "ok". */
static void say(struct spec_native *r, const char *cmd)
{
	r->p.len = 0;
	r->p.buf[0] = '\0'; /* strstr reads up to the NUL */
	spec_proc_write(&r->p, cmd);
	spec_proc_write(&r->p, "\n");
	ck_assert_msg(spec_proc_wait_for(&r->p, "ok\n", 60000), "%s", r->p.buf);
}

static void dump(struct spec_native *r, const char *name)
{
	char cmd[256];
	struct spec_run o;
	snprintf(cmd, sizeof cmd, "set system.memory.dump %s", name);
	console(r, &o, cmd, NULL);
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	spec_run_free(&o);
}

/* vmheap-histo / vmheap-diff (tool) --native --bytes (exact figures)
 * with `a` and `b` (may be NULL) in r->dir. */
static void native_report(struct spec_native *r, struct spec_run *o,
			  const char *tool, const char *opt, const char *a,
			  const char *b)
{
	char pa[700], pb[700];
	snprintf(pa, sizeof pa, "%s/%s", r->dir, a);
	if (b)
		snprintf(pb, sizeof pb, "%s/%s", r->dir, b);
	*o = spec_tool(tool,
		       ARGS("--native", "--bytes", opt ? opt : pa,
			    opt ? pa : (b ? pb : NULL), opt && b ? pb : NULL));
}

/* The first row of a text report (after the "count  bytes  site"
 * header). */
static const char *first_row(const char *out)
{
	const char *h = strstr(out, "count");
	ck_assert_msg(h != NULL, "%s", out);
	const char *nl = strchr(h, '\n');
	ck_assert_ptr_nonnull(nl);
	return nl + 1;
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

START_TEST(diff_names_the_leaking_function)
{
	if (SPEC_SANITIZED)
		return; /* ASan's malloc comes first in an instrumented VM */
	struct spec_native r;
	struct spec_run o;
	leaker_start(&r);
	dump(&r, "plain.vmheap"); /* before tracking: no native section */
	console(&r, &o, "set config.native.track true", NULL);
	spec_run_free(&o);
	dump(&r, "a.vmheap");
	say(&r, "leak 1000 1234");
	say(&r, "churn 20000"); /* in balance: no growth */
	dump(&r, "b.vmheap");
	say(&r, "free 400");    /* freed in another function */
	dump(&r, "c.vmheap");
	spec_kill(r.p.pid);

	/* The top row: the function, file:line, the leaked bytes exact. */
	native_report(&r, &o, "vmheap-diff", NULL, "a.vmheap", "b.vmheap");
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	const char *row = first_row(o.out);
	ck_assert_msg(starts(row, "+1000  +1234000  leak_in_here (leaker.c:33) < "
				  "main (leaker.c:"),
		      "%s", o.out);
	ck_assert_msg(strstr(o.out, "churn_in_here") == NULL, "%s", o.out);
	spec_run_free(&o);

	/* Without --bytes, the same row in human units (1234000 bytes). */
	{
		char pa[700], pb[700];
		snprintf(pa, sizeof pa, "%s/a.vmheap", r.dir);
		snprintf(pb, sizeof pb, "%s/b.vmheap", r.dir);
		const char *argv[] = {spec_bin("vmheap-diff"), "--native", pa,
				      pb, NULL};
		ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &o), 0);
		ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
		ck_assert_msg(strstr(first_row(o.out),
				     "+1.18 MiB  leak_in_here (leaker.c:33)") ==
				  first_row(o.out) + strlen("+1000  "),
			      "%s", o.out);
		spec_run_free(&o);
	}

	native_report(&r, &o, "vmheap-diff", NULL, "b.vmheap", "c.vmheap");
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	ck_assert_msg(strstr(o.out, "\n -400  -493600  leak_in_here (leaker.c:33) < ") != NULL,
		      "%s", o.out);
	spec_run_free(&o);

	native_report(&r, &o, "vmheap-histo", NULL, "c.vmheap", NULL);
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	ck_assert_msg(starts(first_row(o.out), "  600  740400  leak_in_here (leaker.c:33)"),
		      "%s", o.out);
	spec_run_free(&o);

	native_report(&r, &o, "vmheap-diff", "--format=csv", "a.vmheap",
		      "b.vmheap");
	ck_assert_msg(starts(o.out, "count_delta,bytes_delta,site\n1000,1234000,leak_in_here (leaker.c:33) < "),
		      "%s", o.out);
	spec_run_free(&o);

	/* A dump without the section: said, exit status 1. */
	native_report(&r, &o, "vmheap-histo", NULL, "plain.vmheap", NULL);
	ck_assert_int_eq(o.status, 1);
	ck_assert_msg(strstr(o.err, "plain.vmheap has no native section") != NULL,
		      "%s", o.err);
	spec_run_free(&o);
	native_report(&r, &o, "vmheap-diff", NULL, "plain.vmheap", "b.vmheap");
	ck_assert_int_eq(o.status, 1);
	ck_assert_msg(strstr(o.err, "has no native section") != NULL, "%s", o.err);
	spec_run_free(&o);
}
END_TEST

/* Every dump's header has the RSS and malloc's figures: histo prints
 * them, and diff warns when they grew while the heap did not. */
START_TEST(memory_summary_and_warning)
{
	if (SPEC_SANITIZED)
		return;
	struct spec_native r;
	struct spec_run o;
	leaker_start(&r);
	dump(&r, "a.vmheap");
	say(&r, "leak 4000 4096"); /* 16 MB of malloc, nothing in the heap */
	dump(&r, "b.vmheap");
	spec_kill(r.p.pid);
	char pa[700], pb[700];
	snprintf(pa, sizeof pa, "%s/a.vmheap", r.dir);
	snprintf(pb, sizeof pb, "%s/b.vmheap", r.dir);
	const char *h[] = {spec_bin("vmheap-histo"), pb, NULL};
	ck_assert_int_eq(spec_run(h, NULL, NULL, 30000, &o), 0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out, "\nmemory: RSS ") != NULL &&
			      strstr(o.out, "; the heap's objects 0 bytes (0.0% of RSS); "
					    "malloc holds ") != NULL,
		      "%s", o.out);
	spec_run_free(&o);
	const char *d[] = {spec_bin("vmheap-diff"), pa, pb, NULL};
	ck_assert_int_eq(spec_run(d, NULL, NULL, 30000, &o), 0);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out, "\nmemory: RSS +") != NULL, "%s", o.out);
	ck_assert_msg(strstr(o.err, "vmheap-diff: warning: RSS grew by ") != NULL &&
			      strstr(o.err, "while the VM heap's objects grew by 0 bytes: "
					    "the growth is outside the VM heap; find it with "
					    "vmheap-diff --native") != NULL,
		      "%s", o.err);
	spec_run_free(&o);
}
END_TEST

/* A ruby program under vmheap-run (with `-I incdir` when not NULL) that
 * answers "ok" to each line, tracked from the start (`vmheap-run --track`)
 * or from the console once it is ready. */
static void tracked_ruby_from(struct spec_native *r, const char *tag,
			      const char *script, const char *incdir,
			      int from_start)
{
	char path[700];
	snprintf(r->dir, sizeof r->dir, "%s", spec_mkdtemp(tag));
	snprintf(path, sizeof path, "%s/program.rb", r->dir);
	spec_write_text(path, script);
	const char *argv[8];
	int n = 0;
	argv[n++] = spec_bin("vmheap-run");
	if (from_start)
		argv[n++] = "--track";
	argv[n++] = "ruby";
	if (incdir) {
		argv[n++] = "-I";
		argv[n++] = incdir;
	}
	argv[n++] = path;
	argv[n] = NULL;
	spec_native_start(r, r->dir, argv, NULL);
	if (from_start)
		return;
	struct spec_run o;
	console(r, &o, "set config.native.track true", NULL);
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	spec_run_free(&o);
}

/* The same, tracked from the console once it is ready. */
static void tracked_ruby(struct spec_native *r, const char *tag,
			 const char *script, const char *incdir)
{
	tracked_ruby_from(r, tag, script, incdir, 0);
}

/* Fiddle.malloc(1024) 100,000 times in real ruby, 50,000 freed: the diff
 * shows 51,200,000 bytes at Fiddle's call site and at the Ruby line that
 * called it (the Ruby host's location hook), line 8 of the script; so
 * does vmheap-histo --native of the second dump. */
START_TEST(fiddle_leak_in_ruby)
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
	struct spec_native r;
	struct spec_run o;
	tracked_ruby(&r, "fiddle", script, NULL);
	dump(&r, "a.vmheap");
	say(&r, "leak 100000");
	say(&r, "free 50000");
	dump(&r, "b.vmheap");
	spec_kill(r.p.pid);
	native_report(&r, &o, "vmheap-diff", NULL, "a.vmheap", "b.vmheap");
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	ck_assert_msg(starts(first_row(o.out), "+50000  +51200000  "), "%s", o.out);
	ck_assert_msg(strstr(first_row(o.out), "fiddle.so") != NULL, "%s", o.out);
	char want[700], row[4096];
	snprintf(want, sizeof want, " < %s/program.rb:8", r.dir);
	snprintf(row, sizeof row, "%.*s",
		 (int)strcspn(first_row(o.out), "\n"), first_row(o.out));
	ck_assert_msg(strlen(row) > strlen(want) &&
			      !strcmp(row + strlen(row) - strlen(want), want),
		      "the top row does not end in \"%s\":\n%s", want, o.out);
	spec_run_free(&o);
	/* One dump's live sites: the 50,000 kept, at the same line. */
	native_report(&r, &o, "vmheap-histo", NULL, "b.vmheap", NULL);
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	ck_assert_msg(starts(first_row(o.out), "50000  51200000  "), "%s", o.out);
	snprintf(row, sizeof row, "%.*s",
		 (int)strcspn(first_row(o.out), "\n"), first_row(o.out));
	ck_assert_msg(!strcmp(row + strlen(row) - strlen(want), want),
		      "the top row does not end in \"%s\":\n%s", want, o.out);
	spec_run_free(&o);
}
END_TEST

/* A C extension loaded into real ruby leaks in leaky_keep(): the diff
 * names it and its file:line at the top, with the bytes exact. */
START_TEST(c_extension_leak_in_ruby)
{
	if (SPEC_SANITIZED)
		return;
	static const char script[] =
		"require 'leaky'\n"
		"STDOUT.sync = true\n"
		"puts 'ready'\n"
		"while (l = STDIN.gets)\n"
		"  w, n = l.split\n"
		"  if w == 'leak' then Leaky.leak(n.to_i, 3000) else Leaky.release(n.to_i) end\n"
		"  puts 'ok'\n"
		"end\n";
	struct spec_native r;
	struct spec_run o;
	tracked_ruby(&r, "leaky", script, spec_build("spec/leaky"));
	dump(&r, "a.vmheap");
	say(&r, "leak 2000");
	say(&r, "release 500");
	dump(&r, "b.vmheap");
	spec_kill(r.p.pid);
	native_report(&r, &o, "vmheap-diff", NULL, "a.vmheap", "b.vmheap");
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	ck_assert_msg(starts(first_row(o.out), "+1500  +4500000  leaky_keep (leaky.c:20) < "),
		      "%s", o.out);
	spec_run_free(&o);
}
END_TEST

/* `vmheap-histo --native --leaks --format json` of every site of the dump
 * `name` in `dir`, parsed (free with json_free); its run in *o (release
 * with spec_run_free).  Fails the test when the tool fails. */
static struct jval *leaks_report(const char *dir, const char *name,
				 struct spec_run *o)
{
	char path[700];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	const char *argv[] = {spec_bin("vmheap-histo"),
			      "--native",
			      "--leaks",
			      "--format",
			      "json",
			      "--top",
			      "100000",
			      path,
			      NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 180000, o), 0);
	ck_assert_msg(o->status == 0,
		      "vmheap-histo exited %d after %.1f s: %.3000s%.1000s",
		      o->status, o->seconds, o->out, o->err);
	struct jval *j = json_parse(o->out);
	ck_assert_msg(j != NULL, "%.3000s", o->out);
	return j;
}

/* The sum of `key` over the sites of a `vmheap-histo --native --leaks
 * --format json` report whose site ends in `suffix`. */
static long long leak_sum(const struct jval *j, const char *suffix,
			  const char *key)
{
	const struct jval *sites = json_get(j, "sites");
	long long sum = 0;
	ck_assert_ptr_nonnull(sites);
	for (size_t i = 0; i < sites->n; i++) {
		const struct jval *site = json_get(sites->items[i], "site");
		const struct jval *v = json_get(sites->items[i], key);
		ck_assert_ptr_nonnull(site);
		ck_assert_ptr_nonnull(v);
		size_t len = strlen(site->str);
		if (len >= strlen(suffix) &&
		    !strcmp(site->str + len - strlen(suffix), suffix))
			sum += v->inum;
	}
	return sum;
}

/* A C extension in real ruby forgets 10,000 blocks at one Ruby line and
 * keeps 10,000 at the next, tracked from the start or switched on once
 * it runs: the leak scan of a dump calls the second line's all reachable
 * and none leaked, and the first line's all leaked. */
static void forgets_and_keeps(int from_start)
{
	static const char script[] =
		"require 'leaky'\n"
		"STDOUT.sync = true\n"
		"puts 'ready'\n"
		"while (l = STDIN.gets)\n"
		"  w, n = l.split\n"
		"  Leaky.forget(n.to_i, 100) if w == 'forget'\n"
		"  Leaky.leak(n.to_i, 100) if w == 'keep'\n"
		"  puts 'ok'\n"
		"end\n";
	struct spec_native r;
	struct spec_run o;
	char line6[700], line7[700];
	tracked_ruby_from(&r, "leaky", script, spec_build("spec/leaky"),
			  from_start);
	say(&r, "forget 10000");
	say(&r, "keep 10000");
	dump(&r, "leaks.vmheap");
	spec_kill(r.p.pid);
	struct jval *j = leaks_report(r.dir, "leaks.vmheap", &o);
	snprintf(line6, sizeof line6, " < %s/program.rb:6", r.dir);
	snprintf(line7, sizeof line7, " < %s/program.rb:7", r.dir);
	long long forgot = leak_sum(j, line6, "leaked_count");
	long long possible = leak_sum(j, line6, "possible_count");
	long long reached = leak_sum(j, line6, "reachable_count");
	/* (the figures, for native/README.md's table) */
	fprintf(stderr,
		"forgets_and_keeps(%s): forgetting line %lld leaked, "
		"%lld possibly, %lld reachable\n",
		from_start ? "--track" : "console", forgot, possible, reached);
	/* All 10,000: no stale word names one (native/README.md, "The leak
	 * scan": what the scan leaves out, what the Ruby host zeroes in the
	 * dump's child, what the tracker clears; at first 29-44 a run read
	 * possibly leaked or reachable). */
	ck_assert_msg(forgot == 10000,
		      "%lld leaked, %lld possibly, %lld reachable:\n%.3000s",
		      forgot, possible, reached, o.out);
	ck_assert_msg(leak_sum(j, line6, "indirect_count") == 0, "%.3000s",
		      o.out);
	/* every forgotten block classified (and Ruby's own few allocations
	 * at that line, its method cache, all reachable) */
	long long all = forgot + possible + reached;
	ck_assert_msg(all >= 10000 && all <= 10010, "%lld:\n%.3000s", all,
		      o.out);
	ck_assert_msg(leak_sum(j, line7, "leaked_count") == 0 &&
			  leak_sum(j, line7, "possible_count") == 0 &&
			  leak_sum(j, line7, "indirect_count") == 0,
		      "%.3000s", o.out);
	/* (and Ruby's own few allocations at that line, its method cache) */
	long long kept = leak_sum(j, line7, "reachable_count");
	ck_assert_msg(kept >= 10000 && kept <= 10100, "%lld:\n%.3000s", kept,
		      o.out);
	json_free(j);
	spec_run_free(&o);
}

START_TEST(c_extension_forgets_and_keeps_in_ruby)
{
	if (SPEC_SANITIZED)
		return;
	forgets_and_keeps(0);
}
END_TEST

START_TEST(c_extension_forgets_and_keeps_tracked_from_start)
{
	if (SPEC_SANITIZED)
		return;
	forgets_and_keeps(1);
}
END_TEST

/* `vmheap-run --track --output leaks.vmheap ruby [-I EXT] program.rb`
 * with `script` as program.rb and `input` on its stdin, in a fresh
 * directory (its path into dir[len]) that is also the agent's, so that
 * each process writes its exit dump there; it must exit 0.  *o is the
 * run, for the caller to free. */
static void ruby_exit_dump(char *dir, size_t len, const char *tag,
			   const char *script, const char *ext,
			   const char *input, struct spec_run *o)
{
	char prog[700], tmp[760], dumps[760];
	snprintf(dir, len, "%s", spec_mkdtemp(tag));
	snprintf(prog, sizeof prog, "%s/program.rb", dir);
	spec_write_text(prog, script);
	snprintf(tmp, sizeof tmp, "VMHEAP_AGENT_TMPDIR=%s", dir);
	snprintf(dumps, sizeof dumps, "VMHEAP_AGENT_DIR=%s", dir);
	const char *env[] = {tmp, dumps, "VMHEAP_AGENT_PORT", NULL};
	const char *argv[9] = {spec_bin("vmheap-run"), "--track", "--output",
			       "leaks.vmheap", "ruby"};
	int n = 5;
	if (ext) {
		argv[n++] = "-I";
		argv[n++] = ext;
	}
	argv[n++] = prog;
	argv[n] = NULL;
	struct spec_spawn sp = {.argv = argv, .env = env, .dir = dir};
	ck_assert_int_eq(spec_run_spawn(&sp, input, 0, 120000, o), 0);
	ck_assert_msg(o->status == 0, "%.3000s%.3000s", o->out, o->err);
}

/* The hold-out shape of issue 25: JSON and ERB at work around a C
 * extension (spec/native/holdout) that forgets 10,000 blocks of 24 to 72
 * bytes, each written by snprintf, at one Ruby line (9) and keeps a list
 * of 10,000 48-byte nodes at another (11); tracked from the start, the
 * dump written at exit (`vmheap-run --output`) or through the console
 * while the program waits.  All 10,000 forgotten read leaked, all 10,000
 * kept reachable (at exit they read 9,965-9,991 leaked before the exit
 * dump moved to the Ruby agent's end proc: native/README.md, "The leak
 * scan"). */
static void holdout_shape(int at_exit)
{
	static const char script[] =
	    "require 'holdout'\n"
	    "require 'json'\n"
	    "require 'erb'\n"
	    "STDOUT.sync = true\n"
	    "data = (1..2000).map { |i| {'id' => i, 'name' => \"x#{i}\" * 3} "
	    "}\n"
	    "puts 'ready'\n"
	    "STDIN.gets\n"
	    "3.times { JSON.parse(JSON.generate(data)); ERB.new(\"<%= 1+2 %> "
	    "<%= 'a'*50 %>\").result }\n"
	    "Holdout.lose(10000)\n"
	    "s = (1..500).map { |i| \"str#{i}\" * 20 }.join(',')\n"
	    "Holdout.hold(10000)\n"
	    "3.times { JSON.parse(JSON.generate(data)) }\n"
	    "puts s.size\n"
	    "puts 'ok'\n"
	    "STDIN.gets\n";
	struct spec_native r;
	struct spec_run o;
	const char *line9 = "/program.rb:9", *line11 = "/program.rb:11";
	if (at_exit) {
		ruby_exit_dump(r.dir, sizeof r.dir, "holdout", script,
			       spec_build("spec/holdout"), "go\n", &o);
		spec_run_free(&o);
	} else {
		tracked_ruby_from(&r, "holdout", script,
				  spec_build("spec/holdout"), 1);
		say(&r, "go");
		dump(&r, "leaks.vmheap");
		spec_kill(r.p.pid);
	}
	struct jval *j = leaks_report(r.dir, "leaks.vmheap", &o);
	long long forgot = leak_sum(j, line9, "leaked_count");
	long long possible = leak_sum(j, line9, "possible_count");
	long long reached = leak_sum(j, line9, "reachable_count");
	long long kept = leak_sum(j, line11, "reachable_count");
	/* (the figures, for native/README.md's table) */
	fprintf(stderr,
		"holdout(%s): losing line %lld leaked, %lld possibly, %lld "
		"reachable; keeping line %lld reachable\n",
		at_exit ? "exit" : "console", forgot, possible, reached, kept);
	ck_assert_msg(forgot == 10000 && possible == 0 &&
			  leak_sum(j, line9, "indirect_count") == 0,
		      "%lld leaked, %lld possibly, %lld reachable:\n%.3000s",
		      forgot, possible, reached, o.out);
	/* (and Ruby's own few allocations at that line, its method cache) */
	ck_assert_msg(reached <= 10, "%lld:\n%.3000s", reached, o.out);
	ck_assert_msg(leak_sum(j, line11, "leaked_count") == 0 &&
			  leak_sum(j, line11, "possible_count") == 0 &&
			  leak_sum(j, line11, "indirect_count") == 0,
		      "%.3000s", o.out);
	ck_assert_msg(kept >= 10000 && kept <= 10010, "%lld:\n%.3000s", kept,
		      o.out);
	json_free(j);
	spec_run_free(&o);
}

START_TEST(c_extension_holdout_shape_at_exit)
{
	if (SPEC_SANITIZED)
		return;
	holdout_shape(1);
}
END_TEST

START_TEST(c_extension_holdout_shape_console)
{
	if (SPEC_SANITIZED)
		return;
	holdout_shape(0);
}
END_TEST

/* A Ruby program that forks a worker, as Unicorn, Puma's cluster mode and
 * Resque do, under `vmheap-run --track --output`: each process's exit
 * dump lists no stack of vmheap's own, though the Ruby agent's thread
 * (vmheap_agent.so) was made by Ruby's rb_thread_create and the dump is
 * written by the preloaded native agent, another module.  In the worker
 * the thread is gone and its 46.7 KiB signal stack is freed by no one:
 * it read as the worker's largest leak, from ruby_worker_start. */
START_TEST(forked_ruby_worker_s_exit_dump_lists_none_of_vmheap_s_stacks)
{
	static const char script[] =
	    "pid = fork { a = []; 1000.times { a << 'x' * 100 } }\n"
	    "Process.wait(pid)\n"
	    "puts \"worker #{pid}\"\n";
	if (SPEC_SANITIZED)
		return;
	char dir[600], child[800];
	struct spec_run o;
	ruby_exit_dump(dir, sizeof dir, "forked-worker", script, NULL, "", &o);
	int pid = 0;
	ck_assert_msg(sscanf(o.out, "worker %d", &pid) == 1, "%s", o.out);
	spec_run_free(&o);
	snprintf(child, sizeof child, "leaks.vmheap.%d", pid);
	const char *names[] = {"leaks.vmheap", child};
	for (int i = 0; i < 2; i++) {
		struct jval *j = leaks_report(dir, names[i], &o);
		const struct jval *sites = json_get(j, "sites");
		ck_assert_ptr_nonnull(sites);
		for (size_t k = 0; k < sites->n; k++) {
			const char *site =
			    json_get(sites->items[k], "site")->str;
			ck_assert_msg(!strstr(site, "ruby_worker.c") &&
					  !strstr(site, "ruby_agent.c") &&
					  !strstr(site, "vmheap_agent.so"),
				      "%s lists vmheap's own stack: %s",
				      names[i], site);
		}
		/* (Ruby's own at exit: 72 bytes in 3 blocks) */
		long long leaked =
		    json_get(json_get(j, "total"), "leaked_bytes")->inum;
		ck_assert_msg(leaked < 4096, "%s: %lld bytes leaked:\n%.3000s",
			      names[i], leaked, o.out);
		json_free(j);
		spec_run_free(&o);
	}
}
END_TEST

/* Ruby's own stdlib at work (JSON, ERB, Psych, Ripper, Zlib), no C
 * extension that leaks: the leak scan finds no leaked byte anywhere.
 * valgrind --leak-check=full at the exit of the same workload (2 rounds,
 * not run here: 69 s) reports 1,956,893 bytes in 13,505 blocks
 * "definitely lost", Ruby's own blocks that it does not free at exit
 * (native/README.md, "The leak scan"). */
START_TEST(ruby_stdlib_leaks_nothing)
{
	if (SPEC_SANITIZED)
		return;
	static const char script[] =
	    "require 'json'\n"
	    "require 'erb'\n"
	    "require 'psych'\n"
	    "require 'ripper'\n"
	    "require 'zlib'\n"
	    "STDOUT.sync = true\n"
	    "data = (1..2000).map { |i| { 'id' => i, 'name' => \"item#{i}\", "
	    "'tags' => %w[a b c], 'nested' => { 'x' => [i, i.to_s] } } }\n"
	    "tpl = ERB.new(\"<% items.each do |it| %><li><%= it['name'] "
	    "%></li>\\n<% end %>\")\n"
	    "src = File.read(File.join(RbConfig::CONFIG['rubylibdir'], "
	    "'erb.rb'))\n"
	    "items = data\n"
	    "puts 'ready'\n"
	    "while (l = STDIN.gets)\n"
	    "  s = JSON.generate(data)\n"
	    "  JSON.parse(s)\n"
	    "  tpl.result(binding)\n"
	    "  Psych.load(Psych.dump(data.first(300)))\n"
	    "  Ripper.sexp(src)\n"
	    "  Zlib::Inflate.inflate(Zlib::Deflate.deflate(s))\n"
	    "  puts 'ok'\n"
	    "end\n";
	struct spec_native r;
	struct spec_run o;
	tracked_ruby(&r, "stdlib", script, NULL);
	say(&r, "round");
	say(&r, "round");
	dump(&r, "stdlib.vmheap");
	spec_kill(r.p.pid);
	char path[700];
	snprintf(path, sizeof path, "%s/stdlib.vmheap", r.dir);
	const char *argv[] = {spec_bin("vmheap-histo"),
			      "--native",
			      "--leaks",
			      "--format",
			      "json",
			      path,
			      NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0, "%.3000s%.1000s", o.out, o.err);
	struct jval *j = json_parse(o.out);
	ck_assert_msg(j != NULL, "%.3000s", o.out);
	const struct jval *total = json_get(j, "total");
	const struct jval *scan = json_get(j, "scan");
	ck_assert_ptr_nonnull(total);
	ck_assert_ptr_nonnull(scan);
	/* the workload's blocks were scanned (not a vacuous zero) */
	ck_assert_int_ge(json_get(scan, "blocks")->inum, 500);
	ck_assert_int_ge(json_get(total, "reachable_count")->inum, 500);
	ck_assert_msg(json_get(total, "leaked_bytes")->inum == 0 &&
			  json_get(total, "leaked_count")->inum == 0 &&
			  json_get(total, "indirect_bytes")->inum == 0,
		      "%.3000s", o.out);
	json_free(j);
	spec_run_free(&o);
}
END_TEST

/* The sum of the bytes of the rows of a `--bytes` text report whose site
 * ends in `suffix`. */
static long long rows_ending(const char *out, const char *suffix)
{
	long long sum = 0;
	for (const char *l = first_row(out); *l; ) {
		const char *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l) : strlen(l);
		long long c, b;
		if (len >= strlen(suffix) &&
		    !strncmp(l + len - strlen(suffix), suffix, strlen(suffix)) &&
		    sscanf(l, " %lld %lld", &c, &b) == 2)
			sum += b;
		if (!eol)
			break;
		l = eol + 1;
	}
	return sum;
}

/* A service of the shape people run: a worker thread serves requests;
 * each leaks 4 KiB in a C extension at one Ruby line (9), makes garbage
 * that GC frees at two others (10, 11) and keeps a small Hash (12),
 * whose table a postponed job later moves out of the transient heap,
 * with the allocation tracer on (its tables are vmheap's own memory).
 * The native diff charges the leak to line 9, exactly; nothing above
 * 32 KiB to any other line (without the charge to "<ruby: postponed
 * job>", the evacuated tables made 141 KiB at line 11); no row names
 * vmheap's own code, whose bytes are counted apart; the live view names
 * the frames as the offline tools do. */
START_TEST(service_native_bytes_at_the_right_line)
{
	if (SPEC_SANITIZED)
		return;
	static const char script[] =
		"require 'leaky'\n"
		"STDOUT.sync = true\n"
		"$kept = []\n"
		"jobs = Queue.new\n"
		"done = Queue.new\n"
		"worker = Thread.new do\n"
		"  while (n = jobs.pop)\n"
		"    n.times do |i|\n"
		"      Leaky.leak(1, 4096)\n"
		"      tmp = {a: i, b: i.to_s, c: [i, i, i, i, i]}\n"
		"      s = 'x' * 200 + i.to_s + tmp.size.to_s\n"
		"      $kept << {k1: i, k2: i + 1, k3: s[0, 10]}\n"
		"    end\n"
		"    done << true\n"
		"  end\n"
		"end\n"
		"puts 'ready'\n"
		"while (l = STDIN.gets)\n"
		"  jobs << l.split[1].to_i\n"
		"  done.pop\n"
		"  puts 'ok'\n"
		"end\n";
	struct spec_native r;
	struct spec_run o;
	tracked_ruby(&r, "service", script, spec_build("spec/leaky"));
	console(&r, &o, "set config.trace.allocations true", NULL);
	ck_assert_msg(o.status == 0, "%.3000s%.1000s", o.out, o.err);
	spec_run_free(&o);
	say(&r, "req 500");
	dump(&r, "a.vmheap");
	for (int k = 0; k < 4; k++)
		say(&r, "req 500");
	dump(&r, "b.vmheap");
	console(&r, &o, "get system.native.sites", NULL);
	ck_assert_msg(o.status == 0, "%.3000s%.1000s", o.out, o.err);
	ck_assert_msg(strstr(o.out, "vmheap_agent") == NULL, "%.3000s", o.out);
	/* Named from the files as the offline tools name them: leaky_keep
	 * is static (no dynamic symbol), its line from the debug info. */
	ck_assert_msg(strstr(o.out, "\"site\":\"leaky_keep (leaky.c:20) < "
				    "leak (leaky.c:35) < ") != NULL,
		      "%.3000s", o.out);
	ck_assert_msg(strstr(o.out, "\"frames\"") == NULL, "%.3000s", o.out);
	spec_run_free(&o);
	spec_kill(r.p.pid);

	char pa[700], pb[700], at[700];
	snprintf(pa, sizeof pa, "%s/a.vmheap", r.dir);
	snprintf(pb, sizeof pb, "%s/b.vmheap", r.dir);
	const char *argv[] = {spec_bin("vmheap-diff"), "--native", "--bytes",
			      "--top", "100000", pa, pb, NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0, "%.3000s%.1000s", o.out, o.err);
	/* 2000 requests of 4096 bytes, plus the extension's own array of
	 * pointers growing: within 10% of 8,192,000. */
	snprintf(at, sizeof at, " < %s/program.rb:9", r.dir);
	long long leak = rows_ending(o.out, at);
	ck_assert_msg(leak >= 8192000 && leak <= 8192000 * 11 / 10,
		      "%lld bytes at line 9:\n%.3000s", leak, o.out);
	ck_assert_msg(starts(first_row(o.out), "+2000  +8192000  leaky_keep (leaky.c:20) < "),
		      "%.3000s", o.out);
	/* No other line (the churn, the kept Hashes, the block's end where
	 * the job that moves their tables ran) gets more than 32 KiB. */
	for (int line = 1; line <= 22; line++) {
		if (line == 9)
			continue;
		snprintf(at, sizeof at, " < %s/program.rb:%d", r.dir, line);
		long long b = rows_ending(o.out, at);
		ck_assert_msg(b <= 32 * 1024 && b >= -32 * 1024,
			      "%lld bytes at line %d:\n%.3000s", b, line, o.out);
	}
	/* The kept Hashes' tables, moved out of the transient heap. */
	ck_assert_msg(rows_ending(o.out, " < <ruby: postponed job>") > 0,
		      "%.3000s", o.out);
	static const char *const own[] = {"vmheap_", "ruby_object_table",
					  "ruby_alloc_sites", "agent"};
	for (size_t k = 0; k < sizeof own / sizeof *own; k++)
		ck_assert_msg(strstr(first_row(o.out), own[k]) == NULL,
			      "a row names %s:\n%.3000s", own[k], o.out);
	ck_assert_msg(strstr(o.out, "\nvmheap's own (not a site below): ") != NULL,
		      "%.3000s", o.out);
	spec_run_free(&o);

	const char *json[] = {spec_bin("vmheap-diff"), "--native", "--format",
			      "json", pa, pb, NULL};
	ck_assert_int_eq(spec_run(json, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0, "%.3000s%.1000s", o.out, o.err);
	const char *v = strstr(o.out, "\"vmheap_own_bytes\": ");
	ck_assert_msg(v != NULL, "%.3000s", o.out);
	ck_assert_msg(strtoll(v + strlen("\"vmheap_own_bytes\": "), NULL, 10) > 0,
		      "%.3000s", o.out);
	spec_run_free(&o);
	const char *histo[] = {spec_bin("vmheap-histo"), "--native", "--format",
			       "json", pb, NULL};
	ck_assert_int_eq(spec_run(histo, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0, "%.3000s%.1000s", o.out, o.err);
	v = strstr(o.out, "\"vmheap_own_bytes\": ");
	ck_assert_msg(v != NULL, "%.3000s", o.out);
	ck_assert_msg(strtoll(v + strlen("\"vmheap_own_bytes\": "), NULL, 10) > 0,
		      "%.3000s", o.out);
	ck_assert_msg(strstr(o.out, "ruby_object_table") == NULL &&
			      strstr(o.out, "vmheap_agent") == NULL,
		      "%.3000s", o.out);
	spec_run_free(&o);
}
END_TEST

void native_format_tests(Suite *s); /* native_format_test.c */
void native_rates_tests(Suite *s);  /* native_rates_test.c */
void native_leaks_tests(Suite *s);  /* native_leaks_test.c */

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("native");
	TCase *t = spec_tcase(s, "tracker", 120);
	tcase_add_test(t, leak_named_with_exact_bytes);
	tcase_add_test(t, eight_threads_lose_no_count);
	tcase_add_test(t, fork_while_tracking);
	tcase_add_test(t, switched_on_and_off_repeatedly);
	tcase_add_test(t, paths_that_differ_two_frames_up_are_two_sites);
	tcase_add_test(t, stacks_through_frames_without_frame_pointers);
	tcase_add_test(t, malloc_inside_libgcc_unwinder);
	tcase_add_test(t, allocation_in_a_signal_handler_inside_the_tracker);
	tcase_add_test(t, dlopen_while_threads_allocate);
	tcase_add_test(t, waves_of_threads_lose_no_count);
	tcase_add_test(t, blocks_keep_their_contents_and_counts);
	tcase_add_test(t, ruby_runs_under_tracking);
	tcase_add_test(t, exports_only_the_allocator_and_api);
	tcase_add_test(t, routed_while_threads_allocate);
	tcase_add_test(t, glibc_semantics_hold_under_tracking);
	tcase_add_test(t, fresh_blocks_are_cleared_up_to_the_limit);
	tcase_add_test(t, deepbind_library_shares_blocks_with_the_program);
	TCase *run = spec_tcase(s, "vmheap-run", 60);
	tcase_add_test(run, run_appends_to_ld_preload);
	tcase_add_test(run, run_loads_the_agent_into_ruby);
	tcase_add_test(run, run_without_the_library);
	TCase *con = spec_tcase(s, "console", 120);
	tcase_add_test(con, console_switches_tracking);
	tcase_add_test(con, console_without_the_tracker);
	native_format_tests(s);
	native_leaks_tests(s);
	TCase *dumps = spec_tcase(s, "dumps", 180);
	tcase_add_test(dumps, diff_names_the_leaking_function);
	tcase_add_test(dumps, fiddle_leak_in_ruby);
	tcase_add_test(dumps, c_extension_leak_in_ruby);
	tcase_add_test(dumps, c_extension_forgets_and_keeps_in_ruby);
	tcase_add_test(dumps, c_extension_forgets_and_keeps_tracked_from_start);
	tcase_add_test(dumps, c_extension_holdout_shape_at_exit);
	tcase_add_test(dumps, c_extension_holdout_shape_console);
	tcase_add_test(
	    dumps,
	    forked_ruby_worker_s_exit_dump_lists_none_of_vmheap_s_stacks);
	tcase_add_test(dumps, ruby_stdlib_leaks_nothing);
	tcase_add_test(dumps, service_native_bytes_at_the_right_line);
	tcase_add_test(dumps, memory_summary_and_warning);
	native_rates_tests(s);
	return s;
}
