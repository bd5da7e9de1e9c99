/*
 * agent-internal.h - private declarations shared by libvmheap-agent's
 * source files.  Nothing here is installed.
 */
#ifndef VMHEAP_AGENT_INTERNAL_H
#define VMHEAP_AGENT_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <time.h>

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
/* A client whose unread replies pass this stops being read from. */
#define AGENT_OUTPUT_HIGH_WATER (4u * 1024u * 1024u)

/* ------------------------------------------------------------ errors.c */

/* snprintf into err (if non-NULL) and return code. */
int agent_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The protocol's code word for an error code ("busy", "exists", ...). */
const char *agent_code_word(int code);

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

/* -------------------------------------------------------------- dump.c */

/* Result of one dump. */
struct agent_dump_result {
	int code;	     /* 0 or a negative code */
	char message[512];   /* when code < 0 */
	char path[PATH_MAX]; /* absolute path of the file */
	uint64_t objects;
	uint64_t bytes; /* sum of shallow sizes */
	uint64_t file_bytes;
	double seconds;
	int forked;
	int gc;
};

/* Start / stop the dump thread. */
int agent_dump_thread_start(struct vmheap_agent *a, char *err, size_t errlen);
void agent_dump_thread_stop(struct vmheap_agent *a);

/*
 * Queue a dump of `path` (as the client sent it) for connection `conn`
 * and request `id`.  Returns 0 when queued, or VMHEAP_AGENT_EBUSY.
 * Loop thread only.  The reply is sent by agent_dump_done_cb.
 */
int agent_dump_request(struct vmheap_agent *a, struct agent_conn *conn,
		       uint64_t id, const char *path);

/* Run a dump synchronously (the dump thread's body); exposed for tests. */
void agent_dump_run(struct vmheap_agent *a, const char *path,
		    struct agent_dump_result *res);

/* ------------------------------------------------------------- vars.c */

/* Sink that packs a reply value. */
struct agent_value {
	msgpack_sbuffer sb;
	msgpack_packer pk;
};

/*
 * get/set/list on the variable tree; loop thread.  They pack the reply
 * value into v and return 0, or return a negative code with a message.
 * set of system.memory.dump returns 1: the reply comes later.
 */
int agent_var_get(struct vmheap_agent *a, const char *name,
		  struct agent_value *v, char *err, size_t errlen);
int agent_var_set(struct vmheap_agent *a, struct agent_conn *conn, uint64_t id,
		  const char *name, const msgpack_object *value,
		  struct agent_value *v, char *err, size_t errlen);
int agent_var_list(struct vmheap_agent *a, const char *prefix,
		   struct agent_value *v, char *err, size_t errlen);

/* Pack a dump result as the reply map. */
void agent_pack_dump_result(msgpack_packer *pk,
			    const struct agent_dump_result *r);

/* ---------------------------------------------------------- dispatch.c */

/*
 * Handle one decoded frame from `conn`.  Sends replies through
 * agent_conn_send_*; may mark the connection for closing.
 */
void agent_dispatch(struct vmheap_agent *a, struct agent_conn *conn,
		    const msgpack_object *msg);

/* ------------------------------------------------------------ server.c */

struct agent_conn {
	struct vmheap_agent *agent;
	struct bufferevent *bev;
	int fd;
	int slot; /* index in agent->fd_slots */
	int authed;
	int closing;	       /* close once the output is flushed */
	int dump_pending;      /* a dump reply is owed to this connection */
	int64_t frame_started; /* ms when a partial frame (or the connection)
				  began */
	msgpack_unpacked msg;  /* the request being dispatched */
	struct agent_conn *prev, *next;
};

/* Re-arm the connection's timeouts for its current state. */
void agent_conn_set_timeouts(struct agent_conn *c);

/* Send [id, "ok", <raw value bytes>]; id NULL means nil. */
void agent_conn_send_ok(struct agent_conn *c, const uint64_t *id,
			const char *value, size_t value_len);
/* Send [id, "error", word(code), message]; close after if `close`. */
void agent_conn_send_error(struct agent_conn *c, const uint64_t *id, int code,
			   const char *message, int close);

struct vmheap_agent {
	pid_t pid;	  /* the process that started the agent */
	atomic_int stale; /* set in a forked child */
	const struct vmheap_agent_host *host;

	char bind[64];
	uint16_t port;
	char dump_dir[PATH_MAX]; /* absolute, resolved */
	char tmpdir[PATH_MAX];
	int max_clients;
	int idle_timeout_ms;
	int frame_timeout_ms;
	atomic_int dump_fork;	   /* 0/1 */
	atomic_int dump_gc;	   /* 0/1 */
	atomic_int dump_timeout_s; /* a forked dump child is killed after it */

	char token[33];
	char discovery_path[PATH_MAX];
	int discovery_written;
	struct timespec start_mono;
	time_t started;
	char vm[256]; /* "name version" */

	struct event_base *base;
	struct evconnlistener *listener;
	struct event *stop_ev;
	struct event *dump_done_ev;
	pthread_t loop_thread;
	int loop_running;

	struct agent_conn *conns; /* loop thread only */
	int nconns;
	atomic_int *fd_slots; /* fds a forked child closes */
	int nslots;
	atomic_int listen_fd;

	/* dump thread state, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t dump_thread;
	int dump_thread_running;
	int dump_stop;
	int dump_busy;	   /* a job is queued or running */
	int dump_queued;   /* the thread should pick it up */
	int dump_finished; /* result ready for the loop */
	char job_path[PATH_MAX];
	uint64_t job_id;
	struct agent_conn *job_conn; /* loop thread only; NULL if gone */
	struct agent_dump_result job_result;
	struct agent_dump_result run_result; /* dump thread only */
	int has_last;
	struct agent_dump_result last;
};

/* Called on the loop thread when the dump thread posts a result. */
void agent_dump_done_cb(int fd, short what, void *arg);

/* Block SIGPIPE on the calling (agent) thread. */
void agent_block_sigpipe(void);

#pragma GCC visibility pop

#endif /* VMHEAP_AGENT_INTERNAL_H */
