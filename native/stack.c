/*
 * stack.c - the caller's stack.
 *
 * Two ways, chosen at start by VMHEAP_NATIVE_UNWIND:
 *   (default) libunwind's unw_backtrace, which reads the unwind tables
 *             (.eh_frame), so it walks through code built without frame
 *             pointers: Debian's glibc and ruby are;
 *   fp        the frame-pointer chain, bounded by the thread's stack; it
 *             stops early (or goes astray) in such code.  Kept for the
 *             benchmark that justified the choice (bench/RESULTS.md).
 * The tracker's own frames (its code range) are dropped from the top.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "native-internal.h"

static uint64_t self_lo, self_hi; /* the tracker's code */
static int use_fp;

static __thread uintptr_t stack_lo, stack_hi
	__attribute__((tls_model("initial-exec")));

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
	dl_iterate_phdr(find_self, (void *)(uintptr_t)native_stack_init);
	const char *how = getenv("VMHEAP_NATIVE_UNWIND");
	use_fp = how != NULL && strcmp(how, "fp") == 0;
	if (!use_fp)
		unw_set_caching_policy(unw_local_addr_space,
				       UNW_CACHE_PER_THREAD);
}

/* The thread's stack bounds, once per thread. */
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

unsigned native_stack(uint64_t *frames, unsigned max)
{
	void *raw[VMHEAP_NATIVE_MAX_FRAMES + 8];
	unsigned want = max + 8 > sizeof raw / sizeof *raw
				? sizeof raw / sizeof *raw : max + 8;
	int got = use_fp ? (int)fp_walk(raw, want)
			 : unw_backtrace(raw, (int)want);
	unsigned n = 0;
	int i = 0;
	while (i < got && (uint64_t)(uintptr_t)raw[i] >= self_lo &&
	       (uint64_t)(uintptr_t)raw[i] < self_hi)
		i++;
	for (; i < got && n < max; i++)
		frames[n++] = (uint64_t)(uintptr_t)raw[i];
	if (n == 0)
		frames[n++] = 0; /* an unknown caller is still a site */
	return n;
}
