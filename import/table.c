/*
 * table.c - a map from non-zero 64-bit ids (addresses) to fixed-size
 * values, for the converters' class and name tables (part of
 * libvmheap-import).  Open addressing, linear probing, at most half full.
 */
#include <stdlib.h>
#include <string.h>

#include "import-internal.h"

void imp_table_init(struct imp_table *t, size_t value_size)
{
	memset(t, 0, sizeof(*t));
	t->value_size = value_size;
}

void imp_table_free(struct imp_table *t)
{
	free(t->keys);
	free(t->values);
	imp_table_init(t, t->value_size);
}

static size_t home(uint64_t key, size_t cap)
{
	key ^= key >> 29;
	key *= 0xbf58476d1ce4e5b9ull;
	key ^= key >> 32;
	return (size_t)key & (cap - 1);
}

void *imp_table_get(const struct imp_table *t, uint64_t key)
{
	size_t i;

	if (!t->cap || !key)
		return NULL;
	for (i = home(key, t->cap); t->keys[i]; i = (i + 1) & (t->cap - 1))
		if (t->keys[i] == key)
			return imp_table_value(t, i);
	return NULL;
}

static int grow(struct imp_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256, i, j;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	unsigned char *values = calloc(cap, t->value_size);

	if (!keys || !values) {
		free(keys);
		free(values);
		return -1;
	}
	IMP_TABLE_FOR(t, i)
	{
		for (j = home(t->keys[i], cap); keys[j];
		     j = (j + 1) & (cap - 1))
			;
		keys[j] = t->keys[i];
		memcpy(values + j * t->value_size, imp_table_value(t, i),
		       t->value_size);
	}
	free(t->keys);
	free(t->values);
	t->keys = keys;
	t->values = values;
	t->cap = cap;
	return 0;
}

void *imp_table_put(struct imp_table *t, uint64_t key, int *created)
{
	size_t i;
	void *v = imp_table_get(t, key);

	*created = 0;
	if (v || !key)
		return v;
	if ((t->count + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	for (i = home(key, t->cap); t->keys[i]; i = (i + 1) & (t->cap - 1))
		;
	t->keys[i] = key;
	t->count++;
	*created = 1;
	return imp_table_value(t, i);
}
