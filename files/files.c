/*
 * files.c - create a file safely and publish it atomically (see
 * vmheap_files.h for the rules).
 */
#include "vmheap_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int vmheap_dir_open(const char *path)
{
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int vmheap_dir_open_parent(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	size_t n;

	*base = slash ? slash + 1 : path;
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, "..")) {
		errno = EISDIR;
		return -1;
	}
	if (!slash)
		return vmheap_dir_open(".");
	n = (size_t)(slash - path);
	if (n == 0)
		return vmheap_dir_open("/");
	if (n >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, n);
	dir[n] = '\0';
	return vmheap_dir_open(dir);
}

int vmheap_file_create(int dfd, const char *name, mode_t mode)
{
	if (!*name || strchr(name, '/')) {
		errno = EINVAL;
		return -1;
	}
	return openat(dfd, name,
		      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      mode);
}

/* 16 hex digits of randomness (getrandom; the pid and a clock when the
 * kernel has none to give). */
static void random_hex(char out[17])
{
	unsigned char b[8];
	struct timespec ts;

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		unsigned long long v = (unsigned long long)ts.tv_nsec ^
				       ((unsigned long long)getpid() << 32) ^
				       (unsigned long long)ts.tv_sec;
		memcpy(b, &v, sizeof(b));
	}
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

int vmheap_file_create_temp(int dfd, const char *prefix, const char *suffix,
			    mode_t mode, char *name, size_t namelen)
{
	char hex[17];

	for (int tries = 0; tries < 100; tries++) {
		int n, fd;

		random_hex(hex);
		n = snprintf(name, namelen, "%s%s%s", prefix, hex, suffix);
		if (n < 0 || (size_t)n >= namelen || n > NAME_MAX) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = vmheap_file_create(dfd, name, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int vmheap_file_publish(int dfd, const char *tmp, const char *name,
			enum vmheap_publish how)
{
	if (how == VMHEAP_PUBLISH_REPLACE)
		return renameat(dfd, tmp, dfd, name);
	if (renameat2(dfd, tmp, dfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* a file system without RENAME_NOREPLACE: link fails on EEXIST */
	if (linkat(dfd, tmp, dfd, name, 0) < 0)
		return -1;
	unlinkat(dfd, tmp, 0);
	return 0;
}
