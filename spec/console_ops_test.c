/*
 * console_ops_test.c - Check suite of what an operator meets with
 * vmheap-console on a real box: VMs of other users (as root), VMs with
 * another TMPDIR (--dir), dead and zombie VMs, the live command line and
 * parent pid in --ps (a Ruby process title, a forked worker), and Ctrl-C
 * while a dump runs.  Real processes throughout: the sample VM (as
 * `nobody` when the suite runs as root), real `ruby` with the agent, the
 * console in tmux.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/vmheap_spec.h"

#define WAIT_MS 15000

/* ------------------------------------------------------------ helpers */

/*
 * Run the console with `args`; HOME and VMHEAP_AGENT_TMPDIR are `envdir`
 * (TMPDIR unset), so that only --dir can point elsewhere.
 */
static void console_run(struct spec_run *r, const char *envdir,
			const char *const *args)
{
	static char home[PATH_MAX + 8], tmpdir[PATH_MAX + 32];
	const char *env[] = {home, tmpdir, "TMPDIR", NULL};
	struct spec_tool_opts o = {.env = env, .timeout_ms = 20000};

	snprintf(home, sizeof(home), "HOME=%s", envdir);
	snprintf(tmpdir, sizeof(tmpdir), "VMHEAP_AGENT_TMPDIR=%s", envdir);
	*r = spec_tool_with("vmheap-console", args, &o);
}

/* The line of `out` that starts with `pid` (malloc'd), or NULL. */
static char *row_of(const char *out, long pid)
{
	char tag[32];
	const char *p = out;

	snprintf(tag, sizeof(tag), "%ld ", pid);
	while (p && *p) {
		if (!strncmp(p, tag, strlen(tag)))
			return strndup(p, strcspn(p, "\n"));
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* The whitespace-separated field `n` (0-based) of `row`, in `buf`. */
static const char *field(const char *row, int n, char *buf, size_t len)
{
	const char *p = row;

	for (int i = 0; i <= n; i++) {
		p += strspn(p, " ");
		if (i == n)
			break;
		p += strcspn(p, " ");
	}
	snprintf(buf, len, "%.*s", (int)strcspn(p, " "), p);
	return buf;
}

/* The state letter of /proc/PID/stat ('R', 'S', 'Z'...), or 0. */
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

/* ------------------------------------------------- another user's VM */

/*
 * Start vmheap-sample as user `pw` with its discovery file and dumps in
 * `dir` (spec_spawn runs it as that user; it dies with the test).
 */
static pid_t start_sample_as(const struct passwd *pw, const char *dir,
			     const char *program)
{
	char tmp[PATH_MAX + 32], dumps[PATH_MAX + 32];
	const char *env[] = {tmp, dumps, "VMHEAP_AGENT_PORT", NULL};
	struct spec_spawn sp = {.argv = ARGS(program, "--leak", "Session:10"),
				.env = env,
				.dir = dir,
				.stderr_fd = 2,
				.user = pw};
	pid_t pid;

	snprintf(tmp, sizeof(tmp), "VMHEAP_AGENT_TMPDIR=%s", dir);
	snprintf(dumps, sizeof(dumps), "VMHEAP_AGENT_DIR=%s", dir);
	pid = spec_spawn(&sp);
	ck_assert_int_ge(pid, 0);
	return pid;
}

/*
 * Root sees a VM run as `nobody`: --ps lists it with its user, -p reaches
 * it (get and a dump), and the interactive greeting says whose it is.  A
 * user who is neither root nor nobody keeps today's refusal.
 */
START_TEST(root_lists_and_reaches_a_vm_of_nobody)
{
	struct passwd *pw = getpwnam("nobody");
	char dir[] = "/tmp/vmheap-ops-nobody.XXXXXX", err[700], want[64],
	     buf[64], path[PATH_MAX], bin[PATH_MAX];
	const char *sample, *console;
	struct vmheap_agent_info info;
	struct spec_run r;
	struct stat st;
	char *row;
	pid_t vm;

	if (geteuid() != 0) {
		fprintf(stderr, "root_lists_and_reaches_a_vm_of_nobody: "
				"skipped, the suite does not run as root\n");
		return;
	}
	ck_assert_ptr_nonnull(pw);
	/* not under the suite's root directory (0700): nobody must reach it */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0777), 0);
	/* nor are the programs that run as nobody and daemon: the build may
	 * sit under a 0700 directory; root's copies, 0755 */
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	ck_assert_int_eq(mkdir(bin, 0755), 0);
	ck_assert_int_eq(chmod(bin, 0755), 0);
	sample = spec_copy_program("vmheap-sample", bin);
	console = spec_copy_program("vmheap-console", bin);
	vm = start_sample_as(pw, dir, sample);
	ck_assert_msg(
	    spec_discovery_wait(dir, vm, &info, WAIT_MS, err, sizeof(err)) == 0,
	    "discovery: %s", err);
	/* the file really is nobody's */
	ck_assert_int_eq(lstat(info.path, &st), 0);
	ck_assert_uint_eq(st.st_uid, pw->pw_uid);

	console_run(&r, spec_mkdtemp("empty"), ARGS("--ps", "--dir", dir));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "USER") != NULL, "%s", r.out);
	row = row_of(r.out, vm);
	ck_assert_msg(row != NULL, "pid %ld not listed:\n%s%s", (long)vm, r.out,
		      r.err);
	ck_assert_str_eq(field(row, 2, buf, sizeof(buf)), "nobody");
	free(row);
	spec_run_free(&r);

	snprintf(want, sizeof(want), "%ld", (long)vm);
	console_run(&r, spec_mkdtemp("empty"),
		    ARGS("--dir", dir, "-p", want, "-e", "get system.pid", "-e",
			 "set system.memory.dump by-root.vmheap"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(!strncmp(r.out, want, strlen(want)) &&
			  r.out[strlen(want)] == '\n',
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "dump written") != NULL, "%s", r.out);
	snprintf(path, sizeof(path), "%s/by-root.vmheap", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_uid, pw->pw_uid); /* the VM wrote it */
	spec_run_free(&r);

	/* the prompt's greeting says whose VM it is */
	{
		char cmd[PATH_MAX * 3], args[PATH_MAX + 64];
		struct spec_tmux t;

		snprintf(args, sizeof(args), "--dir '%s' -p %ld", dir,
			 (long)vm);
		spec_console_command(cmd, sizeof(cmd), spec_mkdtemp("home"),
				     args);
		spec_tmux_start(&t, cmd);
		snprintf(want, sizeof(want), "(pid %ld, user nobody) at",
			 (long)vm);
		spec_tmux_see(&t, want, WAIT_MS);
		spec_tmux_see(&t, spec_console_prompt(vm, ""), WAIT_MS);
		spec_tmux_kill(&t);
	}

	/* another user (daemon) is still refused and told why */
	{
		const char *argv[] = {"setpriv",
				      "--reuid=daemon",
				      "--regid=daemon",
				      "--clear-groups",
				      console,
				      "--dir",
				      dir,
				      "-e",
				      "get system.pid",
				      NULL};
		ck_assert_int_eq(
		    spec_run(argv, ARGS("HOME=/"), NULL, 20000, &r), 0);
		ck_assert_int_eq(r.status, 2);
		ck_assert_msg(strstr(r.err, "no agent of yours") &&
				  strstr(r.err, "1 discovery file of other"),
			      "%s", r.err);
		spec_run_free(&r);
	}

	spec_kill(vm);
	spec_rmrf(dir);
}
END_TEST

/* ---------------------------------------------------------- --dir */

/* A VM with another TMPDIR: the console, looking in its own, says how to
 * look elsewhere; --dir finds the VM. */
START_TEST(dir_finds_a_vm_of_another_tmpdir_and_no_agent_says_so)
{
	char vmdir[PATH_MAX], mine[PATH_MAX], want[64];
	struct spec_vm vm;
	struct spec_run r;

	snprintf(vmdir, sizeof(vmdir), "%s", spec_mkdtemp("vmtmp"));
	snprintf(mine, sizeof(mine), "%s", spec_mkdtemp("mine"));
	spec_vm_start(&vm, vmdir, vmdir, NULL);

	console_run(&r, mine, ARGS("-e", "get system.pid"));
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "no agent is running") &&
			  strstr(r.err, mine) && strstr(r.err, "--dir DIR"),
		      "%s", r.err);
	spec_run_free(&r);

	console_run(&r, mine, ARGS("--ps"));
	ck_assert_msg(strstr(r.err, "--dir DIR") != NULL, "%s", r.err);
	ck_assert_str_eq(r.out, "");
	spec_run_free(&r);

	console_run(&r, mine, ARGS("--dir", vmdir, "-e", "get system.pid"));
	snprintf(want, sizeof(want), "%ld\n", (long)vm.pid);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.out, want);
	spec_run_free(&r);
	spec_vm_stop(&vm);
}
END_TEST

/* ------------------------------------------------------ dead and zombie */

/*
 * A VM killed with -9 whose parent (this test) has not reaped it is a
 * zombie: kill(pid, 0) still succeeds, but it must not be listed, nor
 * picked.
 */
START_TEST(a_zombie_vm_is_never_listed)
{
	char dir[PATH_MAX], other[PATH_MAX];
	struct spec_vm vm, live;
	struct spec_run r;
	int status;

	snprintf(dir, sizeof(dir), "%s", spec_mkdtemp("zombie"));
	snprintf(other, sizeof(other), "%s", spec_mkdtemp("other"));
	spec_vm_start(&vm, dir, other, NULL);
	spec_vm_start(&live, dir, other, NULL);
	ck_assert_int_eq(kill(vm.pid, SIGKILL), 0);
	SPEC_WAIT_UNTIL(proc_state(vm.pid) == 'Z', WAIT_MS,
			"the killed VM %d to be a zombie", (int)vm.pid);
	ck_assert_int_eq(kill(vm.pid, 0), 0); /* what the old check saw */
	ck_assert_int_eq(access(vm.discovery, F_OK), 0);

	console_run(&r, dir, ARGS("--ps"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(row_of(r.out, vm.pid) == NULL, "zombie listed:\n%s",
		      r.out);
	ck_assert_msg(strstr(r.out, "COMMAND") != NULL, "%s", r.out);
	{
		char *row = row_of(r.out, live.pid);

		ck_assert_msg(row != NULL, "live VM not listed:\n%s", r.out);
		free(row);
	}
	spec_run_free(&r);
	/* the file of the dead VM (ours) was cleaned away */
	ck_assert_int_eq(access(vm.discovery, F_OK), -1);
	/* and the one VM left is picked without asking */
	console_run(&r, dir, ARGS("-e", "get system.pid"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_int_eq(atol(r.out), live.pid);
	spec_run_free(&r);

	ck_assert_int_eq(waitpid(vm.pid, &status, 0), vm.pid);
	spec_vm_stop(&live);
}
END_TEST

/* ------------------------------------------- live command line, PPID */

/*
 * A Ruby VM sets its process title after start, then forks a worker
 * (which gets a fresh agent) that sets its own.  --ps shows each title as
 * it is now, not the argv saved at the agent's start (the worker's file
 * holds its parent's title), and the worker's PPID is the master.
 */
START_TEST(ps_shows_live_titles_and_the_parent_pid)
{
	static const char script[] =
	    "STDOUT.sync = true\n"
	    "Process.setproctitle('worker 3')\n"
	    "master = Process.pid\n"
	    "child = fork do\n"
	    "  sleep 0.3 until File.exist?(\"vmheap-agent.#{Process.pid}\")\n"
	    "  Process.setproctitle('worker child')\n"
	    "  File.write('titled', '')\n"
	    "  loop { sleep 0.1; exit if Process.ppid != master }\n"
	    "end\n"
	    "puts child\n"
	    "sleep 0.1 until File.exist?('titled')\n"
	    "puts 'titled'\n"
	    "STDIN.read\n"
	    "Process.kill(:KILL, child)\n";
	char line[64], buf[64], err[700];
	struct spec_ruby vm;
	struct vmheap_agent_info info;
	struct spec_run r;
	pid_t child;
	char *row;

	spec_ruby_start_with(&vm, script,
			     &(struct spec_ruby_opts){.stderr_apart = 1});
	ck_assert_int_eq(spec_proc_line(&vm.p, line, sizeof(line), WAIT_MS), 1);
	child = (pid_t)atol(line);
	ck_assert_int_gt(child, 0);
	ck_assert_int_eq(spec_proc_line(&vm.p, line, sizeof(line), WAIT_MS), 1);
	ck_assert_str_eq(line, "titled");
	/* the worker's discovery file holds the title it was forked with */
	ck_assert_msg(spec_discovery_wait(vm.dir, child, &info, WAIT_MS, err,
					  sizeof(err)) == 0,
		      "%s", err);
	ck_assert_msg(strstr(info.argv, "worker child") == NULL, "%s",
		      info.argv);

	console_run(&r, vm.dir, ARGS("--ps"));
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "PPID") != NULL, "%s", r.out);
	row = row_of(r.out, vm.p.pid);
	ck_assert_msg(row && strstr(row, "worker 3"), "master:\n%s", r.out);
	ck_assert_int_eq(atol(field(row, 1, buf, sizeof(buf))), getpid());
	free(row);
	row = row_of(r.out, child);
	ck_assert_msg(row && strstr(row, "worker child") &&
			  !strstr(row, "worker 3"),
		      "worker:\n%s", r.out);
	ck_assert_int_eq(atol(field(row, 1, buf, sizeof(buf))), vm.p.pid);
	free(row);
	spec_run_free(&r);

	/* --json has the live command and the parent too */
	console_run(&r, vm.dir, ARGS("--ps", "--json"));
	snprintf(buf, sizeof(buf), "\"ppid\":%ld", (long)vm.p.pid);
	ck_assert_msg(strstr(r.out, buf) &&
			  strstr(r.out, "\"command\":\"worker child\""),
		      "%s", r.out);
	spec_run_free(&r);
	ck_assert_int_eq(spec_proc_wait_exit(&vm.p, WAIT_MS), 0);
}
END_TEST

/* ---------------------------------------------------- Ctrl-C in a dump */

/* A sample VM whose dumps take a few seconds (a slow walk). */
static void slow_vm_start(struct spec_vm *vm, const char *dir)
{
	static const char *const args[] = {"--walk-delay-ms", "4000", NULL};
	struct spec_vm_opts o = {.args = args};

	spec_vm_start(vm, dir, dir, &o);
}

/* Wait until the VM says a dump runs (the console sent its request, so
 * its Ctrl-C handling is in place). */
static void wait_dumping(const struct spec_vm *vm)
{
	vmheap_client *c = spec_connect(vm, WAIT_MS);
	struct spec_wait w;
	int dumping = 0;

	ck_assert_ptr_nonnull(c);
	spec_wait_begin(&w, WAIT_MS);
	w.interval_ms = 20;
	for (;;) {
		struct spec_reply rep;

		if (spec_client_call(c, "get", "system.memory.dumping", NULL,
				     &rep) == 0 &&
		    rep.ok && rep.value.type == MSGPACK_OBJECT_BOOLEAN)
			dumping = rep.value.via.boolean;
		spec_reply_release(&rep);
		if (dumping || !spec_wait_next(&w))
			break;
	}
	vmheap_client_close(c);
	ck_assert_msg(dumping, "the VM never started the dump");
}

/* -e mode: one Ctrl-C says the dump goes on and where; the console waits
 * for the reply and exits 0. */
START_TEST(ctrl_c_in_e_mode_says_the_dump_goes_on_and_waits)
{
	char dir[PATH_MAX], cmd[PATH_MAX * 3], want[PATH_MAX + 64], *pane;
	struct spec_tmux t;
	struct spec_vm vm;

	snprintf(dir, sizeof(dir), "%s", spec_mkdtemp("ctrlc"));
	slow_vm_start(&vm, dir);
	spec_console_command(cmd, sizeof(cmd), dir,
			     "-e 'set system.memory.dump slow.vmheap'");
	spec_tmux_start(&t, cmd);
	wait_dumping(&vm);
	spec_tmux_key(&t, "C-c");
	snprintf(want, sizeof(want), "its file will be %s/slow.vmheap", dir);
	pane = spec_tmux_expect(&t, want, WAIT_MS);
	ck_assert_msg(strstr(pane, "the dump goes on in the VM") != NULL, "%s",
		      pane);
	ck_assert_ptr_null(strstr(pane, "[exit"));
	free(pane);
	pane = spec_tmux_expect(&t, "[exit 0]", WAIT_MS);
	ck_assert_msg(strstr(pane, "dump written: ") != NULL, "%s", pane);
	free(pane);
	snprintf(want, sizeof(want), "%s/slow.vmheap", dir);
	ck_assert_int_eq(access(want, R_OK), 0);
	spec_tmux_kill(&t);
	spec_vm_stop(&vm);
}
END_TEST

/* The prompt: the first Ctrl-C says the dump goes on, the second quits
 * with status 130; the VM finishes the dump anyway. */
START_TEST(ctrl_c_twice_at_the_prompt_quits_and_the_dump_still_lands)
{
	char dir[PATH_MAX], cmd[PATH_MAX * 3], want[PATH_MAX + 64];
	struct spec_tmux t;
	struct spec_vm vm;

	snprintf(dir, sizeof(dir), "%s", spec_mkdtemp("ctrlc"));
	slow_vm_start(&vm, dir);
	spec_console_command(cmd, sizeof(cmd), dir, "");
	spec_tmux_start(&t, cmd);
	spec_tmux_see(&t, spec_console_prompt(vm.pid, ""), WAIT_MS);
	spec_tmux_line(&t, "set system.memory.dump later.vmheap");
	wait_dumping(&vm);
	spec_tmux_key(&t, "C-c");
	spec_tmux_see(&t, "the dump goes on in the VM", WAIT_MS);
	spec_tmux_key(&t, "C-c");
	spec_tmux_see(&t, "[exit 130]", WAIT_MS);
	snprintf(want, sizeof(want), "%s/later.vmheap", dir);
	ck_assert_int_eq(access(want, F_OK), -1); /* not yet: still dumping */
	SPEC_WAIT_UNTIL(access(want, F_OK) == 0, WAIT_MS, "%s to appear", want);
	ck_assert_msg(access(want, R_OK) == 0, "%s cannot be read", want);
	spec_tmux_kill(&t);
	spec_vm_stop(&vm);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("console_ops");
	TCase *tc;

	tc = spec_tcase(s, "discovery", 60);
	tcase_add_test(tc, root_lists_and_reaches_a_vm_of_nobody);
	tcase_add_test(tc,
		       dir_finds_a_vm_of_another_tmpdir_and_no_agent_says_so);
	tcase_add_test(tc, a_zombie_vm_is_never_listed);
	tcase_add_test(tc, ps_shows_live_titles_and_the_parent_pid);

	tc = spec_tcase(s, "ctrl-c", 60);
	tcase_add_test(tc, ctrl_c_in_e_mode_says_the_dump_goes_on_and_waits);
	tcase_add_test(
	    tc, ctrl_c_twice_at_the_prompt_quits_and_the_dump_still_lands);
	return s;
}
