/*
 * vmheap_agent.h - libvmheap-agent: the embeddable agent and its client.
 *
 * A VM embeds the agent by filling in a `struct vmheap_agent_host` and
 * calling vmheap_agent_start().  The agent runs its own thread with a
 * libevent loop, listens on a loopback TCP port, writes a discovery file
 * `<tmpdir>/vmheap-agent.<pid>` (mode 0600) holding the address and a
 * random token, and answers console commands over the protocol described
 * in agent/PROTOCOL.md (the normative text).
 *
 * The client half (vmheap_client_*, vmheap_discovery_*) is what the
 * console and the tests use to find and talk to a running agent.
 *
 * Errors: vmheap.h's convention, the one of every vmheap header (see
 * there, and HACKING.md "Conventions").  In short:
 *  - Functions return 0 on success or a negative code; codes from -1 to
 *    -99 are libvmheap's (see format/vmheap.h), codes from
 *    VMHEAP_AGENT_E... are the agent's.  vmheap_agent_strerror() names
 *    both.  Nothing here exits the process or prints.
 *  - An object (agent, client) keeps the message of its last error:
 *    vmheap_agent_error(), vmheap_client_error().
 *  - Failed constructors (vmheap_agent_start, vmheap_client_connect,
 *    vmheap_client_connect_addr) set *out in every case (only a NULL `out`
 *    is refused, VMHEAP_EINVAL): after a failure *out is a failed object
 *    that holds the reason and is good only for its _error and
 *    _stop/_close functions, or NULL with VMHEAP_ENOMEM when not even that
 *    could be allocated (the _error functions say "out of memory" for
 *    NULL).  So the caller reports and frees *out, whatever happened:
 *
 *	rc = vmheap_client_connect(&c, &info, 5000);
 *	if (rc < 0)
 *		report(vmheap_agent_strerror(rc), vmheap_client_error(c));
 *	...
 *	vmheap_client_close(c);   // also after a failure
 *
 *  - A function without an object (vmheap_agent_config_from_env,
 *    vmheap_discovery_read) takes `char *err, size_t errlen`, writes into
 *    err[0 .. errlen-1] only, and always leaves a NUL-terminated string
 *    there: "" on success, the reason on failure, cut to errlen - 1 bytes
 *    when longer.  errlen 0 asks for no message (err may then be NULL).
 *    The same holds for the buffer the agent hands to a host's set_var (it
 *    holds "" on entry).  (The strings of struct vmheap_agent_info are never
 *    cut: a discovery file with a longer value is refused.)
 */
#ifndef VMHEAP_AGENT_H
#define VMHEAP_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vmheap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Protocol version spoken by this library (see PROTOCOL.md). */
#define VMHEAP_PROTOCOL_VERSION 1
/* Largest frame payload, both directions. */
#define VMHEAP_MAX_FRAME_BYTES (1024u * 1024u)

enum vmheap_agent_error {
	VMHEAP_AGENT_ESYS = -100,      /* a system call failed (errno in message) */
	VMHEAP_AGENT_EPROTO = -101,    /* malformed frame or message */
	VMHEAP_AGENT_EAUTH = -102,     /* token refused */
	VMHEAP_AGENT_EBUSY = -103,     /* a dump is already running */
	VMHEAP_AGENT_EEXIST = -104,    /* dump path exists; never overwritten */
	VMHEAP_AGENT_EPATH = -105,     /* dump path leaves the dump directory */
	VMHEAP_AGENT_ENOTFOUND = -106, /* no such variable / no such agent */
	VMHEAP_AGENT_ETYPE = -107,     /* wrong value type */
	VMHEAP_AGENT_EREADONLY = -108, /* variable cannot be set */
	VMHEAP_AGENT_ECONNECT = -109,  /* cannot connect */
	VMHEAP_AGENT_ECLOSED = -110,   /* peer closed the connection */
	VMHEAP_AGENT_ETIMEOUT = -111,  /* no reply in time */
	VMHEAP_AGENT_EDUMP = -112,     /* the dump failed (message says why) */
	VMHEAP_AGENT_EDISCOVERY = -113,/* discovery file unreadable/malformed/unsafe */
	VMHEAP_AGENT_ELIMIT = -114,    /* too many clients, frame too large */
	VMHEAP_AGENT_ECOMMAND = -115,  /* unknown command (verb) */
	VMHEAP_AGENT_EUNSUPPORTED = -116, /* the VM does not provide this */
};

/* Name an error code from either library. */
VMHEAP_EXPORT
const char *vmheap_agent_strerror(int code);

/* ------------------------------------------------------------- values */

/*
 * A value of the protocol (PROTOCOL.md: MessagePack on the wire), through
 * vmheap's own opaque handles, so that neither a host nor a client needs
 * msgpack-c or any other MessagePack library:
 *  - a host writes a variable's value (get_var, set_var's reply) with the
 *    vmheap_value_write_* functions, and reads set_var's value with the
 *    readers below; those handles are the agent's and valid only during
 *    the callback that received them;
 *  - a client reads a reply's value (vmheap_reply_value()) with the same
 *    readers, walking arrays and maps; those handles live as long as the
 *    reply (until vmheap_reply_free()).
 * Handles are never NULL where a function hands one out, except where it
 * says so; the readers take only valid handles.
 */
typedef struct vmheap_value_writer vmheap_value_writer;
typedef struct vmheap_value vmheap_value;

/* Write one value: nil, a boolean, an integer, a string (`len` bytes of
 * UTF-8), or the head of an array of `n` values or a map of `n` key and
 * value pairs (then write the n values, or n keys each with its value).
 * Each returns 0, or VMHEAP_ENOMEM (the reply is then an error). */
VMHEAP_EXPORT int vmheap_value_write_nil(vmheap_value_writer *w);
VMHEAP_EXPORT int vmheap_value_write_bool(vmheap_value_writer *w, int b);
VMHEAP_EXPORT int vmheap_value_write_int(vmheap_value_writer *w, int64_t v);
VMHEAP_EXPORT int vmheap_value_write_uint(vmheap_value_writer *w, uint64_t v);
VMHEAP_EXPORT int vmheap_value_write_str(vmheap_value_writer *w, const char *s,
					 size_t len);
VMHEAP_EXPORT int vmheap_value_write_array(vmheap_value_writer *w, uint32_t n);
VMHEAP_EXPORT int vmheap_value_write_map(vmheap_value_writer *w, uint32_t n);

enum vmheap_value_type {
	VMHEAP_VALUE_NIL,
	VMHEAP_VALUE_BOOL,
	VMHEAP_VALUE_INT, /* an integer, negative or not */
	VMHEAP_VALUE_FLOAT,
	VMHEAP_VALUE_STR,
	VMHEAP_VALUE_OTHER, /* a MessagePack extension type */
	VMHEAP_VALUE_BIN,   /* bytes (no agent variable sends them today) */
	VMHEAP_VALUE_ARRAY,
	VMHEAP_VALUE_MAP,
};

/* What a value is. */
VMHEAP_EXPORT enum vmheap_value_type vmheap_value_type(const vmheap_value *v);

/* Read a value: 0 with *out set, or VMHEAP_AGENT_ETYPE when it is not of
 * that type (an integer that does not fit is not one; a float is read
 * only by vmheap_value_float, an integer not by it).  A string's or
 * binary's `*s` is not NUL-terminated and lives as long as the handle. */
VMHEAP_EXPORT int vmheap_value_bool(const vmheap_value *v, int *out);
VMHEAP_EXPORT int vmheap_value_int(const vmheap_value *v, int64_t *out);
VMHEAP_EXPORT int vmheap_value_uint(const vmheap_value *v, uint64_t *out);
VMHEAP_EXPORT int vmheap_value_float(const vmheap_value *v, double *out);
VMHEAP_EXPORT int vmheap_value_str(const vmheap_value *v, const char **s,
				   size_t *len);
VMHEAP_EXPORT int vmheap_value_bin(const vmheap_value *v, const void **s,
				   size_t *len);

/*
 * Walk an array or a map.  vmheap_value_count sets *n to an array's number
 * of elements or a map's number of key and value pairs and returns 0, or
 * returns VMHEAP_AGENT_ETYPE for any other value.  vmheap_value_at gives
 * element i of an array; vmheap_value_key and vmheap_value_val give the key
 * and the value of pair i of a map (in the order of the wire); each
 * returns NULL when v is not of that type or i >= the count.
 * vmheap_value_get gives the value of the first pair of a map whose key is
 * the string `key`, or NULL (no such key, or v is no map).
 */
VMHEAP_EXPORT int vmheap_value_count(const vmheap_value *v, size_t *n);
VMHEAP_EXPORT const vmheap_value *vmheap_value_at(const vmheap_value *v,
						  size_t i);
VMHEAP_EXPORT const vmheap_value *vmheap_value_key(const vmheap_value *v,
						   size_t i);
VMHEAP_EXPORT const vmheap_value *vmheap_value_val(const vmheap_value *v,
						   size_t i);
VMHEAP_EXPORT const vmheap_value *vmheap_value_get(const vmheap_value *v,
						   const char *key);

/* ------------------------------------------------------------ host side */

/*
 * What a VM provides.  Callbacks receive `ctx`.  Unless noted, they are
 * called on an agent thread (not a VM thread).
 */
struct vmheap_agent_host {
	const char *vm_name;    /* e.g. "ruby" */
	const char *vm_version; /* e.g. "3.1.2" */
	void *ctx;

	/*
	 * Required.  Run fn(arg) with the VM's mutators stopped at a safe
	 * point and return its result.  Called from the thread that runs
	 * the dump (a thread of the agent's, a new one for each dump).
	 */
	int (*run_stopped)(void *ctx, int (*fn)(void *arg), void *arg);

	/*
	 * Required.  Write every object, class and root into `w` (strings for
	 * root kinds first, classes before their objects).  Called inside
	 * run_stopped, or in a forked child.  Must not allocate in the VM's
	 * managed heap.  Return 0 or a negative code.
	 */
	int (*walk_heap)(void *ctx, vmheap_writer *w);

	/*
	 * Optional.  Fork the VM at a safe point: return the child's pid in
	 * the parent, 0 in the child, or -1 with errno.  In the child the
	 * agent calls prepare_child (if set), walk_heap, and _exit()s.  When
	 * NULL, dumps always run in-process.
	 *
	 * The agent calls fork_stopped from inside run_stopped's fn, on the
	 * thread that runs fn (the VM is already stopped there), and in the
	 * child it continues on that same thread.  This matters for VMs whose
	 * API works only on VM threads (Ruby: fn runs on a Ruby thread that
	 * holds the GVL, so the child's only thread can call the VM to GC and
	 * walk).  The parent's fn returns at once after fork; the agent waits
	 * for the child after run_stopped has returned, with the VM running.
	 */
	pid_t (*fork_stopped)(void *ctx);

	/*
	 * Optional.  In the forked child, before the walk: e.g. run a full GC
	 * when `gc` is non-zero so that only live objects are dumped.  A
	 * negative return fails the dump (no file is left).
	 */
	int (*prepare_child)(void *ctx, int gc);

	/*
	 * Optional.  Header flags and kind names for dumps (see vmheap.h).
	 */
	const char *const *kind_names;
	size_t kind_count;

	/*
	 * Optional.  Non-zero when walk_heap may write allocation sites of
	 * managed objects (vmheap_writer_add_site, a site id in
	 * vmheap_writer_add_object_named): the writer is opened for them and
	 * the dump says format 1.1.
	 */
	int sites;

	/*
	 * Optional host variables.  list_vars calls add() once per variable
	 * with its full dotted name and a type word ("int", "string", ...).
	 * get_var writes the value of `name` into `w` (one value: the
	 * vmheap_value_write_* functions) and returns 0, or returns
	 * VMHEAP_AGENT_ENOTFOUND.  set_var (optional) applies `value` and
	 * writes the reply value into `w`, or returns a negative code and
	 * writes a message into err (VMHEAP_AGENT_ENOTFOUND with an empty
	 * err: no such variable).  Strings typed by a person arrive as
	 * strings (VMHEAP_VALUE_STR): coerce them ("42" for an int).  Called on
	 * the agent's loop thread, also while a dump runs: they must not wait
	 * for the world to stop (keep figures the mutator publishes under a
	 * lock of their own). A host variable named like a built-in one
	 * (system.memory.count, system.memory.bytes, system.threads.backtrace)
	 * replaces its value.
	 */
	void (*list_vars)(void *ctx,
			  void (*add)(void *arg, const char *name, const char *type),
			  void *arg);
	int (*get_var)(void *ctx, const char *name, vmheap_value_writer *w);
	int (*set_var)(void *ctx, const char *name, const vmheap_value *value,
		       vmheap_value_writer *w, char *err, size_t errlen);

	/*
	 * Optional (format 1.1).  Non-zero when walk_heap names references
	 * or roots (vmheap_writer_add_object_named, _add_root_named): the
	 * agent opens the writer with the option edge_names.
	 */
	int edge_names;
};

/* Agent settings.  Zero/NULL fields take defaults, except dump_fork and
 * dump_gc, where 0 means off and -1 the default (start from
 * vmheap_agent_config_from_env, which reads the environment and sets
 * both to -1; a NULL config to vmheap_agent_start means all defaults). */
struct vmheap_agent_config {
	const char *bind;        /* default "127.0.0.1" */
	uint16_t port;           /* default 0: the kernel picks */
	const char *dump_dir;    /* default: working directory at start */
	const char *tmpdir;      /* discovery dir; default $TMPDIR or /tmp */
	int max_clients;         /* default 128, at most 1000 */
	int idle_timeout_ms;     /* default 300000 */
	int dump_fork;           /* -1 default: fork when the host can */
	int dump_gc;             /* -1 default: GC in the forked child */
	/* 1: the host should treat a failed start as fatal (from
	 * VMHEAP_AGENT_REQUIRED); the library itself only reports it */
	int required;
};

/*
 * Fill `cfg` from VMHEAP_AGENT_BIND, VMHEAP_AGENT_PORT, VMHEAP_AGENT_DIR
 * and VMHEAP_AGENT_TMPDIR, and the limits VMHEAP_AGENT_MAX_CLIENTS and
 * VMHEAP_AGENT_IDLE_TIMEOUT_MS (fields left unset take defaults).  Returns 0,
 * or VMHEAP_EINVAL with a message in err when a variable is invalid.  The
 * strings point into the environment.  cfg->required is set from
 * VMHEAP_AGENT_REQUIRED (any value but "", 0, false, no, off) in every
 * case, also when another variable is invalid: a host that cannot start
 * its agent warns and runs on, unless it is required.
 */
VMHEAP_EXPORT
int vmheap_agent_config_from_env(struct vmheap_agent_config *cfg, char *err,
				 size_t errlen);

typedef struct vmheap_agent vmheap_agent;

/*
 * Start the agent: bind, write the discovery file, start the loop
 * thread.  On failure returns a negative code and leaves no thread or
 * file behind; *out is then a failed agent that holds the reason
 * (vmheap_agent_error()) and is good only for that and
 * vmheap_agent_stop(), or NULL with VMHEAP_ENOMEM.  `host` must outlive
 * the agent.  Blocks SIGPIPE on the agent's threads only.  Only one agent
 * per process: when vmheap-run's native-only agent
 * (libvmheap-native-agent.so, hosts/native) runs in it, that one stops
 * first and leaves the process (its discovery file) to this one.
 */
VMHEAP_EXPORT
int vmheap_agent_start(vmheap_agent **out,
		       const struct vmheap_agent_config *cfg,
		       const struct vmheap_agent_host *host);

/* The reason a start failed ("" for an agent that runs; "out of memory"
 * for NULL). */
VMHEAP_EXPORT
const char *vmheap_agent_error(const vmheap_agent *a);

/*
 * Write a dump of the VM into the file `path` now, on the calling
 * thread, with no agent running: what a host writes when its program
 * exits (vmheap-run --output does it through its native-only agent), and
 * what works in a forked child, where the agent's threads are gone.  The
 * dump is made as a console's `set system.memory.dump` makes it, with the
 * defaults (config.dump.fork when host->fork_stopped is set, with the
 * malloc tracker's leak scan in the child; config.dump.gc): written to a
 * temporary file (O_EXCL, mode 0600) in path's directory and given its
 * name without replacing a file.  A relative path is taken from the
 * working directory.  Returns 0, or a negative code with a message in err
 * that names the path (VMHEAP_AGENT_EEXIST: the file exists and is left
 * as it was; VMHEAP_AGENT_EPATH: its directory cannot be opened;
 * VMHEAP_AGENT_EDUMP, VMHEAP_ENOSPC, VMHEAP_AGENT_ESYS: nothing was left).
 * Needs no agent, and does not touch one that runs.
 */
VMHEAP_EXPORT
int vmheap_agent_dump_file(const struct vmheap_agent_host *host,
			   const char *path, char *err, size_t errlen);

/* The port the agent listens on. */
VMHEAP_EXPORT
uint16_t vmheap_agent_port(const vmheap_agent *a);

/* The discovery file's path. */
VMHEAP_EXPORT
const char *vmheap_agent_discovery_path(const vmheap_agent *a);

/*
 * Stop the agent (also a failed one, or NULL): wait for a running dump (a
 * forked child at most config.dump.timeout), send the replies still owed and
 * write them out (up to 2 s), close connections, join the threads, remove the
 * discovery file, free everything.  Call it from a VM thread, never from a host
 * callback (that runs on an agent thread), and without holding what run_stopped
 * waits for (Ruby: release the GVL around it), or a running dump can never
 * finish.  In a forked child (where the agent's threads do not exist) it only
 * frees memory and leaves the parent's discovery file alone.
 */
VMHEAP_EXPORT
void vmheap_agent_stop(vmheap_agent *a);

/*
 * Non-zero in a child process forked after the agent started: the agent
 * there has no thread, and a host may call vmheap_agent_start() again to
 * get a fresh one (after vmheap_agent_stop() on the stale handle).
 */
VMHEAP_EXPORT
int vmheap_agent_is_stale(const vmheap_agent *a);

/*
 * Give the malloc tracker (libvmheap-malloc.so, when vmheap-run preloaded
 * it) the VM's source location, so that a native stack also carries the
 * VM location (the line) that allocated (vmheap_native_set_location in native/
 * vmheap_native.h says what `where` may and must not do).  `where` sets
 * *file and *line and returns non-zero, or returns 0 when the calling
 * thread has no location.  NULL removes it: do that before the VM's
 * state that `where` reads goes away.  The hook is kept: when the
 * tracker is not loaded yet, the agent hands it over if `set
 * config.native.track true` loads one.  Returns 0, or
 * VMHEAP_AGENT_EUNSUPPORTED when the tracker is not loaded now.  Needs no
 * agent.
 */
VMHEAP_EXPORT
int vmheap_agent_native_location(int (*where)(const char **file,
					      uint32_t *line));

/*
 * Name a piece of the VM's own housekeeping for the malloc tracker's
 * stacks: an allocation whose stack (as the tracker took it: see
 * VMHEAP_NATIVE_DEPTH) passes through the function `fn` is charged to
 * `label` (for example "<ruby: postponed job>": angle brackets, so that
 * no source file reads the same) with line 0, not to the VM line that
 * happened to run; its C stack is kept.  `fn` must be the start of a
 * dynamic symbol with a size (the extent [start, start + size) is
 * taken from it); `label` is kept (a string literal).  A location the
 * hook of vmheap_agent_native_location gave as "<...>" at line 0 (the
 * Ruby host's "<ruby: gc>") is kept instead.  At most 8.  Returns 0,
 * VMHEAP_EINVAL when fn is no such symbol (or label or fn is NULL), or
 * VMHEAP_AGENT_ELIMIT when the table is full.  Needs no agent.
 */
VMHEAP_EXPORT
int vmheap_agent_native_activity(const char *label, const void *fn);

/* ----------------------------------------------------------- discovery */

/* One agent, as read from its discovery file. */
struct vmheap_agent_info {
	pid_t pid;
	char address[128]; /* "tcp://127.0.0.1:PORT" */
	char host[64];
	uint16_t port;
	char token[33];    /* 32 hex digits */
	char vm[128];
	char argv[512];
	char exe[256];
	int64_t started;   /* seconds since the epoch */
	char path[256];    /* the discovery file */
	/* the agent's dump directory ("" when the file has none, or when it
	 * is longer than this field) */
	char dump_dir[1024];
};

/*
 * Read and check one discovery file: it must be a regular file, not a
 * symlink, owned by the current user, and well formed.  For root, a file
 * owned by another user is accepted when the process it names belongs to
 * that user (root may reach every VM; the caller can lstat info->path to
 * say whose it is).  Returns 0, or
 * VMHEAP_AGENT_EDISCOVERY / VMHEAP_AGENT_ESYS with a message in err.
 */
VMHEAP_EXPORT
int vmheap_discovery_read(const char *path, struct vmheap_agent_info *info,
			  char *err, size_t errlen);

/*
 * List agents in `tmpdir` (NULL: $TMPDIR or /tmp).  Files whose pid is
 * dead or a zombie are removed (when ours) and never listed.  For each live, valid agent `found` is
 * called; for each file that cannot be used `bad` is called (may be NULL)
 * with its path and the reason.  Returns the number of agents found or a
 * negative code.
 */
VMHEAP_EXPORT
int vmheap_discovery_list(const char *tmpdir,
			  void (*found)(void *arg, const struct vmheap_agent_info *info),
			  void (*bad)(void *arg, const char *path, const char *why),
			  void *arg);

/* The discovery directory that the agent and the client use by default:
 * VMHEAP_AGENT_TMPDIR, else $TMPDIR, else /tmp. */
VMHEAP_EXPORT
const char *vmheap_discovery_default_dir(void);

/* --------------------------------------------------------------- client */

typedef struct vmheap_client vmheap_client;

/*
 * A reply of the agent (opaque): ok with a value, or an error with a code
 * word and a message (PROTOCOL.md, "Replies").  vmheap_client_call() makes
 * one; read it with the accessors below and free it with
 * vmheap_reply_free().
 */
typedef struct vmheap_reply vmheap_reply;

/*
 * Connect to the agent described by `info`, send its token, read its
 * hello and the token's answer, within timeout_ms (0: no limit).  A
 * connection the agent closes before its hello (an agent flooded with
 * silent connections makes room that way) is made again, up to ten
 * times in all.  On
 * failure returns a negative code (ECONNECT, EAUTH, ELIMIT when the agent
 * has too many clients, ETIMEOUT, EPROTO, EINVAL for a NULL info) with
 * *out a failed client that holds the reason (vmheap_client_error()), or
 * NULL with VMHEAP_ENOMEM; close *out in every case.  The
 * hello's pid must match info->pid (a stale discovery file may name a
 * port that another process now uses).
 */
VMHEAP_EXPORT
int vmheap_client_connect(vmheap_client **out,
			  const struct vmheap_agent_info *info, int timeout_ms);

/* Connect to host:port with an explicit token (tests).  With a NULL
 * token only the hello is read: every request is then refused (auth).
 * Failures as for vmheap_client_connect(). */
VMHEAP_EXPORT
int vmheap_client_connect_addr(vmheap_client **out, const char *host,
			       uint16_t port, const char *token,
			       int timeout_ms);

/*
 * Send one request (`verb` is "get", "set" or "list"; path may be NULL
 * for "list") and wait for its reply.  `value` is NULL, or one
 * MessagePack value of `value_len` bytes (PROTOCOL.md; a program without
 * a MessagePack library sends strings with vmheap_client_call_str, which
 * the agent coerces as it does what a person types).
 *
 * *out is set in every case (only a NULL `out` is refused, with
 * VMHEAP_EINVAL): to a reply, or to NULL with VMHEAP_ENOMEM; free it with
 * vmheap_reply_free() whatever happened.  Returns 0 when a reply arrived
 * (which may be an error reply: check vmheap_reply_ok()), or a negative
 * code when the call failed, with a message in vmheap_client_error(c):
 * VMHEAP_EINVAL (a value that is not exactly one MessagePack value, or a
 * value without a path: nothing was sent), VMHEAP_AGENT_ECLOSED when the
 * VM went away, or when the agent sent an error with a nil id and closed
 * the connection, e.g. after its idle timeout: the request was not
 * processed, and the reply's code and message keep the agent's words (a
 * caller may reconnect and send it again).  After ECLOSED, EPROTO or
 * ETIMEOUT the connection is closed and later calls return ECLOSED.
 */
VMHEAP_EXPORT
int vmheap_client_call(vmheap_client *c, const char *verb, const char *path,
		       const void *value, size_t value_len, vmheap_reply **out);

/* Same, with the value given as a string (what a person types; NULL for
 * none). */
VMHEAP_EXPORT
int vmheap_client_call_str(vmheap_client *c, const char *verb, const char *path,
			   const char *value, vmheap_reply **out);

/* 1 when the agent answered "ok", 0 for an error reply, for no reply (the
 * call failed) and for NULL. */
VMHEAP_EXPORT
int vmheap_reply_ok(const vmheap_reply *r);

/* The value of an ok reply (a handle that lives as long as the reply:
 * walk it with the vmheap_value_* readers), or NULL for any other. */
VMHEAP_EXPORT
const vmheap_value *vmheap_reply_value(const vmheap_reply *r);

/* An error reply's code word ("busy", "exists", "notfound", ...: the
 * PROTOCOL.md names) and message, at most 31 and 511 bytes (cut when the
 * agent sent more); "" for an ok reply, for NULL, and when the call failed
 * before the agent said anything. */
VMHEAP_EXPORT
const char *vmheap_reply_code(const vmheap_reply *r);
VMHEAP_EXPORT
const char *vmheap_reply_message(const vmheap_reply *r);

/*
 * The value of an ok reply as one MessagePack value (PROTOCOL.md), for a
 * program that reads it with a MessagePack library of its own: 0 with
 * *data and *len set (the bytes belong to the reply and live as long as
 * it), VMHEAP_EINVAL when r has no value (not ok, or NULL), or
 * VMHEAP_ENOMEM.  The bytes encode the same value as the wire did, not
 * necessarily in the same bytes.
 */
VMHEAP_EXPORT
int vmheap_reply_msgpack(vmheap_reply *r, const void **data, size_t *len);

/* Free a reply (NULL is fine). */
VMHEAP_EXPORT
void vmheap_reply_free(vmheap_reply *r);

/*
 * Time limit for each later call, in milliseconds (0: wait forever).  The
 * connect timeout is the initial value.  A dump can take a while: raise
 * it before `set system.memory.dump`.
 */
VMHEAP_EXPORT
void vmheap_client_set_timeout(vmheap_client *c, int timeout_ms);

/* The hello's fields. */
VMHEAP_EXPORT
const char *vmheap_client_vm(const vmheap_client *c);
VMHEAP_EXPORT
pid_t vmheap_client_pid(const vmheap_client *c);

/* Message of the last error ("" if none; "out of memory" for a NULL
 * client, which only a failed connect gives). */
VMHEAP_EXPORT
const char *vmheap_client_error(const vmheap_client *c);

/* Close the connection and free the client. */
VMHEAP_EXPORT
void vmheap_client_close(vmheap_client *c);

#ifdef __cplusplus
}
#endif

#endif /* VMHEAP_AGENT_H */
