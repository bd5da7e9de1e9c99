/*
 * proc.c - a process the test talks to through pipes: write to its
 * stdin, wait for text or lines on its stdout (see vmheap_spec.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "vmheap_spec.h"

void spec_proc_start(struct spec_proc *p, const struct spec_spawn *o,
		     int merge_stderr)
{
	struct spec_spawn sp = *o;
	int in[2], out[2];

	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	p->len = 0;
	p->buf[0] = '\0';
	sp.stdin_fd = in[0];
	sp.stdout_fd = out[1];
	if (merge_stderr)
		sp.stderr_fd = out[1];
	else if (!sp.stderr_path && sp.stderr_fd <= 0)
		sp.stderr_fd = 2; /* the test's own */
	p->pid = spec_spawn(&sp);
	ck_assert_int_ge(p->pid, 0);
	close(in[0]);
	close(out[1]);
	p->in = in[1];
	p->out = out[0];
	signal(SIGPIPE, SIG_IGN);
}

void spec_proc_write(struct spec_proc *p, const char *text)
{
	size_t len = strlen(text);

	ck_assert_int_eq(write(p->in, text, len), (ssize_t)len);
}

int spec_proc_read(struct spec_proc *p, int ms)
{
	struct pollfd pfd = {p->out, POLLIN, 0};
	ssize_t n;

	if (p->out < 0)
		return 0;
	if (poll(&pfd, 1, ms) <= 0)
		return 1;
	if (p->len + 1 >= sizeof(p->buf))
		return 1;
	n = read(p->out, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
	if (n < 0 && errno == EINTR)
		return 1;
	if (n <= 0)
		return 0;
	p->len += (size_t)n;
	p->buf[p->len] = '\0';
	return 1;
}

int spec_proc_wait_for(struct spec_proc *p, const char *text, int timeout_ms)
{
	int64_t deadline = spec_now_ms() + timeout_ms;

	while (!strstr(p->buf, text)) {
		if (spec_now_ms() > deadline || !spec_proc_read(p, 20))
			return strstr(p->buf, text) != NULL;
	}
	return 1;
}

int spec_proc_line(struct spec_proc *p, char *line, size_t size,
		   int timeout_ms)
{
	int64_t deadline = spec_now_ms() + timeout_ms;

	for (;;) {
		char *nl = memchr(p->buf, '\n', p->len);

		if (nl) {
			size_t k = (size_t)(nl - p->buf);

			if (k >= size)
				return -2;
			memcpy(line, p->buf, k);
			line[k] = '\0';
			memmove(p->buf, nl + 1, p->len - k); /* with the NUL */
			p->len -= k + 1;
			return 1;
		}
		if (spec_now_ms() > deadline)
			return -1;
		if (!spec_proc_read(p, 20))
			return 0;
	}
}

int spec_proc_wait_exit(struct spec_proc *p, int timeout_ms)
{
	int64_t deadline = spec_now_ms() + timeout_ms;
	int code;

	if (p->in >= 0)
		close(p->in);
	p->in = -1;
	for (;;) {
		spec_proc_read(p, 5);
		code = spec_wait(p->pid, 0, NULL);
		if (code >= 0) {
			/* drain what it wrote before it ended */
			for (int i = 0; i < 100 && spec_proc_read(p, 10); i++)
				;
			break;
		}
		if (spec_now_ms() > deadline) {
			spec_kill(p->pid);
			code = -1;
			break;
		}
	}
	close(p->out);
	p->out = -1;
	return code;
}
