/*
 * console_harness-internal.h - real processes for the console's suite:
 * sample VMs in a temporary directory, the console run with arguments or
 * a pipe, and the console driven under tmux like a person would.
 *
 * Every wait has a deadline; nothing sleeps a fixed time.  VMs are
 * started with PR_SET_PDEATHSIG so that they die with the test that
 * started them; tmux servers live under the suite's root directory and
 * are killed by ct_suite_cleanup().
 */
#ifndef CONSOLE_HARNESS_INTERNAL_H
#define CONSOLE_HARNESS_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

/* Make the suite's root directory (also TMUX_TMPDIR).  Call once. */
void ct_suite_setup(void);
/* Kill the suite's tmux servers and remove the root directory. */
void ct_suite_cleanup(void);

/* A fresh directory under the suite root (for discovery, dumps, HOME). */
void ct_mkdir(char *out, size_t len);

/* $VMHEAP_BUILD/bin/NAME. */
void ct_bin(char *out, size_t len, const char *name);

/* Start the sample VM with its discovery and dump directory `dir`, and
 * wait until its discovery file exists.  Fails the test if it does not
 * appear in time. */
pid_t ct_vm_start(const char *dir);
/* SIGKILL the VM and reap it (its discovery file stays behind). */
void ct_vm_kill(pid_t pid);

/* The discovery file of `pid` in `dir`. */
void ct_discovery_path(char *out, size_t len, const char *dir, pid_t pid);

/* A finished console run. */
struct ct_run {
	int status;  /* exit status; -1 when it had to be killed */
	char *out;   /* stdout, NUL-terminated */
	char *err;   /* stderr */
	double secs; /* how long it ran */
};

/*
 * Run the console with HOME and VMHEAP_AGENT_TMPDIR set to `dir`, stdin
 * fed from `input` (NULL: /dev/null), and the NULL-terminated `args`.
 * Kills it after 20 s.
 */
void ct_console_run(struct ct_run *r, const char *dir, const char *input,
		    const char *const *args);
void ct_run_free(struct ct_run *r);

/* A console with pipes on stdin and stdout (stderr merged into stdout). */
struct ct_proc {
	pid_t pid;
	int in, out;
	char buf[65536];
	size_t len;
};
void ct_proc_start(struct ct_proc *p, const char *dir, const char *const *args);
void ct_proc_write(struct ct_proc *p, const char *text);
/* Read until the output holds `text`; returns 1, or 0 at the deadline. */
int ct_proc_wait_for(struct ct_proc *p, const char *text, int timeout_ms);
/* Wait for exit; returns the status, or -1 (killed) at the deadline. */
int ct_proc_wait_exit(struct ct_proc *p, int timeout_ms);

/* A tmux session running one command. */
struct ct_tmux {
	char socket[64];
};

/*
 * Start `command` (a shell command line) in a new 200x50 tmux session.
 * When the command ends the pane shows "[exit N]" and stays.
 */
void ct_tmux_start(struct ct_tmux *t, const char *command);
/* Type literal text. */
void ct_tmux_type(struct ct_tmux *t, const char *text);
/* Press keys by tmux name ("Enter", "Tab", "Up", "C-d"). */
void ct_tmux_key(struct ct_tmux *t, const char *key);
/* The pane's text (with scrollback), malloc'd. */
char *ct_tmux_capture(struct ct_tmux *t);
/* Poll the pane until it holds `text`; returns the capture or NULL at the
 * deadline (the last capture is then written to stderr). */
char *ct_tmux_wait_for(struct ct_tmux *t, const char *text, int timeout_ms);
/* Poll the pane until `text` appears at least `n` times (e.g. the n-th
 * prompt, which says that the command before it is done); returns 1, or
 * 0 at the deadline.  Type control keys (C-d) only after that: the tty
 * consumes them while no prompt is reading. */
int ct_tmux_wait_count(struct ct_tmux *t, const char *text, int n,
		       int timeout_ms);
/* Count the occurrences of `text` in the pane. */
int ct_tmux_count(struct ct_tmux *t, const char *text);
void ct_tmux_kill(struct ct_tmux *t);

/* The console command line for tmux: env + binary + args, shell-quoted. */
void ct_console_command(char *out, size_t len, const char *dir,
			const char *args);

/* Read a whole file (NULL if it cannot be read). */
char *ct_read_file(const char *path);
/* Write a file with mode 0600. */
void ct_write_file(const char *path, const char *text);

/* Count occurrences of `needle` in `hay`. */
int ct_count(const char *hay, const char *needle);

/* The "rendering" test case (spec/console_render_test.c).  Needs
 * <check.h> included first. */
#ifdef CHECK_H
TCase *console_render_tcase(void);
#endif

#endif /* CONSOLE_HARNESS_INTERNAL_H */
