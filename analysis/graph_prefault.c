/*
 * graph_prefault.c - the page faults of a fresh array taken on the second
 * processor: a thread asks the kernel to fill the array's page tables
 * (madvise MADV_POPULATE_WRITE, Linux 5.14, a huge page's worth at a
 * time, from the start) while the caller begins to write it, also from
 * the start.  What the kernel does at a first touch, clearing the page,
 * then happens ahead of the caller on the other core; at 100M objects it
 * was 5-7% of the dominators' CPU, on the path of the one thread the
 * search and the semidominators run on.  Contents are never written.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "graph-internal.h"

#define CHUNK ((size_t)2 << 20)

/* Below this many bytes in all, a thread costs more than it saves. */
#define PREFAULT_MIN ((size_t)16 << 20)

static void *prefault_main(void *arg)
{
#ifdef MADV_POPULATE_WRITE
	struct graph_prefault *f = arg;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	for (int i = 0; i < f->n; i++) {
		uintptr_t at =
		    ((uintptr_t)f->part[i].p + page - 1) & ~(page - 1);
		uintptr_t end =
		    ((uintptr_t)f->part[i].p + f->part[i].bytes) & ~(page - 1);
		while (at < end &&
		       !atomic_load_explicit(&f->stop, memory_order_relaxed)) {
			size_t len = end - at < CHUNK ? end - at : CHUNK;
			int rc = madvise((void *)at, len, MADV_POPULATE_WRITE);
			if (rc != 0 && errno == EINVAL)
				return NULL; /* a kernel without it */
			at += len;
		}
	}
#else
	(void)arg;
#endif
	return NULL;
}

void graph_prefault_add(struct graph_prefault *f, void *p, size_t bytes)
{
	if (p && f->n < GRAPH_PREFAULT_PARTS)
		f->part[f->n++] = (struct graph_prefault_part){p, bytes};
}

void graph_prefault_begin(struct graph_prefault *f)
{
	size_t total = 0;

	for (int i = 0; i < f->n; i++)
		total += f->part[i].bytes;
	atomic_store(&f->stop, 0);
	f->started = total >= PREFAULT_MIN &&
		     sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
		     pthread_create(&f->tid, NULL, prefault_main, f) == 0;
}

void graph_prefault_end(struct graph_prefault *f)
{
	if (f->started) {
		atomic_store(&f->stop, 1);
		pthread_join(f->tid, NULL);
	}
	f->started = 0;
	f->n = 0;
}
