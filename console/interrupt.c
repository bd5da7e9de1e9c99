/*
 * interrupt.c - Ctrl-C while a dump runs.  The dump goes on in the VM
 * whatever the console does, so the first Ctrl-C does not leave quietly:
 * it says so, says where the file will be, and the console keeps waiting
 * for the reply.  A second Ctrl-C quits (killed by SIGINT: status 130).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "console-internal.h"

/* Written by the handler, so made before the dump starts. */
static char notice[1200];
static size_t notice_len;

static void on_sigint(int sig)
{
	struct sigaction dfl;
	ssize_t n;

	(void)sig;
	n = write(STDERR_FILENO, notice, notice_len);
	(void)n;
	/* the next Ctrl-C ends the console as usual */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGINT, &dfl, NULL);
}

void console_dump_interrupt_begin(struct console_dump_guard *g, pid_t pid,
				  const char *path)
{
	struct sigaction sa;
	int len;

	len =
	    snprintf(notice, sizeof(notice),
		     "\nvmheap-console: the dump goes on in the VM (pid %ld); "
		     "its file will be %s.  Waiting for it; Ctrl-C again "
		     "quits without waiting.\n",
		     (long)pid, path);
	notice_len = len < 0			    ? 0
		     : (size_t)len < sizeof(notice) ? (size_t)len
						    : sizeof(notice) - 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sa.sa_flags = SA_RESTART; /* the client goes on waiting */
	sigemptyset(&sa.sa_mask);
	g->active = sigaction(SIGINT, &sa, &g->old) == 0;
}

void console_dump_interrupt_end(struct console_dump_guard *g)
{
	if (g->active)
		sigaction(SIGINT, &g->old, NULL);
	g->active = 0;
}
