/* api.c - start, stop and the snapshots of vmheap_native.h. */
#include <pthread.h>
#include <string.h>

#include "native-internal.h"

/* One start or stop at a time. */
static pthread_mutex_t switch_lock = PTHREAD_MUTEX_INITIALIZER;

VMHEAP_EXPORT int vmheap_native_start(void)
{
	pthread_mutex_lock(&switch_lock);
	uint64_t s = atomic_load(&native_state);
	if (!NATIVE_ON(s)) {
		/* Anything an allocation of the last generation left behind
		 * after the stop's clear goes now; the next generation is
		 * odd: on. */
		native_live_clear();
		native_stacks_clear();
		atomic_store(&native_state, (s | 1u) + 2u);
	}
	pthread_mutex_unlock(&switch_lock);
	return 0;
}

VMHEAP_EXPORT void vmheap_native_stop(void)
{
	pthread_mutex_lock(&switch_lock);
	uint64_t s = atomic_load(&native_state);
	if (NATIVE_ON(s)) {
		/* Off first: from here no allocation adds a record (each
		 * checks the state under the stripe lock that the clear
		 * takes after this store). */
		atomic_store(&native_state, s & ~(uint64_t)1);
		native_live_clear();
		native_stacks_clear();
	}
	pthread_mutex_unlock(&switch_lock);
}

VMHEAP_EXPORT int vmheap_native_tracking(void)
{
	return NATIVE_ON(atomic_load(&native_state));
}

VMHEAP_EXPORT size_t vmheap_native_stacks(vmheap_native_stack *out, size_t cap)
{
	if (!vmheap_native_tracking())
		return 0;
	return native_stacks_copy(out, NULL, out == NULL ? 0 : cap);
}

VMHEAP_EXPORT void vmheap_native_get_totals(vmheap_native_totals *t)
{
	memset(t, 0, sizeof *t);
	if (!vmheap_native_tracking())
		return;
	native_stacks_sum(t);
	/* The tables (the live table holds every live block's record). */
	t->overhead_bytes = native_pages_bytes();
}

VMHEAP_EXPORT void vmheap_native_set_location(vmheap_native_location_fn fn)
{
	atomic_store_explicit(&native_location, fn, memory_order_release);
}
