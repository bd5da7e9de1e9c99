/*
 * interpose.c - the allocator's entry points.
 *
 * Each forwards to glibc's own functions (__libc_malloc and the like,
 * which need no dlsym: no bootstrap arena for the calloc that dlsym makes
 * before the tracker is set up).  Until tracking is on, that is one load
 * and one predictable branch.  While on, the tracked path runs with a
 * thread-local guard set: an allocation made from inside the tracker
 * (libunwind, the loader), from a signal handler that interrupted it, or
 * from a fork handler goes straight to glibc, so the tracker never
 * recurses into itself and never waits for a lock that its own thread
 * holds.  The stack is taken before any lock of the tracker.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "native-internal.h"
#include "record-internal.h"

#define PUBLIC __attribute__((visibility("default")))
#define LIKELY_OFF(state) __builtin_expect(!NATIVE_ON(state), 1)

_Atomic uint64_t native_state;
unsigned native_depth = 16;
_Atomic(vmheap_native_location_fn) native_location;

static __thread int busy NATIVE_TLS;

static void *(*next_aligned_alloc)(size_t, size_t);
static int (*next_dlclose)(void *);
static int (*next_posix_memalign)(void **, size_t, size_t);

/* Acquire (a plain load on x86-64). */
static inline uint64_t state_now(void)
{
	return atomic_load_explicit(&native_state, memory_order_acquire);
}

#define INLINE static inline __attribute__((always_inline))

/* The VM's location now (the hook's, interned), or NULL and 0. */
INLINE const char *location_here(uint32_t *line)
{
	vmheap_native_location_fn loc =
		atomic_load_explicit(&native_location, memory_order_acquire);
	const char *file;
	if (loc == NULL || !loc(&file, line) || file == NULL) {
		*line = 0;
		return NULL;
	}
	file = native_file_intern(file);
	if (file == NULL)
		*line = 0;
	return file;
}

/* stack_here's slow path: the stack unwound (or copied from the cache),
 * and its stack id found or made. */
static __attribute__((noinline)) uint32_t
stack_found(uint64_t state, const char *file, uint32_t line)
{
	uint64_t frames[VMHEAP_NATIVE_MAX_FRAMES];
	struct native_id_memo *memo;
	struct native_where w = {frames,
				 native_stack(frames, native_depth, &memo),
				 file, line};
	/* The same stack and location as the last time: the same id. */
	if (memo != NULL && memo->state == state && memo->file == w.file &&
	    memo->line == w.line)
		return memo->id;
	uint32_t id = native_stacks_get(&w, state);
	if (memo != NULL && id != 0)
		*memo = (struct native_id_memo){state, w.file, w.line, id};
	return id;
}

/*
 * The stack id of an allocation made here and now, 0 when none.  Inlined in
 * each tracked path, so that the stack cache's walk starts from that
 * path's own frame: a repeated stack costs a look at its cached slots
 * and no copy of its frames.
 */
INLINE uint32_t stack_here(uint64_t state)
{
	uint32_t line;
	const char *file = location_here(&line);
	struct native_id_memo *m =
	    native_stack_memo(__builtin_frame_address(0));
	if (m != NULL && m->state == state && m->file == file &&
	    m->line == line)
		return m->id;
	return stack_found(state, file, line);
}

/* Account p (just allocated, n bytes) in the live table. */
INLINE void track(void *p, size_t n, uint64_t state)
{
	uint32_t id = stack_here(state);
	if (id != 0)
		native_live_add(p, n, id, state);
}

/*
 * A block the program gets from any of the tracker's entry points, on or
 * off, is cleared from `from` (0, or the bytes a realloc keeps) to
 * glibc's usable size when that is at most CLEAR_MAX bytes: what the
 * memory held in its earlier life (an earlier block's words, a free
 * chunk's links) names other blocks and, left in a live block, would keep
 * forgotten blocks reachable in the leak scan; valgrind counts such words
 * as undefined and never as pointers (native/README.md, "The leak scan").
 * A chunk glibc mmapped is fresh from the kernel.  Bigger blocks are left
 * as they are: clearing every block cost the C workload (which writes one
 * byte of each) 2.1x its time untracked; up to 32 KiB (Ruby's AST node
 * buffers are 24 KiB, its IO buffers 8 KiB) 1.47x untracked and 1.32x
 * tracked, Ruby's stdlib 0.7% more instructions tracked (bench/
 * HISTORY.md, "The Ruby forgetting line, exact").
 */
#ifndef CLEAR_MAX
#define CLEAR_MAX 32768
#endif

/* CLEAR_MAX, or VMHEAP_NATIVE_CLEAR's bytes (0: never clear) when the
 * library loads: a program that allocates big buffers and touches little
 * of them, or one whose leak check is not wanted, need not pay for it.
 * Unset, it is 0 when the library records (VMHEAP_NATIVE_RECORD) without
 * tracking from the start (VMHEAP_NATIVE_TRACK=1). */
static size_t clear_max = CLEAR_MAX;

static inline void clear_stale(void *p, size_t from)
{
	uint64_t head;
	if (p == NULL || clear_max == 0)
		return; /* (recording alone: no header read per call) */
	memcpy(&head, (const char *)p - 8, sizeof head);
	if (head & 2)
		return; /* mmapped */
	/* glibc's usable size of a chunk in use: its size but the size
	 * word (malloc_usable_size, without the call) */
	size_t usable = (size_t)(head & ~(uint64_t)7) - 8;
	if (usable <= clear_max && from < usable)
		memset((char *)p + from, 0, usable - from);
}

/* The usable bytes of p before a realloc (glibc copies them). */
static size_t usable_before(void *p)
{
	return p != NULL ? malloc_usable_size(p) : 0;
}

/* After a realloc to n bytes from a block of u usable ones: the copied
 * bytes are kept up to n (past n the new block's slack, whose old words
 * realloc does not promise to keep: a string shrunk in place keeps its
 * old tail there). */
static inline void clear_realloced(void *q, size_t u, size_t n)
{
	clear_stale(q, u < n ? u : n);
}

static void untrack(void *p)
{
	uint64_t size;
	native_live_remove(p, &size);
}

/*
 * No header, no footer: every tracked block is a plain glibc block, and
 * its record (size, stack id) lives in the live table (live.c), keyed by its
 * address.  So a free or realloc that bypasses the tracker (a library
 * opened with RTLD_DEEPBIND binds to glibc's own) gets a block glibc
 * knows, a block made before tracking began (or by such a library) is
 * simply not in the table, and stopping the tracker leaves nothing behind
 * in the blocks.  A record whose block was freed behind the tracker's
 * back is replaced when glibc hands the address out again (live.c counts
 * that as the old block's free).  native/README.md, "The tracker's
 * block bookkeeping", has the choice and what it costs.
 */

/* ------------------------------------------------------ tracked paths */

/* Recording (record.c) is on: relaxed, the flag only turns off for good
 * or at a fork. */
#define REC_ON()                                                         \
	__builtin_expect(atomic_load_explicit(&native_recording,           \
					      memory_order_relaxed) != 0, 0)

/* Neither tracking nor recording: the fast path. */
#define HOOKS_OFF(state)                                                 \
	__builtin_expect(!NATIVE_ON(state) &&                              \
				 !atomic_load_explicit(&native_recording,  \
						       memory_order_relaxed), \
			 1)

static __attribute__((noinline)) void *tracked_malloc(size_t n,
						      uint64_t state)
{
	void *p = __libc_malloc(n);
	if (busy)
		return p;
	busy = 1;
	if (p != NULL && NATIVE_ON(state))
		track(p, n, state);
	if (REC_ON())
		native_record_malloc(p, n);
	busy = 0;
	return p;
}

static __attribute__((noinline)) void *tracked_calloc(size_t n, size_t m,
						      uint64_t state)
{
	void *p = __libc_calloc(n, m);
	if (busy)
		return p;
	busy = 1;
	size_t t;
	int over = __builtin_mul_overflow(n, m, &t);
	if (p != NULL && NATIVE_ON(state))
		track(p, t, state); /* no overflow: glibc checked it */
	if (REC_ON())
		native_record_alloc(VMHEAP_TRACE_CALLOC, p,
				    over ? UINT64_MAX : t, n, m, 0);
	busy = 0;
	return p;
}

static __attribute__((noinline)) void tracked_free(void *p)
{
	/* glibc's free reads the chunk's header: asked for now, its miss
	 * overlaps the tracker's own look-up of p. */
	if (p != NULL)
		__builtin_prefetch((const char *)p - 8);
	if (!busy) {
		busy = 1;
		if (p != NULL && NATIVE_ON(state_now()))
			untrack(p);
		if (REC_ON())
			native_record_free(p);
		busy = 0;
	}
	__libc_free(p);
}

/*
 * The record goes before glibc's realloc (p may be freed there, and its
 * address handed to another thread) and comes back if the realloc fails.
 * realloc(p, 0) frees p and returns NULL, as glibc's does.  Recording
 * takes p's id out of its table at the same point.  `op` is realloc or
 * reallocarray (n = nmemb * elsize, or SIZE_MAX when that overflowed:
 * then glibc is not called and p stays).
 */
static __attribute__((noinline)) void *
tracked_realloc(void *p, size_t n, uint64_t state, unsigned op, size_t nmemb,
		size_t elsize, int overflow)
{
	if (busy && overflow) {
		errno = ENOMEM;
		return NULL;
	}
	if (busy)
		return __libc_realloc(p, n);
	busy = 1;
	struct rec_old old;
	int rec = REC_ON() && native_record_realloc_begin(p, &old);
	int on = NATIVE_ON(state);
	uint64_t old_size = 0;
	uint32_t old_id = 0;
	if (on && p != NULL && !overflow)
		old_id = native_live_remove(p, &old_size);
	void *q = overflow ? NULL : __libc_realloc(p, n);
	if (on && q != NULL)
		track(q, n, state);
	else if (on && old_id != 0 && n != 0) /* failed: p is still live */
		native_live_restore(p, old_size, old_id, state);
	if (rec)
		native_record_realloc_end(op, &old, p, q,
					  overflow ? UINT64_MAX : n, nmemb,
					  elsize);
	busy = 0;
	if (overflow)
		errno = ENOMEM;
	return q;
}

/* memalign, valloc, pvalloc, aligned_alloc, posix_memalign: p from f. */
static __attribute__((noinline)) void
tracked_aligned(unsigned op, void *p, size_t align, size_t n, uint64_t state)
{
	if (busy)
		return;
	busy = 1;
	if (p != NULL && NATIVE_ON(state))
		track(p, n, state);
	if (REC_ON())
		native_record_alloc(op, p, n, 0, 0, align);
	busy = 0;
}

/* ------------------------------------------------------- entry points */

PUBLIC void *malloc(size_t n)
{
	uint64_t s = state_now();
	void *p = HOOKS_OFF(s) ? __libc_malloc(n) : tracked_malloc(n, s);
	clear_stale(p, 0);
	return p;
}

PUBLIC void *calloc(size_t n, size_t m)
{
	uint64_t s = state_now();
	if (HOOKS_OFF(s))
		return __libc_calloc(n, m);
	return tracked_calloc(n, m, s);
}

/* While tracking is off the live table is empty (a stop clears it):
 * realloc and free are one load and one branch too. */
PUBLIC void *realloc(void *p, size_t n)
{
	uint64_t s = state_now();
	size_t u = usable_before(p);
	void *q = HOOKS_OFF(s)
		      ? __libc_realloc(p, n)
		      : tracked_realloc(p, n, s, VMHEAP_TRACE_REALLOC, 0, 0, 0);
	clear_realloced(q, u, n);
	return q;
}

/* glibc's reallocarray calls its realloc inside libc, past the tracker:
 * the same overflow check (NULL and ENOMEM, p as it was), then ours. */
PUBLIC void *reallocarray(void *p, size_t n, size_t m)
{
	size_t t;
	int over = __builtin_mul_overflow(n, m, &t);
	uint64_t s = state_now();
	if (HOOKS_OFF(s)) {
		if (over) {
			errno = ENOMEM;
			return NULL;
		}
		size_t u = usable_before(p);
		void *q = __libc_realloc(p, t);
		clear_realloced(q, u, t);
		return q;
	}
	size_t u = usable_before(p);
	void *q = tracked_realloc(p, over ? SIZE_MAX : t, s,
				  VMHEAP_TRACE_REALLOCARRAY, n, m, over);
	clear_realloced(q, u, t);
	return q;
}

PUBLIC void free(void *p)
{
	if (HOOKS_OFF(state_now())) {
		__libc_free(p);
		return;
	}
	tracked_free(p);
}

PUBLIC void *memalign(size_t align, size_t n)
{
	uint64_t s = state_now();
	void *p = __libc_memalign(align, n);
	if (!HOOKS_OFF(s))
		tracked_aligned(VMHEAP_TRACE_MEMALIGN, p, align, n, s);
	clear_stale(p, 0);
	return p;
}

PUBLIC void *valloc(size_t n)
{
	uint64_t s = state_now();
	void *p = __libc_valloc(n);
	if (!HOOKS_OFF(s))
		tracked_aligned(VMHEAP_TRACE_VALLOC, p, 0, n, s);
	clear_stale(p, 0);
	return p;
}

PUBLIC void *pvalloc(size_t n)
{
	uint64_t s = state_now();
	void *p = __libc_pvalloc(n);
	if (!HOOKS_OFF(s))
		tracked_aligned(VMHEAP_TRACE_PVALLOC, p, 0, n, s);
	clear_stale(p, 0);
	return p;
}

PUBLIC void *aligned_alloc(size_t align, size_t n)
{
	uint64_t s = state_now();
	void *p = next_aligned_alloc != NULL ? next_aligned_alloc(align, n)
					     : __libc_memalign(align, n);
	if (!HOOKS_OFF(s))
		tracked_aligned(VMHEAP_TRACE_ALIGNED_ALLOC, p, align, n, s);
	clear_stale(p, 0);
	return p;
}

PUBLIC int posix_memalign(void **out, size_t align, size_t n)
{
	uint64_t s = state_now();
	int r;
	if (next_posix_memalign != NULL) {
		r = next_posix_memalign(out, align, n);
	} else if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0 ||
		   align == 0) {
		r = EINVAL;
	} else {
		void *p = __libc_memalign(align, n);
		r = p != NULL ? 0 : ENOMEM;
		if (p != NULL)
			*out = p;
	}
	if (!HOOKS_OFF(s))
		tracked_aligned(VMHEAP_TRACE_POSIX_MEMALIGN,
				r == 0 ? *out : NULL, align, n, s);
	if (r == 0)
		clear_stale(*out, 0);
	return r;
}

/* The stack walker's rules describe loaded code: after a dlclose, code
 * may be gone and other code come at its addresses (frames.c). */
PUBLIC int dlclose(void *handle)
{
	if (next_dlclose == NULL)
		next_dlclose = (int (*)(void *))native_libc_sym("dlclose");
	int r = next_dlclose(handle);
	native_frames_forget();
	return r;
}

/* The entry points under names of the tracker's own (got.c writes these
 * addresses; inside the tracker, `malloc` may be bound to glibc's). */
#define ALIAS(name) \
	extern __typeof(name) native_##name \
		__attribute__((alias(#name), copy(name), visibility("hidden")))
ALIAS(malloc);
ALIAS(calloc);
ALIAS(realloc);
ALIAS(reallocarray);
ALIAS(free);
ALIAS(memalign);
ALIAS(valloc);
ALIAS(pvalloc);
ALIAS(aligned_alloc);
ALIAS(posix_memalign);
ALIAS(dlclose);

/* ---------------------------------------------------- the next symbol */

/*
 * Preloaded (vmheap-run), the tracker's symbols come first and the
 * functions it wraps are the next definition (RTLD_NEXT).  Loaded with
 * dlopen (got.c), it is in no search list that RTLD_NEXT could start
 * from (glibc walks the caller's scope looking for it): glibc's own
 * definitions, from libc.so.6, are the ones it wraps.
 */
int native_preloaded(void)
{
	return dlsym(RTLD_DEFAULT, "malloc") == (void *)native_malloc;
}

void *native_libc_sym(const char *name)
{
	static void *libc;
	if (native_preloaded())
		return dlsym(RTLD_NEXT, name);
	if (libc == NULL)
		libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	void *f = libc != NULL ? dlsym(libc, name) : NULL;
	return f != NULL ? f : dlsym(RTLD_DEFAULT, name);
}

/* ------------------------------------------------------ setup and fork */

/* This thread's allocations are never tracked nor recorded (the
 * recorder's writer thread). */
void native_thread_exclude(void)
{
	busy = 1;
}

void native_guard_hold(void)
{
	busy++;
}

void native_guard_drop(void)
{
	busy--;
}

static void fork_prepare(void)
{
	busy++; /* the fork handlers' own mallocs go straight through */
	native_record_fork_prepare();
	native_files_lock();
	native_stacks_lock();
	native_live_lock();
	native_counters_lock();
}

static void fork_parent(void)
{
	native_threads_forget(); /* noted for this fork's child only */
	native_counters_unlock();
	native_live_unlock();
	native_stacks_unlock();
	native_files_unlock();
	native_record_fork_parent();
	busy--;
}

/* The child is one thread: what its parent's other threads were doing
 * inside the tracker stopped before any lock (we held them all), and the
 * tables are whole; it goes on tracking. */
static void fork_child(void)
{
	native_counters_after_fork();
	native_live_unlock();
	native_stacks_unlock();
	native_files_unlock();
	native_record_fork_child();
	busy--;
}

__attribute__((constructor)) static void native_init(void)
{
	busy++;
	next_aligned_alloc =
		(void *(*)(size_t, size_t))native_libc_sym("aligned_alloc");
	next_posix_memalign = (int (*)(void **, size_t, size_t))native_libc_sym(
		"posix_memalign");
	next_dlclose = (int (*)(void *))native_libc_sym("dlclose");
	const char *d = getenv("VMHEAP_NATIVE_DEPTH");
	if (d != NULL) {
		long v = strtol(d, NULL, 10);
		if (v >= 1 && v <= VMHEAP_NATIVE_MAX_FRAMES)
			native_depth = (unsigned)v;
	}
	const char *c = getenv("VMHEAP_NATIVE_CLEAR");
	const char *rec = getenv("VMHEAP_NATIVE_RECORD");
	const char *trk = getenv("VMHEAP_NATIVE_TRACK");
	if (c != NULL && *c != '\0') {
		char *end;
		unsigned long long v = strtoull(c, &end, 10);
		if (*end == '\0')
			clear_max = (size_t)v;
	} else if (rec != NULL && *rec != '\0' &&
		   (trk == NULL || trk[0] != '1')) {
		/* Recording without tracking: the program's memory as glibc
		 * gives it (the clearing cost the C workload's recording
		 * 2.49x its plain CPU against 2.13x without). */
		clear_max = 0;
	}
	native_stack_init();
	native_counters_init();
	native_output_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (getenv("VMHEAP_NATIVE_TRACK") != NULL &&
	    getenv("VMHEAP_NATIVE_TRACK")[0] == '1')
		vmheap_native_start();
	native_record_start(getenv("VMHEAP_NATIVE_RECORD"));
	busy--;
}

/* At exit, after the program's own destructors (the preloaded library's
 * run last): the trace's buffers, trailer and end record. */
__attribute__((destructor)) static void native_fini(void)
{
	busy++;
	native_record_finish();
	busy--;
}
