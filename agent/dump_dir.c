/*
 * dump_dir.c - the dump directory: checked by a real probe, opened once
 * and held by fd.
 *
 * The directory a user names (VMHEAP_AGENT_DIR at start, `set
 * config.dump.dir` later; symbolic links in the name are followed, it is
 * the user's) is opened once with O_DIRECTORY and every dump is created
 * through that fd (dump_file.c): a directory renamed away and replaced by a
 * symbolic link afterwards is not followed, and a dump's reply names the
 * directory where the file really is (/proc/self/fd).  A directory that
 * was removed (its link count 0) is looked up again by its name, the last
 * component with O_NOFOLLOW, so that one made again is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-internal.h"
#include "vmheap_files.h"

int agent_dump_dir_check(const char *in, const char *what, int probe,
			 char *real, size_t reallen, char *err, size_t errlen)
{
	char buf[PATH_MAX], name[NAME_MAX + 1];
	int dfd, fd, e;

	dfd = vmheap_dir_open(in);
	if (dfd < 0) {
		e = errno;
		if (what)
			return agent_fail(err, errlen, VMHEAP_AGENT_EPATH,
					  "%s %s: %s", what, in, strerror(e));
		return agent_fail(err, errlen, VMHEAP_AGENT_EPATH, "%s %s", in,
				  e == ENOENT	 ? "does not exist"
				  : e == ENOTDIR ? "is not a directory"
						 : strerror(e));
	}
	if (!realpath(in, buf) || strlen(buf) >= reallen) {
		e = errno;
		close(dfd);
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS, "%s%s%s: %s",
				  what ? what : "", what ? " " : "", in,
				  strerror(e));
	}
	if (probe) {
		/* tried for real (access() says yes to root on read-only or
		 * virtual file systems); a fresh random name, so that no
		 * name another user planted can make it fail */
		fd = vmheap_file_create_temp(dfd, ".vmheap-probe.", "", 0600,
					     name, sizeof(name));
		if (fd < 0) {
			e = errno;
			close(dfd);
			return agent_fail(
			    err, errlen, VMHEAP_AGENT_EPATH,
			    "%s%s%s is not writable by the VM (pid %d, uid "
			    "%u): %s",
			    what ? what : "", what ? " " : "", in,
			    (int)getpid(), (unsigned)geteuid(), strerror(e));
		}
		close(fd);
		unlinkat(dfd, name, 0);
	}
	memcpy(real, buf, strlen(buf) + 1);
	return dfd;
}

void agent_dump_dir_set(struct vmheap_agent *a, int dfd, const char *real)
{
	int old;

	pthread_mutex_lock(&a->lock);
	old = a->dump_dfd;
	a->dump_dfd = dfd;
	memcpy(a->dump_dir, real, strlen(real) + 1);
	pthread_mutex_unlock(&a->lock);
	if (old >= 0)
		close(old);
}

int agent_dump_dir_open(struct vmheap_agent *a, char *name, char *where,
			size_t len)
{
	char link[64], buf[PATH_MAX];
	struct stat st;
	ssize_t n;
	int dfd;

	pthread_mutex_lock(&a->lock);
	if (a->dump_dfd >= 0 && fstat(a->dump_dfd, &st) == 0 &&
	    st.st_nlink == 0) {
		/* removed (not moved): a directory made again under its
		 * name is taken, but not a symbolic link planted there */
		int nfd = open(a->dump_dir,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (nfd >= 0) {
			close(a->dump_dfd);
			a->dump_dfd = nfd;
		}
	}
	dfd = a->dump_dfd >= 0 ? fcntl(a->dump_dfd, F_DUPFD_CLOEXEC, 0) : -1;
	if (a->dump_dfd < 0)
		errno = EBADF;
	snprintf(name, len, "%s", a->dump_dir);
	pthread_mutex_unlock(&a->lock);
	snprintf(where, len, "%s", name);
	if (dfd < 0)
		return -1;
	/* where the directory is now (it may have been renamed; a removed
	 * one keeps its name) */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dfd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n > 0)
		buf[n] = '\0';
	if (n > 0 && buf[0] == '/' && !strstr(buf, " (deleted)"))
		snprintf(where, len, "%s", buf);
	return dfd;
}

void agent_dump_dir(struct vmheap_agent *a, char *buf, size_t len)
{
	pthread_mutex_lock(&a->lock);
	snprintf(buf, len, "%s", a->dump_dir);
	pthread_mutex_unlock(&a->lock);
}
