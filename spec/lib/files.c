/*
 * files.c - whole files, counting, listing (see vmheap_spec.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmheap_spec.h"

char *spec_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0, cap = 4096;
	char *buf;
	ssize_t k;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	while (buf && (k = read(fd, buf + n, cap - n)) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			buf = NULL;
			break;
		}
		n += (size_t)k;
		if (n == cap) {
			char *more = realloc(buf, cap * 2 + 1);

			if (!more) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = more;
			cap *= 2;
		}
	}
	close(fd);
	if (!buf)
		return NULL;
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

void spec_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	ck_assert_msg(write(fd, data, len) == (ssize_t)len, "write %s: %s",
		      path, strerror(errno));
	ck_assert_msg(close(fd) == 0, "close %s: %s", path, strerror(errno));
}

void spec_write_text(const char *path, const char *text)
{
	spec_write_file(path, text, strlen(text));
}

const char *spec_copy_program(const char *name, const char *dir)
{
	static char bufs[8][1024];
	static unsigned next;
	char *path = bufs[next++ % 8];
	size_t len = 0;
	char *data = spec_read_file(spec_bin(name), &len);
	int fd;

	ck_assert_msg(data != NULL, "read %s: %s", spec_bin(name),
		      strerror(errno));
	snprintf(path, 1024, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	ck_assert_msg(write(fd, data, len) == (ssize_t)len, "write %s: %s",
		      path, strerror(errno));
	/* the umask may have taken bits away */
	ck_assert_msg(fchmod(fd, 0755) == 0 && close(fd) == 0, "%s: %s",
		      path, strerror(errno));
	free(data);
	return path;
}

int spec_count(const char *hay, const char *needle)
{
	size_t len = strlen(needle);
	int n = 0;

	if (!len)
		return 0;
	for (const char *p = strstr(hay, needle); p;
	     p = strstr(p + len, needle))
		n++;
	return n;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *spec_ls(const char *dir, char sep)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL, *out;
	size_t n = 0, total = 1, off = 0;

	while (d && (de = readdir(d)) != NULL) {
		char **more;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		more = realloc(names, (n + 1) * sizeof(*names));
		if (!more)
			break;
		names = more;
		names[n] = strdup(de->d_name);
		total += strlen(de->d_name) + 1;
		n++;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	out = malloc(total);
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(names[i]);

		memcpy(out + off, names[i], k);
		out[off + k] = sep;
		off += k + 1;
		free(names[i]);
	}
	out[off] = '\0';
	free(names);
	return out;
}

uint8_t *spec_md_hex(const char *path, const char *tag, size_t *len)
{
	char line[512], begin[128], end[128];
	size_t n = 0, cap = 4096;
	uint8_t *b = malloc(cap);
	int inside = 0;
	FILE *f = fopen(path, "r");

	ck_assert_msg(f != NULL && b != NULL, "cannot open %s", path);
	snprintf(begin, sizeof(begin), "<!-- %s: begin -->", tag);
	snprintf(end, sizeof(end), "<!-- %s: end -->", tag);
	while (fgets(line, sizeof(line), f)) {
		char *p;
		if (strstr(line, begin))
			inside = 1;
		else if (strstr(line, end))
			inside = 0;
		if (!inside || !(p = strchr(line, ':')) || line[0] == '<')
			continue;
		ck_assert_uint_eq(strtoul(line, NULL, 16), n);
		for (p++; *p;) {
			char *e;
			unsigned long v = strtoul(p, &e, 16);
			if (e == p)
				break;
			if (n == cap) {
				cap *= 2;
				b = realloc(b, cap);
				ck_assert_ptr_nonnull(b);
			}
			b[n++] = (uint8_t)v;
			p = e;
		}
	}
	fclose(f);
	*len = n;
	return b;
}
