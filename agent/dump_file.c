/*
 * dump_file.c - a dump's file: where it goes, its temporary name, its
 * publishing, and the sweeping of stale temporaries.
 *
 * A dump request's path is resolved inside the dump directory (held by
 * fd, dump_dir.c), component by component without following symbolic
 * links.  The dump is written to a temporary file (O_EXCL, mode 0600) in
 * the target's directory whose name carries the writer's pid and start
 * time, and given its name with renameat2(RENAME_NOREPLACE) (or link(),
 * where the file system lacks it; vmheap_file_publish), so that an
 * existing file is never replaced.  Temporaries whose writer is gone
 * (kill -9, OOM) are removed by the next agent that sees them.
 */
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

/* Temporary dump files: TMP_PREFIX "<pid>-<start ticks>.<random>.tmp". */
#define TMP_PREFIX ".vmheap-dump."

/* Open the directory that will hold the dump; *name is the last part.
 * Components are opened one by one without following symbolic links. */
static int open_target_dir(struct vmheap_agent *a, char *dump_dir, char *where,
			   size_t dirlen, const char *path, char *rel,
			   size_t rellen, const char **name,
			   struct agent_dump_result *res)
{
	size_t dl;
	char *comp, *next;
	int dfd;

	/* this dump's directory, held open since it was set: a later `set
	 * config.dump.dir` does not move a dump that has started, and a
	 * directory swapped for a symbolic link is not followed */
	dfd = agent_dump_dir_open(a, dump_dir, where, dirlen);
	if (dfd < 0)
		goto sys;
	dl = strlen(dump_dir);

	if (path[0] == '/') {
		if (dl == 1) {
			path++;
		} else if (!strncmp(path, dump_dir, dl) && path[dl] == '/') {
			path += dl + 1;
		} else {
			close(dfd);
			res->code = VMHEAP_AGENT_EPATH;
			agent_msgf(res->message, sizeof(res->message),
				   "path %s is outside the dump directory %s",
				   path, dump_dir);
			return -1;
		}
	}
	if (strlen(path) >= rellen) {
		close(dfd);
		res->code = VMHEAP_AGENT_EPATH;
		agent_msgf(res->message, sizeof(res->message), "path too long");
		return -1;
	}
	strcpy(rel, path);
	/* refuse any ".." before touching the file system */
	for (comp = rel; comp; comp = next) {
		next = strchr(comp, '/');
		if ((next ? (size_t)(next - comp) : strlen(comp)) == 2 &&
		    !strncmp(comp, "..", 2)) {
			close(dfd);
			res->code = VMHEAP_AGENT_EPATH;
			agent_msgf(
			    res->message, sizeof(res->message),
			    "path %s contains \"..\"; dumps stay inside the "
			    "dump directory %s",
			    path, dump_dir);
			return -1;
		}
		if (next)
			next++;
	}
	if (strlen(rel) > 1 && rel[strlen(rel) - 1] == '/') {
		close(dfd);
		res->code = VMHEAP_AGENT_EPATH;
		agent_msgf(res->message, sizeof(res->message),
			   "path %s names a directory, not a file", path);
		return -1;
	}
	comp = rel;
	for (;;) {
		int nfd;

		while (*comp == '/')
			comp++;
		next = strchr(comp, '/');
		if (!next)
			break;
		*next = '\0';
		if (!*comp || !strcmp(comp, ".")) {
			*next = '/';
			comp = next + 1;
			continue;
		}
		nfd = openat(dfd, comp,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			int e = errno;
			*next = '/';
			close(dfd);
			res->code = VMHEAP_AGENT_EPATH;
			agent_msgf(res->message, sizeof(res->message),
				   "cannot use directory %.*s of %s: %s%s",
				   (int)(next - rel), rel, path, strerror(e),
				   e == ELOOP || e == ENOTDIR
				       ? " (symbolic links are not followed)"
				       : "");
			return -1;
		}
		close(dfd);
		dfd = nfd;
		*next = '/';
		comp = next + 1;
	}
	if (!*comp || !strcmp(comp, ".")) {
		close(dfd);
		res->code = VMHEAP_AGENT_EPATH;
		agent_msgf(res->message, sizeof(res->message),
			   "path %s names a directory, not a file", path);
		return -1;
	}
	*name = comp;
	return dfd;
sys:
	res->code = VMHEAP_AGENT_ESYS;
	agent_msgf(res->message, sizeof(res->message),
		   "cannot open the dump directory %s: %s", dump_dir,
		   strerror(errno));
	return -1;
}

int agent_dump_target(struct vmheap_agent *a, const char *path, char *rel,
		      size_t rellen, const char **name,
		      struct agent_dump_result *res)
{
	char dump_dir[PATH_MAX], where[PATH_MAX];
	size_t o;
	const char *p = rel;
	int dfd;

	dfd = open_target_dir(a, dump_dir, where, sizeof(dump_dir), path, rel,
			      rellen, name, res);
	if (dfd < 0)
		return -1;
	/* the reply names the file plainly (no "." or "//" parts) where it
	 * is: in the directory held open */
	o = strlen(where);
	memcpy(res->path, where, o + 1);
	while (*p) {
		size_t l = strcspn(p, "/");
		if (l && !(l == 1 && *p == '.') &&
		    o + l + 2 < sizeof(res->path)) {
			if (o && res->path[o - 1] != '/')
				res->path[o++] = '/';
			memcpy(res->path + o, p, l);
			o += l;
			res->path[o] = '\0';
		}
		p += l;
		while (*p == '/')
			p++;
	}
	return dfd;
}

/*
 * Is the writer named by a temporary file's name gone?  The name is
 * TMP_PREFIX "<pid>-<start ticks>.<random>.tmp"; the writer is gone when
 * no process has that pid, or the one that has it started at another
 * time (the pid was reused).  Names of another form are never judged.
 */
/* Digits at *p as a number (at most 18 of them); advances *p. */
static int take_digits(const char **p, long long *out)
{
	int n = 0;

	*out = 0;
	while (**p >= '0' && **p <= '9' && n < 18) {
		*out = *out * 10 + (**p - '0');
		(*p)++;
		n++;
	}
	return n > 0 && !(**p >= '0' && **p <= '9') ? 0 : -1;
}

int agent_tmp_writer_gone(const char *name)
{
	long long pid, start, now;
	const char *p = name;

	if (strncmp(p, TMP_PREFIX, strlen(TMP_PREFIX)) != 0)
		return 0;
	p += strlen(TMP_PREFIX);
	if (take_digits(&p, &pid) < 0 || *p++ != '-' ||
	    take_digits(&p, &start) < 0 || *p++ != '.' ||
	    strspn(p, "0123456789abcdef") == 0)
		return 0;
	p += strspn(p, "0123456789abcdef");
	if (strcmp(p, ".tmp") != 0 || pid <= 0 || pid > INT_MAX)
		return 0;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 1;
	now = agent_proc_start_ticks((pid_t)pid);
	return now >= 0 && now != start;
}

void agent_dump_sweep(struct vmheap_agent *a, int dfd)
{
	uint64_t files = 0, bytes = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd = dup(dfd);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!agent_tmp_writer_gone(de->d_name))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0) {
			files++;
			bytes += (uint64_t)st.st_size;
		}
	}
	closedir(d);
	pthread_mutex_lock(&a->lock);
	a->swept_files += files;
	a->swept_bytes += bytes;
	pthread_mutex_unlock(&a->lock);
}

int agent_dump_tmp_create(struct vmheap_agent *a, int dfd, char *tmp,
			  size_t tmplen, struct agent_dump_result *res)
{
	char rnd[33];
	int fd, e;

	/* stale temporary files of dead writers go first (this dump's
	 * directory; the reply counts them with those found at start) */
	agent_dump_sweep(a, dfd);
	if (agent_token_new(rnd, NULL, 0) < 0)
		snprintf(rnd, sizeof(rnd), "%d", (int)getpid());
	/* the writer's pid and start time are in the name: a later agent
	 * removes the file once that process is gone (kill -9, OOM) */
	snprintf(tmp, tmplen, TMP_PREFIX "%d-%lld.%.16s.tmp", (int)getpid(),
		 agent_proc_start_ticks(getpid()), rnd);
	fd = vmheap_file_create(dfd, tmp, 0600);
	if (fd < 0) {
		e = errno;
		res->code =
		    agent_is_nospace(e) ? VMHEAP_ENOSPC : VMHEAP_AGENT_ESYS;
		agent_msgf(res->message, sizeof(res->message),
			   "cannot create a file in the directory of %s: %s",
			   res->path, strerror(e));
		return -1;
	}
	return fd;
}

int agent_dump_publish(int dfd, int fd, const char *tmp, const char *name,
		       struct agent_dump_result *res)
{
	int e = close(fd);

	if (e < 0 ||
	    vmheap_file_publish(dfd, tmp, name, VMHEAP_PUBLISH_NOREPLACE) < 0) {
		e = errno;
		res->code =
		    e == EEXIST ? VMHEAP_AGENT_EEXIST : VMHEAP_AGENT_ESYS;
		agent_msgf(
		    res->message, sizeof(res->message),
		    e == EEXIST
			? "%s appeared during the dump; it was not overwritten"
			: "cannot name the dump %s: %s",
		    res->path, strerror(e));
		return -1;
	}
	fsync(dfd);
	return 0;
}
