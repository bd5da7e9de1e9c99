/*
 * attach.c - vmheap-console --attach PID: reuse the agent the process
 * runs, else load one into it (an MRI Ruby 3.1) and wait for its
 * discovery file.
 *
 * The discovery directory is the target's, as the agent it runs (or will
 * run) sees it: its VMHEAP_AGENT_TMPDIR, else TMPDIR, else /tmp, read
 * through /proc/PID/root so that a process in another mount namespace (a
 * container, PrivateTmp) is found too.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach-internal.h"
#include "console-internal.h"

#ifndef VMHEAP_RUBY_ARCHDIR
#define VMHEAP_RUBY_ARCHDIR ""
#endif
#ifndef VMHEAP_RUBY_ARCH_REL
#define VMHEAP_RUBY_ARCH_REL ""
#endif

#define KICK_EVERY_MS 500

struct find_pid {
	pid_t pid;
	int found;
	struct vmheap_agent_info info;
};

static void found_one(void *arg, const struct vmheap_agent_info *info)
{
	struct find_pid *f = arg;

	if (info->pid == f->pid) {
		f->info = *info;
		f->found = 1;
	}
}

/* 1 when `dir` has a discovery file of pid whose agent answers. */
static int agent_answers(pid_t pid, const char *dir)
{
	struct find_pid f = {.pid = pid};
	vmheap_client *c = NULL;
	int rc;

	if (vmheap_discovery_list(dir, found_one, NULL, &f) < 0 || !f.found)
		return 0;
	rc = vmheap_client_connect(&c, &f.info, 5000);
	if (c)
		vmheap_client_close(c);
	return rc == 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The target's discovery directory, seen from here. */
static void target_dir(pid_t pid, char *dir, size_t len)
{
	char v[PATH_MAX];

	if (attach_proc_getenv(pid, "VMHEAP_AGENT_TMPDIR", v, sizeof(v)) < 0 ||
	    !*v)
		if (attach_proc_getenv(pid, "TMPDIR", v, sizeof(v)) < 0 || !*v)
			strcpy(v, "/tmp");
	snprintf(dir, len, "/proc/%ld/root%s", (long)pid, v);
}

/* vmheap_attach.so: $VMHEAP_ATTACH_SO, else ../ruby/ from this program
 * (the build tree), else the Ruby arch directory under the prefix this
 * program is installed in, else that directory at build time. */
static int attach_library(char *out, size_t len)
{
	const char *env = getenv("VMHEAP_ATTACH_SO");
	char exe[PATH_MAX], cand[PATH_MAX + 64], *slash;
	ssize_t n;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(cand, sizeof(cand),
				 "%s/../ruby/vmheap_attach.so", exe);
			if (realpath(cand, out) && access(out, R_OK) == 0)
				return 0;
			snprintf(cand, sizeof(cand),
				 "%s/../%s/vmheap_attach.so", exe,
				 VMHEAP_RUBY_ARCH_REL);
			if (*VMHEAP_RUBY_ARCH_REL != '/' &&
			    realpath(cand, out) && access(out, R_OK) == 0)
				return 0;
		}
	}
	if (*VMHEAP_RUBY_ARCHDIR) {
		snprintf(out, len, "%s/vmheap_attach.so", VMHEAP_RUBY_ARCHDIR);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

/* Refuse what is not an MRI Ruby 3.1 we can load into.  0 or -1. */
static int check_target(pid_t pid, char *err, size_t errlen)
{
	struct attach_module ruby;
	const char *base, *allow;
	char state = attach_proc_state(pid);
	int m, seccomp;

	if (!state) {
		snprintf(err, errlen, "no process %ld", (long)pid);
		return -1;
	}
	if (state == 'Z' || state == 'X') {
		snprintf(err, errlen, "pid %ld has exited (state %c)",
			 (long)pid, state);
		return -1;
	}
	if (state == 'T' || state == 't') {
		snprintf(
		    err, errlen,
		    "pid %ld is stopped (state %c); vmheap does not attach "
		    "to a stopped process: continue it (kill -CONT %ld) "
		    "and try again",
		    (long)pid, state, (long)pid);
		return -1;
	}
	m = attach_proc_module(pid, "libruby", &ruby);
	if (m == -2) {
		/* the kernel lets us read maps where it lets us trace */
		attach_refusal(pid, err, errlen);
		return -1;
	}
	if (m < 0) {
		snprintf(err, errlen,
			 "pid %ld is not an MRI Ruby (no libruby is mapped "
			 "in it); --attach loads the agent into Ruby 3.1 "
			 "processes only. For other VMs start them with "
			 "the agent",
			 (long)pid);
		return -1;
	}
	base = strrchr(ruby.path, '/') + 1;
	if (strncmp(base, "libruby-3.1.so", 14) != 0 &&
	    strncmp(base, "libruby.so.3.1", 14) != 0) {
		snprintf(err, errlen,
			 "pid %ld runs %s, a Ruby this vmheap does not know "
			 "how to attach to (it knows MRI 3.1); start it with "
			 "-rvmheap_agent instead",
			 (long)pid, base);
		return -1;
	}
	seccomp = attach_proc_seccomp(pid);
	allow = getenv("VMHEAP_ATTACH_ALLOW_SECCOMP");
	if (seccomp == 1 ||
	    (seccomp == 2 && !(allow && strcmp(allow, "1") == 0))) {
		snprintf(err, errlen,
			 "pid %ld runs under a seccomp %s, which may kill it "
			 "for a system call that loading the agent makes "
			 "(openat, mmap, mprotect, getpid, socket); %s",
			 (long)pid, seccomp == 1 ? "strict mode" : "filter",
			 seccomp == 1
			     ? "not attaching"
			     : "if its filter allows them, set "
			       "VMHEAP_ATTACH_ALLOW_SECCOMP=1 and try again");
		return -1;
	}
	if (attach_proc_catches(pid, SIGVTALRM) != 1) {
		snprintf(err, errlen,
			 "pid %ld maps %s but has no SIGVTALRM handler, so it "
			 "is not running the Ruby VM; not attaching",
			 (long)pid, base);
		return -1;
	}
	return 0;
}

int attach_agent(pid_t pid, int timeout_ms, char *dir, size_t len,
		 int *injected, char *err, size_t errlen)
{
	struct attach_module loaded;
	char so[PATH_MAX], seen[PATH_MAX + 64];
	long deadline, next_kick;

	*injected = 0;
	if (attach_proc_state(pid) == 0) {
		snprintf(err, errlen, "no process %ld", (long)pid);
		return -1;
	}
	target_dir(pid, dir, len);
	if (agent_answers(pid, dir))
		return 0;
	if (check_target(pid, err, errlen) < 0)
		return -1;
	if (attach_library(so, sizeof(so)) < 0) {
		snprintf(err, errlen,
			 "cannot find vmheap_attach.so (next to the build's "
			 "vmheap_agent.so, in %s, or in $VMHEAP_ATTACH_SO)",
			 *VMHEAP_RUBY_ARCHDIR ? VMHEAP_RUBY_ARCHDIR
					      : "Ruby's site arch directory");
		return -1;
	}
	/* following /proc/PID/root takes the right to trace it */
	snprintf(seen, sizeof(seen), "/proc/%ld/root/", (long)pid);
	if (access(seen, X_OK) != 0 && errno == EACCES) {
		attach_refusal(pid, err, errlen);
		return -1;
	}
	snprintf(seen, sizeof(seen), "/proc/%ld/root%s", (long)pid, so);
	if (access(seen, R_OK) != 0) {
		snprintf(err, errlen,
			 "%s is not visible inside pid %ld's file system "
			 "(%s): install vmheap inside its container, or set "
			 "VMHEAP_ATTACH_SO to the library's path there",
			 so, (long)pid, strerror(errno));
		return -1;
	}
	/* A previous attach loaded it and its job may still be pending:
	 * dlopen again would not run the constructor again. */
	if (attach_proc_module(pid, "vmheap_attach.so", &loaded) != 0) {
		if (attach_inject(pid, so, err, errlen) < 0)
			return -1;
		*injected = 1;
		attach_test_stop(6);
	}
	/* The main thread starts the agent at its next interrupt check.
	 * The injection made a blocked thread come back with EINTR; should
	 * it have been between its check and its next blocking call, MRI's
	 * own wake-up signal (SIGVTALRM, a no-op handler installed without
	 * SA_RESTART, checked above) makes it look again. */
	deadline = now_ms() + timeout_ms;
	next_kick = now_ms() + KICK_EVERY_MS;
	while (now_ms() < deadline) {
		char state;
		struct timespec ts = {0, 20 * 1000000L};

		if (agent_answers(pid, dir))
			return 0;
		state = attach_proc_state(pid);
		if (!state || state == 'Z' || state == 'X') {
			snprintf(err, errlen,
				 "pid %ld exited before its agent started",
				 (long)pid);
			return -1;
		}
		if (now_ms() >= next_kick && state != 'T' && state != 't' &&
		    attach_proc_catches(pid, SIGVTALRM) == 1) {
			syscall(SYS_tgkill, pid, pid, SIGVTALRM);
			next_kick = now_ms() + KICK_EVERY_MS;
		}
		nanosleep(&ts, NULL);
	}
	snprintf(err, errlen,
		 "the agent was loaded into pid %ld but wrote no discovery "
		 "file in %s within %d s (its main thread never reached a "
		 "point where Ruby code may run?)",
		 (long)pid, dir, timeout_ms / 1000);
	return -1;
}
