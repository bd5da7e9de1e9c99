/*
 * mpwriter-internal.h - a small typed MessagePack encoder for the writer.
 *
 * The mirror of mpcursor-internal.h: each function stores one value of a
 * known type at `p` and returns the position after it.  The caller has
 * reserved room for the worst case beforehand (MPW_INT_MAX bytes per
 * integer, MPW_ARRAY_MAX per array header), so nothing here checks bounds
 * or can fail.
 *
 * Every value is stored in the shortest form, choosing exactly as
 * msgpack-c's msgpack_pack_int64 / msgpack_pack_uint64 /
 * msgpack_pack_array do, so a record encoded here is byte for byte the
 * record msgpack-c's packer produces (spec/format_test.c checks this at
 * every encoding boundary).  The writer uses it for object and
 * more-references records only: there the packer's per-value append
 * callback and small memcpy were a third of a dump (bench/RESULTS.md).
 */
#ifndef VMHEAP_MPWRITER_INTERNAL_H
#define VMHEAP_MPWRITER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

enum {
	MPW_INT_MAX = 9,   /* type byte + 8 bytes */
	MPW_ARRAY_MAX = 5, /* type byte + 4-byte count */
};

static inline uint8_t *mpw_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static inline uint8_t *mpw_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static inline uint8_t *mpw_be64(uint8_t *p, uint64_t v)
{
	mpw_be32(p, (uint32_t)(v >> 32));
	return mpw_be32(p + 4, (uint32_t)v);
}

/* An unsigned integer: positive fixint, uint 8, 16, 32 or 64. */
static inline uint8_t *mpw_uint(uint8_t *p, uint64_t v)
{
	if (v < 0x80) {
		*p = (uint8_t)v;
		return p + 1;
	}
	if (v <= 0xff) {
		p[0] = 0xcc;
		p[1] = (uint8_t)v;
		return p + 2;
	}
	if (v <= 0xffff) {
		*p = 0xcd;
		return mpw_be16(p + 1, (uint16_t)v);
	}
	if (v <= 0xffffffffu) {
		*p = 0xce;
		return mpw_be32(p + 1, (uint32_t)v);
	}
	*p = 0xcf;
	return mpw_be64(p + 1, v);
}

/* A signed integer: non-negative values as mpw_uint (as msgpack-c does),
 * negative ones as negative fixint, int 8, 16, 32 or 64. */
static inline uint8_t *mpw_int(uint8_t *p, int64_t v)
{
	if (v >= 0)
		return mpw_uint(p, (uint64_t)v);
	if (v >= -32) {
		*p = (uint8_t)v;
		return p + 1;
	}
	if (v >= INT8_MIN) {
		p[0] = 0xd0;
		p[1] = (uint8_t)v;
		return p + 2;
	}
	if (v >= INT16_MIN) {
		*p = 0xd1;
		return mpw_be16(p + 1, (uint16_t)v);
	}
	if (v >= INT32_MIN) {
		*p = 0xd2;
		return mpw_be32(p + 1, (uint32_t)v);
	}
	*p = 0xd3;
	return mpw_be64(p + 1, (uint64_t)v);
}

/* An array header for n elements: fixarray, array 16 or array 32. */
static inline uint8_t *mpw_array(uint8_t *p, uint32_t n)
{
	if (n < 16) {
		*p = (uint8_t)(0x90 | n);
		return p + 1;
	}
	if (n <= 0xffff) {
		*p = 0xdc;
		return mpw_be16(p + 1, (uint16_t)n);
	}
	*p = 0xdd;
	return mpw_be32(p + 1, n);
}

#endif
