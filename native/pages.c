/* pages.c - the tracker's own memory comes from mmap, never malloc. */
#include <sys/mman.h>

#include "native-internal.h"

static _Atomic uint64_t mapped;

void *native_pages(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	atomic_fetch_add_explicit(&mapped, bytes, memory_order_relaxed);
	return p;
}

void native_pages_free(void *p, size_t bytes)
{
	if (p == NULL)
		return;
	munmap(p, bytes);
	atomic_fetch_sub_explicit(&mapped, bytes, memory_order_relaxed);
}

uint64_t native_pages_bytes(void)
{
	return atomic_load_explicit(&mapped, memory_order_relaxed);
}

void *native_pages_once(void *_Atomic *slot, size_t bytes)
{
	void *p = atomic_load_explicit(slot, memory_order_acquire);
	if (p != NULL)
		return p;
	void *none = NULL, *mem = native_pages(bytes);
	if (mem == NULL)
		return NULL;
	if (atomic_compare_exchange_strong(slot, &none, mem))
		return mem;
	native_pages_free(mem, bytes); /* another thread mapped it first */
	return none;
}
