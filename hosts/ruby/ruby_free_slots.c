/*
 * ruby_free_slots.c - in a dump's forked child, before the malloc
 * tracker's leak scan: the stale words of Ruby's free heap slots are
 * zeroed.
 *
 * The scan reads Ruby's heap pages as memory that may hold pointers (they
 * are roots when allocated before tracking began, reachable blocks
 * after).  A slot that GC freed keeps its object's last words past the
 * free-list link: a String's or an Array's pointer to its malloc'd body,
 * long freed, whose address a newer block may have taken, which that
 * stale word then keeps "reachable".  A free slot's flags are 0; its
 * second word is the free list's link; the rest is garbage to Ruby, so
 * zeroing it in the child (a private copy) changes nothing the walk
 * reads.  Only while the tracker tracks (no scan otherwise), and only
 * words that are not already 0 (a page written is a page copied).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "ruby-internal.h"

#define FREE_LINK_WORDS 2 /* flags (0) and the free list's next */

static int clear_page(void *start, void *end, size_t stride, void *data)
{
	(void)data;
	for (uintptr_t p = (uintptr_t)start; p < (uintptr_t)end; p += stride) {
		if (RBASIC((VALUE)p)->flags)
			continue; /* a live object, or T_ZOMBIE, T_MOVED */
		uint64_t *w = (uint64_t *)p;
		for (size_t i = FREE_LINK_WORDS; i < stride / sizeof(*w); i++)
			if (w[i] != 0)
				w[i] = 0;
	}
	return 0;
}

void ruby_clear_free_slots(void)
{
	int (*tracking)(void) =
	    (int (*)(void))dlsym(RTLD_DEFAULT, "vmheap_native_tracking");

	if (!tracking || !tracking())
		return;
	rb_objspace_each_objects(clear_page, NULL);
}
