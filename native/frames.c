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
 * _dl_find_object: no lock, no system call) and cfa.c runs the CFA
 * program of its CIE and FDE up to the call.  What this walker does not model (a
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
	NATIVE_TLS;

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

/* Find the rule for return address ip into *r. */
static void learn(uint64_t ip, uint32_t gen, struct rule *r)
{
	struct eh_bases bases;
	struct native_cfa_rule cr;
	r->ip = ip;
	r->gen = gen;
	r->kind = RULE_UNSUPPORTED;
	if (find_fde == NULL)
		return;
	/* The call is before the return address: its FDE and its state.
	 * The FDE is the loader's (its section's bounds are not known
	 * here): the whole address space bounds it. */
	const uint8_t *fde = find_fde((void *)(uintptr_t)(ip - 1), &bases);
	if (fde == NULL) {
		r->kind = RULE_NONE; /* no unwind information: the end */
		return;
	}
	switch (native_cfa_rule(0, UINTPTR_MAX, fde,
				(uint64_t)(uintptr_t)bases.func, ip - 1, &cr)) {
	case NATIVE_CFA_END:
		r->kind = RULE_NONE;
		return;
	case NATIVE_CFA_OK:
		break;
	default:
		return;
	}
	if (cr.cfa_off <= 0 || cr.cfa_off > INT16_MAX ||
	    cr.rbp_off < INT16_MIN || cr.rbp_off > 0)
		return;
	r->cfa_off = (int16_t)cr.cfa_off;
	r->cfa_rbp = (uint8_t)cr.cfa_rbp;
	r->rbp_off = (int16_t)cr.rbp_off;
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
