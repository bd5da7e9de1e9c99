/*
 * census_report.c - report helpers shared by vmheap-histo and vmheap-diff:
 * string buffer, JSON and CSV quoting, text tables, a progress bar.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmheap_census.h"

int vmheap_output_format_parse(const char *text, enum vmheap_output_format *out)
{
	if (!strcmp(text, "text"))
		*out = VMHEAP_OUTPUT_TEXT;
	else if (!strcmp(text, "json"))
		*out = VMHEAP_OUTPUT_JSON;
	else if (!strcmp(text, "csv"))
		*out = VMHEAP_OUTPUT_CSV;
	else
		return VMHEAP_EINVAL;
	return 0;
}

/* ------------------------------------------------------------ strbuf */

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

void vmheap_strbuf_add_json(struct vmheap_strbuf *sb, const char *s)
{
	vmheap_strbuf_add(sb, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			vmheap_strbuf_add(sb, "\\\"", 2);
			break;
		case '\\':
			vmheap_strbuf_add(sb, "\\\\", 2);
			break;
		case '\n':
			vmheap_strbuf_add(sb, "\\n", 2);
			break;
		case '\r':
			vmheap_strbuf_add(sb, "\\r", 2);
			break;
		case '\t':
			vmheap_strbuf_add(sb, "\\t", 2);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				vmheap_strbuf_addf(sb, "\\u%04x", *p);
			else
				vmheap_strbuf_add(sb, (const char *)p, 1);
		}
	}
	vmheap_strbuf_add(sb, "\"", 1);
}

void vmheap_strbuf_add_csv(struct vmheap_strbuf *sb, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		vmheap_strbuf_add(sb, s, strlen(s));
		return;
	}
	vmheap_strbuf_add(sb, "\"", 1);
	for (; *s; s++) {
		if (*s == '"')
			vmheap_strbuf_add(sb, "\"", 1);
		vmheap_strbuf_add(sb, s, 1);
	}
	vmheap_strbuf_add(sb, "\"", 1);
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

/* ------------------------------------------------------------- table */

struct vmheap_table {
	char *align;
	size_t ncols;
	char **cells; /* rows * ncols, already escaped */
	size_t nrows, cap;
};

vmheap_table *vmheap_table_new(const char *align)
{
	vmheap_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->align = strdup(align);
	t->ncols = strlen(align);
	if (!t->align || !t->ncols) {
		free(t->align);
		free(t);
		return NULL;
	}
	return t;
}

/* Copy of `s` with control characters shown as \xNN. */
static char *escape_cell(const char *s)
{
	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			vmheap_strbuf_addf(&sb, "\\x%02x", *p);
		else
			vmheap_strbuf_add(&sb, (const char *)p, 1);
	}
	if (sb.failed) {
		vmheap_strbuf_release(&sb);
		return NULL;
	}
	return sb.buf ? sb.buf : strdup("");
}

int vmheap_table_add_row(vmheap_table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		/* rows of ncols cells each */
		char **g = vmheap_array_grow(t->cells, &t->cap,
					     t->ncols * sizeof(*g), 32);
		if (!g)
			return VMHEAP_ENOMEM;
		t->cells = g;
	}
	char **row = &t->cells[t->nrows * t->ncols];
	for (size_t i = 0; i < t->ncols; i++) {
		row[i] = escape_cell(cells[i]);
		if (!row[i]) {
			while (i--)
				free(row[i]);
			return VMHEAP_ENOMEM;
		}
	}
	t->nrows++;
	return 0;
}

/* Display width: UTF-8 continuation bytes do not count. */
static size_t width_of(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void pad(struct vmheap_strbuf *sb, size_t n)
{
	static const char spaces[] = "                                ";
	while (n) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;
		vmheap_strbuf_add(sb, spaces, k);
		n -= k;
	}
}

void vmheap_table_render(const vmheap_table *t, struct vmheap_strbuf *sb)
{
	size_t *w = calloc(t->ncols, sizeof(*w));
	if (!w) {
		sb->failed = 1;
		return;
	}
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t cw = width_of(t->cells[r * t->ncols + c]);
			if (cw > w[c])
				w[c] = cw;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *cell = t->cells[r * t->ncols + c];
			size_t gap = w[c] - width_of(cell);
			int last = c + 1 == t->ncols;
			if (c)
				vmheap_strbuf_add(sb, "  ", 2);
			if (t->align[c] == 'r')
				pad(sb, gap);
			vmheap_strbuf_add(sb, cell, strlen(cell));
			if (t->align[c] != 'r' && !last)
				pad(sb, gap);
		}
		vmheap_strbuf_add(sb, "\n", 1);
	}
	free(w);
}

void vmheap_table_free(vmheap_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->align);
	free(t);
}

/* ---------------------------------------------------------- progress */

#define BAR_WIDTH 30

void vmheap_progress_update(void *progress, uint64_t offset)
{
	struct vmheap_progress *p = progress;
	char bar[BAR_WIDTH + 1], line[512];

	if (!p->total)
		return;
	if (offset > p->total)
		offset = p->total;
	unsigned pct = (unsigned)(offset * 100 / p->total);
	size_t fill = (size_t)(offset * BAR_WIDTH / p->total);
	memset(bar, '#', fill);
	memset(bar + fill, ' ', BAR_WIDTH - fill);
	bar[BAR_WIDTH] = '\0';
	int n = snprintf(line, sizeof(line), "\r%s %3u%% [%s] %llu/%llu MB",
			 p->name, pct, bar, (unsigned long long)(offset >> 20),
			 (unsigned long long)(p->total >> 20));
	if (n > 0 &&
	    write(p->fd, line,
		  (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) > 0)
		p->drawn = 1;
}

void vmheap_progress_clear(struct vmheap_progress *p)
{
	if (!p->drawn)
		return;
	if (write(p->fd, "\r\033[K", 4) < 0)
		return;
	p->drawn = 0;
}
