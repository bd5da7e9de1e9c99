/*
 * attach_proc.c - what /proc says about a process before vmheap attaches
 * to it: its mapped files, its state, the signals it catches, its uid and
 * environment.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach-internal.h"

int attach_proc_module(pid_t pid, const char *prefix, struct attach_module *m)
{
	char path[64], line[1024];
	FILE *f;
	int found = 0;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];
		int name_at = 0;
		const char *file, *base;
		size_t n;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end,
			   perms, &off, &name_at) < 4 ||
		    !name_at)
			continue;
		file = line + name_at;
		if (*file != '/')
			continue;
		n = strcspn(file, "\n");
		base = strrchr(file, '/') + 1;
		if (strncmp(base, prefix, strlen(prefix)) != 0)
			continue;
		if (found &&
		    (strncmp(m->path, file, n) != 0 || m->path[n] != '\0'))
			continue; /* another file of the same prefix */
		if (!found) {
			if (n >= sizeof(m->path))
				continue;
			memcpy(m->path, file, n);
			m->path[n] = '\0';
			found = 1;
		}
		if (off == 0 && !m->base)
			m->base = start;
		if (perms[2] == 'x' && !m->exec_start) {
			m->exec_start = start;
			m->exec_end = end;
		}
	}
	fclose(f);
	return found && m->base && m->exec_start ? 0 : -1;
}

char attach_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command may hold spaces and ')' */
	if (!p || p[1] != ' ' || !p[2])
		return 0;
	return p[2];
}

/* The text after "key:" in /proc/PID/status, or -1. */
static int status_field(pid_t pid, const char *key, char *out, size_t len)
{
	char path[64], line[512];
	size_t klen = strlen(key);
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			snprintf(out, len, "%s", line + klen + 1);
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

int attach_proc_catches(pid_t pid, int sig)
{
	char v[64];
	unsigned long long mask;

	if (status_field(pid, "SigCgt", v, sizeof(v)) < 0 ||
	    sscanf(v, "%llx", &mask) != 1)
		return -1;
	return (mask >> (sig - 1)) & 1;
}

long attach_proc_uid(pid_t pid)
{
	char v[128];
	long uid;

	if (status_field(pid, "Uid", v, sizeof(v)) < 0 ||
	    sscanf(v, "%ld", &uid) != 1)
		return -1;
	return uid;
}

int attach_proc_has_cap(pid_t pid, int cap)
{
	char v[64];
	unsigned long long mask;

	if (status_field(pid, "CapEff", v, sizeof(v)) < 0 ||
	    sscanf(v, "%llx", &mask) != 1)
		return -1;
	return (mask >> cap) & 1;
}

#define CAP_SYS_PTRACE_BIT 19 /* linux/capability.h's CAP_SYS_PTRACE */

void attach_refusal(pid_t pid, char *err, size_t errlen)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = -1;
	long uid = attach_proc_uid(pid);
	int cap = attach_proc_has_cap(getpid(), CAP_SYS_PTRACE_BIT);
	int other = uid >= 0 && (uid_t)uid != geteuid();

	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	if (other && geteuid() != 0 && cap != 1)
		snprintf(err, errlen,
			 "pid %ld belongs to uid %ld, not to you, and only "
			 "its user or root may trace it: run vmheap-console "
			 "--attach as that user or as root",
			 (long)pid, uid);
	else if (other && cap == 0)
		snprintf(err, errlen,
			 "pid %ld belongs to uid %ld and this vmheap-console "
			 "runs without CAP_SYS_PTRACE (a container's or a "
			 "bounding set's default), which tracing another "
			 "user's process needs: give it that capability "
			 "(docker run --cap-add SYS_PTRACE) or run it as uid "
			 "%ld",
			 (long)pid, uid, uid);
	else if (scope >= 1)
		snprintf(err, errlen,
			 "the kernel does not let this process trace pid %ld: "
			 "Yama ptrace_scope is %d "
			 "(/proc/sys/kernel/yama/ptrace_scope); run as root "
			 "or with CAP_SYS_PTRACE%s",
			 (long)pid, scope,
			 scope >= 3 ? " (scope 3 forbids it to everyone)"
				    : ", or set it to 0");
	else
		snprintf(err, errlen,
			 "the kernel does not let this process trace pid %ld: "
			 "it made itself undumpable (PR_SET_DUMPABLE 0) or "
			 "runs under another security context (an LSM); "
			 "attach as root with CAP_SYS_PTRACE",
			 (long)pid);
}

int attach_proc_getenv(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	size_t nlen = strlen(name), cap = 65536, used = 0;
	char *env;
	ssize_t n;
	int fd, rc = -1;

	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	env = malloc(cap + 1);
	if (!env) {
		close(fd);
		return -1;
	}
	while (used < cap && (n = read(fd, env + used, cap - used)) > 0)
		used += (size_t)n;
	close(fd);
	env[used] = '\0';
	for (size_t i = 0; i < used; i += strlen(env + i) + 1)
		if (strncmp(env + i, name, nlen) == 0 && env[i + nlen] == '=' &&
		    strlen(env + i + nlen + 1) < len) {
			strcpy(buf, env + i + nlen + 1);
			rc = 0;
			break;
		}
	free(env);
	return rc;
}

int attach_proc_blocked(pid_t pid, uint64_t *mask)
{
	char v[64];
	unsigned long long m;

	if (status_field(pid, "SigBlk", v, sizeof(v)) < 0 ||
	    sscanf(v, "%llx", &m) != 1)
		return -1;
	*mask = m;
	return 0;
}

int attach_proc_seccomp(pid_t pid)
{
	char v[64];
	int mode;

	if (status_field(pid, "Seccomp", v, sizeof(v)) < 0 ||
	    sscanf(v, "%d", &mode) != 1)
		return -1;
	return mode;
}
