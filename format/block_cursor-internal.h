/*
 * block_cursor-internal.h - the block cursor's hot path, shared by
 * vmheap_block_cursor_next() and vmheap_reader_next() so that the common
 * record (an object) decodes without a function call.
 */
#ifndef VMHEAP_BLOCK_CURSOR_INTERNAL_H
#define VMHEAP_BLOCK_CURSOR_INTERNAL_H

#include "vmheap.h"
#include "mpcursor-internal.h"

/*
 * The hot path: an object record of exactly six elements, far enough from
 * the block's end that no field needs a bounds check, with integers in
 * the encodings msgpack-c produces.  Returns 1 with *rec filled, or 0 to
 * let the checked decoder handle the record (nothing was consumed).
 */
static inline __attribute__((always_inline)) int
vmheap_block_cursor_fast_object(struct vmheap_block_cursor *c,
				struct vmheap_record *rec)
{
	const uint8_t *p = c->pos;
	uint64_t v, id, *refs, *stop;
	uint32_t n;

	/* fixarray(6), tag 3, four ints, array header: at most 43 bytes.
	 * Fields go straight into *rec as they are decoded (few values stay
	 * live, so the caller's registers suffice); *rec is ours to scribble
	 * on even if the checked decoder ends up handling the record. */
	if (c->end - p < 48 ||
	    (p[0] | (unsigned)p[1] << 8) !=
		(0x96 | VMHEAP_RECORD_OBJECT << 8) ||
	    !c->records_left)
		return 0;
	rec->offset = c->base_offset + (uint64_t)(p - c->data);
	p += 2;
	if (mpc_int_small_unchecked(&p, &v))
		return 0;
	id = c->prev_id + v;
	rec->u.object.id = id;
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
			return 0;
		rec->u.object.kind = (uint32_t)v;
	}
	if ((p[0] & 0xf0) == 0x90) {
		n = p[0] & 0x0f;
		p++;
	} else if (p[0] == 0xdc) {
		n = mpc_be16(p + 1);
		p += 3;
	} else {
		return 0;
	}
	/* No call here (the checked decoder grows the reference buffer), so
	 * that this path needs no callee-saved registers. */
	if ((size_t)(c->end - p) < (size_t)n * MPC_MAX_INT_BYTES ||
	    n > c->refs_cap)
		return 0;
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
	c->prev_id = id;
	c->records_left--;
	c->pos = p;
	rec->type = VMHEAP_RECORD_OBJECT;
	return 1;
}

#endif /* VMHEAP_BLOCK_CURSOR_INTERNAL_H */
