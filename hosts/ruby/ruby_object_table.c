/*
 * ruby_object_table.c - object (VALUE) -> allocation site id, for the
 * allocation tracer.
 *
 * Open addressing with linear probing over a power-of-two table kept at
 * most half full; removal shifts the entries that follow back into the
 * hole (no tombstones), so that a table whose objects keep dying stays
 * short.  Keys and site ids live in one 16-byte slot array, so a lookup
 * touches one cache line.  C heap only (see ruby_site_table.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ruby-internal.h"

#define INITIAL_BITS 12

static size_t home(const struct ruby_object_table *t, uint64_t key)
{
	/* Fibonacci hashing: the top bits of the product */
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - t->bits));
}

void ruby_object_table_init(struct ruby_object_table *t)
{
	memset(t, 0, sizeof(*t));
}

static void put(struct ruby_object_table *t, uint64_t key, uint32_t site)
{
	size_t mask = t->cap - 1, i = home(t, key);

	while (t->slots[i].key)
		i = (i + 1) & mask;
	t->slots[i].key = key;
	t->slots[i].site = site;
}

static int grow(struct ruby_object_table *t)
{
	struct ruby_object_table bigger = *t;
	size_t i;

	bigger.bits = t->bits ? t->bits + 1 : INITIAL_BITS;
	bigger.cap = (size_t)1 << bigger.bits;
	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -1;
	for (i = 0; i < t->cap; i++)
		if (t->slots[i].key)
			put(&bigger, t->slots[i].key, t->slots[i].site);
	free(t->slots);
	*t = bigger;
	return 0;
}

int ruby_object_table_set(struct ruby_object_table *t, uint64_t key,
			  uint32_t site)
{
	size_t mask, i;

	if ((t->count + 1) * 2 > t->cap && grow(t) < 0)
		return -1;
	mask = t->cap - 1;
	for (i = home(t, key); t->slots[i].key; i = (i + 1) & mask) {
		if (t->slots[i].key == key) {
			t->slots[i].site = site;
			return 0;
		}
	}
	t->slots[i].key = key;
	t->slots[i].site = site;
	t->count++;
	return 0;
}

uint32_t ruby_object_table_get(const struct ruby_object_table *t, uint64_t key)
{
	size_t mask, i;

	if (!t->count)
		return 0;
	mask = t->cap - 1;
	for (i = home(t, key); t->slots[i].key; i = (i + 1) & mask)
		if (t->slots[i].key == key)
			return t->slots[i].site;
	return 0;
}

void ruby_object_table_remove(struct ruby_object_table *t, uint64_t key)
{
	size_t mask, i, j;

	if (!t->count)
		return;
	mask = t->cap - 1;
	for (i = home(t, key); t->slots[i].key != key; i = (i + 1) & mask)
		if (!t->slots[i].key)
			return;
	/* Shift back every entry after the hole that may move into it:
	 * one whose home is not cyclically in (i, j]. */
	for (j = (i + 1) & mask; t->slots[j].key; j = (j + 1) & mask) {
		size_t h = home(t, t->slots[j].key);

		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		t->slots[i] = t->slots[j];
		i = j;
	}
	t->slots[i].key = 0;
	t->slots[i].site = 0;
	t->count--;
}

size_t ruby_object_table_bytes(const struct ruby_object_table *t)
{
	return t->cap * sizeof(*t->slots);
}

void ruby_object_table_free(struct ruby_object_table *t)
{
	free(t->slots);
	ruby_object_table_init(t);
}
