/*
 * agent_ops_test.c - the agent in operation (issues 16 and 19), with the
 * real vmheap-sample and the real vmheap-console: an agent that cannot
 * start never stops its VM, a VM stopped mid-dump still answers (or the
 * console finds the finished file), the dump directory moves at run
 * time, dead writers' temporary files go, fork dumps respect free
 * memory, and a group of variables reads as one map.  Part of the agent
 * suite (agent_ops_tcases, called from agent_test.c).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_helpers.h"
#include "lib/vmheap_spec.h"

#define WAIT_MS 20000

/* How many names in `dir` hold `needle`. */
static int names_with(const char *dir, const char *needle)
{
	char *names = spec_ls(dir, ' ');
	int n = spec_count(names, needle);

	free(names);
	return n;
}

/* Wait until the file at `path` holds `text`: its contents (free them),
 * or fail the test. */
static char *wait_file_for(const char *path, const char *text)
{
	struct spec_wait w;

	spec_wait_begin(&w, WAIT_MS);
	for (;;) {
		char *s = spec_read_file(path, NULL);
		char held[512];

		if (s && strstr(s, text))
			return s;
		snprintf(held, sizeof(held), "%s", s ? s : "(nothing)");
		free(s);
		spec_wait_or_fail(&w, "%s to hold \"%s\"; it holds: %s", path,
				  text, held);
	}
}

/*
 * Start vmheap-sample whose agent cannot start (dump directory `dumpdir`,
 * extra `env`), and check what a user sees: one warning line on stderr
 * naming `why`, and a VM that runs on until SIGTERM and exits 0.
 */
static void runs_on_without_agent(const char *dumpdir, const char *const *env,
				   const char *why)
{
	const char *dir = spec_mkdtemp("agent-noagent");
	struct spec_vm_opts vo = {0};
	char log[300], *out;
	pid_t pid;
	int st;

	snprintf(log, sizeof(log), "%s/log", dir);
	vo.env = env;
	vo.log_path = log;
	pid = spec_vm_spawn(dir, dumpdir, &vo);
	ck_assert(pid > 0);
	out = wait_file_for(log, "(no agent)");
	/* it keeps running: it goes on to start its mutator thread (after
	 * that line) and has not exited */
	SPEC_WAIT_UNTIL(spec_threads(pid) >= 2 || spec_wait(pid, 0, NULL) != -1,
			WAIT_MS, "the VM's mutator thread");
	ck_assert_msg(spec_wait(pid, 0, NULL) == -1,
		      "the VM exited although only its agent failed: %s", out);
	st = spec_stop(pid, SIGTERM, 15000);
	ck_assert_msg(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "status %d", st);
	free(out);
	out = spec_read_file(log, NULL);
	ck_assert_msg(spec_count(out, "warning:") == 1, "%s", out);
	ck_assert_msg(strstr(out, why), "the warning does not say \"%s\": %s",
		      why, out);
	ck_assert_msg(strstr(out, "VMHEAP_AGENT_REQUIRED=1"), "%s", out);
	/* one line: the warning is followed by the "(no agent)" line only */
	ck_assert_int_eq(spec_count(out, "\n"), 2);
	/* and no discovery file claims an agent */
	ck_assert_msg(names_with(dir, "vmheap-agent.") == 0,
		      "a discovery file was left");
	free(out);
}

START_TEST(an_agent_that_cannot_start_warns_once_and_the_vm_runs_on)
{
	char portenv[64], *err;
	const char *env[] = {portenv, NULL};
	struct spec_vm_opts o = {.env = (const char *const[]){
				     "VMHEAP_AGENT_REQUIRED=1", portenv, NULL}};
	uint16_t port;
	int fd = spec_tcp_listen(&port), st;

	runs_on_without_agent("/nonexistent/vmheap-dumps", NULL,
			      "dump directory /nonexistent/vmheap-dumps: No "
			      "such file or directory; set VMHEAP_AGENT_DIR");
	snprintf(portenv, sizeof(portenv), "VMHEAP_AGENT_PORT=%u",
		 (unsigned)port);
	runs_on_without_agent(spec_mkdtemp("agent-port"), env,
			      "Address already in use (another process holds "
			      "it: choose another VMHEAP_AGENT_PORT");
	snprintf(portenv, sizeof(portenv), "VMHEAP_AGENT_PORT=banana");
	runs_on_without_agent(spec_mkdtemp("agent-env"), env,
			      "VMHEAP_AGENT_PORT=banana is not a port number");

	/* VMHEAP_AGENT_REQUIRED=1: today's behaviour, fatal */
	snprintf(portenv, sizeof(portenv), "VMHEAP_AGENT_PORT=%u",
		 (unsigned)port);
	st = spec_vm_run_to_exit(&o, &err);
	ck_assert_msg(st == 1, "exit code %d: %s", st, err);
	ck_assert_msg(strstr(err, "cannot start the agent") &&
			  strstr(err, "VMHEAP_AGENT_REQUIRED is set"),
		      "%s", err);
	free(err);
	close(fd);
}
END_TEST

/* ------------------------------------------------- exit during a dump */

/* Wait until a dump runs in the VM (system.memory.dumping). */
static void wait_dumping(vmheap_client *c)
{
	struct spec_wait w;
	struct spec_reply r;
	int busy;

	spec_wait_begin(&w, WAIT_MS);
	for (;;) {
		call_ok(c, "get", "system.memory.dumping", NULL, &r);
		busy = r.value.type == MSGPACK_OBJECT_BOOLEAN &&
		       r.value.via.boolean;
		spec_reply_release(&r);
		if (busy)
			break;
		spec_wait_or_fail(&w, "a dump to start");
	}
}

/* Start vmheap-console -p PID -e CMD... with its output in `out`. */
static pid_t console_spawn(const struct spec_vm *s, const char *out,
			   const char *const *cmds)
{
	char pid[32], envt[300];
	const char *argv[16], *env[] = {envt, NULL};
	struct spec_spawn sp = {0};
	int n = 0;

	snprintf(pid, sizeof(pid), "%d", (int)s->pid);
	snprintf(envt, sizeof(envt), "VMHEAP_AGENT_TMPDIR=%s", s->tmpdir);
	argv[n++] = spec_bin("vmheap-console");
	argv[n++] = "-p";
	argv[n++] = pid;
	for (int i = 0; cmds[i] && n < 14; i++) {
		argv[n++] = "-e";
		argv[n++] = cmds[i];
	}
	argv[n] = NULL;
	sp.argv = argv;
	sp.env = env;
	sp.stdout_path = out;
	sp.stderr_path = out;
	return spec_spawn(&sp);
}

/* Start a VM with `o`, then the console on it with `cmds` (its output
 * in `out`, s->tmpdir/console.out), and wait until the dump it asked for
 * runs.  Returns the console's pid. */
static pid_t console_dump_started(struct spec_vm *s,
				  const struct spec_vm_opts *o,
				  const char *const *cmds, char *out,
				  size_t outlen)
{
	pid_t con;

	spec_vm_start(s, NULL, NULL, o);
	snprintf(out, outlen, "%s/console.out", s->tmpdir);
	con = console_spawn(s, out, cmds);
	ck_assert(con > 0);
	/* the dump has begun when its temporary file is there (watched on
	 * disk: no request to the agent while it forks) */
	SPEC_WAIT_UNTIL(names_with(s->dumpdir, ".vmheap-dump.") != 0, WAIT_MS,
			"a dump's temporary file in %s", s->dumpdir);
	return con;
}

/* The number of objects of a whole dump (fails the test otherwise). */
static uint64_t whole_dump_objects(const char *path)
{
	struct census_row rows[64];
	uint64_t objects;
	uint32_t flags;

	dump_census(path, rows, 64, &objects, &flags);
	return objects;
}

START_TEST(a_sigterm_during_a_dump_still_tells_the_console_of_the_file)
{
	/* several times, in-process and forked: the race is in the timing */
	for (int i = 0; i < 4; i++) {
		struct spec_vm_opts o = {.args = (const char *const[]){
					     "--leak", "Session:200",
					     "--walk-delay-ms", "300", NULL}};
		char out[300], cmd[64], path[600], *said;
		const char *cmds[] = {i % 2 ? "set config.dump.fork true"
					    : "set config.dump.fork false",
				      cmd, NULL};
		struct spec_vm s;
		pid_t con;
		int st;

		snprintf(cmd, sizeof(cmd), "set system.memory.dump d%d.vmheap",
			 i);
		con = console_dump_started(&s, &o, cmds, out, sizeof(out));
		snprintf(path, sizeof(path), "%s/d%d.vmheap", s.dumpdir, i);
		st = spec_vm_stop(&s);
		ck_assert_msg(st == 0, "run %d: the VM's exit code %d", i, st);
		st = spec_wait(con, WAIT_MS, NULL);
		said = spec_read_file(out, NULL);
		/* an exit never costs a dump that exists, and the console
		 * says so with status 0 */
		ck_assert_msg(st == 0, "run %d: console status %d: %s", i, st,
			      said);
		ck_assert_msg(strstr(said, "dump written: ") ||
				  strstr(said, "the dump was completed: "),
			      "run %d: %s", i, said);
		ck_assert_msg(strstr(said, path), "run %d: %s", i, said);
		ck_assert_uint_gt(whole_dump_objects(path), 200);
		free(said);
		spec_vm_cleanup(&s);
	}
}
END_TEST

/*
 * The VM dies (SIGKILL) with a dump pending, so no reply can come.  The
 * console looks for the file in the agent's dump_dir and reads it: a
 * whole dump is reported as completed (status 0), a cut-short or missing
 * one as lost (status 2).  The whole file is put there by the test, as
 * if the VM had published it an instant before it died.
 */
static void vm_dies_mid_dump(const char *put, const char *want, int want_st)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--walk-delay-ms", "60000", NULL}};
	const char *cmds[] = {"set config.dump.fork false",
			      "set system.memory.dump lost.vmheap", NULL};
	char out[300], path[600], *said;
	struct spec_vm s;
	pid_t con;
	int st;

	con = console_dump_started(&s, &o, cmds, out, sizeof(out));
	snprintf(path, sizeof(path), "%s/lost.vmheap", s.dumpdir);
	if (put) {
		size_t len;
		char *bytes = spec_read_file(put, &len);

		ck_assert(bytes);
		spec_write_file(path, bytes, len);
		free(bytes);
	}
	spec_kill(s.pid);
	s.pid = 0;
	st = spec_wait(con, WAIT_MS, NULL);
	said = spec_read_file(out, NULL);
	ck_assert_msg(st == want_st, "console status %d: %s", st, said);
	ck_assert_msg(strstr(said, want), "%s", said);
	free(said);
	spec_vm_cleanup(&s);
}

START_TEST(the_console_finds_the_dump_of_a_vm_that_died_before_replying)
{
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	char whole[600], cut[600], want[700], *bytes;
	size_t len;

	/* a real whole dump, and the same cut short */
	spec_vm_start(&s, NULL, NULL, NULL);
	c = spec_vm_client(&s);
	call_ok(c, "set", "system.memory.dump", "w.vmheap", &r);
	spec_reply_release(&r);
	vmheap_client_close(c);
	snprintf(whole, sizeof(whole), "%s/w.vmheap", s.dumpdir);
	snprintf(cut, sizeof(cut), "%s/cut.vmheap", s.dumpdir);
	bytes = spec_read_file(whole, &len);
	ck_assert(bytes && len > 100);
	spec_write_file(cut, bytes, len - 20);
	free(bytes);

	snprintf(want, sizeof(want),
		 "exited during the dump; the dump was completed: ");
	vm_dies_mid_dump(whole, want, 0);
	vm_dies_mid_dump(whole, "lost.vmheap (", 0);
	vm_dies_mid_dump(cut, "exited during the dump; the dump was lost (",
			 2);
	vm_dies_mid_dump(NULL, "the dump was lost (", 2);
	spec_vm_cleanup(&s);
}
END_TEST

/* ---------------------------------------------------- config.dump.dir */

START_TEST(the_dump_directory_moves_at_run_time_and_refusals_say_why)
{
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	struct vmheap_agent_info info;
	char other[300], file[400], err[600], p[700];

	spec_vm_start(&s, NULL, NULL, NULL);
	c = spec_vm_client(&s);
	snprintf(other, sizeof(other), "%s/other", s.tmpdir);
	ck_assert(mkdir(other, 0700) == 0);
	snprintf(file, sizeof(file), "%s/a-file", s.tmpdir);
	spec_write_text(file, "x");

	call_error(c, "set", "config.dump.dir", "relative/dir", "path");
	call_error(c, "set", "config.dump.dir", "/nonexistent/vmheap", "path");
	call_error(c, "set", "config.dump.dir", file, "path");
	call_error(c, "set", "config.dump.dir", "/proc", "path");
	ck_assert_int_eq(
	    spec_client_call_str(c, "set", "config.dump.dir", "/proc", &r), 0);
	ck_assert_msg(strstr(r.message, "/proc is not writable by the VM"),
		      "%s", r.message);
	spec_reply_release(&r);
	ck_assert_int_eq(spec_client_call_str(c, "set", "config.dump.dir",
					      "/nonexistent/vmheap", &r),
			 0);
	ck_assert_msg(strstr(r.message, "does not exist"), "%s", r.message);
	spec_reply_release(&r);
	ck_assert_int_eq(
	    spec_client_call_str(c, "set", "config.dump.dir", file, &r), 0);
	ck_assert_msg(strstr(r.message, "is not a directory"), "%s",
		      r.message);
	spec_reply_release(&r);
	ck_assert_int_eq(
	    spec_client_call_str(c, "set", "config.dump.dir", "rel", &r), 0);
	ck_assert_msg(strstr(r.message, "is not an absolute path"), "%s",
		      r.message);
	spec_reply_release(&r);

	/* the discovery file names the dump directory, and follows it */
	ck_assert_int_eq(vmheap_discovery_read(s.discovery, &info, err,
					       sizeof(err)),
			 0);
	ck_assert_str_eq(info.dump_dir, s.dumpdir);
	call_ok(c, "set", "config.dump.dir", other, &r);
	ck_assert(obj_str_is(&r.value, other));
	spec_reply_release(&r);
	call_ok(c, "get", "config.dump.dir", NULL, &r);
	ck_assert(obj_str_is(&r.value, other));
	spec_reply_release(&r);
	ck_assert_int_eq(vmheap_discovery_read(s.discovery, &info, err,
					       sizeof(err)),
			 0);
	ck_assert_str_eq(info.dump_dir, other);

	/* dumps land there, under the same rules */
	call_ok(c, "set", "system.memory.dump", "here.vmheap", &r);
	snprintf(p, sizeof(p), "%s/here.vmheap", other);
	ck_assert(obj_str_is(map_get(&r.value, "path"), p));
	spec_reply_release(&r);
	ck_assert_uint_gt(whole_dump_objects(p), 0);
	call_error(c, "set", "system.memory.dump", "here.vmheap", "exists");
	call_error(c, "set", "system.memory.dump", "../escape.vmheap", "path");
	snprintf(p, sizeof(p), "%s/abs.vmheap", s.dumpdir);
	call_error(c, "set", "system.memory.dump", p, "path");
	snprintf(p, sizeof(p), "%s/abs.vmheap", other);
	call_ok(c, "set", "system.memory.dump", p, &r);
	spec_reply_release(&r);
	ck_assert_int_eq(access(p, F_OK), 0);

	vmheap_client_close(c);
	spec_vm_cleanup(&s);
}
END_TEST

/* ------------------------------------------- temporary files left over */

/* The names in `dir` that begin with ".vmheap-dump.", space-separated. */
static void tmp_files(const char *dir, char *buf, size_t len)
{
	char *names = spec_ls(dir, '\n'), *save = NULL;
	size_t o = 0;

	buf[0] = '\0';
	for (char *n = strtok_r(names, "\n", &save); n;
	     n = strtok_r(NULL, "\n", &save))
		if (!strncmp(n, ".vmheap-dump.", 13) && o + strlen(n) + 2 < len)
			o += (size_t)snprintf(buf + o, len - o, "%s ", n);
	free(names);
}

/* Start ticks of `pid` (field 22 of /proc/PID/stat). */
static long long start_ticks(pid_t pid)
{
	char path[64], *s, *p;
	long long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	s = spec_read_file(path, NULL);
	ck_assert(s);
	p = strrchr(s, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = atoll(p + 1);
	free(s);
	return v;
}

START_TEST(a_vm_killed_mid_dump_leaves_a_temp_file_the_next_agent_removes)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--leak", "Session:500",
					  "--walk-delay-ms", "60000", NULL}};
	struct spec_vm s1, s2;
	vmheap_client *c;
	struct spec_reply r;
	const msgpack_object *rm;
	char before[1024], after[1024], alive[600], reused[600], old[600],
	    p[1400];
	struct stat st;
	long long size = 0;
	pid_t dumper;

	spec_vm_start(&s1, NULL, NULL, &o);
	c = spec_vm_client(&s1);
	call_ok(c, "set", "config.dump.fork", "false", &r);
	spec_reply_release(&r);
	/* the dump runs on a connection of its own, never answered */
	dumper = fork();
	ck_assert(dumper >= 0);
	if (dumper == 0) {
		vmheap_client *d = vmheap_client_connect(&d, &s1.info, 5000) == 0
				       ? d
				       : NULL;
		if (d) {
			vmheap_client_set_timeout(d, 0);
			spec_client_call_str(d, "set", "system.memory.dump",
					     "never.vmheap", &r);
		}
		_exit(0);
	}
	wait_dumping(c);
	vmheap_client_close(c);
	SPEC_WAIT_UNTIL(
	    (tmp_files(s1.dumpdir, before, sizeof(before)), before[0]), WAIT_MS,
	    "a temporary file in %s", s1.dumpdir);
	/* its name carries the writer's pid and start time */
	snprintf(p, sizeof(p), ".vmheap-dump.%d-%lld.", (int)s1.pid,
		 start_ticks(s1.pid));
	ck_assert_msg(strncmp(before, p, strlen(p)) == 0, "%s", before);
	spec_kill(s1.pid); /* what the OOM killer does */
	spec_wait(dumper, WAIT_MS, NULL);
	tmp_files(s1.dumpdir, before, sizeof(before));
	ck_assert_msg(before[0], "the kill left no temporary file to clean");
	before[strlen(before) - 1] = '\0';
	snprintf(p, sizeof(p), "%s/%s", s1.dumpdir, before);
	ck_assert(stat(p, &st) == 0);
	size = st.st_size;

	/* files the next agent must leave alone: a live writer (this test),
	 * and names of another form; and one it must remove: a live pid
	 * whose start time is not the writer's (the pid was reused) */
	snprintf(alive, sizeof(alive), "%s/.vmheap-dump.%d-%lld.00ff.tmp",
		 s1.dumpdir, (int)getpid(), start_ticks(getpid()));
	snprintf(reused, sizeof(reused), "%s/.vmheap-dump.%d-%lld.00aa.tmp",
		 s1.dumpdir, (int)getpid(), start_ticks(getpid()) + 1);
	snprintf(old, sizeof(old), "%s/.vmheap-dump.0123456789abcdef.tmp",
		 s1.dumpdir);
	spec_write_text(alive, "a");
	spec_write_text(reused, "bb");
	spec_write_text(old, "c");

	/* a new VM in the same dump directory */
	spec_vm_start(&s2, s1.tmpdir, s1.dumpdir, NULL);
	tmp_files(s1.dumpdir, after, sizeof(after));
	ck_assert_msg(strstr(after, before) == NULL,
		      "the dead writer's file stayed: %s", after);
	ck_assert_msg(strstr(after, strrchr(alive, '/') + 1) &&
			  strstr(after, strrchr(old, '/') + 1),
		      "a file of a live writer or of another form went: %s",
		      after);
	ck_assert_msg(!strstr(after, strrchr(reused, '/') + 1),
		      "a reused pid's file stayed: %s", after);

	/* the first dump's reply says what went; the next one is silent */
	c = spec_vm_client(&s2);
	call_ok(c, "set", "system.memory.dump", "next.vmheap", &r);
	rm = map_get(&r.value, "removed_tmp");
	ck_assert_msg(rm && rm->type == MSGPACK_OBJECT_MAP,
		      "no removed_tmp in the reply");
	ck_assert_uint_eq(map_get(rm, "files")->via.u64, 2);
	ck_assert_uint_eq(map_get(rm, "bytes")->via.u64,
			  (uint64_t)size + 2);
	spec_reply_release(&r);
	call_ok(c, "set", "system.memory.dump", "next2.vmheap", &r);
	ck_assert(map_get(&r.value, "removed_tmp") == NULL);
	spec_reply_release(&r);
	vmheap_client_close(c);
	unlink(alive);
	unlink(old);
	spec_vm_cleanup(&s2);
}
END_TEST

/* The pid of a child of `pid` (any thread's), or 0. */
static pid_t child_of(pid_t pid)
{
	char path[128], *names, *save = NULL;
	pid_t child = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	names = spec_ls(path, '\n');
	for (char *t = strtok_r(names, "\n", &save); t && !child;
	     t = strtok_r(NULL, "\n", &save)) {
		char cp[160], *kids;

		snprintf(cp, sizeof(cp), "/proc/%d/task/%s/children", (int)pid,
			 t);
		kids = spec_read_file(cp, NULL);
		if (kids)
			child = (pid_t)atoi(kids);
		free(kids);
	}
	free(names);
	return child;
}

START_TEST(a_fork_child_killed_mid_dump_leaves_nothing)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--walk-delay-ms", "60000", NULL}};
	struct spec_vm s;
	vmheap_client *c, *d;
	struct spec_reply r;
	char left[1024];
	pid_t child = 0, dumper;
	int rc;

	spec_vm_start(&s, NULL, NULL, &o);
	c = spec_vm_client(&s);
	d = spec_vm_client(&s);
	vmheap_client_set_timeout(d, 0);
	dumper = fork();
	ck_assert(dumper >= 0);
	if (dumper == 0) {
		rc = spec_client_call_str(d, "set", "system.memory.dump",
					  "child.vmheap", &r);
		_exit(rc == 0 && !r.ok &&
			      strstr(r.message, "was killed by signal 9")
			  ? 0
			  : 1);
	}
	wait_dumping(c);
	SPEC_WAIT_UNTIL((child = child_of(s.pid)) != 0, WAIT_MS,
			"the dump's child of pid %d", (int)s.pid);
	ck_assert(kill(child, SIGKILL) == 0);
	ck_assert_int_eq(spec_wait(dumper, WAIT_MS, NULL), 0);
	tmp_files(s.dumpdir, left, sizeof(left));
	ck_assert_msg(!left[0], "left behind: %s", left);
	ck_assert_int_eq(names_with(s.dumpdir, "child.vmheap"), 0);
	/* and the VM answers, with no dump running */
	ck_assert_int_eq(get_int(c, "system.pid"), s.pid);
	call_ok(c, "get", "system.memory.dumping", NULL, &r);
	ck_assert(r.value.type == MSGPACK_OBJECT_BOOLEAN &&
		  !r.value.via.boolean);
	spec_reply_release(&r);
	vmheap_client_close(c);
	vmheap_client_close(d);
	spec_vm_cleanup(&s);
}
END_TEST

/* --------------------------------------------------- fork_min_free */

START_TEST(fork_dumps_are_refused_below_fork_min_free)
{
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	int64_t rss, auto_min;

	spec_vm_start(&s, NULL, NULL, NULL);
	c = spec_vm_client(&s);
	/* by default: the RSS (a fork child may copy all of it) */
	rss = get_int(c, "system.memory.rss");
	auto_min = get_int(c, "config.dump.fork_min_free");
	ck_assert_msg(auto_min > rss / 2 && auto_min < rss * 2,
		      "auto %lld, rss %lld", (long long)auto_min,
		      (long long)rss);

	call_ok(c, "set", "config.dump.fork_min_free", "1000000000000000",
		&r);
	spec_reply_release(&r);
	ck_assert_int_eq(spec_client_call_str(c, "set", "system.memory.dump",
					      "big.vmheap", &r),
			 0);
	ck_assert(!r.ok);
	ck_assert_str_eq(r.code, "dump");
	ck_assert_msg(strstr(r.message, "refusing a fork dump: MemAvailable "
					"is ") &&
			  strstr(r.message, "below the threshold of "
					    "1000000000000000 bytes"),
		      "%s", r.message);
	spec_reply_release(&r);
	ck_assert_int_eq(names_with(s.dumpdir, "big.vmheap"), 0);

	/* in-process dumps are not concerned */
	call_ok(c, "set", "config.dump.fork", "false", &r);
	spec_reply_release(&r);
	call_ok(c, "set", "system.memory.dump", "inproc.vmheap", &r);
	spec_reply_release(&r);
	call_ok(c, "set", "config.dump.fork", "true", &r);
	spec_reply_release(&r);

	call_ok(c, "set", "config.dump.fork_min_free", "0", &r);
	spec_reply_release(&r);
	ck_assert_int_eq(get_int(c, "config.dump.fork_min_free"), 0);
	call_ok(c, "set", "system.memory.dump", "big.vmheap", &r);
	ck_assert(map_get(&r.value, "forked")->via.boolean);
	spec_reply_release(&r);
	call_error(c, "set", "config.dump.fork_min_free", "-1", "type");
	call_ok(c, "set", "config.dump.fork_min_free", "auto", &r);
	spec_reply_release(&r);
	ck_assert_int_gt(get_int(c, "config.dump.fork_min_free"), 0);
	vmheap_client_close(c);
	spec_vm_cleanup(&s);
}
END_TEST

/* ------------------------------------------- the fork guard's estimate */

#define MIB (1024 * 1024)
/* What the guard test pretends MemAvailable is: below the RSS of the VM
 * with its 96 MiB written, above what an idle fork dump copies. */
#define FAKE_AVAILABLE (48 * MIB)

/* A field of system.fork_estimate, as an integer. */
static int64_t estimate_int(const struct spec_reply *r, const char *key)
{
	const msgpack_object *v = map_get(&r->value, key);

	ck_assert_msg(v, "no %s in system.fork_estimate", key);
	if (v->type == MSGPACK_OBJECT_BOOLEAN)
		return v->via.boolean;
	ck_assert(v->type == MSGPACK_OBJECT_POSITIVE_INTEGER ||
		  v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER);
	return v->via.i64;
}

/* Private_Dirty of process `pid` (/proc/PID/smaps_rollup) in bytes, or
 * -1 when it is gone. */
static int64_t private_dirty(pid_t pid)
{
	char path[64], *text, *at;
	int64_t kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	text = spec_read_file(path, NULL);
	if (text && (at = strstr(text, "\nPrivate_Dirty:")))
		kb = strtoll(at + 15, NULL, 10);
	free(text);
	return kb < 0 ? -1 : kb * 1024;
}

/* A fork dump of `name` (config.dump.fork_min_free must let it fork)
 * while this test samples the dump child's Private_Dirty every 5 ms: the
 * kernel's own count of the pages that fork copied.  Returns the peak. */
static int64_t dump_child_peak(const struct spec_vm *s, vmheap_client *c,
			       const char *name)
{
	vmheap_client *d = spec_vm_client(s);
	int64_t peak = 0, pd;
	struct spec_wait w;
	struct spec_reply r;
	pid_t child, dumper;

	vmheap_client_set_timeout(d, 0);
	dumper = fork();
	ck_assert(dumper >= 0);
	if (dumper == 0) {
		int rc = spec_client_call_str(d, "set", "system.memory.dump",
					      name, &r);
		_exit(rc == 0 && r.ok ? 0 : 1);
	}
	wait_dumping(c);
	spec_wait_begin(&w, WAIT_MS);
	w.interval_ms = 2;
	while (!(child = child_of(s->pid)))
		spec_wait_or_fail(&w, "the dump's child of pid %d",
				  (int)s->pid);
	/* sampled until the child is gone */
	spec_wait_begin(&w, WAIT_MS);
	w.interval_ms = 5;
	while ((pd = private_dirty(child)) >= 0) {
		if (pd > peak)
			peak = pd;
		spec_wait_or_fail(&w, "the dump child %d to exit", (int)child);
	}
	ck_assert_int_eq(spec_wait(dumper, WAIT_MS, NULL), 0);
	vmheap_client_close(d);
	return peak;
}

/* system.fork_estimate, read until the write rate is on the side of
 * `busy` (a loaded machine may not run the writer for a whole probe). */
static void estimate(vmheap_client *c, int busy, struct spec_reply *r)
{
	struct spec_wait w;

	spec_wait_begin(&w, WAIT_MS);
	w.interval_ms = 50;
	for (;;) {
		call_ok(c, "get", "system.fork_estimate", NULL, r);
		int64_t rate = estimate_int(r, "write_rate");
		if (busy ? rate >= 100 * MIB : rate < 10 * MIB)
			return;
		spec_reply_release(r);
		spec_wait_or_fail(&w, "a write rate %s (last %lld B/s)",
				  busy ? "of 100 MiB/s or more" : "below 10 MiB/s",
				  (long long)rate);
	}
}

/*
 * The sample VM with 96 MiB that its writer thread writes over and over
 * (sample.write_mb), MemAvailable pretended to be 48 MiB, below its RSS,
 * as on a host short of memory.  The old rule (the RSS) refused every
 * fork dump there.  Now the estimate is measured: while the VM writes,
 * the dump child's Private_Dirty really grows by tens of MiB (the kernel
 * says so), the guard measures a write rate of 100 MiB/s or more and
 * refuses; when it stops writing, the child copies little, the rate
 * falls under 10 MiB/s and the dump goes ahead in fork mode.
 */
START_TEST(fork_guard_estimates_from_the_vm_s_write_rate)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--walk-delay-ms", "1000", NULL},
	    .env = (const char *const[]){
		"VMHEAP_AGENT_TEST_MEM_AVAILABLE=50331648", NULL}};
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	int64_t rss, peak, busy_rate, busy_peak;

	spec_vm_start(&s, NULL, NULL, &o);
	c = spec_vm_client(&s);
	call_ok(c, "set", "sample.write_mb", "96", &r);
	spec_reply_release(&r);
	SPEC_WAIT_UNTIL((rss = get_int(c, "system.memory.rss")) >= 96 * MIB,
			WAIT_MS, "an RSS of 96 MiB (it is %lld)", (long long)rss);

	/* busy, before any fork dump: the child's part is the whole RSS */
	estimate(c, 1, &r);
	ck_assert_int_eq(estimate_int(&r, "mem_available"), FAKE_AVAILABLE);
	ck_assert_int_eq(estimate_int(&r, "child_measured"), 0);
	ck_assert_int_ge(estimate_int(&r, "bytes"), 96 * MIB);
	busy_rate = estimate_int(&r, "write_rate");
	spec_reply_release(&r);
	ck_assert_int_eq(spec_client_call_str(c, "set", "system.memory.dump",
					      "busy.vmheap", &r),
			 0);
	ck_assert_msg(!r.ok && strstr(r.message, "refusing a fork dump: "
						 "MemAvailable is 50331648 "
						 "bytes") &&
			  strstr(r.message, "the VM writes "),
		      "%s", r.ok ? "it was not refused" : r.message);
	spec_reply_release(&r);

	/* a busy fork dump, allowed by hand: the child's Private_Dirty
	 * shows the copies the busy VM causes */
	call_ok(c, "set", "config.dump.fork_min_free", "0", &r);
	spec_reply_release(&r);
	busy_peak = dump_child_peak(&s, c, "busy_forced.vmheap");
	ck_assert_msg(busy_peak >= 32 * MIB,
		      "busy child's Private_Dirty peak %lld",
		      (long long)busy_peak);

	/* idle: a measured fork dump, then the estimate is small */
	call_ok(c, "set", "sample.write_mb", "0", &r);
	spec_reply_release(&r);
	/* the writer has stopped: a probe sees it idle */
	estimate(c, 0, &r);
	spec_reply_release(&r);
	peak = dump_child_peak(&s, c, "idle_forced.vmheap");
	call_ok(c, "set", "config.dump.fork_min_free", "auto", &r);
	spec_reply_release(&r);
	estimate(c, 0, &r);
	ck_assert_int_eq(estimate_int(&r, "child_measured"), 1);
	ck_assert_int_eq(estimate_int(&r, "seconds_measured"), 1);
	ck_assert_msg(estimate_int(&r, "bytes") < FAKE_AVAILABLE &&
			  estimate_int(&r, "bytes") >= peak / 4,
		      "idle estimate %lld, the child's peak %lld",
		      (long long)estimate_int(&r, "bytes"), (long long)peak);
	ck_assert_int_gt(estimate_int(&r, "rss"), FAKE_AVAILABLE);
	fprintf(stderr,
		"fork guard, sample VM of %.1f MiB RSS, dumps of 1 s: writing "
		"96 MiB: write rate %.1f MiB/s, estimate the RSS, the child's "
		"Private_Dirty peak %.1f MiB; idle: write rate %.2f MiB/s, "
		"estimate %.2f MiB, peak %.2f MiB\n",
		(double)estimate_int(&r, "rss") / MIB, (double)busy_rate / MIB,
		(double)busy_peak / MIB,
		(double)estimate_int(&r, "write_rate") / MIB,
		(double)estimate_int(&r, "bytes") / MIB, (double)peak / MIB);
	spec_reply_release(&r);
	call_ok(c, "set", "system.memory.dump", "idle.vmheap", &r);
	ck_assert(map_get(&r.value, "forked")->via.boolean);
	spec_reply_release(&r);
	ck_assert_int_eq(names_with(s.dumpdir, "idle.vmheap"), 1);

	/* busy again: refused, on the measured child's part */
	call_ok(c, "set", "sample.write_mb", "96", &r);
	spec_reply_release(&r);
	estimate(c, 1, &r);
	spec_reply_release(&r);
	ck_assert_int_eq(spec_client_call_str(c, "set", "system.memory.dump",
					      "busy2.vmheap", &r),
			 0);
	ck_assert_msg(!r.ok && strstr(r.message, "(measured in the last fork "
						 "dump)"),
		      "%s", r.ok ? "it was not refused" : r.message);
	spec_reply_release(&r);
	ck_assert_int_eq(names_with(s.dumpdir, "busy2.vmheap"), 0);
	vmheap_client_close(c);
	spec_vm_cleanup(&s);
}
END_TEST

/* ------------------------------------------------------ get of a group */

START_TEST(get_of_a_group_returns_its_subtree_as_a_map)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--ticks", "3", NULL}};
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r, one;
	const msgpack_object *m, *v;

	spec_vm_start(&s, NULL, NULL, &o);
	c = spec_vm_client(&s);
	SPEC_WAIT_UNTIL(get_int(c, "sample.ticks") >= 3, WAIT_MS,
			"the mutator's 3 ticks");
	call_ok(c, "get", "system.memory", NULL, &r);
	ck_assert_int_eq(r.value.type, MSGPACK_OBJECT_MAP);
	ck_assert_uint_eq(r.value.via.map.size, 5);
	ck_assert_int_eq(map_get(&r.value, "count")->via.u64,
			 get_int(c, "system.memory.count"));
	ck_assert_int_eq(map_get(&r.value, "bytes")->via.u64,
			 get_int(c, "system.memory.bytes"));
	ck_assert(map_get(&r.value, "rss")->via.u64 > 0);
	ck_assert(map_get(&r.value, "dumping") && map_get(&r.value, "dump"));
	spec_reply_release(&r);

	/* deeper: a tree of maps, the same values as one by one */
	call_ok(c, "get", "config", NULL, &r);
	m = map_get(&r.value, "dump");
	ck_assert(m && m->type == MSGPACK_OBJECT_MAP);
	call_ok(c, "get", "config.dump.dir", NULL, &one);
	v = map_get(m, "dir");
	ck_assert(v && v->type == MSGPACK_OBJECT_STR &&
		  v->via.str.size == one.value.via.str.size &&
		  !memcmp(v->via.str.ptr, one.value.via.str.ptr,
			  v->via.str.size));
	spec_reply_release(&one);
	ck_assert(map_get(map_get(&r.value, "agent"), "max_clients"));
	spec_reply_release(&r);
	call_ok(c, "get", "system", NULL, &r);
	ck_assert_int_eq(map_get(&r.value, "pid")->via.i64, s.pid);
	ck_assert_int_eq(map_get(&r.value, "memory")->type,
			 MSGPACK_OBJECT_MAP);
	/* a variable the VM lacks reads as nil inside a group */
	ck_assert_int_eq(map_get(map_get(&r.value, "threads"), "backtrace")
			     ->type,
			 MSGPACK_OBJECT_NIL);
	spec_reply_release(&r);
	/* the host's own variables too */
	call_ok(c, "get", "sample", NULL, &r);
	ck_assert(map_get(&r.value, "ticks"));
	spec_reply_release(&r);
	call_error(c, "get", "system.mem", NULL, "notfound");
	call_error(c, "get", "no.such", NULL, "notfound");
	vmheap_client_close(c);
	spec_vm_cleanup(&s);
}
END_TEST

void agent_ops_tcases(Suite *s)
{
	TCase *t = spec_tcase(s, "operations", 120);

	tcase_add_test(t,
		       an_agent_that_cannot_start_warns_once_and_the_vm_runs_on);
	tcase_add_test(
	    t, a_sigterm_during_a_dump_still_tells_the_console_of_the_file);
	tcase_add_test(
	    t, the_console_finds_the_dump_of_a_vm_that_died_before_replying);
	tcase_add_test(t,
		       the_dump_directory_moves_at_run_time_and_refusals_say_why);
	tcase_add_test(
	    t, a_vm_killed_mid_dump_leaves_a_temp_file_the_next_agent_removes);
	tcase_add_test(t, a_fork_child_killed_mid_dump_leaves_nothing);
	tcase_add_test(t, fork_dumps_are_refused_below_fork_min_free);
	tcase_add_test(t, fork_guard_estimates_from_the_vm_s_write_rate);
	tcase_add_test(t, get_of_a_group_returns_its_subtree_as_a_map);
}
