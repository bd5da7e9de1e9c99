/*
 * histogram.c - a reply of get system.memory.histogram: read, and
 * printed for people (a summary line and a count/class/bytes table);
 * top.c redraws it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console-internal.h"

static const msgpack_object *member(const msgpack_object *m, const char *key)
{
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object *k = &m->via.map.ptr[i].key;
		if (k->type == MSGPACK_OBJECT_STR &&
		    k->via.str.size == strlen(key) &&
		    !memcmp(k->via.str.ptr, key, k->via.str.size))
			return &m->via.map.ptr[i].val;
	}
	return NULL;
}

static uint64_t uint_member(const msgpack_object *m, const char *key)
{
	const msgpack_object *v = member(m, key);
	return v && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? v->via.u64
							      : 0;
}

static int bool_member(const msgpack_object *m, const char *key)
{
	const msgpack_object *v = member(m, key);
	return v && v->type == MSGPACK_OBJECT_BOOLEAN && v->via.boolean;
}

int console_histogram_read(const msgpack_object *o,
			   struct console_histogram *h)
{
	const msgpack_object *s;

	if (o->type != MSGPACK_OBJECT_MAP)
		return -1;
	h->classes = member(o, "classes");
	if (!h->classes || h->classes->type != MSGPACK_OBJECT_ARRAY)
		return -1;
	for (uint32_t i = 0; i < h->classes->via.array.size; i++) {
		const msgpack_object *r = &h->classes->via.array.ptr[i];
		if (r->type != MSGPACK_OBJECT_ARRAY || r->via.array.size < 3 ||
		    r->via.array.ptr[0].type != MSGPACK_OBJECT_STR ||
		    r->via.array.ptr[1].type !=
			MSGPACK_OBJECT_POSITIVE_INTEGER ||
		    r->via.array.ptr[2].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return -1;
	}
	h->objects = uint_member(o, "objects");
	h->bytes = uint_member(o, "bytes");
	h->class_count = uint_member(o, "class_count");
	h->left_out = uint_member(o, "left_out");
	h->forked = bool_member(o, "forked");
	h->live_only = bool_member(o, "live_only");
	s = member(o, "seconds");
	h->seconds = s && s->type == MSGPACK_OBJECT_FLOAT64 ? s->via.f64 : 0;
	return 0;
}

/* "4906 objects, 422 KiB (431916 bytes), 6 classes; forked, after a GC;
 * walked in 0.001 s" */
static void histogram_summary(FILE *out, const struct console_histogram *h)
{
	char size[96];

	vmheap_format_bytes(size, sizeof(size),
			    (unsigned long long)h->bytes);
	fprintf(out,
		"%llu objects, %s, %llu classes; %s; walked in %.3f s\n",
		(unsigned long long)h->objects, size,
		(unsigned long long)h->class_count,
		h->forked ? (h->live_only ? "in a forked child, after a GC"
					  : "in a forked child")
			  : "in the VM, stopped",
		h->seconds);
}

void console_print_aligned(FILE *out, const char *align, const char **cells,
			size_t rows)
{
	size_t cols = strlen(align);
	vmheap_table *tab = vmheap_table_new(align);
	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;
	int rc = tab ? 0 : -1;

	for (size_t i = 0; i < rows && !rc; i++)
		rc = vmheap_table_add_row(tab, cells + i * cols);
	if (!rc) {
		vmheap_table_render(tab, &sb);
		if (!sb.failed && sb.len)
			fwrite(sb.buf, 1, sb.len, out);
	}
	vmheap_strbuf_release(&sb);
	vmheap_table_free(tab);
}

int console_render_histogram(FILE *out, const msgpack_object *value)
{
	struct console_histogram h;
	uint32_t n;
	const char **cells;
	char (*nums)[2][40];
	static const char unknown[] = "?"; /* a name that could not be copied */

	if (console_histogram_read(value, &h) < 0)
		return -1;
	n = h.classes->via.array.size;
	cells = calloc(3 * ((size_t)n + 1), sizeof(*cells));
	nums = calloc((size_t)n + 1, sizeof(*nums));
	if (!cells || !nums) {
		free(cells);
		free(nums);
		return -1;
	}
	histogram_summary(out, &h);
	cells[0] = "count";
	cells[1] = "class";
	cells[2] = "bytes";
	for (uint32_t i = 0; i < n; i++) {
		const msgpack_object *r = h.classes->via.array.ptr[i].via.array.ptr;
		char *name = strndup(r[0].via.str.ptr, r[0].via.str.size);
		snprintf(nums[i][0], sizeof(nums[i][0]), "%llu",
			 (unsigned long long)r[1].via.u64);
		vmheap_format_size(nums[i][1], sizeof(nums[i][1]),
				   (unsigned long long)r[2].via.u64);
		cells[3 * (i + 1)] = nums[i][0];
		cells[3 * (i + 1) + 1] = name ? name : unknown;
		cells[3 * (i + 1) + 2] = nums[i][1];
	}
	console_print_aligned(out, "rlr", cells, (size_t)n + 1);
	if (h.left_out)
		fprintf(out, "(%llu classes with the fewest objects left out: "
			     "the reply's size limit)\n",
			(unsigned long long)h.left_out);
	for (uint32_t i = 0; i < n; i++)
		if (cells[3 * (i + 1) + 1] != unknown) /* a class may be "?" */
			free((char *)cells[3 * (i + 1) + 1]);
	free(cells);
	free(nums);
	return 0;
}
