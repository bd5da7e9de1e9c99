/*
 * census_names.c - the census's table of display names (see
 * census-internal.h).
 */
#include <stdlib.h>
#include <string.h>

#include "census-internal.h"

static size_t hash_name(const char *s)
{
	/* FNV-1a, then mixed: names are short */
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return (size_t)vmheap_map_hash(h, 0, 0);
}

static int namemap_grow(struct vmheap_namemap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	struct vmheap_namemap_slot *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].name)
			continue;
		size_t j = hash_name(m->slots[i].name) & (ncap - 1);
		while (ns[j].name)
			j = (j + 1) & (ncap - 1);
		ns[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

size_t vmheap_namemap_intern(struct vmheap_namemap *m, const char *name,
			     size_t next_index, int *added, const char **stored)
{
	*added = 0;
	if ((m->len + 1) * 2 > m->cap && namemap_grow(m) < 0)
		return (size_t)-1;
	size_t mask = m->cap - 1, i = hash_name(name) & mask;
	while (m->slots[i].name) {
		if (!strcmp(m->slots[i].name, name)) {
			if (stored)
				*stored = m->slots[i].name;
			return m->slots[i].index;
		}
		i = (i + 1) & mask;
	}
	char *copy = strdup(name);
	if (!copy)
		return (size_t)-1;
	m->slots[i].name = copy;
	m->slots[i].index = next_index;
	m->len++;
	*added = 1;
	if (stored)
		*stored = copy;
	return next_index;
}

void vmheap_namemap_release(struct vmheap_namemap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].name);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}
