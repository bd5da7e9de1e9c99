/*
 * conn.c - the agent's connections, on the loop thread: accepting (with
 * the slots and the making of way under a flood), framing on the wire,
 * limits and timeouts, the hello, the replies and the replies still owed
 * to them.
 *
 * It alone owns connections.  A request that starts a long job (a dump)
 * leaves a reply owed: the job's handle, the connection and the request
 * id.  When the job ends, job.c wakes the loop, and agent_conn_job_done()
 * sends the result to the connection that is owed it, or drops it if that
 * connection has gone (the job itself is not affected).
 */
#include <arpa/inet.h>
#include <malloc.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>

#include "agent-internal.h"
#include "vmheap_files.h"

/* How long vmheap_agent_stop() spends writing the replies still queued. */
#define STOP_FLUSH_MS 2000
/* How long a closing connection keeps draining input after its reply. */
#define LINGER_MS 2000

struct agent_conn {
	struct vmheap_agent *agent;
	struct bufferevent *bev;
	int fd;
	int slot; /* index in agent->fd_slots */
	int authed;
	int sent_any;	  /* it has sent a byte */
	int closing;	  /* close once the output is flushed */
	int replies_owed; /* long jobs whose reply this connection awaits */
	int64_t frame_started; /* ms when a partial frame (or the connection)
				  began */
	msgpack_unpacked msg;  /* the request being dispatched */
	struct agent_conn *prev, *next;
};

/* A reply owed to a connection: the result of a long job.  Loop thread. */
struct agent_owed {
	uint64_t job;
	struct agent_conn *conn;
	uint64_t id; /* the request's */
	struct agent_owed *next;
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timeval tv_ms(int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	return tv;
}

/* ---------------------------------------------------------- connections */

static void schedule_trim(struct vmheap_agent *a);

static void conn_free(struct agent_conn *c)
{
	struct vmheap_agent *a = c->agent;

	if (c->prev)
		c->prev->next = c->next;
	else
		a->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	a->nconns--;
	/* its jobs go on; their replies will be dropped */
	for (struct agent_owed **pp = &a->owed; *pp;) {
		struct agent_owed *o = *pp;

		if (o->conn == c) {
			*pp = o->next;
			free(o);
		} else {
			pp = &o->next;
		}
	}
	if (c->slot >= 0)
		atomic_store(&a->fd_slots[c->slot], -1);
	bufferevent_free(c->bev);
	free(c);
	schedule_trim(a);
}

/* Output flushed on a closing connection: stop sending, keep reading
 * (and discarding) until EOF or LINGER_MS, so that the kernel does not
 * reset the connection over unread input and destroy our last reply. */
static void conn_linger(struct agent_conn *c)
{
	struct timeval tv = tv_ms(LINGER_MS);

	c->closing = 2;
	shutdown(c->fd, SHUT_WR);
	evbuffer_drain(bufferevent_get_input(c->bev),
		       evbuffer_get_length(bufferevent_get_input(c->bev)));
	bufferevent_set_timeouts(c->bev, &tv, &tv);
	bufferevent_enable(c->bev, EV_READ);
}

/* Unread replies of all clients, in bytes (loop thread). */
static size_t output_total(const struct vmheap_agent *a)
{
	size_t n = 0;

	for (const struct agent_conn *c = a->conns; c; c = c->next)
		n += evbuffer_get_length(bufferevent_get_output(c->bev));
	return n;
}

static void conn_queue(struct agent_conn *c, msgpack_sbuffer *sb)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);

	evbuffer_add(out, sb->data, sb->size);
	/* a slow reader, or all of them together past their share: no
	 * more requests are taken from this one until it reads */
	if (evbuffer_get_length(out) > AGENT_OUTPUT_HIGH_WATER ||
	    output_total(c->agent) > AGENT_OUTPUT_TOTAL_MAX)
		bufferevent_disable(c->bev, EV_READ);
}

/* Hand memory freed by closed connections back to the system, a moment
 * after the last of a burst closed (glibc keeps freed heap otherwise). */
void agent_conn_trim_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	malloc_trim(0);
}

static void schedule_trim(struct vmheap_agent *a)
{
	struct timeval tv = {0, 200 * 1000};

	if (a->trim_ev && !event_pending(a->trim_ev, EV_TIMEOUT, NULL))
		event_add(a->trim_ev, &tv);
}

static void pack_id(msgpack_packer *pk, const uint64_t *id)
{
	if (id)
		msgpack_pack_uint64(pk, *id);
	else
		msgpack_pack_nil(pk);
}

/* Send [id, "error", word(code), message]; close after if `close_after`. */
static void conn_send_error(struct agent_conn *c, const uint64_t *id, int code,
			    const char *message, int close_after)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct timeval tv;

	if (c->closing)
		return;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	frame_begin(&sb);
	msgpack_pack_array(&pk, 4);
	pack_id(&pk, id);
	frame_pack_str(&pk, "error");
	frame_pack_str(&pk, agent_code_word(code));
	frame_pack_str(&pk, message);
	frame_end(&sb, 0); /* messages are short */
	conn_queue(c, &sb);
	msgpack_sbuffer_destroy(&sb);
	if (close_after) {
		c->closing = 1;
		bufferevent_disable(c->bev, EV_READ);
		/* a client that will not read its last reply cannot hold us */
		tv = tv_ms(c->agent->frame_timeout_ms);
		bufferevent_set_timeouts(c->bev, NULL, &tv);
	}
}

/* Send [id, "ok", <raw value bytes>]; id NULL means nil. */
static void conn_send_ok(struct agent_conn *c, const uint64_t *id,
			 const char *value, size_t value_len)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	char msg[128];

	if (c->closing)
		return;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	frame_begin(&sb);
	if (value_len > AGENT_OUTPUT_SMALL_REPLY &&
	    output_total(c->agent) + value_len > AGENT_OUTPUT_TOTAL_MAX) {
		snprintf(msg, sizeof(msg),
			 "the agent holds %u MiB of replies its clients have "
			 "not read; read yours and ask again",
			 AGENT_OUTPUT_TOTAL_MAX >> 20);
		msgpack_sbuffer_destroy(&sb);
		conn_send_error(c, id, VMHEAP_AGENT_ELIMIT, msg, 0);
		return;
	}
	msgpack_pack_array(&pk, 3);
	pack_id(&pk, id);
	frame_pack_str(&pk, "ok");
	msgpack_sbuffer_write(&sb, value, value_len);
	if (frame_end(&sb, 0) < 0) {
		snprintf(
		    msg, sizeof(msg),
		    "the reply (%zu bytes) exceeds the frame limit of %u bytes",
		    sb.size - 4, VMHEAP_MAX_FRAME_BYTES);
		msgpack_sbuffer_destroy(&sb);
		conn_send_error(c, id, VMHEAP_AGENT_ELIMIT, msg, 0);
		return;
	}
	conn_queue(c, &sb);
	msgpack_sbuffer_destroy(&sb);
}

static void send_hello(struct agent_conn *c)
{
	struct vmheap_agent *a = c->agent;
	msgpack_sbuffer sb;
	msgpack_packer pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	frame_begin(&sb);
	msgpack_pack_array(&pk, 4);
	frame_pack_str(&pk, "hello");
	msgpack_pack_uint64(&pk, VMHEAP_PROTOCOL_VERSION);
	frame_pack_str(&pk, a->vm);
	msgpack_pack_uint64(&pk, (uint64_t)a->pid);
	frame_end(&sb, 0);
	conn_queue(c, &sb);
	msgpack_sbuffer_destroy(&sb);
}

/* Read timeout: the frame timeout before auth and while a frame is
 * partly received, the idle timeout between requests, and none while
 * the connection waits for a long job (which may outlast any timeout). */
static void conn_set_timeouts(struct agent_conn *c)
{
	struct vmheap_agent *a = c->agent;
	size_t pending = evbuffer_get_length(bufferevent_get_input(c->bev));
	struct timeval rd, wr = tv_ms(a->frame_timeout_ms);
	int ms;

	if (!c->authed || pending) {
		if (!c->frame_started)
			c->frame_started = mono_ms();
		ms = a->frame_timeout_ms - (int)(mono_ms() - c->frame_started);
		if (ms < 1)
			ms = 1;
	} else if (c->replies_owed) {
		c->frame_started = 0;
		bufferevent_set_timeouts(c->bev, NULL, &wr);
		return;
	} else {
		c->frame_started = 0;
		ms = a->idle_timeout_ms;
	}
	rd = tv_ms(ms);
	bufferevent_set_timeouts(c->bev, &rd, &wr);
}

/* Send what dispatch decided, or record the reply a long job owes. */
static void conn_answer(struct agent_conn *c, struct agent_outcome *out)
{
	const uint64_t *id = out->has_id ? &out->id : NULL;
	struct vmheap_agent *a = c->agent;
	struct agent_owed *o;

	switch (out->kind) {
	case AGENT_OUTCOME_OK:
		conn_send_ok(c, id, out->value.sb.data, out->value.sb.size);
		break;
	case AGENT_OUTCOME_ERROR:
		conn_send_error(c, id, out->code, out->message, out->close);
		break;
	case AGENT_OUTCOME_PENDING:
		o = malloc(sizeof(*o));
		if (!o) {
			conn_send_error(c, id, VMHEAP_ENOMEM,
					"out of memory: the job goes on, but "
					"its reply cannot be kept",
					0);
			break;
		}
		o->job = out->job;
		o->conn = c;
		o->id = out->id;
		o->next = a->owed;
		a->owed = o;
		c->replies_owed++;
		break;
	}
}

/* The completion callback of long jobs (agent_jobs_deliver, loop
 * thread): reply to the connection owed the job's result, if any. */
void agent_conn_job_done(void *arg, uint64_t job,
			 const struct agent_job_result *res)
{
	struct vmheap_agent *a = arg;
	struct agent_owed **pp, *o = NULL;
	struct agent_conn *c;
	uint64_t id;

	for (pp = &a->owed; *pp; pp = &(*pp)->next)
		if ((*pp)->job == job) {
			o = *pp;
			*pp = o->next;
			break;
		}
	if (!o)
		return; /* the client left; the job finished anyway */
	c = o->conn;
	id = o->id;
	free(o);
	c->replies_owed--;
	if (!c->closing)
		conn_set_timeouts(c); /* the idle clock starts again */
	if (res->code < 0)
		conn_send_error(c, &id, res->code, res->message, 0);
	else
		conn_send_ok(c, &id, res->value, res->value_len);
}

/* A job's thread says it ended: deliver on the loop thread. */
void agent_conn_jobs_wake(void *arg)
{
	struct vmheap_agent *a = arg;

	event_active(a->jobs_ev, EV_READ, 0);
}

void agent_conn_jobs_cb(int fd, short what, void *arg)
{
	struct vmheap_agent *a = arg;

	(void)fd;
	(void)what;
	agent_jobs_deliver(a->jobs);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	struct agent_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	char why[256], msg[320];
	int was_authed;

	c->sent_any = 1;
	if (c->closing) {
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	while (!c->closing && !c->agent->stale) {
		size_t avail = evbuffer_get_length(in);
		/* in the connection, not on this stack: a fork during the
		 * request (sample.fork, a dump) sees it reachable */
		msgpack_unpacked *m = &c->msg;
		struct agent_outcome out;
		unsigned char hdr[4];
		uint32_t len;
		char *data;

		if (avail < 4)
			break;
		evbuffer_copyout(in, hdr, 4);
		len = frame_length(hdr);
		if (len > (c->authed ? VMHEAP_MAX_FRAME_BYTES
				     : AGENT_PREAUTH_MAX_FRAME)) {
			snprintf(msg, sizeof(msg),
				 "frame of %u bytes exceeds the limit of %u "
				 "bytes%s",
				 len,
				 c->authed ? VMHEAP_MAX_FRAME_BYTES
					   : AGENT_PREAUTH_MAX_FRAME,
				 c->authed ? "" : " before auth");
			conn_send_error(c, NULL, VMHEAP_AGENT_ELIMIT, msg, 1);
			break;
		}
		if (len == 0) {
			conn_send_error(c, NULL, VMHEAP_AGENT_EPROTO,
					"empty frame (length 0)", 1);
			break;
		}
		if (avail - 4 < len)
			break; /* wait for the rest */
		evbuffer_drain(in, 4);
		data = (char *)evbuffer_pullup(in, len);
		msgpack_unpacked_init(m);
		if (!data ||
		    frame_decode_limited(data, len, AGENT_MAX_REQUEST_OBJECTS,
					 m, why, sizeof(why)) < 0) {
			snprintf(msg, sizeof(msg), "bad frame: %s",
				 data ? why : "out of memory");
			conn_send_error(c, NULL, VMHEAP_AGENT_EPROTO, msg, 1);
			msgpack_unpacked_destroy(m);
			break;
		}
		evbuffer_drain(in, len);
		c->frame_started = 0;
		was_authed = c->authed;
		agent_dispatch(c->agent, &c->authed, &m->data, &out);
		if (c->authed && !was_authed) /* frames may be large now */
			bufferevent_setwatermark(bev, EV_READ, 0, 0);
		conn_answer(c, &out);
		agent_outcome_release(&out);
		msgpack_unpacked_destroy(m);
	}
	if (!c->closing) {
		if (evbuffer_get_length(in) && c->frame_started &&
		    mono_ms() - c->frame_started > c->agent->frame_timeout_ms) {
			snprintf(msg, sizeof(msg),
				 "a frame took longer than %d ms to arrive",
				 c->agent->frame_timeout_ms);
			conn_send_error(c, NULL, VMHEAP_AGENT_ETIMEOUT, msg, 1);
		} else {
			conn_set_timeouts(c);
		}
	}
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	struct agent_conn *c = arg;
	size_t out = evbuffer_get_length(bufferevent_get_output(bev));

	if (c->closing == 1 && out == 0) {
		conn_linger(c);
		return;
	}
	if (!c->closing && out < AGENT_OUTPUT_HIGH_WATER / 2 &&
	    !(bufferevent_get_enabled(bev) & EV_READ))
		bufferevent_enable(bev, EV_READ);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct agent_conn *c = arg;
	char msg[160];

	(void)bev;
	if ((what & BEV_EVENT_TIMEOUT) && !c->closing &&
	    (what & BEV_EVENT_READING)) {
		int partial = c->frame_started && c->authed;

		snprintf(msg, sizeof(msg),
			 !c->authed ? "no auth within %d ms"
			 : partial  ? "a frame took longer than %d ms to arrive"
				    : "idle for %d ms",
			 (!c->authed || partial) ? c->agent->frame_timeout_ms
						 : c->agent->idle_timeout_ms);
		conn_send_error(c, NULL, VMHEAP_AGENT_ETIMEOUT, msg, 1);
		return;
	}
	if ((what & BEV_EVENT_EOF) && !c->closing) {
		struct evbuffer *in = bufferevent_get_input(c->bev);
		size_t got = evbuffer_get_length(in);

		if (got) {
			/* the client stopped sending inside a frame; it may
			 * still read, so say so before closing */
			unsigned char hdr[4] = {0};

			evbuffer_copyout(in, hdr, got < 4 ? got : 4);
			if (got < 4)
				snprintf(msg, sizeof(msg),
					 "truncated frame: the connection "
					 "ended after %zu of 4 header bytes",
					 got);
			else
				snprintf(msg, sizeof(msg),
					 "truncated frame: the connection "
					 "ended after %zu of %u bytes",
					 got - 4, frame_length(hdr));
			conn_send_error(c, NULL, VMHEAP_AGENT_EPROTO, msg, 1);
			return;
		}
	}
	/* EOF, error, a closing connection's timeout, or a write timeout */
	conn_free(c);
}

static int take_slot(struct vmheap_agent *a, int fd)
{
	for (int i = 0; i < a->nslots; i++) {
		int expect = -1;
		if (atomic_compare_exchange_strong(&a->fd_slots[i], &expect,
						   fd))
			return i;
	}
	return -1;
}

/* Has the peer sent bytes that the loop has not read yet?  A client
 * sends its token right after connecting; while the listener drains a
 * long backlog that token waits in the socket, unread. */
static int has_unread_input(const struct agent_conn *c)
{
	int n = 0;

	return ioctl(c->fd, FIONREAD, &n) == 0 && n > 0;
}

/* Make room for a new connection when every slot is taken: close one
 * that has not sent the token, the first found of: one already refused
 * (closing), the oldest that has sent nothing at all, not even bytes
 * still unread in its socket (a client on its way in has its auth frame
 * in flight), the oldest.  The list is newest first.  Nothing is sent to
 * it. */
static void drop_oldest_unauthed(struct vmheap_agent *a)
{
	struct agent_conn *oldest = NULL, *closing = NULL, *last = NULL;

	for (struct agent_conn *c = a->conns; c; c = c->next) {
		last = c;
		if (!c->authed) {
			oldest = c;
			if (c->closing)
				closing = c;
		}
	}
	if (closing) {
		conn_free(closing);
		return;
	}
	/* oldest first; a socket is asked only until a silent one is found */
	for (struct agent_conn *c = last; c; c = c->prev)
		if (!c->authed && !c->sent_any && !has_unread_input(c)) {
			conn_free(c);
			return;
		}
	if (oldest)
		conn_free(oldest);
}

/* Read and drop what the peer already sent, so that closing the socket
 * sends a FIN after the refusal rather than a reset that could discard
 * the refusal before the client reads it. */
static void discard_unread_input(int fd)
{
	char buf[512];
	int left = 16;

	while (left-- > 0 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

void agent_conn_accept(struct evconnlistener *l, evutil_socket_t fd,
		       struct sockaddr *sa, int socklen, void *arg)
{
	struct vmheap_agent *a = arg;
	struct agent_conn *c;
	char msg[128];

	(void)l;
	(void)sa;
	(void)socklen;
	if (atomic_load(&a->stale)) {
		close(fd);
		return;
	}
	/* room for an honest client: connections that have not sent the
	 * token are few, and the oldest of them makes way */
	if (a->nconns >= a->max_clients)
		drop_oldest_unauthed(a);
	if (a->nconns >= a->max_clients) {
		/* A short frame sent straight away: [nil, "error", "limit", m]
		 */
		msgpack_sbuffer sb;
		msgpack_packer pk;

		snprintf(msg, sizeof(msg),
			 "too many clients (the limit is %d); try again later",
			 a->max_clients);
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		frame_begin(&sb);
		msgpack_pack_array(&pk, 4);
		msgpack_pack_nil(&pk);
		frame_pack_str(&pk, "error");
		frame_pack_str(&pk, agent_code_word(VMHEAP_AGENT_ELIMIT));
		frame_pack_str(&pk, msg);
		frame_end(&sb, 0);
		if (send(fd, sb.data, sb.size, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			(void)0; /* it goes away either way */
		msgpack_sbuffer_destroy(&sb);
		shutdown(fd, SHUT_WR);
		discard_unread_input(fd);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->agent = a;
	c->fd = fd;
	c->slot = take_slot(a, fd);
	c->bev = bufferevent_socket_new(a->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		if (c->slot >= 0)
			atomic_store(&a->fd_slots[c->slot], -1);
		close(fd);
		free(c);
		return;
	}
	c->next = a->conns;
	if (a->conns)
		a->conns->prev = c;
	a->conns = c;
	a->nconns++;
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	/* before auth no more than one small frame is buffered */
	bufferevent_setwatermark(c->bev, EV_READ, 0,
				 AGENT_PREAUTH_MAX_FRAME + 4);
	conn_set_timeouts(c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	send_hello(c);
}

/*
 * At stop: write what every connection still has queued (the reply of a
 * dump that ended as the VM was exiting, above all) before the loop
 * ends, waiting at most STOP_FLUSH_MS in all for slow readers.
 */
void agent_conns_flush(struct vmheap_agent *a)
{
	int64_t deadline = mono_ms() + STOP_FLUSH_MS;

	for (struct agent_conn *c = a->conns; c; c = c->next) {
		struct evbuffer *out = bufferevent_get_output(c->bev);

		/* a socket bufferevent keeps the draining end of its output
		 * frozen except while it writes; write as it would, since
		 * the loop will not run again */
		evbuffer_unfreeze(out, 1);
		while (evbuffer_get_length(out) > 0) {
			struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
			int64_t left = deadline - mono_ms();

			if (left <= 0)
				break;
			if (evbuffer_write(out, c->fd) > 0)
				continue;
			if (errno != EAGAIN && errno != EINTR)
				break;
			poll(&pfd, 1, (int)left);
		}
		evbuffer_freeze(out, 1);
	}
}

void agent_conns_free(struct vmheap_agent *a)
{
	while (a->conns)
		conn_free(a->conns);
}
