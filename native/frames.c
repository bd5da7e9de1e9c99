/*
 * frames.c - the tracker's own stack walker (x86-64): each frame's
 * canonical frame address (CFA) by the rule that the code's unwind
 * table (.eh_frame) gives for its return address, kept per thread.
 *
 * A rule says where the CFA is (rsp or rbp plus an offset) and where the
 * caller's rbp was saved (an offset from the CFA, or nowhere: rbp is
 * unchanged); the return address is at CFA - 8, as the x86-64 ABI has
 * it.  A rule is found once per return address and thread: libgcc's
 * _Unwind_Find_FDE finds the frame description (through glibc's
 * _dl_find_object: no lock, no system call) and the CFA program of its
 * CIE and FDE runs up to the call.  What this walker does not model (a
 * CFA or rbp given by a DWARF expression, the return address elsewhere
 * than CFA - 8, a signal frame) stops the walk with FRAMES_UNSUPPORTED,
 * and the caller unwinds that stack with libgcc's full unwinder instead;
 * code without unwind information ends the stack, as for libgcc.
 *
 * Every read of the stack stays inside the thread's stack bounds, and
 * each CFA must lie above the last: a wrong rule cannot fault, and
 * cannot loop.  The rules are forgotten after each dlclose (the tracker
 * interposes it): code may be unloaded and other code loaded at its
 * addresses.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "native-internal.h"

/* libgcc's, not in a public header: the FDE covering pc (bases->func is
 * the function's start), or NULL. */
struct eh_bases {
	void *tbase, *dbase, *func;
};
typedef const void *(*find_fde_fn)(void *pc, struct eh_bases *bases);
static find_fde_fn find_fde;

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

enum { RULE_EMPTY, RULE_OK, RULE_UNSUPPORTED, RULE_NONE };

struct rule {
	uint64_t ip;      /* the return address it is for */
	uint32_t gen;     /* modules_gen when it was found */
	uint8_t kind;     /* RULE_* */
	uint8_t cfa_rbp;  /* CFA = (cfa_rbp ? rbp : rsp) + cfa_off */
	int16_t cfa_off;
	int16_t rbp_off;  /* caller's rbp at CFA + rbp_off; 0: unchanged */
};

#define RULES 2048 /* a power of two; 40 KiB a thread */
static __thread struct rule rules[RULES]
	__attribute__((tls_model("initial-exec")));

/* Bumped after each dlclose: a rule found before may describe code that
 * is gone, and other code may be loaded at its addresses. */
static _Atomic uint32_t modules_gen;

void native_frames_forget(void)
{
	atomic_fetch_add(&modules_gen, 1);
}

/* libgcc_s's code.  Its _Unwind_Find_FDE holds a mutex while it mallocs
 * (sorting the FDEs of frames that a JIT registered, for the program's
 * own exception unwinding); a walk that asked it for an FDE from inside
 * that malloc would wait for itself.  So an allocation made directly by
 * libgcc is never walked through libgcc. */
static uint64_t gcc_lo, gcc_hi;

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uint64_t want = (uint64_t)(uintptr_t)arg, lo = UINT64_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uint64_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (want < lo || want >= hi)
		return 0;
	gcc_lo = lo;
	gcc_hi = hi;
	return 1;
}

void native_frames_init(void)
{
	void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
	if (gcc == NULL)
		return;
	find_fde_fn f = (find_fde_fn)dlsym(gcc, "_Unwind_Find_FDE");
	if (f == NULL ||
	    dl_iterate_phdr(find_module, (void *)(uintptr_t)f) == 0)
		return; /* no walker without libgcc's code range */
	find_fde = f;
}

int native_frames_in_libgcc(uint64_t ip)
{
	return ip >= gcc_lo && ip < gcc_hi;
}

/* ------------------------------------------------- reading .eh_frame */

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

/* Parse the CIE at p (its length word); 0 when we can use it. */
static int read_cie(const uint8_t *p, struct cie *cie)
{
	uint32_t len;
	memcpy(&len, p, 4);
	if (len == 0 || len == 0xffffffffu)
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
			off = (int64_t)uleb(c) * cie->data_align;
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
			off = (int64_t)uleb(c) * cie->data_align;
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
			off = sleb(c) * cie->data_align;
			goto offset;
		case 0x12: /* def_cfa_sf */
			s->cfa_reg = (unsigned)uleb(c);
			s->cfa_off = sleb(c) * cie->data_align;
			continue;
		case 0x13: /* def_cfa_offset_sf */
			s->cfa_off = sleb(c) * cie->data_align;
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
			off = -(int64_t)uleb(c) * cie->data_align;
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

/* Find the rule for return address ip into *r. */
static void learn(uint64_t ip, uint32_t gen, struct rule *r)
{
	struct eh_bases bases;
	r->ip = ip;
	r->gen = gen;
	r->kind = RULE_UNSUPPORTED;
	if (find_fde == NULL)
		return;
	/* The call is before the return address: its FDE and its state. */
	const uint8_t *fde = find_fde((void *)(uintptr_t)(ip - 1), &bases);
	if (fde == NULL) {
		r->kind = RULE_NONE; /* no unwind information: the end */
		return;
	}
	uint32_t len;
	int32_t cie_ptr;
	memcpy(&len, fde, 4);
	memcpy(&cie_ptr, fde + 4, 4);
	if (len == 0 || len == 0xffffffffu || cie_ptr <= 0)
		return;
	struct cie cie;
	if (read_cie(fde + 4 - cie_ptr, &cie) != 0)
		return;
	struct cursor c = {fde + 8, fde + 4 + len, 0};
	/* pc_begin and pc_range (bases.func is pc_begin), then the
	 * augmentation data. */
	if (skip_encoded(&c, cie.fde_enc) != 0 ||
	    skip_encoded(&c, cie.fde_enc & 0x0f) != 0)
		return;
	if (cie.has_aug_data) {
		uint64_t n = uleb(&c);
		if (c.bad || n > (uint64_t)(c.end - c.p))
			return;
		c.p += n;
	}
	struct state s = {0, REG_RSP, 0, 0, 0}, saved[STACK_STATES];
	unsigned nsaved = 0;
	uint64_t loc = (uint64_t)(uintptr_t)bases.func, pc = ip - 1;
	struct cursor ci = cie.insns;
	run(&ci, &cie, &loc, UINT64_MAX, &s, &s, saved, &nsaved);
	if (ci.bad || s.bad)
		return;
	struct state initial = s;
	nsaved = 0;
	run(&c, &cie, &loc, pc, &s, &initial, saved, &nsaved);
	if (!c.bad && !s.bad && s.outermost) {
		r->kind = RULE_NONE;
		return;
	}
	if (c.bad || s.bad || (s.cfa_reg != REG_RSP && s.cfa_reg != REG_RBP) ||
	    s.cfa_off <= 0 || s.cfa_off > INT16_MAX || s.rbp_off < INT16_MIN ||
	    s.rbp_off > 0)
		return;
	r->cfa_off = (int16_t)s.cfa_off;
	r->cfa_rbp = s.cfa_reg == REG_RBP;
	r->rbp_off = (int16_t)s.rbp_off;
	r->kind = RULE_OK;
}

static const struct rule *rule_of(uint64_t ip, uint32_t gen)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ull;
	struct rule *r = &rules[h >> 53 & (RULES - 1)];
	if (r->kind == RULE_EMPTY || r->ip != ip || r->gen != gen)
		learn(ip, gen, r);
	return r;
}

/* ------------------------------------------------------------ the walk */

static uint64_t at(uint64_t a)
{
	return *(const uint64_t *)(uintptr_t)a;
}

int native_frames_walk(uint64_t slot0, uint64_t rbp, uintptr_t lo,
		       uintptr_t hi, uint64_t *frames, uint64_t *slots,
		       unsigned max)
{
	unsigned n = 0;
	uint64_t slot = slot0;
	uint32_t gen = atomic_load_explicit(&modules_gen, memory_order_acquire);
	(void)lo;
	if (find_fde == NULL || native_frames_in_libgcc(at(slot0)))
		return FRAMES_UNSUPPORTED;
	while (n < max) {
		uint64_t ip = at(slot), rsp = slot + 8;
		if (ip == 0)
			break;
		frames[n] = ip;
		slots[n] = slot;
		n++;
		if (n == max)
			break;
		const struct rule *r = rule_of(ip, gen);
		if (r->kind == RULE_NONE)
			break;
		if (r->kind != RULE_OK)
			return FRAMES_UNSUPPORTED;
		uint64_t cfa = (r->cfa_rbp ? rbp : rsp) + (uint64_t)(int64_t)r->cfa_off;
		/* The next return address lies above this one, inside the
		 * stack; the caller's rbp, if saved, too. */
		if (cfa <= rsp || cfa > hi)
			break;
		if (r->rbp_off != 0) {
			uint64_t a = cfa + (uint64_t)(int64_t)r->rbp_off;
			if (a < rsp || a + 8 > hi)
				break;
			rbp = at(a);
		}
		slot = cfa - 8;
	}
	return (int)n;
}

int native_frames_ready(void)
{
	return find_fde != NULL;
}
