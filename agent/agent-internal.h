/*
 * agent-internal.h - private declarations shared by libvmheap-agent's
 * source files.  Nothing here is installed.
 *
 * Who calls whom (an arrow is "calls functions of"; there is no circle,
 * and scripts/check-agent-calls.sh, a suite of make check, keeps it so):
 *
 *   server.c     the lifecycle (start, stop, fork and exit hooks), the loop
 *    |-- settings.c   the configuration at start: defaults, checks, dirs
 *    |-- conn.c       connections and the replies still owed to them (it
 *    |    |           alone sends on a socket)
 *    |    |-- job.c        delivers ended jobs' results back to conn.c
 *    |    `-- dispatch.c   one request -> an outcome (ok, error, pending)
 *    |         `-- vars.c      the variable tree (get / set / list)
 *    |              |-- dump.c       the dump: a long job, its last result
 *    |              |    |-- dump_file.c  target, temporary, publish, sweep
 *    |              |    |-- fork_guard.c refuses a fork memory cannot take
 *    |              |    |    `-- fork_cost.c, cgroup.c  estimate, limits
 *    |              |    `-- walk.c       the walk, stopped or forked
 *    |              |         `-- child_guard.c, native_dump.c
 *    |              |-- histogram.c  the live histogram (walk.c's walk)
 *    |              |-- fork_estimate.c  system.fork_estimate as a job
 *    |              `-- native_vars.c    the tracker's variables
 *    |-- run_agent.c  vmheap-run's native agent steps aside at a start
 *    `-- discovery.c  the discovery file (and /proc helpers)
 *   leaves, used by any of the above: errors.c, frame.c, token.c,
 *   dump_dir.c (the dump directory held by fd), job.c
 *   client.c and config.c serve the client and the host, dump_now.c a
 *   host's dump with no agent running; no file above calls them.
 *   client.c fills its replies through reply.c (a leaf); value.c's
 *   readers serve a host's values and a client's replies alike.
 *
 * A set that starts a long job (system.memory.dump) does not reply: it
 * returns AGENT_PENDING with the job's handle, dispatch.c passes that on,
 * and conn.c records that the connection and request id are owed that
 * job's reply.  When the job ends, job.c wakes conn.c, which delivers
 * the result (agent_jobs_deliver) on the loop thread: it sends the reply,
 * or drops it when the connection has gone meanwhile.  job.c reaches
 * conn.c only through the two function pointers it was given (wake and
 * the completion callback), so every arrow above stays one-way.
 */
#ifndef VMHEAP_AGENT_INTERNAL_H
#define VMHEAP_AGENT_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <time.h>

#include <msgpack.h>

#include "vmheap_agent.h"

struct event_base;
struct event;
struct evconnlistener;
struct bufferevent;
struct agent_conn;

/* Everything declared here is internal to the library: hidden from the
 * shared object's symbol table (and from a host that links the archive
 * into its own shared object). */
#pragma GCC visibility push(hidden)

/* Defaults (documented in PROTOCOL.md). */
#define AGENT_DEFAULT_MAX_CLIENTS 128
#define AGENT_MAX_MAX_CLIENTS 1000
#define AGENT_DEFAULT_IDLE_TIMEOUT_MS 300000
#define AGENT_DEFAULT_FRAME_TIMEOUT_MS 10000
#define AGENT_DEFAULT_DUMP_TIMEOUT_S 3600
/* Fork dumps are refused when MemAvailable is below this share of the
 * VM's RSS (config.dump.fork_min_free "auto"; see doc/attach-and-dump.md,
 * "Fork mode"), or, when it is, below the estimate of fork_cost.c. */
#define AGENT_FORK_RSS_PERCENT 100
/* fork_cost.c: how long the probe child lives, and the dump speed taken
 * before a fork dump was measured (bytes of RSS per second). */
#define AGENT_FORK_PROBE_MS 100
#define AGENT_FORK_PRIOR_BYTES_PER_S (100LL * 1024 * 1024)
/* A client whose unread replies pass this stops being read from. */
#define AGENT_OUTPUT_HIGH_WATER (1u * 1024u * 1024u)
/* Unread replies of all clients together: past it, a client that queues
 * stops being read from, and a reply larger than AGENT_OUTPUT_SMALL_REPLY
 * is replaced by a short `limit` error; small replies (an honest client's
 * get) still go out (PROTOCOL.md, limits). */
#define AGENT_OUTPUT_TOTAL_MAX (32u * 1024u * 1024u)
#define AGENT_OUTPUT_SMALL_REPLY (64u * 1024u)
/* Before its token is accepted a connection may send frames of at most
 * this many bytes (an auth request is about 50).  When every client slot
 * is taken, a connection without the token makes way for a new one
 * (conn.c, drop_oldest_unauthed). */
#define AGENT_PREAUTH_MAX_FRAME 4096u
/* MessagePack objects in one request, counted before it is decoded. */
#define AGENT_MAX_REQUEST_OBJECTS 4096u

/* ------------------------------------------------------------ errors.c */

/* snprintf into err (if non-NULL) and return code. */
int agent_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* snprintf for a message that may be cut short (buf non-NULL). */
void agent_msgf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 1 when errno value e means the disk or a limit is full (ENOSPC, EFBIG,
 * EDQUOT): reported as VMHEAP_ENOSPC. */
int agent_is_nospace(int e);

/* Seconds on CLOCK_MONOTONIC since *t0. */
static inline double agent_seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The protocol's code word for an error code ("busy", "exists", ...). */
const char *agent_code_word(int code);

/* -------------------------------------------------------- native_vars.c */

/* config.native.track and system.native.sites (the malloc tracker's
 * variables; getters and setter as in vars.c's table). */
int agent_native_get_track(struct vmheap_agent *a, const char *name,
			   msgpack_packer *pk, char *err, size_t errlen);
int agent_native_set_track(struct vmheap_agent *a, const msgpack_object *value,
			   msgpack_packer *pk, uint64_t *job, char *err,
			   size_t errlen);
/* system.native.bytes: the tracker's live bytes (native_vars.c). */
int agent_native_get_bytes(struct vmheap_agent *a, const char *name,
			   msgpack_packer *pk, char *err, size_t errlen);
/* system.native.sites: the top native stacks by live bytes. */
int agent_native_get_stacks(struct vmheap_agent *a, const char *name,
			    msgpack_packer *pk, char *err, size_t errlen);
/* native_load.c: the malloc tracker's function `name` (vmheap_native.h),
 * or NULL when the tracker is not loaded (neither preloaded by vmheap-run
 * nor loaded by agent_native_load). */
void *agent_native_api(const char *name);
/* native_vars.c: the members "site" (its innermost frames named with
 * dladdr, then the VM's line), "frames" ([module path, offset] each) and
 * "vm" (the VM's line or nil) of a native stack's map, three pairs (the
 * protocol's keys, PROTOCOL.md). */
struct vmheap_native_stack;
void agent_native_pack_stack(msgpack_packer *pk,
			     const struct vmheap_native_stack *v);
/* native_leaks.c: `get system.native.leaks`, the leak scan now, as a
 * long job (AGENT_PENDING with *job), or a negative code with a message. */
int agent_native_leaks_start(struct vmheap_agent *a, uint64_t *job, char *err,
			     size_t errlen);
/* native_load.c: load the tracker into a VM that runs without it and
 * route the VM's allocator calls to it (a no-op when it is loaded).  0,
 * or a negative code with the reason in err. */
int agent_native_load(char *err, size_t errlen);
/* native_load.c: route the allocator calls of modules loaded since
 * (vmheap_native_route; nothing when the tracker was preloaded).  0, or
 * a negative code with the reason in err (err may be NULL, errlen 0). */
int agent_native_route(char *err, size_t errlen);
/* native_dump.c: the tracker's native stacks and modules, taken before a heap
 * walk (NULL when the tracker is absent or off), and written into the
 * dump's native section after it.  In a forked child (`forked`) the
 * snapshot comes from the tracker's leak scan (vmheap_native_scan) and
 * carries each stack's leak classification. */
struct agent_native_snap;
struct agent_native_snap *agent_native_snapshot(int forked);
/* Just before the fork of a dump, on the forking thread: while the
 * tracker tracks, it notes the other threads' stack pointers for the
 * child's leak scan (vmheap_native_scan_prepare). */
void agent_native_before_fork(void);
int agent_native_write(vmheap_writer *wr, const struct agent_native_snap *s);
/* What snapshot s's leak scan read into *note (scanned 0: none ran). */
struct agent_scan_note;
void agent_native_scan_note(const struct agent_native_snap *s,
			    struct agent_scan_note *note);
void agent_native_snap_free(struct agent_native_snap *s);
/* native_charge.c: charge native stacks v[0..n) to vmheap's own memory
 * (VMHEAP_NATIVE_OWN) or to a housekeeping activity
 * (vmheap_agent_native_activity) where their frames say so, merging the
 * stacks that then read the same (and their leaks[], parallel to v, when
 * leaks is not NULL); returns how many are left. */
struct vmheap_native_stack;
struct vmheap_native_leaks;
size_t agent_native_charge(struct vmheap_native_stack *v,
			   struct vmheap_native_leaks *leaks, size_t n);
/* The memory figures of a dump's header: the RSS of process `pid` (the
 * VM, also from a forked child) and this process's mallinfo2.  0, or -1
 * when /proc cannot be read (rss is then 0). */
int agent_process_memory(pid_t pid, struct vmheap_process_memory *m);

/* -------------------------------------------------------- run_agent.c */

/* Ask vmheap-run's native-only agent (hosts/native), when it runs in
 * this process and is not the caller's own library, to stop and leave
 * the process to the agent that starts now (run_agent.c). */
void agent_run_agent_yield(void);

/* ------------------------------------------------------------- frame.c */

/*
 * Check that data[0..len) is exactly one well-formed MessagePack object
 * whose container counts fit the bytes present (so that decoding it can
 * never allocate more than a small multiple of len).  Returns 0, or -1
 * with a reason in err.
 */
int frame_check(const char *data, size_t len, char *err, size_t errlen);

/*
 * Decode a frame payload into `out` (initialised by the caller with
 * msgpack_unpacked_init).  It must be one MessagePack array.  Returns 0
 * or -1 with a reason in err.
 */
int frame_decode(const char *data, size_t len, msgpack_unpacked *out, char *err,
		 size_t errlen);

/*
 * frame_decode that also refuses a payload of more than max_objects
 * MessagePack objects (0: no limit), counted before msgpack-c sees it:
 * msgpack-c spends 24 bytes on each (a 1 MiB frame of nils would take
 * 24 MiB).  The agent decodes requests with AGENT_MAX_REQUEST_OBJECTS.
 */
int frame_decode_limited(const char *data, size_t len, uint64_t max_objects,
			 msgpack_unpacked *out, char *err, size_t errlen);

/* Start a frame in `sb`: appends a 4-byte placeholder for the length. */
void frame_begin(msgpack_sbuffer *sb);

/* Fill in the length of the frame started at offset `start` of `sb`.
 * Returns 0, or -1 when the payload exceeds VMHEAP_MAX_FRAME_BYTES. */
int frame_end(msgpack_sbuffer *sb, size_t start);

/* Big-endian length of a frame header. */
uint32_t frame_length(const unsigned char hdr[4]);

/* Pack a NUL-terminated string. */
void frame_pack_str(msgpack_packer *pk, const char *s);

/* Copy a msgpack string object into buf (NUL-terminated); -1 if it is
 * not a string, is too long, or holds a NUL byte. */
int frame_copy_str(const msgpack_object *o, char *buf, size_t buflen);

/* A bool from true/false, 0/1, yes/no, on/off (any case): 0 with *out
 * set, or -1 if the value is none of them. */
int agent_want_bool(const msgpack_object *o, int *out);

/* ------------------------------------------------------------- token.c */

/* Fill hex (33 bytes) with 128 random bits from getrandom(). */
int agent_token_new(char hex[33], char *err, size_t errlen);

/* Constant-time comparison of a received token with the expected one:
 * 1 when equal.  Runs in time independent of where they differ. */
int agent_token_equal(const char *expected, const char *got, size_t got_len);

/* --------------------------------------------------------- discovery.c */

/* Write the discovery file for `a` (atomically).  Sets a->discovery_path. */
int agent_discovery_write(struct vmheap_agent *a, char *err, size_t errlen);

/* Remove the discovery file if this process created it. */
void agent_discovery_remove(struct vmheap_agent *a);

/* Start time of process `pid` in clock ticks since boot (field 22 of
 * /proc/<pid>/stat), or -1. */
long long agent_proc_start_ticks(pid_t pid);

/* /proc/self/cmdline with NULs turned into spaces, sanitised. */
void agent_read_cmdline(char *buf, size_t buflen);

/* --------------------------------------------------------------- job.c */

/* A setter's return value when it started a long job: no reply yet. */
#define AGENT_PENDING 1

/* Longest error message of a job, with its NUL. */
#define AGENT_JOB_MESSAGE_MAX 512

/* The registry of long jobs (opaque). */
struct agent_jobs;

/* How a job ended: a packed reply value, or an error. */
struct agent_job_result {
	int code;	     /* 0, or a negative code */
	const char *message; /* when code < 0 (may be empty) */
	const char *value;   /* when code == 0: one packed MessagePack value */
	size_t value_len;
};

/*
 * A job's body, run on the job's own thread.  It packs its reply value
 * into `value` and returns 0, or returns a negative code with a message
 * in err.  `arg` is the registry's copy of the bytes given to
 * agent_job_start.
 */
typedef int (*agent_job_run_fn)(void *arg, msgpack_packer *value, char *err,
				size_t errlen);

/* Called by agent_jobs_deliver, on its caller's thread, once per ended
 * job.  `res` is valid during the call only. */
typedef void (*agent_job_done_fn)(void *arg, uint64_t handle,
				  const struct agent_job_result *res);

/*
 * Create a registry.  wake(arg) is called on a job's thread when the job
 * has ended (it should make the owner call agent_jobs_deliver); done is
 * the completion callback.  Returns 0 or VMHEAP_ENOMEM.
 */
int agent_jobs_new(struct agent_jobs **out, void (*wake)(void *arg),
		   agent_job_done_fn done, void *arg);

/*
 * Start a job of `kind` on a thread of its own, with a copy of
 * arg[0..arg_size).  Returns 0 with its handle (never 0) in *handle;
 * VMHEAP_AGENT_EBUSY when a job of the same kind is running or the
 * registry is stopping; VMHEAP_ENOMEM or VMHEAP_AGENT_ESYS.  A job stops
 * counting as running as soon as its body returns, before its result is
 * delivered.  Any thread.
 */
int agent_job_start(struct agent_jobs *j, const char *kind,
		    agent_job_run_fn run, const void *arg, size_t arg_size,
		    uint64_t *handle);

/*
 * agent_job_start for a request's reply: AGENT_PENDING when the job
 * started; else the code with a message in err: `busy` (what the client
 * should hear while one runs) for VMHEAP_AGENT_EBUSY, "cannot start the
 * `kind`: reason" for the rest.
 */
int agent_job_start_for_reply(struct agent_jobs *j, const char *kind,
			      agent_job_run_fn run, const void *arg,
			      size_t arg_size, uint64_t *handle,
			      const char *busy, char *err, size_t errlen);

/* 1 while a job of `kind` runs.  Any thread. */
int agent_job_running(struct agent_jobs *j, const char *kind);

/* Hand every ended job's result to the completion callback and forget
 * the job.  Returns how many were delivered.  The owner's thread. */
int agent_jobs_deliver(struct agent_jobs *j);

/* Refuse new jobs and wait until every running job has ended and woken
 * its owner (their results stay until delivered or freed). */
void agent_jobs_stop(struct agent_jobs *j);

/* Stop, drop the results nobody delivered, and free the registry. */
void agent_jobs_free(struct agent_jobs *j);

/* Block SIGPIPE on the calling thread (the loop thread and each job's). */
void agent_block_sigpipe(void);

/* The calling thread is the agent's own: when the malloc tracker is
 * loaded, its allocations stay out of a malloc trace
 * (vmheap_native_own_thread; native_vars.c). */
void agent_native_own_thread(void);

/* -------------------------------------------------------------- dump.c */

/* Result of one dump. */
/* What a dump's leak scan read (the native section's `leaks` key):
 * `scanned` 0 when the dump has no scan. */
struct agent_scan_note {
	int scanned;
	uint64_t blocks, skipped_mappings, skipped_bytes;
};

struct agent_dump_result {
	int code;			     /* 0 or a negative code */
	char message[AGENT_JOB_MESSAGE_MAX]; /* when code < 0 */
	char path[PATH_MAX];		     /* absolute path of the file */
	uint64_t objects;
	uint64_t bytes; /* sum of shallow sizes */
	uint64_t file_bytes;
	double seconds;
	int forked;
	int gc;
	/* stale temporary files of dead writers removed since the last
	 * successful dump (at start, before dumps) */
	uint64_t removed_tmp_files, removed_tmp_bytes;
	struct agent_scan_note scan; /* the leak scan, when it ran */
};

/*
 * Start a dump of `path` (as the client sent it) as a long job of kind
 * "dump".  Returns AGENT_PENDING with the job's handle in *job (its
 * result is the reply map of PROTOCOL.md section 7, or the dump's error),
 * or a negative code with a message (VMHEAP_AGENT_EBUSY while a dump
 * runs).
 */
int agent_dump_start(struct vmheap_agent *a, const char *path, uint64_t *job,
		     char *err, size_t errlen);

/* 1 while a dump runs. */
int agent_dump_running(struct vmheap_agent *a);

/* Run a dump synchronously (a dump job's body). */
void agent_dump_run(struct vmheap_agent *a, const char *path,
		    struct agent_dump_result *res);

/* The last successful dump's result: 1 with *out set, or 0 if none. */
int agent_dump_last(struct vmheap_agent *a, struct agent_dump_result *out);

/* --------------------------------------------------------- dump_file.c */

/*
 * Open the directory that will hold the dump of `path` (as the client
 * sent it, absolute inside the dump directory or relative to it), each
 * component without following symbolic links and refusing "..": its fd
 * (the caller closes it), with the file's last component in *name
 * (pointing into rel[rellen], a copy of the path) and res->path the
 * plain absolute name of the file.  -1 with res->code and res->message
 * (VMHEAP_AGENT_EPATH, VMHEAP_AGENT_ESYS) when the path is refused.
 */
int agent_dump_target(struct vmheap_agent *a, const char *path, char *rel,
		      size_t rellen, const char **name,
		      struct agent_dump_result *res);

/*
 * Sweep the dump's directory (dfd), then create the dump's temporary
 * file there (O_EXCL, mode 0600; its name, with this process's pid and
 * start time, in tmp[tmplen]): its fd, or -1 with res->code and
 * res->message set.
 */
int agent_dump_tmp_create(struct vmheap_agent *a, int dfd, char *tmp,
			  size_t tmplen, struct agent_dump_result *res);

/*
 * Close fd and give the temporary file `tmp` its name `name` in dfd
 * without replacing a file (vmheap_file_publish), then fsync dfd.  0, or
 * -1 with res->code (VMHEAP_AGENT_EEXIST: the name appeared meanwhile)
 * and res->message; the temporary is then the caller's to remove.
 */
int agent_dump_publish(int dfd, int fd, const char *tmp, const char *name,
		       struct agent_dump_result *res);

/*
 * Does a file name in a dump directory name the temporary file of a dead
 * writer?  1 when it is ".vmheap-dump.<pid>-<start>.<hex>.tmp" and no
 * process has <pid>, or the one that has it did not start at <start>
 * (clock ticks, a reused pid); 0 for a live writer or any other name.
 */
int agent_tmp_writer_gone(const char *name);

/*
 * Remove, from the directory open as dfd, the temporary dump files whose
 * writer is gone (its pid dead, or reused by a process that started at
 * another time), and add their count and bytes to a->swept_*, which the
 * next successful dump's reply reports.  Any thread.
 */
void agent_dump_sweep(struct vmheap_agent *a, int dfd);

/* -------------------------------------------------------- fork_guard.c */

/* The MemAvailable a fork dump needs now, in bytes (0: never refused):
 * config.dump.fork_min_free, or AGENT_FORK_RSS_PERCENT of the RSS. */
long long agent_fork_min_free(struct vmheap_agent *a);

/*
 * The fork guard: 1 with res->code and res->message set (a refusal that
 * says what applied and what to do) when the memory a fork may take
 * (agent_mem_limit) is below what a fork walk with config.dump.gc `gc`
 * would copy: config.dump.fork_min_free when set; in auto, at most the
 * RSS, and below it the estimate of fork_cost.c.  0: go ahead.
 */
int agent_fork_refused(struct vmheap_agent *a, int gc,
		       struct agent_dump_result *res);

/* -------------------------------------------------------------- walk.c */

/* Read len bytes from fd (retrying on EINTR): how many were read, fewer
 * at end of file or on an error. */
ssize_t agent_read_full(int fd, void *buf, size_t len);

/*
 * Fill the writer options that come from the host and the VM (name,
 * version, pid, kind names, and whether its walk writes names and sites),
 * the same for every walk into a writer: a dump's and the live
 * histogram's.
 */
struct vmheap_writer_options;
void agent_writer_options(const struct vmheap_agent *a,
			  struct vmheap_writer_options *opt);

/*
 * What a walk other than a dump does (agent_walk_with): run on the
 * VM's safe point or in its forked child, it may call the host's
 * walk_heap and writes its result into fd.  Returns 0, or a negative
 * code with a message in err.
 */
typedef int (*agent_walk_body_fn)(struct vmheap_agent *a, int fd, void *arg,
				  char *err, size_t errlen);

/*
 * Run body(a, fd, arg) as a dump runs its walk: in a forked child of the
 * VM (forked != 0: refused as a fork dump is while MemAvailable is below
 * what the child may copy; after prepare_child(gc), killed after
 * config.dump.timeout; fd is then fsync'd, so a regular file or memfd)
 * or inside run_stopped.  Returns 0, or a negative code with a message.
 * A job's thread.
 */
int agent_walk_with(struct vmheap_agent *a, int fd, int forked, int gc,
		    agent_walk_body_fn body, void *arg, char *err,
		    size_t errlen);

/*
 * A dump's walk: the whole heap written into fd (with the tracker's
 * native section when it is on) with the writer flags `flags`, in a
 * forked child of the VM (forked != 0, after prepare_child(gc); no fork
 * guard here: the caller's) or inside run_stopped.  Returns 0 with the
 * objects and bytes written, or a negative code with a message in err.
 * fd is fsync'd by a forked child only.  A job's thread.
 */
int agent_walk_dump(struct vmheap_agent *a, int fd, int forked, int gc,
		    uint32_t flags, uint64_t *objects, uint64_t *bytes,
		    struct agent_scan_note *scan, char *err, size_t errlen);

/* --------------------------------------------------------- fork_cost.c */

/* What the last fork dumps measured (struct vmheap_agent, under lock). */
struct agent_fork_cost {
	uint64_t dumps;		   /* fork dumps measured */
	double seconds;		   /* the last one's walk, fork to exit */
	long long rss;		   /* the VM's RSS at its fork */
	long long parent_bytes;	   /* the VM's minor faults meanwhile */
	long long child_bytes[2];  /* its child's own, by config.dump.gc */
	long long child_rss[2];	   /* the RSS at that fork; 0: none yet */
};

/* How much memory a fork may take, and what said so (cgroup.c). */
struct agent_mem_limit {
	long long available;	 /* bytes: the tightest of what follows */
	long long mem_available; /* /proc/meminfo's MemAvailable, or -1 */
	/* the cgroup level that applied (cg_limit -1: none did) */
	long long cg_limit, cg_usage, cg_inactive_file;
	char source[32];	   /* "MemAvailable", "cgroup v1", "cgroup v2" */
	char cgroup[PATH_MAX + 8]; /* that level's directory, or "" */
};

/* The guard's estimate of a fork dump's copy-on-write memory. */
struct agent_fork_estimate {
	long long rss;		/* the VM's RSS now */
	double write_rate;	/* bytes/s the VM copied during the probe */
	double seconds;		/* the dump's expected duration */
	int seconds_measured;	/* 1: from a fork dump, 0: the prior */
	long long child_bytes;	/* the child's own copies expected */
	int child_measured;	/* 1: from a fork dump, 0: the whole RSS */
	long long parent_bytes; /* the last fork dump's VM faults, or -1 */
	long long need;		/* min(rss, child + write_rate x seconds) */
	int probe_skipped;	/* 1: a cgroup leaves less than the RSS (the
				   limit below): no probe, need is the RSS */
	struct agent_mem_limit limit; /* what a fork may take now */
};


/* Minor page faults of process `pid` (0: this one), from /proc, or -1. */
long long agent_minor_faults(pid_t pid);

/* This process's resident set in bytes, or -1. */
long long agent_rss_bytes(void);

/* Estimate what a fork dump with config.dump.gc `gc` would copy: forks a
 * probe child for AGENT_FORK_PROBE_MS (fork_cost.c's comment).  Returns 0,
 * or -1 with errno set when /proc or fork fails.  Any thread. */
int agent_fork_estimate(struct vmheap_agent *a, int gc,
			struct agent_fork_estimate *e);

/* Record a finished fork dump: its walk's seconds, the RSS at its fork,
 * its child's minor faults and the VM's meanwhile (-1: unknown). */
void agent_fork_record(struct vmheap_agent *a, int gc, double seconds,
		       long long rss, long long child_faults,
		       long long parent_faults);

/* ----------------------------------------------------- fork_estimate.c */

/* Start `get system.fork_estimate` as a long job (its own thread):
 * AGENT_PENDING with the handle in *job, or a negative code (busy while
 * one runs) with a message in err. */
int agent_fork_estimate_start(struct vmheap_agent *a, uint64_t *job,
			      char *err, size_t errlen);

/* ------------------------------------------------------------ cgroup.c */

/* MemAvailable of /proc/meminfo in bytes, or -1; the environment's
 * VMHEAP_AGENT_TEST_MEM_AVAILABLE (bytes) pretends, for tests of the
 * guard (PROTOCOL.md). */
long long agent_mem_available(void);

/*
 * Fill *m: MemAvailable (agent_mem_available, with its test hook), and
 * every memory cgroup level of this process, v2 and v1, from its own
 * cgroup up (cgroup.c's comment: limit less usage, the reclaimable
 * inactive_file not counted as used); m->available is the tightest.
 * Returns 0, or -1 when nothing at all is known (m->available -1).
 */
int agent_mem_limit(struct agent_mem_limit *m);

/* ------------------------------------------------------- child_guard.c */

/*
 * In a child just forked from the VM `parent` (the VM's pid, read before
 * the fork): make sure the child dies with its VM and within `timeout_s`
 * seconds, stopped or not.  PR_SET_PDEATHSIG(SIGKILL) kills it, stopped
 * or not, when the thread that forked ends (with the VM, or before it:
 * the hosts fork on a thread that lives as long as the agent); a thread
 * of the child checks every AGENT_CHILD_GUARD_MS that getppid() is still
 * `parent` and that `report_fd` (the write end of a pipe whose read end
 * only the VM holds) has a reader, and _exits (AGENT_CHILD_EXIT_ORPHAN)
 * when not, or (AGENT_CHILD_EXIT_TIMEOUT) one second after the deadline:
 * the VM's own kill at the deadline comes first when the VM runs, the
 * guard's only when the VM cannot act (stopped); the VM takes either for
 * the same timeout.  Never returns an error: a guard thread that cannot
 * start leaves the death signal and the parent's own kill at the
 * deadline.
 */
#define AGENT_CHILD_GUARD_MS 100
#define AGENT_CHILD_EXIT_ORPHAN 3
#define AGENT_CHILD_EXIT_TIMEOUT 4
void agent_child_guard(pid_t parent, int report_fd, int timeout_s);

/* ---------------------------------------------------------- dump_dir.c */

/*
 * Open the directory `in` once and check it (messages begin "WHAT IN: "
 * and the system's words, or with `what` NULL "IN does not exist", "IN is
 * not a directory"):
 * a directory, and with `probe` one where this process can really create
 * a file.  Returns its fd (O_DIRECTORY, close-on-exec; the caller owns
 * it) with its resolved name in real[reallen], or a negative
 * VMHEAP_AGENT_E* code with the message in err.
 */
int agent_dump_dir_check(const char *in, const char *what, int probe,
			 char *real, size_t reallen, char *err, size_t errlen);

/* Make `dfd` (named `real`) the dump directory; the agent owns dfd and
 * closes the one it held.  Any thread. */
void agent_dump_dir_set(struct vmheap_agent *a, int dfd, const char *real);

/* A new fd of the dump directory (the caller closes it), with the name it
 * was set by in name[len] and the path where it is now in where[len]
 * (the name, if /proc cannot tell better); -1 with errno when there is
 * none. */
int agent_dump_dir_open(struct vmheap_agent *a, char *name, char *where,
			size_t len);

/* Copy the dump directory (a->dump_dir, under a->lock). */
void agent_dump_dir(struct vmheap_agent *a, char *buf, size_t len);


/* ------------------------------------------------------- histogram.c */

/* The variable that returns the live histogram. */
#define AGENT_HISTOGRAM_VAR "system.memory.histogram"

/*
 * Start the live histogram (get system.memory.histogram) as a long job
 * of kind "histogram": the heap walked like a dump (forked per
 * config.dump.fork, after a GC per config.dump.gc), counted per class
 * name in the walker.  Returns AGENT_PENDING with the job's handle, or a
 * negative code with a message (VMHEAP_AGENT_EBUSY while one runs).
 */
int agent_histogram_start(struct vmheap_agent *a, uint64_t *job, char *err,
			  size_t errlen);

/* Pack a dump result as the reply map. */
void agent_pack_dump_result(msgpack_packer *pk,
			    const struct agent_dump_result *r);

/* ------------------------------------------------------------- vars.c */

/* A reply as the client holds it (client.c fills it, reply.c reads it):
 * the frame decoded into `storage`, `value` its ok value. */
struct vmheap_reply {
	int ok;
	char code[32];
	char message[512];
	msgpack_object value;	  /* when ok */
	msgpack_unpacked storage; /* the frame */
	msgpack_sbuffer *encoded; /* vmheap_reply_msgpack's, made once */
};

/* reply.c: a new empty reply (not ok, "" code and message), or NULL. */
vmheap_reply *agent_reply_new(void);
/* Empty it again (frees the frame). */
void agent_reply_clear(vmheap_reply *r);

/* Sink that packs a reply value. */
struct agent_value {
	msgpack_sbuffer sb;
	msgpack_packer pk;
};

/*
 * get/set/list on the variable tree; loop thread.  They pack the reply
 * value into v and return 0, or return a negative code with a message.
 * A set that starts a long job (system.memory.dump), or a get that does
 * (system.memory.histogram), returns AGENT_PENDING with the job's handle
 * in *job: the reply comes when the job ends.
 */
int agent_var_get(struct vmheap_agent *a, const char *name,
		  struct agent_value *v, uint64_t *job, char *err,
		  size_t errlen);
int agent_var_set(struct vmheap_agent *a, const char *name,
		  const msgpack_object *value, struct agent_value *v,
		  uint64_t *job, char *err, size_t errlen);
int agent_var_list(struct vmheap_agent *a, const char *prefix,
		   struct agent_value *v, char *err, size_t errlen);

/* ---------------------------------------------------------- dispatch.c */

/* What to answer one request with; conn.c sends it. */
struct agent_outcome {
	enum {
		AGENT_OUTCOME_OK,      /* [id, "ok", value] */
		AGENT_OUTCOME_ERROR,   /* [id, "error", word(code), message] */
		AGENT_OUTCOME_PENDING, /* the reply is owed: job's result */
	} kind;
	int has_id; /* 0: the id is sent as nil */
	uint64_t id;
	struct agent_value value; /* OK: the packed value */
	int code;		  /* ERROR */
	char message[600];	  /* ERROR */
	int close;		  /* ERROR: close the connection after it */
	uint64_t job;		  /* PENDING: the job's handle */
};

/*
 * Decide the answer to one decoded frame from a connection whose
 * authentication state is *authed (set to 1 by a good auth).  Fills `out`
 * (release it with agent_outcome_release).  Loop thread.
 */
void agent_dispatch(struct vmheap_agent *a, int *authed,
		    const msgpack_object *msg, struct agent_outcome *out);

/* Free what an outcome holds. */
void agent_outcome_release(struct agent_outcome *out);

/* ---------------------------------------------------------- settings.c */

/*
 * Set up the agent `a` (allocated and zeroed by vmheap_agent_start, its
 * lock, pid and fds initialized) from cfg and host: the defaults for what
 * cfg leaves out, the checks of vmheap_agent_start's documentation (a
 * loopback address, max_clients), the dump directory (probed when cfg
 * names it) and the discovery directory, both opened and held, the token,
 * and a first sweep of the dump directory.  0, or a negative code with a
 * message in err; what was opened is then closed with the agent.
 */
int agent_configure(struct vmheap_agent *a,
		    const struct vmheap_agent_config *cfg,
		    const struct vmheap_agent_host *host, char *err,
		    size_t errlen);

/* -------------------------------------------------------------- conn.c */

struct agent_conn; /* a client connection (conn.c's own) */
struct agent_owed; /* a reply owed to a connection (conn.c's own) */
struct agent_job_result;
struct sockaddr;

/* The listener's callback (libevent's evconnlistener_cb): take the new
 * connection fd, or refuse it (or make way for it) under a flood. */
void agent_conn_accept(struct evconnlistener *l, int fd, struct sockaddr *sa,
		       int socklen, void *arg);

/* The events of the loop (libevent's event_callback_fn, arg the agent):
 * deliver the results of ended jobs (jobs_ev); malloc_trim after
 * connections closed (trim_ev). */
void agent_conn_jobs_cb(int fd, short what, void *arg);
void agent_conn_trim_cb(int fd, short what, void *arg);

/* The job registry's wake (any thread: activates jobs_ev) and completion
 * callback (loop thread: sends a job's result to the connection owed it,
 * or drops it when that connection has gone). */
void agent_conn_jobs_wake(void *arg);
void agent_conn_job_done(void *arg, uint64_t job,
			 const struct agent_job_result *res);

/* At stop, on the loop thread: write what every connection still has
 * queued, waiting at most STOP_FLUSH_MS (conn.c) in all. */
void agent_conns_flush(struct vmheap_agent *a);

/* Close and free every connection (the loop has ended). */
void agent_conns_free(struct vmheap_agent *a);

/* ------------------------------------------------------------ server.c */

struct vmheap_agent {
	pid_t pid;	  /* the process that started the agent */
	atomic_int stale; /* set in a forked child */
	/* A failed start: the agent holds only `error` (vmheap_agent.h,
	 * "Failed constructors"). */
	int failed;
	char error[512];
	const struct vmheap_agent_host *host;

	char bind[64];
	uint16_t port;
	char dump_dir[PATH_MAX]; /* absolute, resolved; under lock (set at
				    run time by config.dump.dir) */
	int dump_dfd;		 /* that directory, opened once; under lock */
	char tmpdir[PATH_MAX];
	int tmp_dfd; /* the discovery directory, opened once */
	int max_clients;
	int idle_timeout_ms;
	int frame_timeout_ms;
	atomic_int dump_fork;	   /* 0/1 */
	atomic_int dump_gc;	   /* 0/1 */
	atomic_int dump_timeout_s; /* a forked dump child is killed after it */
	atomic_llong fork_min_free; /* bytes; -1: auto (a share of the RSS) */
	struct agent_fork_cost fork_cost; /* under lock (fork_cost.c) */

	char token[33];
	char discovery_path[PATH_MAX];
	char discovery_name[NAME_MAX + 1]; /* in tmp_dfd */
	int discovery_written;
	struct timespec start_mono;
	time_t started;
	char vm[256]; /* "name version" */

	struct event_base *base;
	struct evconnlistener *listener;
	struct event *stop_ev;
	struct event *jobs_ev; /* a job ended: deliver on the loop */
	struct event *trim_ev; /* malloc_trim after connections close */
	pthread_t loop_thread;
	int loop_running;

	struct agent_conn *conns; /* loop thread only */
	int nconns;
	struct agent_owed *owed; /* loop thread only */
	atomic_int *fd_slots;	 /* fds a forked child closes */
	int nslots;
	atomic_int listen_fd;

	struct agent_jobs *jobs; /* long jobs (dumps) */

	/* dump_dir, and the last successful dump (dump.c), under lock */
	pthread_mutex_t lock;
	int has_last;
	struct agent_dump_result last;
	uint64_t swept_files, swept_bytes; /* agent_dump_sweep(), not yet
					      told in a reply */
};

#pragma GCC visibility pop

#endif /* VMHEAP_AGENT_INTERNAL_H */
