/*
 * mpcursor.c - the out-of-line parts of the typed MessagePack cursor:
 * skipping a value of any type (for unknown records, fields and keys).
 */
#include "mpcursor-internal.h"

#define SIGNED(advance, offset, shift)                                         \
	{                                                                      \
		~0ull, advance, offset, shift                                  \
	}
#define UNSIGNED(advance, offset, shift)                                       \
	{                                                                      \
		~0ull >> (shift), advance, offset, shift                       \
	}

const struct mpc_int_form mpc_int_form[256] = {
    [0x00 ... 0x7f] = SIGNED(1, 0, 56), /* positive fixint */
    [0xe0 ... 0xff] = SIGNED(1, 0, 56), /* negative fixint */
    [0xcc] = UNSIGNED(2, 1, 56),	/* uint 8 */
    [0xcd] = UNSIGNED(3, 1, 48),	/* uint 16 */
    [0xce] = UNSIGNED(5, 1, 32),	/* uint 32 */
    [0xcf] = UNSIGNED(9, 1, 0),		/* uint 64 */
    [0xd0] = SIGNED(2, 1, 56),		/* int 8 */
    [0xd1] = SIGNED(3, 1, 48),		/* int 16 */
    [0xd2] = SIGNED(5, 1, 32),		/* int 32 */
    [0xd3] = SIGNED(9, 1, 0),		/* int 64 */
};

static int skip_one(struct mpc *c, int depth);

static int skip_n(struct mpc *c, uint64_t n, int depth)
{
	/* Every value takes at least one byte: fail fast on absurd counts. */
	if (n > (uint64_t)(c->end - c->p))
		return MPC_EEND;
	while (n--) {
		int rc = skip_one(c, depth);
		if (rc)
			return rc;
	}
	return MPC_OK;
}

static int skip_bytes(struct mpc *c, size_t hdr, uint64_t n)
{
	size_t left = (size_t)(c->end - c->p);

	if (left < hdr || left - hdr < n)
		return MPC_EEND;
	c->p += hdr + n;
	return MPC_OK;
}

static int need(const struct mpc *c, size_t n)
{
	return (size_t)(c->end - c->p) >= n;
}

static int skip_one(struct mpc *c, int depth)
{
	const uint8_t *p = c->p;
	uint8_t b;
	uint64_t n;
	int rc;

	if (!need(c, 1))
		return MPC_EEND;
	b = p[0];
	if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
		c->p++;
		return MPC_OK;
	}
	if ((b & 0xe0) == 0xa0)
		return skip_bytes(c, 1, b & 0x1f);
	if ((b & 0xf0) == 0x90 || (b & 0xf0) == 0x80) {
		if (depth >= MPC_MAX_DEPTH)
			return MPC_EDEPTH;
		n = b & 0x0f;
		if ((b & 0xf0) == 0x80)
			n *= 2;
		c->p++;
		rc = skip_n(c, n, depth + 1);
		if (rc)
			c->p = p;
		return rc;
	}
	switch (b) {
	case 0xc4: /* bin 8 */
	case 0xd9: /* str 8 */
		if (!need(c, 2))
			return MPC_EEND;
		return skip_bytes(c, 2, p[1]);
	case 0xc5: /* bin 16 */
	case 0xda: /* str 16 */
		if (!need(c, 3))
			return MPC_EEND;
		return skip_bytes(c, 3, mpc_be16(p + 1));
	case 0xc6: /* bin 32 */
	case 0xdb: /* str 32 */
		if (!need(c, 5))
			return MPC_EEND;
		return skip_bytes(c, 5, vmheap_get_be32(p + 1));
	case 0xc7: /* ext 8 */
		if (!need(c, 2))
			return MPC_EEND;
		return skip_bytes(c, 3, p[1]);
	case 0xc8: /* ext 16 */
		if (!need(c, 3))
			return MPC_EEND;
		return skip_bytes(c, 4, mpc_be16(p + 1));
	case 0xc9: /* ext 32 */
		if (!need(c, 5))
			return MPC_EEND;
		return skip_bytes(c, 6, vmheap_get_be32(p + 1));
	case 0xca: /* float 32 */
		return skip_bytes(c, 1, 4);
	case 0xcb: /* float 64 */
		return skip_bytes(c, 1, 8);
	case 0xcc: /* uint 8 */
	case 0xd0: /* int 8 */
		return skip_bytes(c, 1, 1);
	case 0xcd:
	case 0xd1:
		return skip_bytes(c, 1, 2);
	case 0xce:
	case 0xd2:
		return skip_bytes(c, 1, 4);
	case 0xcf:
	case 0xd3:
		return skip_bytes(c, 1, 8);
	case 0xd4: /* fixext 1, 2, 4, 8, 16 */
		return skip_bytes(c, 2, 1);
	case 0xd5:
		return skip_bytes(c, 2, 2);
	case 0xd6:
		return skip_bytes(c, 2, 4);
	case 0xd7:
		return skip_bytes(c, 2, 8);
	case 0xd8:
		return skip_bytes(c, 2, 16);
	case 0xdc: /* array 16 */
	case 0xdd: /* array 32 */
	case 0xde: /* map 16 */
	case 0xdf: /* map 32 */
		if (depth >= MPC_MAX_DEPTH)
			return MPC_EDEPTH;
		if (b == 0xdc || b == 0xde) {
			if (!need(c, 3))
				return MPC_EEND;
			n = mpc_be16(p + 1);
			c->p += 3;
		} else {
			if (!need(c, 5))
				return MPC_EEND;
			n = vmheap_get_be32(p + 1);
			c->p += 5;
		}
		if (b >= 0xde)
			n *= 2;
		rc = skip_n(c, n, depth + 1);
		if (rc)
			c->p = p;
		return rc;
	default: /* 0xc1 is never used */
		return MPC_ETYPE;
	}
}

int mpc_skip(struct mpc *c)
{
	return skip_one(c, 0);
}

const char *mpc_strerror(int rc)
{
	switch (rc) {
	case MPC_OK:
		return "no error";
	case MPC_EEND:
		return "value runs past the end of the section";
	case MPC_ETYPE:
		return "value has the wrong MessagePack type";
	case MPC_EDEPTH:
		return "values nest too deeply";
	default:
		return "unknown decoding error";
	}
}
