/*
 * vmheap_spec.h - the one test harness of every Check suite in spec/.
 *
 * A suite is one file (or a few) of START_TEST bodies and one function,
 * vmheap_spec_suite(), that builds its Suite; spec/lib/suite_main.c is the
 * main() of every suite binary.  The harness gives the tests:
 *
 *   paths.c       where the build and the sources are
 *   clock.c       a monotonic clock in milliseconds, sleeping
 *   wait.c        waiting for a condition with a deadline (the only
 *                 sleep a test may use: scripts/check-sleeps.sh)
 *   procfs.c      what /proc says: a process's children and threads, the
 *                 TCP connections of a port
 *   tmpdir.c      the suite's root directory and fresh directories under it
 *   files.c       reading and writing whole files, counting, listing
 *   process.c     starting processes that die with the test, waiting with
 *                 a deadline, running a command to completion with its
 *                 output captured
 *   tool.c        running a program of the build (vmheap-histo, ...)
 *   proc.c        a process talked to through pipes
 *   sample_vm.c   the real vmheap-sample, started and found by its
 *                 discovery file; a fixture of one VM per test
 *   embedded_vm.c a sample VM forked with options vmheap-sample lacks
 *   client.c      a client of such a VM
 *   socket.c      a raw TCP connection to an agent
 *   ruby_vm.c     a real Ruby VM with the agent loaded, running a script
 *   native_vm.c   a program under vmheap-run (the native-only host)
 *   tmux.c        a terminal program driven like a person would: type a
 *                 line, wait for text on the screen, assert
 *
 * Functions documented to "fail the test" call ck_assert or ck_abort (use
 * them inside a test, from its own thread); the others return an error
 * value.  Every wait here has a deadline; none sleeps a fixed time to let
 * something happen.
 */
#ifndef VMHEAP_SPEC_H
#define VMHEAP_SPEC_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <pwd.h>
#include <sys/types.h>

#include "spec_reply.h" /* and vmheap_agent.h */

/* Non-zero in the sanitizer build (SAN=1). */
#if defined(__SANITIZE_ADDRESS__)
#define SPEC_SANITIZED 1
#else
#define SPEC_SANITIZED 0
#endif

/* -------------------------------------------------------------- suites */

/*
 * Each suite binary defines this: it builds the suite's Suite with one
 * TCase per section of its tests.  main() (suite_main.c) makes the root
 * directory, runs the suite in Check's fork mode (unless CK_FORK says
 * otherwise; CK_DEFAULT_TIMEOUT and CK_TIMEOUT_MULTIPLIER are Check's
 * own), prints Check's summary line, cleans up and exits 1 on a failure.
 */
Suite *vmheap_spec_suite(void);

/*
 * A new TCase `name` with a timeout of `seconds` (Check multiplies it by
 * CK_TIMEOUT_MULTIPLIER), added to `s`.
 */
TCase *spec_tcase(Suite *s, const char *name, int seconds);

/* --------------------------------------------------------------- paths */

/* $VMHEAP_BUILD/bin/NAME (default build/bin/NAME), in a ring of 8
 * static buffers. */
const char *spec_bin(const char *name);

/* $VMHEAP_BUILD/REL (default build/REL), same ring. */
const char *spec_build(const char *rel);

/* $VMHEAP_SRC/REL (default ./REL), same ring. */
const char *spec_src(const char *rel);

/* --------------------------------------------------------------- clock */

/* Milliseconds on the monotonic clock. */
int64_t spec_now_ms(void);

/* Sleep `ms` milliseconds (resumed after signals).  For spec/lib only:
 * a test waits for a condition (below); make check refuses a call of
 * spec_sleep_ms, sleep, usleep or nanosleep in a test file of spec/
 * (scripts/check-sleeps.sh). */
void spec_sleep_ms(int ms);

/* ---------------------------------------------------------------- wait */

/*
 * A wait for a condition: look at it, and between two looks sleep the
 * poll interval, until it holds or the deadline passes.  Deadlines are
 * generous (a loaded machine, a sanitizer build): a wait ends as soon as
 * its condition holds, so a long deadline costs nothing when all is well.
 *
 *	struct spec_wait w;
 *	spec_wait_begin(&w, 15000);
 *	while (!file_is_there(path))
 *		spec_wait_or_fail(&w, "%s to appear", path);
 *
 * or, for one expression, SPEC_WAIT_UNTIL(cond, timeout_ms, fmt, ...).
 */
struct spec_wait {
	int64_t start, deadline; /* spec_now_ms() */
	int interval_ms;	 /* between two looks; 10 unless set */
	int polls;		 /* how many times it slept */
};

/* Start a wait of `timeout_ms` (poll interval 10 ms: set w->interval_ms
 * after this for another). */
void spec_wait_begin(struct spec_wait *w, int timeout_ms);

/*
 * Before the deadline: sleep the poll interval (never past the deadline)
 * and return 1, for the caller to look again.  At the deadline: 0.  Does
 * not fail the test: for threads, and for children of a fork.
 */
int spec_wait_next(struct spec_wait *w);

/*
 * spec_wait_next that fails the test at the deadline with "gave up after
 * N ms waiting for: " and the condition (a printf format and arguments).
 * The arguments are evaluated at every poll: pass values, not calls that
 * allocate (call spec_wait_next and ck_abort_msg for those).
 */
void spec_wait_or_fail(struct spec_wait *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Wait until `cond` (an expression, evaluated again after each poll)
 * holds; fail the test at `timeout_ms` naming the condition. */
#define SPEC_WAIT_UNTIL(cond, timeout_ms, ...)                                 \
	do {                                                                   \
		struct spec_wait spec_wait_;                                   \
		spec_wait_begin(&spec_wait_, (timeout_ms));                    \
		while (!(cond))                                                \
			spec_wait_or_fail(&spec_wait_, __VA_ARGS__);           \
	} while (0)

/* -------------------------------------------------------------- procfs */

/*
 * The processes whose parent is `parent` (from /proc/PID/stat): their
 * count; the first `max` pids go to out[] (out may be NULL).
 */
int spec_children(pid_t parent, pid_t *out, int max);

/* How many threads `pid` has (/proc/PID/task), or -1 when it is gone. */
int spec_threads(pid_t pid);

/* TCP states of /proc/net/tcp, as bits of spec_tcp_count's mask. */
#define SPEC_TCP_ESTABLISHED (1u << 1)
#define SPEC_TCP_CLOSE_WAIT (1u << 8)

/*
 * How many IPv4 TCP sockets of this network namespace have `port` as
 * their local (local != 0) or remote port and a state in `state_mask`;
 * -1 when /proc/net/tcp cannot be read.  E.g. the connections an agent
 * on `port` still holds: local, ESTABLISHED | CLOSE_WAIT; a client whose
 * agent has closed the connection: remote, CLOSE_WAIT.
 */
int spec_tcp_count(uint16_t port, int local, unsigned state_mask);

/* -------------------------------------------------------------- tmpdir */

/*
 * The suite's root directory, made by main() under $TMPDIR (or /tmp)
 * before any test runs and removed, with everything in it, after the
 * last.  TMUX_TMPDIR points into it so that every tmux server a test
 * starts is found and killed at the end.
 */
const char *spec_root(void);

/* Make the root directory, named after `tag` (main() does it, once). */
void spec_root_make(const char *tag);

/* Kill the tmux servers under the root and remove the root. */
void spec_root_remove(void);

/*
 * A fresh, empty directory (mode 0700) under the root, named after `tag`;
 * returned from a ring of 16 static buffers.  Fails the test if it
 * cannot be made.
 */
const char *spec_mkdtemp(const char *tag);

/*
 * A fresh directory for each test of a TCase, as a Check fixture: after
 * tcase_add_checked_fixture(tc, spec_test_dir_setup, NULL), every test of
 * `tc` finds its own new, empty directory (mode 0700, under the root) at
 * spec_test_dir().  The setup runs in the test's own process; a failure
 * to make the directory fails that test.  spec_test_dir() fails the test
 * in a TCase without the fixture.
 */
void spec_test_dir_setup(void);
const char *spec_test_dir(void);

/* Remove `path` and everything below it (no error if absent). */
void spec_rmrf(const char *path);

/* --------------------------------------------------------------- files */

/* A whole file, malloc'd and NUL-terminated; *len (may be NULL) its
 * size.  NULL if it cannot be read. */
char *spec_read_file(const char *path, size_t *len);

/* Write `len` bytes to `path` (created with mode 0600, truncated).
 * Fails the test on an error. */
void spec_write_file(const char *path, const void *data, size_t len);

/* spec_write_file of a NUL-terminated text. */
void spec_write_text(const char *path, const char *text);

/*
 * The bytes of a hex dump in a Markdown file, lines "OFFSET: XX XX ..."
 * between the lines "<!-- TAG: begin -->" and "<!-- TAG: end -->" (the
 * worked examples of format/FORMAT.md), malloc'd; *len gets their count.
 * Fails the test if the file cannot be read or an offset is not the count
 * of the bytes before it.
 */
uint8_t *spec_md_hex(const char *path, const char *tag, size_t *len);

/*
 * A copy of the program spec_bin(`name`) in the directory `dir`, mode
 * 0755, for a process run as another user: that user may not reach the
 * build (a checkout under a 0700 directory), but reaches `dir` if the
 * caller made it so.  Returns its path (a ring of 8 static buffers);
 * fails the test if it cannot be copied.
 */
const char *spec_copy_program(const char *name, const char *dir);

/* How many times `needle` occurs in `hay` (not overlapping). */
int spec_count(const char *hay, const char *needle);

/* The names in `dir` other than "." and "..", sorted, each followed by
 * `sep` (malloc'd; "" for an empty or missing directory). */
char *spec_ls(const char *dir, char sep);

/* ----------------------------------------------------------- processes */

/* A NULL-terminated argument (or environment) list in place:
 * spec_run(ARGS(spec_bin("vmheap-histo"), "--top", "5", path), ...). */
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/*
 * How to start a process.  Every process started here gets
 * PR_SET_PDEATHSIG(SIGKILL): it dies when the test that started it ends,
 * even when the test fails half-way (the signal follows the thread that
 * forked, so start processes from the test's own thread).
 */
struct spec_spawn {
	const char *const *argv; /* argv[0] a path, or a name for PATH */
	/* "NAME=VALUE" sets, "NAME" unsets; NULL-terminated, may be NULL */
	const char *const *env;
	const char *dir;     /* working directory, NULL: the test's */
	const char *stdin_path;  /* NULL: /dev/null */
	const char *stdout_path; /* NULL: /dev/null (created, truncated) */
	const char *stderr_path; /* NULL: /dev/null; may equal stdout_path */
	int stdin_fd;  /* >0: use this fd as stdin instead of stdin_path */
	int stdout_fd; /* >0: use this fd as stdout */
	int stderr_fd; /* >0: use this fd as stderr */
	long long fsize_limit; /* RLIMIT_FSIZE in bytes (SIGXFSZ ignored) */
	/* run as this user (no supplementary groups; the test runs as
	 * root), NULL: as the test; exit status 126 when it cannot */
	const struct passwd *user;
};

/*
 * Fork and exec as `o` says; returns the pid, or -1 (errno set) when
 * fork fails.  An exec failure is exit status 127.
 */
pid_t spec_spawn(const struct spec_spawn *o);

/*
 * In a child just forked by a test (without exec): die with the test.
 * `parent` is the test's pid, read before the fork.
 */
void spec_die_with_parent(pid_t parent);

/* The shell's view of a wait status: the exit code, or 128+signal. */
int spec_exit_code(int wait_status);

/*
 * Wait for `pid` up to `timeout_ms`: returns spec_exit_code of its status,
 * -1 at the deadline (the process still runs), -2 if it is not our child.
 * *raw (may be NULL) gets the raw wait status.
 */
int spec_wait(pid_t pid, int timeout_ms, int *raw);

/*
 * Send `sig`, wait up to `timeout_ms`, then SIGKILL and reap.  Returns
 * the raw wait status when the process ended in time, or -1 when it had
 * to be killed.
 */
int spec_stop(pid_t pid, int sig, int timeout_ms);

/* SIGKILL and reap. */
void spec_kill(pid_t pid);

/* A command run to completion. */
struct spec_run {
	int status; /* spec_exit_code, or -1 when killed at the deadline */
	char *out;  /* stdout, NUL-terminated (malloc'd) */
	char *err;  /* stderr */
	size_t out_len, err_len;
	double seconds; /* how long it ran */
};

/*
 * Run `argv` (argv[0] a path or a name for PATH) with `env` (as in
 * struct spec_spawn; may be NULL) and `input` on stdin (NULL: nothing),
 * capturing stdout and stderr; kill it at `timeout_ms`.  Returns 0 and
 * fills *r (release with spec_run_free), or -1 if it could not start.
 */
int spec_run(const char *const *argv, const char *const *env,
	     const char *input, int timeout_ms, struct spec_run *r);
void spec_run_free(struct spec_run *r);

/* spec_run that must start and exit 0 (else the test fails, with the
 * command's output); its stdout, malloc'd. */
char *spec_run_stdout(const char *const *argv, const char *const *env,
		      int timeout_ms);

/*
 * spec_run of `how` (its argv, env, dir, stdin_path, fsize_limit; its
 * stdout and stderr are captured): `input` on its stdin unless
 * how->stdin_path is set, its stderr on a pseudo-terminal when
 * `stderr_tty` (r->err then holds what it drew there, with the
 * terminal's CR LF line ends).  Returns as spec_run does.
 */
int spec_run_spawn(const struct spec_spawn *how, const char *input,
		   int stderr_tty, int timeout_ms, struct spec_run *r);

/* ----------------------------------------------------------- the tools */

/*
 * The one way a test runs a program of the build (vmheap-histo,
 * vmheap-diff, ...): spec_bin(`name`) with `args` (NULL-terminated, may
 * be NULL; at most 62), run to completion by spec_run with its stdout
 * and stderr captured:
 *
 *	struct spec_run r = spec_tool("vmheap-histo", ARGS("--top", "5", dump));
 *	ck_assert_msg(r.status == 0, "%s", r.err);
 *	...
 *	spec_run_free(&r);
 *
 * It fails the test when the tool cannot start or run (exit status 127)
 * or runs past its deadline; any exit status it returns in r.status for
 * the test to assert.
 */
struct spec_run spec_tool(const char *name, const char *const *args);

/* Options of spec_tool_with (all may be left zero). */
struct spec_tool_opts {
	const char *const *env; /* as struct spec_spawn's env */
	const char *stdin_path; /* a file on its stdin; NULL: ... */
	const char *input;	/* ... this text (NULL: nothing) */
	int timeout_ms;		/* 0: SPEC_TOOL_TIMEOUT_MS */
	int stderr_tty;		/* its stderr on a pseudo-terminal */
};
#define SPEC_TOOL_TIMEOUT_MS 120000

/* spec_tool with options. */
struct spec_run spec_tool_with(const char *name, const char *const *args,
			       const struct spec_tool_opts *o);

/* spec_tool that must exit 0 (else the test fails, with the tool's
 * output). */
struct spec_run spec_tool_ok(const char *name, const char *const *args);

/* spec_tool that must exit 0 (else the test fails, with the tool's
 * output) within `timeout_ms` (0: the default): its stdout, malloc'd. */
char *spec_tool_stdout(const char *name, const char *const *args,
		       int timeout_ms);

/* A process talked to through pipes on its stdin and stdout. */
struct spec_proc {
	pid_t pid;
	int in, out; /* our ends; -1 once closed */
	char buf[65536]; /* what it wrote and was not taken as a line */
	size_t len;
};

/*
 * Start `o` (its stdin and stdout become pipes) with stderr merged into
 * stdout, or (merge_stderr 0) where `o` says, by default the test's.
 * Fails the test if it cannot start.
 */
void spec_proc_start(struct spec_proc *p, const struct spec_spawn *o,
		     int merge_stderr);

/* Write `text` to its stdin (fails the test if it cannot). */
void spec_proc_write(struct spec_proc *p, const char *text);

/* Read what is there within `ms` into p->buf: 0 at EOF, else 1. */
int spec_proc_read(struct spec_proc *p, int ms);

/* Read until p->buf holds `text`: 1, or 0 at the deadline or EOF. */
int spec_proc_wait_for(struct spec_proc *p, const char *text, int timeout_ms);

/*
 * Take the next line (without its newline) off p->buf into `line`: 1, 0
 * at EOF, -1 at the deadline, -2 when it does not fit in `size`.
 */
int spec_proc_line(struct spec_proc *p, char *line, size_t size,
		   int timeout_ms);

/*
 * Close its stdin and wait for it to exit, reading its output: its exit
 * code (spec_exit_code), or -1 when it was killed at the deadline.
 */
int spec_proc_wait_exit(struct spec_proc *p, int timeout_ms);

/* -------------------------------------------------------- the sample VM */

/*
 * The C sample VM.  The one way to start one is spec_vm_start (or, for a
 * VM with options vmheap-sample lacks, spec_vm_start_embedded); a test
 * talks to it with spec_vm_client (or spec_connect in a thread) and ends
 * it with spec_vm_stop or spec_vm_cleanup:
 *
 *	struct spec_vm vm;
 *	spec_vm_start(&vm, NULL, NULL, NULL);   // in a directory of its own
 *	vmheap_client *c = spec_vm_client(&vm);
 *	...
 *	ck_assert_int_eq(spec_vm_stop(&vm), 0); // SIGTERM: it exits 0
 */
struct spec_vm {
	pid_t pid;	     /* 0 once stopped */
	char tmpdir[256];    /* VMHEAP_AGENT_TMPDIR: its discovery file */
	char dumpdir[256];   /* VMHEAP_AGENT_DIR */
	char discovery[512]; /* tmpdir/vmheap-agent.<pid> */
	struct vmheap_agent_info info; /* port, token, ... */
	/* spec_vm_start made tmpdir (spec_vm_cleanup removes it) */
	int own_dir;
};

/*
 * Options of spec_vm_start (all may be left zero).  Every vmheap-sample
 * started here runs under $VMHEAP_SAMPLE_WRAPPER when that is set (e.g.
 * "valgrind -q --error-exitcode=99": the tool execs, the pid stays).
 */
struct spec_vm_opts {
	const char *const *args; /* extra arguments, NULL-terminated */
	const char *const *env;  /* as struct spec_spawn's env */
	long long fsize_limit;   /* RLIMIT_FSIZE in bytes, 0: none */
	/* its stdout and stderr; NULL: stdout to /dev/null, stderr the
	 * test's */
	const char *log_path;
};

/*
 * Only start vmheap-sample as spec_vm_start does (for a VM expected to
 * exit at once, or not to start its agent): its pid, or -1.
 */
pid_t spec_vm_spawn(const char *tmpdir, const char *dumpdir,
		    const struct spec_vm_opts *o);

/*
 * Start $VMHEAP_BUILD/bin/vmheap-sample with VMHEAP_AGENT_TMPDIR=tmpdir
 * and VMHEAP_AGENT_DIR=dumpdir, and wait (15 s) until its discovery file
 * is there and readable; fills *vm.  With tmpdir and dumpdir NULL it gets
 * a fresh directory of its own (spec_mkdtemp) as its tmpdir, with its
 * dumps in the subdirectory "dumps".  Fails the test if the VM exits
 * first or no file appears.  The VM dies with the test.
 */
void spec_vm_start(struct spec_vm *vm, const char *tmpdir,
		   const char *dumpdir, const struct spec_vm_opts *o);

/*
 * Run vmheap-sample (o as spec_vm_start's, in a fresh directory that is
 * its tmpdir and dump directory) expecting it to exit within 15 s (else
 * the test fails): its exit code (spec_exit_code), and in *output (free
 * it) what it wrote on stdout and stderr.
 */
int spec_vm_run_to_exit(const struct spec_vm_opts *o, char **output);

/*
 * Wait up to `timeout_ms` for `pid`'s discovery file in `tmpdir` and read
 * it into *info.  0, or -1 when the process ended first (reaped, if it is
 * our child) or at the deadline (`err` then says why).
 */
int spec_discovery_wait(const char *tmpdir, pid_t pid,
			struct vmheap_agent_info *info, int timeout_ms,
			char *err, size_t errlen);

/* SIGTERM and wait (15 s, then SIGKILL): its exit code
 * (spec_exit_code), or -1 when it had to be killed or was stopped
 * already. */
int spec_vm_stop(struct spec_vm *vm);

/* spec_vm_stop if it still runs; then remove the directory spec_vm_start
 * made for it, if it made one. */
void spec_vm_cleanup(struct spec_vm *vm);

/*
 * A sample VM for each test of a TCase, as a Check fixture: after
 *
 *	tcase_add_checked_fixture(tc, spec_vm_fixture_setup,
 *				  spec_vm_fixture_teardown);
 *
 * every test of `tc` finds its own vmheap-sample, started in the test's
 * process by spec_vm_start(vm, NULL, NULL, NULL), at spec_fixture_vm().
 * The teardown is spec_vm_cleanup (a test may stop the VM itself, e.g.
 * to see how it exits).  spec_fixture_vm() fails the test in a TCase
 * without the fixture.
 */
void spec_vm_fixture_setup(void);
void spec_vm_fixture_teardown(void);
struct spec_vm *spec_fixture_vm(void);

/* Options of the embedded sample VM. */
struct spec_embedded {
	int max_clients; /* the agent's client limit */
	/* RLIMIT_FSIZE in bytes (SIGXFSZ ignored), 0: none */
	long long fsize_limit;
	const char *leak_class; /* like vmheap-sample --leak CLASS:N, or NULL */
	unsigned leak_per_tick;
};

/*
 * Fork a sample VM (the sample host's heap, mutator and callbacks, linked
 * in: embedded_vm.c) with options vmheap-sample does not have: a client
 * limit (its default is 32), a file size limit.  Fills *vm as
 * spec_vm_start does; fails the test if the agent does not start.  The
 * VM dies with the test.
 */
void spec_vm_start_embedded(struct spec_vm *vm, const char *tmpdir,
			    const char *dumpdir,
			    const struct spec_embedded *opt);

/*
 * A client authenticated to `vm`, or NULL (the reason printed to
 * stderr).  Does not fail the test: for threads.
 */
vmheap_client *spec_connect(const struct spec_vm *vm, int timeout_ms);

/* A client authenticated to `vm` (10 s to connect, 20 s a call); fails
 * the test if it cannot connect. */
vmheap_client *spec_vm_client(const struct spec_vm *vm);

/* get `var` as an unsigned integer; -1 on any failure (not failing the
 * test). */
int64_t spec_get_uint(vmheap_client *c, const char *var);

/* Wait until `var` (spec_get_uint) is at least `n`; fails the test at
 * `timeout_ms` (or when the get fails), naming the variable. */
void spec_wait_uint(vmheap_client *c, const char *var, int64_t n,
		    int timeout_ms);

/* Wait until the sample VM `vm` (vmheap-sample, or embedded) has made
 * `n` more ticks of its mutator (sample.ticks) than now: its leaks have
 * grown by n ticks' worth.  Fails the test at `timeout_ms`. */
void spec_vm_wait_ticks(const struct spec_vm *vm, int64_t n, int timeout_ms);

/* A TCP connection to 127.0.0.1:`port` (close-on-exec), for speaking the
 * wire protocol by hand: the fd, or -1 with errno set.  Does not fail the
 * test. */
int spec_tcp_connect(uint16_t port);

/* A socket listening on 127.0.0.1 at a port the kernel picks (a port
 * "already taken" for a process told to use it): the fd, the port in
 * *port.  Fails the test if it cannot. */
int spec_tcp_listen(uint16_t *port);

/* ------------------------------------------------------------ real Ruby */

/*
 * The Ruby host: a real `ruby` with the agent loaded, running a script
 * of the test.  spec_ruby_start (or spec_ruby_start_with, for options) is
 * the one way to start one; the test talks to it through vm->p
 * (spec_proc_write, spec_proc_wait_for, spec_proc_line) and ends it with
 * spec_proc_wait_exit (close its stdin) or spec_kill(vm->p.pid).
 */
struct spec_ruby {
	struct spec_proc p; /* its stdin; its stdout (and stderr, merged) */
	char dir[256];	    /* its directory: cwd, dumps, discovery file */
	char script[300];   /* dir/program.rb */
	char env_dir[600], env_tmp[600];
	/* its environment (for the console): VMHEAP_AGENT_DIR and _TMPDIR */
	const char *env[3];
};

/* Options of spec_ruby_start_with (all may be left zero). */
struct spec_ruby_opts {
	const char *const *env;	 /* more environment, after the agent's */
	const char *const *args; /* its arguments after the script */
	int stderr_apart;	 /* stderr to the test's, not into vm->p */
	/* wait (60 s) until its output holds this text; fail the test if it
	 * does not (e.g. "ready" printed once the script has set up) */
	const char *ready;
};

/*
 * Start `ruby -I $VMHEAP_BUILD/ruby -rvmheap_agent DIR/program.rb ARGS`
 * with `script_text` as program.rb, in a fresh directory DIR that is its
 * working directory, VMHEAP_AGENT_DIR and VMHEAP_AGENT_TMPDIR
 * (VMHEAP_AGENT_PORT and VMHEAP_AGENT_VERBOSE unset; under SAN=1 the ASan
 * runtime preloaded, leak detection off).  It dies with the test; fails
 * the test if it cannot start.  spec_ruby_start waits for nothing.
 */
void spec_ruby_start(struct spec_ruby *vm, const char *script_text);
void spec_ruby_start_with(struct spec_ruby *vm, const char *script_text,
			  const struct spec_ruby_opts *o);

/* ------------------------------------------------ the native-only host */

/*
 * A program of the test under vmheap-run (the malloc tracker with the
 * native-only host's agent, hosts/native), or another program that loads
 * an agent the same way: it prints "ready" once set up and is talked to
 * through its stdin and stdout.  spec_native_start is the one way to
 * start one.
 */
struct spec_native {
	struct spec_proc p; /* its stdin; its stdout and stderr, merged */
	char dir[256];	    /* its cwd, VMHEAP_AGENT_DIR and _TMPDIR */
	struct vmheap_agent_info info; /* from its discovery file */
};

/*
 * Start `argv` (e.g. spec_bin("vmheap-run") and a program) in `dir`
 * (NULL: a fresh directory) with VMHEAP_AGENT_DIR and _TMPDIR there,
 * VMHEAP_AGENT_PORT unset and `env` (as struct spec_spawn's; may be
 * NULL) after them; wait (60 s each) for "ready\n" on its output and
 * for its discovery file.  Fails the test if either does not come.  It
 * dies with the test.
 */
void spec_native_start(struct spec_native *vm, const char *dir,
		       const char *const *argv, const char *const *env);

/* ---------------------------------------------------------------- tmux */

/* A tmux server with one 200x50 session running one command. */
struct spec_tmux {
	char socket[64];
};

/*
 * Start `command` (a shell command line) in a new tmux server under the
 * root directory.  When the command ends the pane shows "[exit N]" and
 * stays.  Fails the test if tmux does not start.
 */
void spec_tmux_start(struct spec_tmux *t, const char *command);

/* Type literal text (no Enter). */
void spec_tmux_type(struct spec_tmux *t, const char *text);

/* Press keys by tmux name ("Enter", "Tab", "Up", "C-d"). */
void spec_tmux_key(struct spec_tmux *t, const char *key);

/* Type `line` and press Enter. */
void spec_tmux_line(struct spec_tmux *t, const char *line);

/* The pane's text with scrollback, malloc'd (fails the test if tmux
 * cannot run). */
char *spec_tmux_capture(struct spec_tmux *t);

/*
 * Poll the pane until it holds `text`: returns the capture (free it), or
 * NULL at the deadline (the last capture is then written to stderr).
 */
char *spec_tmux_wait_for(struct spec_tmux *t, const char *text,
			 int timeout_ms);

/* spec_tmux_wait_for that fails the test at the deadline: returns the
 * pane (free it). */
char *spec_tmux_expect(struct spec_tmux *t, const char *text, int timeout_ms);

/* spec_tmux_expect, the pane dropped. */
void spec_tmux_see(struct spec_tmux *t, const char *text, int timeout_ms);

/*
 * Poll until `text` is in the pane at least `n` times (e.g. the n-th
 * prompt, which says the command before it is done): 1, or 0 at the
 * deadline.  Type control keys (C-d) only after that: the tty consumes
 * them while no prompt is reading.
 */
int spec_tmux_wait_count(struct spec_tmux *t, const char *text, int n,
			 int timeout_ms);

/* How many times `text` is in the pane. */
int spec_tmux_count(struct spec_tmux *t, const char *text);

/* Kill the session's server. */
void spec_tmux_kill(struct spec_tmux *t);

/*
 * vmheap-console's prompt when it talks to the sample VM with `pid`
 * ("sample PID> "), followed by `typed` (may be ""): what the pane shows
 * on a prompt's line.  From a ring of 8 static buffers.
 */
const char *spec_console_prompt(pid_t pid, const char *typed);

/*
 * A shell command line for tmux that runs vmheap-console with `args`
 * (shell syntax, may be ""), HOME and VMHEAP_AGENT_TMPDIR set to `dir`
 * and TMPDIR unset, into `out`.
 */
void spec_console_command(char *out, size_t len, const char *dir,
			  const char *args);

#endif /* VMHEAP_SPEC_H */
