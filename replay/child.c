/*
 * child.c - one replay: vmheap-replay-engine exec'ed with the allocator
 * in LD_PRELOAD (in place of any preload of ours), the program's memfd as
 * its descriptor 3, a pipe for its answer as 4, and our stderr as its
 * stdout too.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "replay-tool-internal.h"

extern char **environ;

/* environ without LD_PRELOAD, plus LD_PRELOAD=lib when lib is given. */
static char **child_env(const char *lib)
{
	size_t n = 0, k = 0;
	char **env, *pre = NULL;

	while (environ[n])
		n++;
	env = calloc(n + 2, sizeof *env);
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			env[k++] = environ[i];
	if (lib[0]) {
		size_t len = strlen(lib) + 12;

		pre = malloc(len);
		if (!pre) {
			free(env);
			return NULL;
		}
		snprintf(pre, len, "LD_PRELOAD=%s", lib);
		env[k++] = pre;
	}
	env[k] = NULL;
	return env;
}

static void free_env(char **env, const char *lib)
{
	size_t k = 0;

	if (!env)
		return;
	if (lib[0]) {
		while (env[k])
			k++;
		free(env[k - 1]);
	}
	free(env);
}

/* In the child: fds 3 and 4, then exec.  Never returns. */
static void exec_engine(const char *engine, int pfd, int wfd, int serial,
			int pages, char **env)
{
	char *argv[] = {(char *)"vmheap-replay-engine", (char *)"3",
			(char *)"4", (char *)(serial ? "1" : "recorded"),
			(char *)(pages ? "pages" : "first"), NULL};

	/* move both out of the way first, then into place */
	int p = fcntl(pfd, F_DUPFD_CLOEXEC, 10), w = fcntl(wfd, F_DUPFD_CLOEXEC, 10);

	/* what the allocator may print goes to stderr, never into the
	 * table on stdout */
	if (p < 0 || w < 0 || dup2(p, 3) < 0 || dup2(w, 4) < 0 ||
	    dup2(2, 1) < 0)
		_exit(127);
	execve(engine, argv, env);
	dprintf(2, "vmheap-replay: cannot run %s: %s\n", engine,
		strerror(errno));
	_exit(127);
}

static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got == len ? 0 : -1;
}

int rp_child_replay(const char *engine, int program_fd, int serial,
		    int pages, struct rp_row *row, char *err, size_t errsz)
{
	int pipefd[2], status = 0, got;
	char **env = child_env(row->lib);
	pid_t pid;

	if (!env || pipe2(pipefd, O_CLOEXEC) < 0) {
		free_env(env, row->lib);
		snprintf(err, errsz, "%s: cannot start the replay: %s",
			 row->name, strerror(errno));
		return RP_EIO;
	}
	pid = fork();
	if (pid == 0)
		exec_engine(engine, program_fd, pipefd[1], serial, pages, env);
	close(pipefd[1]);
	free_env(env, row->lib);
	if (pid < 0) {
		close(pipefd[0]);
		snprintf(err, errsz, "%s: cannot start the replay: %s",
			 row->name, strerror(errno));
		return RP_EIO;
	}
	got = read_all(pipefd[0], &row->r, sizeof row->r);
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		snprintf(err, errsz, "%s: the replay died of signal %d (%s)",
			 row->name, WTERMSIG(status), strsignal(WTERMSIG(status)));
		return RP_EIO;
	}
	if (got < 0 || row->r.magic != RP_RESULT_MAGIC) {
		snprintf(err, errsz,
			 "%s: the replay gave no answer (exit status %d)",
			 row->name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return RP_EIO;
	}
	row->r.malloc_from[sizeof row->r.malloc_from - 1] = 0;
	row->r.message[sizeof row->r.message - 1] = 0;
	return 0;
}
