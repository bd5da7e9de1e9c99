/*
 * ruby_name_strings.c - each name text of a dump as one string record.
 *
 * A text's 64-bit hash (FNV-1a) is the key of a ruby_class_table, which
 * gives each text a dense index, and the index its string id.  The texts
 * are kept (in one arena) to tell two texts of one hash apart: the second
 * then takes the key hash * K + 1, and so on, so a collision costs a
 * probe, never a wrong name.  C heap only.
 *
 * Two id ranges: names of references count up from first_id, so the
 * names used most (by many objects) have small ids that take 1 or 2
 * bytes in each object record; names first used by a root (each used
 * about once: a global, a class) count up from RUBY_NAME_ROOT_IDS and
 * leave the small ids to the references.
 */
#include "ruby-internal.h"

#include <stdlib.h>
#include <string.h>

void ruby_name_strings_init(struct ruby_name_strings *s, vmheap_writer *w,
			    uint64_t first_id)
{
	memset(s, 0, sizeof(*s));
	s->w = w;
	s->next_id[0] = first_id;
	s->next_id[1] = RUBY_NAME_ROOT_IDS;
	ruby_class_table_init(&s->index);
}

static uint64_t hash_text(const char *t, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)t[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Keep text as the text of dense index d. */
static int keep(struct ruby_name_strings *s, uint32_t d, const char *text,
		size_t len)
{
	if (d >= s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		size_t *off = realloc(s->off, cap * sizeof(*off));
		size_t *lens = off ? realloc(s->len, cap * sizeof(*lens)) : NULL;
		uint64_t *ids = lens ? realloc(s->id, cap * sizeof(*ids)) : NULL;

		if (off)
			s->off = off;
		if (lens)
			s->len = lens;
		if (!ids)
			return -1;
		s->id = ids;
		s->cap = cap;
	}
	if (s->arena_len + len > s->arena_cap) {
		size_t cap = s->arena_cap ? s->arena_cap : 65536;
		char *a;

		while (cap < s->arena_len + len)
			cap *= 2;
		a = realloc(s->arena, cap);
		if (!a)
			return -1;
		s->arena = a;
		s->arena_cap = cap;
	}
	memcpy(s->arena + s->arena_len, text, len);
	s->off[d] = s->arena_len;
	s->len[d] = len;
	s->arena_len += len;
	return 0;
}

int ruby_name_strings_id(struct ruby_name_strings *s, const char *text,
			 size_t len, int root, uint64_t *id)
{
	uint64_t key = hash_text(text, len);
	uint32_t d;
	int rc;

	for (;; key = key * 0x9E3779B97F4A7C15ull + 1) {
		if (!key)
			continue; /* the table's empty key */
		d = ruby_class_table_get(&s->index, key);
		if (!d)
			break;
		if (s->len[d] == len &&
		    memcmp(s->arena + s->off[d], text, len) == 0) {
			*id = s->id[d];
			return 0;
		}
	}
	d = ruby_class_table_add(&s->index, key);
	if (!d || keep(s, d, text, len) < 0)
		return VMHEAP_ENOMEM;
	*id = s->id[d] = s->next_id[root ? 1 : 0]++;
	rc = vmheap_writer_add_string(s->w, *id, text, len);
	return rc < 0 ? rc : 0;
}

void ruby_name_strings_free(struct ruby_name_strings *s)
{
	ruby_class_table_free(&s->index);
	free(s->off);
	free(s->len);
	free(s->id);
	free(s->arena);
}
