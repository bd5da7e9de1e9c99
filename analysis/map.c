/*
 * map.c - growing libvmheap-analysis's hash table (see map-internal.h).
 */
#include <stdlib.h>

#include "map-internal.h"

/* Double the capacity (64 to start with); -1 when out of memory. */
static int grow(struct vmheap_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64, mask = ncap - 1;
	struct vmheap_map_slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		struct vmheap_map_slot *s = &m->slots[i];
		if (!s->used)
			continue;
		size_t j = vmheap_map_hash(s->key, s->key2, s->tag) & mask;
		while (ns[j].used)
			j = (j + 1) & mask;
		ns[j] = *s;
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

struct vmheap_map_slot *vmheap_map_upsert_grow(struct vmheap_map *m,
					       uint64_t key, uint64_t key2,
					       uint32_t tag)
{
	while (!m->cap || (m->len + 1) * 4 > m->cap * 3)
		if (grow(m) < 0)
			return NULL;
	return vmheap_map_upsert(m, key, key2, tag);
}

void vmheap_map_release(struct vmheap_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}
