/*
 * top.c - the console's `top [SECONDS [COUNT]]`: the live histogram
 * (get system.memory.histogram) refreshed every SECONDS like top(1),
 * classes sorted by their growth since top began, with count, bytes and
 * rate per minute; above them the process's RSS (system.memory.rss) and,
 * while native tracking is on, malloc's live tracked bytes
 * (system.native.bytes), each with its change since top began; `q` quits.
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
#define RSS_VAR "system.memory.rss"
#define NATIVE_VAR "system.native.bytes"

/* ----------------------------------------------------------- top */

/* One class as top follows it. */
struct top_class {
	char *name;
	uint64_t count0, bytes0; /* when top began (0: not there then) */
	uint64_t count, bytes;	 /* now */
};

struct top {
	struct top_class *c;
	size_t n, cap;
	struct timespec t0; /* the first histogram's reply */
	int have_first;
	struct console_histogram first, now;
	uint64_t first_objects, first_bytes;
	/* the process: RSS, and malloc's live tracked bytes while tracking
	 * (have_native); the first figure of each since top began */
	int have_rss, have_native;
	uint64_t rss, rss0, native, native0;
	int had_rss, had_native;
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
static int top_update(struct top *t, const struct console_histogram *h)
{
	size_t known = t->n;

	if (t->n) /* t->c is NULL before the first class */
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
	if (t->n)
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

/* An unsigned integer variable: 1 with *v set, 0 when the agent says no
 * (e.g. native tracking is off), -1 when the VM is gone. */
static int get_uint(struct console_session *s, const char *var, uint64_t *v)
{
	struct console_reply r;
	int got = 0;

	memset(&r, 0, sizeof(r));
	if (console_session_call(s, "get", var, NULL, &r) < 0)
		return -1;
	if (r.ok && r.value.type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		*v = r.value.via.u64;
		got = 1;
	}
	console_reply_release(&r);
	return got;
}

/* The process's figures for this frame; 0, or -1 when the VM is gone. */
static int process_fetch(struct console_session *s, struct top *t)
{
	int rc = get_uint(s, RSS_VAR, &t->rss);

	if (rc < 0)
		return -1;
	t->have_rss = rc;
	if (rc && !t->had_rss) {
		t->rss0 = t->rss;
		t->had_rss = 1;
	}
	rc = get_uint(s, NATIVE_VAR, &t->native);
	if (rc < 0)
		return -1;
	t->have_native = rc;
	if (rc && !t->had_native) { /* tracking may start while top runs */
		t->native0 = t->native;
		t->had_native = 1;
	}
	return 0;
}

/* "process: RSS 52.1 MiB (+3.20 MiB); malloc live 12.0 MiB (+4.00 MiB,
 * tracked)": nothing it has no figure for. */
static void process_line(FILE *out, const struct top *t)
{
	char a[64], d[64];

	if (!t->have_rss && !t->have_native)
		return;
	fputs("process:", out);
	if (t->have_rss) {
		vmheap_format_size(a, sizeof(a), (unsigned long long)t->rss);
		vmheap_format_size_delta(d, sizeof(d),
					 (long long)(t->rss - t->rss0));
		fprintf(out, " RSS %s (%s)", a, d);
	}
	if (t->have_native) {
		vmheap_format_size(a, sizeof(a), (unsigned long long)t->native);
		vmheap_format_size_delta(d, sizeof(d),
					 (long long)(t->native - t->native0));
		fprintf(out, "%s native live %s (%s, tracked malloc)",
			t->have_rss ? ";" : "", a, d);
	}
	fputc('\n', out);
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

	if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 7)
		rows = ws.ws_row - 7u < t->n ? ws.ws_row - 7u : t->n;
	if (tty)
		fputs("\033[H\033[2J", out);
	fprintf(out,
		"vmheap top: %s (pid %ld), every %.1f s, %.1f s since top "
		"began; q quits\n",
		*s->info.vm ? s->info.vm : "vm", (long)s->info.pid, interval,
		secs);
	vmheap_format_size(size, sizeof(size), (unsigned long long)t->now.bytes);
	vmheap_format_size_delta(dsize, sizeof(dsize),
				 (long long)(t->now.bytes - t->first_bytes));
	signed_count(cnt, sizeof(cnt),
		     (int64_t)(t->now.objects - t->first_objects));
	process_line(out, t);
	fprintf(out, "heap: %llu objects (%s), %s (%s); walked %s in %.3f s\n\n",
		(unsigned long long)t->now.objects, cnt, size, dsize,
		t->now.forked ? (t->now.live_only ? "in a forked child after a GC"
						  : "in a forked child")
			      : "in the VM",
		t->now.seconds);
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
		console_print_aligned(out, "rrrrl", cells, shown + 1);
	}
	free(cells);
	free(nums);
	if (!tty)
		fputc('\n', out);
	fflush(out);
}

/* Ask for the histogram: 0, 1 when the VM is busy (try again later),
 * or -1 with the console result of a failure in *res. */
static int top_fetch(struct console_session *s, struct top *t,
		     struct console_reply *reply, enum console_result *res)
{
	struct console_histogram h;

	console_reply_release(reply);
	memset(reply, 0, sizeof(*reply));
	if (console_session_call(s, "get", HISTOGRAM_VAR, NULL, reply) < 0) {
		*res = CONSOLE_RESULT_GONE;
		return -1;
	}
	if (!reply->ok && !strcmp(reply->code, "busy")) {
		/* a dump or another histogram runs: not a failure of top,
		 * which tries again at its next refresh */
		fprintf(stderr, "busy: %s; trying again in a moment\n",
			*reply->message ? reply->message
					: "the VM is taking a histogram");
		return 1;
	}
	if (!reply->ok) {
		fprintf(stderr, "error (%s): %s\n",
			*reply->code ? reply->code : "error",
			*reply->message ? reply->message
					: "the histogram failed");
		*res = CONSOLE_RESULT_ERROR;
		return -1;
	}
	if (console_histogram_read(&reply->value, &h) < 0 || top_update(t, &h) < 0) {
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
	struct console_reply reply;
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
	for (long frame = 0, tries = 0; count <= 0 || frame < count; tries++) {
		int rc;

		if (tries && wait_key(interval, &input))
			break;
		rc = top_fetch(s, &t, &reply, &res);
		if (rc < 0)
			break;
		if (rc > 0)
			continue; /* busy: the next refresh tries again */
		if (process_fetch(s, &t) < 0) {
			res = CONSOLE_RESULT_GONE;
			break;
		}
		top_draw(stdout, &t, s, interval, tty);
		frame++;
	}
	if (raw_set)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	console_reply_release(&reply);
	for (size_t i = 0; i < t.n; i++)
		free(t.c[i].name);
	free(t.c);
	return res;
}
