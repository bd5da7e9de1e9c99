/*
 * render.c - vmheap-replay's results: one row per allocator, as a text
 * table with the best (lowest) value of each measured column marked with
 * '*', as JSON (an array of rows, each with exactly the keys of
 * `columns` below) or as CSV with the same names in its header.
 */
#include <stdio.h>
#include <string.h>

#include "replay-tool-internal.h"

enum kind { COUNT, SECONDS, NS, BYTES, RATIO };

static const struct {
	const char *key, *title;
	enum kind kind;
	int ranked; /* lower is better: marked in the text table */
} columns[] = {
    {"ops", "ops", COUNT, 0},
    {"seconds", "seconds", SECONDS, 1},
    {"cpu_seconds", "cpu s", SECONDS, 1},
    {"ns_per_op", "ns/op", NS, 1},
    {"peak_rss", "peak RSS", BYTES, 1},
    {"rss_end", "RSS end", BYTES, 1},
    {"live_bytes_peak", "live peak", BYTES, 0},
    {"live_bytes_end", "live end", BYTES, 0},
    {"fragmentation_peak", "frag peak", RATIO, 1},
    {"fragmentation_end", "frag end", RATIO, 1},
};
#define NCOL (sizeof columns / sizeof columns[0])

/* Column c of row w as a number; < 0 when it has none (a ratio over 0
 * live bytes). */
static double value(const struct rp_row *w, size_t c)
{
	const struct rp_result *r = &w->r;

	switch (c) {
	case 0:
		return (double)r->ops;
	case 1:
		return r->wall_ns / 1e9;
	case 2:
		return r->cpu_ns / 1e9;
	case 3:
		return r->ops ? (double)r->wall_ns / (double)r->ops : -1;
	case 4:
		return (double)r->rss_peak;
	case 5:
		return (double)r->rss_end;
	case 6:
		return (double)w->live_peak;
	case 7:
		return (double)r->live_end;
	case 8:
		return w->live_peak ? (double)r->rss_peak / (double)w->live_peak
				    : -1;
	case 9:
		return r->live_end ? (double)r->rss_end / (double)r->live_end
				   : -1;
	}
	return -1;
}

static void number(char *buf, size_t len, const struct rp_row *w, size_t c,
		   int json)
{
	double v = value(w, c);

	if (v < 0) {
		snprintf(buf, len, "%s", json ? "null" : "-");
		return;
	}
	switch (columns[c].kind) {
	case COUNT:
	case BYTES:
		if (!json && columns[c].kind == BYTES)
			vmheap_format_size(buf, len, (unsigned long long)v);
		else
			snprintf(buf, len, "%llu", (unsigned long long)v);
		break;
	case SECONDS:
		snprintf(buf, len, "%.6f", v);
		break;
	case NS:
		snprintf(buf, len, "%.1f", v);
		break;
	case RATIO:
		snprintf(buf, len, "%.3f", v);
		break;
	}
}

static void render_text(struct vmheap_strbuf *sb, const struct rp_row *rows,
			int n)
{
	const char *cells[NCOL + 1];
	char text[NCOL][48];
	double best[NCOL];
	vmheap_table *t = vmheap_table_new("lrrrrrrrrrr");
	size_t c;
	int i;

	if (!t) {
		sb->failed = 1;
		return;
	}
	cells[0] = "allocator";
	for (c = 0; c < NCOL; c++) {
		cells[c + 1] = columns[c].title;
		best[c] = -1;
		for (i = 0; i < n; i++) {
			double v = value(&rows[i], c);

			if (v >= 0 && (best[c] < 0 || v < best[c]))
				best[c] = v;
		}
	}
	vmheap_table_add_row(t, cells);
	for (i = 0; i < n; i++) {
		cells[0] = rows[i].name;
		for (c = 0; c < NCOL; c++) {
			number(text[c], sizeof text[c] - 1, &rows[i], c, 0);
			if (n > 1 && columns[c].ranked && best[c] >= 0 &&
			    value(&rows[i], c) == best[c])
				strcat(text[c], "*");
			cells[c + 1] = text[c];
		}
		vmheap_table_add_row(t, cells);
	}
	vmheap_table_render(t, sb);
	vmheap_table_free(t);
	if (n > 1)
		vmheap_strbuf_addf(sb, "* the lowest of the column\n");
}

void rp_render(struct vmheap_strbuf *sb, enum vmheap_output_format fmt,
	       const struct rp_row *rows, int n)
{
	char num[48];
	size_t c;
	int i;

	if (fmt == VMHEAP_OUTPUT_TEXT) {
		render_text(sb, rows, n);
		return;
	}
	if (fmt == VMHEAP_OUTPUT_CSV) {
		vmheap_strbuf_addf(sb, "allocator");
		for (c = 0; c < NCOL; c++)
			vmheap_strbuf_addf(sb, ",%s", columns[c].key);
		vmheap_strbuf_addf(sb, "\n");
	} else {
		vmheap_strbuf_addf(sb, "[");
	}
	for (i = 0; i < n; i++) {
		if (fmt == VMHEAP_OUTPUT_CSV) {
			vmheap_strbuf_add_csv(sb, rows[i].name);
		} else {
			vmheap_strbuf_addf(sb, "%s\n{\"allocator\":",
					   i ? "," : "");
			vmheap_strbuf_add_json(sb, rows[i].name);
		}
		for (c = 0; c < NCOL; c++) {
			number(num, sizeof num, &rows[i], c,
			       1);
			if (fmt == VMHEAP_OUTPUT_CSV)
				vmheap_strbuf_addf(sb, ",%s",
						   strcmp(num, "null") ? num
								       : "");
			else
				vmheap_strbuf_addf(sb, ",\"%s\":%s",
						   columns[c].key, num);
		}
		vmheap_strbuf_addf(sb, fmt == VMHEAP_OUTPUT_CSV ? "\n" : "}");
	}
	if (fmt == VMHEAP_OUTPUT_JSON)
		vmheap_strbuf_addf(sb, "\n]\n");
}
