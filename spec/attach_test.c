/*
 * attach_test.c - vmheap-console --attach PID (issue 26) against real
 * `ruby` processes started with nothing of vmheap in their environment:
 * the agent is loaded into them by ptrace.  Dumps through the attached
 * agent and the diff naming the leak; a second attach reusing the agent
 * (one discovery file, no new fds or threads); a Ruby whose main thread
 * is blocked in a system call; refusals (a non-Ruby `sleep`, a stopped
 * Ruby) that leave the target alive, untraced and in its state; the
 * program making progress after the attach.
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/vmheap_spec.h"
#include "vmheap_agent.h"

#define WAIT_MS 30000
#define CONSOLE_MS 60000

/* A Ruby that leaks AttachLeak objects and prints "tick N" (N counts the
 * loop) on stdout, flushed. */
static const char leaky_script[] =
    "$stdout.sync = true\n"
    "class AttachLeak; def initialize; @pad = 'x' * 64; end; end\n"
    "$kept = []\n"
    "n = 0\n"
    "loop do\n"
    "  n += 1\n"
    "  $kept << AttachLeak.new\n"
    "  puts \"tick #{n}\"\n"
    "  sleep 0.002\n"
    "end\n";

struct target {
	struct spec_proc p;
	const char *dir;
	char env_tmp[600];
	const char *env[12];
	long last_tick;
};

/*
 * Start `ruby SCRIPT` in a fresh directory (its working directory, where
 * the attached agent dumps; and its TMPDIR, where the agent writes its
 * discovery file) with every vmheap variable and RUBYOPT unset.
 */
static void target_start_in(struct target *t, const char *script_text,
			    const char *private_tmp);

static void target_start(struct target *t, const char *script_text)
{
	target_start_in(t, script_text, NULL);
}

/* target_start; with `private_tmp`, ruby runs in a mount namespace of its
 * own where a tmpfs is mounted on DIR/private_tmp, its TMPDIR (like
 * systemd's PrivateTmp): its discovery file is seen from outside only
 * through /proc/PID/root. */
static void target_start_in(struct target *t, const char *script_text,
			    const char *private_tmp)
{
	char script[512];
	size_t e = 0;

	memset(t, 0, sizeof(*t));
	t->dir = spec_mkdtemp("attach");
	snprintf(script, sizeof(script), "%s/app.rb", t->dir);
	spec_write_text(script, script_text);
	snprintf(t->env_tmp, sizeof(t->env_tmp), "TMPDIR=%s", t->dir);
	t->env[e++] = t->env_tmp;
	t->env[e++] = "VMHEAP_AGENT_TMPDIR";
	t->env[e++] = "VMHEAP_AGENT_DIR";
	t->env[e++] = "VMHEAP_AGENT_VERBOSE";
	t->env[e++] = "RUBYOPT";
	t->env[e++] = "RUBYLIB";
#ifdef VMHEAP_ASAN_RUNTIME
	/* the ASan-built vmheap_attach.so needs the runtime first */
	t->env[e++] = "LD_PRELOAD=" VMHEAP_ASAN_RUNTIME;
	t->env[e++] = "ASAN_OPTIONS=detect_leaks=0";
#else
	t->env[e++] = "LD_PRELOAD";
#endif
	t->env[e] = NULL;
	const char *const argv[] = {"ruby", script, NULL};
	static char shell[2048];
	const char *const ns_argv[] = {"unshare", "-m", "--propagation",
				       "private", "sh", "-c",
				       shell,	  NULL};
	struct spec_spawn sp = {.argv = argv, .env = t->env, .dir = t->dir};

	if (private_tmp) {
		snprintf(shell, sizeof(shell),
			 "mkdir -p '%s/%s' && mount -t tmpfs vmheap '%s/%s' && "
			 "TMPDIR='%s/%s' exec ruby '%s'",
			 t->dir, private_tmp, t->dir, private_tmp, t->dir,
			 private_tmp, script);
		sp.argv = ns_argv;
	}
	spec_proc_start(&t->p, &sp, 1);
}

/* Read its lines until a "tick N" with N >= n; fails the test when it
 * ends or at WAIT_MS. */
static void wait_tick(struct target *t, long n)
{
	int64_t deadline = spec_now_ms() + WAIT_MS;
	char line[4096];

	while (t->last_tick < n) {
		int left = (int)(deadline - spec_now_ms());
		int r;

		ck_assert_msg(left > 0,
			      "gave up after %d ms waiting for tick %ld of "
			      "pid %ld (last %ld)",
			      WAIT_MS, n, (long)t->p.pid, t->last_tick);
		r = spec_proc_line(&t->p, line, sizeof(line), left);
		ck_assert_msg(r != 0, "ruby %ld ended (last tick %ld)",
			      (long)t->p.pid, t->last_tick);
		if (r == 1 && strncmp(line, "tick ", 5) == 0)
			t->last_tick = atol(line + 5);
	}
}

/* Run vmheap-console --attach PID with the -e commands `cmds` (NULL-
 * terminated), from an environment that names no discovery directory. */
static void console_attach(struct spec_run *r, pid_t pid,
			   const char *const *cmds)
{
	const char *argv[32];
	char pidtext[32];
	int n = 0;
	static const char *const env[] = {"VMHEAP_AGENT_TMPDIR", "TMPDIR",
					  NULL};

	snprintf(pidtext, sizeof(pidtext), "%ld", (long)pid);
	argv[n++] = spec_bin("vmheap-console");
	argv[n++] = "--attach";
	argv[n++] = pidtext;
	for (; cmds && *cmds && n < 30; cmds++) {
		argv[n++] = "-e";
		argv[n++] = *cmds;
	}
	argv[n] = NULL;
	ck_assert_int_eq(spec_run(argv, env, NULL, CONSOLE_MS, r), 0);
}

/* The state letter of /proc/PID/stat, 0 when gone. */
static char proc_state(pid_t pid)
{
	char path[64], *text, *p, c = 0;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	text = spec_read_file(path, NULL);
	if (!text)
		return 0;
	p = strrchr(text, ')');
	if (p && p[1] == ' ')
		c = p[2];
	free(text);
	return c;
}

/* TracerPid of /proc/PID/status: 0 when nothing traces it. */
static long tracer_of(pid_t pid)
{
	char path[64], *text, *p;
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	text = spec_read_file(path, NULL);
	if (!text)
		return -1;
	p = strstr(text, "TracerPid:");
	if (p)
		v = atol(p + 10);
	free(text);
	return v;
}

/* How many entries /proc/PID/<sub> has. */
static int count_entries(pid_t pid, const char *sub)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, sub);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* VmRSS of pid in KiB, -1 when unreadable. */
static long rss_kib(pid_t pid)
{
	char path[64], *text, *p;
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	text = spec_read_file(path, NULL);
	if (!text)
		return -1;
	p = strstr(text, "VmRSS:");
	if (p)
		v = atol(p + 6);
	free(text);
	return v;
}

/* The discovery files of pid in dir. */
static int discovery_files(const char *dir, pid_t pid)
{
	char prefix[64], *names = spec_ls(dir, '\n'), *line, *save = NULL;
	int n = 0;

	snprintf(prefix, sizeof(prefix), "vmheap-agent.%ld", (long)pid);
	for (line = strtok_r(names, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, prefix, strlen(prefix)) == 0)
			n++;
	free(names);
	return n;
}

/* The class of the top leak suspect of `vmheap-diff OLD NEW` (its "#1
 * CLASS: ..." line), "" when it names none. */
static char *top_suspect(const char *dir, const char *a, const char *b)
{
	char old[600], new[600], *out, *row;
	static char name[128];

	snprintf(old, sizeof(old), "%s/%s", dir, a);
	snprintf(new, sizeof(new), "%s/%s", dir, b);
	out = spec_run_stdout(
	    (const char *const[]){spec_bin("vmheap-diff"), old, new, NULL},
	    NULL, CONSOLE_MS);
	name[0] = '\0';
	row = strstr(out, "\n#1 ");
	if (row) {
		row += 4;
		while (*row == ' ')
			row++;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(row, ":\n"),
			 row);
	} else {
		fprintf(stderr, "vmheap-diff names no suspect:\n%s", out);
	}
	free(out);
	return name;
}

/* ------------------------------------------------------------- tests */

START_TEST(attach_dumps_and_diff_names_the_leak)
{
	struct target t;
	struct spec_run r;
	long before;

	target_start(&t, leaky_script);
	wait_tick(&t, 50);
	ck_assert_int_eq(discovery_files(t.dir, t.p.pid), 0);

	console_attach(
	    &r, t.p.pid,
	    (const char *const[]){"set system.memory.dump a1.vmheap", NULL});
	ck_assert_msg(r.status == 0, "attach failed (%d): %s%s", r.status,
		      r.out, r.err);
	ck_assert_msg(strstr(r.err, "loaded the agent into pid"),
		      "no word of the injection: %s", r.err);
	ck_assert_msg(strstr(r.out, "dump written"), "%s", r.out);
	spec_run_free(&r);
	ck_assert_int_eq(discovery_files(t.dir, t.p.pid), 1);

	/* The program runs on, and leaks 500 more. */
	before = t.last_tick;
	wait_tick(&t, before + 500);

	console_attach(
	    &r, t.p.pid,
	    (const char *const[]){"set system.memory.dump a2.vmheap", NULL});
	ck_assert_msg(r.status == 0, "second attach failed (%d): %s%s",
		      r.status, r.out, r.err);
	ck_assert_msg(!strstr(r.err, "loaded the agent"),
		      "the second attach loaded another agent: %s", r.err);
	spec_run_free(&r);
	ck_assert_int_eq(discovery_files(t.dir, t.p.pid), 1);

	ck_assert_str_eq(top_suspect(t.dir, "a1.vmheap", "a2.vmheap"),
			 "AttachLeak");
	wait_tick(&t, t.last_tick + 100);
	ck_assert_int_eq(tracer_of(t.p.pid), 0);
	spec_kill(t.p.pid);
}
END_TEST

START_TEST(attach_again_reuses_the_agent)
{
	struct target t;
	struct spec_run r;
	int fds, threads;
	long rss;

	target_start(&t, leaky_script);
	wait_tick(&t, 20);
	console_attach(&r, t.p.pid,
		       (const char *const[]){"get system.gc.count", NULL});
	ck_assert_msg(r.status == 0, "attach failed (%d): %s%s", r.status,
		      r.out, r.err);
	spec_run_free(&r);
	fds = count_entries(t.p.pid, "fd");
	threads = spec_threads(t.p.pid);
	rss = rss_kib(t.p.pid);
	ck_assert_int_gt(rss, 0);
	for (int i = 0; i < 10; i++) {
		console_attach(
		    &r, t.p.pid,
		    (const char *const[]){"get system.gc.count", NULL});
		ck_assert_msg(r.status == 0, "attach %d failed (%d): %s%s", i,
			      r.status, r.out, r.err);
		ck_assert_msg(!strstr(r.err, "loaded the agent"),
			      "attach %d loaded another agent: %s", i, r.err);
		spec_run_free(&r);
	}
	ck_assert_int_eq(discovery_files(t.dir, t.p.pid), 1);
	/* connections closed by the consoles may linger a moment */
	SPEC_WAIT_UNTIL(count_entries(t.p.pid, "fd") <= fds, WAIT_MS,
			"pid %ld back to %d fds (has %d)", (long)t.p.pid, fds,
			count_entries(t.p.pid, "fd"));
	/* no new thread; one fewer once MRI's thread cache lets the native
	 * thread of the attach's short-lived Ruby thread go (after 3 s) */
	ck_assert_int_le(spec_threads(t.p.pid), threads);
	/* the bound for ten attaches (the program leaks meanwhile) */
	ck_assert_int_le(rss_kib(t.p.pid) - rss, 20 * 1024);
	wait_tick(&t, t.last_tick + 50);
	spec_kill(t.p.pid);
}
END_TEST

/* The main thread waits in a system call forever (no timer wakes it):
 * the attach must still get it to start the agent. */
START_TEST(attach_to_a_blocked_main_thread)
{
	static const char *const scripts[] = {
	    "$stdout.sync = true; puts 'tick 1'; sleep\n",
	    "$stdout.sync = true; r, w = IO.pipe; puts 'tick 1'; r.read\n",
	    "$stdout.sync = true; t = Thread.new { sleep }; puts 'tick 1'; "
	    "t.join\n",
	};

	for (size_t i = 0; i < sizeof(scripts) / sizeof(*scripts); i++) {
		struct target t;
		struct spec_run r;

		target_start(&t, scripts[i]);
		wait_tick(&t, 1);
		console_attach(
		    &r, t.p.pid,
		    (const char *const[]){"get system.gc.count", NULL});
		ck_assert_msg(r.status == 0, "attach to `%s` failed (%d): %s%s",
			      scripts[i], r.status, r.out, r.err);
		spec_run_free(&r);
		ck_assert_int_eq(proc_state(t.p.pid), 'S');
		ck_assert_int_eq(tracer_of(t.p.pid), 0);
		spec_kill(t.p.pid);
	}
}
END_TEST

START_TEST(attach_refuses_a_non_ruby_and_leaves_it_alone)
{
	const char *const argv[] = {"sleep", "1000", NULL};
	struct spec_spawn sp = {.argv = argv};
	struct spec_run r;
	pid_t pid = spec_spawn(&sp);

	ck_assert_int_gt(pid, 0);
	SPEC_WAIT_UNTIL(proc_state(pid) == 'S', WAIT_MS,
			"sleep %ld to be asleep", (long)pid);
	console_attach(&r, pid,
		       (const char *const[]){"get system.gc.count", NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "cannot attach to pid") &&
			  strstr(r.err, "not an MRI Ruby"),
		      "%s", r.err);
	spec_run_free(&r);
	ck_assert_int_eq(kill(pid, 0), 0);
	ck_assert_int_eq(proc_state(pid), 'S');
	ck_assert_int_eq(tracer_of(pid), 0);
	spec_kill(pid);
}
END_TEST

START_TEST(attach_refuses_a_stopped_ruby_and_leaves_it_stopped)
{
	struct target t;
	struct spec_run r;

	target_start(&t, leaky_script);
	wait_tick(&t, 10);
	ck_assert_int_eq(kill(t.p.pid, SIGSTOP), 0);
	SPEC_WAIT_UNTIL(proc_state(t.p.pid) == 'T', WAIT_MS, "ruby %ld to stop",
			(long)t.p.pid);
	console_attach(&r, t.p.pid,
		       (const char *const[]){"get system.gc.count", NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "is stopped"), "%s", r.err);
	spec_run_free(&r);
	ck_assert_int_eq(proc_state(t.p.pid), 'T');
	ck_assert_int_eq(tracer_of(t.p.pid), 0);
	ck_assert_int_eq(discovery_files(t.dir, t.p.pid), 0);
	ck_assert_int_eq(kill(t.p.pid, SIGCONT), 0);
	wait_tick(&t, t.last_tick + 50);
	spec_kill(t.p.pid);
}
END_TEST

/* The console killed -9 at six moments of the injection (it stops itself
 * there: VMHEAP_ATTACH_TEST_STOP; console/attach_inject.c lists them:
 * seized; interrupted; the stub written; inside dlopen; at the stub's
 * marker; detached, waiting for the agent): the Ruby program runs on,
 * untraced, and a later attach gives it one agent. */
START_TEST(a_console_killed_while_injecting_never_harms_the_program)
{
	for (int moment = 1; moment <= 6; moment++) {
		struct target t;
		struct spec_run r;
		char pidtext[32], stop[64];
		const char *const argv[] = {
		    spec_bin("vmheap-console"), "--attach", pidtext, "-e",
		    "get system.gc.count",	NULL};
		const char *const env[] = {stop, "VMHEAP_AGENT_TMPDIR",
					   "TMPDIR", NULL};
		struct spec_spawn sp = {.argv = argv, .env = env};
		pid_t console;

		target_start(&t, leaky_script);
		wait_tick(&t, 20);
		snprintf(pidtext, sizeof(pidtext), "%ld", (long)t.p.pid);
		snprintf(stop, sizeof(stop), "VMHEAP_ATTACH_TEST_STOP=%d",
			 moment);
		console = spec_spawn(&sp);
		ck_assert_int_gt(console, 0);
		SPEC_WAIT_UNTIL(proc_state(console) == 'T', WAIT_MS,
				"the console to stop at moment %d", moment);
		/* traced at every moment but the last (detached) */
		ck_assert_int_eq(tracer_of(t.p.pid), moment == 6 ? 0 : console);
		spec_kill(console);
		SPEC_WAIT_UNTIL(tracer_of(t.p.pid) == 0, WAIT_MS,
				"ruby %ld untraced after moment %d",
				(long)t.p.pid, moment);
		wait_tick(&t, t.last_tick + 100);
		ck_assert_int_ne(proc_state(t.p.pid), 'T');

		console_attach(
		    &r, t.p.pid,
		    (const char *const[]){"get system.gc.count", NULL});
		ck_assert_msg(r.status == 0,
			      "attach after moment %d failed (%d): %s%s",
			      moment, r.status, r.out, r.err);
		spec_run_free(&r);
		ck_assert_int_eq(discovery_files(t.dir, t.p.pid), 1);
		wait_tick(&t, t.last_tick + 50);
		spec_kill(t.p.pid);
	}
}
END_TEST

/*
 * The console under valgrind: valgrind-clean, and valgrind's CPUID
 * reports fewer CPU features than the target's CPU has (832 bytes of
 * XSAVE state where the CPU of the machine this was found on has 11008):
 * the stub's save area must still be the target's size, or xsave writes
 * over ruby's stack and kills it.
 */
START_TEST(attach_from_a_console_under_valgrind)
{
	struct target t;
	struct spec_run r;
	char pidtext[32];
	const char *const argv[] = {"valgrind",
				    "-q",
				    "--error-exitcode=99",
				    "--leak-check=full",
				    spec_bin("vmheap-console"),
				    "--attach",
				    pidtext,
				    "-e",
				    "get system.gc.count",
				    NULL};
	static const char *const env[] = {"VMHEAP_AGENT_TMPDIR", "TMPDIR",
					  NULL};

	if (SPEC_SANITIZED)
		return; /* valgrind cannot run an ASan build */
	target_start(&t, leaky_script);
	wait_tick(&t, 20);
	snprintf(pidtext, sizeof(pidtext), "%ld", (long)t.p.pid);
	ck_assert_int_eq(spec_run(argv, env, NULL, 4 * CONSOLE_MS, &r), 0);
	ck_assert_msg(r.status == 0, "attach under valgrind: %d: %s%s",
		      r.status, r.out, r.err);
	spec_run_free(&r);
	wait_tick(&t, t.last_tick + 100);
	ck_assert_int_eq(discovery_files(t.dir, t.p.pid), 1);
	spec_kill(t.p.pid);
}
END_TEST

/* A ruby with a private /tmp of its own (a mount namespace): the console
 * finds the injected agent's discovery file through /proc/PID/root. */
START_TEST(attach_to_a_ruby_in_another_mount_namespace)
{
	const char *const probe[] = {"unshare", "-m",	"--propagation",
				     "private", "true", NULL};
	struct target t;
	struct spec_run r;
	char outside[700];

	ck_assert_int_eq(spec_run(probe, NULL, NULL, CONSOLE_MS, &r), 0);
	if (r.status != 0) {
		fprintf(stderr,
			"attach_to_a_ruby_in_another_mount_namespace: skipped, "
			"this user cannot make a mount namespace: %s",
			r.err);
		spec_run_free(&r);
		return;
	}
	spec_run_free(&r);
	target_start_in(&t, leaky_script, "private");
	wait_tick(&t, 20);
	console_attach(&r, t.p.pid,
		       (const char *const[]){"get system.gc.count", NULL});
	ck_assert_msg(r.status == 0, "attach failed (%d): %s%s", r.status,
		      r.out, r.err);
	ck_assert_msg(strstr(r.err, "loaded the agent"), "%s", r.err);
	spec_run_free(&r);
	/* not in the directory as this namespace sees it */
	snprintf(outside, sizeof(outside), "%s/private", t.dir);
	ck_assert_int_eq(discovery_files(outside, t.p.pid), 0);
	snprintf(outside, sizeof(outside), "/proc/%ld/root%s/private",
		 (long)t.p.pid, t.dir);
	ck_assert_int_eq(discovery_files(outside, t.p.pid), 1);
	wait_tick(&t, t.last_tick + 50);
	spec_kill(t.p.pid);
}
END_TEST

/* The target dies while the console is half-way (stopped at moment 2:
 * the stub written, the registers set): the console says so and exits 2,
 * it does not hang. */
START_TEST(a_target_that_dies_during_the_attach_is_reported)
{
	struct target t;
	char pidtext[32];
	const char *const argv[] = {
	    spec_bin("vmheap-console"), "--attach", pidtext, "-e",
	    "get system.gc.count",	NULL};
	static const char *const env[] = {
	    "VMHEAP_ATTACH_TEST_STOP=2", "VMHEAP_AGENT_TMPDIR", "TMPDIR", NULL};
	char err_path[600];
	struct spec_spawn sp = {.argv = argv, .env = env};
	pid_t console;
	char *err;
	int status;

	target_start(&t, leaky_script);
	wait_tick(&t, 20);
	snprintf(pidtext, sizeof(pidtext), "%ld", (long)t.p.pid);
	snprintf(err_path, sizeof(err_path), "%s/console.err", t.dir);
	sp.stderr_path = err_path;
	console = spec_spawn(&sp);
	ck_assert_int_gt(console, 0);
	SPEC_WAIT_UNTIL(proc_state(console) == 'T', WAIT_MS,
			"the console to stop at moment 2");
	/* not reaped yet: its tracer (the console) sees its end first */
	ck_assert_int_eq(kill(t.p.pid, SIGKILL), 0);
	ck_assert_int_eq(kill(console, SIGCONT), 0);
	status = spec_wait(console, CONSOLE_MS, NULL);
	ck_assert_int_eq(spec_wait(t.p.pid, WAIT_MS, NULL), 128 + SIGKILL);
	err = spec_read_file(err_path, NULL);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(status == 2 && strstr(err, "exited"), "status %d: %s",
		      status, err);
	free(err);
}
END_TEST

/* A Ruby that made itself undumpable (PR_SET_DUMPABLE 0): root may still
 * trace it (CAP_SYS_PTRACE) and attaches; another user is refused with a
 * sentence that names the cause.  Either way it runs on, untraced. */
START_TEST(attach_to_an_undumpable_ruby)
{
	static const char script[] =
	    "require 'fiddle'\n"
	    "prctl = Fiddle::Function.new(Fiddle.dlopen(nil)['prctl'],\n"
	    "  [Fiddle::TYPE_INT, Fiddle::TYPE_LONG, Fiddle::TYPE_LONG,\n"
	    "   Fiddle::TYPE_LONG, Fiddle::TYPE_LONG], Fiddle::TYPE_INT)\n"
	    "raise 'prctl' unless prctl.call(4, 0, 0, 0, 0) == 0\n"
	    "$stdout.sync = true\n"
	    "n = 0\n"
	    "loop { n += 1; puts \"tick #{n}\"; sleep 0.002 }\n";
	struct target t;
	struct spec_run r;

	target_start(&t, script);
	wait_tick(&t, 20);
	console_attach(&r, t.p.pid,
		       (const char *const[]){"get system.gc.count", NULL});
	if (geteuid() == 0)
		ck_assert_msg(r.status == 0, "root: %d: %s%s", r.status, r.out,
			      r.err);
	else
		ck_assert_msg(r.status == 2 && strstr(r.err, "undumpable"),
			      "%d: %s", r.status, r.err);
	spec_run_free(&r);
	ck_assert_int_eq(tracer_of(t.p.pid), 0);
	wait_tick(&t, t.last_tick + 50);
	spec_kill(t.p.pid);
}
END_TEST

/* A Ruby under a seccomp filter (one that allows everything, installed
 * with prctl through Fiddle): refused, since a filter could kill it for
 * a call dlopen makes; with VMHEAP_ATTACH_ALLOW_SECCOMP=1, attached. */
START_TEST(attach_to_a_ruby_under_seccomp)
{
	static const char script[] =
	    "require 'fiddle'\n"
	    "prctl = Fiddle::Function.new(Fiddle.dlopen(nil)['prctl'],\n"
	    "  [Fiddle::TYPE_INT, Fiddle::TYPE_LONG, Fiddle::TYPE_LONG,\n"
	    "   Fiddle::TYPE_LONG, Fiddle::TYPE_LONG], Fiddle::TYPE_INT)\n"
	    "raise 'no_new_privs' unless prctl.call(38, 1, 0, 0, 0) == 0\n"
	    "filter = [0x06, 0, 0, 0x7fff0000].pack('SCCL') # RET ALLOW\n"
	    "buf = Fiddle::Pointer.malloc(filter.bytesize)\n"
	    "buf[0, filter.bytesize] = filter\n"
	    "prog = [1, buf.to_i].pack('Sx6Q')\n"
	    "pbuf = Fiddle::Pointer.malloc(prog.bytesize)\n"
	    "pbuf[0, prog.bytesize] = prog\n"
	    "raise 'seccomp' unless prctl.call(22, 2, pbuf.to_i, 0, 0) == 0\n"
	    "$stdout.sync = true\n"
	    "n = 0\n"
	    "loop { n += 1; puts \"tick #{n}\"; sleep 0.002 }\n";
	static const char *const allow_env[] = {"VMHEAP_ATTACH_ALLOW_SECCOMP=1",
						"VMHEAP_AGENT_TMPDIR", "TMPDIR",
						NULL};
	struct target t;
	struct spec_run r;
	char pidtext[32];
	const char *const argv[] = {
	    spec_bin("vmheap-console"), "--attach", pidtext, "-e",
	    "get system.gc.count",	NULL};

	target_start(&t, script);
	wait_tick(&t, 20);
	console_attach(&r, t.p.pid,
		       (const char *const[]){"get system.gc.count", NULL});
	ck_assert_msg(r.status == 2 && strstr(r.err, "seccomp filter"),
		      "%d: %s", r.status, r.err);
	spec_run_free(&r);
	ck_assert_int_eq(tracer_of(t.p.pid), 0);
	ck_assert_int_eq(discovery_files(t.dir, t.p.pid), 0);
	wait_tick(&t, t.last_tick + 50);

	snprintf(pidtext, sizeof(pidtext), "%ld", (long)t.p.pid);
	ck_assert_int_eq(spec_run(argv, allow_env, NULL, CONSOLE_MS, &r), 0);
	ck_assert_msg(r.status == 0, "allowed: %d: %s%s", r.status, r.out,
		      r.err);
	spec_run_free(&r);
	ck_assert_int_eq(discovery_files(t.dir, t.p.pid), 1);
	wait_tick(&t, t.last_tick + 50);
	spec_kill(t.p.pid);
}
END_TEST

START_TEST(attach_to_no_such_process)
{
	struct spec_run r;
	const char *const argv[] = {spec_bin("vmheap-console"),
				    "--attach",
				    "2147483647",
				    "-e",
				    "get x",
				    NULL};

	ck_assert_int_eq(spec_run(argv, NULL, NULL, CONSOLE_MS, &r), 0);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "no process 2147483647"), "%s", r.err);
	spec_run_free(&r);
}
END_TEST

/* ------------------------------------------------- other users */

/* A directory under /tmp that `daemon` reaches (the suite's own is 0700
 * and the build may be too), with a copy of vmheap-console in bin/.
 * Writes its path into dir (a mkdtemp template's room) and the console
 * copy's into *console. */
static void daemon_dir(char *dir, size_t cap, const char **console)
{
	char bin[600];

	snprintf(dir, cap, "/tmp/vmheap-attach-user.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0777), 0);
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	ck_assert_int_eq(mkdir(bin, 0755), 0);
	ck_assert_int_eq(chmod(bin, 0755), 0);
	*console = spec_copy_program("vmheap-console", bin);
}

/* Run the console copy as `daemon` with --attach pid. */
static void console_as_daemon(struct spec_run *r, const char *console,
			      pid_t pid)
{
	char pidtext[32];
	const char *argv[] = {"setpriv",     "--reuid=daemon",
			      "--regid=daemon", "--clear-groups",
			      console,	     "--attach",
			      pidtext,	     "-e",
			      "get system.gc.count", NULL};
	static const char *const env[] = {"HOME=/", "TMPDIR",
					  "VMHEAP_AGENT_TMPDIR", NULL};

	snprintf(pidtext, sizeof(pidtext), "%ld", (long)pid);
	ck_assert_int_eq(spec_run(argv, env, NULL, CONSOLE_MS, r), 0);
}

/* Start `ruby SCRIPT` as `daemon` in dir (daemon_dir's), its TMPDIR,
 * with no vmheap in its environment. */
static void target_start_as_daemon(struct target *t, const char *dir,
				   const char *script_text)
{
	static char path[700], env_tmp[700];
	const char *const argv[] = {"setpriv",	      "--reuid=daemon",
				    "--regid=daemon", "--clear-groups",
				    "ruby",	      path,
				    NULL};
	const char *const env[] = {env_tmp,	 "HOME=/",     "RUBYOPT",
				   "RUBYLIB",	 "LD_PRELOAD", "VMHEAP_AGENT_TMPDIR",
				   NULL};
	struct spec_spawn sp = {.argv = argv, .env = env, .dir = dir};

	snprintf(path, sizeof(path), "%s/app.rb", dir);
	spec_write_text(path, script_text);
	ck_assert_int_eq(chmod(path, 0644), 0);
	snprintf(env_tmp, sizeof(env_tmp), "TMPDIR=%s", dir);
	memset(t, 0, sizeof(*t));
	t->dir = dir;
	spec_proc_start(&t->p, &sp, 1);
}

/* Another user's Ruby (root's, attached from `daemon`): refused with a
 * sentence that says whose it is and what to do; it runs on, untraced,
 * without an agent. */
START_TEST(attach_refuses_another_users_ruby)
{
	struct target t;
	struct spec_run r;
	char dir[600], want[96];
	const char *console;

	if (geteuid() != 0) {
		fprintf(stderr, "attach_refuses_another_users_ruby: skipped, "
				"the suite does not run as root\n");
		return;
	}
	daemon_dir(dir, sizeof(dir), &console);
	target_start(&t, leaky_script);
	wait_tick(&t, 20);
	console_as_daemon(&r, console, t.p.pid);
	snprintf(want, sizeof(want), "pid %ld belongs to uid 0, not to you",
		 (long)t.p.pid);
	ck_assert_msg(r.status == 2 && strstr(r.err, want) &&
			  strstr(r.err, "as that user or as root"),
		      "%d: %s", r.status, r.err);
	spec_run_free(&r);
	ck_assert_int_eq(tracer_of(t.p.pid), 0);
	ck_assert_int_eq(discovery_files(t.dir, t.p.pid), 0);
	wait_tick(&t, t.last_tick + 50);
	spec_kill(t.p.pid);
	spec_rmrf(dir);
}
END_TEST

/* An undumpable Ruby of the user attaching (both `daemon`, no
 * CAP_SYS_PTRACE): refused, the sentence names the cause and the way
 * (root); it runs on, untraced. */
START_TEST(attach_refuses_an_undumpable_ruby_of_ones_own)
{
	static const char script[] =
	    "require 'fiddle'\n"
	    "prctl = Fiddle::Function.new(Fiddle.dlopen(nil)['prctl'],\n"
	    "  [Fiddle::TYPE_INT, Fiddle::TYPE_LONG, Fiddle::TYPE_LONG,\n"
	    "   Fiddle::TYPE_LONG, Fiddle::TYPE_LONG], Fiddle::TYPE_INT)\n"
	    "raise 'prctl' unless prctl.call(4, 0, 0, 0, 0) == 0\n"
	    "$stdout.sync = true\n"
	    "n = 0\n"
	    "loop { n += 1; puts \"tick #{n}\"; sleep 0.002 }\n";
	struct target t;
	struct spec_run r;
	char dir[600];
	const char *console;

	if (geteuid() != 0) {
		fprintf(stderr, "attach_refuses_an_undumpable_ruby_of_ones_own: "
				"skipped, the suite does not run as root\n");
		return;
	}
	daemon_dir(dir, sizeof(dir), &console);
	target_start_as_daemon(&t, dir, script);
	wait_tick(&t, 20);
	console_as_daemon(&r, console, t.p.pid);
	ck_assert_msg(r.status == 2 && strstr(r.err, "undumpable") &&
			  strstr(r.err, "as root"),
		      "%d: %s", r.status, r.err);
	spec_run_free(&r);
	ck_assert_int_eq(tracer_of(t.p.pid), 0);
	wait_tick(&t, t.last_tick + 50);
	spec_kill(t.p.pid);
	spec_rmrf(dir);
}
END_TEST

/* Root without CAP_SYS_PTRACE (dropped from its bounding set, as in a
 * container) attaching to daemon's Ruby: refused, the sentence names the
 * missing capability and how to get it; the Ruby runs on, untraced. */
START_TEST(attach_without_cap_sys_ptrace_is_refused)
{
	struct target t;
	struct spec_run r;
	char dir[600], pidtext[32];
	const char *console;

	if (geteuid() != 0) {
		fprintf(stderr, "attach_without_cap_sys_ptrace_is_refused: "
				"skipped, the suite does not run as root\n");
		return;
	}
	daemon_dir(dir, sizeof(dir), &console);
	target_start_as_daemon(&t, dir, leaky_script);
	wait_tick(&t, 20);
	snprintf(pidtext, sizeof(pidtext), "%ld", (long)t.p.pid);
	{
		/* root's own console (root reaches the build) */
		const char *argv[] = {"setpriv",
				      "--bounding-set=-sys_ptrace",
				      spec_bin("vmheap-console"),
				      "--attach",
				      pidtext,
				      "-e",
				      "get system.gc.count",
				      NULL};
		static const char *const env[] = {"TMPDIR",
						  "VMHEAP_AGENT_TMPDIR", NULL};
		ck_assert_int_eq(spec_run(argv, env, NULL, CONSOLE_MS, &r), 0);
	}
	ck_assert_msg(r.status == 2 &&
			  strstr(r.err, "runs without CAP_SYS_PTRACE") &&
			  strstr(r.err, "--cap-add SYS_PTRACE"),
		      "%d: %s", r.status, r.err);
	spec_run_free(&r);
	ck_assert_int_eq(tracer_of(t.p.pid), 0);
	ck_assert_int_eq(discovery_files(dir, t.p.pid), 0);
	wait_tick(&t, t.last_tick + 50);
	spec_kill(t.p.pid);
	spec_rmrf(dir);
}
END_TEST

/* The injected agent has a preloaded agent's defaults: its discovery
 * file 0600 with a loopback address, dumps in the process's working
 * directory; `set config.dump.dir` moves them. */
START_TEST(the_injected_agent_has_the_defaults_and_takes_a_dump_dir)
{
	struct target t;
	struct vmheap_agent_info info;
	struct spec_run r;
	struct stat st;
	char err[700], other[600], path[700];

	target_start(&t, leaky_script);
	wait_tick(&t, 20);
	console_attach(&r, t.p.pid,
		       (const char *const[]){"get config.dump.dir",
					     "set system.memory.dump here.vmheap",
					     NULL});
	ck_assert_msg(r.status == 0, "%d: %s%s", r.status, r.out, r.err);
	ck_assert_msg(!strncmp(r.out, t.dir, strlen(t.dir)) &&
			  r.out[strlen(t.dir)] == '\n',
		      "dump dir: %s", r.out);
	spec_run_free(&r);
	snprintf(path, sizeof(path), "%s/here.vmheap", t.dir);
	ck_assert_int_eq(stat(path, &st), 0);

	ck_assert_msg(spec_discovery_wait(t.dir, t.p.pid, &info, WAIT_MS, err,
					  sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(stat(info.path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_str_eq(info.host, "127.0.0.1");

	snprintf(other, sizeof(other), "%s", spec_mkdtemp("dumps"));
	snprintf(err, sizeof(err), "set config.dump.dir %s", other);
	console_attach(&r, t.p.pid,
		       (const char *const[]){err,
					     "set system.memory.dump there.vmheap",
					     NULL});
	ck_assert_msg(r.status == 0, "%d: %s%s", r.status, r.out, r.err);
	spec_run_free(&r);
	snprintf(path, sizeof(path), "%s/there.vmheap", other);
	ck_assert_int_eq(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/there.vmheap", t.dir);
	ck_assert_int_ne(stat(path, &st), 0);
	wait_tick(&t, t.last_tick + 50);
	spec_kill(t.p.pid);
}
END_TEST

/* ------------------------------------------------ native tracking */

/*
 * A Ruby service with a C extension (spec/native/leaky/): every loop it
 * allocates and drops Ruby strings and arrays (its own mallocs and
 * frees, through libruby), and it runs a step when the test creates the
 * file STEP in its directory: "keep" leaks 3000 blocks of 100 bytes in
 * leaky_keep(), "drop" frees every block leaky kept, "late" requires the
 * extension (when it was not required at the start).  It prints "step
 * NAME" after each.  With `early`, it requires the extension at the
 * start and leaks 5000 blocks of 64 bytes before any tracking.
 */
static const char native_script[] =
    "$stdout.sync = true\n"
    "$LOAD_PATH.unshift ARGV[0]\n"
    "if ARGV[1] == 'early'\n"
    "  require 'leaky'\n"
    "  Leaky.leak(5000, 64)\n"
    "end\n"
    "work = []\n"
    "n = 0\n"
    "loop do\n"
    "  n += 1\n"
    "  work << ('w' * (n % 300)) << [n, n.to_s]\n"
    "  work.shift(2) if work.size > 2000\n"
    "  %w[late keep drop].each do |s|\n"
    "    next unless File.exist?(s)\n"
    "    File.delete(s)\n"
    "    case s\n"
    "    when 'late' then require 'leaky'\n"
    "    when 'keep' then Leaky.leak(3000, 100)\n"
    "    when 'drop' then Leaky.release(1 << 30)\n"
    "    end\n"
    "    puts \"step #{s}\"\n"
    "  end\n"
    "  puts \"tick #{n}\" if n % 50 == 0\n"
    "  sleep 0.001\n"
    "end\n";

/* Run step `name` of native_script and wait until it says it ran. */
static void native_step(struct target *t, const char *name)
{
	char path[600], want[64], line[4096];
	int64_t deadline = spec_now_ms() + WAIT_MS;

	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	snprintf(want, sizeof(want), "step %s", name);
	spec_write_text(path, "");
	for (;;) {
		int left = (int)(deadline - spec_now_ms());
		ck_assert_msg(left > 0, "ruby %ld never ran step %s",
			      (long)t->p.pid, name);
		int r = spec_proc_line(&t->p, line, sizeof(line), left);
		ck_assert_msg(r != 0, "ruby %ld ended before step %s",
			      (long)t->p.pid, name);
		if (r != 1)
			continue;
		if (strncmp(line, "tick ", 5) == 0)
			t->last_tick = atol(line + 5);
		if (strcmp(line, want) == 0)
			return;
	}
}

/* The line of `get system.native.sites` (console output `out`) whose
 * site starts with `site`, copied into a static buffer; "" when none. */
static const char *site_row(const char *out, const char *site)
{
	static char row[2048];
	const char *p = out;

	row[0] = '\0';
	while (p && *p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char line[2048];
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		if (strstr(line, site)) {
			snprintf(row, sizeof(row), "%s", line);
			return row;
		}
		p = end ? end + 1 : NULL;
	}
	return row;
}

/* Run the console with `cmds` on the attached (or about to be) pid and
 * return its stdout (the caller frees); fails the test on an error. */
static char *console_out(pid_t pid, const char *const *cmds)
{
	struct spec_run r;
	char *out;

	console_attach(&r, pid, cmds);
	ck_assert_msg(r.status == 0, "console %s failed (%d): %s%s", cmds[0],
		      r.status, r.out, r.err);
	out = strdup(r.out);
	spec_run_free(&r);
	return out;
}

/*
 * Native tracking switched on in a Ruby that runs with no vmheap in its
 * environment (the agent attached; the tracker dlopen'ed and the
 * allocator calls routed through the GOT): the C extension's leak is
 * counted exactly at leaky_keep, and the native diff's top row names it;
 * blocks from before tracking are freed and never counted; switched off,
 * blocks tracked meanwhile are freed and the service runs on.  Twice: the
 * extension loaded before the attach (routed by the scan of the loaded
 * modules) and required after tracking started (routed by the routed
 * dlopen, before its Init_ ran).
 */
START_TEST(native_tracking_after_attach_names_a_c_extension_leak)
{
	static const char *const modes[] = {"early", "late"};

	for (int m = 0; m < 2; m++) {
		struct target t;
		char script[1400], arg[600];
		char *out;
		const char *row;

		snprintf(arg, sizeof(arg), "%s", spec_build("spec/leaky"));
		/* target_start runs `ruby app.rb`: the arguments go in the
		 * script's first lines */
		snprintf(script, sizeof(script),
			 "ARGV.replace(['%s', '%s'])\n", arg, modes[m]);
		char *text = malloc(strlen(script) + sizeof(native_script));
		strcpy(text, script);
		strcat(text, native_script);
		target_start(&t, text);
		free(text);
		wait_tick(&t, 50);
		if (SPEC_SANITIZED) {
			/* ruby runs with ASan's allocator preloaded: the
			 * tracker wraps glibc's only and says so */
			struct spec_run r;
			console_attach(&r, t.p.pid,
				       (const char *const[]){
					   "set config.native.track true",
					   NULL});
			ck_assert_msg(r.status == 1 &&
					  strstr(r.err, "not glibc's"),
				      "%d: %s%s", r.status, r.out, r.err);
			spec_run_free(&r);
			wait_tick(&t, t.last_tick + 50);
			spec_kill(t.p.pid);
			return;
		}

		out = console_out(t.p.pid, (const char *const[]){
						  "set config.native.track true",
						  "get config.native.track",
						  "set system.memory.dump n1.vmheap",
						  NULL});
		ck_assert_msg(strstr(out, "true"), "%s", out);
		free(out);
		if (m == 1)
			native_step(&t, "late");
		native_step(&t, "keep");
		out = console_out(t.p.pid, (const char *const[]){
						  "get system.native.sites",
						  "set system.memory.dump n2.vmheap",
						  NULL});
		/* exactly the 3000 blocks of 100 bytes made while tracking;
		 * the 5000 from before are not counted */
		row = site_row(out, "leaky_keep (leaky.c:20)");
		ck_assert_msg(strstr(row, "(300000 bytes)  3000 "),
			      "%s: leaky_keep's row: \"%s\" in\n%s", modes[m],
			      row, out);
		free(out);

		/* the native diff's top row names the C function */
		char n1[700], n2[700];
		snprintf(n1, sizeof(n1), "%s/n1.vmheap", t.dir);
		snprintf(n2, sizeof(n2), "%s/n2.vmheap", t.dir);
		out = spec_run_stdout(
		    (const char *const[]){spec_bin("vmheap-diff"), "--native",
					  n1, n2, NULL},
		    NULL, CONSOLE_MS);
		const char *first = strstr(out, "bytes  site\n");
		first = first ? first + 12 : "";
		ck_assert_msg(!strncmp(first, "+3000 ", 6) &&
				  strstr(site_row(first, "+"),
					 "  leaky_keep (leaky.c:20) < leak "),
			      "%s: native diff:\n%s", modes[m], out);
		free(out);

		/* free every block leaky holds: 3000 tracked (counted
		 * freed) and, early, 5000 from before (unknown: never
		 * counted) */
		native_step(&t, "drop");
		out = console_out(t.p.pid,
				  (const char *const[]){
				      "get system.native.sites", NULL});
		ck_assert_msg(site_row(out, "leaky_keep (leaky.c:20)")[0] ==
				  '\0',
			      "%s: still live after the drop:\n%s", modes[m],
			      out);
		free(out);

		/* blocks tracked, then tracking off, then freed */
		native_step(&t, "keep");
		out = console_out(t.p.pid, (const char *const[]){
						  "set config.native.track false",
						  "get config.native.track",
						  NULL});
		ck_assert_msg(strstr(out, "false"), "%s", out);
		free(out);
		native_step(&t, "drop");
		native_step(&t, "keep");
		native_step(&t, "drop");
		/* the service keeps serving (its loop allocates and frees
		 * through the routed slots), and the agent still answers */
		wait_tick(&t, t.last_tick + 300);
		out = console_out(t.p.pid, (const char *const[]){
						  "get system.gc.count", NULL});
		free(out);
		wait_tick(&t, t.last_tick + 50);
		ck_assert_int_eq(tracer_of(t.p.pid), 0);
		spec_kill(t.p.pid);
	}
}
END_TEST

/* A Ruby running jemalloc (preloaded, as some services do): native
 * tracking wraps glibc's allocator only, so `set config.native.track
 * true` is refused with the reason, nothing is routed, and the program
 * runs on. */
START_TEST(native_tracking_refused_under_another_allocator)
{
	static const char jemalloc[] = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
	char text[1400];
	struct target t;
	struct spec_run r;

	if (SPEC_SANITIZED)
		return; /* ruby runs ASan's allocator there: checked above */
	ck_assert_msg(access(jemalloc, R_OK) == 0,
		      "%s missing: make deps installs libjemalloc2", jemalloc);
	/* the same pid, jemalloc preloaded: ruby execs itself */
	snprintf(text, sizeof(text),
		 "if ENV['LD_PRELOAD'].to_s.empty?\n"
		 "  exec({'LD_PRELOAD' => '%s'}, RbConfig.ruby, __FILE__)\n"
		 "end\n"
		 "raise 'no jemalloc' unless File.read('/proc/self/maps')"
		 ".include?('libjemalloc')\n%s",
		 jemalloc, leaky_script);
	target_start(&t, text);
	wait_tick(&t, 20);
	console_attach(&r, t.p.pid,
		       (const char *const[]){"set config.native.track true",
					     "get config.native.track", NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "not glibc's") &&
			  strstr(r.out, "false"),
		      "%d: %s%s", r.status, r.out, r.err);
	spec_run_free(&r);
	wait_tick(&t, t.last_tick + 100);
	console_attach(&r, t.p.pid,
		       (const char *const[]){"set system.memory.dump j.vmheap",
					     NULL});
	ck_assert_msg(r.status == 0, "%d: %s%s", r.status, r.out, r.err);
	spec_run_free(&r);
	wait_tick(&t, t.last_tick + 50);
	spec_kill(t.p.pid);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("attach");
	TCase *tc = spec_tcase(s, "attach", 240);

	tcase_add_test(tc, attach_dumps_and_diff_names_the_leak);
	tcase_add_test(tc, attach_again_reuses_the_agent);
	tcase_add_test(tc, attach_to_a_blocked_main_thread);
	tcase_add_test(tc, attach_refuses_a_non_ruby_and_leaves_it_alone);
	tcase_add_test(tc, attach_refuses_a_stopped_ruby_and_leaves_it_stopped);
	tcase_add_test(
	    tc, a_console_killed_while_injecting_never_harms_the_program);
	tcase_add_test(tc, attach_from_a_console_under_valgrind);
	tcase_add_test(tc, attach_to_a_ruby_in_another_mount_namespace);
	tcase_add_test(tc, a_target_that_dies_during_the_attach_is_reported);
	tcase_add_test(tc, attach_to_an_undumpable_ruby);
	tcase_add_test(tc, attach_to_a_ruby_under_seccomp);
	tcase_add_test(tc, attach_to_no_such_process);
	tcase_add_test(tc, attach_refuses_another_users_ruby);
	tcase_add_test(tc, attach_refuses_an_undumpable_ruby_of_ones_own);
	tcase_add_test(tc, attach_without_cap_sys_ptrace_is_refused);
	tcase_add_test(tc, the_injected_agent_has_the_defaults_and_takes_a_dump_dir);
	tcase_add_test(tc, native_tracking_after_attach_names_a_c_extension_leak);
	tcase_add_test(tc, native_tracking_refused_under_another_allocator);
	return s;
}
