/*
 * safety_test.c - production safety under hostile users and dying
 * processes (issue 28): files are created with O_EXCL|O_NOFOLLOW in a
 * directory held by fd (libvmheap-files, the agent, vmheap-report,
 * vmheap-import), and a fork dump's child dies with its VM.
 *
 * Everything runs for real: the helper on real directories, the real
 * tools (under strace where the system call itself is the point), the
 * real vmheap-sample killed with SIGKILL mid-dump.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_helpers.h"
#include "vmheap_files.h"
#include "lib/vmheap_spec.h"

#define WAIT_MS 20000

/* Fail the test unless `dir` is empty. */
static void assert_empty(const char *dir)
{
	char *names = spec_ls(dir, ' ');

	ck_assert_msg(!names[0], "%s holds %s", dir, names);
	free(names);
}

/* ------------------------------------------------------ the helper */

START_TEST(the_helper_never_opens_a_planted_name)
{
	const char *dir = spec_mkdtemp("files-planted");
	char victim[400], name[300], tmp[256];
	int dfd, fd;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	spec_write_text(victim, "precious");
	dfd = vmheap_dir_open(dir);
	ck_assert_int_ge(dfd, 0);

	/* a planted symbolic link (to an existing and to a missing file)
	 * and a planted file: EEXIST, and nothing written through them */
	ck_assert(symlinkat(victim, dfd, "link") == 0);
	ck_assert(symlinkat("/nonexistent/x", dfd, "dangling") == 0);
	errno = 0;
	ck_assert_int_eq(vmheap_file_create(dfd, "link", 0600), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(vmheap_file_create(dfd, "dangling", 0600), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(vmheap_file_create(dfd, "victim", 0600), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(vmheap_file_create(dfd, "a/b", 0600), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert(access("/nonexistent/x", F_OK) < 0);

	/* a fresh name: created, and another call gives another name */
	fd = vmheap_file_create_temp(dfd, "t.", ".tmp", 0600, tmp,
				     sizeof(tmp));
	ck_assert_int_ge(fd, 0);
	ck_assert(!strncmp(tmp, "t.", 2) && strlen(tmp) == 2 + 16 + 4);
	ck_assert(write(fd, "new", 3) == 3);
	close(fd);
	snprintf(name, sizeof(name), "%s", tmp);
	fd = vmheap_file_create_temp(dfd, "t.", ".tmp", 0600, tmp,
				     sizeof(tmp));
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_str_ne(name, tmp);
	unlinkat(dfd, tmp, 0);

	/* publish never replaces (EEXIST, the temporary stays) ... */
	ck_assert_int_eq(vmheap_file_publish(dfd, name, "victim",
					     VMHEAP_PUBLISH_NOREPLACE),
			 -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert(faccessat(dfd, name, F_OK, 0) == 0);
	ck_assert_int_eq(vmheap_file_publish(dfd, name, "dangling",
					     VMHEAP_PUBLISH_NOREPLACE),
			 -1);
	ck_assert_int_eq(errno, EEXIST);
	/* ... unless told to: the link is replaced, not followed */
	ck_assert_int_eq(vmheap_file_publish(dfd, name, "link",
					     VMHEAP_PUBLISH_REPLACE),
			 0);
	{
		char *v = spec_read_file(victim, NULL);
		char path[600];
		struct stat st;

		ck_assert_str_eq(v, "precious");
		free(v);
		snprintf(path, sizeof(path), "%s/link", dir);
		ck_assert(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
		v = spec_read_file(path, NULL);
		ck_assert_str_eq(v, "new");
		free(v);
	}
	close(dfd);
}
END_TEST

START_TEST(the_helper_keeps_the_directory_it_opened)
{
	const char *dir = spec_mkdtemp("files-swap");
	char d[400], moved[400], other[400], p[600];
	const char *base;
	int dfd, fd;

	snprintf(d, sizeof(d), "%s/d", dir);
	snprintf(moved, sizeof(moved), "%s/d.old", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	ck_assert(mkdir(d, 0700) == 0 && mkdir(other, 0700) == 0);
	snprintf(p, sizeof(p), "%s/out", d);
	dfd = vmheap_dir_open_parent(p, &base);
	ck_assert_int_ge(dfd, 0);
	ck_assert_str_eq(base, "out");
	/* swapped for a link after it was opened */
	ck_assert(rename(d, moved) == 0 && symlink(other, d) == 0);
	fd = vmheap_file_create(dfd, base, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	close(dfd);
	snprintf(p, sizeof(p), "%s/out", moved);
	ck_assert_msg(access(p, F_OK) == 0, "not in the directory opened");
	assert_empty(other);

	ck_assert_int_eq(vmheap_dir_open_parent("x/", &base), -1);
	ck_assert_int_eq(errno, EISDIR);
	ck_assert_int_eq(vmheap_dir_open_parent("x/..", &base), -1);
	dfd = vmheap_dir_open_parent("plain", &base);
	ck_assert_int_ge(dfd, 0);
	ck_assert_str_eq(base, "plain");
	close(dfd);
}
END_TEST

/* ------------------------------------------------------- the tools */

/* A real dump of the sample VM in `dir`/NAME (the VM stopped after). */
static void make_dump(const char *name, char *path, size_t len)
{
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;

	spec_vm_start(&s, NULL, NULL, NULL);
	c = spec_vm_client(&s);
	call_ok(c, "set", "system.memory.dump", name, &r);
	spec_reply_release(&r);
	vmheap_client_close(c);
	snprintf(path, len, "%s/%s", spec_mkdtemp("dump"), name);
	{
		char from[600];
		size_t n;
		char *bytes;

		snprintf(from, sizeof(from), "%s/%s", s.dumpdir, name);
		bytes = spec_read_file(from, &n);
		ck_assert(bytes);
		spec_write_file(path, bytes, n);
		free(bytes);
	}
	spec_vm_cleanup(&s);
}

/* LeakSanitizer cannot run under ptrace: the sanitizer build's tools run
 * under strace without it. */
static const char *const no_lsan[] = {"ASAN_OPTIONS=detect_leaks=0", NULL};

/* The lines of an strace log that create a file (O_CREAT). */
static char *creating_lines(const char *log)
{
	char *all = spec_read_file(log, NULL), *save = NULL;
	size_t cap = 1 + (all ? strlen(all) : 0);
	char *out = calloc(1, cap);

	ck_assert(all && out);
	for (char *l = strtok_r(all, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		if (strstr(l, "O_CREAT")) {
			strcat(out, l);
			strcat(out, "\n");
		}
	free(all);
	return out;
}

START_TEST(vmheap_report_never_writes_through_a_planted_link)
{
	const char *dir = spec_mkdtemp("report-link");
	char dump[600], victim[400], out[400], log[400], *lines;
	struct spec_run r;
	struct stat st;

	make_dump("r.vmheap", dump, sizeof(dump));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(out, sizeof(out), "%s/report.html", dir);
	snprintf(log, sizeof(log), "%s/strace", dir);
	spec_write_text(victim, "root's file");
	/* another user's links: the report's name and its old temporary
	 * names (OUT.tmp-PID, for the next hundred pids) */
	ck_assert(symlink(victim, out) == 0);
	for (int i = 0; i < 100; i++) {
		char t[500];

		snprintf(t, sizeof(t), "%s.tmp-%d", out, (int)getpid() + i);
		ck_assert(symlink(victim, t) == 0);
	}
	{
		const char *argv[] = {"strace", "-f", "-qq", "-e",
				      "trace=open,openat,creat", "-o", log,
				      spec_bin("vmheap-report"), "--no-graph",
				      "-o", out, dump, NULL};

		ck_assert_int_eq(spec_run(argv, no_lsan, NULL, 60000, &r), 0);
	}
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	spec_run_free(&r);
	{
		char *v = spec_read_file(victim, NULL);

		ck_assert_str_eq(v, "root's file");
		free(v);
	}
	ck_assert(lstat(out, &st) == 0 && S_ISREG(st.st_mode));
	/* strace: the output's temporary is created with O_EXCL and
	 * O_NOFOLLOW, and nothing is created without O_EXCL */
	lines = creating_lines(log);
	ck_assert_msg(strstr(lines, "report.html.tmp-") &&
			  strstr(lines, "O_EXCL") && strstr(lines, "O_NOFOLLOW"),
		      "%s", lines);
	for (char *l = lines, *nl; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		*nl = '\0';
		ck_assert_msg(strstr(l, "O_EXCL"), "created without O_EXCL: %s",
			      l);
	}
	free(lines);
}
END_TEST

START_TEST(vmheap_import_creates_its_temporary_with_o_excl)
{
	const char *dir = spec_mkdtemp("import-excl");
	char in[400], out[400], log[400], victim[400], *lines;
	struct spec_run r;
	const char *json = "{\"address\":\"0x1\", \"type\":\"STRING\", "
			   "\"class\":\"0x2\", \"bytesize\":40, "
			   "\"value\":\"x\"}\n";

	snprintf(in, sizeof(in), "%s/in.json", dir);
	snprintf(out, sizeof(out), "%s/out.vmheap", dir);
	snprintf(log, sizeof(log), "%s/strace", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	spec_write_text(in, json);
	spec_write_text(victim, "precious");
	{
		const char *argv[] = {"strace", "-f", "-qq", "-e",
				      "trace=open,openat,creat", "-o", log,
				      spec_bin("vmheap-import"),
				      "--no-progress", "--from", "ruby-json",
				      in, out, NULL};

		ck_assert_int_eq(spec_run(argv, no_lsan, NULL, 60000, &r), 0);
	}
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	spec_run_free(&r);
	lines = creating_lines(log);
	ck_assert_msg(strstr(lines, ".vmheap-import.") &&
			  strstr(lines, "O_EXCL") && strstr(lines, "O_NOFOLLOW"),
		      "%s", lines);
	free(lines);

	/* OUT a planted link: refused, nothing written through it */
	unlink(out);
	ck_assert(symlink(victim, out) == 0);
	{
		const char *argv[] = {spec_bin("vmheap-import"),
				      "--no-progress", in, out, NULL};

		ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &r), 0);
	}
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "already exists"), "%s", r.err);
	spec_run_free(&r);
	{
		char *v = spec_read_file(victim, NULL);

		ck_assert_str_eq(v, "precious");
		free(v);
	}
}
END_TEST

/* ------------------------------------------------------- the agent */

START_TEST(a_dump_directory_swapped_for_a_link_is_not_followed)
{
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	char d[400], moved[400], other[400], want[600];
	const msgpack_object *path;

	spec_vm_start(&s, NULL, NULL, NULL);
	c = spec_vm_client(&s);
	snprintf(d, sizeof(d), "%s/d", s.tmpdir);
	snprintf(moved, sizeof(moved), "%s/d.old", s.tmpdir);
	snprintf(other, sizeof(other), "%s/elsewhere", s.tmpdir);
	ck_assert(mkdir(d, 0700) == 0 && mkdir(other, 0700) == 0);
	call_ok(c, "set", "config.dump.dir", d, &r);
	spec_reply_release(&r);
	/* after the set: the directory is moved and a link takes its
	 * name */
	ck_assert(rename(d, moved) == 0 && symlink(other, d) == 0);
	call_ok(c, "set", "system.memory.dump", "x.vmheap", &r);
	path = map_get(&r.value, "path");
	snprintf(want, sizeof(want), "%s/x.vmheap", moved);
	ck_assert_msg(path && path->type == MSGPACK_OBJECT_STR &&
			  path->via.str.size == strlen(want) &&
			  !memcmp(path->via.str.ptr, want, strlen(want)),
		      "the reply names %.*s, not %s",
		      path ? (int)path->via.str.size : 0,
		      path ? path->via.str.ptr : "", want);
	spec_reply_release(&r);
	ck_assert_msg(access(want, F_OK) == 0, "no %s", want);
	assert_empty(other);

	/* an absolute path through the set name is taken in the
	 * directory held, too */
	snprintf(want, sizeof(want), "%s/y.vmheap", d);
	call_ok(c, "set", "system.memory.dump", want, &r);
	spec_reply_release(&r);
	assert_empty(other);
	vmheap_client_close(c);
	spec_vm_cleanup(&s);
}
END_TEST

START_TEST(planted_probe_and_discovery_names_stop_nothing)
{
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	char d[400], p[600], victim[400];

	spec_vm_start(&s, NULL, NULL, NULL);
	c = spec_vm_client(&s);
	/* another user's .vmheap-probe.<pid> in the new directory */
	snprintf(d, sizeof(d), "%s/d", s.tmpdir);
	ck_assert(mkdir(d, 0777) == 0);
	snprintf(victim, sizeof(victim), "%s/victim", s.tmpdir);
	spec_write_text(victim, "precious");
	snprintf(p, sizeof(p), "%s/.vmheap-probe.%d", d, (int)s.pid);
	ck_assert(symlink(victim, p) == 0);
	call_ok(c, "set", "config.dump.dir", d, &r);
	spec_reply_release(&r);
	{
		char *v = spec_read_file(victim, NULL);

		ck_assert_str_eq(v, "precious");
		free(v);
	}
	/* and the planted name is still there, untouched */
	{
		struct stat st;

		ck_assert(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	}
	vmheap_client_close(c);
	spec_vm_cleanup(&s);
}
END_TEST

struct found {
	pid_t pid;
	int n;
	char path[512];
};

static void on_found(void *arg, const struct vmheap_agent_info *info)
{
	struct found *f = arg;

	if (info->pid == f->pid) {
		f->n++;
		snprintf(f->path, sizeof(f->path), "%s", info->path);
	}
}

START_TEST(a_planted_discovery_file_does_not_stop_the_agent)
{
	const char *dir = spec_mkdtemp("planted-discovery");
	char envt[600], envd[600], script[2000], victim[400];
	struct found f = {0};
	struct spec_wait w;
	pid_t pid;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	spec_write_text(victim, "precious");
	snprintf(envt, sizeof(envt), "VMHEAP_AGENT_TMPDIR=%s", dir);
	snprintf(envd, sizeof(envd), "VMHEAP_AGENT_DIR=%s", dir);
	/* the shell plants vmheap-agent.$$ (another user's link to a file;
	 * when the test runs as root, a link it gives to nobody) and becomes
	 * the VM: the agent finds its own discovery name taken */
	snprintf(script, sizeof(script),
		 "ln -s '%s' '%s/vmheap-agent.'$$ && "
		 "{ [ \"$(id -u)\" != 0 ] || "
		 "chown -h 65534 '%s/vmheap-agent.'$$; } && exec '%s'",
		 victim, dir, dir, spec_bin("vmheap-sample"));
	{
		const char *argv[] = {"sh", "-c", script, NULL};
		const char *env[] = {envt, envd, NULL};
		struct spec_spawn sp = {.argv = argv, .env = env};

		pid = spec_spawn(&sp);
		ck_assert(pid > 0);
	}
	f.pid = pid;
	spec_wait_begin(&w, WAIT_MS);
	while (vmheap_discovery_list(dir, on_found, NULL, &f) >= 0 && !f.n) {
		ck_assert_msg(spec_wait(pid, 0, NULL) == -1,
			      "the VM exited: its agent did not start");
		if (!spec_wait_next(&w)) /* spec_ls only once, at the end */
			ck_abort_msg("gave up waiting for the agent to be listed "
				     "in %s; it holds: %s",
				     dir, spec_ls(dir, ' '));
	}
	ck_assert_msg(strstr(f.path, "vmheap-agent.") &&
			  strchr(strrchr(f.path, '.'), '-'),
		      "listed as %s", f.path);
	{
		char *v = spec_read_file(victim, NULL);

		ck_assert_str_eq(v, "precious");
		free(v);
	}
	ck_assert_int_ge(spec_stop(pid, SIGTERM, WAIT_MS), 0);
	/* it removed its own file, and only it */
	ck_assert(access(f.path, F_OK) < 0);
}
END_TEST

/* Start vmheap-sample with VMHEAP_AGENT_DIR=dumpdir and the agent
 * required: it must exit non-zero; what it printed (malloc'd). */
static char *start_fails(const char *dumpdir)
{
	const char *dir = spec_mkdtemp("agent-refused");
	const char *env[] = {"VMHEAP_AGENT_REQUIRED=1", NULL};
	struct spec_vm_opts vo = {.env = env};
	char log[300], *out;
	pid_t pid;
	int st;

	snprintf(log, sizeof(log), "%s/log", dir);
	vo.log_path = log;
	pid = spec_vm_spawn(dir, dumpdir, &vo);
	ck_assert(pid > 0);
	st = spec_wait(pid, WAIT_MS, NULL);
	out = spec_read_file(log, NULL);
	ck_assert_msg(st > 0, "status %d: %s", st, out ? out : "");
	return out;
}

START_TEST(dump_directories_that_cannot_take_a_dump_are_refused_at_start)
{
	const char *dir = spec_mkdtemp("bad-dump-dir");
	char file[400], *err;

	/* /sys: refused at start as `set config.dump.dir` refuses it */
	err = start_fails("/sys");
	ck_assert_msg(strstr(err, "/sys is not writable by the VM"), "%s", err);
	free(err);
	/* a regular file: "Not a directory", not "Permission denied" */
	snprintf(file, sizeof(file), "%s/a-file", dir);
	spec_write_text(file, "x");
	err = start_fails(file);
	ck_assert_msg(strstr(err, "Not a directory") &&
			  !strstr(err, "Permission denied"),
		      "%s", err);
	free(err);
}
END_TEST

/* ------------------------------------------- the child dies with its VM */

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

/* How many threads `pid` has (0 when it is gone). */
static int task_count(pid_t pid)
{
	char path[64], *names, *save = NULL;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	names = spec_ls(path, '\n');
	for (char *t = names ? strtok_r(names, "\n", &save) : NULL; t;
	     t = strtok_r(NULL, "\n", &save))
		n++;
	free(names);
	return n;
}

/* Is `pid` gone (no process, or a zombie nobody has reaped yet)? */
static int gone(pid_t pid)
{
	char path[64], *stat, *paren;
	int dead;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat = spec_read_file(path, NULL);
	if (!stat)
		return 1;
	paren = strrchr(stat, ')');
	dead = paren && (paren[2] == 'Z' || paren[2] == 'X');
	free(stat);
	return dead;
}

/* The VM (SIGKILL) dies while its fork dump's child walks (stopped
 * first with `stop_child`): the child must be gone soon after. */
static void vm_killed_mid_fork_dump(int stop_child)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--walk-delay-ms", "60000", NULL}};
	static const unsigned char req_head[] = {0x94, 0x07, 0xa3,
						 's',  'e',  't'};
	struct spec_vm s;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct spec_wait w;
	int64_t t0;
	pid_t child;
	int fd;

	spec_vm_start(&s, NULL, NULL, &o);
	fd = raw_connect(&s);
	raw_auth(fd, s.info.token);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_sbuffer_write(&sb, (const char *)req_head, sizeof(req_head));
	msgpack_pack_str(&pk, 18);
	msgpack_pack_str_body(&pk, "system.memory.dump", 18);
	msgpack_pack_str(&pk, 11);
	msgpack_pack_str_body(&pk, "kill.vmheap", 11);
	raw_send_frame(fd, sb.data, (uint32_t)sb.size);
	msgpack_sbuffer_destroy(&sb);
	SPEC_WAIT_UNTIL((child = child_of(s.pid)) != 0, WAIT_MS,
			"the dump's child of pid %d", (int)s.pid);
	/* a child stopped before its first instructions has no guard yet
	 * (child_guard.c): stop it once its guard thread runs, as a
	 * debugger or a person would */
	SPEC_WAIT_UNTIL(task_count(child) >= 2, WAIT_MS,
			"the guard thread of the dump child %d", (int)child);
	if (stop_child)
		ck_assert(kill(child, SIGSTOP) == 0);
	t0 = spec_now_ms();
	ck_assert(kill(s.pid, SIGKILL) == 0);
	ck_assert_int_ge(spec_wait(s.pid, WAIT_MS, NULL), 0);
	s.pid = 0;
	spec_wait_begin(&w, WAIT_MS);
	w.interval_ms = 5;
	while (!gone(child)) {
		if (!spec_wait_next(&w)) {
			kill(child, SIGKILL);
			ck_abort_msg("the dump child %d outlived its VM by %d "
				     "ms",
				     (int)child, WAIT_MS);
		}
	}
	printf("issue 28: the %sdump child of a VM killed -9 mid-dump was "
	       "gone after %lld ms\n",
	       stop_child ? "stopped " : "", (long long)(spec_now_ms() - t0));
	close(fd);
	spec_vm_cleanup(&s);
}

START_TEST(the_dump_child_dies_with_its_vm)
{
	vm_killed_mid_fork_dump(0);
}
END_TEST

START_TEST(a_stopped_dump_child_dies_with_its_vm)
{
	vm_killed_mid_fork_dump(1);
}
END_TEST

/* ---------------------------------------------------- containers */

static int64_t map_int(const msgpack_object *map, const char *key)
{
	const msgpack_object *o = map_get(map, key);

	ck_assert_msg(o && (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ||
			    o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER),
		      "no integer %s", key);
	return o->via.i64;
}

static int map_str_is(const msgpack_object *map, const char *key,
		      const char *want)
{
	const msgpack_object *o = map_get(map, key);

	return o && obj_str_is(o, want);
}

static void write_number(const char *dir, const char *name, long long v)
{
	char path[1200], text[64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(text, sizeof(text), "%lld\n", v);
	spec_write_text(path, text);
}

/* The test hook's hierarchy: a cgroup v2 tree in a directory of the test
 * (VMHEAP_AGENT_TEST_CGROUP_PROC: its cgroup and mountinfo files stand
 * for /proc/self's), the VM in /app/worker, the limit on /app. */
START_TEST(the_fork_guard_takes_a_cgroup_v2_limit_through_the_hook)
{
	const char *dir = spec_mkdtemp("cgroup-v2");
	char env[600], fs[400], app[500], worker[600], text[1200];
	struct spec_vm_opts o = {.env = (const char *const[]){env, NULL}};
	const long long mib = 1 << 20;
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	long long rss;

	snprintf(env, sizeof(env), "VMHEAP_AGENT_TEST_CGROUP_PROC=%s", dir);
	snprintf(fs, sizeof(fs), "%s/fs", dir);
	snprintf(app, sizeof(app), "%s/app", fs);
	snprintf(worker, sizeof(worker), "%s/worker", app);
	ck_assert(mkdir(fs, 0700) == 0 && mkdir(app, 0700) == 0 &&
		  mkdir(worker, 0700) == 0);
	snprintf(text, sizeof(text), "%s/cgroup", dir);
	spec_write_text(text, "0::/app/worker\n");
	{
		char mi[600], body[1000];

		snprintf(mi, sizeof(mi), "%s/mountinfo", dir);
		snprintf(body, sizeof(body),
			 "24 1 0:22 / / rw - ext4 /dev/root rw\n"
			 "99 24 0:99 / %s rw,nosuid - cgroup2 cgroup2 rw\n",
			 fs);
		spec_write_text(mi, body);
	}
	/* the worker has no limit ("max"), its parent 500 MiB of which
	 * 499 MiB are used and none reclaimable: 1 MiB is free */
	snprintf(text, sizeof(text), "%s/memory.max", worker);
	spec_write_text(text, "max\n");
	write_number(worker, "memory.current", 100 * mib);
	write_number(app, "memory.max", 500 * mib);
	write_number(app, "memory.current", 499 * mib);
	snprintf(text, sizeof(text), "%s/memory.stat", app);
	spec_write_text(text, "anon 1000\nfile 7\ninactive_file 0\n");

	spec_vm_start(&s, NULL, NULL, &o);
	c = spec_vm_client(&s);
	call_ok(c, "get", "system.fork_estimate", NULL, &r);
	ck_assert(map_str_is(&r.value, "limited_by", "cgroup v2"));
	ck_assert(map_str_is(&r.value, "cgroup", app));
	ck_assert_int_eq(map_int(&r.value, "cgroup_limit"), 500 * mib);
	ck_assert_int_eq(map_int(&r.value, "cgroup_usage"), 499 * mib);
	ck_assert_int_eq(map_int(&r.value, "available"), 1 * mib);
	rss = map_int(&r.value, "rss");
	/* less is free than the RSS: the probe is not forked */
	ck_assert_msg(rss > mib, "rss %lld", rss);
	ck_assert(map_get(&r.value, "probe_skipped")->via.boolean);
	ck_assert_int_eq(map_int(&r.value, "bytes"), rss);
	spec_reply_release(&r);
	/* a fork dump is refused, and says which limit */
	ck_assert_int_eq(spec_client_call_str(c, "set", "system.memory.dump",
					      "refused.vmheap", &r),
			 0);
	ck_assert(!r.ok);
	ck_assert_str_eq(r.code, "dump");
	ck_assert_msg(strstr(r.message, "refusing a fork dump: the memory "
					"the cgroup v2 ") &&
			  strstr(r.message, app),
		      "%s", r.message);
	spec_reply_release(&r);

	/* 400 MiB of the usage is inactive page cache: 401 MiB free */
	spec_write_text(text, "anon 1000\ninactive_file 419430400\n");
	call_ok(c, "get", "system.fork_estimate", NULL, &r);
	ck_assert_int_eq(map_int(&r.value, "available"), 401 * mib);
	ck_assert(!map_get(&r.value, "probe_skipped")->via.boolean);
	spec_reply_release(&r);
	call_ok(c, "set", "system.memory.dump", "taken.vmheap", &r);
	spec_reply_release(&r);
	vmheap_client_close(c);
	spec_vm_cleanup(&s);
	printf("issue 28: the cgroup test ran through the test hook (a v2 "
	       "hierarchy in %s)\n",
	       dir);
}
END_TEST

/* This process's cgroup v1 memory directory, from /proc: 0, or -1 when
 * the machine has none. */
static int own_v1_memory_dir(char *out, size_t len)
{
	char *cg = spec_read_file("/proc/self/cgroup", NULL);
	char *mi = spec_read_file("/proc/self/mountinfo", NULL);
	char *path = NULL, *point = NULL, *save = NULL;
	int rc = -1;

	for (char *l = cg ? strtok_r(cg, "\n", &save) : NULL; l && !path;
	     l = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : 0;

		if (c2 && !strncmp(c1 + 1, "memory", 6) &&
		    (c1[7] == ':' || c1[7] == ','))
			path = c2 + 1;
	}
	save = NULL;
	for (char *l = mi ? strtok_r(mi, "\n", &save) : NULL; l && !point;
	     l = strtok_r(NULL, "\n", &save)) {
		char root[300], mp[300];

		if (strstr(l, " - cgroup cgroup ") && strstr(l, "memory") &&
		    sscanf(l, "%*s %*s %*s %299s %299s", root, mp) == 2 &&
		    !strcmp(root, "/")) {
			point = l;
			snprintf(out, len, "%s%s", mp, path ? path : "");
		}
	}
	if (path && point && access(out, W_OK) == 0)
		rc = 0;
	free(cg);
	free(mi);
	return rc;
}

/* A real cgroup v1 child of this process's own memory cgroup, with the
 * VM moved into it and a limit just above its usage. */
START_TEST(the_fork_guard_takes_a_real_cgroup_limit)
{
	char own[600], child[800], procs[900], pid[32], msg[1200];
	const long long mib = 1 << 20;
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	long long usage, limit;

	if (own_v1_memory_dir(own, sizeof(own)) < 0) {
		printf("issue 28: no writable cgroup v1 memory hierarchy here; "
		       "the hook's test covers the guard\n");
		return;
	}
	snprintf(child, sizeof(child), "%s/vmheap-spec-%d", own, (int)getpid());
	if (mkdir(child, 0755) < 0) {
		printf("issue 28: cannot make a cgroup under %s (%s); the "
		       "hook's test covers the guard\n",
		       own, strerror(errno));
		return;
	}
	spec_vm_start(&s, NULL, NULL, NULL);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", child);
	snprintf(pid, sizeof(pid), "%d\n", (int)s.pid);
	spec_write_text(procs, pid);
	c = spec_vm_client(&s);
	/* the RSS of the VM is charged where it was: its usage here is
	 * what it takes from now on */
	{
		char *u, p[900];

		snprintf(p, sizeof(p), "%s/memory.usage_in_bytes", child);
		u = spec_read_file(p, NULL);
		ck_assert(u);
		usage = atoll(u);
		free(u);
	}
	limit = usage + 1 * mib;
	write_number(child, "memory.limit_in_bytes", limit);
	call_ok(c, "get", "system.fork_estimate", NULL, &r);
	ck_assert_msg(map_str_is(&r.value, "limited_by", "cgroup v1"), "%s",
		      "limited_by is not cgroup v1");
	ck_assert(map_str_is(&r.value, "cgroup", child));
	ck_assert_int_eq(map_int(&r.value, "cgroup_limit"), limit);
	ck_assert(map_int(&r.value, "available") <= limit);
	ck_assert(map_int(&r.value, "available") <
		  map_int(&r.value, "mem_available"));
	spec_reply_release(&r);
	/* the limit is below the RSS the child may copy: refused, though
	 * MemAvailable would have let it fork */
	ck_assert_int_eq(spec_client_call_str(c, "set", "system.memory.dump",
					      "refused.vmheap", &r),
			 0);
	snprintf(msg, sizeof(msg), "%s", r.ok ? "(ok)" : r.message);
	ck_assert_msg(!r.ok && strstr(msg, "the memory the cgroup v1 ") &&
			  strstr(msg, child),
		      "%s", msg);
	spec_reply_release(&r);
	/* a roomy limit: the fork dump is made */
	write_number(child, "memory.limit_in_bytes", usage + 4096 * mib);
	call_ok(c, "set", "system.memory.dump", "taken.vmheap", &r);
	spec_reply_release(&r);
	vmheap_client_close(c);
	spec_vm_cleanup(&s);
	{
		struct spec_wait w;

		spec_wait_begin(&w, WAIT_MS);
		while (rmdir(child) < 0 && errno == EBUSY && spec_wait_next(&w))
			;
	}
	printf("issue 28: the cgroup test ran in a real cgroup v1 (%s)\n",
	       child);
}
END_TEST

/* --------------------------------------- memory before and after auth */

/* The VM's resident memory in bytes (VmRSS), or -1. */
static long long rss_of(pid_t pid)
{
	char path[64], *st, *l;
	long long kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	st = spec_read_file(path, NULL);
	if (st && (l = strstr(st, "VmRSS:")))
		kb = atoll(l + 6);
	free(st);
	return kb < 0 ? -1 : kb * 1024;
}

/* Send as much of buf as the socket takes now (non-blocking). */
static size_t send_some(int fd, const void *buf, size_t len)
{
	ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

	return n > 0 ? (size_t)n : 0;
}

/* Wait (deadline WAIT_MS) until the VM's RSS is at most `bound`: the
 * last RSS seen. */
static long long rss_settles_below(pid_t pid, long long bound)
{
	struct spec_wait w;
	long long rss;

	spec_wait_begin(&w, WAIT_MS);
	w.interval_ms = 50;
	while ((rss = rss_of(pid)) > bound && spec_wait_next(&w))
		;
	return rss;
}

#define MIB (1024LL * 1024LL)

START_TEST(unauthenticated_megabyte_frames_take_little_memory)
{
	static char payload[1 << 20];
	unsigned char hdr[4] = {0x00, 0x10, 0x00, 0x00}; /* 1 MiB */
	struct spec_vm *s = spec_fixture_vm();
	long long rss0, peak = 0, after;
	int fds[127];

	memset(payload, 0xc0, sizeof(payload)); /* nils */
	rss0 = rss_of(s->pid);
	for (int i = 0; i < 127; i++) {
		long long r;

		fds[i] = spec_tcp_connect(s->info.port);
		ck_assert(fds[i] >= 0);
		send_some(fds[i], hdr, 4);
		send_some(fds[i], payload, sizeof(payload));
		r = rss_of(s->pid);
		if (r > peak)
			peak = r;
	}
	/* and the whole megabyte, as far as the agent reads it */
	for (int round = 0; round < 20; round++)
		for (int i = 0; i < 127; i++) {
			long long r;

			send_some(fds[i], payload, sizeof(payload));
			r = rss_of(s->pid);
			if (r > peak)
				peak = r;
		}
	for (int i = 0; i < 127; i++)
		close(fds[i]);
	after = SPEC_SANITIZED ? rss_of(s->pid)
			       : rss_settles_below(s->pid, rss0 + 16 * MIB);
	printf("issue 28: 127 unauthenticated 1 MiB frames: RSS %.1f MiB, "
	       "%+.1f MiB at most while open, %+.1f MiB after close\n",
	       rss0 / (double)MIB, (peak - rss0) / (double)MIB,
	       (after - rss0) / (double)MIB);
	if (SPEC_SANITIZED) {
		/* ASan keeps freed memory in quarantine: no bound holds */
		printf("issue 28: (memory bounds not asserted under ASan)\n");
	} else {
		ck_assert_msg(peak - rss0 <= 32 * MIB, "+%lld MiB while open",
			      (peak - rss0) / MIB);
		ck_assert_msg(after - rss0 <= 16 * MIB,
			      "+%lld MiB after close", (after - rss0) / MIB);
	}
	/* and the VM still answers */
	{
		vmheap_client *c = spec_vm_client(s);

		ck_assert_int_eq(get_int(c, "system.pid"), s->pid);
		vmheap_client_close(c);
	}
}
END_TEST

START_TEST(a_frame_of_a_million_nils_is_refused_before_it_is_decoded)
{
	static unsigned char frame[4 + 5 + (1 << 20) - 5];
	struct spec_vm *s = spec_fixture_vm();
	msgpack_unpacked m;
	uint32_t n = (1 << 20) - 5;
	long long rss0, rss1;
	int fd;

	fd = raw_connect(s);
	raw_auth(fd, s->info.token);
	rss0 = rss_of(s->pid);
	/* [nil x n]: array 32 header, then n nils */
	frame[0] = 0x00;
	frame[1] = 0x10;
	frame[2] = 0x00;
	frame[3] = 0x00;
	frame[4] = 0xdd;
	frame[5] = (unsigned char)(n >> 24);
	frame[6] = (unsigned char)(n >> 16);
	frame[7] = (unsigned char)(n >> 8);
	frame[8] = (unsigned char)n;
	memset(frame + 9, 0xc0, n);
	raw_send(fd, frame, sizeof(frame));
	msgpack_unpacked_init(&m);
	ck_assert_int_eq(raw_read(fd, &m, WAIT_MS), 1);
	ck_assert(obj_str_is(&m.data.via.array.ptr[1], "error"));
	ck_assert_msg(obj_str_is(&m.data.via.array.ptr[2], "protocol"),
		      "not a protocol error");
	msgpack_unpacked_destroy(&m);
	rss1 = rss_of(s->pid);
	printf("issue 28: a frame of a million nils: %+.1f MiB\n",
	       (rss1 - rss0) / (double)MIB);
	ck_assert_msg(SPEC_SANITIZED || rss1 - rss0 <= 16 * MIB, "+%lld MiB",
		      (rss1 - rss0) / MIB);
	close(fd);
}
END_TEST

START_TEST(clients_that_never_read_take_bounded_memory)
{
	enum { CLIENTS = 100, REQUESTS = 3000 };
	static const unsigned char list_req[] = {0x00, 0x00, 0x00, 0x07,
						 0x92, 0x01, 0xa4, 'l',
						 'i',  's',  't'};
	static unsigned char burst[REQUESTS * sizeof(list_req)];
	struct spec_vm *s = spec_fixture_vm();
	long long rss0, peak = 0, after;
	int fds[CLIENTS], idle;
	struct spec_wait w;
	vmheap_client *c;
	struct spec_reply r;

	for (int i = 0; i < REQUESTS; i++)
		memcpy(burst + i * sizeof(list_req), list_req,
		       sizeof(list_req));
	rss0 = rss_of(s->pid);
	for (int i = 0; i < CLIENTS; i++) {
		fds[i] = raw_connect(s);
		raw_auth(fds[i], s->info.token);
	}
	/* each pipelines its requests and never reads a reply */
	for (int i = 0; i < CLIENTS; i++) {
		size_t off = 0;

		for (int tries = 0; off < sizeof(burst) && tries < 50; tries++)
			off += send_some(fds[i], burst + off,
					 sizeof(burst) - off);
	}
	/* until the agent has stopped taking requests: the RSS no longer
	 * grows over a few samples */
	idle = 0;
	spec_wait_begin(&w, WAIT_MS);
	w.interval_ms = 50;
	while (idle < 20 && spec_wait_next(&w)) {
		long long rr = rss_of(s->pid);

		if (rr > peak) {
			peak = rr;
			idle = 0;
		} else {
			idle++;
		}
	}
	/* an honest client is answered meanwhile: after the requests
	 * already taken, which on a starved machine (stress-ng beside other
	 * jobs) took over 10 s, hence a minute's deadline */
	c = spec_connect(s, 60000);
	ck_assert_msg(c, "no connection to pid %d", (int)s->pid);
	vmheap_client_set_timeout(c, 60000);
	call_ok(c, "get", "system.pid", NULL, &r);
	spec_reply_release(&r);
	vmheap_client_close(c);
	for (int i = 0; i < CLIENTS; i++)
		close(fds[i]);
	after = SPEC_SANITIZED ? rss_of(s->pid)
			       : rss_settles_below(s->pid, rss0 + 16 * MIB);
	printf("issue 28: 100 authenticated clients that never read: RSS "
	       "%.1f MiB, %+.1f MiB at most while open, %+.1f MiB after "
	       "close\n",
	       rss0 / (double)MIB, (peak - rss0) / (double)MIB,
	       (after - rss0) / (double)MIB);
	if (SPEC_SANITIZED) {
		/* ASan keeps freed memory in quarantine: no bound holds */
		printf("issue 28: (memory bounds not asserted under ASan)\n");
	} else {
		ck_assert_msg(peak - rss0 <= 128 * MIB,
			      "+%lld MiB while open", (peak - rss0) / MIB);
		ck_assert_msg(after - rss0 <= 16 * MIB,
			      "+%lld MiB after close", (after - rss0) / MIB);
	}
}
END_TEST

struct churn {
	uint16_t port;
	volatile int stop;
	atomic_int opened;
};

/* Unauthenticated connections, opened without end, each kept until
 * the agent drops it or 300 are open (three churners stay well below a
 * limit of 1,024 open files). */
static void *churn_main(void *arg)
{
	struct churn *ch = arg;
	int fds[300], n = 0;

	while (!ch->stop) {
		int fd = spec_tcp_connect(ch->port);

		if (fd < 0)
			continue;
		/* closed with a reset, leaving no TIME_WAIT: thousands of
		 * ports a run, runs in a row, would run the ephemeral range
		 * short and slow connect() down */
		setsockopt(fd, SOL_SOCKET, SO_LINGER,
			   &(struct linger){.l_onoff = 1, .l_linger = 0},
			   sizeof(struct linger));
		ch->opened++;
		if (n == 300) {
			close(fds[0]);
			memmove(fds, fds + 1, sizeof(fds) - sizeof(*fds));
			n--;
		}
		fds[n++] = fd;
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return NULL;
}

START_TEST(an_honest_client_gets_in_while_unauthenticated_ones_churn)
{
	enum { CHURNERS = 3 };
	struct spec_vm *s = spec_fixture_vm();
	struct churn ch = {0};
	pthread_t t[CHURNERS];
	int served = 0;

	ch.port = s->info.port;
	/* three at once keep the listen backlog full: the agent accepts
	 * hundreds of silent connections in one go, more than its slots */
	for (int i = 0; i < CHURNERS; i++)
		ck_assert(pthread_create(&t[i], NULL, churn_main, &ch) == 0);
	SPEC_WAIT_UNTIL(ch.opened >= 3000, WAIT_MS,
			"3000 unauthenticated connections (%d made)",
			(int)ch.opened);
	for (int i = 0; i < 10; i++) {
		vmheap_client *c = spec_connect(s, 10000);

		if (c && spec_get_uint(c, "system.pid") == s->pid)
			served++;
		if (c)
			vmheap_client_close(c);
	}
	ch.stop = 1;
	for (int i = 0; i < CHURNERS; i++)
		pthread_join(t[i], NULL);
	printf("issue 28: an honest client was served %d of 10 times while "
	       "%d unauthenticated connections churned\n",
	       served, (int)ch.opened);
	ck_assert_int_ge(served, 9);
}
END_TEST

/* ------------------------------------------------ the loop never blocks */

struct waiter {
	struct spec_vm vm;
	volatile int stop;
	int64_t worst_ms;
	int answered;
};

/* Another client asking for the pid over and over: the longest wait. */
static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	vmheap_client *c = spec_connect(&w->vm, 10000);

	if (!c)
		return NULL;
	while (!w->stop) {
		int64_t t0 = spec_now_ms();

		if (spec_get_uint(c, "system.pid") != w->vm.pid)
			break;
		if (spec_now_ms() - t0 > w->worst_ms)
			w->worst_ms = spec_now_ms() - t0;
		w->answered++;
	}
	vmheap_client_close(c);
	return NULL;
}

START_TEST(a_client_pipelining_fork_estimates_gets_every_reply)
{
	enum { N = 50 };
	static const char var[] = "system.fork_estimate";
	struct spec_vm s;
	struct waiter w = {0};
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_unpacked m;
	pthread_t t;
	int fd, ok = 0, busy = 0, other = 0;

	spec_vm_start(&s, NULL, NULL, NULL);
	w.vm.pid = s.pid;
	w.vm.info = s.info;
	ck_assert(pthread_create(&t, NULL, waiter_main, &w) == 0);
	fd = raw_connect(&s);
	raw_auth(fd, s.info.token);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	for (int i = 0; i < N; i++) {
		size_t at = sb.size;
		unsigned char *h;
		uint32_t len;

		msgpack_sbuffer_write(&sb, "\0\0\0\0", 4);
		msgpack_pack_array(&pk, 3);
		msgpack_pack_uint64(&pk, (uint64_t)i + 10);
		msgpack_pack_str(&pk, 3);
		msgpack_pack_str_body(&pk, "get", 3);
		msgpack_pack_str(&pk, sizeof(var) - 1);
		msgpack_pack_str_body(&pk, var, sizeof(var) - 1);
		len = (uint32_t)(sb.size - at - 4);
		h = (unsigned char *)sb.data + at;
		h[0] = (unsigned char)(len >> 24);
		h[1] = (unsigned char)(len >> 16);
		h[2] = (unsigned char)(len >> 8);
		h[3] = (unsigned char)len;
	}
	raw_send(fd, sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
	msgpack_unpacked_init(&m);
	for (int i = 0; i < N; i++) {
		const msgpack_object *e;

		ck_assert_msg(raw_read(fd, &m, WAIT_MS) == 1,
			      "reply %d of %d never came", i + 1, N);
		e = m.data.via.array.ptr;
		if (obj_str_is(&e[1], "ok"))
			ok++;
		else if (obj_str_is(&e[1], "error") && obj_str_is(&e[2], "busy"))
			busy++;
		else
			other++;
	}
	msgpack_unpacked_destroy(&m);
	w.stop = 1;
	pthread_join(t, NULL);
	printf("issue 28: %d pipelined gets of system.fork_estimate: %d "
	       "measured, %d busy; another client was answered %d times, "
	       "waiting %lld ms at most\n",
	       N, ok, busy, w.answered, (long long)w.worst_ms);
	ck_assert_int_eq(ok + busy, N);
	ck_assert_int_eq(other, 0);
	ck_assert_int_ge(ok, 1);
	ck_assert_int_gt(w.answered, 0);
	close(fd);
	spec_vm_cleanup(&s);
}
END_TEST

/* ------------------------------------------------ the console and top */

START_TEST(terminal_escapes_in_a_ruby_thread_name_reach_the_terminal_escaped)
{
	static const char script[] =
	    "t = Thread.new { sleep }\n"
	    "t.name = \"evil\\e]0;pwned\\a\\e[2J\\u009b31m\"\n"
	    "STDOUT.puts \"ready\"\n"
	    "STDOUT.flush\n"
	    "STDIN.read\n";
	struct spec_ruby vm;
	struct spec_run r;
	char pid[32];

	spec_ruby_start_with(&vm, script,
			     &(struct spec_ruby_opts){.ready = "ready"});
	snprintf(pid, sizeof(pid), "%d", (int)vm.p.pid);
	{
		const char *argv[] = {spec_bin("vmheap-console"),
				      "--tmpdir",
				      vm.dir,
				      "-p",
				      pid,
				      "-e",
				      "get system.threads.backtrace",
				      NULL};

		ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &r), 0);
	}
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	/* the name is there, every control byte shown as \xNN */
	ck_assert_msg(strstr(r.out, "evil\\x1b]0;pwned\\x07\\x1b[2J\\xc2\\x9b31m"),
		      "%s", r.out);
	ck_assert_msg(!memchr(r.out, 0x1b, r.out_len) &&
			  !memchr(r.out, 0x07, r.out_len) &&
			  !memmem(r.out, r.out_len, "\xc2\x9b", 2),
		      "a raw escape reached the terminal");
	spec_run_free(&r);
	ck_assert_int_eq(spec_proc_wait_exit(&vm.p, 60000), 0);
}
END_TEST

START_TEST(top_tries_again_while_the_vm_is_busy)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--walk-delay-ms", "3000", NULL}};
	struct spec_vm s;
	struct spec_run r;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	char pid[32];
	int fd;

	spec_vm_start(&s, NULL, NULL, &o);
	/* another client's histogram holds the VM for 3 s: asked for (in
	 * one send, so that it arrives whole) until a get of ours is
	 * refused as busy */
	fd = raw_connect(&s);
	raw_auth(fd, s.info.token);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_sbuffer_write(&sb, "\0\0\0\0", 4);
	msgpack_pack_array(&pk, 3);
	msgpack_pack_uint64(&pk, 7);
	msgpack_pack_str(&pk, 3);
	msgpack_pack_str_body(&pk, "get", 3);
	msgpack_pack_str(&pk, 23);
	msgpack_pack_str_body(&pk, "system.memory.histogram", 23);
	sb.data[3] = (char)(sb.size - 4);
	{
		vmheap_client *c = spec_vm_client(&s);
		struct spec_reply rr;
		int64_t deadline = spec_now_ms() + WAIT_MS;
		int busy = 0;

		while (!busy) {
			ck_assert(spec_now_ms() < deadline);
			raw_send(fd, sb.data, sb.size);
			ck_assert_int_eq(
			    spec_client_call_str(
				c, "get", "system.memory.histogram", NULL, &rr),
			    0);
			busy = !rr.ok && !strcmp(rr.code, "busy");
			spec_reply_release(&rr);
		}
		vmheap_client_close(c);
	}
	snprintf(pid, sizeof(pid), "%d", (int)s.pid);
	{
		const char *argv[] = {spec_bin("vmheap-console"),
				      "--tmpdir",
				      s.tmpdir,
				      "-p",
				      pid,
				      "-e",
				      "top 0.2 2",
				      NULL};

		ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &r), 0);
	}
	ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
	ck_assert_msg(strstr(r.err, "busy: "), "top was never refused: %s",
		      r.err);
	ck_assert_msg(spec_count(r.out, "objects") >= 1 ||
			  spec_count(r.out, "count") >= 1,
		      "no histogram drawn: %s", r.out);
	spec_run_free(&r);
	msgpack_sbuffer_destroy(&sb);
	close(fd);
	spec_vm_cleanup(&s);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("safety");
	TCase *tc;

	tc = spec_tcase(s, "files", 120);
	tcase_add_test(tc, the_helper_never_opens_a_planted_name);
	tcase_add_test(tc, the_helper_keeps_the_directory_it_opened);
	tcase_add_test(tc, vmheap_report_never_writes_through_a_planted_link);
	tcase_add_test(tc, vmheap_import_creates_its_temporary_with_o_excl);
	tc = spec_tcase(s, "agent files", 120);
	tcase_add_test(tc, a_dump_directory_swapped_for_a_link_is_not_followed);
	tcase_add_test(tc, planted_probe_and_discovery_names_stop_nothing);
	tcase_add_test(tc, a_planted_discovery_file_does_not_stop_the_agent);
	tcase_add_test(
	    tc, dump_directories_that_cannot_take_a_dump_are_refused_at_start);
	tc = spec_tcase(s, "dump child", 120);
	tcase_add_test(tc, the_dump_child_dies_with_its_vm);
	tcase_add_test(tc, a_stopped_dump_child_dies_with_its_vm);
	tc = spec_tcase(s, "containers", 120);
	tcase_add_test(tc,
		       the_fork_guard_takes_a_cgroup_v2_limit_through_the_hook);
	tcase_add_test(tc, the_fork_guard_takes_a_real_cgroup_limit);
	/* each test of "memory" has a vmheap-sample of its own
	 * (spec_fixture_vm) */
	tc = spec_tcase(s, "memory", 240);
	tcase_add_checked_fixture(tc, spec_vm_fixture_setup,
				  spec_vm_fixture_teardown);
	tcase_add_test(tc, unauthenticated_megabyte_frames_take_little_memory);
	tcase_add_test(tc,
		       a_frame_of_a_million_nils_is_refused_before_it_is_decoded);
	tcase_add_test(tc, clients_that_never_read_take_bounded_memory);
	tcase_add_test(tc,
		       an_honest_client_gets_in_while_unauthenticated_ones_churn);
	tc = spec_tcase(s, "loop", 120);
	tcase_add_test(tc, a_client_pipelining_fork_estimates_gets_every_reply);
	tc = spec_tcase(s, "console", 180);
	tcase_add_test(
	    tc,
	    terminal_escapes_in_a_ruby_thread_name_reach_the_terminal_escaped);
	tcase_add_test(tc, top_tries_again_while_the_vm_is_busy);
	return s;
}
