/*
 * process.c - processes that die with the test, waits with a deadline,
 * commands run with their output captured (see vmheap_spec.h).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmheap_spec.h"

void spec_die_with_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* the parent may have ended before prctl: then nobody waits */
	if (getppid() != parent)
		_exit(1);
}

static void apply_env(const char *const *env)
{
	for (; env && *env; env++) {
		const char *eq = strchr(*env, '=');

		if (!eq) {
			unsetenv(*env);
		} else {
			char name[256];

			snprintf(name, sizeof(name), "%.*s", (int)(eq - *env),
				 *env);
			setenv(name, eq + 1, 1);
		}
	}
}

/* Open `path` (NULL: /dev/null) onto `target`, or dup `fd` when > 0. */
static void redirect(int target, int fd, const char *path, int flags)
{
	if (fd > 0) {
		dup2(fd, target);
		return;
	}
	fd = open(path ? path : "/dev/null", flags, 0600);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", path, strerror(errno));
		_exit(126);
	}
	if (fd != target) {
		dup2(fd, target);
		close(fd);
	}
}

pid_t spec_spawn(const struct spec_spawn *o)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid != 0)
		return pid;
	spec_die_with_parent(parent);
	{
		/* the test's blocked signals are no business of the child */
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
	}
	redirect(0, o->stdin_fd, o->stdin_path, O_RDONLY);
	redirect(1, o->stdout_fd, o->stdout_path,
		 O_WRONLY | O_CREAT | O_TRUNC);
	if (o->stderr_path && o->stdout_path &&
	    !strcmp(o->stderr_path, o->stdout_path) && o->stderr_fd <= 0)
		dup2(1, 2);
	else
		redirect(2, o->stderr_fd, o->stderr_path,
			 O_WRONLY | O_CREAT | O_TRUNC);
	apply_env(o->env);
	if (o->fsize_limit > 0) {
		struct rlimit rl = {(rlim_t)o->fsize_limit,
				    (rlim_t)o->fsize_limit};

		/* write() then fails with EFBIG instead of killing */
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	if (o->user) {
		/* a change of credentials clears the parent-death signal */
		if (setgroups(0, NULL) < 0 || setgid(o->user->pw_gid) < 0 ||
		    setuid(o->user->pw_uid) < 0 ||
		    prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
	}
	if (o->dir && chdir(o->dir) < 0)
		_exit(126);
	execvp(o->argv[0], (char *const *)o->argv);
	fprintf(stderr, "cannot run %s: %s\n", o->argv[0], strerror(errno));
	_exit(127);
}

int spec_exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int spec_wait(pid_t pid, int timeout_ms, int *raw)
{
	int64_t end = spec_now_ms() + timeout_ms;
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid) {
			if (raw)
				*raw = st;
			return spec_exit_code(st);
		}
		if (w < 0 && errno != EINTR)
			return -2;
		if (spec_now_ms() > end)
			return -1;
		spec_sleep_ms(5);
	}
}

int spec_stop(pid_t pid, int sig, int timeout_ms)
{
	int st;

	kill(pid, sig);
	if (spec_wait(pid, timeout_ms, &st) >= 0)
		return st;
	spec_kill(pid);
	return -1;
}

void spec_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* Append what `fd` has to *buf; clears *open_ at EOF. */
static void drain(int fd, char **buf, size_t *len, size_t *cap, int *open_)
{
	char tmp[65536];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n < 0 && errno == EINTR)
		return;
	if (n <= 0) {
		*open_ = 0;
		return;
	}
	if (*len + (size_t)n + 1 > *cap) {
		*cap = (*len + (size_t)n + 1) * 2;
		*buf = realloc(*buf, *cap);
	}
	memcpy(*buf + *len, tmp, (size_t)n);
	*len += (size_t)n;
	(*buf)[*len] = '\0';
}

/* Open a pseudo-terminal: the master (close-on-exec) in fds[0], the
 * slave in fds[1]; -1 when it cannot. */
static int open_pty(int fds[2])
{
	const char *name;
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (master < 0)
		return -1;
	if (grantpt(master) < 0 || unlockpt(master) < 0 ||
	    !(name = ptsname(master)) ||
	    (fds[1] = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		close(master);
		return -1;
	}
	fds[0] = master;
	return 0;
}

int spec_run_spawn(const struct spec_spawn *how, const char *input,
		   int stderr_tty, int timeout_ms, struct spec_run *r)
{
	int po[2], pe[2], pi[2] = {-1, -1}, oo = 1, eo = 1, st = 0;
	size_t co = 64, ce = 64, inlen = input ? strlen(input) : 0, inoff = 0;
	int64_t start = spec_now_ms(), end = start + timeout_ms;
	int killed = 0;
	struct spec_spawn o = *how;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->out = calloc(1, co);
	r->err = calloc(1, ce);
	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if ((stderr_tty ? open_pty(pe) : pipe2(pe, O_CLOEXEC)) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	if (!o.stdin_path && pipe2(pi, O_CLOEXEC) < 0) {
		for (int i = 0; i < 2; i++) {
			close(po[i]);
			close(pe[i]);
		}
		return -1;
	}
	if (pi[0] >= 0)
		o.stdin_fd = pi[0];
	o.stdout_fd = po[1];
	o.stderr_fd = pe[1];
	pid = spec_spawn(&o);
	if (pi[0] >= 0)
		close(pi[0]);
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		if (pi[1] >= 0)
			close(pi[1]);
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	if (pi[1] >= 0 && inlen == 0) {
		close(pi[1]);
		pi[1] = -1;
	} else if (pi[1] >= 0) {
		fcntl(pi[1], F_SETFL, O_NONBLOCK);
	}
	signal(SIGPIPE, SIG_IGN);
	/* a terminal's master reads EIO once the last slave is closed: the
	 * end of what the program drew */
	while (oo || eo) {
		struct pollfd p[3];
		int n = 0, left = (int)(end - spec_now_ms());

		if (left <= 0) {
			kill(pid, SIGKILL);
			killed = 1;
			break;
		}
		if (oo)
			p[n++] = (struct pollfd){po[0], POLLIN, 0};
		if (eo)
			p[n++] = (struct pollfd){pe[0], POLLIN, 0};
		if (pi[1] >= 0)
			p[n++] = (struct pollfd){pi[1], POLLOUT, 0};
		if (poll(p, (nfds_t)n, left) <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (!p[i].revents)
				continue;
			if (p[i].fd == po[0]) {
				drain(po[0], &r->out, &r->out_len, &co, &oo);
			} else if (p[i].fd == pe[0]) {
				drain(pe[0], &r->err, &r->err_len, &ce, &eo);
			} else {
				ssize_t w =
				    write(pi[1], input + inoff, inlen - inoff);

				if (w > 0)
					inoff += (size_t)w;
				if (w <= 0 || inoff == inlen) {
					close(pi[1]);
					pi[1] = -1;
				}
			}
		}
	}
	if (pi[1] >= 0)
		close(pi[1]);
	close(po[0]);
	close(pe[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r->seconds = (double)(spec_now_ms() - start) / 1000.0;
	r->status = killed ? -1 : spec_exit_code(st);
	return 0;
}

int spec_run(const char *const *argv, const char *const *env, const char *input,
	     int timeout_ms, struct spec_run *r)
{
	struct spec_spawn o = {.argv = argv, .env = env};

	return spec_run_spawn(&o, input, 0, timeout_ms, r);
}

void spec_run_free(struct spec_run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

char *spec_run_stdout(const char *const *argv, const char *const *env,
		      int timeout_ms)
{
	struct spec_run r;
	char *out;

	ck_assert_msg(spec_run(argv, env, NULL, timeout_ms, &r) == 0,
		      "cannot start %s", argv[0]);
	ck_assert_msg(r.status == 0, "%s exited %d: %s%s", argv[0], r.status,
		      r.out, r.err);
	out = r.out;
	r.out = NULL;
	spec_run_free(&r);
	return out;
}
