/*
 * threads.c - the stack pointers of the process's other threads, noted
 * just before the fork of a dump (vmheap_native_scan_prepare) for the
 * child's leak scan (scan.c): only the forking thread survives fork(),
 * and below another thread's stack pointer lie dead frames whose stale
 * words would keep forgotten blocks reachable.
 *
 * A thread blocked in a system call (a VM's thread waiting for its lock
 * or for input, an idle worker) shows its stack pointer in
 * /proc/self/task/TID/syscall, without a signal; a running thread shows
 * "running", and the scan reads its whole stack mapping as before.  Read
 * with open/getdents64/read into static memory: no malloc (which would
 * be tracked while the program runs).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "native-internal.h"

#define MAX_THREADS 4096

static uint64_t sps[MAX_THREADS];
static size_t nsps;

uint64_t native_threads_parse_sp(const char *text)
{
	const char *p = text;
	if (*p < '0' || *p > '9')
		return 0; /* "running", or -1 (not in a system call) */
	for (int field = 0; field < 7; field++) {
		p = strchr(p, ' ');
		if (p == NULL)
			return 0;
		p++;
	}
	if (p[0] != '0' || p[1] != 'x')
		return 0;
	uint64_t v = 0;
	for (p += 2;; p++) {
		int d = *p >= '0' && *p <= '9'	 ? *p - '0'
			: *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
						 : -1;
		if (d < 0)
			return v;
		v = v << 4 | (uint64_t)d;
	}
}

VMHEAP_EXPORT int vmheap_native_scan_prepare(void)
{
	char buf[4096], path[64], text[256];
	long self = syscall(SYS_gettid);
	nsps = 0;
	int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return VMHEAP_EIO;
	for (;;) {
		long got = syscall(SYS_getdents64, dir, buf, sizeof buf);
		if (got <= 0)
			break;
		for (long at = 0; at < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + at);
			at += d->d_reclen;
			long tid = 0;
			for (const char *c = d->d_name; *c >= '0' && *c <= '9';
			     c++)
				tid = tid * 10 + (*c - '0');
			if (tid <= 0 || tid == self || nsps == MAX_THREADS)
				continue;
			snprintf(path, sizeof path,
				 "/proc/self/task/%ld/syscall", tid);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t n = read(fd, text, sizeof text - 1);
			close(fd);
			if (n <= 0)
				continue;
			text[n] = '\0';
			uint64_t sp = native_threads_parse_sp(text);
			if (sp != 0)
				sps[nsps++] = sp;
		}
	}
	close(dir);
	return (int)nsps;
}

uint64_t native_threads_sp_in(uint64_t lo, uint64_t hi)
{
	uint64_t best = 0;
	for (size_t i = 0; i < nsps; i++)
		if (sps[i] >= lo && sps[i] < hi && (best == 0 || sps[i] < best))
			best = sps[i];
	return best;
}

void native_threads_forget(void)
{
	nsps = 0;
}
