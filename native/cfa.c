/*
 * cfa.c - the unwind rule of one code address, from its frame
 * description in .eh_frame (x86-64): where the canonical frame address
 * (CFA) is, and where the caller's rbp was saved.  The CIE's and the
 * FDE's CFA programs run up to the address; what they say of the other
 * registers is skipped.  Every byte read lies inside the bounds the
 * caller gives (fuzz/cfa_fuzz.c feeds it arbitrary bytes).
 */
#include <string.h>

#include "native-internal.h"

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

struct cursor {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}

static int64_t sleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;
	while (c->p < c->end) {
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	c->bad = 1;
	return 0;
}

static uint64_t fixed(struct cursor *c, unsigned n)
{
	uint64_t v = 0;
	if ((size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, n); /* little-endian */
	c->p += n;
	return v;
}

/* Skip a pointer of DW_EH_PE encoding enc; -1 for one we do not know. */
static int skip_encoded(struct cursor *c, uint8_t enc)
{
	if (enc == 0xff) /* DW_EH_PE_omit */
		return 0;
	switch (enc & 0x0f) {
	case 0x00: fixed(c, 8); break;	/* absptr */
	case 0x01: uleb(c); break;	/* uleb128 */
	case 0x02: case 0x0a: fixed(c, 2); break;
	case 0x03: case 0x0b: fixed(c, 4); break;
	case 0x04: case 0x0c: fixed(c, 8); break;
	case 0x09: sleb(c); break;	/* sleb128 */
	default: return -1;
	}
	return c->bad ? -1 : 0;
}

/* The register rules this walker tracks, as the CFA program runs. */
struct state {
	int64_t cfa_off;
	unsigned cfa_reg;
	int64_t rbp_off; /* 0: same value */
	int bad;         /* something we do not model */
	int outermost;   /* the return address is undefined: the end */
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	int has_aug_data;
	struct cursor insns;
};

/* Parse the CIE at p (its length word), inside [lo, hi); 0 when we can
 * use it. */
static int read_cie(const uint8_t *p, uintptr_t lo, uintptr_t hi,
		    struct cie *cie)
{
	uint32_t len;
	if ((uintptr_t)p < lo || (uintptr_t)p > hi || hi - (uintptr_t)p < 8)
		return -1;
	memcpy(&len, p, 4);
	if (len < 4 || len == 0xffffffffu || len > hi - (uintptr_t)p - 4)
		return -1;
	struct cursor c = {p + 4, p + 4 + len, 0};
	if (fixed(&c, 4) != 0) /* CIE id */
		return -1;
	unsigned version = (unsigned)fixed(&c, 1);
	if (version != 1 && version != 3)
		return -1;
	const char *aug = (const char *)c.p;
	size_t alen = strnlen(aug, (size_t)(c.end - c.p));
	if (alen == (size_t)(c.end - c.p))
		return -1;
	c.p += alen + 1;
	cie->code_align = uleb(&c);
	cie->data_align = sleb(&c);
	uint64_t ra = version == 1 ? fixed(&c, 1) : uleb(&c);
	if (ra != REG_RA)
		return -1;
	cie->fde_enc = 0; /* absptr */
	cie->has_aug_data = 0;
	if (aug[0] == 'z') {
		cie->has_aug_data = 1;
		uint64_t n = uleb(&c);
		const uint8_t *after = c.p + n;
		if (c.bad || after > c.end)
			return -1;
		for (const char *a = aug + 1; *a; a++) {
			if (*a == 'R') {
				cie->fde_enc = (uint8_t)fixed(&c, 1);
			} else if (*a == 'P') {
				uint8_t enc = (uint8_t)fixed(&c, 1);
				if (skip_encoded(&c, enc) != 0)
					return -1;
			} else if (*a == 'L') {
				fixed(&c, 1);
			} else { /* 'S' (a signal frame) and others */
				return -1;
			}
		}
		c.p = after;
	} else if (aug[0] != '\0') {
		return -1;
	}
	if (c.bad)
		return -1;
	cie->insns = c;
	return 0;
}

#define STACK_STATES 8

/* v times the data alignment factor, wrapping (the table's numbers are
 * input: a product past 64 bits is a wrong rule, never undefined). */
static int64_t scaled(uint64_t v, int64_t factor)
{
	return (int64_t)(v * (uint64_t)factor);
}

/* Run the CFA program in c, from location *loc, while *loc <= pc. */
static void run(struct cursor *c, const struct cie *cie, uint64_t *loc,
		uint64_t pc, struct state *s, const struct state *initial,
		struct state *saved, unsigned *nsaved)
{
	while (c->p < c->end && !c->bad && !s->bad) {
		uint8_t op = *c->p++;
		uint64_t reg, delta = 0;
		int64_t off;
		switch (op >> 6) {
		case 1: /* advance_loc */
			delta = (op & 0x3f) * cie->code_align;
			goto advance;
		case 2: /* offset */
			off = scaled(uleb(c), cie->data_align);
			reg = op & 0x3f;
			goto offset;
		case 3: /* restore */
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case 0x00: /* nop */
			continue;
		case 0x02:
			delta = fixed(c, 1) * cie->code_align;
			goto advance;
		case 0x03:
			delta = fixed(c, 2) * cie->code_align;
			goto advance;
		case 0x04:
			delta = fixed(c, 4) * cie->code_align;
			goto advance;
		case 0x05: /* offset_extended */
			reg = uleb(c);
			off = scaled(uleb(c), cie->data_align);
			goto offset;
		case 0x06: /* restore_extended */
			reg = uleb(c);
			goto restore;
		case 0x07: /* undefined */
			reg = uleb(c);
			if (reg == REG_RA) /* _start, clone: the last frame */
				s->outermost = 1;
			else if (reg == REG_RBP)
				s->bad = 1;
			continue;
		case 0x08: /* same_value */
			reg = uleb(c);
			if (reg == REG_RBP)
				s->rbp_off = 0;
			else if (reg == REG_RA)
				s->bad = 1;
			continue;
		case 0x09: /* register */
			reg = uleb(c);
			uleb(c);
			if (reg == REG_RBP || reg == REG_RA)
				s->bad = 1;
			continue;
		case 0x0a: /* remember_state */
			if (*nsaved == STACK_STATES)
				s->bad = 1;
			else
				saved[(*nsaved)++] = *s;
			continue;
		case 0x0b: /* restore_state */
			if (*nsaved == 0)
				s->bad = 1;
			else
				*s = saved[--(*nsaved)];
			continue;
		case 0x0c: /* def_cfa */
			s->cfa_reg = (unsigned)uleb(c);
			s->cfa_off = (int64_t)uleb(c);
			continue;
		case 0x0d: /* def_cfa_register */
			s->cfa_reg = (unsigned)uleb(c);
			continue;
		case 0x0e: /* def_cfa_offset */
			s->cfa_off = (int64_t)uleb(c);
			continue;
		case 0x11: /* offset_extended_sf */
			reg = uleb(c);
			off = scaled((uint64_t)sleb(c), cie->data_align);
			goto offset;
		case 0x12: /* def_cfa_sf */
			s->cfa_reg = (unsigned)uleb(c);
			s->cfa_off = scaled((uint64_t)sleb(c), cie->data_align);
			continue;
		case 0x13: /* def_cfa_offset_sf */
			s->cfa_off = scaled((uint64_t)sleb(c), cie->data_align);
			continue;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = uleb(c);
			delta = uleb(c);
			if ((uint64_t)(c->end - c->p) < delta)
				c->bad = 1;
			else
				c->p += delta;
			if (reg == REG_RBP || reg == REG_RA)
				s->bad = 1;
			continue;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = uleb(c);
			if (op == 0x14)
				uleb(c);
			else
				sleb(c);
			if (reg == REG_RBP || reg == REG_RA)
				s->bad = 1;
			continue;
		case 0x2e: /* GNU_args_size */
			uleb(c);
			continue;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = uleb(c);
			off = scaled(-uleb(c), cie->data_align);
			goto offset;
		default: /* def_cfa_expression, set_loc, vendor ops */
			s->bad = 1;
			continue;
		}
	advance:
		if (*loc + delta > pc)
			return;
		*loc += delta;
		continue;
	offset:
		if (reg == REG_RBP)
			s->rbp_off = off;
		else if (reg == REG_RA && off != -8)
			s->bad = 1;
		continue;
	restore:
		if (reg == REG_RBP)
			s->rbp_off = initial->rbp_off;
		continue;
	}
}

int native_cfa_rule(uintptr_t lo, uintptr_t hi, const uint8_t *fde,
		    uint64_t func, uint64_t pc, struct native_cfa_rule *out)
{
	uint32_t len;
	int32_t cie_ptr;
	if ((uintptr_t)fde < lo || (uintptr_t)fde > hi ||
	    hi - (uintptr_t)fde < 8)
		return NATIVE_CFA_UNSUPPORTED;
	memcpy(&len, fde, 4);
	memcpy(&cie_ptr, fde + 4, 4);
	if (len < 4 || len == 0xffffffffu ||
	    len > hi - (uintptr_t)fde - 4 || cie_ptr <= 0 ||
	    (uintptr_t)cie_ptr > (uintptr_t)fde + 4 - lo)
		return NATIVE_CFA_UNSUPPORTED;
	struct cie cie;
	if (read_cie(fde + 4 - cie_ptr, lo, hi, &cie) != 0)
		return NATIVE_CFA_UNSUPPORTED;
	struct cursor c = {fde + 8, fde + 4 + len, 0};
	/* pc_begin and pc_range (func is pc_begin), then the augmentation
	 * data. */
	if (skip_encoded(&c, cie.fde_enc) != 0 ||
	    skip_encoded(&c, cie.fde_enc & 0x0f) != 0)
		return NATIVE_CFA_UNSUPPORTED;
	if (cie.has_aug_data) {
		uint64_t n = uleb(&c);
		if (c.bad || n > (uint64_t)(c.end - c.p))
			return NATIVE_CFA_UNSUPPORTED;
		c.p += n;
	}
	struct state s = {0, REG_RSP, 0, 0, 0}, saved[STACK_STATES];
	unsigned nsaved = 0;
	uint64_t loc = func;
	struct cursor ci = cie.insns;
	run(&ci, &cie, &loc, UINT64_MAX, &s, &s, saved, &nsaved);
	if (ci.bad || s.bad)
		return NATIVE_CFA_UNSUPPORTED;
	struct state initial = s;
	nsaved = 0;
	run(&c, &cie, &loc, pc, &s, &initial, saved, &nsaved);
	if (c.bad || s.bad)
		return NATIVE_CFA_UNSUPPORTED;
	if (s.outermost)
		return NATIVE_CFA_END;
	if (s.cfa_reg != REG_RSP && s.cfa_reg != REG_RBP)
		return NATIVE_CFA_UNSUPPORTED;
	out->cfa_rbp = s.cfa_reg == REG_RBP;
	out->cfa_off = s.cfa_off;
	out->rbp_off = s.rbp_off;
	return NATIVE_CFA_OK;
}
