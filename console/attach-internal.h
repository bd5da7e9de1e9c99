/*
 * attach-internal.h - vmheap-console --attach: load the agent into a
 * running MRI Ruby that has none (issue 26).
 *
 *   attach.c         the flow: find the target's discovery directory, reuse
 *                    a running agent, else inject and wait for its file
 *   attach_inject.c  ptrace: seize the main thread, run a stub that calls
 *                    dlopen(vmheap_attach.so) and restores the thread itself
 *   attach_proc.c    what /proc says: mappings, state, caught signals, env
 *   attach_elf.c     the dynamic symbols and code segment of a mapped ELF
 *
 * None of these print: failures come back as a negative code with one
 * sentence (what is wrong, then why and what to do) in err.
 */
#ifndef VMHEAP_CONSOLE_ATTACH_INTERNAL_H
#define VMHEAP_CONSOLE_ATTACH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---------------------------------------------------------- attach_proc.c */

/* One mapped file of the target: the mapping at file offset 0 gives the
 * load bias; exec_* is its executable mapping. */
struct attach_module {
	char path[512];	     /* as /proc/PID/maps names it */
	uint64_t base;	     /* start of the mapping at offset 0 */
	uint64_t exec_start; /* its r-xp mapping, [start, end) */
	uint64_t exec_end;
};

/*
 * Find the first mapped file whose base name starts with `prefix` (e.g.
 * "libc.so.", "ld-linux-", "libruby-").  0 when found, -1 when not, -2
 * when /proc/PID/maps cannot be read (errno set).
 */
int attach_proc_module(pid_t pid, const char *prefix, struct attach_module *m);

/* The state letter of /proc/PID/stat ('R', 'S', 'T', 'Z', ...), or 0
 * when the process does not exist. */
char attach_proc_state(pid_t pid);

/* 1 when the process has a handler for `sig` (SigCgt of /proc/PID/status),
 * 0 when not, -1 when unreadable. */
int attach_proc_catches(pid_t pid, int sig);

/* The signals the main thread blocks now (SigBlk of /proc/PID/status),
 * bit n-1 for signal n.  0, or -1 when unreadable. */
int attach_proc_blocked(pid_t pid, uint64_t *mask);

/* Its seccomp mode (Seccomp: of /proc/PID/status): 0 none, 1 strict,
 * 2 filter; -1 when unreadable. */
int attach_proc_seccomp(pid_t pid);

/* The real uid of the process (Uid: of /proc/PID/status), or -1. */
long attach_proc_uid(pid_t pid);

/* 1 when the process has capability `cap` (CAP_*) in its effective set
 * (CapEff: of /proc/PID/status), 0 when not, -1 when unreadable. */
int attach_proc_has_cap(pid_t pid, int cap);

/* Why this process may not trace pid (its /proc/PID/maps unreadable or
 * PTRACE_SEIZE refused with EPERM), as one sentence with what to do,
 * into err: another user's process, no CAP_SYS_PTRACE, Yama's
 * ptrace_scope, an undumpable process. */
void attach_refusal(pid_t pid, char *err, size_t errlen);

/* Copy the value of `name` in /proc/PID/environ to buf (at most len
 * bytes with the NUL).  0, or -1 when absent or unreadable. */
int attach_proc_getenv(pid_t pid, const char *name, char *buf, size_t len);

/* ----------------------------------------------------------- attach_elf.c */

/*
 * Look up the dynamic symbol `name` (a function or object) in the ELF
 * file at `path`; *value is its address relative to the load bias.
 * 0, or -1 with err filled.
 */
int attach_elf_symbol(const char *path, const char *name, uint64_t *value,
		      char *err, size_t errlen);

/*
 * The end (relative to the load bias) of the last executable PT_LOAD
 * segment of `path`, and its page's end: [*end, *page_end) is mapped
 * executable but holds no code.  0, or -1 with err filled.
 */
int attach_elf_code_slack(const char *path, uint64_t *end, uint64_t *page_end,
			  char *err, size_t errlen);

/* -------------------------------------------------------- attach_inject.c */

/*
 * Load the shared object `so_path` (a path valid in the target's mount
 * namespace) into `pid` by running dlopen(so_path, RTLD_NOW) on its main
 * thread; see attach_inject.c for the stub and its safety rules.  The
 * caller has checked that pid is an MRI Ruby 3.1 process.  Returns 0 when
 * dlopen returned a handle, -1 with err filled otherwise; in every case
 * the target runs on as it was (it is never left stopped or traced).
 */
int attach_inject(pid_t pid, const char *so_path, char *err, size_t errlen);
/* For the test suite: stop this process (SIGSTOP) at moment `moment` of
 * an attach when VMHEAP_ATTACH_TEST_STOP says so (attach_inject.c lists
 * the moments). */
void attach_test_stop(int moment);

/* --------------------------------------------------------------- attach.c */

/*
 * --attach PID: reuse the agent of `pid` when its discovery file exists
 * and answers, else check that pid is an MRI Ruby 3.1, inject the agent,
 * and wait (up to timeout_ms) for its discovery file.  On success *dir
 * (len bytes) holds the discovery directory to read, as seen from here
 * (/proc/PID/root/...), and *injected says whether this call loaded the
 * agent.  0, or -1 with err filled.
 */
int attach_agent(pid_t pid, int timeout_ms, char *dir, size_t len,
		 int *injected, char *err, size_t errlen);

#endif
