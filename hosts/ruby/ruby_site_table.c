/*
 * ruby_site_table.c - allocation sites (file, line, method) interned to
 * dense ids starting at 1.
 *
 * The sites are kept in an array (id - 1) with copies of their text; an
 * open-addressing index of ids, hashed on the text and the line, finds a
 * site by content.  C heap only: the allocation tracer interns from
 * inside MRI's NEWOBJ hook, where no Ruby object may be made.
 */
#include <stdlib.h>
#include <string.h>

#include "ruby-internal.h"

#define INITIAL_SLOTS 256

static uint64_t hash_bytes(uint64_t h, const char *s, size_t len)
{
	/* FNV-1a, 64 bits */
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t ruby_site_hash(const char *file, size_t file_len, uint64_t line,
			const char *method, size_t method_len)
{
	uint64_t h = hash_bytes(0xcbf29ce484222325ull, file, file_len);

	h = hash_bytes(h ^ (line * 0x9E3779B97F4A7C15ull), method, method_len);
	return h ^ (h >> 29);
}

void ruby_site_table_init(struct ruby_site_table *t)
{
	memset(t, 0, sizeof(*t));
}

static int same(const struct ruby_site *s, const char *file, size_t file_len,
		uint64_t line, const char *method, size_t method_len)
{
	return s->line == line && s->file_len == file_len &&
	       s->method_len == method_len &&
	       memcmp(s->file, file, file_len) == 0 &&
	       memcmp(s->method, method, method_len) == 0;
}

static int grow_slots(struct ruby_site_table *t)
{
	size_t n = t->nslots ? t->nslots * 2 : INITIAL_SLOTS;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t id = 1; id <= t->count; id++) {
		size_t i = (size_t)t->sites[id - 1].hash & (n - 1);

		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = (uint32_t)id;
	}
	free(t->slots);
	t->bytes += (n - t->nslots) * sizeof(*slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

static char *copy(const char *s, size_t len)
{
	char *c = malloc(len + 1);

	if (c) {
		memcpy(c, s, len);
		c[len] = '\0';
	}
	return c;
}

uint32_t ruby_site_table_intern(struct ruby_site_table *t, const char *file,
				size_t file_len, uint64_t line,
				const char *method, size_t method_len,
				int *added)
{
	uint64_t h = ruby_site_hash(file, file_len, line, method, method_len);
	struct ruby_site *s;
	size_t i;

	*added = 0;
	if (t->nslots) {
		for (i = (size_t)h & (t->nslots - 1); t->slots[i];
		     i = (i + 1) & (t->nslots - 1)) {
			s = &t->sites[t->slots[i] - 1];
			if (s->hash == h &&
			    same(s, file, file_len, line, method, method_len))
				return t->slots[i];
		}
	}
	if (t->count >= UINT32_MAX - 1)
		return 0;
	if ((t->count + 1) * 2 > t->nslots && grow_slots(t) < 0)
		return 0;
	if (t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct ruby_site *sites =
		    realloc(t->sites, cap * sizeof(*sites));

		if (!sites)
			return 0;
		t->bytes += (cap - t->cap) * sizeof(*sites);
		t->sites = sites;
		t->cap = cap;
	}
	s = &t->sites[t->count];
	s->file = copy(file, file_len);
	s->method = copy(method, method_len);
	if (!s->file || !s->method) {
		free(s->file);
		free(s->method);
		return 0;
	}
	s->file_len = file_len;
	s->method_len = method_len;
	s->line = line;
	s->hash = h;
	t->bytes += file_len + method_len + 2;
	t->count++;
	for (i = (size_t)h & (t->nslots - 1); t->slots[i];
	     i = (i + 1) & (t->nslots - 1))
		;
	t->slots[i] = (uint32_t)t->count;
	*added = 1;
	return (uint32_t)t->count;
}

const struct ruby_site *ruby_site_table_get(const struct ruby_site_table *t,
					    uint32_t id)
{
	return id >= 1 && id <= t->count ? &t->sites[id - 1] : NULL;
}

void ruby_site_table_free(struct ruby_site_table *t)
{
	for (size_t i = 0; i < t->count; i++) {
		free(t->sites[i].file);
		free(t->sites[i].method);
	}
	free(t->sites);
	free(t->slots);
	ruby_site_table_init(t);
}
