/*
 * table.c - text tables of the tools' reports: columns right- or
 * left-aligned, cells escaped as text (part of libvmheap-report).
 */
#include <stdlib.h>
#include <string.h>

#include "vmheap_report.h"

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

/* Copy of `s` escaped as text (see vmheap_strbuf_add_text). */
static char *escape_cell(const char *s)
{
	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;
	vmheap_strbuf_add_text(&sb, s);
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
		/* empty cells at the end of a row are left out: no line
		 * ends in spaces */
		size_t used = t->ncols;
		while (used > 1 && !*t->cells[r * t->ncols + used - 1])
			used--;
		for (size_t c = 0; c < used; c++) {
			const char *cell = t->cells[r * t->ncols + c];
			size_t gap = w[c] - width_of(cell);
			int last = c + 1 == used;
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
