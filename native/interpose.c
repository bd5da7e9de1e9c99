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
#include <unistd.h>

#include "native-internal.h"

#define PUBLIC __attribute__((visibility("default")))
#define LIKELY_OFF(state) __builtin_expect(!NATIVE_ON(state), 1)

_Atomic uint64_t native_state;
unsigned native_depth = 16;
_Atomic(vmheap_native_location_fn) native_location;

static __thread int busy __attribute__((tls_model("initial-exec")));

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

/* site_here's slow path: the stack unwound (or copied from the cache),
 * and its site found or made. */
static __attribute__((noinline)) uint32_t site_found(uint64_t state,
						     const char *file,
						     uint32_t line)
{
	uint64_t frames[VMHEAP_NATIVE_MAX_FRAMES];
	struct native_site_memo *memo;
	struct native_where w = {frames,
				 native_stack(frames, native_depth, &memo),
				 file, line};
	/* The same stack and location as the last time: the same site. */
	if (memo != NULL && memo->state == state && memo->file == w.file &&
	    memo->line == w.line)
		return memo->id;
	uint32_t id = native_site_get(&w, state);
	if (memo != NULL && id != 0)
		*memo = (struct native_site_memo){state, w.file, w.line, id};
	return id;
}

/*
 * The site of an allocation made here and now, 0 when none.  Inlined in
 * each tracked path, so that the stack cache's walk starts from that
 * path's own frame: a repeated stack costs a look at its cached slots
 * and no copy of its frames.
 */
INLINE uint32_t site_here(uint64_t state)
{
	uint32_t line;
	const char *file = location_here(&line);
	struct native_site_memo *m =
		native_stack_memo(__builtin_frame_address(0));
	if (m != NULL && m->state == state && m->file == file &&
	    m->line == line)
		return m->id;
	return site_found(state, file, line);
}

/* Account p (just allocated, n bytes) in the live table. */
INLINE void track(void *p, size_t n, uint64_t state)
{
	uint32_t id = site_here(state);
	if (id != 0)
		native_live_add(p, n, id, state);
}

static void untrack(void *p)
{
	uint64_t size;
	native_live_remove(p, &size);
}

/*
 * No header, no footer: every tracked block is a plain glibc block, and
 * its record (size, site) lives in the live table (live.c), keyed by its
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

static __attribute__((noinline)) void *tracked_malloc(size_t n,
						      uint64_t state)
{
	void *p = __libc_malloc(n);
	if (busy || p == NULL)
		return p;
	busy = 1;
	track(p, n, state);
	busy = 0;
	return p;
}

static __attribute__((noinline)) void *tracked_calloc(size_t n, size_t m,
						      uint64_t state)
{
	void *p = __libc_calloc(n, m);
	if (busy || p == NULL)
		return p;
	busy = 1;
	track(p, n * m, state); /* no overflow: glibc checked it */
	busy = 0;
	return p;
}

static __attribute__((noinline)) void tracked_free(void *p)
{
	if (!busy && p != NULL) {
		busy = 1;
		untrack(p);
		busy = 0;
	}
	__libc_free(p);
}

/*
 * The record goes before glibc's realloc (p may be freed there, and its
 * address handed to another thread) and comes back if the realloc fails.
 * realloc(p, 0) frees p and returns NULL, as glibc's does.
 */
static __attribute__((noinline)) void *tracked_realloc(void *p, size_t n,
						       uint64_t state)
{
	if (busy)
		return __libc_realloc(p, n);
	if (p == NULL)
		return tracked_malloc(n, state);
	busy = 1;
	uint64_t old_size = 0;
	uint32_t old_id = native_live_remove(p, &old_size);
	void *q = __libc_realloc(p, n);
	if (q != NULL)
		track(q, n, state);
	else if (old_id != 0 && n != 0) /* failed: p is still live */
		native_live_restore(p, old_size, old_id, state);
	busy = 0;
	return q;
}

/* memalign, valloc, pvalloc, aligned_alloc, posix_memalign: p from f. */
static __attribute__((noinline)) void tracked_aligned(void *p, size_t n,
						      uint64_t state)
{
	if (busy || p == NULL)
		return;
	busy = 1;
	track(p, n, state);
	busy = 0;
}

/* ------------------------------------------------------- entry points */

PUBLIC void *malloc(size_t n)
{
	uint64_t s = state_now();
	if (LIKELY_OFF(s))
		return __libc_malloc(n);
	return tracked_malloc(n, s);
}

PUBLIC void *calloc(size_t n, size_t m)
{
	uint64_t s = state_now();
	if (LIKELY_OFF(s))
		return __libc_calloc(n, m);
	return tracked_calloc(n, m, s);
}

/* While tracking is off the live table is empty (a stop clears it):
 * realloc and free are one load and one branch too. */
PUBLIC void *realloc(void *p, size_t n)
{
	uint64_t s = state_now();
	if (LIKELY_OFF(s))
		return __libc_realloc(p, n);
	return tracked_realloc(p, n, s);
}

/* glibc's reallocarray calls its realloc inside libc, past the tracker:
 * the same overflow check (NULL and ENOMEM, p as it was), then ours. */
PUBLIC void *reallocarray(void *p, size_t n, size_t m)
{
	size_t t;
	if (__builtin_mul_overflow(n, m, &t)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, t);
}

PUBLIC void free(void *p)
{
	if (LIKELY_OFF(state_now())) {
		__libc_free(p);
		return;
	}
	tracked_free(p);
}

PUBLIC void *memalign(size_t align, size_t n)
{
	uint64_t s = state_now();
	void *p = __libc_memalign(align, n);
	if (!LIKELY_OFF(s))
		tracked_aligned(p, n, s);
	return p;
}

PUBLIC void *valloc(size_t n)
{
	uint64_t s = state_now();
	void *p = __libc_valloc(n);
	if (!LIKELY_OFF(s))
		tracked_aligned(p, n, s);
	return p;
}

PUBLIC void *pvalloc(size_t n)
{
	uint64_t s = state_now();
	void *p = __libc_pvalloc(n);
	if (!LIKELY_OFF(s))
		tracked_aligned(p, n, s);
	return p;
}

PUBLIC void *aligned_alloc(size_t align, size_t n)
{
	uint64_t s = state_now();
	void *p = next_aligned_alloc != NULL ? next_aligned_alloc(align, n)
					     : __libc_memalign(align, n);
	if (!LIKELY_OFF(s))
		tracked_aligned(p, n, s);
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
	if (r == 0 && !LIKELY_OFF(s))
		tracked_aligned(*out, n, s);
	return r;
}

/* The stack walker's rules describe loaded code: after a dlclose, code
 * may be gone and other code come at its addresses (frames.c). */
PUBLIC int dlclose(void *handle)
{
	if (next_dlclose == NULL)
		next_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	int r = next_dlclose(handle);
	native_frames_forget();
	return r;
}

/* ------------------------------------------------------ setup and fork */

static void fork_prepare(void)
{
	busy++; /* the fork handlers' own mallocs go straight through */
	native_files_lock();
	native_sites_lock();
	native_live_lock();
	native_counters_lock();
}

static void fork_parent(void)
{
	native_threads_forget(); /* noted for this fork's child only */
	native_counters_unlock();
	native_live_unlock();
	native_sites_unlock();
	native_files_unlock();
	busy--;
}

/* The child is one thread: what its parent's other threads were doing
 * inside the tracker stopped before any lock (we held them all), and the
 * tables are whole; it goes on tracking. */
static void fork_child(void)
{
	native_counters_after_fork();
	native_live_unlock();
	native_sites_unlock();
	native_files_unlock();
	busy--;
}

__attribute__((constructor)) static void native_init(void)
{
	busy++;
	next_aligned_alloc =
		(void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	next_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(
		RTLD_NEXT, "posix_memalign");
	next_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	const char *d = getenv("VMHEAP_NATIVE_DEPTH");
	if (d != NULL) {
		long v = strtol(d, NULL, 10);
		if (v >= 1 && v <= VMHEAP_NATIVE_MAX_FRAMES)
			native_depth = (unsigned)v;
	}
	native_stack_init();
	native_counters_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (getenv("VMHEAP_NATIVE_TRACK") != NULL &&
	    getenv("VMHEAP_NATIVE_TRACK")[0] == '1')
		vmheap_native_start();
	busy--;
}
