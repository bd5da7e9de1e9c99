/*
 * strbuf.c - the growable string buffer the tools render their reports
 * into (part of libvmheap-report).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmheap_report.h"

static int sb_reserve(struct vmheap_strbuf *sb, size_t more)
{
	if (sb->failed)
		return -1;
	if (sb->len + more + 1 <= sb->cap)
		return 0;
	size_t ncap = sb->cap ? sb->cap : 256;
	while (ncap < sb->len + more + 1)
		ncap *= 2;
	char *nb = realloc(sb->buf, ncap);
	if (!nb) {
		sb->failed = 1;
		return -1;
	}
	sb->buf = nb;
	sb->cap = ncap;
	return 0;
}

void vmheap_strbuf_add(struct vmheap_strbuf *sb, const char *s, size_t len)
{
	if (sb_reserve(sb, len) < 0)
		return;
	memcpy(sb->buf + sb->len, s, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void vmheap_strbuf_addf(struct vmheap_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	char small[256];

	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		vmheap_strbuf_add(sb, small, (size_t)n);
		return;
	}
	if (sb_reserve(sb, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

int vmheap_strbuf_write(const struct vmheap_strbuf *sb, int fd)
{
	size_t off = 0;
	while (off < sb->len) {
		ssize_t n = write(fd, sb->buf + off, sb->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return VMHEAP_EIO;
		}
		off += (size_t)n;
	}
	return 0;
}

void vmheap_strbuf_release(struct vmheap_strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->failed = 0;
}
