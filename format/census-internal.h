/*
 * census-internal.h - the table of display names shared by the census
 * files of libvmheap (integer keys use vmheap_map.h).
 *
 * vmheap_namemap: NUL-terminated string -> index, strings copied into the
 * map; used to merge census rows by display name.
 */
#ifndef CENSUS_INTERNAL_H
#define CENSUS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap_map.h"

struct vmheap_namemap_slot {
	char *name;
	size_t index;
};

struct vmheap_namemap {
	struct vmheap_namemap_slot *slots;
	size_t cap, len;
};

/*
 * Index of `name` (NUL-terminated); when absent it is copied in with index
 * `next_index` and *added is set.  Returns the index, or (size_t)-1 when
 * out of memory.  *stored (if not NULL) receives the map's copy.
 */
size_t vmheap_namemap_intern(struct vmheap_namemap *m, const char *name,
			     size_t next_index, int *added,
			     const char **stored);

void vmheap_namemap_release(struct vmheap_namemap *m);

#endif /* CENSUS_INTERNAL_H */
