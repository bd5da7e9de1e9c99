/*
 * protocol_fuzz.c - fuzz target of the wire protocol: the frame decoder
 * and the dispatcher, inside a live agent.
 *
 * One agent runs in this process (started on the first input) with a
 * tiny host.  For each input the target connects over loopback, reads the
 * hello, authenticates with the token unless the input's first byte is
 * odd (then the bytes reach the pre-auth path), sends the rest of the
 * input as raw bytes (frames, or anything) followed by a sentinel request
 * (get system.pid with the largest id), and reads until the sentinel's
 * reply arrives or the agent closes; the writing side is shut down
 * after the sentinel, so that a partial frame in the input ends at EOF
 * (the agent's frame timeout stays at its default: lowered, a busy
 * machine made it fire between hello and auth).  Every frame the agent sends
 * back must be a well-formed reply: [id, "ok", value], [id, "error", code,
 * message] (the hello aside).  A hang (no close within 10 s) aborts.
 *
 * The frame decoder is also called directly on the input (the payload
 * after a 4-byte length), which is much faster than a round trip.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "agent-internal.h"
#include "fuzz-internal.h"

#define REPLY_TIMEOUT_S 10
#define SENTINEL_ID UINT64_MAX

static vmheap_agent *agent;
static char dir[512];
static int64_t host_n;

/* ------------------------------------------------------------ the host */

static int run_stopped(void *ctx, int (*fn)(void *arg), void *arg)
{
	(void)ctx;
	return fn(arg);
}

static int walk_heap(void *ctx, vmheap_writer *w)
{
	static const uint64_t refs[] = {0x1000, 0x2000};
	int rc;

	(void)ctx;
	if ((rc = vmheap_writer_add_string(w, 1, "vm", 2)) < 0 ||
	    (rc = vmheap_writer_add_class(w, 1, "Object", 6, 0, 0)) < 0 ||
	    (rc = vmheap_writer_add_object(w, 0x1000, 1, 40, 0, refs, 2)) < 0 ||
	    (rc = vmheap_writer_add_object(w, 0x2000, 1, 24, 0, NULL, 0)) < 0 ||
	    (rc = vmheap_writer_add_root(w, 1, 0x1000)) < 0)
		return rc;
	return 0;
}

static void
list_vars(void *ctx, void (*add)(void *arg, const char *name, const char *type),
	  void *arg)
{
	(void)ctx;
	add(arg, "fuzz.n", "int");
	add(arg, "fuzz.name", "string");
}

static int get_var(void *ctx, const char *name, vmheap_value_writer *w)
{
	(void)ctx;
	if (!strcmp(name, "fuzz.n"))
		return vmheap_value_write_int(w, host_n);
	if (!strcmp(name, "fuzz.name"))
		return vmheap_value_write_str(w, "fuzz", 4);
	return VMHEAP_AGENT_ENOTFOUND;
}

static int set_var(void *ctx, const char *name, const vmheap_value *value,
		   vmheap_value_writer *w, char *err, size_t errlen)
{
	int64_t n;

	(void)ctx;
	if (strcmp(name, "fuzz.n"))
		return VMHEAP_AGENT_ENOTFOUND;
	if (vmheap_value_int(value, &n) < 0) {
		snprintf(err, errlen, "fuzz.n takes an integer");
		return VMHEAP_AGENT_ETYPE;
	}
	host_n = n;
	return vmheap_value_write_int(w, host_n);
}

static const struct vmheap_agent_host host = {
    .vm_name = "fuzz",
    .vm_version = "1",
    .run_stopped = run_stopped,
    .walk_heap = walk_heap,
    .list_vars = list_vars,
    .get_var = get_var,
    .set_var = set_var,
};

static void remove_dir(void)
{
	char cmd[600];

	if (!dir[0])
		return;
	/* the dumps the fuzzer asked for, then the directory */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		(void)0;
	dir[0] = '\0';
}

void fuzz_protocol_shutdown(void)
{
	if (agent) {
		vmheap_agent_stop(agent);
		agent = NULL;
	}
	remove_dir();
}

static void start_agent(void)
{
	struct vmheap_agent_config cfg;
	const char *t = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/vmheap-pfuzz-XXXXXX",
		 t && strlen(t) < 400 ? t : "/tmp");
	if (!mkdtemp(dir))
		abort();
	memset(&cfg, 0, sizeof(cfg));
	cfg.tmpdir = dir;
	cfg.dump_dir = dir;
	cfg.dump_fork = 0;
	cfg.dump_gc = 0;
	cfg.max_clients = 8;
	if (vmheap_agent_start(&agent, &cfg, &host) < 0) {
		fprintf(stderr, "protocol_fuzz: cannot start the agent: %s\n",
			vmheap_agent_error(agent));
		abort();
	}
	atexit(fuzz_protocol_shutdown);
}

/* ------------------------------------------------------------ the wire */

static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(fd, (char *)buf + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			fprintf(stderr,
				"protocol_fuzz: the agent neither replied nor "
				"closed within %d s\n",
				REPLY_TIMEOUT_S);
			abort();
		}
		if (r <= 0)
			return -1; /* closed (or reset) */
		got += (size_t)r;
	}
	return 0;
}

/* Read one frame and check that it is a well-formed reply (or the
 * hello when `hello`).  Returns 0, 1 for the sentinel's reply, or -1
 * once the agent closed. */
static int read_reply(int fd, int hello)
{
	unsigned char hdr[4];
	msgpack_unpacked m;
	const msgpack_object *e;
	uint32_t len, n;
	char *buf, why[256];
	int ok;

	if (read_full(fd, hdr, 4) < 0)
		return -1;
	len = frame_length(hdr);
	if (len == 0 || len > VMHEAP_MAX_FRAME_BYTES) {
		fprintf(stderr,
			"protocol_fuzz: the agent sent a frame of %u bytes\n",
			len);
		abort();
	}
	buf = malloc(len);
	if (!buf)
		abort();
	if (read_full(fd, buf, len) < 0) {
		fprintf(stderr, "protocol_fuzz: the agent cut a reply short\n");
		abort();
	}
	msgpack_unpacked_init(&m);
	if (frame_decode(buf, len, &m, why, sizeof(why)) < 0) {
		fprintf(stderr,
			"protocol_fuzz: the agent sent a bad frame: %s\n", why);
		abort();
	}
	e = m.data.via.array.ptr;
	n = m.data.via.array.size;
	if (hello)
		ok = n == 4 && e[0].type == MSGPACK_OBJECT_STR;
	else
		ok = n >= 3 &&
		     (e[0].type == MSGPACK_OBJECT_NIL ||
		      e[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER) &&
		     e[1].type == MSGPACK_OBJECT_STR &&
		     ((n == 3 && e[1].via.str.size == 2 &&
		       !memcmp(e[1].via.str.ptr, "ok", 2)) ||
		      (n == 4 && e[1].via.str.size == 5 &&
		       !memcmp(e[1].via.str.ptr, "error", 5) &&
		       e[2].type == MSGPACK_OBJECT_STR &&
		       e[3].type == MSGPACK_OBJECT_STR && e[3].via.str.size));
	if (!ok) {
		fprintf(stderr, "protocol_fuzz: malformed %s from the agent\n",
			hello ? "hello" : "reply");
		abort();
	}
	ok = !hello && e[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	     e[0].via.u64 == SENTINEL_ID;
	msgpack_unpacked_destroy(&m);
	free(buf);
	return ok;
}

static int send_all(int fd, const void *p, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w =
		    send(fd, (const char *)p + off, n - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1; /* the agent closed on us: fine */
		off += (size_t)w;
	}
	return 0;
}

static int connect_agent(void)
{
	struct sockaddr_in sa;
	struct timeval tv = {REPLY_TIMEOUT_S, 0};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		abort();
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(vmheap_agent_port(agent));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		/* libFuzzer's timer signal may interrupt it: the connection
		 * then completes in the background */
		struct pollfd p = {fd, POLLOUT, 0};
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		if (errno != EINTR) {
			perror("protocol_fuzz: connect");
			abort();
		}
		while (poll(&p, 1, REPLY_TIMEOUT_S * 1000) < 0 &&
		       errno == EINTR)
			;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 ||
		    soerr) {
			fprintf(stderr, "protocol_fuzz: connect: %s\n",
				strerror(soerr));
			abort();
		}
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Send [id, word, arg]. */
static int send_request(int fd, uint64_t id, const char *word, const char *arg)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	int rc;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	frame_begin(&sb);
	msgpack_pack_array(&pk, 3);
	msgpack_pack_uint64(&pk, id);
	frame_pack_str(&pk, word);
	frame_pack_str(&pk, arg);
	frame_end(&sb, 0);
	rc = send_all(fd, sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

static void send_auth(int fd)
{
	if (send_request(fd, 0, "auth", agent->token) < 0 ||
	    read_reply(fd, 0) < 0) {
		fprintf(stderr,
			"protocol_fuzz: auth with the right token failed\n");
		abort();
	}
}

int fuzz_protocol_one(const uint8_t *data, size_t size)
{
	msgpack_unpacked m;
	char why[256];
	int fd;

	/* the decoder alone, on the payload after a length */
	if (size > 4) {
		msgpack_unpacked_init(&m);
		if (frame_decode((const char *)data + 4, size - 4, &m, why,
				 sizeof(why)) < 0 &&
		    !why[0])
			abort();
		msgpack_unpacked_destroy(&m);
	}

	if (!agent)
		start_agent();
	fd = connect_agent();
	if (read_reply(fd, 1) < 0) {
		fprintf(stderr, "protocol_fuzz: no hello\n");
		abort();
	}
	if (size == 0 || !(data[0] & 1))
		send_auth(fd);
	if ((size <= 1 || send_all(fd, data + 1, size - 1) == 0))
		send_request(fd, SENTINEL_ID, "get", "system.pid");
	/* EOF: a partial frame then ends at once instead of at the frame
	 * timeout (replies still in flight may be dropped: that is fine) */
	shutdown(fd, SHUT_WR);
	while (read_reply(fd, 0) == 0)
		;
	close(fd);
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_protocol_one(data, size);
}
#endif
