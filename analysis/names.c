/*
 * names.c - the census's table of display names (see
 * analysis-internal.h), on the library's one hash table.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis-internal.h"

/* FNV-1a over the bytes of a NUL-terminated string (the map mixes it). */
static uint64_t hash_name(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

size_t vmheap_namemap_intern(struct vmheap_namemap *m, const char *name,
			     size_t next_index, int *added, const char **stored)
{
	uint64_t h = hash_name(name);

	*added = 0;
	for (uint64_t nth = 0;; nth++) {
		struct vmheap_map_slot *s =
		    vmheap_map_upsert(&m->map, h, nth, 0);
		if (!s)
			return (size_t)-1;
		if (s->a) {
			const char *held = (const char *)(uintptr_t)s->b;
			if (strcmp(held, name))
				continue; /* another name of the same hash */
			if (stored)
				*stored = held;
			return (size_t)(s->a - 1);
		}
		char *copy = strdup(name);
		if (!copy) /* the entry stays empty (a == 0): names are
			      only ever added at the first empty entry */
			return (size_t)-1;
		s->a = (uint64_t)next_index + 1;
		s->b = (uint64_t)(uintptr_t)copy;
		m->len++;
		*added = 1;
		if (stored)
			*stored = copy;
		return next_index;
	}
}

void vmheap_namemap_release(struct vmheap_namemap *m)
{
	for (size_t i = 0; i < m->map.cap; i++)
		if (m->map.slots[i].used && m->map.slots[i].a)
			free((char *)(uintptr_t)m->map.slots[i].b);
	vmheap_map_release(&m->map);
	m->len = 0;
}
