/*
 * console_harness.c - real processes for spec/console_test.c (see
 * console_harness-internal.h).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "console_harness-internal.h"

static char suite_root[256];
static int dir_counter;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

void ct_suite_setup(void)
{
	snprintf(suite_root, sizeof(suite_root),
		 "/tmp/vmheap-console-spec.XXXXXX");
	if (!mkdtemp(suite_root)) {
		perror("mkdtemp");
		exit(2);
	}
	/* tmux sockets go here, so that cleanup finds every server */
	setenv("TMUX_TMPDIR", suite_root, 1);
	unsetenv("TMUX");
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int run_quiet(const char *const *argv)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void ct_suite_cleanup(void)
{
	char dir[512];
	DIR *d;
	struct dirent *de;

	snprintf(dir, sizeof(dir), "%s/tmux-%ld", suite_root, (long)getuid());
	d = opendir(dir);
	while (d && (de = readdir(d)) != NULL) {
		const char *argv[] = {"tmux", "-L", de->d_name, "kill-server",
				      NULL};

		if (de->d_name[0] != '.')
			run_quiet(argv);
	}
	if (d)
		closedir(d);
	nftw(suite_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void ct_mkdir(char *out, size_t len)
{
	snprintf(out, len, "%s/t%ld-%d", suite_root, (long)getpid(),
		 ++dir_counter);
	ck_assert_msg(mkdir(out, 0700) == 0, "mkdir %s: %s", out,
		      strerror(errno));
}

void ct_bin(char *out, size_t len, const char *name)
{
	const char *build = getenv("VMHEAP_BUILD");

	snprintf(out, len, "%s/bin/%s", build && *build ? build : "build",
		 name);
}

void ct_discovery_path(char *out, size_t len, const char *dir, pid_t pid)
{
	snprintf(out, len, "%s/vmheap-agent.%ld", dir, (long)pid);
}

pid_t ct_vm_start(const char *dir)
{
	char bin[512], log[512], disc[512];
	pid_t parent = getpid();
	pid_t pid;
	double deadline;

	ct_bin(bin, sizeof(bin), "vmheap-sample");
	snprintf(log, sizeof(log), "%s/vm.log", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);

		/* die with the test that started us */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		fd = open("/dev/null", O_RDONLY);
		dup2(fd, 0);
		setenv("VMHEAP_AGENT_TMPDIR", dir, 1);
		setenv("VMHEAP_AGENT_DIR", dir, 1);
		execl(bin, bin, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	ct_discovery_path(disc, sizeof(disc), dir, pid);
	deadline = now_s() + 15.0;
	while (access(disc, F_OK) != 0) {
		int status;

		if (waitpid(pid, &status, WNOHANG) == pid)
			ck_abort_msg(
			    "the sample VM exited before writing %s (see %s)",
			    disc, log);
		if (now_s() > deadline)
			ck_abort_msg("the sample VM wrote no %s within 15 s",
				     disc);
		nap_ms(10);
	}
	return pid;
}

void ct_vm_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* ------------------------------------------------------------ console */

static void console_env(const char *dir)
{
	setenv("HOME", dir, 1);
	setenv("VMHEAP_AGENT_TMPDIR", dir, 1);
	unsetenv("TMPDIR");
}

static const char **console_argv(const char *const *args)
{
	static char bin[512];
	static const char *argv[64];
	int n = 0;

	ct_bin(bin, sizeof(bin), "vmheap-console");
	argv[n++] = bin;
	for (; args && *args && n < 63; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	return argv;
}

void ct_console_run(struct ct_run *r, const char *dir, const char *input,
		    const char *const *args)
{
	char outp[512], errp[512], inp[512];
	double start = now_s(), deadline = start + 20.0;
	int status;
	pid_t pid;

	snprintf(outp, sizeof(outp), "%s/console.out", dir);
	snprintf(errp, sizeof(errp), "%s/console.err", dir);
	snprintf(inp, sizeof(inp), "%s/console.in", dir);
	if (input)
		ct_write_file(inp, input);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int in = open(input ? inp : "/dev/null", O_RDONLY);
		int out = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		const char **argv = console_argv(args);

		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		console_env(dir);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	r->status = -1;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid) {
			r->status = WIFEXITED(status) ? WEXITSTATUS(status)
						      : 128 + WTERMSIG(status);
			break;
		}
		if (now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			break;
		}
		nap_ms(5);
	}
	r->secs = now_s() - start;
	r->out = ct_read_file(outp);
	r->err = ct_read_file(errp);
	if (!r->out)
		r->out = strdup("");
	if (!r->err)
		r->err = strdup("");
}

void ct_run_free(struct ct_run *r)
{
	free(r->out);
	free(r->err);
}

void ct_proc_start(struct ct_proc *p, const char *dir, const char *const *args)
{
	int in[2], out[2];

	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	p->len = 0;
	p->buf[0] = '\0';
	p->pid = fork();
	ck_assert_int_ge(p->pid, 0);
	if (p->pid == 0) {
		const char **argv = console_argv(args);

		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		console_env(dir);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in = in[1];
	p->out = out[0];
	signal(SIGPIPE, SIG_IGN);
}

void ct_proc_write(struct ct_proc *p, const char *text)
{
	size_t len = strlen(text);

	ck_assert_int_eq(write(p->in, text, len), (ssize_t)len);
}

/* Read what is there within `ms`; returns 0 at EOF. */
static int proc_read(struct ct_proc *p, int ms)
{
	struct pollfd pfd = {p->out, POLLIN, 0};
	ssize_t n;

	if (poll(&pfd, 1, ms) <= 0)
		return 1;
	if (p->len + 1 >= sizeof(p->buf))
		return 1;
	n = read(p->out, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
	if (n <= 0)
		return 0;
	p->len += (size_t)n;
	p->buf[p->len] = '\0';
	return 1;
}

int ct_proc_wait_for(struct ct_proc *p, const char *text, int timeout_ms)
{
	double deadline = now_s() + timeout_ms / 1000.0;

	while (!strstr(p->buf, text)) {
		if (now_s() > deadline || !proc_read(p, 20))
			return strstr(p->buf, text) != NULL;
	}
	return 1;
}

int ct_proc_wait_exit(struct ct_proc *p, int timeout_ms)
{
	double deadline = now_s() + timeout_ms / 1000.0;
	int status;

	close(p->in);
	for (;;) {
		proc_read(p, 5);
		if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
			/* drain what it wrote before it ended */
			for (int i = 0; i < 100 && proc_read(p, 10); i++)
				;
			close(p->out);
			return WIFEXITED(status) ? WEXITSTATUS(status)
						 : 128 + WTERMSIG(status);
		}
		if (now_s() > deadline) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, NULL, 0);
			close(p->out);
			return -1;
		}
	}
}

/* --------------------------------------------------------------- tmux */

static int tmux(struct ct_tmux *t, const char *const *args)
{
	const char *argv[32] = {"tmux", "-L", t->socket};
	int n = 3;

	for (; *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	return run_quiet(argv);
}

void ct_tmux_start(struct ct_tmux *t, const char *command)
{
	static int counter;
	char wrapped[8192];

	snprintf(t->socket, sizeof(t->socket), "ct%ld-%d", (long)getpid(),
		 ++counter);
	snprintf(wrapped, sizeof(wrapped),
		 "trap : INT; %s; echo \"[exit $?]\"; exec sleep 600", command);
	{
		const char *args[] = {"-f", "/dev/null", "new-session", "-d",
				      "-x", "200",	 "-y",		"50",
				      "-s", "main",	 wrapped,	NULL};
		ck_assert_msg(tmux(t, args) == 0, "tmux new-session failed");
	}
}

void ct_tmux_type(struct ct_tmux *t, const char *text)
{
	const char *args[] = {"send-keys", "-t", "main", "-l", text, NULL};

	ck_assert_msg(tmux(t, args) == 0, "tmux send-keys failed");
}

void ct_tmux_key(struct ct_tmux *t, const char *key)
{
	const char *args[] = {"send-keys", "-t", "main", key, NULL};

	ck_assert_msg(tmux(t, args) == 0, "tmux send-keys %s failed", key);
}

char *ct_tmux_capture(struct ct_tmux *t)
{
	int fds[2];
	pid_t pid;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(fds[1], 1);
		dup2(null, 2);
		close(fds[0]);
		execlp("tmux", "tmux", "-L", t->socket, "capture-pane", "-p",
		       "-J", "-S", "-", "-t", "main", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 16384;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		n = read(fds[0], buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fds[0]);
	waitpid(pid, NULL, 0);
	if (!buf)
		buf = malloc(1);
	buf[len] = '\0';
	return buf;
}

char *ct_tmux_wait_for(struct ct_tmux *t, const char *text, int timeout_ms)
{
	double deadline = now_s() + timeout_ms / 1000.0;

	for (;;) {
		char *pane = ct_tmux_capture(t);

		if (strstr(pane, text))
			return pane;
		if (now_s() > deadline) {
			size_t n = strlen(pane);

			while (n && pane[n - 1] == '\n')
				pane[--n] = '\0';
			fprintf(stderr, "--- pane without \"%s\":\n%s\n---\n",
				text, pane);
			free(pane);
			return NULL;
		}
		free(pane);
		nap_ms(30);
	}
}

int ct_tmux_wait_count(struct ct_tmux *t, const char *text, int n,
		       int timeout_ms)
{
	double deadline = now_s() + timeout_ms / 1000.0;

	for (;;) {
		int have = ct_tmux_count(t, text);

		if (have >= n)
			return 1;
		if (now_s() > deadline) {
			char *pane = ct_tmux_capture(t);

			fprintf(stderr, "--- pane with %d of %d \"%s\":\n%s---\n",
				have, n, text, pane);
			free(pane);
			return 0;
		}
		nap_ms(30);
	}
}

int ct_tmux_count(struct ct_tmux *t, const char *text)
{
	char *pane = ct_tmux_capture(t);
	int n = ct_count(pane, text);

	free(pane);
	return n;
}

void ct_tmux_kill(struct ct_tmux *t)
{
	const char *args[] = {"kill-server", NULL};

	tmux(t, args);
}

void ct_console_command(char *out, size_t len, const char *dir,
			const char *args)
{
	char bin[512];

	ct_bin(bin, sizeof(bin), "vmheap-console");
	snprintf(out, len,
		 "env -u TMPDIR HOME='%s' VMHEAP_AGENT_TMPDIR='%s' '%s' %s",
		 dir, dir, bin, args ? args : "");
}

/* -------------------------------------------------------------- files */

char *ct_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int c;

	if (!f)
		return NULL;
	mem = open_memstream(&buf, &len);
	while ((c = fgetc(f)) != EOF)
		fputc(c, mem);
	fclose(mem);
	fclose(f);
	return buf;
}

void ct_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t len = strlen(text);

	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

int ct_count(const char *hay, const char *needle)
{
	int n = 0;
	size_t len = strlen(needle);

	if (!len)
		return 0;
	for (const char *p = strstr(hay, needle); p;
	     p = strstr(p + len, needle))
		n++;
	return n;
}
