/*
 * reliability-internal.h - helpers of the reliability suites
 * (spec/reliability_test.c: load; spec/reliability_faults_test.c: faults,
 * valgrind, fuzz regressions): scratch directories, the real sample VM,
 * an embedded sample VM with more client slots, running the real tools.
 */
#ifndef RELIABILITY_INTERNAL_H
#define RELIABILITY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vmheap_agent.h"

/* Non-zero in the sanitizer build (SAN=1). */
#if defined(__SANITIZE_ADDRESS__)
#define RL_SANITIZED 1
#else
#define RL_SANITIZED 0
#endif

/* $VMHEAP_BUILD/bin/<name> (static ring of buffers). */
const char *rl_bin(const char *name);

/* $VMHEAP_SRC/<rel>. */
const char *rl_src(const char *rel);

/* A fresh scratch directory under $TMPDIR or /tmp (its own ring of 16
 * buffers, so that rl_bin and rl_src do not overwrite it). */
const char *rl_mkdtemp(const char *tag);

/* rm -rf dir. */
void rl_rmrf(const char *dir);

/* Milliseconds on the monotonic clock. */
int64_t rl_now_ms(void);

/* Sleep ms milliseconds. */
void rl_sleep_ms(int ms);

/* A running VM: the real vmheap-sample, or the embedded one. */
struct rl_vm {
	pid_t pid;
	uint16_t port;
	char token[33];
	char tmpdir[256]; /* discovery directory */
	char dumpdir[256];
	char discovery[512];
};

/*
 * Start $VMHEAP_BUILD/bin/vmheap-sample with VMHEAP_AGENT_TMPDIR=tmpdir
 * and VMHEAP_AGENT_DIR=dumpdir and `args` (NULL-terminated, may be NULL);
 * wait for its start line, read its discovery file.  Returns 0 or -1.
 */
int rl_vm_start(struct rl_vm *vm, const char *tmpdir, const char *dumpdir,
		const char *const *args);

/* Options of the embedded sample VM. */
struct rl_embedded {
	int max_clients; /* the agent's client limit */
	long long
	    fsize_limit; /* RLIMIT_FSIZE in bytes (SIGXFSZ ignored), 0: none */
	const char *leak_class; /* like vmheap-sample --leak CLASS:N, or NULL */
	unsigned leak_per_tick;
};

/*
 * Fork a sample VM (the sample host's heap, mutator and callbacks, linked
 * in) with options vmheap-sample does not have: a client limit (its
 * default is 32), a file size limit.  Same result as rl_vm_start.
 */
int rl_vm_start_embedded(struct rl_vm *vm, const char *tmpdir,
			 const char *dumpdir, const struct rl_embedded *opt);

/* SIGTERM, wait up to 5 s (then SIGKILL).  Returns the wait status. */
int rl_vm_stop(struct rl_vm *vm);

/* Connect and authenticate a client to vm (NULL on failure, printed). */
vmheap_client *rl_connect(const struct rl_vm *vm, int timeout_ms);

/* get `var` as an unsigned integer; -1 on any failure. */
int64_t rl_get_int(vmheap_client *c, const char *var);

/* Result of a finished command. */
struct rl_run {
	int status; /* exit status, 128+signal, or -1 on timeout */
	char *out;  /* stdout, NUL-terminated (malloc) */
	char *err;  /* stderr, NUL-terminated (malloc) */
	double seconds;
};

/*
 * Run argv (argv[0] a path) with `env` extra "K=V" strings (NULL-ended,
 * may be NULL), stdin from `input` (NULL: /dev/null), killing it after
 * timeout_ms.  Returns 0 and fills *r (free with rl_run_free).
 */
int rl_run(const char *const *argv, const char *const *env, const char *input,
	   int timeout_ms, struct rl_run *r);
void rl_run_free(struct rl_run *r);

/* Start argv in the background with stdout/stderr to files; returns the
 * pid (or -1). */
pid_t rl_spawn(const char *const *argv, const char *out_path,
	       const char *err_path);

/* Wait for pid up to timeout_ms; returns status as rl_run, -1 on timeout. */
int rl_wait(pid_t pid, int timeout_ms);

/* Whole file into a malloc'd NUL-terminated buffer (NULL if absent). */
char *rl_slurp(const char *path, size_t *len);

/* Names in dir other than "." and "..", newline-separated (malloc). */
char *rl_ls(const char *dir);

/* Read a whole dump with vmheap_reader_next: 0 when complete, else the
 * error code; objects counted into *objects (may be NULL). */
int rl_read_dump(const char *path, uint64_t *objects);

#endif
