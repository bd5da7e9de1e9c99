/*
 * child_guard.c - a forked dump child dies with its VM and within
 * config.dump.timeout (agent-internal.h, agent_child_guard).
 *
 * After a SIGKILL of the VM mid-dump the child used to run on (hundreds
 * of MB of copied pages) and, when stopped, stay forever.  Two guards:
 * the kernel's parent-death signal (SIGKILL, which also ends a stopped
 * process), and a thread of the child that watches its parent, for the
 * cases the signal misses (the VM died before prctl; a thread other than
 * the forking one).  One window stays open: a child stopped (SIGSTOP)
 * before it reaches prctl, microseconds after the fork, has neither
 * guard, since Linux lets no parent set the signal for its child.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "agent-internal.h"

struct guard {
	pid_t parent;
	int report_fd;
	int timeout_s;
	struct timespec t0;
};

static struct guard the_guard; /* the child's only one */

/* Is the VM gone: another parent (we were reparented), or nobody left
 * to read the report pipe? */
static int parent_gone(const struct guard *g)
{
	struct pollfd pfd = {.fd = g->report_fd, .events = 0};

	if (getppid() != g->parent)
		return 1;
	/* a pipe's write end polls POLLERR once no read end is open */
	return g->report_fd >= 0 && poll(&pfd, 1, 0) > 0 &&
	       (pfd.revents & (POLLERR | POLLHUP | POLLNVAL));
}

static void *guard_main(void *arg)
{
	const struct guard *g = arg;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	agent_native_own_thread();
	for (;;) {
		struct timespec nap = {0, AGENT_CHILD_GUARD_MS * 1000000L};

		if (parent_gone(g))
			_exit(AGENT_CHILD_EXIT_ORPHAN);
		if (g->timeout_s > 0 &&
		    agent_seconds_since(&g->t0) > (double)g->timeout_s + 1.0)
			_exit(AGENT_CHILD_EXIT_TIMEOUT);
		while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
			;
	}
	return NULL;
}

void agent_child_guard(pid_t parent, int report_fd, int timeout_s)
{
	pthread_attr_t attr;
	pthread_t t;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) /* the VM died before prctl */
		_exit(AGENT_CHILD_EXIT_ORPHAN);
	the_guard.parent = parent;
	the_guard.report_fd = report_fd;
	the_guard.timeout_s = timeout_s;
	clock_gettime(CLOCK_MONOTONIC, &the_guard.t0);
	if (pthread_attr_init(&attr) != 0)
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_create(&t, &attr, guard_main, &the_guard);
	pthread_attr_destroy(&attr);
}
