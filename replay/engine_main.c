/*
 * vmheap-replay-engine - the child of vmheap-replay that replays one
 * program under the allocator its environment preloads (not a command for
 * people: vmheap-replay starts it, see replay-internal.h).
 *
 * usage: vmheap-replay-engine PROGRAM_FD RESULT_FD recorded|1 first|pages
 *
 * It maps the sealed program that vmheap-replay wrote into PROGRAM_FD,
 * replays it (engine.c) and writes one struct rp_result on RESULT_FD.
 * Exit status 0 when the result was written (its status says how the
 * replay went), 2 otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay-internal.h"

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct rp_result r;
	const struct rp_program *p;
	int pfd, rfd, serial;

	if (argc != 5 || (strcmp(argv[3], "recorded") && strcmp(argv[3], "1")) ||
	    (strcmp(argv[4], "first") && strcmp(argv[4], "pages"))) {
		fprintf(stderr, "usage: vmheap-replay-engine PROGRAM_FD "
				"RESULT_FD recorded|1 first|pages (started by "
				"vmheap-replay)\n");
		return 2;
	}
	pfd = atoi(argv[1]);
	rfd = atoi(argv[2]);
	serial = !strcmp(argv[3], "1");
	p = rp_program_map(pfd, r.message, sizeof r.message);
	if (!p) {
		r.magic = RP_RESULT_MAGIC;
		r.status = RP_EINVAL;
	} else {
		close(pfd);
		rp_replay(p, serial, !strcmp(argv[4], "pages"), 0, &r);
	}
	if (write_all(rfd, &r, sizeof r) < 0)
		return 2;
	/* no unmapping, no freeing: the process ends with the blocks (and
	 * the allocator's own exit handlers run, after the answer) */
	return 0;
}
