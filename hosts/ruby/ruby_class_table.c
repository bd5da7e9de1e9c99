/*
 * ruby_class_table.c - a map from class VALUE to a dense class id.
 *
 * Open addressing with linear probing over a power-of-two table kept at
 * most half full.  Only the C heap is used: the walk that fills it must
 * not allocate Ruby objects.
 */
#include <stdlib.h>

#include "ruby-internal.h"

#define INITIAL_CAP 1024

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Class VALUEs are 8-byte aligned: mix the bits (Fibonacci hash). */
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

void ruby_class_table_init(struct ruby_class_table *t)
{
	t->keys = NULL;
	t->ids = NULL;
	t->cap = 0;
	t->count = 0;
}

uint32_t ruby_class_table_get(const struct ruby_class_table *t, uint64_t key)
{
	size_t i;

	if (!t->cap)
		return 0;
	for (i = slot_of(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->keys[i] == key)
			return t->ids[i];
		if (t->keys[i] == 0)
			return 0;
	}
}

static void put(uint64_t *keys, uint32_t *ids, size_t cap, uint64_t key,
		uint32_t id)
{
	size_t i = slot_of(key, cap);

	while (keys[i] != 0)
		i = (i + 1) & (cap - 1);
	keys[i] = key;
	ids[i] = id;
}

static int grow(struct ruby_class_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : INITIAL_CAP;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint32_t *ids = calloc(cap, sizeof(*ids));
	size_t i;

	if (!keys || !ids) {
		free(keys);
		free(ids);
		return -1;
	}
	for (i = 0; i < t->cap; i++)
		if (t->keys[i])
			put(keys, ids, cap, t->keys[i], t->ids[i]);
	free(t->keys);
	free(t->ids);
	t->keys = keys;
	t->ids = ids;
	t->cap = cap;
	return 0;
}

uint32_t ruby_class_table_add(struct ruby_class_table *t, uint64_t key)
{
	uint32_t id;

	if ((t->count + 1) * 2 > t->cap && grow(t) < 0)
		return 0;
	id = (uint32_t)++t->count;
	put(t->keys, t->ids, t->cap, key, id);
	return id;
}

void ruby_class_table_free(struct ruby_class_table *t)
{
	free(t->keys);
	free(t->ids);
	ruby_class_table_init(t);
}
