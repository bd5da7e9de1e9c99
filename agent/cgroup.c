/*
 * cgroup.c - how much memory a fork may take: the tightest of the
 * system's MemAvailable and the limits of the memory cgroups the process
 * is in (its own and every ancestor), for the fork guard (fork_guard.c) and
 * system.fork_estimate.
 *
 * In a container the host's MemAvailable says nothing of the container's
 * limit: a 207 MiB VM under a 300 MiB limit was OOM-killed by the copies
 * its fork dumps made while MemAvailable read 22 GB.  So:
 *
 *   /proc/self/cgroup      the process's cgroup: "0::PATH" (v2), and
 *                          "N:...memory...:PATH" (v1's memory hierarchy)
 *   /proc/self/mountinfo   where each hierarchy is mounted (cgroup2, and
 *                          cgroup with the memory option) and which of its
 *                          directories the mount shows (its root)
 *   each level, from the process's cgroup up to the mount's root:
 *     v2  memory.max ("max": none), memory.current
 *     v1  memory.limit_in_bytes (2^62 and above: none),
 *         memory.usage_in_bytes
 *     memory.stat's inactive_file (v1: total_inactive_file) is page
 *     cache the kernel reclaims before it kills: it is taken off the
 *     usage (a dump's own file fills the page cache)
 *   free at a level = limit - (usage - inactive_file), at least 0.
 *
 * VMHEAP_AGENT_TEST_CGROUP_PROC=DIR reads DIR/cgroup and DIR/mountinfo in
 * place of /proc/self's, so that a test can lay out a hierarchy (v2 on a
 * machine that has v1) in a directory of its own.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent-internal.h"

/* A "Name:   N kB" figure of /proc/meminfo in bytes, or -1. */
static long long meminfo_bytes(const char *name)
{
	char line[256];
	long long kb = -1;
	size_t nl = strlen(name);
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, nl) && line[nl] == ':') {
			kb = strtoll(line + nl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

long long agent_mem_available(void)
{
	const char *fake = getenv("VMHEAP_AGENT_TEST_MEM_AVAILABLE");
	char *end;
	long long v;

	if (fake && *fake) {
		errno = 0;
		v = strtoll(fake, &end, 10);
		if (!errno && !*end && v >= 0)
			return v;
	}
	return meminfo_bytes("MemAvailable");
}

/* Read the number in dir/name: 0 with *v set, 1 for "max" (no limit),
 * -1 if missing or not a number. */
static int read_number(const char *dir, const char *name, long long *v)
{
	char path[PATH_MAX + 64], line[64], *end;
	FILE *f;
	int rc = -1;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -1;
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "max", 3)) {
			rc = 1;
		} else {
			errno = 0;
			*v = strtoll(line, &end, 10);
			rc = errno || end == line || *v < 0 ? -1 : 0;
		}
	}
	fclose(f);
	return rc;
}

/* The value of `key` in dir/memory.stat, or 0. */
static long long stat_value(const char *dir, const char *key)
{
	char path[PATH_MAX + 64], line[256];
	size_t kl = strlen(key);
	long long v = 0;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/memory.stat", dir) >=
	    (int)sizeof(path))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ' ') {
			v = strtoll(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v < 0 ? 0 : v;
}

/* A file of /proc/self (or of the test's directory). */
static FILE *open_proc(const char *name)
{
	const char *dir = getenv("VMHEAP_AGENT_TEST_CGROUP_PROC");
	char path[PATH_MAX];

	if (dir && *dir)
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	return fopen(path, "re");
}

/* The process's cgroup in the v2 hierarchy (v2) or v1's memory one:
 * 0 with path set, else -1. */
static int own_cgroup(int v2, char *path, size_t len)
{
	char line[PATH_MAX + 128];
	FILE *f = open_proc("cgroup");
	int rc = -1;

	if (!f)
		return -1;
	while (rc < 0 && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2, *nl;

		if (!c1 || !(c2 = strchr(c1 + 1, ':')))
			continue;
		*c2 = '\0';
		if ((nl = strchr(c2 + 1, '\n')))
			*nl = '\0';
		if (v2 ? (!strcmp(line, "0:") || !strcmp(line, "0")) &&
			     c1[1] == '\0'
		       : strstr(c1 + 1, "memory") != NULL) {
			/* v1: the controller list holds "memory" as a word */
			if (!v2) {
				char *w, *save = NULL;
				int found = 0;

				for (w = strtok_r(c1 + 1, ",", &save); w;
				     w = strtok_r(NULL, ",", &save))
					found |= !strcmp(w, "memory");
				if (!found)
					continue;
			}
			if (strlen(c2 + 1) < len) {
				memcpy(path, c2 + 1, strlen(c2 + 1) + 1);
				rc = 0;
			}
		}
	}
	fclose(f);
	return rc;
}

/* Where the hierarchy is mounted (v2: cgroup2; v1: cgroup with the
 * memory option): 0 with the mount point and the mount's root, else
 * -1. */
static int mount_of(int v2, char *point, char *root, size_t len)
{
	char line[2 * PATH_MAX + 512];
	FILE *f = open_proc("mountinfo");
	int rc = -1;

	if (!f)
		return -1;
	while (rc < 0 && fgets(line, sizeof(line), f)) {
		char *save = NULL, *fld[6], *dash, *type, *super;
		int n = 0;

		dash = strstr(line, " - ");
		if (!dash)
			continue;
		*dash = '\0';
		type = strtok_r(dash + 3, " ", &save);
		strtok_r(NULL, " ", &save); /* source */
		super = strtok_r(NULL, " \n", &save);
		if (!type || !super)
			continue;
		if (v2 ? strcmp(type, "cgroup2") != 0
		       : strcmp(type, "cgroup") != 0 ||
			     !strstr(super, "memory"))
			continue;
		save = NULL;
		for (char *t = strtok_r(line, " ", &save); t && n < 6;
		     t = strtok_r(NULL, " ", &save))
			fld[n++] = t;
		if (n < 5 || strlen(fld[3]) >= len || strlen(fld[4]) >= len)
			continue;
		memcpy(root, fld[3], strlen(fld[3]) + 1);
		memcpy(point, fld[4], strlen(fld[4]) + 1);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* Walk one hierarchy from the process's cgroup up: the tightest level
 * into *m when it is tighter than m->available. */
static void walk_hierarchy(int v2, struct agent_mem_limit *m)
{
	char cg[PATH_MAX], point[PATH_MAX], root[PATH_MAX];
	char dir[2 * PATH_MAX + 8], rel[PATH_MAX];
	size_t rl;

	if (own_cgroup(v2, cg, sizeof(cg)) < 0 ||
	    mount_of(v2, point, root, sizeof(point)) < 0)
		return;
	rl = strlen(root);
	if (!strcmp(root, "/"))
		rl = 0;
	if (strncmp(cg, root, rl) != 0 || (cg[rl] != '/' && cg[rl] != '\0'))
		return; /* the cgroup is outside what the mount shows */
	snprintf(rel, sizeof(rel), "%s", cg + rl);
	for (;;) {
		long long limit, usage, inactive, free_bytes;
		char *slash;

		snprintf(dir, sizeof(dir), "%s%s", point,
			 strcmp(rel, "/") ? rel : "");
		if (read_number(dir,
				v2 ? "memory.max" : "memory.limit_in_bytes",
				&limit) == 0 &&
		    limit < (1LL << 62) &&
		    read_number(dir,
				v2 ? "memory.current"
				   : "memory.usage_in_bytes",
				&usage) == 0) {
			inactive = stat_value(dir, v2 ? "inactive_file"
						      : "total_inactive_file");
			if (!v2 && inactive == 0)
				inactive = stat_value(dir, "inactive_file");
			if (inactive > usage)
				inactive = usage;
			free_bytes = limit - (usage - inactive);
			if (free_bytes < 0)
				free_bytes = 0;
			if (m->available < 0 || free_bytes < m->available) {
				m->available = free_bytes;
				m->cg_limit = limit;
				m->cg_usage = usage;
				m->cg_inactive_file = inactive;
				snprintf(m->source, sizeof(m->source),
					 "cgroup %s", v2 ? "v2" : "v1");
				if (strlen(dir) < sizeof(m->cgroup))
					memcpy(m->cgroup, dir, strlen(dir) + 1);
			}
		}
		slash = strrchr(rel, '/');
		if (!slash || !rel[0] || !strcmp(rel, "/"))
			break;
		if (slash == rel)
			slash[1] = '\0'; /* up to the mount's root: "/" */
		else
			*slash = '\0';
	}
}

int agent_mem_limit(struct agent_mem_limit *m)
{
	memset(m, 0, sizeof(*m));
	m->cg_limit = m->cg_usage = m->cg_inactive_file = -1;
	m->mem_available = agent_mem_available();
	m->available = m->mem_available;
	snprintf(m->source, sizeof(m->source), "MemAvailable");
	walk_hierarchy(1, m);
	walk_hierarchy(0, m);
	return m->available < 0 ? -1 : 0;
}
