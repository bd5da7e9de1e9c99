/*
 * block_cursor-internal.h - the block cursor's hot paths, shared by
 * vmheap_block_cursor_next(), vmheap_block_cursor_next_shallow(),
 * vmheap_reader_next() and the census, so that the common record (an
 * object) decodes without a function call.  Only block_cursor* and
 * mpcursor* know the record encoding; everything else goes through these
 * functions.
 */
#ifndef VMHEAP_BLOCK_CURSOR_INTERNAL_H
#define VMHEAP_BLOCK_CURSOR_INTERNAL_H

#include "vmheap.h"
#include "mpcursor-internal.h"

/* The cursor (opaque in vmheap.h): the reader embeds one. */
struct vmheap_block_cursor {
	const uint8_t *data, *pos, *end;
	uint64_t base_offset; /* file offset of data[0] */
	uint64_t prev_id;     /* delta state */
	uint32_t records_left;
	uint64_t *refs; /* reference buffer, grown on demand */
	size_t refs_cap;
	int64_t *names; /* edge name buffer, grown on demand */
	size_t names_cap;
	int status;	 /* sticky error code, 0 if none */
	char error[256]; /* "what at byte offset N (block at M)" */
};

/* A cursor embedded in another object (the reader): set up over `block`
 * with no buffer yet, and release its buffers (not the cursor). */
void block_cursor_init(struct vmheap_block_cursor *c,
		       const struct vmheap_block *block);
void block_cursor_release(struct vmheap_block_cursor *c);

/*
 * The fast paths take an object record of six elements (eight in format
 * 1.1: names and a site, see fast_object_tail()), far
 * enough from the block's end that no field needs a bounds check, with
 * integers in the encodings msgpack-c produces.  Each returns 1 with *rec
 * filled, or 0 to let the checked decoder handle the record (nothing was
 * consumed; *rec is theirs to scribble on either way).
 *
 * fast_object_head() decodes what comes before the references: the id,
 * class id, size, kind and the reference count *n.  It
 * returns the position of the first reference, or NULL.  The callers
 * check that every reference fits before the block's end
 * (MPC_MAX_INT_BYTES each), so that no value needs a check of its own.
 */
static inline __attribute__((always_inline)) const uint8_t *
vmheap_block_cursor_fast_object_head(const struct vmheap_block_cursor *c,
				     struct vmheap_record *rec, uint32_t *n,
				     unsigned *elems)
{
	const uint8_t *p = c->pos;
	uint64_t v;

	/* fixarray(6), tag 3, four ints, array header: at most 43 bytes.
	 * Fields go straight into *rec as they are decoded (few values stay
	 * live, so the caller's registers suffice). */
	if (c->end - p < 48 || (unsigned)(p[0] - 0x96) > 2 ||
	    p[1] != VMHEAP_RECORD_OBJECT || !c->records_left)
		return NULL;
	*elems = p[0] & 0x0f;
	rec->offset = c->base_offset + (uint64_t)(p - c->data);
	p += 2;
	if (mpc_int_small_unchecked(&p, &v))
		return NULL;
	rec->u.object.id = c->prev_id + v;
	if ((p[0] | p[1] | p[2]) <= 0x7f) {
		/* Class, size and kind all one-byte fixints: the usual case. */
		rec->u.object.class_id = p[0];
		rec->u.object.bytes = p[1];
		rec->u.object.kind = p[2];
		p += 3;
	} else {
		if (mpc_uint_unchecked(&p, &rec->u.object.class_id) ||
		    mpc_uint_unchecked(&p, &rec->u.object.bytes) ||
		    mpc_uint_unchecked(&p, &v) || v > UINT32_MAX)
			return NULL;
		rec->u.object.kind = (uint32_t)v;
	}
	if ((p[0] & 0xf0) == 0x90) {
		*n = p[0] & 0x0f;
		p++;
	} else if (p[0] == 0xdc) {
		*n = mpc_be16(p + 1);
		p += 3;
	} else {
		return NULL;
	}
	return p;
}

/* Finish a record the fast paths took, whose last byte is before p. */
static inline __attribute__((always_inline)) void
vmheap_block_cursor_fast_object_done(struct vmheap_block_cursor *c,
				     struct vmheap_record *rec,
				     const uint8_t *p)
{
	c->prev_id = rec->u.object.id;
	c->records_left--;
	c->pos = p;
	rec->type = VMHEAP_RECORD_OBJECT;
}

/*
 * Elements 6 and 7 of an object record (format 1.1), at p, right after the
 * references: the names (nil, or one integer per reference) and the site.
 * With `shallow` the names are checked but not stored.  Returns the
 * position after them, or NULL to leave the record to the checked decoder
 * (nil names inside the array, string ids in uint 64 form and anything
 * malformed go that way, so both decoders report faults alike).
 */
static inline __attribute__((always_inline)) const uint8_t *
vmheap_block_cursor_fast_object_tail(struct vmheap_block_cursor *c,
				     struct vmheap_record *rec,
				     const uint8_t *p, unsigned elems,
				     uint32_t n, int shallow)
{
	uint32_t m;

	rec->u.object.names = NULL;
	rec->u.object.site = 0;
	if (__builtin_expect(elems == 6, 1))
		return p;
	if ((size_t)(c->end - p) <
	    3 + ((size_t)n + 1) * MPC_MAX_INT_BYTES)
		return NULL;
	if (p[0] == 0xc0) {
		p++;
	} else {
		if ((p[0] & 0xf0) == 0x90) {
			m = p[0] & 0x0f;
			p++;
		} else if (p[0] == 0xdc) {
			m = mpc_be16(p + 1);
			p += 3;
		} else {
			return NULL;
		}
		if (m != n || (!shallow && n > c->names_cap))
			return NULL;
		for (uint32_t i = 0; i < n; i++) {
			uint64_t v;
			if (p[0] == 0xcf || mpc_int_unchecked(&p, &v))
				return NULL;
			if (!shallow)
				c->names[i] = (int64_t)v;
		}
		if (!shallow && n)
			rec->u.object.names = c->names;
	}
	if (elems == 8 && mpc_uint_unchecked(&p, &rec->u.object.site))
		return NULL;
	return p;
}

/* The object record with its references decoded into the cursor's
 * buffer (vmheap_block_cursor_next, vmheap_reader_next). */
static inline __attribute__((always_inline)) int
vmheap_block_cursor_fast_object(struct vmheap_block_cursor *c,
				struct vmheap_record *rec)
{
	const uint8_t *p;
	uint64_t v, id, *refs, *stop;
	uint32_t n;
	unsigned elems;

	p = vmheap_block_cursor_fast_object_head(c, rec, &n, &elems);
	/* No call here (the checked decoder grows the reference buffer), so
	 * that this path needs no callee-saved registers. */
	if (!p || (size_t)(c->end - p) < (size_t)n * MPC_MAX_INT_BYTES ||
	    n > c->refs_cap)
		return 0;
	id = rec->u.object.id;
	refs = c->refs;
	rec->u.object.refs = refs;
	rec->u.object.nrefs = n;
	/* refs is NULL until the buffer first grows: no pointer arithmetic
	 * on it then (UBSan: zero offset applied to a null pointer). */
	for (stop = n ? refs + n : refs; refs != stop; refs++) {
		if (mpc_int_unchecked(&p, &v))
			return 0;
		*refs = id + v;
	}
	p = vmheap_block_cursor_fast_object_tail(c, rec, p, elems, n, 0);
	if (!p)
		return 0;
	vmheap_block_cursor_fast_object_done(c, rec, p);
	return 1;
}

/*
 * The object record with its references only counted and stepped over
 * (vmheap_block_cursor_next_shallow, the census): each one's length comes
 * from its type byte through mpc_int_form, with no branch on the
 * encoding.  A type byte that is no integer sends the record to the
 * checked decoder, so a damaged reference is reported the same way in
 * both modes.  rec->u.object.refs is NULL.
 */
static inline __attribute__((always_inline)) int
vmheap_block_cursor_fast_object_shallow(struct vmheap_block_cursor *c,
					struct vmheap_record *rec)
{
	const uint8_t *p;
	unsigned bad = 0, elems;
	uint32_t n;

	p = vmheap_block_cursor_fast_object_head(c, rec, &n, &elems);
	if (!p || (size_t)(c->end - p) < (size_t)n * MPC_MAX_INT_BYTES ||
	    n > VMHEAP_MAX_REFS_PER_RECORD)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		unsigned len = mpc_int_form[p[0]].advance;
		bad |= len == 0;
		p += len;
	}
	if (bad)
		return 0;
	p = vmheap_block_cursor_fast_object_tail(c, rec, p, elems, n, 1);
	if (!p)
		return 0;
	rec->u.object.refs = NULL;
	rec->u.object.nrefs = n;
	vmheap_block_cursor_fast_object_done(c, rec, p);
	return 1;
}

#endif /* VMHEAP_BLOCK_CURSOR_INTERNAL_H */
