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

static void check_reply(vmheap_client *c, int rc, struct vmheap_reply *r)
{
	if (rc < 0) {
		if (!vmheap_client_error(c)[0])
			abort();
	} else if (!r->ok) {
		if (!memchr(r->code, '\0', sizeof(r->code)) ||
		    !memchr(r->message, '\0', sizeof(r->message)))
			abort();
	}
	vmheap_reply_release(r);
}

int fuzz_client_one(const uint8_t *data, size_t size)
{
	static const char token[] = "0123456789abcdef0123456789abcdef";
	struct vmheap_reply r;
	msgpack_object v;
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
		rc = vmheap_client_call(c, "get", "system.pid", NULL, &r);
		check_reply(c, rc, &r);
		v.type = MSGPACK_OBJECT_STR;
		v.via.str.ptr = "system.";
		v.via.str.size = 7;
		rc = vmheap_client_call(c, "list", "", &v, &r);
		check_reply(c, rc, &r);
		rc = vmheap_client_call_str(c, "set", "config.dump.gc", "true",
					    &r);
		check_reply(c, rc, &r);
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
