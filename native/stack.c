/*
 * stack.c - the caller's stack.
 *
 * Two ways, chosen at start by VMHEAP_NATIVE_UNWIND:
 *   (default) libunwind, which reads the unwind tables (.eh_frame), so it
 *             walks through code built without frame pointers: Debian's
 *             glibc and ruby are; a per-thread cache of the stacks it
 *             found makes a repeated call path cheap (below);
 *   fp        the frame-pointer chain, bounded by the thread's stack; it
 *             stops early (or goes astray) in such code.  Kept for the
 *             benchmark that justified the choice (bench/RESULTS.md).
 *             It asks pthread_getattr_np for each thread's bounds, once,
 *             inside malloc: a thread whose first tracked allocation is
 *             made inside pthread_getattr_np (ruby's threads) waits for
 *             itself.  The default way does not (see cache_bounds).
 * The tracker's own frames (its code range) are dropped from the top.
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <unwind.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "native-internal.h"

static uint64_t self_lo, self_hi; /* the tracker's code */
static int use_fp;
/* libgcc's unwinder (slot_walk), or NULL. */
typedef _Unwind_Reason_Code (*gcc_backtrace_fn)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr (*gcc_ip_fn)(struct _Unwind_Context *);
typedef _Unwind_Word (*gcc_cfa_fn)(struct _Unwind_Context *);
static gcc_backtrace_fn gcc_backtrace;
static gcc_ip_fn gcc_ip;
static gcc_cfa_fn gcc_cfa;

static __thread uintptr_t stack_lo, stack_hi
	NATIVE_TLS;

/* The stack cache's bounds, found without pthread_getattr_np, which takes
 * the thread's lock: an allocation made inside it (ruby calls it as each
 * thread starts, glibc reallocs there) would wait for that lock forever.
 * The main thread's come from the constructor; another thread's stack
 * lies below its thread control block (glibc on x86-64 puts it at the
 * top of the thread's stack mapping), and the cache is used only within
 * CACHE_SPAN below it. */
#define CACHE_SPAN ((uintptr_t)64 << 20)
static uintptr_t main_lo, main_hi;
static __thread int on_main NATIVE_TLS;

static void cache_bounds(uintptr_t *lo, uintptr_t *hi)
{
	if (on_main) {
		*lo = main_lo;
		*hi = main_hi;
		return;
	}
#if defined(__x86_64__)
	/* The thread pointer is pthread_self() there, with no call. */
	*hi = (uintptr_t)__builtin_thread_pointer();
#else
	*hi = (uintptr_t)pthread_self();
#endif
	*lo = *hi > CACHE_SPAN ? *hi - CACHE_SPAN : 0;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
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
	if (want >= lo && want < hi) {
		self_lo = lo;
		self_hi = hi;
		return 1;
	}
	return 0;
}

void native_stack_init(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	dl_iterate_phdr(find_self, (void *)(uintptr_t)native_stack_init);
	on_main = 1; /* the constructor runs on the main thread */
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		if (pthread_attr_getstack(&a, &addr, &size) == 0) {
			main_lo = (uintptr_t)addr;
			main_hi = main_lo + size;
		}
		pthread_attr_destroy(&a);
	}
	const char *how = getenv("VMHEAP_NATIVE_UNWIND");
	use_fp = how != NULL && strcmp(how, "fp") == 0;
	/* libunwind's own cache, shared and locked.  UNW_CACHE_PER_THREAD
	 * is accepted by a libunwind built without per-thread caches
	 * (Debian's: 16 bytes of TLS) and then uses the shared cache with
	 * no lock at all, from every thread at once.  libunwind is now
	 * the way only for stacks the tracker's walker does not take (a
	 * Fiber's, a signal frame's), so its lock costs little. */
	if (!use_fp)
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_GLOBAL);
	native_frames_init();
	/* Without libgcc_s (it comes with every gcc-built system) stacks
	 * are not cached: each is unwound by unw_backtrace. */
	void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
	if (gcc != NULL && native_frames_ready()) { /* its code range known */
		gcc_ip = (gcc_ip_fn)dlsym(gcc, "_Unwind_GetIP");
		gcc_cfa = (gcc_cfa_fn)dlsym(gcc, "_Unwind_GetCFA");
		if (gcc_ip != NULL && gcc_cfa != NULL)
			gcc_backtrace = (gcc_backtrace_fn)dlsym(
				gcc, "_Unwind_Backtrace");
	}
}

/* The thread's stack bounds, once per thread (frame-pointer walks only:
 * see cache_bounds for why the default way does not ask glibc). */
static int bounds(void)
{
	if (stack_hi != 0)
		return 0;
	pthread_attr_t a;
	void *addr;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return -1;
	int r = pthread_attr_getstack(&a, &addr, &size);
	pthread_attr_destroy(&a);
	if (r != 0)
		return -1;
	stack_lo = (uintptr_t)addr;
	stack_hi = stack_lo + size;
	return 0;
}

static unsigned fp_walk(void **out, unsigned max)
{
	if (bounds() != 0)
		return 0;
	uintptr_t *fp = __builtin_frame_address(0);
	unsigned n = 0;
	while (n < max && (uintptr_t)fp >= stack_lo &&
	       (uintptr_t)fp + 2 * sizeof *fp <= stack_hi &&
	       ((uintptr_t)fp & (sizeof *fp - 1)) == 0) {
		uintptr_t ret = fp[1], *next = (uintptr_t *)fp[0];
		if (ret == 0)
			break;
		out[n++] = (void *)ret;
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

/*
 * The stack with the stack address each return address was read from (its
 * "slot"): at most `max` frames, the tracker's own dropped.  By libgcc's
 * unwinder (_Unwind_Backtrace of libgcc_s.so.1, opened by name so that
 * libunwind's functions of the same names are not taken): it finds each
 * frame's unwind table through glibc's _dl_find_object, without a lock
 * and without a system call.  libunwind's unw_step, which found the
 * slots before, blocks and unblocks signals around each frame whose
 * unwind information is not in its 128-entry cache: two rt_sigprocmask
 * calls per frame on ruby's stacks (11 million for one JSON round),
 * and about 7 us a 16-frame walk even when cached, against 1.9 us here
 * (bench/RESULTS.md).  The slot of a frame's return address is its
 * callee's canonical frame address (CFA) minus 8 on x86-64.  to_cache
 * checks each slot against its return address before a stack is kept.
 */

struct walk {
	uint64_t *frames, *slots;
	unsigned n, max;
};

/* In the callback for a frame, libgcc's context holds the CFA of the
 * frame it was unwound from: the frame's return address lies just below
 * it. */
static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *c, void *arg)
{
	struct walk *w = arg;
	uint64_t ip = gcc_ip(c);
	if (ip == 0)
		return _URC_END_OF_STACK;
	if (w->n == 0 && ip >= self_lo && ip < self_hi)
		return _URC_NO_REASON;
	w->frames[w->n] = ip;
	w->slots[w->n] = gcc_cfa(c) - 8;
	return ++w->n < w->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

static unsigned slot_walk(uint64_t *frames, uint64_t *slots, unsigned max)
{
	struct walk w = {frames, slots, 0, max};
	if (gcc_backtrace == NULL)
		return 0;
	gcc_backtrace(walk_frame, &w);
	return w.n;
}

/*
 * The stack cache.  Unwinding with libunwind costs far more than the rest
 * of a tracked malloc, and a program allocates from few call paths, again
 * and again, at the same depth.  Each thread keeps the stacks it unwound,
 * with the stack address each return address was read from (its "slot").
 * A stack is the same as a cached one when the first return address
 * outside the tracker and its slot are the same (found through the
 * tracker's own frame pointers) and every other slot still holds the
 * cached return address: the unwinder would read exactly those values
 * from exactly those places.  Only slots inside the thread's own stack,
 * above the current frame, are read (mapped and in use); a stack that is
 * not the thread's (a fiber's, a signal stack's) is unwound each time.
 */
#define CACHE_WAYS 128 /* a power of two */
#define CACHE_FRAMES 16
struct stack_entry {
	uint64_t slot0;			/* 0: empty */
	uint64_t seen;			/* a stack met once, not kept */
	struct native_id_memo memo;	/* the stack id it was last */
	uint64_t frames[CACHE_FRAMES];	/* frames[0] the first outside */
	uint32_t offs[CACHE_FRAMES];	/* slot k - slot0 */
	unsigned depth;
};
static __thread struct stack_entry stack_cache[CACHE_WAYS]
	NATIVE_TLS;

/* The first return address outside the tracker, by the tracker's own
 * frame pointers (it is built with them): its slot, or 0. */
static uint64_t first_outside(uintptr_t *fp, uintptr_t lo, uintptr_t hi)
{
	for (int i = 0; i < 8; i++) {
		if ((uintptr_t)fp < lo || (uintptr_t)fp + 16 > hi ||
		    ((uintptr_t)fp & 7) != 0)
			return 0;
		uint64_t ret = fp[1];
		if (ret < self_lo || ret >= self_hi)
			return (uint64_t)(uintptr_t)&fp[1];
		uintptr_t *next = (uintptr_t *)fp[0];
		if (next <= fp)
			return 0;
		fp = next;
	}
	return 0;
}

static struct stack_entry *entry_of(uint64_t slot0, uint64_t ret0)
{
	uint64_t h = (slot0 ^ ret0 * 0x9e3779b97f4a7c15ull) >> 4;
	h ^= h >> 17;
	return &stack_cache[h & (CACHE_WAYS - 1)];
}

/* The cache entry of the stack whose first return address outside the
 * tracker lies at slot0, when every other slot of that entry still holds
 * its return address; else NULL.  Every slot lies in [slot0, hi): to_cache
 * kept no other, and the thread's bounds do not change. */
static struct stack_entry *valid_entry(uint64_t slot0)
{
	uint64_t ret0 = *(const uint64_t *)(uintptr_t)slot0;
	struct stack_entry *e = entry_of(slot0, ret0);

	if (e->slot0 != slot0 || e->frames[0] != ret0)
		return NULL;
	for (unsigned k = 1; k < e->depth; k++)
		if (*(const uint64_t *)(uintptr_t)(slot0 + e->offs[k]) !=
		    e->frames[k])
			return NULL;
	return e;
}

static unsigned from_cache(uint64_t slot0, uint64_t *frames, unsigned max,
			   struct native_id_memo **memo)
{
	struct stack_entry *e = valid_entry(slot0);
	if (e == NULL)
		return 0;
	unsigned n = e->depth < max ? e->depth : max;
	for (unsigned k = 0; k < n; k++) /* few: no rep movs */
		frames[k] = e->frames[k];
	*memo = &e->memo;
	return n;
}

/* Keep a stack that libunwind found, if each of its return addresses lies
 * at its slot in this thread's stack (ordinary calls, no signal frame). */
static void to_cache(uint64_t slot0, uint64_t hi, const uint64_t *frames,
		     const uint64_t *slots, unsigned n,
		     struct native_id_memo **memo)
{
	if (n == 0 || n > CACHE_FRAMES || slots[0] != slot0)
		return;
	for (unsigned k = 0; k < n; k++)
		if (slots[k] < slot0 || slots[k] + 8 > hi ||
		    slots[k] - slot0 > UINT32_MAX ||
		    *(const uint64_t *)(uintptr_t)slots[k] != frames[k])
			return;
	struct stack_entry *e = entry_of(slot0, frames[0]);
	e->slot0 = slot0;
	e->memo.state = 0; /* no generation is 0 */
	*memo = &e->memo;
	e->depth = n;
	for (unsigned k = 0; k < n; k++) {
		e->frames[k] = frames[k];
		e->offs[k] = (uint32_t)(slots[k] - slot0);
	}
}

/* The return addresses in raw[0..got), the tracker's own dropped from
 * the top, into frames: how many. */
static unsigned outside(void *const *raw, unsigned got, uint64_t *frames,
			unsigned max)
{
	unsigned n = 0, i = 0;
	while (i < got && (uint64_t)(uintptr_t)raw[i] >= self_lo &&
	       (uint64_t)(uintptr_t)raw[i] < self_hi)
		i++;
	for (; i < got && n < max; i++)
		frames[n++] = (uint64_t)(uintptr_t)raw[i];
	return n;
}

/*
 * With libunwind: from the cache, or else by unw_backtrace (its fast path
 * keeps its own cache of frame layouts, about 0.3 us for 16 frames).
 * Finding the slots takes libgcc's walk (slot_walk), several times as
 * much, so a stack is walked that way, and cached, only when the same
 * stack (same frames from the same slot) comes twice in a row to its
 * cache entry: a program's one-off stacks (an interpreter's deep
 * recursion) do not pay for it.
 */
static unsigned unw_stack(uint64_t *frames, unsigned max,
			  struct native_id_memo **memo)
{
	void *raw[VMHEAP_NATIVE_MAX_FRAMES + 8];
	uint64_t slots[VMHEAP_NATIVE_MAX_FRAMES];
	uintptr_t lo, hi;
	unsigned n;

	cache_bounds(&lo, &hi);
	uint64_t slot0 = max <= CACHE_FRAMES
		? first_outside(__builtin_frame_address(0), lo, hi) : 0;
	if (slot0 != 0 && (n = from_cache(slot0, frames, max, memo)) != 0)
		return n;
	if (slot0 != 0) {
		/* The tracker's frame below slot0 saved the caller's rbp. */
		uint64_t rbp = *(const uint64_t *)(uintptr_t)(slot0 - 8);
		int m = native_frames_walk(slot0, rbp, lo, hi, frames, slots,
					   max);
		if (m > 0) {
			to_cache(slot0, hi, frames, slots, (unsigned)m, memo);
			return (unsigned)m;
		}
	}
	unsigned want = max + 8 > sizeof raw / sizeof *raw
				? sizeof raw / sizeof *raw : max + 8;
	n = outside(raw, (unsigned)unw_backtrace(raw, (int)want), frames, max);
	if (slot0 == 0 || n == 0 ||
	    frames[0] != *(const uint64_t *)(uintptr_t)slot0)
		return n;
	uint64_t seen = slot0 ^ n;
	for (unsigned k = 0; k < n; k++)
		seen = (seen ^ frames[k]) * 0x9e3779b97f4a7c15ull;
	struct stack_entry *e = entry_of(slot0, frames[0]);
	if (e->seen != seen) {
		e->seen = seen; /* once: not worth slot_walk yet */
		return n;
	}
	if (native_frames_in_libgcc(frames[0]))
		return n; /* libgcc's own malloc: not through libgcc */
	unsigned m = slot_walk(frames, slots, max);
	if (m == 0) /* no libgcc: not cached (frames untouched) */
		return n;
	to_cache(slot0, hi, frames, slots, m, memo);
	return m;
}

struct native_id_memo *native_stack_memo(void *fp)
{
	uintptr_t lo, hi;

	if (use_fp)
		return NULL;
	cache_bounds(&lo, &hi);
	uint64_t slot0 = first_outside(fp, lo, hi);
	/* No entry holds more than native_depth frames (unw_stack's max). */
	struct stack_entry *e = slot0 != 0 ? valid_entry(slot0) : NULL;
	return e != NULL ? &e->memo : NULL;
}

unsigned native_stack(uint64_t *frames, unsigned max,
		      struct native_id_memo **memo)
{
	unsigned n;

	*memo = NULL;
	if (use_fp) {
		void *raw[VMHEAP_NATIVE_MAX_FRAMES + 8];
		unsigned want = max + 8 > sizeof raw / sizeof *raw
					? sizeof raw / sizeof *raw : max + 8;
		n = outside(raw, fp_walk(raw, want), frames, max);
	} else {
		n = unw_stack(frames, max, memo);
	}
	if (n == 0)
		frames[n++] = 0; /* an unknown caller is still a stack */
	return n;
}
