/*
 * walk.c - the heap walks: a dump's walk into its file, and any other
 * body (agent_walk_with: the live histogram), run inside the VM's safe
 * point (host->run_stopped) or in a child forked there (host->fork_stopped).
 *
 * A forked child copies the walk's state to its own stack, arms its guard
 * (child_guard.c: it dies with its VM and at config.dump.timeout), walks,
 * fsyncs its fd and reports over a pipe; the VM waits for the report
 * after it runs again, kills a child that outlives config.dump.timeout,
 * and records what the fork cost (fork_cost.c).  A forked walk other than
 * a dump passes the fork guard first (fork_guard.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent-internal.h"

/* What a forked child reports over its pipe. */
struct child_report {
	int code;
	uint64_t objects, bytes;
	long long minor_faults; /* the child's own (fork_cost.c), or -1 */
	struct agent_scan_note scan;
	char message[400];
};

struct walk {
	struct vmheap_agent *a;
	int fd;
	agent_walk_body_fn body; /* NULL: write a dump into fd */
	void *body_arg;
	uint32_t flags;
	int forked; /* running in the forked child: the leak scan may run */
	int code;
	uint64_t objects, bytes;
	struct agent_scan_note scan; /* a dump's leak scan */
	char message[400];
};

void agent_writer_options(const struct vmheap_agent *a,
			  struct vmheap_writer_options *opt)
{
	const struct vmheap_agent_host *h = a->host;

	opt->vm_name = h->vm_name;
	opt->vm_version = h->vm_version;
	opt->pid = (uint64_t)a->pid; /* the VM, also in a forked child */
	opt->kind_names = h->kind_names;
	opt->kind_count = h->kind_count;
	/* The host's walk writes names and sites when it has them, and the
	 * writer refuses them unless told. */
	opt->edge_names = h->edge_names;
	opt->sites = h->sites;
}

/* Write the whole heap to w->fd; the body of run_stopped or the child. */
static int walk_into_file(void *arg)
{
	struct walk *w = arg;
	const struct vmheap_agent_host *h = w->a->host;
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *wr = NULL;
	struct agent_native_snap *native = agent_native_snapshot(w->forked);
	struct vmheap_process_memory memory;
	int rc;

	opt.native = native != NULL;
	agent_native_scan_note(native, &w->scan);
	if (agent_process_memory(w->a->pid, &memory) == 0)
		opt.memory = &memory;
	agent_writer_options(w->a, &opt);
	opt.flags = w->flags;
	rc = vmheap_writer_open(&wr, w->fd, &opt);
	if (rc == 0) {
		rc = h->walk_heap(h->ctx, wr);
		if (rc < 0 && vmheap_writer_error(wr)[0] == '\0') {
			w->code = VMHEAP_AGENT_EDUMP;
			agent_msgf(w->message, sizeof(w->message),
				   "the VM's heap walk failed: %s",
				   vmheap_agent_strerror(rc));
			vmheap_writer_free(wr);
			agent_native_snap_free(native);
			return rc;
		}
		if (rc == 0 && native)
			rc = agent_native_write(wr, native);
		if (rc == 0)
			rc = vmheap_writer_finish(wr);
	}
	if (rc < 0) {
		w->code =
		    rc == VMHEAP_ENOSPC ? VMHEAP_ENOSPC : VMHEAP_AGENT_EDUMP;
		agent_msgf(w->message, sizeof(w->message), "%s",
			   wr && vmheap_writer_error(wr)[0]
			       ? vmheap_writer_error(wr)
			       : vmheap_strerror(rc));
	} else {
		w->objects = vmheap_writer_objects(wr);
		w->bytes = vmheap_writer_object_bytes(wr);
	}
	vmheap_writer_free(wr);
	agent_native_snap_free(native);
	return rc;
}

ssize_t agent_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

struct fork_call {
	struct walk *w;
	int gc;
	int pipe[2];
	pid_t pid;
	pid_t parent; /* the VM, read before the fork */
	int err;
};

/* What the walk does: a dump into w->fd, or another body
 * (agent_walk_with). */
static int walk_body(void *arg)
{
	struct walk *w = arg;
	int rc;

	if (!w->body)
		return walk_into_file(w);
	rc = w->body(w->a, w->fd, w->body_arg, w->message, sizeof(w->message));
	if (rc < 0)
		w->code = rc;
	return rc;
}

/* The child's whole life: it runs on the thread that ran fn, alone. */
static void __attribute__((noreturn)) child_main(struct fork_call *parent_fc)
{
	/* *parent_fc and its walk live on the stack of the thread that ran
	 * walk_forked, which need not be this one (Ruby: fn runs on a Ruby
	 * thread).  That thread does not exist in the child, and glibc hands
	 * its stack to the next thread created here (a walk body may create
	 * one): copy both to this thread's stack first. */
	struct walk walk_copy = *parent_fc->w;
	struct fork_call call_copy = *parent_fc;
	struct fork_call *fc = &call_copy;
	struct walk *w = &walk_copy;
	const struct vmheap_agent_host *h = w->a->host;
	struct child_report rep;

	fc->w = w;
	w->forked = 1;
	close(fc->pipe[0]);
	/* the child never outlives its VM nor config.dump.timeout */
	agent_child_guard(fc->parent, fc->pipe[1],
			  atomic_load(&w->a->dump_timeout_s));
	memset(&rep, 0, sizeof(rep));
	if (h->prepare_child && h->prepare_child(h->ctx, fc->gc) < 0) {
		w->code = VMHEAP_AGENT_EDUMP;
		agent_msgf(w->message, sizeof(w->message),
			   "the VM could not prepare the forked child%s",
			   fc->gc ? " (its GC failed)" : "");
	} else {
		walk_body(w);
	}
	if (w->code == 0 && fsync(w->fd) < 0) {
		w->code = agent_is_nospace(errno) ? VMHEAP_ENOSPC
						  : VMHEAP_AGENT_EDUMP;
		agent_msgf(w->message, sizeof(w->message), "fsync: %s",
			   strerror(errno));
	}
	rep.code = w->code;
	rep.objects = w->objects;
	rep.bytes = w->bytes;
	rep.minor_faults = agent_minor_faults(0);
	rep.scan = w->scan;
	memcpy(rep.message, w->message, sizeof(rep.message));
	if (write(fc->pipe[1], &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		_exit(2);
	_exit(rep.code == 0 ? 0 : 1);
}

/* run_stopped's fn in fork mode: fork at the safe point and return. */
static int fork_fn(void *arg)
{
	struct fork_call *fc = arg;
	const struct vmheap_agent_host *h = fc->w->a->host;

	fc->parent = getpid();
	agent_native_before_fork(); /* for a leak scan in the child */
	fc->pid = h->fork_stopped(h->ctx);
	if (fc->pid == 0)
		child_main(fc);
	fc->err = errno;
	return fc->pid < 0 ? -1 : 0;
}

/* Wait up to timeout_s seconds for fd to be readable (or at EOF). */
static int wait_readable(int fd, int timeout_s)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	struct timespec t0;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int left =
		    timeout_s * 1000 - (int)(agent_seconds_since(&t0) * 1000);

		if (left <= 0)
			return 0;
		n = poll(&pfd, 1, left);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return 1; /* let read() report it */
	}
}

/* Walk in a forked child; fills w as if it had run here.  The child is
 * forked inside run_stopped; it is waited for after the VM runs again. */
static void walk_forked(struct walk *w, int gc)
{
	const struct vmheap_agent_host *h = w->a->host;
	struct fork_call fc = {.w = w, .gc = gc, .pid = -1};
	struct child_report rep;
	int p[2], status = 0, timed_out = 0, timeout_s, reported = 1;
	long long rss = agent_rss_bytes(), f0 = agent_minor_faults(0), f1;
	struct timespec t0;
	double seconds;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pipe2(fc.pipe, O_CLOEXEC) < 0) {
		w->code = VMHEAP_AGENT_ESYS;
		agent_msgf(w->message, sizeof(w->message), "pipe: %s",
			   strerror(errno));
		return;
	}
	p[0] = fc.pipe[0];
	p[1] = fc.pipe[1];
	fc.err = ENOSYS;
	h->run_stopped(h->ctx, fork_fn, &fc);
	pid = fc.pid;
	errno = fc.err;
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		w->code = VMHEAP_AGENT_ESYS;
		agent_msgf(w->message, sizeof(w->message),
			   "cannot fork the VM for the dump: %s",
			   strerror(errno));
		return;
	}
	timeout_s = atomic_load(&w->a->dump_timeout_s);
	if (!wait_readable(p[0], timeout_s)) {
		/* a child stuck in the VM's code: it must not hold the
		 * agent (and a later stop) forever */
		kill(pid, SIGKILL);
		timed_out = 1;
	}
	if (timed_out ||
	    agent_read_full(p[0], &rep, sizeof(rep)) != (ssize_t)sizeof(rep)) {
		memset(&rep, 0, sizeof(rep));
		rep.code = VMHEAP_AGENT_EDUMP;
		reported = 0;
	}
	seconds = agent_seconds_since(&t0);
	f1 = agent_minor_faults(0);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* the child's own guard ended it at the deadline: the same timeout */
	if (!reported && WIFEXITED(status) &&
	    WEXITSTATUS(status) == AGENT_CHILD_EXIT_TIMEOUT)
		timed_out = 1;
	if (timed_out) {
		agent_msgf(rep.message, sizeof(rep.message),
			   "the dump child (pid %d) took longer than "
			   "config.dump.timeout (%d s) and was killed",
			   (int)pid, timeout_s);
	} else if (WIFSIGNALED(status)) {
		rep.code = WTERMSIG(status) == SIGXFSZ ? VMHEAP_ENOSPC
						       : VMHEAP_AGENT_EDUMP;
		agent_msgf(
		    rep.message, sizeof(rep.message),
		    "the dump child (pid %d) was killed by signal %d (%s)",
		    (int)pid, WTERMSIG(status), strsignal(WTERMSIG(status)));
	} else if (!reported) {
		agent_msgf(
		    rep.message, sizeof(rep.message),
		    "the dump child (pid %d) exited with status %d without "
		    "reporting",
		    (int)pid, WEXITSTATUS(status));
	} else if (rep.code == 0 && WEXITSTATUS(status) != 0 &&
		   WEXITSTATUS(status) != AGENT_CHILD_EXIT_ORPHAN) {
		/* (a guard that saw the report pipe closed once its report
		 * was read here ended a child that had done its work) */
		rep.code = VMHEAP_AGENT_EDUMP;
		agent_msgf(rep.message, sizeof(rep.message),
			   "the dump child (pid %d) exited with status %d",
			   (int)pid, WEXITSTATUS(status));
	}
	if (rep.code == 0 && !timed_out)
		agent_fork_record(w->a, gc, seconds, rss, rep.minor_faults,
				  f0 < 0 || f1 < f0 ? -1 : f1 - f0);
	w->code = rep.code;
	w->objects = rep.objects;
	w->bytes = rep.bytes;
	w->scan = rep.code == 0 ? rep.scan : (struct agent_scan_note){0};
	memcpy(w->message, rep.message, sizeof(w->message));
	w->message[sizeof(w->message) - 1] = '\0';
}

int agent_walk_with(struct vmheap_agent *a, int fd, int forked, int gc,
		    agent_walk_body_fn body, void *arg, char *err,
		    size_t errlen)
{
	struct walk w;

	if (forked) { /* the fork guard of dumps: the child copies as much */
		struct agent_dump_result *res = calloc(1, sizeof(*res));

		if (!res)
			return agent_fail(err, errlen, VMHEAP_ENOMEM,
					  "out of memory");
		if (agent_fork_refused(a, gc, res)) {
			int code = res->code;

			snprintf(err, errlen, "%s", res->message);
			free(res);
			return code;
		}
		free(res);
	}
	memset(&w, 0, sizeof(w));
	w.a = a;
	w.fd = fd;
	w.body = body;
	w.body_arg = arg;
	if (forked)
		walk_forked(&w, gc);
	else
		a->host->run_stopped(a->host->ctx, walk_body, &w);
	if (w.code < 0)
		snprintf(err, errlen, "%s", w.message);
	return w.code < 0 ? w.code : 0;
}

int agent_walk_dump(struct vmheap_agent *a, int fd, int forked, int gc,
		    uint32_t flags, uint64_t *objects, uint64_t *bytes,
		    struct agent_scan_note *scan, char *err, size_t errlen)
{
	struct walk w;

	memset(&w, 0, sizeof(w));
	w.a = a;
	w.fd = fd;
	w.flags = flags;
	if (forked)
		walk_forked(&w, gc);
	else
		a->host->run_stopped(a->host->ctx, walk_into_file, &w);
	*objects = w.objects;
	*bytes = w.bytes;
	if (scan)
		*scan = w.scan;
	if (w.code < 0)
		snprintf(err, errlen, "%s", w.message);
	return w.code < 0 ? w.code : 0;
}
