/*
 * client.c - the client half: connect to an agent, read its hello,
 * authenticate, and make requests.  Blocking sockets with poll()
 * deadlines; nothing here prints or exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent-internal.h"

struct vmheap_client {
	int fd;
	int timeout_ms;
	uint64_t next_id;
	int protocol;
	pid_t pid;
	char vm[256];
	char error[512];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t deadline_of(int timeout_ms)
{
	return timeout_ms > 0 ? now_ms() + timeout_ms : -1;
}

static int fail(vmheap_client *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(vmheap_client *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->error, sizeof(c->error), fmt, ap);
	va_end(ap);
	return code;
}

/* Wait until fd is ready for `events`; 0, or ETIMEOUT / ESYS. */
static int wait_fd(vmheap_client *c, short events, int64_t deadline)
{
	struct pollfd p = {.fd = c->fd, .events = events};

	for (;;) {
		int ms = -1, n;

		if (deadline >= 0) {
			int64_t left = deadline - now_ms();
			ms = left > 0 ? (int)left : 0;
		}
		n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n == 0)
			return fail(c, VMHEAP_AGENT_ETIMEOUT,
				    "no answer from the agent in time");
		if (errno != EINTR)
			return fail(c, VMHEAP_AGENT_ESYS, "poll: %s",
				    strerror(errno));
	}
}

static int send_all(vmheap_client *c, const char *buf, size_t len,
		    int64_t deadline)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(c->fd, buf + off, len - off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int rc = wait_fd(c, POLLOUT, deadline);
			if (rc < 0)
				return rc;
			continue;
		}
		if (errno == EPIPE || errno == ECONNRESET)
			return fail(c, VMHEAP_AGENT_ECLOSED,
				    "the agent closed the connection");
		return fail(c, VMHEAP_AGENT_ESYS, "send: %s", strerror(errno));
	}
	return 0;
}

static int recv_all(vmheap_client *c, char *buf, size_t len, int64_t deadline,
		    size_t *got_out)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(c->fd, buf + got, len - got, MSG_DONTWAIT);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0) {
			*got_out = got;
			return fail(c, VMHEAP_AGENT_ECLOSED,
				    "the agent closed the connection");
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int rc = wait_fd(c, POLLIN, deadline);
			if (rc < 0) {
				*got_out = got;
				return rc;
			}
			continue;
		}
		*got_out = got;
		if (errno == ECONNRESET)
			return fail(c, VMHEAP_AGENT_ECLOSED,
				    "the agent reset the connection");
		return fail(c, VMHEAP_AGENT_ESYS, "recv: %s", strerror(errno));
	}
	*got_out = got;
	return 0;
}

/* Read one frame and decode it into `out`. */
static int read_frame(vmheap_client *c, msgpack_unpacked *out, int64_t deadline)
{
	unsigned char hdr[4];
	char why[256], *buf;
	size_t got;
	uint32_t len;
	int rc;

	if (c->fd < 0)
		return fail(c, VMHEAP_AGENT_ECLOSED,
			    "the connection is closed");
	rc = recv_all(c, (char *)hdr, 4, deadline, &got);
	if (rc < 0)
		return rc;
	len = frame_length(hdr);
	if (len == 0 || len > VMHEAP_MAX_FRAME_BYTES)
		return fail(c, VMHEAP_AGENT_EPROTO,
			    "the agent sent a frame of %u bytes (limit %u)",
			    len, VMHEAP_MAX_FRAME_BYTES);
	buf = malloc(len);
	if (!buf)
		return fail(c, VMHEAP_ENOMEM, "out of memory");
	rc = recv_all(c, buf, len, deadline, &got);
	if (rc < 0) {
		free(buf);
		if (rc == VMHEAP_AGENT_ECLOSED)
			return fail(c, rc,
				    "the agent closed the connection after %zu "
				    "of %u frame bytes",
				    got, len);
		return rc;
	}
	rc = frame_decode(buf, len, out, why, sizeof(why));
	free(buf);
	if (rc < 0)
		return fail(c, VMHEAP_AGENT_EPROTO,
			    "the agent sent a bad frame: %s", why);
	return 0;
}

/* 1 when data[0 .. len-1] is exactly one MessagePack value. */
static int one_value(const void *data, size_t len)
{
	msgpack_unpacked u;
	size_t off = 0;
	int rc;

	msgpack_unpacked_init(&u);
	rc = msgpack_unpack_next(&u, data, len, &off);
	msgpack_unpacked_destroy(&u);
	return rc == MSGPACK_UNPACK_SUCCESS && off == len;
}

static int send_request(vmheap_client *c, uint64_t id, const char *verb,
			const char *path, const void *value, size_t value_len,
			const char *strvalue, int64_t deadline)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	int n = 2 + (path != NULL) + (value != NULL || strvalue != NULL);
	int rc;

	if (!path && (value || strvalue))
		return fail(c, VMHEAP_EINVAL, "a value needs a path");
	if (value && !one_value(value, value_len))
		return fail(c, VMHEAP_EINVAL,
			    "the value's %zu bytes are not one MessagePack "
			    "value",
			    value_len);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	frame_begin(&sb);
	msgpack_pack_array(&pk, (size_t)n);
	msgpack_pack_uint64(&pk, id);
	frame_pack_str(&pk, verb);
	if (path)
		frame_pack_str(&pk, path);
	if (value)
		msgpack_sbuffer_write(&sb, value, value_len);
	else if (strvalue)
		frame_pack_str(&pk, strvalue);
	if (frame_end(&sb, 0) < 0) {
		msgpack_sbuffer_destroy(&sb);
		return fail(c, VMHEAP_AGENT_ELIMIT,
			    "request larger than %u bytes",
			    VMHEAP_MAX_FRAME_BYTES);
	}
	rc = send_all(c, sb.data, sb.size, deadline);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

static void copy_obj_str(const msgpack_object *o, char *buf, size_t len)
{
	size_t n = 0;

	if (o->type == MSGPACK_OBJECT_STR) {
		n = o->via.str.size < len - 1 ? o->via.str.size : len - 1;
		if (n)
			memcpy(buf, o->via.str.ptr, n);
	}
	buf[n] = '\0';
}

static int obj_is(const msgpack_object *o, const char *s)
{
	size_t n = strlen(s);

	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n &&
	       memcmp(o->via.str.ptr, s, n) == 0;
}

/* Wait for the reply to `id`; fills *reply (storage owned by it). */
static int read_reply(vmheap_client *c, uint64_t id, vmheap_reply *reply,
		      int64_t deadline)
{
	for (;;) {
		msgpack_object *e;
		uint32_t n;
		int rc, nil_id;

		agent_reply_clear(reply);
		rc = read_frame(c, &reply->storage, deadline);
		if (rc < 0)
			return rc;
		e = reply->storage.data.via.array.ptr;
		n = reply->storage.data.via.array.size;
		if (n < 3 || (!obj_is(&e[1], "ok") && !obj_is(&e[1], "error")))
			return fail(c, VMHEAP_AGENT_EPROTO,
				    "the agent sent a reply that is not [id, "
				    "\"ok\"|\"error\", ...]");
		nil_id = e[0].type == MSGPACK_OBJECT_NIL;
		if (!nil_id && !(e[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
				 e[0].via.u64 == id))
			continue; /* not ours (a late reply): skip */
		if (obj_is(&e[1], "ok")) {
			reply->ok = 1;
			reply->value = e[2];
			return 0;
		}
		reply->ok = 0;
		copy_obj_str(&e[2], reply->code, sizeof(reply->code));
		if (n > 3)
			copy_obj_str(&e[3], reply->message,
				     sizeof(reply->message));
		snprintf(c->error, sizeof(c->error), "%.31s: %.400s",
			 reply->code, reply->message);
		/* An error with a nil id answers no request of ours: the
		 * agent sends it just before it closes the connection (idle
		 * timeout, limits).  Our request was never seen. */
		if (nil_id) {
			msgpack_unpacked_destroy(&reply->storage);
			msgpack_unpacked_init(&reply->storage);
			return fail(c, VMHEAP_AGENT_ECLOSED,
				    "the agent closed the connection (%.31s: "
				    "%.400s)",
				    reply->code, reply->message);
		}
		return 0;
	}
}

static int handshake(vmheap_client *c, const char *token, int64_t deadline)
{
	msgpack_unpacked hello;
	vmheap_reply *r;
	msgpack_object *e;
	int rc, sent = 0;

	/* the token goes out at once, not after the hello: an agent flooded
	 * with silent connections keeps those whose token is already in
	 * their socket (PROTOCOL.md, handshake) */
	if (token) {
		sent = send_request(c, c->next_id, "auth", token, NULL, 0, NULL,
				    deadline);
		/* a closed connection may still hold the agent's refusal */
		if (sent < 0 && sent != VMHEAP_AGENT_ECLOSED)
			return sent;
	}
	msgpack_unpacked_init(&hello);
	rc = read_frame(c, &hello, deadline);
	if (rc < 0)
		return sent < 0 ? sent : rc;
	e = hello.data.via.array.ptr;
	if (hello.data.via.array.size >= 4 && obj_is(&e[1], "error")) {
		char code[32], msg[400];

		copy_obj_str(&e[2], code, sizeof(code));
		copy_obj_str(&e[3], msg, sizeof(msg));
		msgpack_unpacked_destroy(&hello);
		return fail(c,
			    strcmp(code, "limit") == 0 ? VMHEAP_AGENT_ELIMIT
						       : VMHEAP_AGENT_EPROTO,
			    "the agent refused the connection: %s: %s", code,
			    msg);
	}
	if (hello.data.via.array.size < 4 || !obj_is(&e[0], "hello") ||
	    e[1].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    e[2].type != MSGPACK_OBJECT_STR ||
	    e[3].type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
		msgpack_unpacked_destroy(&hello);
		return fail(c, VMHEAP_AGENT_EPROTO,
			    "the agent's first message is not [\"hello\", "
			    "version, vm, pid]");
	}
	if (e[1].via.u64 != VMHEAP_PROTOCOL_VERSION) {
		rc = (int)e[1].via.u64;
		msgpack_unpacked_destroy(&hello);
		return fail(
		    c, VMHEAP_AGENT_EPROTO,
		    "the agent speaks protocol %d; this client speaks %d", rc,
		    VMHEAP_PROTOCOL_VERSION);
	}
	c->protocol = (int)e[1].via.u64;
	copy_obj_str(&e[2], c->vm, sizeof(c->vm));
	c->pid = (pid_t)e[3].via.u64;
	msgpack_unpacked_destroy(&hello);

	if (!token)
		return 0;
	if (sent < 0)
		return sent;
	r = agent_reply_new();
	if (!r)
		return fail(c, VMHEAP_ENOMEM, "out of memory");
	rc = read_reply(c, c->next_id++, r, deadline);
	if (rc == 0 && !r->ok)
		rc = fail(c, VMHEAP_AGENT_EAUTH, "authentication refused: %s",
			  r->message);
	vmheap_reply_free(r);
	return rc;
}

static int dial(vmheap_client *c, const char *host, uint16_t port,
		int64_t deadline)
{
	struct addrinfo hints = {0}, *res = NULL, *ai;
	char portstr[8];
	int rc, last = 0;

	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%u", (unsigned)port);
	rc = getaddrinfo(host, portstr, &hints, &res);
	if (rc != 0)
		return fail(c, VMHEAP_AGENT_ECONNECT, "cannot resolve %s: %s",
			    host, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		c->fd = socket(ai->ai_family,
			       ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			       ai->ai_protocol);
		if (c->fd < 0) {
			last = errno;
			continue;
		}
		if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS &&
		    wait_fd(c, POLLOUT, deadline) == 0 &&
		    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 &&
		    soerr == 0)
			break;
		last = soerr ? soerr : errno;
		close(c->fd);
		c->fd = -1;
	}
	freeaddrinfo(res);
	if (c->fd < 0)
		return fail(c, VMHEAP_AGENT_ECONNECT,
			    "cannot connect to %s:%u: %s", host, (unsigned)port,
			    last ? strerror(last) : "timed out");
	return 0;
}

int vmheap_client_connect_addr(vmheap_client **out, const char *host,
			       uint16_t port, const char *token, int timeout_ms)
{
	vmheap_client *c;
	int64_t deadline = deadline_of(timeout_ms);
	int rc;

	if (!out)
		return VMHEAP_EINVAL;
	*out = c = calloc(1, sizeof(*c));
	if (!c)
		return VMHEAP_ENOMEM;
	c->fd = -1;
	c->timeout_ms = timeout_ms;
	c->next_id = 1;
	if (!host)
		return fail(c, VMHEAP_EINVAL, "no host given");
	/* an agent flooded with connections that never authenticate
	 * closes the oldest silent ones to make room (PROTOCOL.md, limits):
	 * a connection closed before its hello came is tried again, nine
	 * times at most, while the deadline allows (a peer that said hello
	 * and then closed is not: that is no eviction) */
	for (int attempt = 0;; attempt++) {
		c->protocol = 0;
		rc = dial(c, host, port, deadline);
		if (rc == 0)
			rc = handshake(c, token, deadline);
		if (rc < 0 && c->fd >= 0) {
			close(c->fd);
			c->fd = -1;
		}
		if (rc != VMHEAP_AGENT_ECLOSED || c->protocol || attempt == 9 ||
		    (deadline > 0 && now_ms() >= deadline))
			return rc;
	}
}

int vmheap_client_connect(vmheap_client **out,
			  const struct vmheap_agent_info *info, int timeout_ms)
{
	int rc;

	if (!out)
		return VMHEAP_EINVAL;
	if (!info) { /* a failed client that says so */
		rc = vmheap_client_connect_addr(out, NULL, 0, NULL, 0);
		return *out ? fail(*out, rc, "no agent info given") : rc;
	}
	rc = vmheap_client_connect_addr(out, info->host, info->port,
					info->token, timeout_ms);
	if (rc == 0 && *out && (*out)->pid != info->pid) {
		fail(*out, VMHEAP_AGENT_ECONNECT,
		     "the agent at %s is pid %d, not pid %d as its discovery "
		     "file says",
		     info->address, (int)(*out)->pid, (int)info->pid);
		close((*out)->fd);
		(*out)->fd = -1;
		return VMHEAP_AGENT_ECONNECT;
	}
	return rc;
}

static int call(vmheap_client *c, const char *verb, const char *path,
		const void *value, size_t value_len, const char *strvalue,
		vmheap_reply **out)
{
	int64_t deadline;
	uint64_t id;
	int rc;

	if (!out)
		return VMHEAP_EINVAL;
	*out = agent_reply_new();
	if (!c)
		return VMHEAP_EINVAL;
	if (!*out)
		return fail(c, VMHEAP_ENOMEM, "out of memory");
	if (!verb)
		return fail(c, VMHEAP_EINVAL, "no verb given");
	if (c->fd < 0)
		return fail(c, VMHEAP_AGENT_ECLOSED,
			    "the connection is closed");
	deadline = deadline_of(c->timeout_ms);
	id = c->next_id++;
	rc = send_request(c, id, verb, path, value, value_len, strvalue,
			  deadline);
	if (rc == 0)
		rc = read_reply(c, id, *out, deadline);
	if (rc == VMHEAP_AGENT_ECLOSED || rc == VMHEAP_AGENT_EPROTO ||
	    rc == VMHEAP_AGENT_ETIMEOUT) {
		/* the stream is no longer in step: do not reuse it */
		close(c->fd);
		c->fd = -1;
	}
	return rc;
}

int vmheap_client_call(vmheap_client *c, const char *verb, const char *path,
		       const void *value, size_t value_len, vmheap_reply **out)
{
	return call(c, verb, path, value, value_len, NULL, out);
}

int vmheap_client_call_str(vmheap_client *c, const char *verb, const char *path,
			   const char *value, vmheap_reply **out)
{
	return call(c, verb, path, NULL, 0, value, out);
}

void vmheap_client_set_timeout(vmheap_client *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms;
}

const char *vmheap_client_vm(const vmheap_client *c)
{
	return c->vm;
}

pid_t vmheap_client_pid(const vmheap_client *c)
{
	return c->pid;
}

const char *vmheap_client_error(const vmheap_client *c)
{
	return c ? c->error : "out of memory";
}

void vmheap_client_close(vmheap_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}
