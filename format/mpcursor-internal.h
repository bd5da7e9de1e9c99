/*
 * mpcursor-internal.h - a small typed MessagePack decoder for the reader.
 *
 * A cursor walks a byte range and reads one value of an expected type at a
 * time (array header, integer, string).  It never allocates and never
 * reads past `end`.  The reader uses it instead of msgpack-c's generic
 * unpacker because the generic unpacker builds an object tree in a zone
 * for every record, which bench/format_bench.c measures as the dominant
 * cost of a full decode, and because it allocates a declared array or map
 * size before checking that the bytes exist (a damaged length could ask
 * for gigabytes).
 *
 * Every function returns MPC_OK, MPC_EEND (the value runs past `end`) or
 * MPC_ETYPE (the next value has another type); on error the cursor has
 * not moved.
 */
#ifndef VMHEAP_MPCURSOR_INTERNAL_H
#define VMHEAP_MPCURSOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format-internal.h"

enum { MPC_OK = 0, MPC_EEND = -1, MPC_ETYPE = -2, MPC_EDEPTH = -3 };

struct mpc {
	const uint8_t *p, *end;
};

static inline uint16_t mpc_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

/* Read an array header; *n is its element count. */
static inline int mpc_array(struct mpc *c, uint32_t *n)
{
	const uint8_t *p = c->p;
	size_t left = (size_t)(c->end - p);

	if (!left)
		return MPC_EEND;
	if ((p[0] & 0xf0) == 0x90) {
		*n = p[0] & 0x0f;
		c->p = p + 1;
		return MPC_OK;
	}
	if (p[0] == 0xdc) {
		if (left < 3)
			return MPC_EEND;
		*n = mpc_be16(p + 1);
		c->p = p + 3;
		return MPC_OK;
	}
	if (p[0] == 0xdd) {
		if (left < 5)
			return MPC_EEND;
		*n = vmheap_get_be32(p + 1);
		c->p = p + 5;
		return MPC_OK;
	}
	return MPC_ETYPE;
}

/* Read a map header; *n is its key/value pair count. */
static inline int mpc_map(struct mpc *c, uint32_t *n)
{
	const uint8_t *p = c->p;
	size_t left = (size_t)(c->end - p);

	if (!left)
		return MPC_EEND;
	if ((p[0] & 0xf0) == 0x80) {
		*n = p[0] & 0x0f;
		c->p = p + 1;
		return MPC_OK;
	}
	if (p[0] == 0xde) {
		if (left < 3)
			return MPC_EEND;
		*n = mpc_be16(p + 1);
		c->p = p + 3;
		return MPC_OK;
	}
	if (p[0] == 0xdf) {
		if (left < 5)
			return MPC_EEND;
		*n = vmheap_get_be32(p + 1);
		c->p = p + 5;
		return MPC_OK;
	}
	return MPC_ETYPE;
}

/*
 * Read any integer.  *bits receives its value as 64-bit two's complement
 * and *negative says whether it is below zero (a uint64 above INT64_MAX
 * is not negative).
 */
static inline int mpc_int_bits(struct mpc *c, uint64_t *bits, int *negative)
{
	const uint8_t *p = c->p;
	size_t left = (size_t)(c->end - p);
	uint8_t b;

	if (!left)
		return MPC_EEND;
	b = p[0];
	if (b <= 0x7f) {
		*bits = b;
		*negative = 0;
		c->p = p + 1;
		return MPC_OK;
	}
	if (b >= 0xe0) {
		*bits = (uint64_t)(int64_t)(int8_t)b;
		*negative = 1;
		c->p = p + 1;
		return MPC_OK;
	}
	switch (b) {
	case 0xcc: /* uint 8 */
		if (left < 2)
			return MPC_EEND;
		*bits = p[1];
		*negative = 0;
		c->p = p + 2;
		return MPC_OK;
	case 0xcd: /* uint 16 */
		if (left < 3)
			return MPC_EEND;
		*bits = mpc_be16(p + 1);
		*negative = 0;
		c->p = p + 3;
		return MPC_OK;
	case 0xce: /* uint 32 */
		if (left < 5)
			return MPC_EEND;
		*bits = vmheap_get_be32(p + 1);
		*negative = 0;
		c->p = p + 5;
		return MPC_OK;
	case 0xcf: /* uint 64 */
		if (left < 9)
			return MPC_EEND;
		*bits = vmheap_get_be64(p + 1);
		*negative = 0;
		c->p = p + 9;
		return MPC_OK;
	case 0xd0: /* int 8 */
		if (left < 2)
			return MPC_EEND;
		*bits = (uint64_t)(int64_t)(int8_t)p[1];
		break;
	case 0xd1: /* int 16 */
		if (left < 3)
			return MPC_EEND;
		*bits = (uint64_t)(int64_t)(int16_t)mpc_be16(p + 1);
		break;
	case 0xd2: /* int 32 */
		if (left < 5)
			return MPC_EEND;
		*bits = (uint64_t)(int64_t)(int32_t)vmheap_get_be32(p + 1);
		break;
	case 0xd3: /* int 64 */
		if (left < 9)
			return MPC_EEND;
		*bits = vmheap_get_be64(p + 1);
		break;
	default:
		return MPC_ETYPE;
	}
	*negative = (*bits >> 63) != 0;
	c->p = p + 1 + (1u << (b - 0xd0));
	return MPC_OK;
}

/* Read a non-negative integer (any MessagePack int encoding). */
static inline int mpc_uint(struct mpc *c, uint64_t *v)
{
	struct mpc save = *c;
	int neg, rc = mpc_int_bits(c, v, &neg);

	if (rc)
		return rc;
	if (neg) {
		*c = save;
		return MPC_ETYPE;
	}
	return MPC_OK;
}

/* Read any integer as 64-bit two's complement (for wrapping deltas). */
static inline int mpc_int_wrap(struct mpc *c, uint64_t *v)
{
	int neg;

	return mpc_int_bits(c, v, &neg);
}

/* Read a str value; *s points into the buffer (not NUL-terminated). */
static inline int mpc_str(struct mpc *c, const char **s, uint32_t *len)
{
	const uint8_t *p = c->p;
	size_t left = (size_t)(c->end - p);
	uint32_t n, hdr;

	if (!left)
		return MPC_EEND;
	if ((p[0] & 0xe0) == 0xa0) {
		n = p[0] & 0x1f;
		hdr = 1;
	} else if (p[0] == 0xd9) {
		if (left < 2)
			return MPC_EEND;
		n = p[1];
		hdr = 2;
	} else if (p[0] == 0xda) {
		if (left < 3)
			return MPC_EEND;
		n = mpc_be16(p + 1);
		hdr = 3;
	} else if (p[0] == 0xdb) {
		if (left < 5)
			return MPC_EEND;
		n = vmheap_get_be32(p + 1);
		hdr = 5;
	} else {
		return MPC_ETYPE;
	}
	if (left - hdr < n)
		return MPC_EEND;
	*s = (const char *)p + hdr;
	*len = n;
	c->p = p + hdr + n;
	return MPC_OK;
}

/*
 * Unchecked fast paths for the record decoder's hot loop.  The caller
 * guarantees that at least MPC_MAX_INT_BYTES bytes are readable at *pp.
 * They return 0 and advance *pp, or -1 (nothing consumed) for any value
 * they do not handle, after which the caller takes the checked path.
 */
#define MPC_MAX_INT_BYTES 9

static inline __attribute__((always_inline)) uint64_t
mpc_load_be64(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
	return __builtin_bswap64(w);
}

/*
 * Any integer, as 64-bit two's complement, decoded without branching on
 * its type: the reference deltas of a heap come in every size, so a
 * switch would mispredict, and the position of the next value must be
 * known as early as possible (each value's offset depends on the last).
 * The length follows from the type byte: a fixint is the byte itself;
 * 0xcc..0xcf (uint) and 0xd0..0xd3 (int) carry 1 << (type & 3) bytes.
 */
/*
 * mpc_int_form[type byte] describes each integer encoding so that one is
 * decoded without branching on its type: load 8 bytes big-endian at
 * `offset` past the type byte (0 for a fixint, which is the type byte
 * itself), shift them right arithmetically by `shift`, keep `mask` (all
 * ones for signed forms; for unsigned forms it clears the sign
 * extension), and advance by `advance` bytes.  advance 0: not an integer.
 */
struct mpc_int_form {
	uint64_t mask;
	uint8_t advance, offset, shift;
};
extern const struct mpc_int_form mpc_int_form[256];

static inline __attribute__((always_inline)) int
mpc_int_unchecked(const uint8_t **pp, uint64_t *v)
{
	const uint8_t *p = *pp;
	const struct mpc_int_form *f = &mpc_int_form[p[0]];

	if (__builtin_expect(!f->advance, 0))
		return -1;
	*v = (uint64_t)((int64_t)mpc_load_be64(p + f->offset) >> f->shift) &
	     f->mask;
	*pp = p + f->advance;
	return 0;
}

/* The same, with a predicted shortcut for positive fixints: for fields
 * that are nearly always small (class ids, sizes, kinds, id deltas of
 * neighbouring objects) the branch lets the CPU run ahead. */
static inline __attribute__((always_inline)) int
mpc_int_small_unchecked(const uint8_t **pp, uint64_t *v)
{
	const uint8_t *p = *pp;

	if (__builtin_expect(p[0] <= 0x7f, 1)) {
		*v = p[0];
		*pp = p + 1;
		return 0;
	}
	return mpc_int_unchecked(pp, v);
}

/* A non-negative integer in any encoding. */
static inline __attribute__((always_inline)) int
mpc_uint_unchecked(const uint8_t **pp, uint64_t *v)
{
	const uint8_t *save = *pp;

	if (mpc_int_small_unchecked(pp, v))
		return -1;
	/* Negative values, and huge ones in int 64 form, go the slow way. */
	if (__builtin_expect(save[0] >= 0xd0 && (int64_t)*v < 0, 0)) {
		*pp = save;
		return -1;
	}
	return 0;
}

/* Deepest nesting mpc_skip() follows before giving up with MPC_EDEPTH. */
#define MPC_MAX_DEPTH 32

/* Skip one value of any type, nested arrays and maps included. */
int mpc_skip(struct mpc *c);

/* Describe an MPC_E... code for error messages. */
const char *mpc_strerror(int rc);

#endif /* VMHEAP_MPCURSOR_INTERNAL_H */
