/*
 * graph_classes.c - the class table of vmheap_graph: class ids met in class and
 * object records, a hash from id to index, and the names.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dULL;
	x ^= x >> 33;
	return x;
}

uint32_t graph_class_lookup(const vmheap_graph *g, uint64_t id)
{
	size_t mask = g->class_hash_cap - 1;

	if (!g->class_hash_cap)
		return UINT32_MAX;
	for (size_t h = mix64(id) & mask;; h = (h + 1) & mask) {
		uint32_t slot = g->class_hash[h];
		if (slot == 0)
			return UINT32_MAX;
		if (g->classes[slot - 1].id == id)
			return slot - 1;
	}
}

static void class_hash_put(uint32_t *table, size_t cap, uint64_t id,
			   uint32_t index)
{
	size_t mask = cap - 1, h = mix64(id) & mask;

	while (table[h])
		h = (h + 1) & mask;
	table[h] = index + 1;
}

uint32_t graph_class_intern(vmheap_graph *g, uint64_t id)
{
	uint32_t c = graph_class_lookup(g, id);

	if (c != UINT32_MAX)
		return c;
	if (g->nclasses >= UINT32_MAX - 1)
		return UINT32_MAX;
	if (2 * (g->nclasses + 1) > g->class_hash_cap) {
		size_t cap = g->class_hash_cap ? g->class_hash_cap * 2 : 64;
		uint32_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return UINT32_MAX;
		for (size_t k = 0; k < g->nclasses; k++)
			class_hash_put(t, cap, g->classes[k].id, (uint32_t)k);
		free(g->class_hash);
		g->class_hash = t;
		g->class_hash_cap = cap;
	}
	if (g->nclasses == g->classes_cap) {
		void *p = vmheap_array_grow(g->classes, &g->classes_cap,
					    sizeof(*g->classes), 64);
		if (!p)
			return UINT32_MAX;
		g->classes = p;
	}
	c = (uint32_t)g->nclasses++;
	g->classes[c] = (struct graph_class){.id = id};
	class_hash_put(g->class_hash, g->class_hash_cap, id, c);
	return c;
}

const char *vmheap_graph_class_name(const vmheap_graph *g, uint64_t class_id,
				    size_t *len)
{
	uint32_t c = graph_class_lookup(g, class_id);

	if (c == UINT32_MAX || !g->classes[c].has_name) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = g->classes[c].name_len;
	return g->names + g->classes[c].name_off;
}

size_t vmheap_graph_class_count(const vmheap_graph *g)
{
	return g->nclasses;
}

uint64_t vmheap_graph_class_id(const vmheap_graph *g, size_t c)
{
	return g->classes[c].id;
}
