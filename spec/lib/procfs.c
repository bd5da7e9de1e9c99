/*
 * procfs.c - what /proc says about processes and connections, for tests
 * that wait for a process to reach a state (see vmheap_spec.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_spec.h"

int spec_children(pid_t parent, pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[300], buf[512], *p;
		long ppid;
		FILE *f;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		/* "pid (comm) state ppid ...": comm may hold anything, so
		 * read after its last ')' */
		if (!p || !(p = strrchr(buf, ')')) ||
		    sscanf(p + 1, " %*c %ld", &ppid) != 1 || ppid != parent)
			continue;
		if (n < max && out)
			out[n] = (pid_t)atol(e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

int spec_threads(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

int spec_tcp_count(uint16_t port, int local, unsigned state_mask)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) { /* the header */
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned lport, rport, st;

		if (sscanf(line, " %*d: %*8x:%4x %*8x:%4x %2x", &lport, &rport,
			   &st) != 3 ||
		    st >= 32)
			continue;
		if ((local ? lport : rport) == port &&
		    (state_mask & (1u << st)))
			n++;
	}
	fclose(f);
	return n;
}
