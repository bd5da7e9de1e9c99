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

#include "native-internal.h"

#define PUBLIC __attribute__((visibility("default")))
#define LIKELY_OFF(state) __builtin_expect(!NATIVE_ON(state), 1)

_Atomic uint64_t native_state;
unsigned native_depth = 16;
_Atomic(vmheap_native_location_fn) native_location;

static __thread int busy __attribute__((tls_model("initial-exec")));

static void *(*next_aligned_alloc)(size_t, size_t);
static int (*next_posix_memalign)(void **, size_t, size_t);
static size_t (*next_usable_size)(void *);

static uint64_t state_now(void)
{
	return atomic_load_explicit(&native_state, memory_order_relaxed);
}

/* Account p (just allocated, n bytes) to the caller's stack. */
static void track(void *p, size_t n, uint64_t state)
{
	uint64_t frames[VMHEAP_NATIVE_MAX_FRAMES];
	struct native_where w = {frames, native_stack(frames, native_depth),
				 NULL, 0};
	vmheap_native_location_fn loc =
		atomic_load_explicit(&native_location, memory_order_acquire);
	const char *file;
	uint32_t line;
	if (loc != NULL && loc(&file, &line) && file != NULL) {
		w.file = native_file_intern(file);
		w.line = w.file != NULL ? line : 0;
	}
	uint32_t id = native_site_get(&w, state);
	if (id != 0)
		native_live_add(p, n, id, state);
}

static void untrack(void *p)
{
	uint64_t size;
	native_live_remove(p, &size);
}

/* ------------------------------------------------------ tracked paths */

static __attribute__((noinline)) void *tracked_malloc(size_t n,
						      uint64_t state)
{
	if (busy)
		return __libc_malloc(n);
	busy = 1;
	void *p = __libc_malloc(n);
	if (p != NULL)
		track(p, n, state);
	busy = 0;
	return p;
}

static __attribute__((noinline)) void *tracked_calloc(size_t n, size_t m,
						      uint64_t state)
{
	if (busy)
		return __libc_calloc(n, m);
	busy = 1;
	void *p = __libc_calloc(n, m);
	if (p != NULL)
		track(p, n * m, state); /* no overflow: glibc checked */
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

static __attribute__((noinline)) void *tracked_realloc(void *p, size_t n,
						       uint64_t state)
{
	if (busy)
		return __libc_realloc(p, n);
	busy = 1;
	uint64_t old_size = 0;
	uint32_t old_id = p != NULL ? native_live_remove(p, &old_size) : 0;
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

PUBLIC void *realloc(void *p, size_t n)
{
	uint64_t s = state_now();
	if (LIKELY_OFF(s))
		return __libc_realloc(p, n);
	return tracked_realloc(p, n, s);
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

PUBLIC size_t malloc_usable_size(void *p)
{
	if (next_usable_size == NULL)
		next_usable_size = (size_t(*)(void *))dlsym(
			RTLD_NEXT, "malloc_usable_size");
	return next_usable_size != NULL ? next_usable_size(p) : 0;
}

/* ------------------------------------------------------ setup and fork */

static void fork_prepare(void)
{
	busy++; /* the fork handlers' own mallocs go straight through */
	native_files_lock();
	native_sites_lock();
	native_live_lock();
}

static void fork_parent(void)
{
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
	next_usable_size =
		(size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	const char *d = getenv("VMHEAP_NATIVE_DEPTH");
	if (d != NULL) {
		long v = strtol(d, NULL, 10);
		if (v >= 1 && v <= VMHEAP_NATIVE_MAX_FRAMES)
			native_depth = (unsigned)v;
	}
	native_stack_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (getenv("VMHEAP_NATIVE_TRACK") != NULL &&
	    getenv("VMHEAP_NATIVE_TRACK")[0] == '1')
		vmheap_native_start();
	busy--;
}
