/*
 * semantics.c - what glibc's allocator promises, printed, so that
 * spec/native_test.c can run it without the tracker and under
 * `vmheap-run --track` and ask for the same output byte for byte.
 *
 *   semantics check            the allocator's entry points: realloc(p, 0),
 *                              malloc_usable_size, mallinfo2 deltas,
 *                              malloc_trim, reallocarray and calloc
 *                              overflow, memalign, aligned_alloc,
 *                              posix_memalign, valloc and pvalloc with odd
 *                              alignments
 *   semantics deepbind LIB N   LIB (spec/native/deeplib.c) opened with
 *                              RTLD_NOW | RTLD_DEEPBIND frees and reallocs
 *                              N of the program's blocks, and the program
 *                              frees and reallocs N of the library's
 *
 * On stderr (not compared): "tracking 1" when the tracker is loaded and
 * on, "separate-free 1" when the library's free is not the program's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long bad;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("bad: %s (line %d)\n", #cond, __LINE__);        \
			bad++;                                                 \
		}                                                              \
	} while (0)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 7);
}

static int holds(const unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(seed + i * 7))
			return 0;
	return 1;
}

/* Sizes the compiler cannot see (no warning on purpose-made overflows),
 * and a place that keeps a block alive in its eyes (no malloc-free pair
 * optimised away). */
static volatile size_t big = SIZE_MAX;
static void *volatile sink;

static void *seen(void *p)
{
	sink = p;
	return sink;
}

static size_t in_use(void)
{
	return mallinfo2().uordblks;
}

/* Sizes past the tcache's (1032 bytes) and below the mmap threshold, so
 * that mallinfo2's in-use bytes move by the chunk sizes. */
static void check(void)
{
	/* realloc(p, 0) frees p and returns NULL; 100,000 of them hold no
	 * memory. */
	void *p = malloc(5000);
	CHECK(p != NULL);
	size_t before = in_use();
	void *r = realloc(p, 0);
	printf("realloc(p, 0): %s, in use %+ld\n", r == NULL ? "NULL" : "a block",
	       (long)(in_use() - before));
	before = in_use();
	for (int i = 0; i < 100000; i++) {
		p = malloc(5000 + i % 64);
		CHECK(p != NULL);
		sink = realloc(p, 0);
	}
	printf("100000 x realloc(malloc(5000), 0): in use %+ld\n",
	       (long)(in_use() - before));
	p = realloc(NULL, 0); /* malloc(0) */
	printf("realloc(NULL, 0): %s\n", p != NULL ? "a block" : "NULL");
	free(p);

	/* malloc_usable_size of blocks of many sizes (inside the block: the
	 * whole usable size can be written). */
	static const size_t sizes[] = {0, 1, 24, 25, 100, 1000, 1033, 5000,
				       100000, 200000, 1 << 20};
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		unsigned char *b = malloc(sizes[i]);
		size_t u = malloc_usable_size(b);
		memset(b, 0xab, u);
		printf("malloc_usable_size(malloc(%zu)) = %zu\n", sizes[i], u);
		b = realloc(b, sizes[i] + 10);
		printf("  after realloc(+10) = %zu\n", malloc_usable_size(b));
		free(b);
		b = calloc(1, sizes[i]);
		printf("  calloc = %zu\n", malloc_usable_size(b));
		free(b);
	}
	printf("malloc_usable_size(NULL) = %zu\n", malloc_usable_size(NULL));

	/* mallinfo2: a block's chunk, and its free. */
	before = in_use();
	p = seen(malloc(5000));
	printf("mallinfo2 after malloc(5000): in use %+ld\n",
	       (long)(in_use() - before));
	free(p);
	printf("  after free: %+ld\n", (long)(in_use() - before));

	/* malloc_trim: blocks survive it. */
	unsigned char *keep[64];
	for (int i = 0; i < 64; i++) {
		keep[i] = malloc(2000 + i);
		fill(keep[i], 2000 + i, i);
	}
	for (int i = 0; i < 64; i += 2)
		free(keep[i]);
	malloc_trim(0);
	int ok = 1;
	for (int i = 1; i < 64; i += 2) {
		ok &= holds(keep[i], 2000 + i, i);
		free(keep[i]);
	}
	printf("malloc_trim: blocks kept %s\n", ok ? "whole" : "broken");

	/* Overflows: NULL and ENOMEM, the block as it was. */
	errno = 0;
	p = reallocarray(NULL, big / 2, 3);
	printf("reallocarray(NULL, big / 2, 3): %s, %s\n",
	       p ? "a block" : "NULL", errno == ENOMEM ? "ENOMEM" : "other");
	unsigned char *a = malloc(100);
	fill(a, 100, 3);
	errno = 0;
	p = reallocarray(seen(a), big / 4, 8);
	printf("reallocarray(p, SIZE_MAX / 4, 8): %s, %s, p %s\n",
	       p ? "a block" : "NULL", errno == ENOMEM ? "ENOMEM" : "other",
	       holds(a, 100, 3) ? "whole" : "broken");
	a = reallocarray(seen(a), 300, 10);
	printf("reallocarray(p, 300, 10): %s, usable %zu\n",
	       a != NULL && holds(a, 100, 3) ? "moved whole" : "broken",
	       malloc_usable_size(a));
	errno = 0;
	p = realloc(seen(a), big - 100);
	printf("realloc(p, SIZE_MAX - 100): %s, %s, p %s\n",
	       p ? "a block" : "NULL", errno == ENOMEM ? "ENOMEM" : "other",
	       holds(a, 100, 3) ? "whole" : "broken");
	free(seen(a));
	errno = 0;
	p = calloc(big / 2, 3);
	printf("calloc(SIZE_MAX / 2, 3): %s, %s\n", p ? "a block" : "NULL",
	       errno == ENOMEM ? "ENOMEM" : "other");
	errno = 0;
	p = malloc(big - 4096);
	printf("malloc(SIZE_MAX - 4096): %s, %s\n", p ? "a block" : "NULL",
	       errno == ENOMEM ? "ENOMEM" : "other");

	/* Alignments, odd ones included: the result's alignment (the
	 * largest power of two up to 4096 dividing it) and errors. */
	static const size_t aligns[] = {0, 1, 3, 8, 24, 48, 100, 4096, 12288};
	for (size_t i = 0; i < sizeof aligns / sizeof *aligns; i++) {
		size_t al = aligns[i];
		errno = 0;
		void *m = memalign(al, 100);
		int e1 = errno;
		errno = 0;
		void *aa = aligned_alloc(al, 96);
		int e2 = errno;
		void *pm = NULL;
		int rc = posix_memalign(&pm, al, 100);
		unsigned long ma = 0, aaa = 0, pma = 0;
		for (unsigned long k = 4096; k >= 1 && m; k /= 2)
			if ((uintptr_t)m % k == 0) { ma = k; break; }
		for (unsigned long k = 4096; k >= 1 && aa; k /= 2)
			if ((uintptr_t)aa % k == 0) { aaa = k; break; }
		for (unsigned long k = 4096; k >= 1 && rc == 0; k /= 2)
			if ((uintptr_t)pm % k == 0) { pma = k; break; }
		/* At least what was asked, when it is a power of two. */
		printf("align %zu: memalign %s (%s, aligned %s), aligned_alloc %s "
		       "(%s, aligned %s), posix_memalign %d (aligned %s)\n", al,
		       m ? "a block" : "NULL", e1 == 0 ? "-" : strerror(e1),
		       m == NULL ? "-" : ma >= (al & -al) ? "yes" : "no",
		       aa ? "a block" : "NULL", e2 == 0 ? "-" : strerror(e2),
		       aa == NULL ? "-" : aaa >= (al & -al) ? "yes" : "no",
		       rc, rc != 0 ? "-" : pma >= al ? "yes" : "no");
		if (m) {
			memset(m, 1, 100);
			m = realloc(m, 300); /* an aligned block reallocs */
			free(m);
		}
		free(aa);
		if (rc == 0)
			free(pm);
	}
	void *v = valloc(100), *pv = pvalloc(100);
	printf("valloc(100): page-aligned %s; pvalloc(100): page-aligned %s, usable %s\n",
	       (uintptr_t)v % 4096 == 0 ? "yes" : "no",
	       (uintptr_t)pv % 4096 == 0 ? "yes" : "no",
	       malloc_usable_size(pv) >= 4096 ? ">= 4096" : "< 4096");
	free(v);
	free(pv);
}

/* The library's glibc free and realloc on the program's blocks, and the
 * program's on the library's. */
static void deepbind(const char *lib, unsigned long n)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_DEEPBIND);
	if (h == NULL) {
		printf("dlopen: %s\n", dlerror());
		bad++;
		return;
	}
	void (*dfree)(void *) = (void (*)(void *))dlsym(h, "deep_free");
	void *(*drealloc)(void *, size_t) =
		(void *(*)(void *, size_t))dlsym(h, "deep_realloc");
	void *(*dmalloc)(size_t) = (void *(*)(size_t))dlsym(h, "deep_malloc");
	void *(*dfree_at)(void) = (void *(*)(void))dlsym(h, "deep_free_address");
	fprintf(stderr, "separate-free %d\n", dfree_at() != (void *)free);
	unsigned long ok = 0;
	for (unsigned long i = 0; i < n; i++) {
		size_t a = 16 + i % 3000, b = 16 + (i * 13) % 6000;
		/* the program's block, freed by the library */
		unsigned char *p = malloc(a);
		fill(p, a, (unsigned)i);
		dfree(p);
		/* the program's block, realloc'ed by the library (grown or
		 * shrunk), then freed by the program */
		p = malloc(a);
		fill(p, a, (unsigned)i);
		p = drealloc(p, b);
		int good = p != NULL && holds(p, a < b ? a : b, (unsigned)i);
		free(p);
		/* the library's block, realloc'ed by the program and freed
		 * by the library */
		unsigned char *q = dmalloc(a);
		q = realloc(q, b);
		good &= q != NULL && q[0] == 0x5a && q[(a < b ? a : b) - 1] == 0x5a;
		dfree(q);
		/* the library's block freed by the program; the library's
		 * realloc(p, 0) of the program's block */
		free(dmalloc(b));
		p = malloc(b);
		good &= drealloc(p, 0) == NULL;
		/* an aligned block of the program's, freed by the library */
		void *m = NULL;
		good &= posix_memalign(&m, 64, a) == 0;
		dfree(m);
		ok += good;
	}
	printf("deepbind: %lu of %lu rounds whole\n", ok, n);
	dlclose(h);
}

/* Whether a block of n bytes, freed full of 0xab and asked for again,
 * comes back with its earlier contents (glibc gives the same chunk back
 * from its tcache or bins; its first 16 bytes hold glibc's links). */
static void stale(size_t n)
{
	volatile unsigned char *p = malloc(n);
	for (size_t i = 0; i < n; i++) /* volatile: not dropped before free */
		p[i] = 0xab;
	free((void *)p);
	volatile unsigned char *q = malloc(n);
	printf("%zu bytes: %s %s\n", n,
	       (void *)q == (void *)p ? "same" : "other",
	       q[n / 2] == 0xab ? "stale"
	       : q[n / 2] == 0	? "cleared"
				: "other");
	free((void *)q);
}

int main(int argc, char **argv)
{
	int (*tracking)(void) =
		(int (*)(void))dlsym(RTLD_DEFAULT, "vmheap_native_tracking");
	fprintf(stderr, "tracking %d\n", tracking != NULL && tracking());
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		check();
	else if (argc >= 2 && strcmp(argv[1], "stale") == 0) {
		stale(1000);
		stale(32000);
		stale(40000);
	} else if (argc >= 4 && strcmp(argv[1], "deepbind") == 0)
		deepbind(argv[2], strtoul(argv[3], NULL, 10));
	else
		return 2;
	printf("bad %lu\n", bad);
	return bad != 0;
}
