/*
 * socket.c - a raw TCP connection to an agent, and a port held by the
 * test (see vmheap_spec.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmheap_spec.h"

int spec_tcp_connect(uint16_t port)
{
	struct sockaddr_in sa = {0};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int spec_tcp_listen(uint16_t *port)
{
	struct sockaddr_in sa = {0};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_msg(fd >= 0, "socket: %s", strerror(errno));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_msg(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
			  listen(fd, 1) == 0 &&
			  getsockname(fd, (struct sockaddr *)&sa, &len) == 0,
		      "cannot listen on 127.0.0.1: %s", strerror(errno));
	*port = ntohs(sa.sin_port);
	return fd;
}
