/*
 * replay_counter.c - an "allocator" for vmheap-replay's suite
 * (spec/replay_test.c), preloaded as --allocator PATH.so: it counts every
 * malloc-family call of the process and hands it to glibc (its
 * __libc_* entry points), and at exit writes "replay_counter: N calls"
 * on stderr.  The suite checks that a replay calls the allocator for the
 * program's events and nearly nothing else: the engine's own tables
 * never come from the allocator under test.
 */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
extern void __libc_free(void *);

static _Atomic unsigned long calls;

#define COUNT() atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed)
/* exported: the build hides symbols by default (-fvisibility=hidden) */
#define EXPORT __attribute__((visibility("default")))

EXPORT void *malloc(size_t n)
{
	COUNT();
	return __libc_malloc(n);
}

EXPORT void *calloc(size_t a, size_t b)
{
	COUNT();
	return __libc_calloc(a, b);
}

EXPORT void *realloc(void *p, size_t n)
{
	COUNT();
	return __libc_realloc(p, n);
}

EXPORT void *reallocarray(void *p, size_t a, size_t b)
{
	COUNT();
	if (b && a > SIZE_MAX / b) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, a * b);
}

EXPORT void free(void *p)
{
	COUNT();
	__libc_free(p);
}

EXPORT void *memalign(size_t a, size_t n)
{
	COUNT();
	return __libc_memalign(a, n);
}

EXPORT void *aligned_alloc(size_t a, size_t n)
{
	COUNT();
	return __libc_memalign(a, n);
}

EXPORT int posix_memalign(void **out, size_t a, size_t n)
{
	void *p;

	COUNT();
	if (a < sizeof(void *) || (a & (a - 1)))
		return EINVAL;
	p = __libc_memalign(a, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *valloc(size_t n)
{
	COUNT();
	return __libc_valloc(n);
}

EXPORT void *pvalloc(size_t n)
{
	COUNT();
	return __libc_pvalloc(n);
}

__attribute__((destructor)) static void report(void)
{
	char line[64];
	int len = snprintf(line, sizeof line, "replay_counter: %lu calls\n",
			   atomic_load(&calls));

	if (write(2, line, (size_t)len) < 0)
		return;
}
