/*
 * ruby_line.c - the parser of one ObjectSpace.dump_all line (part of
 * libvmheap-import).
 *
 * A dump_all line is one JSON object whose values the converter needs are
 * flat: strings ("type", "name", "root", ...), addresses ("0x..."),
 * arrays of addresses ("references"), a byte count ("memsize"), a line
 * number ("line", with "file" and "method" when allocation tracing was
 * on) and a boolean ("singleton").  Everything else ("flags", "value",
 * "generation", ...) is checked to be well-formed JSON and skipped.  Strings are taken as
 * the bytes Ruby writes: MRI escapes quotes, backslashes and control
 * characters but passes other bytes through, so a class name in Latin-1
 * arrives as Latin-1; this parser keeps such bytes rather than refusing
 * the line, as a strict UTF-8 JSON parser would.
 */
#include <stdlib.h>
#include <string.h>

#include "ruby_json-internal.h"

#define MAX_DEPTH 64

struct cur {
	const unsigned char *p, *start, *end;
	struct rj_line *out;
	const char *error; /* static text */
};

static int fail(struct cur *c, const char *what)
{
	if (!c->error)
		c->error = what;
	return -1;
}

static void ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' ||
				 *c->p == '\r' || *c->p == '\n'))
		c->p++;
}

static int hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* \uXXXX at p (after the u): the code unit, or -1. */
static long hex4(const unsigned char *p, const unsigned char *end)
{
	long v = 0;
	int i, d;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		d = hexval(p[i]);
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/* Append the UTF-8 form of code point `cp` to the scratch buffer. */
static int put_utf8(struct rj_line *l, unsigned long cp)
{
	unsigned char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return rj_line_scratch_add(l, b, n);
}

/*
 * A string at c->p (its opening quote).  With `keep`, its decoded bytes
 * are appended to the scratch buffer and *s gets their place.
 */
static int string(struct cur *c, int keep, struct rj_str *s)
{
	const unsigned char *run;
	long u, lo;

	if (c->p >= c->end || *c->p != '"')
		return fail(c, "a string expected");
	c->p++;
	if (keep)
		s->off = c->out->scratch_len;
	for (;;) {
		run = c->p;
		while (c->p < c->end && *c->p != '"' && *c->p != '\\' &&
		       *c->p >= 0x20)
			c->p++;
		if (keep && c->p > run &&
		    rj_line_scratch_add(c->out, run, (size_t)(c->p - run)))
			return fail(c, "out of memory");
		if (c->p >= c->end)
			return fail(c, "an unterminated string");
		if (*c->p == '"')
			break;
		if (*c->p < 0x20)
			return fail(c, "a control character in a string");
		/* a backslash */
		if (c->end - c->p < 2)
			return fail(c, "an unterminated string");
		switch (c->p[1]) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't': {
			static const char from[] = "\"\\/bfnrt",
					  to[] = "\"\\/\b\f\n\r\t";
			unsigned char ch =
			    (unsigned char)to[strchr(from, c->p[1]) - from];

			if (keep && rj_line_scratch_add(c->out, &ch, 1))
				return fail(c, "out of memory");
			c->p += 2;
			break;
		}
		case 'u':
			u = hex4(c->p + 2, c->end);
			if (u < 0)
				return fail(c, "a bad \\u escape");
			c->p += 6;
			if (u >= 0xd800 && u < 0xdc00 && c->end - c->p >= 6 &&
			    c->p[0] == '\\' && c->p[1] == 'u' &&
			    (lo = hex4(c->p + 2, c->end)) >= 0xdc00 &&
			    lo < 0xe000) {
				u = 0x10000 + ((u - 0xd800) << 10) +
				    (lo - 0xdc00);
				c->p += 6;
			} else if (u >= 0xd800 && u < 0xe000) {
				u = 0xfffd; /* a lone surrogate */
			}
			if (keep && put_utf8(c->out, (unsigned long)u))
				return fail(c, "out of memory");
			break;
		default:
			return fail(c, "a bad escape in a string");
		}
	}
	c->p++; /* the closing quote */
	if (keep) {
		s->len = c->out->scratch_len - s->off;
		s->set = 1;
	}
	return 0;
}

/* A string holding "0x" and 1 to 16 hex digits. */
static int address(struct cur *c, uint64_t *out)
{
	const unsigned char *p = c->p;
	uint64_t x = 0;
	int n = 0, d;

	if (c->end - p < 4 || p[0] != '"' || p[1] != '0' ||
	    (p[2] != 'x' && p[2] != 'X'))
		return fail(c, "an address (\"0x...\") expected");
	for (p += 3; p < c->end && (d = hexval(*p)) >= 0; p++, n++)
		x = x << 4 | (unsigned)d;
	if (n < 1 || n > 16 || p >= c->end || *p != '"')
		return fail(c, "an address (\"0x...\") expected");
	c->p = p + 1;
	*out = x;
	return 0;
}

static int literal(struct cur *c, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
		return fail(c, "an unexpected character");
	c->p += n;
	return 0;
}

static int number(struct cur *c)
{
	const unsigned char *start = c->p;

	if (c->p < c->end && *c->p == '-')
		c->p++;
	if (c->p >= c->end || *c->p < '0' || *c->p > '9')
		return fail(c, "an unexpected character");
	while (c->p < c->end &&
	       ((*c->p >= '0' && *c->p <= '9') || *c->p == '.' ||
		*c->p == 'e' || *c->p == 'E' || *c->p == '+' || *c->p == '-'))
		c->p++;
	return c->p > start ? 0 : -1;
}

static int value(struct cur *c, int depth);

/* An object or array (c->p at its opening bracket), skipped. */
static int container(struct cur *c, int depth)
{
	unsigned char close = *c->p == '{' ? '}' : ']';
	int first = 1;

	if (depth >= MAX_DEPTH)
		return fail(c, "nesting too deep");
	c->p++;
	for (;;) {
		ws(c);
		if (c->p < c->end && *c->p == close && first) {
			c->p++;
			return 0;
		}
		if (close == '}') {
			if (string(c, 0, NULL))
				return -1;
			ws(c);
			if (c->p >= c->end || *c->p != ':')
				return fail(c, "':' expected");
			c->p++;
			ws(c);
		}
		if (value(c, depth + 1))
			return -1;
		ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			first = 0;
			continue;
		}
		if (c->p < c->end && *c->p == close) {
			c->p++;
			return 0;
		}
		return fail(c, close == '}' ? "',' or '}' expected"
					    : "',' or ']' expected");
	}
}

static int value(struct cur *c, int depth)
{
	if (c->p >= c->end)
		return fail(c, "a value expected");
	switch (*c->p) {
	case '"':
		return string(c, 0, NULL);
	case '{':
	case '[':
		return container(c, depth);
	case 't':
		return literal(c, "true");
	case 'f':
		return literal(c, "false");
	case 'n':
		return literal(c, "null");
	default:
		return number(c);
	}
}

static int references(struct cur *c)
{
	struct rj_line *l = c->out;

	if (c->p >= c->end || *c->p != '[')
		return fail(c, "\"references\" is not an array");
	c->p++;
	ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		return 0;
	}
	for (;;) {
		uint64_t ref;

		ws(c);
		if (address(c, &ref))
			return -1;
		if (rj_line_ref_add(l, ref))
			return fail(c, "out of memory");
		ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			return 0;
		}
		return fail(c, "',' or ']' expected");
	}
}

/* A non-negative integer of at most `max`: "memsize" (too_large and
 * not_count are the messages) or "line". */
static int count(struct cur *c, uint64_t *out, uint64_t max,
		 const char *too_large, const char *not_count)
{
	uint64_t x = 0;
	const unsigned char *start = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return fail(c, too_large);
		x = x * 10 + (uint64_t)(*c->p++ - '0');
	}
	if (x > max) {
		c->p = start; /* the offset names the number */
		return fail(c, too_large);
	}
	if (c->p == start ||
	    (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E')))
		return fail(c, not_count);
	*out = x;
	return 0;
}

static int key_is(const struct cur *c, const unsigned char *k, size_t n,
		  const char *name)
{
	(void)c;
	return strlen(name) == n && memcmp(k, name, n) == 0;
}

/* One member's value, by its key k[0..n). */
static int member(struct cur *c, const unsigned char *k, size_t n)
{
	struct rj_line *l = c->out;

	if (key_is(c, k, n, "type"))
		return string(c, 1, &l->type);
	if (key_is(c, k, n, "address"))
		return l->has_address = 1, address(c, &l->address);
	if (key_is(c, k, n, "class"))
		return l->has_class = 1, address(c, &l->klass);
	if (key_is(c, k, n, "superclass"))
		return l->has_super = 1, address(c, &l->super);
	if (key_is(c, k, n, "memsize"))
		return l->has_memsize = 1,
		       count(c, &l->memsize, IMP_MAX_OBJECT_BYTES,
			     "implausible \"memsize\": more than 2^48 bytes "
			     "(256 TiB), larger than any address space,",
			     "\"memsize\" is not a byte count");
	if (key_is(c, k, n, "file"))
		return string(c, 1, &l->file);
	if (key_is(c, k, n, "line"))
		return count(c, &l->line, UINT32_MAX, "\"line\" is too large",
			     "\"line\" is not a line number");
	if (key_is(c, k, n, "method"))
		return string(c, 1, &l->method);
	if (key_is(c, k, n, "references"))
		return l->nrefs = 0, references(c);
	if (key_is(c, k, n, "name"))
		return string(c, 1, &l->name);
	if (key_is(c, k, n, "real_class_name"))
		return string(c, 1, &l->real_name);
	if (key_is(c, k, n, "root"))
		return string(c, 1, &l->root);
	if (key_is(c, k, n, "imemo_type"))
		return string(c, 1, &l->imemo_type);
	if (key_is(c, k, n, "singleton")) {
		l->singleton = c->p < c->end && *c->p == 't';
		return value(c, 1);
	}
	return value(c, 1);
}

int rj_line_parse(struct rj_line *l, const char *text, size_t len,
		  size_t *column, const char **error)
{
	struct cur c = {(const unsigned char *)text,
			(const unsigned char *)text,
			(const unsigned char *)text + len, l, NULL};
	const unsigned char *k;
	size_t n;
	int rc = -1;

	rj_line_reset(l);
	ws(&c);
	if (c.p >= c.end || *c.p != '{') {
		fail(&c, "a line that is not a JSON object");
		goto out;
	}
	c.p++;
	ws(&c);
	if (c.p < c.end && *c.p == '}') {
		c.p++;
	} else {
		for (;;) {
			ws(&c);
			if (c.p >= c.end || *c.p != '"') {
				fail(&c, "a member name expected");
				goto out;
			}
			k = c.p + 1;
			if (string(&c, 0, NULL))
				goto out;
			n = (size_t)(c.p - 1 - k);
			ws(&c);
			if (c.p >= c.end || *c.p != ':') {
				fail(&c, "':' expected");
				goto out;
			}
			c.p++;
			ws(&c);
			if (member(&c, k, n))
				goto out;
			ws(&c);
			if (c.p < c.end && *c.p == ',') {
				c.p++;
				continue;
			}
			if (c.p < c.end && *c.p == '}') {
				c.p++;
				break;
			}
			fail(&c, "',' or '}' expected");
			goto out;
		}
	}
	ws(&c);
	if (c.p != c.end) {
		fail(&c, "bytes after the object");
		goto out;
	}
	rc = 0;
out:
	*column = (size_t)(c.p - c.start);
	*error = c.error;
	return rc;
}

void rj_line_reset(struct rj_line *l)
{
	struct rj_str none = {0, 0, 0};

	l->type = l->name = l->real_name = l->root = l->imemo_type = none;
	l->file = l->method = none;
	l->line = 0;
	l->has_address = l->has_class = l->has_super = l->has_memsize = 0;
	l->singleton = 0;
	l->address = l->klass = l->super = l->memsize = 0;
	l->nrefs = 0;
	l->scratch_len = 0;
}

void rj_line_free(struct rj_line *l)
{
	free(l->refs);
	free(l->scratch);
	memset(l, 0, sizeof(*l));
}

int rj_line_scratch_add(struct rj_line *l, const void *bytes, size_t n)
{
	if (l->scratch_len + n > l->scratch_cap) {
		size_t cap = l->scratch_cap ? l->scratch_cap : 256;
		unsigned char *s;

		while (cap < l->scratch_len + n)
			cap *= 2;
		s = realloc(l->scratch, cap);
		if (!s)
			return -1;
		l->scratch = s;
		l->scratch_cap = cap;
	}
	memcpy(l->scratch + l->scratch_len, bytes, n);
	l->scratch_len += n;
	return 0;
}

int rj_line_ref_add(struct rj_line *l, uint64_t ref)
{
	if (l->nrefs == l->refs_cap) {
		size_t cap = l->refs_cap ? l->refs_cap * 2 : 256;
		uint64_t *r = realloc(l->refs, cap * sizeof(*r));

		if (!r)
			return -1;
		l->refs = r;
		l->refs_cap = cap;
	}
	l->refs[l->nrefs++] = ref;
	return 0;
}

int rj_str_is(const struct rj_line *l, struct rj_str s, const char *text)
{
	return strlen(text) == s.len &&
	       (s.len == 0 || memcmp(l->scratch + s.off, text, s.len) == 0);
}
