/*
 * console_test.c - vmheap-console against the real sample VM: -e and
 * exit codes, stdin, --json, several agents, discovery faults, and the
 * interactive prompt under tmux (dump reply, completion, history, the
 * numbered chooser, a VM that goes away).
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "console_render-internal.h"
#include "lib/vmheap_spec.h"
#include "vmheap.h"

#define WAIT_MS 10000

/* ------------------------------------------------------------ helpers */

/*
 * The sample VM with its discovery file and dumps in `dir` and its output
 * in dir/vm.log; it dies with the test.
 */
static pid_t vm_start(const char *dir)
{
	char log[512];
	struct spec_vm_opts o = {.log_path = log};
	struct spec_vm vm;

	snprintf(log, sizeof(log), "%s/vm.log", dir);
	spec_vm_start(&vm, dir, dir, &o);
	return vm.pid;
}

/* The discovery file of `pid` in `dir`. */
static void discovery_path(char *out, size_t len, const char *dir, pid_t pid)
{
	snprintf(out, len, "%s/vmheap-agent.%ld", dir, (long)pid);
}

/* The console's environment: HOME and VMHEAP_AGENT_TMPDIR are `dir`. */
static const char *const *console_env(const char *dir)
{
	static char home[300], tmpdir[300];
	static const char *env[] = {home, tmpdir, "TMPDIR", NULL};

	snprintf(home, sizeof(home), "HOME=%s", dir);
	snprintf(tmpdir, sizeof(tmpdir), "VMHEAP_AGENT_TMPDIR=%s", dir);
	return env;
}

static const char **console_argv(const char *const *args)
{
	static const char *argv[64];
	int n = 0;

	argv[n++] = spec_bin("vmheap-console");
	for (; args && *args && n < 63; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	return argv;
}

/*
 * Run the console in `dir` (console_env) with `input` on stdin (NULL:
 * none) and the NULL-terminated `args`; killed after 20 s.
 */
static void console_run(struct spec_run *r, const char *dir, const char *input,
			const char *const *args)
{
	struct spec_tool_opts o = {
	    .env = console_env(dir), .input = input, .timeout_ms = 20000};

	*r = spec_tool_with("vmheap-console", args, &o);
}

/* The console in `dir` on pipes (stderr merged into stdout). */
static void console_start(struct spec_proc *p, const char *dir,
			  const char *const *args)
{
	struct spec_spawn o = {0};

	o.argv = console_argv(args);
	o.env = console_env(dir);
	spec_proc_start(p, &o, 1);
}

/* Sum of what a dump file holds, read with libvmheap. */
struct dump_sums {
	uint64_t objects, bytes;
};

static void read_dump(const char *path, struct dump_sums *sums)
{
	vmheap_reader *r = NULL;
	struct vmheap_record rec;
	int rc;

	memset(sums, 0, sizeof(*sums));
	rc = vmheap_reader_open_path(&r, path);
	ck_assert_msg(rc == 0, "cannot read the dump %s: %s", path,
		      r ? vmheap_reader_error(r) : "out of memory");
	while ((rc = vmheap_reader_next(r, &rec)) == 1)
		if (rec.type == VMHEAP_RECORD_OBJECT) {
			sums->objects++;
			sums->bytes += rec.u.object.bytes;
		}
	ck_assert_msg(rc == 0, "the dump %s is not whole: %s", path,
		      vmheap_reader_error(r));
	vmheap_reader_free(r);
}

/* The first line of `text` that contains `needle` (malloc'd) or NULL. */
static char *line_with(const char *text, const char *needle)
{
	const char *p = strstr(text, needle), *start, *end;

	if (!p)
		return NULL;
	for (start = p; start > text && start[-1] != '\n'; start--)
		;
	end = strchr(p, '\n');
	return strndup(start, end ? (size_t)(end - start) : strlen(start));
}

static int count_lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		if (*text == '\n')
			n++;
	return n;
}

/* The reply's "file N UNIT" is the file's size within rounding to three
 * significant digits (checked against stat, not against the formatter). */
static void check_file_size(const char *line, const char *path)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
	const char *p = strstr(line, ", file ");
	struct stat st;
	double v, scale = 1;
	char *end;
	int u;

	ck_assert_msg(p != NULL, "no file size in: %s", line);
	ck_assert_int_eq(stat(path, &st), 0);
	v = strtod(p + 7, &end);
	ck_assert_msg(end != p + 7 && *end == ' ', "bad file size in: %s", line);
	for (u = 0; u < 4; u++, scale *= 1024)
		if (!strncmp(end + 1, units[u], strlen(units[u])) &&
		    (end[1 + strlen(units[u])] == ',' ||
		     end[1 + strlen(units[u])] == '\0'))
			break;
	ck_assert_msg(u < 4, "no unit after the file size in: %s", line);
	ck_assert_msg(fabs(v * scale - (double)st.st_size) <=
			  0.005 * (double)st.st_size + 0.5,
		      "file %.3f x %.0f is not the file's %lld bytes: %s", v,
		      scale, (long long)st.st_size, line);
}

/* Check a dump reply line against the file it names. */
static void check_dump_line(const char *line, const char *path)
{
	struct dump_sums sums;
	char want[128];

	ck_assert_msg(strstr(line, path) != NULL, "no path %s in: %s", path,
		      line);
	read_dump(path, &sums);
	ck_assert_uint_gt(sums.objects, 0);
	snprintf(want, sizeof(want), " %" PRIu64 " objects", sums.objects);
	ck_assert_msg(strstr(line, want), "no '%s' in: %s", want, line);
	snprintf(want, sizeof(want), "%" PRIu64 " bytes", sums.bytes);
	ck_assert_msg(strstr(line, want), "no '%s' in: %s", want, line);
	if (sums.bytes >= 1024)
		ck_assert_msg(strstr(line, "KiB (") || strstr(line, "MiB (") ||
				  strstr(line, "GiB ("),
			      "no unit in: %s", line);
	ck_assert_msg(strstr(line, " s") != NULL, "no time in: %s", line);
	check_file_size(line, path);
}

/* ------------------------------------------------------------- -e mode */

/* list -v: each variable with its type and its value (the pid is known
 * independently; a byte count keeps its unit). */
START_TEST(list_v_shows_values)
{
	const char *dir = spec_test_dir();
	char want[64];
	pid_t vm;
	struct spec_run r;
	char *line;

	vm = vm_start(dir);
	console_run(&r, dir, NULL, ARGS("-e", "list -v system"));
	ck_assert_msg(r.status == 0, "status %d, stderr: %s", r.status, r.err);
	snprintf(want, sizeof(want), "system.pid ");
	line = line_with(r.out, want);
	ck_assert_ptr_nonnull(line);
	snprintf(want, sizeof(want), " %ld", (long)vm);
	ck_assert_msg(strstr(line, " int ") &&
			  !strcmp(strrchr(line, ' '), want),
		      "'%s' in: %s", want, r.out);
	free(line);
	line = line_with(r.out, "system.memory.rss ");
	ck_assert_msg(line && strstr(line, " bytes)"), "%s", r.out);
	free(line);
	ck_assert_ptr_null(strstr(r.out, "config."));
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(one_agent_is_found_and_get_prints_its_pid)
{
	const char *dir = spec_test_dir();
	char want[32];
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	console_run(&r, dir, NULL, ARGS("-e", "get system.pid"));
	snprintf(want, sizeof(want), "%ld\n", (long)vm);
	ck_assert_msg(r.status == 0, "status %d, stderr: %s", r.status, r.err);
	ck_assert_str_eq(r.out, want);
	ck_assert_str_eq(r.err, "");
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(e_dump_reply_is_one_line_matching_the_file)
{
	const char *dir = spec_test_dir();
	char path[512];
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	console_run(&r, dir, NULL,
		       ARGS("-e", "set system.memory.dump first.vmheap", "-e",
			    "get system.pid"));
	ck_assert_msg(r.status == 0, "status %d, stderr: %s", r.status, r.err);
	snprintf(path, sizeof(path), "%s/first.vmheap", dir);
	ck_assert_int_eq(access(path, R_OK), 0);
	ck_assert_int_eq(count_lines(r.out), 2);
	check_dump_line(r.out, path);
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(unknown_variable_exits_1_and_says_so)
{
	const char *dir = spec_test_dir();
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	console_run(
	    &r, dir, NULL,
	    ARGS("-e", "get no.such.variable", "-e", "get system.pid"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "error (") &&
			  strstr(r.err, "no.such.variable"),
		      "stderr: %s", r.err);
	/* the command after the failing one still ran */
	ck_assert_int_eq(atol(r.out), (long)vm);
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(dump_to_an_existing_path_exits_1_and_keeps_the_file)
{
	const char *dir = spec_test_dir();
	char path[512];
	struct stat before, after;
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	snprintf(path, sizeof(path), "%s/keep.vmheap", dir);
	spec_write_text(path, "precious\n");
	ck_assert_int_eq(stat(path, &before), 0);
	console_run(&r, dir, NULL,
		       ARGS("-e", "set system.memory.dump keep.vmheap"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "error (") != NULL, "stderr: %s", r.err);
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_int_eq(after.st_size, before.st_size);
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(malformed_command_exits_1)
{
	const char *dir = spec_test_dir();
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	console_run(&r, dir, NULL, ARGS("-e", "set system.memory.dump"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "set VAR VALUE") != NULL, "stderr: %s",
		      r.err);
	spec_run_free(&r);
	console_run(&r, dir, NULL, ARGS("-e", "frobnicate the heap"));
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "unknown command 'frobnicate'") != NULL,
		      "stderr: %s", r.err);
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(no_agent_exits_2_and_says_how_to_start_one)
{
	const char *dir = spec_test_dir();
	struct spec_run r;

	console_run(&r, dir, NULL, ARGS("-e", "get system.pid"));
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "no agent is running") &&
			  strstr(r.err, dir) &&
			  strstr(r.err, "vmheap-sample") &&
			  strstr(r.err, "-rvmheap_agent"),
		      "stderr: %s", r.err);
	ck_assert_int_eq(count_lines(r.err), 1);
	ck_assert_str_eq(r.out, "");
	spec_run_free(&r);
}
END_TEST

START_TEST(wrong_pid_exits_2_and_points_at_ps)
{
	const char *dir = spec_test_dir();
	char arg[32];
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	snprintf(arg, sizeof(arg), "%ld", (long)getpid()); /* alive, no agent */
	console_run(&r, dir, NULL, ARGS("-p", arg, "-e", "get system.pid"));
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "no agent with pid") &&
			  strstr(r.err, "--ps"),
		      "stderr: %s", r.err);
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(dead_vm_exits_2_and_its_stale_file_is_removed)
{
	const char *dir = spec_test_dir();
	char disc[512], arg[32];
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	discovery_path(disc, sizeof(disc), dir, vm);
	spec_kill(vm);
	ck_assert_int_eq(access(disc, F_OK), 0); /* SIGKILL leaves it */
	snprintf(arg, sizeof(arg), "%ld", (long)vm);
	console_run(&r, dir, NULL, ARGS("-p", arg, "-e", "get system.pid"));
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, arg) != NULL, "stderr: %s", r.err);
	ck_assert_int_eq(access(disc, F_OK), -1);
	spec_run_free(&r);
}
END_TEST

/* The pid of a process that has exited and been reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

START_TEST(stale_file_is_removed_by_ps)
{
	const char *dir = spec_test_dir();
	char disc[512], junk[512], pidstr[32];
	pid_t live, dead;
	struct spec_run r;

	dead = vm_start(dir);
	live = vm_start(dir);
	discovery_path(disc, sizeof(disc), dir, dead);
	spec_kill(dead);
	/* unreadable leftovers of dead processes are stale too */
	discovery_path(junk, sizeof(junk), dir, dead_pid());
	spec_write_text(junk, "half a discovery fi");
	console_run(&r, dir, NULL, ARGS("--ps"));
	ck_assert_int_eq(r.status, 0);
	snprintf(pidstr, sizeof(pidstr), "%ld", (long)live);
	ck_assert_msg(strstr(r.out, pidstr) != NULL, "stdout: %s", r.out);
	snprintf(pidstr, sizeof(pidstr), "\n%ld ", (long)dead);
	ck_assert_msg(strstr(r.out, pidstr) == NULL, "stdout: %s", r.out);
	ck_assert_int_eq(access(disc, F_OK), -1);
	ck_assert_int_eq(access(junk, F_OK), -1);
	ck_assert_str_eq(r.err, "");
	spec_run_free(&r);
	spec_kill(live);
}
END_TEST

START_TEST(malformed_discovery_file_is_reported_and_skipped)
{
	const char *dir = spec_test_dir();
	char bad[512];
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	/* named after a live process (this test), so it is not stale */
	discovery_path(bad, sizeof(bad), dir, getpid());
	spec_write_text(bad, "this is not\na discovery file\n\x01\x02\n");
	console_run(&r, dir, NULL, ARGS("-e", "get system.pid"));
	ck_assert_msg(r.status == 0, "status %d, stderr: %s", r.status, r.err);
	ck_assert_int_eq(atol(r.out), (long)vm);
	ck_assert_int_eq(count_lines(r.err), 1);
	ck_assert_msg(strstr(r.err, bad) != NULL, "stderr: %s", r.err);
	ck_assert_int_eq(access(bad, F_OK), 0); /* reported, not deleted */
	spec_run_free(&r);
	/* asked for by pid, it is explained once */
	{
		char arg[32];

		snprintf(arg, sizeof(arg), "%ld", (long)getpid());
		console_run(&r, dir, NULL,
			       ARGS("-p", arg, "-e", "get system.pid"));
		ck_assert_int_eq(r.status, 2);
		ck_assert_int_eq(count_lines(r.err), 1);
		ck_assert_msg(strstr(r.err, "malformed") && strstr(r.err, bad),
			      "stderr: %s", r.err);
		spec_run_free(&r);
	}
	spec_kill(vm);
}
END_TEST

/* Rewrite key=value lines of a discovery file. */
static void rewrite_discovery(const char *from, const char *to, pid_t pid,
			      const char *address, const char *token)
{
	char *text = spec_read_file(from, NULL), *save = NULL;
	char out[4096] = "";
	size_t used = 0;

	ck_assert_ptr_nonnull(text);
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char buf[1024];

		if (pid && strncmp(line, "pid=", 4) == 0)
			snprintf(buf, sizeof(buf), "pid=%ld", (long)pid);
		else if (pid && strncmp(line, "proc_start=", 11) == 0)
			continue;
		else if (address && strncmp(line, "address=", 8) == 0)
			snprintf(buf, sizeof(buf), "address=%s", address);
		else if (token && strncmp(line, "token=", 6) == 0)
			snprintf(buf, sizeof(buf), "token=%s", token);
		else
			snprintf(buf, sizeof(buf), "%s", line);
		used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n",
					 buf);
	}
	free(text);
	spec_write_text(to, out);
}

START_TEST(refused_token_exits_2_and_says_the_file_may_be_stale)
{
	const char *dir = spec_test_dir();
	char disc[512];
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	discovery_path(disc, sizeof(disc), dir, vm);
	rewrite_discovery(disc, disc, 0, NULL,
			  "0123456789abcdef0123456789abcdef");
	console_run(&r, dir, NULL, ARGS("-e", "get system.pid"));
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "refused the token") != NULL, "stderr: %s",
		      r.err);
	ck_assert_int_eq(count_lines(r.err), 1);
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(stopped_vm_times_out_with_exit_2)
{
	const char *dir = spec_test_dir();
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	kill(vm, SIGSTOP); /* the kernel still accepts, nobody answers */
	console_run(&r, dir, NULL, ARGS("-e", "get system.pid"));
	kill(vm, SIGCONT);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "did not answer") != NULL, "stderr: %s",
		      r.err);
	ck_assert_int_eq(count_lines(r.err), 1);
	/* its own timeout ended the wait (spec_run's would have killed it:
	 * status -1, no message) */
	ck_assert_msg(strstr(r.err, "did not answer within "), "stderr: %s",
		      r.err);
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

/* A loopback port where nothing listens. */
static unsigned closed_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, len), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

START_TEST(refused_connection_exits_2_naming_the_address)
{
	const char *dir = spec_test_dir();
	char disc[512], fake[512], addr[64], arg[32];
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	discovery_path(disc, sizeof(disc), dir, vm);
	discovery_path(fake, sizeof(fake), dir, getpid());
	snprintf(addr, sizeof(addr), "tcp://127.0.0.1:%u", closed_port());
	rewrite_discovery(disc, fake, getpid(), addr, NULL);
	snprintf(arg, sizeof(arg), "%ld", (long)getpid());
	console_run(&r, dir, NULL, ARGS("-p", arg, "-e", "get system.pid"));
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "cannot connect") && strstr(r.err, addr),
		      "stderr: %s", r.err);
	ck_assert_int_eq(count_lines(r.err), 1);
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(another_users_vm_is_explained)
{
	const char *dir = spec_test_dir();
	char disc[512], fake[512], arg[32];
	pid_t vm;
	struct spec_run r;

	if (geteuid() != 0) {
		/* only root can make a file owned by someone else */
		fprintf(stderr,
			"another_users_vm_is_explained: needs root, not run\n");
		return;
	}
	vm = vm_start(dir);
	discovery_path(disc, sizeof(disc), dir, vm);
	discovery_path(fake, sizeof(fake), dir, getpid());
	rewrite_discovery(disc, fake, getpid(), NULL, NULL);
	ck_assert_int_eq(chown(fake, 65534, 65534), 0);
	snprintf(arg, sizeof(arg), "%ld", (long)getpid());
	console_run(&r, dir, NULL, ARGS("-p", arg, "-e", "get system.pid"));
	ck_assert_int_eq(r.status, 2);
	/* root may reach other users' VMs, but this file names a process
	 * of root's (the test): a forged or stale file, said so */
	ck_assert_msg(strstr(r.err, "is not that user's") &&
			  strstr(r.err, "65534"),
		      "stderr: %s", r.err);
	spec_run_free(&r);
	/* without -p the foreign file is not noise: our own VM is used */
	console_run(&r, dir, NULL, ARGS("-e", "get system.pid"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(atol(r.out), (long)vm);
	ck_assert_str_eq(r.err, "");
	spec_run_free(&r);
	/* with only the foreign file left, the no-agent message points at
	 * it (as root: a file whose process is not its owner's is stale) */
	spec_kill(vm);
	console_run(&r, dir, NULL, ARGS("-e", "get system.pid"));
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "no agent is running") &&
			  strstr(r.err, "1 discovery file of other users "
					"whose processes are gone or not "
					"theirs"),
		      "stderr: %s", r.err);
	ck_assert_int_eq(count_lines(r.err), 1);
	spec_run_free(&r);
}
END_TEST

/* ---------------------------------------------------------- stdin, json */

START_TEST(stdin_commands_run_one_a_line)
{
	const char *dir = spec_test_dir();
	char path[512], *line;
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	console_run(&r, dir,
		       "get system.pid\n"
		       "\n"
		       "set system.memory.dump piped.vmheap\n"
		       "system.memory.bytes\n",
		       NULL);
	ck_assert_msg(r.status == 0, "status %d, stderr: %s", r.status, r.err);
	ck_assert_int_eq(atol(r.out), (long)vm);
	snprintf(path, sizeof(path), "%s/piped.vmheap", dir);
	line = line_with(r.out, "piped.vmheap");
	ck_assert_ptr_nonnull(line);
	check_dump_line(line, path);
	free(line);
	ck_assert_int_eq(count_lines(r.out), 3);
	/* no prompt without a terminal */
	ck_assert_ptr_null(strstr(r.out, "console>"));
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(stdin_with_a_failing_command_exits_1_after_running_the_rest)
{
	const char *dir = spec_test_dir();
	pid_t vm;
	struct spec_run r;

	vm = vm_start(dir);
	console_run(&r, dir, "get nothing.here\nget system.pid\n", NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_int_eq(atol(r.out), (long)vm);
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(vm_going_away_mid_session_exits_2_without_hanging)
{
	const char *dir = spec_test_dir();
	char want[64];
	pid_t vm;
	struct spec_proc p;
	int status;

	vm = vm_start(dir);
	console_start(&p, dir, NULL);
	spec_proc_write(&p, "get system.pid\n");
	snprintf(want, sizeof(want), "%ld\n", (long)vm);
	ck_assert_msg(spec_proc_wait_for(&p, want, WAIT_MS), "output: %s", p.buf);
	spec_kill(vm);
	spec_proc_write(&p, "get system.pid\n");
	ck_assert_msg(spec_proc_wait_for(&p, "went away", WAIT_MS), "output: %s",
		      p.buf);
	status = spec_proc_wait_exit(&p, WAIT_MS);
	ck_assert_int_eq(status, 2);
	snprintf(want, sizeof(want), "the VM (pid %ld) went away", (long)vm);
	ck_assert_msg(strstr(p.buf, want) != NULL, "output: %s", p.buf);
}
END_TEST

START_TEST(an_idle_connection_dropped_by_the_agent_is_reopened)
{
	const char *dir = spec_test_dir();
	char want[64];
	pid_t vm;
	struct spec_proc p;

	/* an agent that drops connections idle for 200 ms */
	setenv("VMHEAP_AGENT_IDLE_TIMEOUT_MS", "200", 1);
	vm = vm_start(dir);
	unsetenv("VMHEAP_AGENT_IDLE_TIMEOUT_MS");
	console_start(&p, dir, NULL);
	spec_proc_write(&p, "get system.pid\n");
	snprintf(want, sizeof(want), "%ld\n", (long)vm);
	ck_assert_msg(spec_proc_wait_for(&p, want, WAIT_MS), "output: %s", p.buf);
	/* idle well past the limit: the agent closes our connection */
	ck_assert(!spec_proc_wait_for(&p, "never printed", 800));
	spec_proc_write(&p, "get system.vm\n");
	ck_assert_msg(spec_proc_wait_for(&p, "sample", WAIT_MS), "output: %s",
		      p.buf);
	ck_assert_int_eq(spec_proc_wait_exit(&p, WAIT_MS), 0);
	ck_assert_msg(strstr(p.buf, "went away") == NULL, "output: %s", p.buf);
	spec_kill(vm);
}
END_TEST

/* Is `s` one JSON value?  Checked by jq, a real JSON parser. */
static int jq_accepts(const char *dir, const char *json, const char *filter,
		      char *out, size_t outlen)
{
	const char *argv[] = {"jq", "-e", "-r", filter, NULL};
	struct spec_run r;
	int ok;

	(void)dir;
	ck_assert_int_eq(spec_run(argv, NULL, json, 20000, &r), 0);
	snprintf(out, outlen, "%s%s", r.out, r.err);
	ok = r.status == 0;
	spec_run_free(&r);
	return ok;
}

START_TEST(json_prints_reply_values_as_json)
{
	const char *dir = spec_test_dir();
	char out[1024], want[32];
	pid_t vm;
	struct spec_run r;
	struct dump_sums sums;
	char path[512];

	vm = vm_start(dir);
	console_run(&r, dir, NULL,
		       ARGS("--json", "-e", "get system.pid", "-e",
			    "set system.memory.dump j.vmheap", "-e", "list"));
	ck_assert_msg(r.status == 0, "status %d, stderr: %s", r.status, r.err);
	ck_assert_int_eq(count_lines(r.out), 3);
	snprintf(want, sizeof(want), "%ld\n", (long)vm);
	ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0, "stdout: %s",
		      r.out);
	/* the dump reply: a JSON object whose figures match the file */
	{
		char *second = strchr(r.out, '\n') + 1;
		char *third = strchr(second, '\n') + 1;
		char obj[4096];

		snprintf(obj, sizeof(obj), "%.*s", (int)(third - second),
			 second);
		snprintf(path, sizeof(path), "%s/j.vmheap", dir);
		read_dump(path, &sums);
		ck_assert_msg(
		    jq_accepts(dir, obj, ".objects", out, sizeof(out)),
		    "jq: %s on %s", out, obj);
		ck_assert_uint_eq(strtoull(out, NULL, 10), sums.objects);
		ck_assert_msg(
		    jq_accepts(dir, third, "tostring", out, sizeof(out)),
		    "jq: %s on %s", out, third);
		ck_assert_msg(strstr(out, "system.memory.dump") != NULL,
			      "list as JSON lacks system.memory.dump: %s", out);
	}
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

/* ------------------------------------------------------- several agents */

START_TEST(ps_lists_every_agent_in_aligned_columns)
{
	const char *dir = spec_test_dir();
	char p1[32], p2[32], *l1, *l2, *head;
	pid_t a, b;
	struct spec_run r;

	a = vm_start(dir);
	b = vm_start(dir);
	console_run(&r, dir, NULL, ARGS("--ps"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(count_lines(r.out), 3);
	snprintf(p1, sizeof(p1), "%ld ", (long)a);
	snprintf(p2, sizeof(p2), "%ld ", (long)b);
	head = line_with(r.out, "PID");
	l1 = line_with(r.out, p1);
	l2 = line_with(r.out, p2);
	ck_assert_ptr_nonnull(head);
	ck_assert_ptr_nonnull(l1);
	ck_assert_ptr_nonnull(l2);
	/* the address column starts at the same place on each line */
	ck_assert_ptr_nonnull(strstr(l1, "tcp://"));
	ck_assert_int_eq(strstr(l1, "tcp://") - l1, strstr(l2, "tcp://") - l2);
	ck_assert_int_eq(strstr(head, "ADDRESS") - head,
			 strstr(l1, "tcp://") - l1);
	free(head);
	free(l1);
	free(l2);
	spec_run_free(&r);
	spec_kill(a);
	spec_kill(b);
}
END_TEST

START_TEST(ps_json_lists_the_agents_for_scripts)
{
	const char *dir = spec_test_dir();
	char out[1024], want[64];
	pid_t a, b;
	struct spec_run r;

	a = vm_start(dir);
	b = vm_start(dir);
	console_run(&r, dir, NULL, ARGS("--ps", "--json"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(
	    jq_accepts(dir, r.out,
		       "[.[].pid] | sort | map(tostring) | join(\",\")", out,
		       sizeof(out)),
	    "jq: %s on %s", out, r.out);
	snprintf(want, sizeof(want), "%ld,%ld\n", (long)(a < b ? a : b),
		 (long)(a < b ? b : a));
	ck_assert_str_eq(out, want);
	ck_assert_msg(
	    jq_accepts(dir, r.out,
		       ".[0].address | startswith(\"tcp://127.0.0.1:\")", out,
		       sizeof(out)),
	    "jq: %s on %s", out, r.out);
	spec_run_free(&r);
	spec_kill(a);
	spec_kill(b);
}
END_TEST

START_TEST(tmpdir_option_overrides_the_environment)
{
	const char *dir = spec_test_dir();
	char empty[256];
	pid_t vm;
	struct spec_run r;

	snprintf(empty, sizeof(empty), "%s", spec_mkdtemp("console"));
	vm = vm_start(dir);
	/* the environment names `empty`; --tmpdir names the VM's directory */
	console_run(&r, empty, NULL,
		       ARGS("--tmpdir", dir, "-e", "get system.pid"));
	ck_assert_msg(r.status == 0, "status %d, stderr: %s", r.status, r.err);
	ck_assert_int_eq(atol(r.out), (long)vm);
	spec_run_free(&r);
	console_run(&r, empty, NULL, ARGS("-e", "get system.pid"));
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, empty) != NULL, "stderr: %s", r.err);
	spec_run_free(&r);
	spec_kill(vm);
}
END_TEST

START_TEST(p_picks_the_named_agent_among_several)
{
	const char *dir = spec_test_dir();
	char arg[32];
	pid_t a, b;
	struct spec_run r;

	a = vm_start(dir);
	b = vm_start(dir);
	snprintf(arg, sizeof(arg), "%ld", (long)b);
	console_run(&r, dir, NULL, ARGS("-p", arg, "-e", "get system.pid"));
	ck_assert_msg(r.status == 0, "status %d, stderr: %s", r.status, r.err);
	ck_assert_int_eq(atol(r.out), (long)b);
	spec_run_free(&r);
	snprintf(arg, sizeof(arg), "%ld", (long)a);
	console_run(&r, dir, NULL,
		       ARGS("--pid", arg, "-e", "get system.pid"));
	ck_assert_int_eq(atol(r.out), (long)a);
	spec_run_free(&r);
	spec_kill(a);
	spec_kill(b);
}
END_TEST

START_TEST(several_agents_without_a_terminal_exit_2_naming_the_pids)
{
	const char *dir = spec_test_dir();
	char p1[32], p2[32];
	pid_t a, b;
	struct spec_run r;

	a = vm_start(dir);
	b = vm_start(dir);
	console_run(&r, dir, NULL, ARGS("-e", "get system.pid"));
	ck_assert_int_eq(r.status, 2);
	snprintf(p1, sizeof(p1), "%ld", (long)a);
	snprintf(p2, sizeof(p2), "%ld", (long)b);
	ck_assert_msg(strstr(r.err, p1) && strstr(r.err, p2) &&
			  strstr(r.err, "-p"),
		      "stderr: %s", r.err);
	spec_run_free(&r);
	spec_kill(a);
	spec_kill(b);
}
END_TEST

/* ------------------------------------------------------ interactive (tmux) */

/* Start the console on `vm` in tmux and wait for its prompt. */
static void start_console_in_tmux(struct spec_tmux *t, const char *dir,
				  const char *args, pid_t vm)
{
	char cmd[2048];

	spec_console_command(cmd, sizeof(cmd), dir, args);
	spec_tmux_start(t, cmd);
	spec_tmux_see(t, spec_console_prompt(vm, ""), WAIT_MS);
}

START_TEST(interactive_dump_reply_names_path_objects_size_and_time)
{
	const char *dir = spec_test_dir();
	char path[512], *pane, *line;
	struct spec_tmux t;
	pid_t vm;

	vm = vm_start(dir);
	start_console_in_tmux(&t, dir, NULL, vm);
	spec_tmux_line(&t, "set system.memory.dump heap.vmheap");
	pane = spec_tmux_expect(&t, "dump written", WAIT_MS);
	snprintf(path, sizeof(path), "%s/heap.vmheap", dir);
	ck_assert_int_eq(access(path, R_OK), 0);
	line = line_with(pane, "dump written");
	check_dump_line(line, path);
	free(line);
	free(pane);
	/* a byte count shows its unit and the exact figure */
	spec_tmux_line(&t, "get system.memory.rss");
	spec_tmux_see(&t, " bytes)", WAIT_MS);
	spec_tmux_line(&t, "exit");
	spec_tmux_see(&t, "[exit 0]", WAIT_MS);
	spec_tmux_kill(&t);
	spec_kill(vm);
}
END_TEST

START_TEST(tab_completes_a_partial_variable_name)
{
	const char *dir = spec_test_dir();
	char *pane;
	struct spec_tmux t;
	pid_t vm;

	vm = vm_start(dir);
	start_console_in_tmux(&t, dir, NULL, vm);
	spec_tmux_type(&t, "get system.memory.r");
	spec_tmux_key(&t, "Tab");
	spec_tmux_see(&t, spec_console_prompt(vm, "get system.memory.rss"),
		      WAIT_MS);
	spec_tmux_key(&t, "Enter");
	pane = spec_tmux_expect(&t, " bytes)", WAIT_MS);
	ck_assert_ptr_null(strstr(pane, "error ("));
	free(pane);
	/* command words complete too */
	spec_tmux_type(&t, "he");
	spec_tmux_key(&t, "Tab");
	spec_tmux_see(&t, spec_console_prompt(vm, "help"), WAIT_MS);
	spec_tmux_kill(&t);
	spec_kill(vm);
}
END_TEST

START_TEST(history_is_saved_and_recalled_next_session)
{
	const char *dir = spec_test_dir();
	char hist[512], *text;
	struct spec_tmux t, t2;
	pid_t vm;

	vm = vm_start(dir);
	start_console_in_tmux(&t, dir, NULL, vm);
	spec_tmux_line(&t, "get system.pid");
	ck_assert(spec_tmux_wait_count(&t, spec_console_prompt(vm, ""), 2, WAIT_MS));
	spec_tmux_line(&t, "list system.memory");
	ck_assert(spec_tmux_wait_count(&t, spec_console_prompt(vm, ""), 3, WAIT_MS));
	spec_tmux_key(&t, "C-d");
	spec_tmux_see(&t, "[exit 0]", WAIT_MS);
	snprintf(hist, sizeof(hist), "%s/.vmheap_history", dir);
	text = spec_read_file(hist, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "get system.pid\nlist system.memory\n");
	free(text);
	spec_tmux_kill(&t);

	start_console_in_tmux(&t2, dir, NULL, vm);
	spec_tmux_key(&t2, "Up");
	spec_tmux_key(&t2, "Up");
	spec_tmux_see(&t2, spec_console_prompt(vm, "get system.pid"), WAIT_MS);
	spec_tmux_kill(&t2);
	spec_kill(vm);
}
END_TEST

START_TEST(help_lists_the_commands_and_quit_leaves)
{
	const char *dir = spec_test_dir();
	char *pane;
	struct spec_tmux t;
	pid_t vm;

	vm = vm_start(dir);
	start_console_in_tmux(&t, dir, NULL, vm);
	spec_tmux_line(&t, "help");
	pane = spec_tmux_expect(&t, "list [PREFIX]", WAIT_MS);
	ck_assert_ptr_nonnull(strstr(pane, "set VAR VALUE"));
	free(pane);
	spec_tmux_line(&t, "quit");
	spec_tmux_see(&t, "[exit 0]", WAIT_MS);
	spec_tmux_kill(&t);
	spec_kill(vm);
}
END_TEST

START_TEST(ctrl_c_drops_the_line_and_keeps_the_session)
{
	const char *dir = spec_test_dir();
	char want[512];
	struct spec_tmux t;
	pid_t vm;

	vm = vm_start(dir);
	start_console_in_tmux(&t, dir, NULL, vm);
	spec_tmux_type(&t, "set system.memory.dump never.vmheap");
	/* as a person would: see the line, then press Ctrl-C (a ^C before
	 * the line editor read the text would flush it from the tty) */
	spec_tmux_see(
	    &t, spec_console_prompt(vm, "set system.memory.dump never.vmheap"),
	    WAIT_MS);
	spec_tmux_key(&t, "C-c");
	spec_tmux_see(&t, "never.vmheap^C", WAIT_MS);
	spec_tmux_line(&t, "get system.pid");
	snprintf(want, sizeof(want), "get system.pid\n%ld\n", (long)vm);
	spec_tmux_see(&t, want, WAIT_MS);
	/* the dropped line never ran */
	snprintf(want, sizeof(want), "%s/never.vmheap", dir);
	ck_assert_int_eq(access(want, F_OK), -1);
	spec_tmux_kill(&t);
	spec_kill(vm);
}
END_TEST

/* The pid on the chooser's line "  N)  PID ..." (0 if absent). */
static long chooser_pid(const char *pane, int n)
{
	char tag[16];
	const char *p;

	snprintf(tag, sizeof(tag), "%d)", n);
	p = strstr(pane, tag);
	return p ? atol(p + strlen(tag)) : 0;
}

START_TEST(chooser_lists_agents_and_connects_to_the_one_picked)
{
	const char *dir = spec_test_dir();
	char want[64], *pane;
	struct spec_tmux t;
	pid_t a, b;
	long picked;

	a = vm_start(dir);
	b = vm_start(dir);
	{
		char cmd[2048];

		spec_console_command(cmd, sizeof(cmd), dir, NULL);
		spec_tmux_start(&t, cmd);
	}
	pane = spec_tmux_expect(&t, "Which one? [1-2]", WAIT_MS);
	picked = chooser_pid(pane, 2);
	ck_assert_msg(picked == a || picked == b, "no pid on line 2: %s", pane);
	ck_assert_int_ne(chooser_pid(pane, 1), picked);
	free(pane);
	spec_tmux_line(&t, "2");
	spec_tmux_see(&t, spec_console_prompt((pid_t)picked, ""), WAIT_MS);
	spec_tmux_line(&t, "get system.pid");
	snprintf(want, sizeof(want), "get system.pid\n%ld\n", picked);
	spec_tmux_see(&t, want, WAIT_MS);
	spec_tmux_kill(&t);
	spec_kill(a);
	spec_kill(b);
}
END_TEST

START_TEST(interactive_vm_going_away_says_so_and_exits_2)
{
	const char *dir = spec_test_dir();
	char want[64], *pane;
	struct spec_tmux t;
	pid_t vm;

	vm = vm_start(dir);
	start_console_in_tmux(&t, dir, NULL, vm);
	spec_kill(vm);
	spec_tmux_line(&t, "get system.uptime");
	snprintf(want, sizeof(want), "the VM (pid %ld) went away", (long)vm);
	pane = spec_tmux_expect(&t, "[exit 2]", WAIT_MS);
	ck_assert_msg(strstr(pane, want) != NULL, "pane: %s", pane);
	free(pane);
	spec_tmux_kill(&t);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("console");
	TCase *t;

	t = spec_tcase(s, "-e mode", 60);
	tcase_add_checked_fixture(t, spec_test_dir_setup, NULL);
	tcase_add_test(t, one_agent_is_found_and_get_prints_its_pid);
	tcase_add_test(t, list_v_shows_values);
	tcase_add_test(t, e_dump_reply_is_one_line_matching_the_file);
	tcase_add_test(t, unknown_variable_exits_1_and_says_so);
	tcase_add_test(t, dump_to_an_existing_path_exits_1_and_keeps_the_file);
	tcase_add_test(t, malformed_command_exits_1);
	tcase_add_test(t, no_agent_exits_2_and_says_how_to_start_one);
	tcase_add_test(t, wrong_pid_exits_2_and_points_at_ps);
	tcase_add_test(t, dead_vm_exits_2_and_its_stale_file_is_removed);
	tcase_add_test(t, stale_file_is_removed_by_ps);
	tcase_add_test(t, malformed_discovery_file_is_reported_and_skipped);
	tcase_add_test(t, refused_token_exits_2_and_says_the_file_may_be_stale);
	tcase_add_test(t, stopped_vm_times_out_with_exit_2);
	tcase_add_test(t, refused_connection_exits_2_naming_the_address);
	tcase_add_test(t, another_users_vm_is_explained);

	t = spec_tcase(s, "stdin and json", 60);
	tcase_add_checked_fixture(t, spec_test_dir_setup, NULL);
	tcase_add_test(t, stdin_commands_run_one_a_line);
	tcase_add_test(
	    t, stdin_with_a_failing_command_exits_1_after_running_the_rest);
	tcase_add_test(t, vm_going_away_mid_session_exits_2_without_hanging);
	tcase_add_test(t, an_idle_connection_dropped_by_the_agent_is_reopened);
	tcase_add_test(t, json_prints_reply_values_as_json);

	t = spec_tcase(s, "several agents", 60);
	tcase_add_checked_fixture(t, spec_test_dir_setup, NULL);
	tcase_add_test(t, ps_lists_every_agent_in_aligned_columns);
	tcase_add_test(t, ps_json_lists_the_agents_for_scripts);
	tcase_add_test(t, tmpdir_option_overrides_the_environment);
	tcase_add_test(t, p_picks_the_named_agent_among_several);
	tcase_add_test(
	    t, several_agents_without_a_terminal_exit_2_naming_the_pids);

	t = spec_tcase(s, "interactive", 60);
	tcase_add_checked_fixture(t, spec_test_dir_setup, NULL);
	tcase_add_test(
	    t, interactive_dump_reply_names_path_objects_size_and_time);
	tcase_add_test(t, tab_completes_a_partial_variable_name);
	tcase_add_test(t, history_is_saved_and_recalled_next_session);
	tcase_add_test(t, help_lists_the_commands_and_quit_leaves);
	tcase_add_test(t, ctrl_c_drops_the_line_and_keeps_the_session);
	tcase_add_test(t, chooser_lists_agents_and_connects_to_the_one_picked);
	tcase_add_test(t, interactive_vm_going_away_says_so_and_exits_2);

	suite_add_tcase(s, console_render_tcase());
	return s;
}
