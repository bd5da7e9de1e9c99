/*
 * dump.c - the dump driver and its thread.
 *
 * A dump request is resolved against the dump directory, written to a
 * temporary file (O_EXCL, mode 0600) in the target's directory, fsync'd,
 * and then given its name with renameat2(RENAME_NOREPLACE) (or link(),
 * where the file system lacks it), so that an existing file is never
 * replaced.  On any failure the temporary file is removed.  With
 * config.dump.fork the heap is walked in a forked child of the VM (the
 * file is opened before the fork); otherwise inside host->run_stopped.
 * A dump is a long job (job.c): it runs on a thread of its own, so the
 * loop keeps answering, and its result goes back through the job
 * registry; this file never sees a connection.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent-internal.h"
#include "vmheap_files.h"

/* Temporary dump files: TMP_PREFIX "<pid>-<start ticks>.<random>.tmp". */
#define TMP_PREFIX ".vmheap-dump."

/* What a forked child reports over its pipe. */
struct child_report {
	int code;
	uint64_t objects, bytes;
	long long minor_faults; /* the child's own (fork_cost.c), or -1 */
	char message[400];
};

struct walk {
	struct vmheap_agent *a;
	int fd;
	agent_walk_body_fn body; /* NULL: write a dump into fd */
	void *body_arg;
	uint32_t flags;
	int code;
	uint64_t objects, bytes;
	char message[400];
};

/* snprintf for messages that may be cut short (without the warning). */
static void msgf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void msgf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

double agent_seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int is_nospace(int e)
{
	return e == ENOSPC || e == EFBIG || e == EDQUOT;
}

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
	struct agent_native_snap *native = agent_native_snapshot();
	struct vmheap_process_memory memory;
	int rc;

	opt.native = native != NULL;
	if (agent_process_memory(w->a->pid, &memory) == 0)
		opt.memory = &memory;
	agent_writer_options(w->a, &opt);
	opt.flags = w->flags;
	rc = vmheap_writer_open(&wr, w->fd, &opt);
	if (rc == 0) {
		rc = h->walk_heap(h->ctx, wr);
		if (rc < 0 && vmheap_writer_error(wr)[0] == '\0') {
			w->code = VMHEAP_AGENT_EDUMP;
			msgf(w->message, sizeof(w->message),
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
		msgf(w->message, sizeof(w->message), "%s",
		     wr && vmheap_writer_error(wr)[0] ? vmheap_writer_error(wr)
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
	rc = w->body(w->a, w->fd, w->body_arg, w->message,
		     sizeof(w->message));
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
	close(fc->pipe[0]);
	/* the child never outlives its VM nor config.dump.timeout */
	agent_child_guard(fc->parent, fc->pipe[1],
			  atomic_load(&w->a->dump_timeout_s));
	memset(&rep, 0, sizeof(rep));
	if (h->prepare_child && h->prepare_child(h->ctx, fc->gc) < 0) {
		w->code = VMHEAP_AGENT_EDUMP;
		msgf(w->message, sizeof(w->message),
		     "the VM could not prepare the forked child%s",
		     fc->gc ? " (its GC failed)" : "");
	} else {
		walk_body(w);
	}
	if (w->code == 0 && fsync(w->fd) < 0) {
		w->code =
		    is_nospace(errno) ? VMHEAP_ENOSPC : VMHEAP_AGENT_EDUMP;
		msgf(w->message, sizeof(w->message), "fsync: %s",
		     strerror(errno));
	}
	rep.code = w->code;
	rep.objects = w->objects;
	rep.bytes = w->bytes;
	rep.minor_faults = agent_minor_faults(0);
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
		int left = timeout_s * 1000 -
			   (int)(agent_seconds_since(&t0) * 1000);

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
		msgf(w->message, sizeof(w->message), "pipe: %s",
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
		msgf(w->message, sizeof(w->message),
		     "cannot fork the VM for the dump: %s", strerror(errno));
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
	if (timed_out) {
		msgf(rep.message, sizeof(rep.message),
		     "the dump child (pid %d) took longer than "
		     "config.dump.timeout (%d s) and was killed",
		     (int)pid, timeout_s);
	} else if (WIFSIGNALED(status)) {
		rep.code = WTERMSIG(status) == SIGXFSZ ? VMHEAP_ENOSPC
						       : VMHEAP_AGENT_EDUMP;
		msgf(rep.message, sizeof(rep.message),
		     "the dump child (pid %d) was killed by signal %d (%s)",
		     (int)pid, WTERMSIG(status), strsignal(WTERMSIG(status)));
	} else if (!reported) {
		msgf(rep.message, sizeof(rep.message),
		     "the dump child (pid %d) exited with status %d without "
		     "reporting",
		     (int)pid, WEXITSTATUS(status));
	} else if (rep.code == 0 && WEXITSTATUS(status) != 0) {
		rep.code = VMHEAP_AGENT_EDUMP;
		msgf(rep.message, sizeof(rep.message),
		     "the dump child (pid %d) exited with status %d", (int)pid,
		     WEXITSTATUS(status));
	}
	if (rep.code == 0 && !timed_out)
		agent_fork_record(w->a, gc, seconds, rss, rep.minor_faults,
				  f0 < 0 || f1 < f0 ? -1 : f1 - f0);
	w->code = rep.code;
	w->objects = rep.objects;
	w->bytes = rep.bytes;
	memcpy(w->message, rep.message, sizeof(w->message));
	w->message[sizeof(w->message) - 1] = '\0';
}

static int fork_memory_refused(struct vmheap_agent *a, int gc,
			       struct agent_dump_result *res);

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
		if (fork_memory_refused(a, gc, res)) {
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

/* Open the directory that will hold the dump; *name is the last part.
 * Components are opened one by one without following symbolic links. */
static int open_target_dir(struct vmheap_agent *a, char *dump_dir,
			   char *where, size_t dirlen, const char *path,
			   char *rel, size_t rellen, const char **name,
			   struct agent_dump_result *res)
{
	size_t dl;
	char *comp, *next;
	int dfd;

	/* this dump's directory, held open since it was set: a later `set
	 * config.dump.dir` does not move a dump that has started, and a
	 * directory swapped for a symbolic link is not followed */
	dfd = agent_dump_dir_open(a, dump_dir, where, dirlen);
	if (dfd < 0)
		goto sys;
	dl = strlen(dump_dir);

	if (path[0] == '/') {
		if (dl == 1) {
			path++;
		} else if (!strncmp(path, dump_dir, dl) && path[dl] == '/') {
			path += dl + 1;
		} else {
			close(dfd);
			res->code = VMHEAP_AGENT_EPATH;
			msgf(res->message, sizeof(res->message),
			     "path %s is outside the dump directory %s", path,
			     dump_dir);
			return -1;
		}
	}
	if (strlen(path) >= rellen) {
		close(dfd);
		res->code = VMHEAP_AGENT_EPATH;
		msgf(res->message, sizeof(res->message), "path too long");
		return -1;
	}
	strcpy(rel, path);
	/* refuse any ".." before touching the file system */
	for (comp = rel; comp; comp = next) {
		next = strchr(comp, '/');
		if ((next ? (size_t)(next - comp) : strlen(comp)) == 2 &&
		    !strncmp(comp, "..", 2)) {
			close(dfd);
			res->code = VMHEAP_AGENT_EPATH;
			msgf(res->message, sizeof(res->message),
			     "path %s contains \"..\"; dumps stay inside the "
			     "dump directory %s",
			     path, dump_dir);
			return -1;
		}
		if (next)
			next++;
	}
	if (strlen(rel) > 1 && rel[strlen(rel) - 1] == '/') {
		close(dfd);
		res->code = VMHEAP_AGENT_EPATH;
		msgf(res->message, sizeof(res->message),
		     "path %s names a directory, not a file", path);
		return -1;
	}
	comp = rel;
	for (;;) {
		int nfd;

		while (*comp == '/')
			comp++;
		next = strchr(comp, '/');
		if (!next)
			break;
		*next = '\0';
		if (!*comp || !strcmp(comp, ".")) {
			*next = '/';
			comp = next + 1;
			continue;
		}
		nfd = openat(dfd, comp,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			int e = errno;
			*next = '/';
			close(dfd);
			res->code = VMHEAP_AGENT_EPATH;
			msgf(res->message, sizeof(res->message),
			     "cannot use directory %.*s of %s: %s%s",
			     (int)(next - rel), rel, path, strerror(e),
			     e == ELOOP || e == ENOTDIR
				 ? " (symbolic links are not followed)"
				 : "");
			return -1;
		}
		close(dfd);
		dfd = nfd;
		*next = '/';
		comp = next + 1;
	}
	if (!*comp || !strcmp(comp, ".")) {
		close(dfd);
		res->code = VMHEAP_AGENT_EPATH;
		msgf(res->message, sizeof(res->message),
		     "path %s names a directory, not a file", path);
		return -1;
	}
	*name = comp;
	return dfd;
sys:
	res->code = VMHEAP_AGENT_ESYS;
	msgf(res->message, sizeof(res->message),
	     "cannot open the dump directory %s: %s", dump_dir,
	     strerror(errno));
	return -1;
}

/*
 * Is the writer named by a temporary file's name gone?  The name is
 * TMP_PREFIX "<pid>-<start ticks>.<random>.tmp"; the writer is gone when
 * no process has that pid, or the one that has it started at another
 * time (the pid was reused).  Names of another form are never judged.
 */
/* Digits at *p as a number (at most 18 of them); advances *p. */
static int take_digits(const char **p, long long *out)
{
	int n = 0;

	*out = 0;
	while (**p >= '0' && **p <= '9' && n < 18) {
		*out = *out * 10 + (**p - '0');
		(*p)++;
		n++;
	}
	return n > 0 && !(**p >= '0' && **p <= '9') ? 0 : -1;
}

int agent_tmp_writer_gone(const char *name)
{
	long long pid, start, now;
	const char *p = name;

	if (strncmp(p, TMP_PREFIX, strlen(TMP_PREFIX)) != 0)
		return 0;
	p += strlen(TMP_PREFIX);
	if (take_digits(&p, &pid) < 0 || *p++ != '-' ||
	    take_digits(&p, &start) < 0 || *p++ != '.' ||
	    strspn(p, "0123456789abcdef") == 0)
		return 0;
	p += strspn(p, "0123456789abcdef");
	if (strcmp(p, ".tmp") != 0 || pid <= 0 || pid > INT_MAX)
		return 0;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 1;
	now = agent_proc_start_ticks((pid_t)pid);
	return now >= 0 && now != start;
}

void agent_dump_sweep(struct vmheap_agent *a, int dfd)
{
	uint64_t files = 0, bytes = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd = dup(dfd);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!agent_tmp_writer_gone(de->d_name))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0) {
			files++;
			bytes += (uint64_t)st.st_size;
		}
	}
	closedir(d);
	pthread_mutex_lock(&a->lock);
	a->swept_files += files;
	a->swept_bytes += bytes;
	pthread_mutex_unlock(&a->lock);
}

/* A "Name:   N kB" figure of /proc/meminfo in bytes, or -1. */
static long long meminfo_bytes(const char *name)
{
	char line[256];
	long long kb = -1;
	size_t nl = strlen(name);
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, nl) && line[nl] == ':') {
			kb = strtoll(line + nl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

long long agent_fork_min_free(struct vmheap_agent *a)
{
	long long set = atomic_load(&a->fork_min_free), rss;

	if (set >= 0)
		return set;
	rss = agent_rss_bytes();
	return rss < 0 ? 0 : rss / 100 * AGENT_FORK_RSS_PERCENT;
}

long long agent_mem_available(void)
{
	const char *fake = getenv("VMHEAP_AGENT_TEST_MEM_AVAILABLE");
	char *end;
	long long v;

	if (fake && *fake) {
		errno = 0;
		v = strtoll(fake, &end, 10);
		if (!errno && !*end && v >= 0)
			return v;
	}
	return meminfo_bytes("MemAvailable");
}

static double mib(long long bytes)
{
	return (double)bytes / 1048576.0;
}

/*
 * The fork-mode memory guard: 1 (with res filled) when MemAvailable is
 * below what the dump would copy.  With config.dump.fork_min_free set,
 * that is its value.  In auto, it is at most the RSS: with MemAvailable
 * at or above the RSS the dump goes ahead; below, the estimate from the
 * VM's write rate decides (fork_cost.c).
 */
static int fork_memory_refused(struct vmheap_agent *a, int gc,
			       struct agent_dump_result *res)
{
	long long set = atomic_load(&a->fork_min_free);
	long long need = agent_fork_min_free(a), avail;
	struct agent_fork_estimate e;
	struct agent_mem_limit m;
	char how[300], what[PATH_MAX + 300];

	if (need <= 0 || agent_mem_limit(&m) < 0 || m.available >= need)
		return 0;
	avail = m.available;
	if (set >= 0) {
		snprintf(how, sizeof(how), "as config.dump.fork_min_free says");
	} else if (agent_fork_estimate(a, gc, &e) < 0) {
		snprintf(how, sizeof(how),
			 "%d%% of the VM's RSS, what a forked child's "
			 "copy-on-write pages can reach (the write rate could "
			 "not be measured: %s)",
			 AGENT_FORK_RSS_PERCENT, strerror(errno));
	} else {
		if (avail >= e.need)
			return 0;
		need = e.need;
		snprintf(how, sizeof(how),
			 "what the dump is expected to copy: the VM writes "
			 "%.1f MiB/s, for %.2f s%s, plus the child's own "
			 "%.1f MiB%s; at most the RSS, %.1f MiB",
			 mib((long long)e.write_rate), e.seconds,
			 e.seconds_measured ? " (the last fork dump's time)"
					    : "",
			 mib(e.child_bytes),
			 e.child_measured ? " (measured in the last fork dump)"
					  : " (none measured yet: the RSS)",
			 mib(e.rss));
	}
	if (m.cg_limit >= 0)
		msgf(what, sizeof(what),
		     "the memory the %s %s leaves is %lld bytes (%.1f MiB: "
		     "limit %.1f MiB, usage %.1f MiB of which %.1f MiB "
		     "reclaimable page cache; MemAvailable %.1f MiB)",
		     m.source, m.cgroup, avail, mib(avail), mib(m.cg_limit),
		     mib(m.cg_usage), mib(m.cg_inactive_file),
		     mib(m.mem_available));
	else
		msgf(what, sizeof(what), "MemAvailable is %lld bytes (%.1f MiB)",
		     avail, mib(avail));
	res->code = VMHEAP_AGENT_EDUMP;
	msgf(res->message, sizeof(res->message),
	     "refusing a fork dump: %s, below the threshold of %lld bytes "
	     "(%.1f MiB, %s); free memory, set config.dump.fork false for an "
	     "in-process dump, or set config.dump.fork_min_free 0 to fork "
	     "anyway",
	     what, need, mib(need), how);
	return 1;
}

void agent_dump_run(struct vmheap_agent *a, const char *path,
		    struct agent_dump_result *res)
{
	char rel[PATH_MAX], dump_dir[PATH_MAX], where[PATH_MAX], tmp[96];
	char rnd[33];
	struct timespec t0;
	struct stat st;
	const char *name = NULL;
	struct walk w;
	int dfd, fd = -1, e;

	memset(res, 0, sizeof(*res));
	tmp[0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	dfd = open_target_dir(a, dump_dir, where, sizeof(dump_dir), path, rel,
			      sizeof(rel), &name, res);
	if (dfd < 0)
		return;
	{
		/* the reply names the file plainly (no "." or "//" parts)
		 * where it is: in the directory held open */
		size_t o = strlen(where);
		const char *p = rel;

		memcpy(res->path, where, o + 1);
		while (*p) {
			size_t l = strcspn(p, "/");
			if (l && !(l == 1 && *p == '.') &&
			    o + l + 2 < sizeof(res->path)) {
				if (o && res->path[o - 1] != '/')
					res->path[o++] = '/';
				memcpy(res->path + o, p, l);
				o += l;
				res->path[o] = '\0';
			}
			p += l;
			while (*p == '/')
				p++;
		}
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		res->code = VMHEAP_AGENT_EEXIST;
		msgf(res->message, sizeof(res->message),
		     "%s already exists; a dump never overwrites a file",
		     res->path);
		goto out;
	}
	res->forked = atomic_load(&a->dump_fork) && a->host->fork_stopped;
	if (res->forked &&
	    fork_memory_refused(
		a, atomic_load(&a->dump_gc) && a->host->prepare_child, res))
		goto out;
	/* stale temporary files of dead writers go first (this dump's
	 * directory; the reply counts them with those found at start) */
	agent_dump_sweep(a, dfd);
	if (agent_token_new(rnd, NULL, 0) < 0)
		snprintf(rnd, sizeof(rnd), "%d", (int)getpid());
	/* the writer's pid and start time are in the name: a later agent
	 * removes the file once that process is gone (kill -9, OOM) */
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%d-%lld.%.16s.tmp",
		 (int)getpid(), agent_proc_start_ticks(getpid()), rnd);
	fd = vmheap_file_create(dfd, tmp, 0600);
	if (fd < 0) {
		e = errno;
		res->code = is_nospace(e) ? VMHEAP_ENOSPC : VMHEAP_AGENT_ESYS;
		msgf(res->message, sizeof(res->message),
		     "cannot create a file in the directory of %s: %s",
		     res->path, strerror(e));
		goto out;
	}

	memset(&w, 0, sizeof(w));
	w.a = a;
	w.fd = fd;
	res->gc =
	    res->forked && atomic_load(&a->dump_gc) && a->host->prepare_child;
	w.flags = (res->forked ? VMHEAP_FLAG_FORKED : 0) |
		  (res->gc ? VMHEAP_FLAG_LIVE_ONLY : 0);
	if (res->forked)
		walk_forked(&w, res->gc);
	else
		a->host->run_stopped(a->host->ctx, walk_into_file, &w);
	if (w.code == 0 && fsync(fd) < 0) {
		w.code = is_nospace(errno) ? VMHEAP_ENOSPC : VMHEAP_AGENT_ESYS;
		snprintf(w.message, sizeof(w.message), "fsync: %s",
			 strerror(errno));
	}
	if (w.code < 0) {
		res->code = w.code;
		msgf(res->message, sizeof(res->message),
		     "dump to %s failed, nothing was written: %s", res->path,
		     w.message);
		goto out;
	}
	res->objects = w.objects;
	res->bytes = w.bytes;
	if (fstat(fd, &st) == 0)
		res->file_bytes = (uint64_t)st.st_size;
	e = close(fd);
	fd = -1;
	if (e < 0 ||
	    vmheap_file_publish(dfd, tmp, name, VMHEAP_PUBLISH_NOREPLACE) < 0) {
		e = errno;
		res->code =
		    e == EEXIST ? VMHEAP_AGENT_EEXIST : VMHEAP_AGENT_ESYS;
		msgf(res->message, sizeof(res->message),
		     e == EEXIST
			 ? "%s appeared during the dump; it was not overwritten"
			 : "cannot name the dump %s: %s",
		     res->path, strerror(e));
		goto out;
	}
	tmp[0] = '\0'; /* published */
	fsync(dfd);
	res->seconds = agent_seconds_since(&t0);
	/* the reply tells of the stale files removed since the last one */
	pthread_mutex_lock(&a->lock);
	res->removed_tmp_files = a->swept_files;
	res->removed_tmp_bytes = a->swept_bytes;
	a->swept_files = a->swept_bytes = 0;
	pthread_mutex_unlock(&a->lock);
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0] && name && res->code < 0)
		unlinkat(dfd, tmp, 0);
	close(dfd);
}

/* ------------------------------------------------------------ the job */

void agent_pack_dump_result(msgpack_packer *pk,
			    const struct agent_dump_result *r)
{
	msgpack_pack_map(pk, 7 + (r->removed_tmp_files > 0));
	frame_pack_str(pk, "path");
	frame_pack_str(pk, r->path);
	frame_pack_str(pk, "objects");
	msgpack_pack_uint64(pk, r->objects);
	frame_pack_str(pk, "bytes");
	msgpack_pack_uint64(pk, r->bytes);
	frame_pack_str(pk, "file_bytes");
	msgpack_pack_uint64(pk, r->file_bytes);
	frame_pack_str(pk, "seconds");
	msgpack_pack_double(pk, r->seconds);
	frame_pack_str(pk, "forked");
	if (r->forked)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	frame_pack_str(pk, "live_only");
	if (r->gc)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	if (r->removed_tmp_files > 0) {
		frame_pack_str(pk, "removed_tmp");
		msgpack_pack_map(pk, 2);
		frame_pack_str(pk, "files");
		msgpack_pack_uint64(pk, r->removed_tmp_files);
		frame_pack_str(pk, "bytes");
		msgpack_pack_uint64(pk, r->removed_tmp_bytes);
	}
}

/* What a dump job is given (copied by the registry). */
struct dump_job {
	struct vmheap_agent *a;
	char path[PATH_MAX];
};

/* The dump job's body, on the job's thread. */
static int dump_job_run(void *arg, msgpack_packer *value, char *err,
			size_t errlen)
{
	struct dump_job *job = arg;
	struct vmheap_agent *a = job->a;
	struct agent_dump_result res;

	agent_dump_run(a, job->path, &res);
	if (res.code < 0) {
		snprintf(err, errlen, "%s", res.message);
		return res.code;
	}
	/* before the job ends: a client told of the dump sees it */
	pthread_mutex_lock(&a->lock);
	a->last = res;
	a->has_last = 1;
	pthread_mutex_unlock(&a->lock);
	agent_pack_dump_result(value, &res);
	return 0;
}

int agent_dump_start(struct vmheap_agent *a, const char *path, uint64_t *job,
		     char *err, size_t errlen)
{
	struct dump_job *dj = calloc(1, sizeof(*dj));
	int rc;

	if (!dj)
		return agent_fail(err, errlen, VMHEAP_ENOMEM, "out of memory");
	dj->a = a;
	snprintf(dj->path, sizeof(dj->path), "%s", path);
	rc = agent_job_start(a->jobs, "dump", dump_job_run, dj, sizeof(*dj),
			     job);
	free(dj);
	if (rc == VMHEAP_AGENT_EBUSY)
		return agent_fail(
		    err, errlen, VMHEAP_AGENT_EBUSY,
		    "a dump is already running; try again when it ends");
	if (rc < 0)
		return agent_fail(err, errlen, rc, "cannot start the dump: %s",
				  vmheap_agent_strerror(rc));
	return AGENT_PENDING;
}

int agent_dump_running(struct vmheap_agent *a)
{
	return agent_job_running(a->jobs, "dump");
}

void agent_dump_dir(struct vmheap_agent *a, char *buf, size_t len)
{
	pthread_mutex_lock(&a->lock);
	snprintf(buf, len, "%s", a->dump_dir);
	pthread_mutex_unlock(&a->lock);
}

int agent_dump_last(struct vmheap_agent *a, struct agent_dump_result *out)
{
	int has;

	pthread_mutex_lock(&a->lock);
	has = a->has_last;
	if (has)
		*out = a->last;
	pthread_mutex_unlock(&a->lock);
	return has;
}
