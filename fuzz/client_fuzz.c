/*
 * client_fuzz.c - fuzz target of the client API (what vmheap-console runs)
 * against a peer that sends anything.
 *
 * A stale discovery file can name a port that another program now
 * listens on, so the client must take any bytes from its peer without
 * harm.  A server thread of this process accepts the connections of an
 * input (the client dials again when a peer closes before its hello),
 * sends each the input (as the "agent's" hello, auth reply and replies),
 * shuts down its writing side and drains what the client sends.  The
 * client connects with a token, then makes a get, a list and a set; each
 * call must end in 0 or a negative code with a message, and a reply's
 * code and message must be NUL-terminated.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "agent-internal.h"
#include "fuzz-internal.h"

static int listen_fd = -1;
static uint16_t port;
static sem_t start_sem, done_sem;
static const uint8_t *cur_data;
static size_t cur_size;
static int wake_pipe[2] = {-1, -1};

/* Serve one accepted connection the current input. */
static void serve_one(int fd)
{
	struct timeval tv = {5, 0};
	char sink[4096];
	size_t off = 0;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (off < cur_size) {
		ssize_t w =
		    send(fd, cur_data + off, cur_size - off, MSG_NOSIGNAL);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		ssize_t n = recv(fd, sink, sizeof(sink), 0);
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	close(fd);
}

/* Per input: every connection the client makes (it dials again when a
 * peer closes before its hello) gets the input, until the input's run
 * says it is over through wake_pipe. */
static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		int over = 0;

		while (sem_wait(&start_sem) < 0 && errno == EINTR)
			;
		while (!over) {
			struct pollfd p[2] = {{.fd = listen_fd, .events = POLLIN},
					      {.fd = wake_pipe[0],
					       .events = POLLIN}};
			char b;

			if (poll(p, 2, -1) < 0)
				continue;
			if (p[0].revents & POLLIN) {
				int fd = accept(listen_fd, NULL, NULL);

				if (fd >= 0)
					serve_one(fd);
			} else if (p[1].revents & POLLIN) {
				over = read(wake_pipe[0], &b, 1) == 1;
			}
		}
		sem_post(&done_sem);
	}
	return NULL;
}

static void setup(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	pthread_t t;

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (listen_fd < 0 ||
	    bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(listen_fd, 4) < 0 ||
	    getsockname(listen_fd, (struct sockaddr *)&sa, &len) < 0) {
		perror("client_fuzz: listen");
		abort();
	}
	port = ntohs(sa.sin_port);
	sem_init(&start_sem, 0, 0);
	sem_init(&done_sem, 0, 0);
	if (pipe2(wake_pipe, O_CLOEXEC) < 0)
		abort();
	if (pthread_create(&t, NULL, serve, NULL) != 0)
		abort();
	pthread_detach(t);
}

/* Read every part of a reply's value through the public readers. */
static void walk_value(const vmheap_value *v, int depth)
{
	const char *s;
	const void *p;
	size_t len, n;
	int64_t i;
	uint64_t u;
	double f;
	int b;

	if (!v || depth > 64)
		return;
	switch (vmheap_value_type(v)) {
	case VMHEAP_VALUE_STR:
		if (vmheap_value_str(v, &s, &len) < 0 || (len && !s))
			abort();
		break;
	case VMHEAP_VALUE_BIN:
		if (vmheap_value_bin(v, &p, &len) < 0)
			abort();
		break;
	case VMHEAP_VALUE_INT:
		if (vmheap_value_int(v, &i) < 0 && vmheap_value_uint(v, &u) < 0)
			abort();
		break;
	case VMHEAP_VALUE_FLOAT:
		if (vmheap_value_float(v, &f) < 0)
			abort();
		break;
	case VMHEAP_VALUE_BOOL:
		if (vmheap_value_bool(v, &b) < 0)
			abort();
		break;
	case VMHEAP_VALUE_ARRAY:
		if (vmheap_value_count(v, &n) < 0 || vmheap_value_at(v, n))
			abort();
		for (size_t k = 0; k < n; k++)
			walk_value(vmheap_value_at(v, k), depth + 1);
		break;
	case VMHEAP_VALUE_MAP:
		if (vmheap_value_count(v, &n) < 0 || vmheap_value_key(v, n))
			abort();
		for (size_t k = 0; k < n; k++) {
			walk_value(vmheap_value_key(v, k), depth + 1);
			walk_value(vmheap_value_val(v, k), depth + 1);
		}
		(void)vmheap_value_get(v, "pid");
		break;
	default:
		break;
	}
}

static void check_reply(vmheap_client *c, int rc, vmheap_reply *r)
{
	const void *data;
	size_t len;

	if (rc < 0) {
		if (!vmheap_client_error(c)[0])
			abort();
	} else if (!vmheap_reply_ok(r)) {
		if (strlen(vmheap_reply_code(r)) > 31 ||
		    strlen(vmheap_reply_message(r)) > 511)
			abort();
	} else {
		walk_value(vmheap_reply_value(r), 0);
		if (vmheap_reply_msgpack(r, &data, &len) < 0 || len == 0)
			abort();
	}
	vmheap_reply_free(r);
}

int fuzz_client_one(const uint8_t *data, size_t size)
{
	static const char token[] = "0123456789abcdef0123456789abcdef";
	static const char system_prefix[] = "\xa7system."; /* "system." */
	vmheap_reply *r;
	vmheap_client *c = NULL;
	int rc;

	if (listen_fd < 0)
		setup();
	cur_data = data;
	cur_size = size;
	sem_post(&start_sem);
	rc = vmheap_client_connect_addr(&c, "127.0.0.1", port, token, 5000);
	if (rc == 0) {
		if (!vmheap_client_vm(c))
			abort();
		vmheap_client_set_timeout(c, 5000);
		rc = vmheap_client_call(c, "get", "system.pid", NULL, 0, &r);
		check_reply(c, rc, r);
		rc = vmheap_client_call(c, "list", "", system_prefix,
					sizeof(system_prefix) - 1, &r);
		check_reply(c, rc, r);
		rc = vmheap_client_call_str(c, "set", "config.dump.gc", "true",
					    &r);
		check_reply(c, rc, r);
	} else if (c && !vmheap_client_error(c)[0]) {
		abort();
	}
	if (c)
		vmheap_client_close(c);
	if (write(wake_pipe[1], "x", 1) != 1)
		abort();
	while (sem_wait(&done_sem) < 0 && errno == EINTR)
		;
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_client_one(data, size);
}
#endif
