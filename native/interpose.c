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
static int (*next_posix_memalign)(void **, size_t, size_t);
static size_t (*next_usable_size)(void *);

/* Acquire (a plain load on x86-64): a thread that sees tracking on also
 * sees headers_made set, and so does any thread it hands a block to. */
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
 * Headers.  While tracking, malloc, calloc and realloc ask glibc for 16
 * bytes more and keep the allocation's record in front of the block they
 * return, where free finds it with no lookup (the live table is for the
 * aligned allocations, whose alignment a header would break, and for
 * blocks made before tracking began):
 *
 *   h[0]  the bytes asked for (bits 0-47) and the generation they were
 *         counted in (bits 48-63, the tracker's starts modulo 65536);
 *   h[1]  the block's tag (bits 32-63: bit 63 set, the rest bits 4-34 of
 *         the returned pointer under a per-run key) and its site id
 *         (bits 0-31, 0: not counted).
 *
 * A block without a header has glibc's chunk size at p - 8, which never
 * has bit 63 set, so the tag cannot be taken for one.  A block keeps its
 * header until it is freed, tracking on or off (realloc carries it over):
 * once tracking has started, free, realloc and malloc_usable_size look
 * for it.
 */
#define HDR NATIVE_HEADER_BYTES
#define SIZE_BITS 48
static uint64_t secret;
static _Atomic int headers_made; /* tracking ever started */

/* Bit 63 is what tells a header from glibc's chunk size; the rest, the
 * pointer's bits under a per-run key, only makes a stray match (a stale
 * header, a block that is not ours) unlikely, and costs two operations
 * on every free. */
INLINE uint32_t tag_of(const void *p)
{
	return ((uint32_t)((uintptr_t)p >> 4) ^ (uint32_t)secret) |
	       0x80000000u;
}

INLINE uint64_t gen_of(uint64_t state)
{
	return (state >> 1) & 0xffff;
}

/* Does p carry a header? */
INLINE int headed(const void *p)
{
	return p != NULL && ((uintptr_t)p & 15) == 0 &&
	       (uint32_t)(((const uint64_t *)p)[-1] >> 32) == tag_of(p);
}

/* Write the header into block q (n bytes asked for, site id or 0) and
 * count the allocation; returns the pointer to give out. */
INLINE void *head(void *q, size_t n, uint32_t id, uint64_t state)
{
	uint64_t *h = q;
	void *p = (char *)q + HDR;
	h[0] = (uint64_t)n | gen_of(state) << SIZE_BITS;
	h[1] = (uint64_t)tag_of(p) << 32 | id;
	if (id != 0)
		native_site_alloc(id, n);
	return p;
}

/* Count the free of headed block p if it was counted in the generation
 * that is on now; the header goes (a stale copy is no header). */
INLINE void unhead(void *p, int clear)
{
	uint64_t *h = (uint64_t *)p - 2;
	uint32_t id = (uint32_t)h[1];
	uint64_t s = state_now();
	if (id != 0 && NATIVE_ON(s) && h[0] >> SIZE_BITS == gen_of(s))
		native_site_free(id, h[0] & (((uint64_t)1 << SIZE_BITS) - 1));
	if (clear)
		h[1] = 0;
}

/* ------------------------------------------------------ tracked paths */

static __attribute__((noinline)) void *tracked_malloc(size_t n,
						      uint64_t state)
{
	if (busy || n >= ((size_t)1 << SIZE_BITS))
		return __libc_malloc(n);
	busy = 1;
	void *q = __libc_malloc(n + HDR), *p = NULL;
	if (q != NULL)
		p = head(q, n, site_here(state), state);
	busy = 0;
	return p;
}

static __attribute__((noinline)) void *tracked_calloc(size_t n, size_t m,
						      uint64_t state)
{
	size_t t;
	if (busy || __builtin_mul_overflow(n, m, &t) ||
	    t >= ((size_t)1 << SIZE_BITS))
		return __libc_calloc(n, m);
	busy = 1;
	void *q = __libc_calloc(1, t + HDR), *p = NULL;
	if (q != NULL)
		p = head(q, t, site_here(state), state);
	busy = 0;
	return p;
}

static __attribute__((noinline)) void tracked_free(void *p)
{
	if (headed(p)) {
		unhead(p, 1);
		__libc_free((char *)p - HDR);
		return;
	}
	if (!busy && p != NULL && NATIVE_ON(state_now())) {
		busy = 1;
		untrack(p);
		busy = 0;
	}
	__libc_free(p);
}

/* realloc of a block with a header: the new block has one too, counted
 * at the caller's site while tracking (and not nested in the tracker). */
static void *realloc_headed(void *p, size_t n, uint64_t state)
{
	if (n >= ((size_t)1 << SIZE_BITS)) {
		errno = ENOMEM;
		return NULL;
	}
	void *q = __libc_realloc((char *)p - HDR, n + HDR);
	if (q == NULL)
		return NULL; /* p is as it was */
	/* q holds p's header, moved: count its free, then the new block. */
	unhead((char *)q + HDR, 0);
	uint32_t id = 0;
	if (!busy && NATIVE_ON(state)) {
		busy = 1;
		id = site_here(state);
		busy = 0;
	}
	return head(q, n, id, state);
}

static __attribute__((noinline)) void *tracked_realloc(void *p, size_t n,
						       uint64_t state)
{
	if (headed(p))
		return realloc_headed(p, n, state);
	if (busy || !NATIVE_ON(state))
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

/* Until tracking first starts no block has a header: realloc and free
 * are one load and one branch too. */
PUBLIC void *realloc(void *p, size_t n)
{
	if (__builtin_expect(!atomic_load_explicit(&headers_made,
						   memory_order_relaxed), 1))
		return __libc_realloc(p, n);
	return tracked_realloc(p, n, state_now());
}

PUBLIC void free(void *p)
{
	if (__builtin_expect(!atomic_load_explicit(&headers_made,
						   memory_order_relaxed), 1)) {
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
	if (next_usable_size == NULL)
		return 0;
	if (atomic_load_explicit(&headers_made, memory_order_relaxed) &&
	    headed(p))
		return next_usable_size((char *)p - HDR) - HDR;
	return next_usable_size(p);
}

void native_headers_begin(void)
{
	atomic_store(&headers_made, 1);
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
	next_usable_size =
		(size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	const char *d = getenv("VMHEAP_NATIVE_DEPTH");
	if (d != NULL) {
		long v = strtol(d, NULL, 10);
		if (v >= 1 && v <= VMHEAP_NATIVE_MAX_FRAMES)
			native_depth = (unsigned)v;
	}
	native_stack_init();
	native_counters_init();
	/* The tags' key: anything that differs from run to run. */
	secret = (uint64_t)(uintptr_t)&secret ^
		 (uint64_t)(uintptr_t)__builtin_frame_address(0) << 17 ^
		 (uint64_t)getpid() << 40;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (getenv("VMHEAP_NATIVE_TRACK") != NULL &&
	    getenv("VMHEAP_NATIVE_TRACK")[0] == '1')
		vmheap_native_start();
	busy--;
}
