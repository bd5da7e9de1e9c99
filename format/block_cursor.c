/*
 * block_cursor.c - decode the records of one block.
 *
 * A cursor depends on nothing but the block's bytes, so blocks can be
 * decoded on any thread.  Object ids are delta-coded within a block
 * (see FORMAT.md, "Object record"); the delta state starts at 0 in each
 * block.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap.h"
#include "block_cursor-internal.h"
#include "format-internal.h"
#include "mpcursor-internal.h"

static const char *const record_names[] = {
    [VMHEAP_RECORD_STRING] = "string",
    [VMHEAP_RECORD_CLASS] = "class",
    [VMHEAP_RECORD_OBJECT] = "object",
    [VMHEAP_RECORD_ROOT] = "root",
    [VMHEAP_RECORD_MORE_REFS] = "more-references",
    [VMHEAP_RECORD_SITE] = "site",
};

static int fail(struct vmheap_block_cursor *c, int code, const uint8_t *at,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(struct vmheap_block_cursor *c, int code, const uint8_t *at,
		const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return vmheap_block_cursor_fail(c, code, at, what);
}

int vmheap_block_cursor_fail(struct vmheap_block_cursor *c, int code,
			     const uint8_t *at, const char *what)
{
	snprintf(
	    c->error, sizeof(c->error),
	    "%s at byte offset %llu (block at %llu)", what,
	    (unsigned long long)(c->base_offset + (uint64_t)(at - c->data)),
	    (unsigned long long)(c->base_offset - VMHEAP_SECTION_HEADER_LEN));
	c->pos = c->end; /* stop here */
	c->records_left = 0;
	c->status = code;
	return code;
}

static int field_error(struct vmheap_block_cursor *c, const struct mpc *m,
		       int rc, uint64_t tag, const char *field)
{
	return fail(c, VMHEAP_EFORMAT, m->p, "malformed %s record: %s: %s",
		    record_names[tag], field, mpc_strerror(rc));
}

void block_cursor_init(struct vmheap_block_cursor *c,
		       const struct vmheap_block *block)
{
	memset(c, 0, sizeof(*c));
	vmheap_block_cursor_reset(c, block);
}

int vmheap_block_cursor_open(vmheap_block_cursor **out,
			     const struct vmheap_block *block)
{
	if (!out)
		return VMHEAP_EINVAL;
	*out = malloc(sizeof(**out));
	if (!*out)
		return VMHEAP_ENOMEM;
	if (!block) {
		static const struct vmheap_block none = {0};

		block_cursor_init(*out, &none);
		snprintf((*out)->error, sizeof((*out)->error),
			 "no block given");
		(*out)->status = VMHEAP_EINVAL;
		return VMHEAP_EINVAL;
	}
	block_cursor_init(*out, block);
	return 0;
}

const char *vmheap_block_cursor_error(const vmheap_block_cursor *c)
{
	return c ? c->error : "out of memory";
}

void vmheap_block_cursor_free(vmheap_block_cursor *c)
{
	if (!c)
		return;
	block_cursor_release(c);
	free(c);
}

void vmheap_block_cursor_reset(struct vmheap_block_cursor *c,
			       const struct vmheap_block *block)
{
	c->data = c->pos = block->data;
	c->end = block->data + block->length;
	c->base_offset = block->offset + VMHEAP_SECTION_HEADER_LEN;
	c->prev_id = 0;
	c->records_left = block->records;
	c->status = 0;
	c->error[0] = '\0';
}

void block_cursor_release(struct vmheap_block_cursor *c)
{
	free(c->refs);
	c->refs = NULL;
	c->refs_cap = 0;
	free(c->names);
	c->names = NULL;
	c->names_cap = 0;
}

/* Grow c->refs to hold at least n references; -1 when out of memory. */
static int grow_refs(struct vmheap_block_cursor *c, size_t n)
{
	size_t cap = c->refs_cap ? c->refs_cap : 64;
	uint64_t *r;

	while (cap < n)
		cap *= 2;
	r = realloc(c->refs, cap * sizeof(*r));
	if (!r)
		return -1;
	c->refs = r;
	c->refs_cap = cap;
	return 0;
}

/*
 * Step over n integers at m->p without a bounds check or a branch on
 * their encoding, when the block holds room for n of the longest: 1 when
 * done; 0, with m->p unchanged, when one is no integer (or, with
 * `below_2_63`, a uint 64: a name must fit int64), for the checked loop
 * to report.  The references and names of a census (shallow) pass.
 */
static int skip_ints(struct mpc *m, uint32_t n, int below_2_63)
{
	const uint8_t *p = m->p;
	unsigned bad = 0;

	if ((size_t)(m->end - p) < (size_t)n * MPC_MAX_INT_BYTES)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		unsigned len = mpc_int_form[p[0]].advance;
		bad |= (len == 0) | (below_2_63 & (p[0] == 0xcf));
		p += len;
	}
	if (bad)
		return 0;
	m->p = p;
	return 1;
}

/* Read a reference list (deltas from `id`) into c->refs, or with
 * `shallow` only check and count it. */
static int read_refs(struct vmheap_block_cursor *c, struct mpc *m, uint64_t tag,
		     uint64_t id, size_t *nrefs, int shallow)
{
	uint32_t n;
	int rc = mpc_array(m, &n);

	if (rc)
		return field_error(c, m, rc, tag, "references");
	if (n > VMHEAP_MAX_REFS_PER_RECORD)
		return fail(c, VMHEAP_ELIMIT, m->p,
			    "%s record has %u references, more than the "
			    "limit of %u",
			    record_names[tag], n, VMHEAP_MAX_REFS_PER_RECORD);
	if (n > (size_t)(m->end - m->p))
		return fail(c, VMHEAP_EFORMAT, m->p,
			    "malformed %s record: %u references cannot fit in "
			    "the %zu bytes left in the block",
			    record_names[tag], n, (size_t)(m->end - m->p));
	if (!shallow && n > c->refs_cap && grow_refs(c, n) < 0)
		return fail(c, VMHEAP_ENOMEM, m->p,
			    "out of memory for %u references", n);
	if (shallow && skip_ints(m, n, 0)) {
		*nrefs = n;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t d;
		/* Fast path: a positive or negative fixint delta. */
		if (m->p < m->end && (*m->p <= 0x7f || *m->p >= 0xe0)) {
			d = (uint64_t)(int64_t)(int8_t)*m->p;
			m->p++;
		} else if ((rc = mpc_int_wrap(m, &d))) {
			return field_error(c, m, rc, tag, "reference");
		}
		if (!shallow)
			c->refs[i] = id + d;
	}
	*nrefs = n;
	return 0;
}

/*
 * Read the names element of an object or more-references record (format
 * 1.1): nil, or one name value per reference (FORMAT.md section 16).
 * With `shallow` it is checked (so that both modes find the same faults)
 * but not stored, and *names is NULL.
 */
static int read_names(struct vmheap_block_cursor *c, struct mpc *m,
		      uint64_t tag, size_t nrefs, const int64_t **names,
		      int shallow)
{
	const uint8_t *at = m->p;
	uint32_t n;
	int rc;

	*names = NULL;
	if (m->p < m->end && *m->p == 0xc0) { /* nil: no names */
		m->p++;
		return 0;
	}
	if ((rc = mpc_array(m, &n)))
		return field_error(c, m, rc, tag, "names");
	if (n != nrefs)
		return fail(c, VMHEAP_EFORMAT, at,
			    "malformed %s record: %u names for %zu references",
			    record_names[tag], n, nrefs);
	if (!shallow && n > c->names_cap) {
		size_t cap = c->names_cap ? c->names_cap : 64;
		int64_t *p;
		while (cap < n)
			cap *= 2;
		p = realloc(c->names, cap * sizeof(*p));
		if (!p)
			return fail(c, VMHEAP_ENOMEM, at,
				    "out of memory for %u names", n);
		c->names = p;
		c->names_cap = cap;
	}
	if (shallow && skip_ints(m, n, 1))
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t bits = VMHEAP_EDGE_NAME_NONE;
		int neg;
		if (m->p < m->end && *m->p == 0xc0) { /* nil: no name */
			m->p++;
		} else if ((rc = mpc_int_bits(m, &bits, &neg))) {
			return field_error(c, m, rc, tag, "name");
		} else if (!neg && bits > (uint64_t)INT64_MAX) {
			return fail(c, VMHEAP_EFORMAT, at,
				    "malformed %s record: name %u is string "
				    "id %llu, above the limit of 2^63-1",
				    record_names[tag], i,
				    (unsigned long long)bits);
		}
		if (!shallow)
			c->names[i] = (int64_t)bits;
	}
	*names = n && !shallow ? c->names : NULL;
	return 0;
}

/* Skip elements a newer minor version appended to a known record. */
static int skip_extra(struct vmheap_block_cursor *c, struct mpc *m,
		      uint64_t tag, uint32_t extra)
{
	while (extra--) {
		int rc = mpc_skip(m);
		if (rc)
			return field_error(c, m, rc, tag, "extra field");
	}
	return 0;
}

static int need_fields(struct vmheap_block_cursor *c, const uint8_t *start,
		       uint64_t tag, uint32_t have, uint32_t want)
{
	if (have >= want)
		return 0;
	return fail(c, VMHEAP_EFORMAT, start,
		    "malformed %s record: %u elements, at least %u expected",
		    record_names[tag], have, want);
}

static int decode_object(struct vmheap_block_cursor *c, struct mpc *m,
			 uint32_t n, const uint8_t *start,
			 struct vmheap_record *rec, int shallow)
{
	uint64_t delta, kind;
	int rc;

	if ((rc = need_fields(c, start, VMHEAP_RECORD_OBJECT, n, 6)))
		return rc;
	rec->type = VMHEAP_RECORD_OBJECT;
	if ((rc = mpc_int_wrap(m, &delta)))
		return field_error(c, m, rc, 3, "id");
	if ((rc = mpc_uint(m, &rec->u.object.class_id)))
		return field_error(c, m, rc, 3, "class id");
	if ((rc = mpc_uint(m, &rec->u.object.bytes)))
		return field_error(c, m, rc, 3, "bytes");
	if ((rc = mpc_uint(m, &kind)))
		return field_error(c, m, rc, 3, "kind");
	if (kind > UINT32_MAX)
		return fail(c, VMHEAP_EFORMAT, m->p,
			    "malformed object record: kind %llu is too large",
			    (unsigned long long)kind);
	rec->u.object.kind = (uint32_t)kind;
	rec->u.object.id = c->prev_id + delta;
	c->prev_id = rec->u.object.id;
	if ((rc = read_refs(c, m, 3, rec->u.object.id, &rec->u.object.nrefs,
			    shallow)))
		return rc;
	rec->u.object.refs = shallow ? NULL : c->refs;
	rec->u.object.names = NULL;
	rec->u.object.site = 0;
	if (n > 6 && (rc = read_names(c, m, 3, rec->u.object.nrefs,
				      &rec->u.object.names, shallow)))
		return rc;
	if (n > 7 && (rc = mpc_uint(m, &rec->u.object.site)))
		return field_error(c, m, rc, 3, "site");
	return skip_extra(c, m, 3, n > 8 ? n - 8 : 0);
}

static int decode_more_refs(struct vmheap_block_cursor *c, struct mpc *m,
			    uint32_t n, const uint8_t *start,
			    struct vmheap_record *rec, int shallow)
{
	uint64_t delta;
	int rc;

	if ((rc = need_fields(c, start, VMHEAP_RECORD_MORE_REFS, n, 3)))
		return rc;
	rec->type = VMHEAP_RECORD_MORE_REFS;
	if ((rc = mpc_int_wrap(m, &delta)))
		return field_error(c, m, rc, 5, "id");
	rec->u.object.id = c->prev_id + delta;
	rec->u.object.class_id = 0;
	rec->u.object.bytes = 0;
	rec->u.object.kind = 0;
	c->prev_id = rec->u.object.id;
	if ((rc = read_refs(c, m, 5, rec->u.object.id, &rec->u.object.nrefs,
			    shallow)))
		return rc;
	rec->u.object.refs = shallow ? NULL : c->refs;
	rec->u.object.names = NULL;
	rec->u.object.site = 0;
	if (n > 3 && (rc = read_names(c, m, 5, rec->u.object.nrefs,
				      &rec->u.object.names, shallow)))
		return rc;
	return skip_extra(c, m, 5, n > 4 ? n - 4 : 0);
}

static int read_text(struct vmheap_block_cursor *c, struct mpc *m, uint64_t tag,
		     const char *field, const char **s, size_t *len)
{
	uint32_t n;
	int rc = mpc_str(m, s, &n);

	if (rc)
		return field_error(c, m, rc, tag, field);
	if (n > VMHEAP_MAX_STRING_BYTES)
		return fail(c, VMHEAP_ELIMIT, m->p,
			    "%s record: %s is %u bytes, more than the limit "
			    "of %u",
			    record_names[tag], field, n,
			    VMHEAP_MAX_STRING_BYTES);
	*len = n;
	return 0;
}

static int decode_string(struct vmheap_block_cursor *c, struct mpc *m,
			 uint32_t n, const uint8_t *start,
			 struct vmheap_record *rec)
{
	int rc;

	if ((rc = need_fields(c, start, VMHEAP_RECORD_STRING, n, 3)))
		return rc;
	rec->type = VMHEAP_RECORD_STRING;
	if ((rc = mpc_uint(m, &rec->u.string.id)))
		return field_error(c, m, rc, 1, "id");
	if ((rc = read_text(c, m, 1, "text", &rec->u.string.text,
			    &rec->u.string.len)))
		return rc;
	return skip_extra(c, m, 1, n - 3);
}

static int decode_class(struct vmheap_block_cursor *c, struct mpc *m,
			uint32_t n, const uint8_t *start,
			struct vmheap_record *rec)
{
	uint64_t flags;
	int rc;

	if ((rc = need_fields(c, start, VMHEAP_RECORD_CLASS, n, 5)))
		return rc;
	rec->type = VMHEAP_RECORD_CLASS;
	if ((rc = mpc_uint(m, &rec->u.klass.id)))
		return field_error(c, m, rc, 2, "id");
	if ((rc = read_text(c, m, 2, "name", &rec->u.klass.name,
			    &rec->u.klass.name_len)))
		return rc;
	if ((rc = mpc_uint(m, &rec->u.klass.super_id)))
		return field_error(c, m, rc, 2, "superclass id");
	if ((rc = mpc_uint(m, &flags)))
		return field_error(c, m, rc, 2, "flags");
	if (flags > UINT32_MAX)
		return fail(c, VMHEAP_EFORMAT, m->p,
			    "malformed class record: flags do not fit 32 bits");
	rec->u.klass.flags = (uint32_t)flags;
	rec->u.klass.object_id = 0;
	if (n > 5 && (rc = mpc_uint(m, &rec->u.klass.object_id)))
		return field_error(c, m, rc, 2, "class object id");
	return skip_extra(c, m, 2, n > 6 ? n - 6 : 0);
}

static int decode_root(struct vmheap_block_cursor *c, struct mpc *m, uint32_t n,
		       const uint8_t *start, struct vmheap_record *rec)
{
	int rc;

	if ((rc = need_fields(c, start, VMHEAP_RECORD_ROOT, n, 3)))
		return rc;
	rec->type = VMHEAP_RECORD_ROOT;
	if ((rc = mpc_uint(m, &rec->u.root.kind_string_id)))
		return field_error(c, m, rc, 4, "kind string id");
	if ((rc = mpc_uint(m, &rec->u.root.object_id)))
		return field_error(c, m, rc, 4, "object id");
	rec->u.root.name_string_id = 0;
	if (n > 3 && (rc = mpc_uint(m, &rec->u.root.name_string_id)))
		return field_error(c, m, rc, 4, "name string id");
	return skip_extra(c, m, 4, n > 4 ? n - 4 : 0);
}

static int decode_site(struct vmheap_block_cursor *c, struct mpc *m, uint32_t n,
		       const uint8_t *start, struct vmheap_record *rec)
{
	int rc;

	if ((rc = need_fields(c, start, VMHEAP_RECORD_SITE, n, 5)))
		return rc;
	rec->type = VMHEAP_RECORD_SITE;
	if ((rc = mpc_uint(m, &rec->u.site.id)))
		return field_error(c, m, rc, 6, "id");
	if ((rc = read_text(c, m, 6, "file", &rec->u.site.file,
			    &rec->u.site.file_len)))
		return rc;
	if ((rc = mpc_uint(m, &rec->u.site.line)))
		return field_error(c, m, rc, 6, "line");
	if ((rc = read_text(c, m, 6, "method", &rec->u.site.method,
			    &rec->u.site.method_len)))
		return rc;
	return skip_extra(c, m, 6, n - 5);
}

/*
 * Decode the record at c->pos: 1 with *rec filled, 2 when it was a record
 * of a tag this reader skips (unknown, or a block summary), or a negative
 * code with the message in c->error.  The caller checked that a counted
 * record is left.
 */
int vmheap_block_cursor_decode_one(struct vmheap_block_cursor *c,
				   struct vmheap_record *rec, int shallow)
{
	struct mpc m = {c->pos, c->end};
	const uint8_t *start = c->pos;
	uint32_t n;
	uint64_t tag;
	int rc;

	if ((rc = mpc_array(&m, &n)))
		return fail(c, VMHEAP_EFORMAT, start,
			    "malformed record: not an array: %s",
			    mpc_strerror(rc));
	if (n < 1 || (rc = mpc_uint(&m, &tag)) || tag == 0)
		return fail(c, VMHEAP_EFORMAT, start,
			    "malformed record: its first element is "
			    "not a positive integer tag");
	c->records_left--;
	switch (tag) {
	case VMHEAP_RECORD_OBJECT:
		rc = decode_object(c, &m, n, start, rec, shallow);
		break;
	case VMHEAP_RECORD_MORE_REFS:
		rc = decode_more_refs(c, &m, n, start, rec, shallow);
		break;
	case VMHEAP_RECORD_STRING:
		rc = decode_string(c, &m, n, start, rec);
		break;
	case VMHEAP_RECORD_CLASS:
		rc = decode_class(c, &m, n, start, rec);
		break;
	case VMHEAP_RECORD_ROOT:
		rc = decode_root(c, &m, n, start, rec);
		break;
	case VMHEAP_RECORD_SITE:
		rc = decode_site(c, &m, n, start, rec);
		break;
	default:
		/* A block summary (read by vmheap_block_cursor_summary
		 * only) or a record of a newer minor version: skip it. */
		while (--n) {
			if ((rc = mpc_skip(&m)))
				return fail(c, VMHEAP_EFORMAT, m.p,
					    "malformed record of "
					    "unknown tag %llu: %s",
					    (unsigned long long)tag,
					    mpc_strerror(rc));
		}
		c->pos = m.p;
		return 2;
	}
	if (rc)
		return rc;
	rec->offset = c->base_offset + (uint64_t)(start - c->data);
	c->pos = m.p;
	return 1;
}

/* Every record the fast paths leave, and every error. */
static int next_checked(struct vmheap_block_cursor *c,
			struct vmheap_record *rec, int shallow)
{
	for (;;) {
		int rc;

		if (c->status)
			return c->status;
		if (c->pos == c->end) {
			if (c->records_left)
				return fail(c, VMHEAP_EFORMAT, c->pos,
					    "block ends %u records early "
					    "(its header counts more)",
					    c->records_left);
			return 0;
		}
		if (!c->records_left)
			return fail(c, VMHEAP_EFORMAT, c->pos,
				    "block has bytes after its last counted "
				    "record");
		rc = vmheap_block_cursor_decode_one(c, rec, shallow);
		if (rc != 2)
			return rc;
	}
}

int vmheap_block_cursor_next(struct vmheap_block_cursor *c,
			     struct vmheap_record *rec)
{
	if (vmheap_block_cursor_fast_object(c, rec))
		return 1;
	return next_checked(c, rec, 0);
}

int vmheap_block_cursor_next_shallow(struct vmheap_block_cursor *c,
				     struct vmheap_record *rec)
{
	if (vmheap_block_cursor_fast_object_shallow(c, rec))
		return 1;
	return next_checked(c, rec, 1);
}

int vmheap_block_cursor_next_shallow_batch(struct vmheap_block_cursor *c,
					   struct vmheap_record *recs, int max)
{
	int n = 0;

	while (n < max && vmheap_block_cursor_fast_object_shallow(c, &recs[n]))
		n++;
	return n ? n : next_checked(c, recs, 1);
}
