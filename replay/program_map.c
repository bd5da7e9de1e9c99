/*
 * program_map.c - a replay program's memfd mapped read-only, its header
 * checked against the file (the engine's side of replay-internal.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "replay-internal.h"

const struct rp_program *rp_program_map(int fd, char *err, size_t errsz)
{
	struct stat st;
	const struct rp_program *p;
	uint64_t need;

	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof *p) {
		snprintf(err, errsz, "the replay program is missing or short");
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ,
		 MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(err, errsz, "cannot map the replay program: %s",
			 strerror(errno));
		return NULL;
	}
	need = p->serial_off + p->nevents * sizeof(uint64_t);
	if (p->magic != RP_PROGRAM_MAGIC || p->bytes != (uint64_t)st.st_size ||
	    p->threads_off > p->bytes || p->events_off > p->bytes ||
	    p->serial_off > p->bytes || need > p->bytes) {
		munmap((void *)p, (size_t)st.st_size);
		snprintf(err, errsz, "the replay program is malformed");
		return NULL;
	}
	return p;
}

void rp_program_unmap(const struct rp_program *p)
{
	if (p)
		munmap((void *)p, p->bytes);
}
