/*
 * render.c - print reply values for people: byte counts with units and
 * the exact figure (libvmheap-report's units), a dump reply as one line,
 * maps and lists as aligned columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console-internal.h"

void console_print_table(FILE *out, const char *const *cells, int rows,
			 int cols, const char *indent)
{
	size_t *width = calloc((size_t)cols, sizeof(*width));

	if (!width)
		return;
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++) {
			size_t w = strlen(cells[r * cols + c]);
			if (w > width[c])
				width[c] = w;
		}
	for (int r = 0; r < rows; r++) {
		fputs(indent, out);
		for (int c = 0; c < cols; c++) {
			const char *cell = cells[r * cols + c];

			if (c == cols - 1)
				fprintf(out, "%s\n", cell);
			else
				fprintf(out, "%-*s  ", (int)width[c], cell);
		}
	}
	free(width);
}

/*
 * A string from the VM (a thread's name, a file name) as text: the VM's
 * program chose those bytes, and a terminal would obey the escape
 * sequences among them.  Control characters (newlines kept when
 * `keep_newlines`), DEL, the C1 controls (U+0080 to U+009F: 8-bit CSI and
 * others) and bytes that are not UTF-8 are shown as \xNN.
 */
static void put_text(FILE *out, const char *str, size_t len, int keep_newlines)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < len) {
		size_t n = vmheap_utf8_length(s + i, len - i);

		if (n == 1 && s[i] == '\n' && keep_newlines) {
			fputc('\n', out);
		} else if (n == 0 || (n == 1 && (s[i] < 0x20 || s[i] == 0x7f))) {
			fprintf(out, "\\x%02x", s[i]);
			n = 1;
		} else if (n == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0) {
			fprintf(out, "\\x%02x\\x%02x", s[i], s[i + 1]);
		} else {
			fwrite(s + i, 1, n, out);
		}
		i += n;
	}
}

/* The last component of a dotted name. */
static const char *leaf(const char *name)
{
	const char *dot = name ? strrchr(name, '.') : NULL;

	return dot ? dot + 1 : name ? name : "";
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Does a variable or key with this name hold a byte count? */
static int names_bytes(const char *name)
{
	const char *l = leaf(name);

	return ends_with(l, "bytes") || strcmp(l, "rss") == 0 ||
	       strcmp(l, "size") == 0;
}

static int names_seconds(const char *name)
{
	const char *l = leaf(name);

	return strcmp(l, "seconds") == 0 || strcmp(l, "uptime") == 0 ||
	       ends_with(l, "_seconds");
}

static int is_integer(const msgpack_object *o)
{
	return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ||
	       o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER;
}

static double number(const msgpack_object *o)
{
	switch (o->type) {
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		return (double)o->via.u64;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return (double)o->via.i64;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		return o->via.f64;
	default:
		return 0.0;
	}
}

/* Seconds, with hours and minutes beside when there are many. */
static void print_seconds(FILE *out, double secs)
{
	unsigned long long whole = secs > 0 ? (unsigned long long)secs : 0;

	fprintf(out, "%.3f s", secs);
	if (whole >= 86400)
		fprintf(out, " (%llud %02lluh %02llum)", whole / 86400,
			whole / 3600 % 24, whole / 60 % 60);
	else if (whole >= 3600)
		fprintf(out, " (%lluh %02llum %02llus)", whole / 3600,
			whole / 60 % 60, whole % 60);
	else if (whole >= 60)
		fprintf(out, " (%llum %02llus)", whole / 60, whole % 60);
}

/* Print a value on one line; `name` says what it is (units). */
static void print_inline(FILE *out, const msgpack_object *o, const char *name)
{
	char buf[96];

	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		fputs("nil", out);
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		fputs(o->via.boolean ? "true" : "false", out);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		if (names_bytes(name)) {
			vmheap_format_bytes(buf, sizeof(buf),
					    (unsigned long long)o->via.u64);
			fputs(buf, out);
		} else {
			fprintf(out, "%llu", (unsigned long long)o->via.u64);
		}
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		fprintf(out, "%lld", (long long)o->via.i64);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		if (names_seconds(name))
			print_seconds(out, o->via.f64);
		else
			fprintf(out, "%g", o->via.f64);
		break;
	case MSGPACK_OBJECT_STR:
		put_text(out, o->via.str.ptr, o->via.str.size, 1);
		break;
	case MSGPACK_OBJECT_BIN:
		fprintf(out, "<%u bytes of binary data>", o->via.bin.size);
		break;
	case MSGPACK_OBJECT_ARRAY:
		fputc('[', out);
		for (uint32_t i = 0; i < o->via.array.size; i++) {
			if (i)
				fputs(", ", out);
			print_inline(out, &o->via.array.ptr[i], name);
		}
		fputc(']', out);
		break;
	case MSGPACK_OBJECT_MAP:
		fputc('{', out);
		for (uint32_t i = 0; i < o->via.map.size; i++) {
			const msgpack_object_kv *kv = &o->via.map.ptr[i];
			char key[128] = "";

			if (kv->key.type == MSGPACK_OBJECT_STR)
				snprintf(key, sizeof(key), "%.*s",
					 (int)kv->key.via.str.size,
					 kv->key.via.str.ptr);
			if (i)
				fputs(", ", out);
			print_inline(out, &kv->key, NULL);
			fputs(": ", out);
			print_inline(out, &kv->val, key);
		}
		fputc('}', out);
		break;
	default:
		fputs("<unknown value>", out);
		break;
	}
}

/* print_inline into a new string (never NULL: "" on failure). */
static char *inline_string(const msgpack_object *o, const char *name)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return strdup("");
	print_inline(f, o, name);
	fclose(f);
	return buf ? buf : strdup("");
}

char *console_render_inline(const msgpack_object *o, const char *name)
{
	char *s = inline_string(o, name);
	char *cut = strchr(s, '\n');
	char *more;

	/* one line: a multi-line string (a backtrace) shows its first */
	if (!cut)
		return s;
	*cut = '\0';
	if (!cut[1] || asprintf(&more, "%s ...", s) < 0)
		return s;
	free(s);
	return more;
}

/* A table of string cells that owns them. */
struct table {
	char **cells;
	int rows, cols;
};

static int table_init(struct table *t, int rows, int cols)
{
	t->rows = rows;
	t->cols = cols;
	t->cells = calloc((size_t)rows * (size_t)cols, sizeof(*t->cells));
	return t->cells ? 0 : -1;
}

static void table_print_free(struct table *t, FILE *out)
{
	int n = t->rows * t->cols;
	int ok = 1;

	for (int i = 0; i < n; i++)
		if (!t->cells[i])
			ok = 0;
	if (ok)
		console_print_table(out, (const char *const *)t->cells, t->rows,
				    t->cols, "");
	for (int i = 0; i < n; i++)
		free(t->cells[i]);
	free(t->cells);
}

static char *key_string(const msgpack_object *key)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (key->type != MSGPACK_OBJECT_STR)
		return inline_string(key, NULL);
	f = open_memstream(&buf, &len);
	if (!f)
		return strdup("");
	put_text(f, key->via.str.ptr, key->via.str.size, 0);
	fclose(f);
	return buf ? buf : strdup("");
}

/* An array worth a line per element (a backtrace, an argv). */
static int is_list_of_scalars(const msgpack_object *o)
{
	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size == 0)
		return 0;
	for (uint32_t i = 0; i < o->via.array.size; i++) {
		msgpack_object_type t = o->via.array.ptr[i].type;

		if (t == MSGPACK_OBJECT_ARRAY || t == MSGPACK_OBJECT_MAP)
			return 0;
	}
	return 1;
}

/*
 * A map as "key  value" lines, the values aligned.  A list value takes
 * a line per element, under the first.
 */
static void print_map(FILE *out, const msgpack_object *o)
{
	struct table t;
	int rows = 0, r = 0;

	if (o->via.map.size == 0) {
		fputs("(empty)\n", out);
		return;
	}
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *v = &o->via.map.ptr[i].val;

		rows += is_list_of_scalars(v) ? (int)v->via.array.size : 1;
	}
	if (table_init(&t, rows, 2) < 0)
		return;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];
		char *key = key_string(&kv->key);

		if (!is_list_of_scalars(&kv->val)) {
			t.cells[2 * r] = key;
			t.cells[2 * r + 1] = inline_string(&kv->val, key);
			r++;
			continue;
		}
		for (uint32_t k = 0; k < kv->val.via.array.size; k++) {
			t.cells[2 * r] = k == 0 ? key : strdup("");
			t.cells[2 * r + 1] =
			    inline_string(&kv->val.via.array.ptr[k], key);
			r++;
		}
	}
	table_print_free(&t, out);
}

/* Does any record hold a list or map (then it gets a block of its own)? */
static int records_nest(const msgpack_object *o)
{
	for (uint32_t r = 0; r < o->via.array.size; r++) {
		const msgpack_object *row = &o->via.array.ptr[r];

		for (uint32_t k = 0; k < row->via.map.size; k++) {
			msgpack_object_type t = row->via.map.ptr[k].val.type;

			if (t == MSGPACK_OBJECT_ARRAY ||
			    t == MSGPACK_OBJECT_MAP)
				return 1;
		}
	}
	return 0;
}

/* Rows of arrays: one line each, the columns aligned. */
static void print_rows(FILE *out, const msgpack_object *o, const char *name)
{
	uint32_t cols = 0;
	struct table t;

	for (uint32_t i = 0; i < o->via.array.size; i++)
		if (o->via.array.ptr[i].via.array.size > cols)
			cols = o->via.array.ptr[i].via.array.size;
	if (cols == 0) {
		fputs("(empty)\n", out);
		return;
	}
	if (table_init(&t, (int)o->via.array.size, (int)cols) < 0)
		return;
	for (uint32_t r = 0; r < o->via.array.size; r++) {
		const msgpack_object *row = &o->via.array.ptr[r];

		for (uint32_t c = 0; c < cols; c++)
			t.cells[r * cols + c] =
			    c < row->via.array.size
				? inline_string(&row->via.array.ptr[c], name)
				: strdup("");
	}
	table_print_free(&t, out);
}

/* Rows of maps: a header of the first map's keys, then one line each. */
static void print_records(FILE *out, const msgpack_object *o)
{
	const msgpack_object *first = &o->via.array.ptr[0];
	uint32_t cols = first->via.map.size;
	struct table t;

	if (cols == 0) {
		fputs("(empty)\n", out);
		return;
	}
	if (table_init(&t, (int)o->via.array.size + 1, (int)cols) < 0)
		return;
	for (uint32_t c = 0; c < cols; c++)
		t.cells[c] = key_string(&first->via.map.ptr[c].key);
	for (uint32_t r = 0; r < o->via.array.size; r++) {
		const msgpack_object *row = &o->via.array.ptr[r];

		for (uint32_t c = 0; c < cols; c++) {
			const msgpack_object *v = NULL;

			/* match by key, so that maps in another order line up
			 */
			for (uint32_t k = 0; k < row->via.map.size; k++) {
				char *key =
				    key_string(&row->via.map.ptr[k].key);

				if (key && strcmp(key, t.cells[c]) == 0)
					v = &row->via.map.ptr[k].val;
				free(key);
				if (v)
					break;
			}
			t.cells[(r + 1) * cols + c] =
			    v ? inline_string(v, t.cells[c]) : strdup("");
		}
	}
	table_print_free(&t, out);
}

static int all_of_type(const msgpack_object *o, msgpack_object_type type)
{
	for (uint32_t i = 0; i < o->via.array.size; i++)
		if (o->via.array.ptr[i].type != type)
			return 0;
	return 1;
}

static void print_value(FILE *out, const msgpack_object *o, const char *name)
{
	switch (o->type) {
	case MSGPACK_OBJECT_MAP:
		print_map(out, o);
		return;
	case MSGPACK_OBJECT_ARRAY:
		if (o->via.array.size == 0)
			fputs("(empty)\n", out);
		else if (all_of_type(o, MSGPACK_OBJECT_ARRAY))
			print_rows(out, o, name);
		else if (all_of_type(o, MSGPACK_OBJECT_MAP) && records_nest(o))
			for (uint32_t i = 0; i < o->via.array.size; i++) {
				if (i)
					fputc('\n', out);
				print_map(out, &o->via.array.ptr[i]);
			}
		else if (all_of_type(o, MSGPACK_OBJECT_MAP))
			print_records(out, o);
		else
			for (uint32_t i = 0; i < o->via.array.size; i++) {
				print_inline(out, &o->via.array.ptr[i], name);
				fputc('\n', out);
			}
		return;
	case MSGPACK_OBJECT_STR:
		put_text(out, o->via.str.ptr, o->via.str.size, 1);
		if (o->via.str.size == 0 ||
		    o->via.str.ptr[o->via.str.size - 1] != '\n')
			fputc('\n', out);
		return;
	default:
		print_inline(out, o, name);
		fputc('\n', out);
		return;
	}
}

static const msgpack_object *map_get(const msgpack_object *map,
				     const char *const *keys)
{
	for (; *keys; keys++)
		for (uint32_t i = 0; i < map->via.map.size; i++) {
			const msgpack_object *k = &map->via.map.ptr[i].key;

			if (k->type == MSGPACK_OBJECT_STR &&
			    k->via.str.size == strlen(*keys) &&
			    memcmp(k->via.str.ptr, *keys, k->via.str.size) == 0)
				return &map->via.map.ptr[i].val;
		}
	return NULL;
}

/* A dump reply's leak_scan (when the dump has a leak scan): one line
 * more, with the writable memory it could not read. */
static void print_leak_scan(FILE *out, const msgpack_object *scan)
{
	static const char *const blocks_keys[] = {"blocks", NULL};
	static const char *const maps_keys[] = {"skipped_mappings", NULL};
	static const char *const bytes_keys[] = {"skipped_bytes", NULL};
	const msgpack_object *blocks, *maps, *bytes;
	char size[96];

	if (!scan || scan->type != MSGPACK_OBJECT_MAP)
		return;
	blocks = map_get(scan, blocks_keys);
	maps = map_get(scan, maps_keys);
	bytes = map_get(scan, bytes_keys);
	if (!blocks || !is_integer(blocks))
		return;
	fprintf(out, "leak scan: %.0f malloc blocks classified",
		number(blocks));
	if (maps && is_integer(maps) && number(maps) > 0) {
		vmheap_format_size(size, sizeof(size),
				   bytes && bytes->type ==
						MSGPACK_OBJECT_POSITIVE_INTEGER
				       ? (unsigned long long)bytes->via.u64
				       : 0);
		fprintf(out,
			"; %.0f writable mappings could not be read and "
			"were skipped (%s unread: no roots there)",
			number(maps), size);
	}
	fputc('\n', out);
}

/* A dump reply, as one line: path, objects, the heap's bytes (the
 * objects' sizes), the file's size, time; and a line for its leak scan.
 * Returns 0 when `o` is a dump reply. */
static int print_dump_line(FILE *out, const msgpack_object *o)
{
	static const char *const scan_keys[] = {"leak_scan", NULL};
	static const char *const path_keys[] = {"path", NULL};
	static const char *const objects_keys[] = {"objects", NULL};
	static const char *const bytes_keys[] = {"bytes", "object_bytes",
						 "size", NULL};
	static const char *const file_keys[] = {"file_bytes", NULL};
	static const char *const seconds_keys[] = {"seconds", "elapsed", "time",
						   NULL};
	const msgpack_object *path, *objects, *bytes, *file, *seconds;
	char size[96];

	if (o->type != MSGPACK_OBJECT_MAP)
		return -1;
	path = map_get(o, path_keys);
	objects = map_get(o, objects_keys);
	if (!path || path->type != MSGPACK_OBJECT_STR || !objects ||
	    !is_integer(objects))
		return -1;
	bytes = map_get(o, bytes_keys);
	file = map_get(o, file_keys);
	seconds = map_get(o, seconds_keys);

	fputs("dump written: ", out);
	put_text(out, path->via.str.ptr, path->via.str.size, 0);
	fprintf(out, ", %.0f objects", number(objects));
	if (bytes && bytes->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		vmheap_format_bytes(size, sizeof(size),
				    (unsigned long long)bytes->via.u64);
		fprintf(out, ", heap %s", size);
	}
	if (file && file->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		vmheap_format_size(size, sizeof(size),
				   (unsigned long long)file->via.u64);
		fprintf(out, ", file %s", size);
	}
	if (seconds &&
	    (is_integer(seconds) || seconds->type == MSGPACK_OBJECT_FLOAT32 ||
	     seconds->type == MSGPACK_OBJECT_FLOAT64))
		fprintf(out, ", in %.3f s", number(seconds));
	fputc('\n', out);
	print_leak_scan(out, map_get(o, scan_keys));
	return 0;
}

void console_render_reply(FILE *out, const char *verb, const char *path,
			  const msgpack_object *value)
{
	if (strcmp(verb, "set") == 0 && print_dump_line(out, value) == 0)
		return;
	if (strcmp(verb, "get") == 0 && path &&
	    strcmp(path, "system.memory.histogram") == 0 &&
	    console_render_histogram(out, value) == 0)
		return;
	print_value(out, value, path);
}

void console_render_each_name(const msgpack_object *value,
			      void (*fn)(void *arg, const char *name,
					 size_t len),
			      void *arg)
{
	if (value->type == MSGPACK_OBJECT_MAP) {
		for (uint32_t i = 0; i < value->via.map.size; i++) {
			const msgpack_object *k = &value->via.map.ptr[i].key;

			if (k->type == MSGPACK_OBJECT_STR)
				fn(arg, k->via.str.ptr, k->via.str.size);
		}
		return;
	}
	if (value->type != MSGPACK_OBJECT_ARRAY)
		return;
	for (uint32_t i = 0; i < value->via.array.size; i++) {
		const msgpack_object *e = &value->via.array.ptr[i];

		if (e->type == MSGPACK_OBJECT_ARRAY && e->via.array.size > 0)
			e = &e->via.array.ptr[0];
		else if (e->type == MSGPACK_OBJECT_MAP) {
			static const char *const name_keys[] = {"name", "path",
								NULL};
			e = map_get(e, name_keys);
			if (!e)
				continue;
		}
		if (e->type == MSGPACK_OBJECT_STR)
			fn(arg, e->via.str.ptr, e->via.str.size);
	}
}
