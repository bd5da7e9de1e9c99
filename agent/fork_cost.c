/*
 * fork_cost.c - what a fork-mode dump will cost in memory, from the VM's
 * write rate (the memory guard of config.dump.fork_min_free "auto").
 *
 * After fork() every page of the VM is shared with the dump child until
 * one side writes it; then that page is copied (a copy-on-write fault).
 * The copies a dump needs are:
 *
 *   parent  the distinct pages the VM writes while the child lives: its
 *           write rate times the dump's duration (at most its RSS);
 *   child   the pages the child writes itself (a GC in the child, the
 *           writer's buffers).
 *
 * Both are counted as minor page faults (/proc/PID/stat field 10): each
 * copy-on-write copy is one, and so is each new page either side takes.
 *
 *   write rate  measured by a probe: a child is forked that only waits
 *               AGENT_FORK_PROBE_MS, and the VM's minor faults meanwhile
 *               are the pages it copied (the probe child writes nothing);
 *   duration    the last fork dump's, scaled by the RSS since; before any,
 *               the RSS at AGENT_FORK_PRIOR_BYTES_PER_S;
 *   child part  the last fork dump's child's faults (with the same
 *               config.dump.gc), scaled by the RSS since; before any, the
 *               whole RSS (the guard's old rule).
 *
 * need = min(RSS, child part + write rate x duration): a page is copied
 * once at most.  The write rate is extrapolated linearly over the
 * duration, an upper bound (pages written twice are copied once).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent-internal.h"

long long agent_minor_faults(pid_t pid)
{
	char path[64], buf[1024], *p;
	long long v = -1;
	ssize_t n;
	int fd;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* the command name may hold spaces and parentheses: fields are
	 * counted from the last ')' (field 3, the state, comes next) */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	p++; /* at the space before field 3 */
	for (int k = 3; k < 10 && p; k++)
		p = strchr(p + 1, ' ');
	if (p && sscanf(p, " %lld", &v) != 1)
		v = -1;
	return v;
}

long long agent_rss_bytes(void)
{
	long long size, resident;
	FILE *f = fopen("/proc/self/statm", "re");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%lld %lld", &size, &resident);
	fclose(f);
	return n == 2 ? resident * (long long)sysconf(_SC_PAGESIZE) : -1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The VM's write rate in bytes per second, measured by a probe child
 * (see the top), or -1 with errno set when it cannot fork. */
static double probe_write_rate(void)
{
	struct timespec ts = {0, AGENT_FORK_PROBE_MS * 1000000L};
	long long f0, f1;
	double t0, t1;
	pid_t pid, parent = getpid();
	int status;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* writes nothing; killed by the parent, or with it (a
		 * SIGKILL of the VM mid-probe), or by its own alarm */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(3);
		alarm(AGENT_FORK_PROBE_MS / 1000 + 10);
		for (;;)
			pause();
	}
	t0 = now_s();
	f0 = agent_minor_faults(0);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	f1 = agent_minor_faults(0);
	t1 = now_s();
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (f0 < 0 || f1 < f0 || t1 <= t0) {
		errno = EIO;
		return -1;
	}
	return (double)(f1 - f0) * (double)sysconf(_SC_PAGESIZE) / (t1 - t0);
}

void agent_fork_record(struct vmheap_agent *a, int gc, double seconds,
		       long long rss, long long child_faults,
		       long long parent_faults)
{
	long long page = sysconf(_SC_PAGESIZE);

	if (rss <= 0 || seconds <= 0 || child_faults < 0)
		return;
	pthread_mutex_lock(&a->lock);
	a->fork_cost.seconds = seconds;
	a->fork_cost.rss = rss;
	a->fork_cost.parent_bytes = parent_faults < 0 ? -1 : parent_faults * page;
	a->fork_cost.child_bytes[gc != 0] = child_faults * page;
	a->fork_cost.child_rss[gc != 0] = rss;
	a->fork_cost.dumps++;
	pthread_mutex_unlock(&a->lock);
}

int agent_fork_estimate(struct vmheap_agent *a, int gc,
			struct agent_fork_estimate *e)
{
	struct agent_fork_cost c;
	double scale, parent;

	memset(e, 0, sizeof(*e));
	e->rss = agent_rss_bytes();
	if (e->rss < 0)
		return -1;
	agent_mem_limit(&e->limit);
	if (e->limit.cg_limit >= 0 && e->limit.available < e->rss) {
		/* a cgroup's hard limit leaves less than the RSS: the
		 * probe's own copies could reach it, and its OOM killer
		 * takes the VM (a VM in a tight cgroup was killed by
		 * probes).  Not measured: the worst case, the whole RSS, is
		 * what is needed.  (Below the host's MemAvailable the probe
		 * runs: its estimate is what lets a fork dump go there.) */
		e->probe_skipped = 1;
		e->write_rate = 0;
	} else {
		e->write_rate = probe_write_rate();
		if (e->write_rate < 0)
			return -1;
	}
	pthread_mutex_lock(&a->lock);
	c = a->fork_cost;
	pthread_mutex_unlock(&a->lock);
	if (c.dumps > 0) {
		scale = (double)e->rss / (double)c.rss;
		e->seconds = c.seconds * (scale > 1.0 ? scale : 1.0);
		e->seconds_measured = 1;
	} else {
		e->seconds =
		    (double)e->rss / (double)AGENT_FORK_PRIOR_BYTES_PER_S;
	}
	if (c.child_rss[gc != 0] > 0) {
		scale = (double)e->rss / (double)c.child_rss[gc != 0];
		e->child_bytes =
		    (long long)((double)c.child_bytes[gc != 0] *
				(scale > 1.0 ? scale : 1.0));
		e->child_measured = 1;
	} else {
		e->child_bytes = e->rss;
	}
	e->parent_bytes = c.parent_bytes;
	parent = e->write_rate * e->seconds;
	e->need = e->child_bytes + (long long)parent;
	if (parent >= (double)e->rss || e->need > e->rss || e->probe_skipped)
		e->need = e->rss;
	return 0;
}
