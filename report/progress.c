/*
 * progress.c - the progress bar the tools draw on a terminal while they
 * read a large dump (part of libvmheap-report).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vmheap_report.h"

int vmheap_progress_wanted(int fd, uint64_t size)
{
	return size >= VMHEAP_PROGRESS_MIN_BYTES && isatty(fd);
}

#define BAR_WIDTH 30

void vmheap_progress_update(void *progress, uint64_t offset)
{
	struct vmheap_progress *p = progress;
	char bar[BAR_WIDTH + 1], line[512];

	if (!p->total)
		return;
	if (offset > p->total)
		offset = p->total;
	unsigned pct = (unsigned)(offset * 100 / p->total);
	size_t fill = (size_t)(offset * BAR_WIDTH / p->total);
	memset(bar, '#', fill);
	memset(bar + fill, ' ', BAR_WIDTH - fill);
	bar[BAR_WIDTH] = '\0';
	int n = snprintf(line, sizeof(line), "\r%s %3u%% [%s] %llu/%llu MB",
			 p->name, pct, bar, (unsigned long long)(offset >> 20),
			 (unsigned long long)(p->total >> 20));
	if (n > 0 &&
	    write(p->fd, line,
		  (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) > 0)
		p->drawn = 1;
}

void vmheap_progress_clear(struct vmheap_progress *p)
{
	if (!p->drawn)
		return;
	if (write(p->fd, "\r\033[K", 4) < 0)
		return;
	p->drawn = 0;
}
