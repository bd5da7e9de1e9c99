/*
 * discovery.c - the discovery file <tmpdir>/vmheap-agent.<pid>: written
 * atomically by the agent, read and checked by clients, and cleaned of
 * dead agents by vmheap_discovery_list().
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-internal.h"
#include "vmheap_files.h"

#define DISCOVERY_PREFIX "vmheap-agent."
#define DISCOVERY_MAX_BYTES 8192

const char *vmheap_discovery_default_dir(void)
{
	const char *d = getenv("VMHEAP_AGENT_TMPDIR");

	if (d && *d)
		return d;
	d = getenv("TMPDIR");
	if (d && *d)
		return d;
	return "/tmp";
}

/*
 * Read /proc/PID/stat into buf and return what follows the process name
 * (" S 1 ...": the state is field 3), or NULL.
 */
static const char *proc_stat_fields(pid_t pid, char *buf, size_t len)
{
	char path[64];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return p && p[1] == ' ' ? p + 1 : NULL;
}

long long agent_proc_start_ticks(pid_t pid)
{
	char buf[1024];
	const char *p = proc_stat_fields(pid, buf, sizeof(buf));

	if (!p)
		return -1;
	/* p is before field 3; starttime is field 22. */
	for (int field = 2; field < 21; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	return strtoll(p + 1, NULL, 10);
}

/* The uid that owns process `pid` (its /proc directory), or -1. */
static long long proc_owner(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0 ? (long long)st.st_uid : -1;
}

/* Is `pid` a zombie (dead, not yet reaped) or dead ('X')? */
static int proc_is_zombie(pid_t pid)
{
	char buf[1024];
	const char *p = proc_stat_fields(pid, buf, sizeof(buf));

	return p && (p[1] == 'Z' || p[1] == 'X');
}

/* Replace bytes that cannot go into a key=value line. */
static void sanitise(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r' || (unsigned char)*s < 0x20)
			*s = ' ';
}

void agent_read_cmdline(char *buf, size_t buflen)
{
	ssize_t n;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	buf[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, buf, buflen - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = '\0';
		return;
	}
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	sanitise(buf);
}

/*
 * Give the finished file `tmp` the discovery name.  Our own file of that
 * name is replaced (a rename: a symbolic link is replaced, never
 * followed).  A name another user planted before the agent's first write
 * (a sticky /tmp refuses to replace it) does not stop the agent: the
 * file is published as vmheap-agent.PID-RANDOM, a name nobody can guess,
 * which readers take as well.  0, or -1 with errno.
 */
static int publish(struct vmheap_agent *a, const char *tmp)
{
	char alt[NAME_MAX + 1], prefix[64];
	struct stat st;
	int fd;

	if (a->discovery_written ||
	    fstatat(a->tmp_dfd, a->discovery_name, &st,
		    AT_SYMLINK_NOFOLLOW) < 0 ||
	    (S_ISREG(st.st_mode) && st.st_uid == geteuid()))
		/* ours (a dead process of the same pid left it) or free */
		return vmheap_file_publish(a->tmp_dfd, tmp, a->discovery_name,
					   VMHEAP_PUBLISH_REPLACE);
	/* planted: a fresh name, reserved with O_EXCL, then replaced */
	snprintf(prefix, sizeof(prefix), DISCOVERY_PREFIX "%d-", (int)a->pid);
	fd = vmheap_file_create_temp(a->tmp_dfd, prefix, "", 0600, alt,
				     sizeof(alt));
	if (fd < 0)
		return -1;
	close(fd);
	if (vmheap_file_publish(a->tmp_dfd, tmp, alt,
				VMHEAP_PUBLISH_REPLACE) < 0) {
		unlinkat(a->tmp_dfd, alt, 0);
		return -1;
	}
	memcpy(a->discovery_name, alt, strlen(alt) + 1);
	if (snprintf(a->discovery_path, sizeof(a->discovery_path), "%s/%s",
		     a->tmpdir, alt) >= (int)sizeof(a->discovery_path))
		a->discovery_path[0] = '\0'; /* cannot be: checked before */
	return 0;
}

int agent_discovery_write(struct vmheap_agent *a, char *err, size_t errlen)
{
	char tmp[NAME_MAX + 1], prefix[64], argv[512], exe[256];
	char dump_dir[PATH_MAX];
	char body[2048 + PATH_MAX];
	ssize_t n;
	int fd, len;
	size_t off = 0;

	if (!a->discovery_name[0])
		snprintf(a->discovery_name, sizeof(a->discovery_name),
			 DISCOVERY_PREFIX "%d", (int)a->pid);
	if (snprintf(a->discovery_path, sizeof(a->discovery_path), "%s/%s",
		     a->tmpdir, a->discovery_name) >=
	    (int)sizeof(a->discovery_path))
		return agent_fail(err, errlen, VMHEAP_EINVAL,
				  "discovery directory name too long: %s",
				  a->tmpdir);
	snprintf(prefix, sizeof(prefix), "." DISCOVERY_PREFIX "%d.",
		 (int)a->pid);
	agent_read_cmdline(argv, sizeof(argv));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	sanitise(exe);
	agent_dump_dir(a, dump_dir, sizeof(dump_dir));
	sanitise(dump_dir);
	len = snprintf(body, sizeof(body),
		       "pid=%d\naddress=tcp://%s:%u\ntoken=%s\nvm=%s\n"
		       "argv=%s\nexe=%s\nstarted=%lld\nproc_start=%lld\n"
		       "dump_dir=%s\n",
		       (int)a->pid, a->bind, (unsigned)a->port, a->token, a->vm,
		       argv, exe, (long long)a->started,
		       agent_proc_start_ticks(a->pid), dump_dir);
	if (len < 0 || len >= (int)sizeof(body))
		return agent_fail(err, errlen, VMHEAP_EINVAL,
				  "discovery file contents too long");

	/* created in the directory held open, a fresh name (O_EXCL) */
	fd = vmheap_file_create_temp(a->tmp_dfd, prefix, ".tmp", 0600, tmp,
				     sizeof(tmp));
	if (fd < 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot create a discovery file in %s: %s",
				  a->tmpdir, strerror(errno));
	while (off < (size_t)len) {
		n = write(fd, body + off, (size_t)len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (publish(a, tmp) < 0)
		goto fail;
	a->discovery_written = 1;
	return 0;
fail:
	len = errno;
	if (fd >= 0)
		close(fd);
	unlinkat(a->tmp_dfd, tmp, 0);
	return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
			  "cannot write discovery file %s: %s",
			  a->discovery_path, strerror(len));
}

void agent_discovery_remove(struct vmheap_agent *a)
{
	if (a->discovery_written && getpid() == a->pid) {
		unlinkat(a->tmp_dfd, a->discovery_name, 0);
		a->discovery_written = 0;
	}
}

/* Copy value into dst (dstlen bytes); -1 if it does not fit. */
static int take(char *dst, size_t dstlen, const char *v)
{
	size_t n = strlen(v);

	if (n >= dstlen)
		return -1;
	memcpy(dst, v, n + 1);
	return 0;
}

static int parse_address(struct vmheap_agent_info *info)
{
	const char *p = info->address, *colon;
	char *end;
	unsigned long port;
	size_t hl;

	if (strncmp(p, "tcp://", 6) != 0)
		return -1;
	p += 6;
	colon = strrchr(p, ':');
	if (!colon || colon == p)
		return -1;
	hl = (size_t)(colon - p);
	if (hl >= sizeof(info->host))
		return -1;
	memcpy(info->host, p, hl);
	info->host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port == 0 || port > 65535)
		return -1;
	info->port = (uint16_t)port;
	return 0;
}

static int parse_body(char *body, struct vmheap_agent_info *info,
		      long long *proc_start, char *err, size_t errlen)
{
	int have_pid = 0, have_addr = 0, have_token = 0, have_started = 0;
	int lineno = 0;
	char *line, *save = NULL;

	*proc_start = -1;
	for (line = strtok_r(body, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '='), *v, *end;
		int bad = 0;

		lineno++;
		if (!eq)
			return agent_fail(err, errlen, VMHEAP_AGENT_EDISCOVERY,
					  "line %d has no '='", lineno);
		*eq = '\0';
		v = eq + 1;
		if (!strcmp(line, "pid")) {
			long p;
			errno = 0;
			p = strtol(v, &end, 10);
			bad =
			    errno || *end || end == v || p <= 0 || p > INT_MAX;
			info->pid = (pid_t)p;
			have_pid = 1;
		} else if (!strcmp(line, "address")) {
			bad = take(info->address, sizeof(info->address), v) ||
			      parse_address(info);
			have_addr = 1;
		} else if (!strcmp(line, "token")) {
			bad = strlen(v) != 32 ||
			      strspn(v, "0123456789abcdef") != 32 ||
			      take(info->token, sizeof(info->token), v);
			have_token = 1;
		} else if (!strcmp(line, "vm")) {
			bad = take(info->vm, sizeof(info->vm), v);
		} else if (!strcmp(line, "argv")) {
			bad = take(info->argv, sizeof(info->argv), v);
		} else if (!strcmp(line, "exe")) {
			bad = take(info->exe, sizeof(info->exe), v);
		} else if (!strcmp(line, "dump_dir")) {
			/* optional (older agents lack it); too long: unknown */
			if (take(info->dump_dir, sizeof(info->dump_dir), v))
				info->dump_dir[0] = '\0';
		} else if (!strcmp(line, "started")) {
			errno = 0;
			info->started = strtoll(v, &end, 10);
			bad = errno || *end || end == v;
			have_started = 1;
		} else if (!strcmp(line, "proc_start")) {
			errno = 0;
			*proc_start = strtoll(v, &end, 10);
			bad = errno || *end || end == v;
		}
		/* unknown keys are ignored: newer agents may add some */
		if (bad)
			return agent_fail(err, errlen, VMHEAP_AGENT_EDISCOVERY,
					  "bad value for '%s' on line %d", line,
					  lineno);
	}
	if (!have_pid || !have_addr || !have_token || !have_started)
		return agent_fail(err, errlen, VMHEAP_AGENT_EDISCOVERY,
				  "missing key '%s'",
				  !have_pid	? "pid"
				  : !have_addr	? "address"
				  : !have_token ? "token"
						: "started");
	return 0;
}

static int read_checked(const char *path, struct vmheap_agent_info *info,
			long long *proc_start, char *err, size_t errlen)
{
	char body[DISCOVERY_MAX_BYTES + 1], why[256];
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, rc, foreign = 0;

	memset(info, 0, sizeof(*info));
	if (take(info->path, sizeof(info->path), path))
		return agent_fail(err, errlen, VMHEAP_AGENT_EDISCOVERY,
				  "path too long: %s", path);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			return agent_fail(err, errlen, VMHEAP_AGENT_EDISCOVERY,
					  "refusing %s: it is a symbolic link",
					  path);
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot open %s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) < 0) {
		rc = errno;
		close(fd);
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot stat %s: %s", path, strerror(rc));
	}
	why[0] = '\0';
	if (!S_ISREG(st.st_mode))
		snprintf(why, sizeof(why), "it is not a regular file");
	else if (st.st_uid != geteuid() && geteuid() != 0)
		snprintf(why, sizeof(why), "it is owned by uid %u, not by you",
			 (unsigned)st.st_uid);
	else if (st.st_uid != geteuid())
		foreign = 1; /* root: the process must be that user's, below */
	else if (st.st_mode & 077)
		snprintf(why, sizeof(why), "its mode is %03o; it must be 0600",
			 (unsigned)(st.st_mode & 0777));
	else if (st.st_size > DISCOVERY_MAX_BYTES)
		snprintf(why, sizeof(why), "it is larger than %d bytes",
			 DISCOVERY_MAX_BYTES);
	if (why[0]) {
		close(fd);
		return agent_fail(err, errlen, VMHEAP_AGENT_EDISCOVERY,
				  "refusing %s: %s", path, why);
	}
	while (got < DISCOVERY_MAX_BYTES) {
		n = read(fd, body + got, DISCOVERY_MAX_BYTES - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = errno;
			close(fd);
			return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
					  "cannot read %s: %s", path,
					  strerror(rc));
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	body[got] = '\0';
	if (memchr(body, '\0', got))
		return agent_fail(
		    err, errlen, VMHEAP_AGENT_EDISCOVERY,
		    "malformed discovery file %s: it holds a NUL byte", path);
	rc = parse_body(body, info, proc_start, why, sizeof(why));
	if (rc < 0)
		return agent_fail(err, errlen, rc,
				  "malformed discovery file %s: %s", path, why);
	if (foreign && proc_owner(info->pid) != (long long)st.st_uid)
		return agent_fail(err, errlen, VMHEAP_AGENT_EDISCOVERY,
				  "refusing %s: it is owned by uid %u, and "
				  "process %d is not that user's",
				  path, (unsigned)st.st_uid, (int)info->pid);
	return 0;
}

int vmheap_discovery_read(const char *path, struct vmheap_agent_info *info,
			  char *err, size_t errlen)
{
	long long ps;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !info)
		return agent_fail(err, errlen, VMHEAP_EINVAL,
				  "no discovery file or no info given");
	return read_checked(path, info, &ps, err, errlen);
}

/* Is the agent described by the file gone (dead or zombie pid, or a
 * reused pid)? */
static int agent_is_gone(const struct vmheap_agent_info *info,
			 long long proc_start)
{
	long long now;

	if (kill(info->pid, 0) < 0 && errno == ESRCH)
		return 1;
	if (proc_is_zombie(info->pid)) /* killed, not yet reaped */
		return 1;
	if (proc_start < 0)
		return 0;
	now = agent_proc_start_ticks(info->pid);
	return now >= 0 && now != proc_start;
}

static int by_pid(const void *x, const void *y)
{
	const struct vmheap_agent_info *a = x, *b = y;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

int vmheap_discovery_list(
    const char *tmpdir,
    void (*found)(void *arg, const struct vmheap_agent_info *info),
    void (*bad)(void *arg, const char *path, const char *why), void *arg)
{
	struct vmheap_agent_info *infos = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	if (!tmpdir)
		tmpdir = vmheap_discovery_default_dir();
	d = opendir(tmpdir);
	if (!d)
		return VMHEAP_AGENT_ESYS;
	while ((de = readdir(d)) != NULL) {
		const char *suffix;
		size_t n_digits;
		char path[PATH_MAX], why[512];
		struct vmheap_agent_info info;
		long long ps;
		struct stat st;

		if (strncmp(de->d_name, DISCOVERY_PREFIX,
			    strlen(DISCOVERY_PREFIX)) != 0)
			continue;
		suffix = de->d_name + strlen(DISCOVERY_PREFIX);
		/* PID, or PID-RANDOM when PID was planted (publish()) */
		n_digits = strspn(suffix, "0123456789");
		if (!n_digits ||
		    (suffix[n_digits] &&
		     (suffix[n_digits] != '-' || !suffix[n_digits + 1] ||
		      strspn(suffix + n_digits + 1, "0123456789abcdef") !=
			  strlen(suffix + n_digits + 1))))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		if (read_checked(path, &info, &ps, why, sizeof(why)) < 0) {
			if (bad)
				bad(arg, path, why);
			continue;
		}
		if (atoi(suffix) != info.pid) {
			if (bad)
				bad(arg, path,
				    "its pid does not match its name");
			continue;
		}
		if (agent_is_gone(&info, ps)) {
			if (lstat(path, &st) == 0 && st.st_uid == geteuid())
				unlink(path);
			continue;
		}
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 8;
			void *p = realloc(infos, nc * sizeof(*infos));
			if (!p) {
				free(infos);
				closedir(d);
				return VMHEAP_ENOMEM;
			}
			infos = p;
			cap = nc;
		}
		infos[n++] = info;
	}
	closedir(d);
	if (n)
		qsort(infos, n, sizeof(*infos), by_pid);
	for (size_t i = 0; i < n; i++)
		if (found)
			found(arg, &infos[i]);
	free(infos);
	return (int)n;
}
