/*
 * hprof_shape.c - a real HotSpot HPROF rewritten in an older JVM's shape
 * (see hprof_shape.h).  An HPROF walker of its own, written from the
 * HPROF format description, apart from import/: the test compares what
 * vmheap-import reads from both files.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hprof_shape.h"

/* ------------------------------------------------------------ bytes */

static void put(struct hprof_out *o, const void *data, size_t n)
{
	if (!n) /* data may be NULL (an empty buffer) */
		return;
	if (o->cap - o->len < n) {
		while (o->cap - o->len < n)
			o->cap = o->cap ? o->cap * 2 : 4096;
		o->p = realloc(o->p, o->cap);
		ck_assert_ptr_nonnull(o->p);
	}
	memcpy(o->p + o->len, data, n);
	o->len += n;
}

static void put_u(struct hprof_out *o, uint64_t v, unsigned size)
{
	unsigned char b[8];

	for (unsigned i = 0; i < size; i++)
		b[i] = (unsigned char)(v >> 8 * (size - 1 - i));
	put(o, b, size);
}

void hprof_put(struct hprof_out *o, const void *data, size_t n)
{
	put(o, data, n);
}

void hprof_put_u(struct hprof_out *o, unsigned long long v, unsigned size)
{
	put_u(o, v, size);
}

void hprof_put_record(struct hprof_out *o, unsigned tag,
		      const struct hprof_out *b)
{
	put_u(o, tag, 1);
	put_u(o, 0, 4);
	put_u(o, b->len, 4);
	put(o, b->p, b->len);
}

static uint64_t be64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

struct in {
	const unsigned char *p;
	size_t len, pos;
};

static uint64_t get_u(struct in *r, unsigned size)
{
	uint64_t v = 0;

	ck_assert_msg(r->len - r->pos >= size, "HPROF cut at %zu", r->pos);
	for (unsigned i = 0; i < size; i++)
		v = v << 8 | r->p[r->pos++];
	return v;
}

static const unsigned char *get(struct in *r, size_t n)
{
	const unsigned char *p = r->p + r->pos;

	ck_assert_msg(r->len - r->pos >= n, "HPROF cut at %zu", r->pos);
	r->pos += n;
	return p;
}

/* ------------------------------------------------------------ tables */

/* An open-addressing map of non-zero 64-bit keys to 32-bit values. */
struct map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, count;
};

static size_t map_find(const struct map *m, uint64_t key)
{
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15u >> 20) & (m->cap - 1);

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* The value of `key` (NULL if absent and !create; 0 if new). */
static uint32_t *map_at(struct map *m, uint64_t key, int create)
{
	size_t i;

	if (!m->cap && !create)
		return NULL;
	if ((m->count + 1) * 2 > m->cap) {
		struct map b = {calloc(m->cap ? m->cap * 2 : 1024, 8),
				calloc(m->cap ? m->cap * 2 : 1024, 4),
				m->cap ? m->cap * 2 : 1024, 0};

		ck_assert(b.keys && b.vals);
		for (i = 0; i < m->cap; i++)
			if (m->keys[i]) {
				size_t j = map_find(&b, m->keys[i]);

				b.keys[j] = m->keys[i];
				b.vals[j] = m->vals[i];
				b.count++;
			}
		free(m->keys);
		free(m->vals);
		*m = b;
	}
	i = map_find(m, key);
	if (!m->keys[i]) {
		if (!create)
			return NULL;
		m->keys[i] = key;
		m->count++;
	}
	return &m->vals[i];
}

static void map_free(struct map *m)
{
	free(m->keys);
	free(m->vals);
}

/* A class's instance fields as the HPROF lists them. */
struct klass {
	uint64_t super;
	unsigned char *types;
	unsigned n;
};

struct shape {
	struct in r;
	unsigned id_size;
	uint32_t next_id;
	struct map ids;	    /* 4-byte ids: old id -> new id */
	struct map names;   /* UTF8 ids of class names */
	struct map classes; /* class id -> index + 1 in `k` */
	struct klass *k;
	size_t nk;
	int first; /* the first round: only the classes' layouts */
};

static void put_id(struct shape *s, struct hprof_out *o, uint64_t id)
{
	uint32_t *v;

	if (s->id_size == 8 || !id) {
		put_u(o, id, s->id_size);
		return;
	}
	v = map_at(&s->ids, id, 1);
	if (!*v)
		*v = ++s->next_id;
	put_u(o, *v, 4);
}

/* Copy an id of the input to `o`. */
static uint64_t copy_id(struct shape *s, struct hprof_out *o)
{
	uint64_t id = get_u(&s->r, 8);

	put_id(s, o, id);
	return id;
}

/* The bytes of a value of HPROF type `t` (ids: 8), 0 if unknown. */
static unsigned type_size(unsigned t)
{
	static const unsigned char sizes[12] = {0, 0, 8, 0, 1, 2,
						4, 8, 1, 2, 4, 8};

	return t < 12 ? sizes[t] : 0;
}

/* Copy a value of type `t`: an object id is rewritten. */
static void copy_value(struct shape *s, struct hprof_out *o, unsigned t)
{
	ck_assert_msg(type_size(t), "type %u at %zu", t, s->r.pos);
	if (t == 2)
		copy_id(s, o);
	else
		put(o, get(&s->r, type_size(t)), type_size(t));
}

static struct klass *klass_of(struct shape *s, uint64_t id)
{
	uint32_t *v = map_at(&s->classes, id, 0);

	ck_assert_msg(v && *v, "no CLASS DUMP of 0x%llx before its use",
		      (unsigned long long)id);
	return &s->k[*v - 1];
}

/* ------------------------------------------------------------ names */

/* "java/lang/String" -> "java.lang.String", "[Ljava/lang/Object;" ->
 * "java.lang.Object[]", "[[I" -> "int[][]". */
static void old_name(const unsigned char *t, size_t len, struct hprof_out *o)
{
	static const char *const prims[] = {
	    ['Z'] = "boolean", ['B'] = "byte", ['C'] = "char",
	    ['S'] = "short",   ['I'] = "int",  ['J'] = "long",
	    ['F'] = "float",   ['D'] = "double"};
	size_t dims = 0, i;

	while (dims < len && t[dims] == '[')
		dims++;
	if (dims && dims < len && t[dims] == 'L' && t[len - 1] == ';') {
		t += dims + 1;
		len -= dims + 2;
	} else if (dims && dims + 1 == len && t[dims] <= 'Z' &&
		   prims[t[dims]]) {
		put(o, prims[t[dims]], strlen(prims[t[dims]]));
		len = 0;
	} else {
		t += dims; /* not an array name */
		len -= dims;
		dims = 0;
	}
	for (i = 0; i < len; i++)
		put(o, t[i] == '/' ? "." : (const char *)&t[i], 1);
	for (i = 0; i < dims; i++)
		put(o, "[]", 2);
}

/* ------------------------------------------------------------ records */

static void class_dump(struct shape *s, struct hprof_out *o)
{
	uint64_t id, super, fields_at;
	unsigned n, i, t, bytes = 0;
	struct klass *k;
	uint32_t *slot;

	id = copy_id(s, o);
	put(o, get(&s->r, 4), 4);
	super = copy_id(s, o);
	for (i = 0; i < 5; i++) /* loader, signers, domain, reserved */
		copy_id(s, o);
	get_u(&s->r, 4); /* instance size: recomputed below */
	fields_at = o->len;
	put_u(o, 0, 4);
	n = (unsigned)get_u(&s->r, 2);
	put_u(o, n, 2);
	for (i = 0; i < n; i++) {
		put(o, get(&s->r, 2), 2);
		t = (unsigned)get_u(&s->r, 1);
		put_u(o, t, 1);
		copy_value(s, o, t);
	}
	n = (unsigned)get_u(&s->r, 2);
	put_u(o, n, 2);
	for (i = 0; i < n; i++) {
		copy_id(s, o);
		t = (unsigned)get_u(&s->r, 1);
		put_u(o, t, 1);
		copy_value(s, o, t);
	}
	n = (unsigned)get_u(&s->r, 2);
	put_u(o, n, 2);
	slot = map_at(&s->classes, id, 1);
	ck_assert_msg(!*slot || !s->first, "two CLASS DUMPs of 0x%llx",
		      (unsigned long long)id);
	if (s->first) {
		s->k = realloc(s->k, (s->nk + 1) * sizeof(*s->k));
		ck_assert_ptr_nonnull(s->k);
		k = &s->k[s->nk++];
		*slot = (uint32_t)s->nk;
		k->super = super;
		k->n = n;
		k->types = malloc(n + 1);
		ck_assert_ptr_nonnull(k->types);
	}
	k = &s->k[*slot - 1];
	for (i = 0; i < n; i++) {
		copy_id(s, o);
		t = (unsigned)get_u(&s->r, 1);
		put_u(o, t, 1);
		k->types[i] = (unsigned char)t;
	}
	if (s->first)
		return;
	/* the instance size in the new ids: the fields of the class and
	 * its superclasses */
	for (uint64_t c = id; c; c = klass_of(s, c)->super) {
		const struct klass *x = klass_of(s, c);

		for (i = 0; i < x->n; i++)
			bytes += x->types[i] == 2 ? s->id_size
						  : type_size(x->types[i]);
	}
	for (i = 0; i < 4; i++)
		o->p[fields_at + i] = (unsigned char)(bytes >> 8 * (3 - i));
}

static void instance_dump(struct shape *s, struct hprof_out *o)
{
	uint64_t cls;
	size_t len, end;
	struct hprof_out v = {0};

	copy_id(s, o);
	put(o, get(&s->r, 4), 4);
	cls = copy_id(s, o);
	len = (size_t)get_u(&s->r, 4);
	end = s->r.pos + len;
	if (s->first) {
		get(&s->r, len);
		return;
	}
	for (uint64_t c = cls; c; c = klass_of(s, c)->super) {
		const struct klass *k = klass_of(s, c);

		for (unsigned i = 0; i < k->n; i++)
			copy_value(s, &v, k->types[i]);
	}
	ck_assert_msg(s->r.pos == end, "instance fields at %zu", end);
	put_u(o, v.len, 4);
	put(o, v.p, v.len);
	free(v.p);
}

/* One sub-record: a CLASS DUMP to `classes`, the others to `rest`. */
static void sub_record(struct shape *s, struct hprof_out *rest, struct hprof_out *classes)
{
	unsigned tag = (unsigned)get_u(&s->r, 1), t;
	uint64_t n, i;
	struct hprof_out *o = tag == 0x20 ? classes : rest;

	put_u(o, tag, 1);
	switch (tag) {
	case 0xff: /* ROOT UNKNOWN, STICKY CLASS, MONITOR USED */
	case 0x05:
	case 0x07:
		copy_id(s, o);
		break;
	case 0x01: /* JNI GLOBAL */
		copy_id(s, o);
		copy_id(s, o);
		break;
	case 0x02: /* JNI LOCAL, JAVA FRAME, THREAD OBJECT */
	case 0x03:
	case 0x08:
		copy_id(s, o);
		put(o, get(&s->r, 8), 8);
		break;
	case 0x04: /* NATIVE STACK, THREAD BLOCK */
	case 0x06:
		copy_id(s, o);
		put(o, get(&s->r, 4), 4);
		break;
	case 0x20:
		class_dump(s, o);
		break;
	case 0x21:
		instance_dump(s, o);
		break;
	case 0x22: /* OBJECT ARRAY */
		copy_id(s, o);
		put(o, get(&s->r, 4), 4);
		n = get_u(&s->r, 4);
		put_u(o, n, 4);
		copy_id(s, o);
		for (i = 0; i < n; i++)
			copy_id(s, o);
		break;
	case 0x23: /* PRIMITIVE ARRAY */
		copy_id(s, o);
		put(o, get(&s->r, 4), 4);
		n = get_u(&s->r, 4);
		put_u(o, n, 4);
		t = (unsigned)get_u(&s->r, 1);
		put_u(o, t, 1);
		ck_assert_msg(type_size(t) && t != 2, "array type %u", t);
		put(o, get(&s->r, n * type_size(t)), n * type_size(t));
		break;
	default:
		ck_abort_msg("sub-record tag 0x%02x at %zu", tag, s->r.pos - 1);
	}
}

static void record_header(struct hprof_out *o, unsigned tag, size_t len)
{
	put_u(o, tag, 1);
	put_u(o, 0, 4);
	ck_assert_uint_le(len, UINT32_MAX);
	put_u(o, len, 4);
}

/* The records after the header: the heap's sub-records to `rest` and
 * `classes`, the others to `o`. */
static void records(struct shape *sh, struct hprof_out *o, struct hprof_out *rest,
		    struct hprof_out *classes)
{
	struct hprof_out rec = {0};
	size_t len = sh->r.len;

	while (sh->r.pos < len) {
		unsigned tag = (unsigned)get_u(&sh->r, 1);
		size_t n, end;
		uint64_t id;

		get_u(&sh->r, 4);
		n = (size_t)get_u(&sh->r, 4);
		end = sh->r.pos + n;
		rec.len = 0;
		switch (tag) {
		case 0x01: /* UTF8 */
			id = copy_id(sh, &rec);
			if (map_at(&sh->names, id, 0))
				old_name(get(&sh->r, n - 8), n - 8, &rec);
			else
				put(&rec, get(&sh->r, n - 8), n - 8);
			break;
		case 0x02: /* LOAD CLASS */
			put(&rec, get(&sh->r, 4), 4);
			copy_id(sh, &rec);
			put(&rec, get(&sh->r, 4), 4);
			copy_id(sh, &rec);
			break;
		case 0x04: /* FRAME */
			for (int i = 0; i < 4; i++)
				copy_id(sh, &rec);
			put(&rec, get(&sh->r, 8), 8);
			break;
		case 0x05: /* TRACE */
			put(&rec, get(&sh->r, 8), 8);
			n = (size_t)get_u(&sh->r, 4);
			put_u(&rec, n, 4);
			for (size_t i = 0; i < n; i++)
				copy_id(sh, &rec);
			break;
		case 0x0c: /* HEAP DUMP (SEGMENT): gathered */
		case 0x1c:
			while (sh->r.pos < end)
				sub_record(sh, rest, classes);
			break;
		case 0x2c: /* HEAP DUMP END: written at the end */
			break;
		default:
			ck_abort_msg("record tag 0x%02x at %zu", tag,
				     sh->r.pos - 9);
		}
		ck_assert_msg(sh->r.pos == end, "record 0x%02x ends at %zu, not "
					      "%zu",
			      tag, sh->r.pos, end);
		if (tag != 0x0c && tag != 0x1c && tag != 0x2c) {
			record_header(o, tag, rec.len);
			put(o, rec.p, rec.len);
		}
	}
	free(rec.p);
}

unsigned char *hprof_old_shape(const unsigned char *in, size_t len,
			       const char *version, unsigned id_size,
			       size_t *out_len)
{
	struct shape s = {{in, len, 0}, id_size, 0, {0}, {0}, {0}, NULL, 0, 0};
	struct hprof_out o = {0}, rest = {0}, classes = {0}, scratch = {0};
	const char *head = (const char *)in;
	uint64_t time;
	size_t start;

	ck_assert(id_size == 4 || id_size == 8);
	ck_assert(memchr(in, 0, len > 64 ? 64 : len) != NULL);
	s.r.pos = strlen(head) + 1;
	ck_assert_uint_eq(get_u(&s.r, 4), 8);
	time = get_u(&s.r, 8);
	/* the names of classes: LOAD CLASS records' UTF8 ids */
	{
		struct in r = s.r;

		while (r.pos < len) {
			unsigned tag = (unsigned)get_u(&r, 1);
			size_t n;

			get_u(&r, 4);
			n = (size_t)get_u(&r, 4);
			if (tag == 0x02)
				*map_at(&s.names, be64(r.p + r.pos + 16), 1) = 1;
			get(&r, n);
		}
	}
	put(&o, version, strlen(version) + 1);
	put_u(&o, id_size, 4);
	put_u(&o, time, 8);
	/* the classes' layouts first (a superclass may be dumped after its
	 * subclass), then the file */
	start = s.r.pos;
	s.first = 1;
	records(&s, &scratch, &scratch, &scratch);
	s.r.pos = start;
	s.first = 0;
	records(&s, &o, &rest, &classes);
	/* the instances first, then the classes they need */
	record_header(&o, 0x1c, rest.len + classes.len);
	put(&o, rest.p, rest.len);
	put(&o, classes.p, classes.len);
	record_header(&o, 0x2c, 0);
	for (size_t i = 0; i < s.nk; i++)
		free(s.k[i].types);
	free(s.k);
	map_free(&s.ids);
	map_free(&s.names);
	map_free(&s.classes);
	free(rest.p);
	free(classes.p);
	free(scratch.p);
	*out_len = o.len;
	return o.p;
}
