/*
 * top.c - the console's `top [SECONDS [COUNT]]`: the live histogram
 * (get system.memory.histogram) refreshed every SECONDS like top(1),
 * classes sorted by their growth since top began, with count, bytes and
 * rate per minute; `q` quits.  Also how a histogram reply is printed.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "console-internal.h"

#define HISTOGRAM_VAR "system.memory.histogram"

/* ------------------------------------------------------ the reply */

/* One class of a histogram reply. */
struct top_class {
	char *name;
	uint64_t count0, bytes0; /* when top began (0: not there then) */
	uint64_t count, bytes;	 /* now */
};

/* A histogram reply's figures. */
struct histogram {
	uint64_t objects, bytes, class_count, left_out;
	double seconds;
	int forked, live_only;
	const msgpack_object *classes; /* [[name, count, bytes], ...] */
};

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

/* Read a histogram reply; -1 when `o` is not one. */
static int histogram_read(const msgpack_object *o, struct histogram *h)
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
static void histogram_summary(FILE *out, const struct histogram *h)
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

/* Print rows x strlen(align) cells (row-major) as a table whose columns
 * are aligned as `align` says ('r' or 'l' each). */
static void print_table(FILE *out, const char *align, const char **cells,
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
	struct histogram h;
	uint32_t n;
	const char **cells;
	char (*nums)[2][40];

	if (histogram_read(value, &h) < 0)
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
		cells[3 * (i + 1) + 1] = name ? name : "?";
		cells[3 * (i + 1) + 2] = nums[i][1];
	}
	print_table(out, "rlr", cells, (size_t)n + 1);
	if (h.left_out)
		fprintf(out, "(%llu classes with the fewest objects left out: "
			     "the reply's size limit)\n",
			(unsigned long long)h.left_out);
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(cells[3 * (i + 1) + 1], "?"))
			free((char *)cells[3 * (i + 1) + 1]);
	free(cells);
	free(nums);
	return 0;
}

/* ----------------------------------------------------------- top */

struct top {
	struct top_class *c;
	size_t n, cap;
	struct timespec t0; /* the first histogram's reply */
	int have_first;
	struct histogram first, now;
	uint64_t first_objects, first_bytes;
};

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct top_class *)x)->name,
		      ((const struct top_class *)y)->name);
}

static int by_growth(const void *x, const void *y)
{
	const struct top_class *a = x, *b = y;
	int64_t ga = (int64_t)(a->count - a->count0);
	int64_t gb = (int64_t)(b->count - b->count0);
	int64_t ba = (int64_t)(a->bytes - a->bytes0);
	int64_t bb = (int64_t)(b->bytes - b->bytes0);

	if (ga != gb)
		return ga < gb ? 1 : -1;
	if (ba != bb)
		return ba < bb ? 1 : -1;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* Take in one histogram: now's figures, and the first's at the start. */
static int top_update(struct top *t, const struct histogram *h)
{
	size_t known = t->n;

	qsort(t->c, t->n, sizeof(*t->c), by_name);
	for (size_t i = 0; i < t->n; i++)
		t->c[i].count = t->c[i].bytes = 0;
	for (uint32_t i = 0; i < h->classes->via.array.size; i++) {
		const msgpack_object *r = h->classes->via.array.ptr[i].via.array.ptr;
		struct top_class key, *c;
		char *name = strndup(r[0].via.str.ptr, r[0].via.str.size);

		if (!name)
			return -1;
		key.name = name;
		c = known ? bsearch(&key, t->c, known, sizeof(*t->c), by_name)
			  : NULL;
		if (!c) {
			if (t->n == t->cap) {
				size_t nc = t->cap ? t->cap * 2 : 256;
				struct top_class *p =
				    realloc(t->c, nc * sizeof(*p));
				if (!p) {
					free(name);
					return -1;
				}
				t->c = p;
				t->cap = nc;
			}
			c = &t->c[t->n++];
			memset(c, 0, sizeof(*c));
			c->name = name;
		} else {
			free(name);
		}
		c->count = r[1].via.u64;
		c->bytes = r[2].via.u64;
		if (!t->have_first) {
			c->count0 = c->count;
			c->bytes0 = c->bytes;
		}
	}
	if (!t->have_first) {
		clock_gettime(CLOCK_MONOTONIC, &t->t0);
		t->first_objects = h->objects;
		t->first_bytes = h->bytes;
		t->have_first = 1;
	}
	t->now = *h;
	qsort(t->c, t->n, sizeof(*t->c), by_growth);
	return 0;
}

static double elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void signed_count(char *buf, size_t len, int64_t v)
{
	snprintf(buf, len, v > 0 ? "+%lld" : "%lld", (long long)v);
}

static void rate(char *buf, size_t len, int64_t delta, double minutes)
{
	double r;

	if (minutes <= 0) {
		snprintf(buf, len, "-");
		return;
	}
	r = (double)delta / minutes;
	if (r == 0)
		snprintf(buf, len, "0");
	else if (r > -9.95 && r < 9.95)
		snprintf(buf, len, "%+.1f", r);
	else
		snprintf(buf, len, "%+.0f", r);
}

/* One screen: the header lines and as many classes as the terminal
 * has rows for (all of them when it is no terminal). */
static void top_draw(FILE *out, const struct top *t,
		     const struct console_session *s, double interval,
		     int tty)
{
	double secs = elapsed(&t->t0), minutes = secs / 60.0;
	struct winsize ws;
	size_t rows = t->n, shown = 0;
	char size[96], dsize[64], cnt[32];
	const char **cells;
	char (*nums)[5][40];

	if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 6)
		rows = ws.ws_row - 6u < t->n ? ws.ws_row - 6u : t->n;
	if (tty)
		fputs("\033[H\033[2J", out);
	fprintf(out,
		"vmheap top: %s (pid %ld), every %.1f s, %.1f s since top "
		"began; q quits\n",
		*s->info.vm ? s->info.vm : "vm", (long)s->info.pid, interval,
		secs);
	vmheap_format_bytes(size, sizeof(size),
			    (unsigned long long)t->now.bytes);
	vmheap_format_size_delta(dsize, sizeof(dsize),
				 (long long)(t->now.bytes - t->first_bytes));
	signed_count(cnt, sizeof(cnt),
		     (int64_t)(t->now.objects - t->first_objects));
	fprintf(out, "heap: %llu objects (%s), %s (%s); %s%s; walked in %.3f s\n\n",
		(unsigned long long)t->now.objects, cnt, size, dsize,
		t->now.forked ? "forked" : "in the VM",
		t->now.live_only ? ", after a GC" : "", t->now.seconds);
	cells = calloc(5 * (rows + 1), sizeof(*cells));
	nums = calloc(rows + 1, sizeof(*nums));
	if (cells && nums) {
		static const char *const head[] = {"growth", "per min", "count",
						   "bytes", "class"};
		memcpy(cells, head, sizeof(head));
		for (size_t i = 0; i < rows; i++) {
			const struct top_class *c = &t->c[i];
			int64_t d = (int64_t)(c->count - c->count0);
			signed_count(nums[i][0], sizeof(nums[i][0]), d);
			rate(nums[i][1], sizeof(nums[i][1]), d, minutes);
			snprintf(nums[i][2], sizeof(nums[i][2]), "%llu",
				 (unsigned long long)c->count);
			vmheap_format_size(nums[i][3], sizeof(nums[i][3]),
					   (unsigned long long)c->bytes);
			for (int k = 0; k < 4; k++)
				cells[5 * (i + 1) + k] = nums[i][k];
			cells[5 * (i + 1) + 4] = c->name;
			shown++;
		}
		print_table(out, "rrrrl", cells, shown + 1);
	}
	free(cells);
	free(nums);
	if (!tty)
		fputc('\n', out);
	fflush(out);
}

/* Ask for the histogram; 0, or the console result of a failure. */
static int top_fetch(struct console_session *s, struct top *t,
		     struct vmheap_reply *reply, enum console_result *res)
{
	struct histogram h;

	vmheap_reply_release(reply);
	memset(reply, 0, sizeof(*reply));
	if (console_session_call(s, "get", HISTOGRAM_VAR, NULL, reply) < 0) {
		*res = CONSOLE_RESULT_GONE;
		return -1;
	}
	if (!reply->ok) {
		fprintf(stderr, "error (%s): %s\n",
			*reply->code ? reply->code : "error",
			*reply->message ? reply->message
					: "the histogram failed");
		*res = CONSOLE_RESULT_ERROR;
		return -1;
	}
	if (histogram_read(&reply->value, &h) < 0 || top_update(t, &h) < 0) {
		fprintf(stderr, "error: the VM's histogram reply is not one "
				"(out of memory, or an agent of another "
				"version)\n");
		*res = CONSOLE_RESULT_ERROR;
		return -1;
	}
	return 0;
}

/* Wait up to `secs` for a key: 1 when it asks to quit (q, Q, Ctrl-C,
 * Ctrl-D), else 0.  *input is cleared at the end of a non-terminal
 * input, which then is never read again. */
static int wait_key(double secs, int *input)
{
	struct timespec end, now;
	char ch;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)secs;
	end.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (;;) {
		struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
		long ms;
		int n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (long)(end.tv_sec - now.tv_sec) * 1000 +
		     (end.tv_nsec - now.tv_nsec) / 1000000L;
		if (ms <= 0)
			return 0;
		n = poll(&p, *input ? 1 : 0, (int)ms);
		if (n < 0 && errno != EINTR)
			return 0;
		if (n <= 0)
			continue;
		ssize_t r = read(STDIN_FILENO, &ch, 1);
		if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
			*input = 0; /* end of a script's input */
			continue;
		}
		if (r == 1 && (ch == 'q' || ch == 'Q' || ch == 3 || ch == 4))
			return 1;
	}
}

enum console_result console_top(struct console_session *s, double interval,
				long count)
{
	struct vmheap_reply reply;
	struct termios saved, raw;
	struct top t;
	enum console_result res = CONSOLE_RESULT_OK;
	int tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	int raw_set = 0, input = 1;

	memset(&t, 0, sizeof(t));
	memset(&reply, 0, sizeof(reply));
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		raw_set = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	}
	for (long frame = 0; count <= 0 || frame < count; frame++) {
		if (frame && wait_key(interval, &input))
			break;
		if (top_fetch(s, &t, &reply, &res) < 0)
			break;
		top_draw(stdout, &t, s, interval, tty);
	}
	if (raw_set)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	vmheap_reply_release(&reply);
	for (size_t i = 0; i < t.n; i++)
		free(t.c[i].name);
	free(t.c);
	return res;
}
