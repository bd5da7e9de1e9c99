/*
 * ruby_sites.c - the allocation sites of a dump_all import: one site per
 * distinct ("file", "line", "method") of the objects allocated while
 * ObjectSpace.trace_object_allocations was on (part of libvmheap-import).
 *
 * The table is keyed by a 64-bit hash of the three; two sites with the
 * same hash take the next key of a fixed sequence, so every site is
 * compared by its text, never told apart by its hash alone.
 */
#include <stdlib.h>
#include <string.h>

#include "ruby_json-internal.h"

static uint64_t fnv(uint64_t h, const void *bytes, size_t n)
{
	const unsigned char *p = bytes;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

struct ruby_site *ruby_site_get(struct imp_table *t, const char *file,
				size_t file_len, uint64_t line,
				const char *method, size_t method_len,
				int *created)
{
	uint64_t key = 0xcbf29ce484222325ull;
	struct ruby_site *s;

	if (file_len > VMHEAP_MAX_STRING_BYTES)
		file_len = VMHEAP_MAX_STRING_BYTES;
	if (method_len > VMHEAP_MAX_STRING_BYTES)
		method_len = VMHEAP_MAX_STRING_BYTES;
	key = fnv(key, file, file_len);
	key = fnv(key, &line, sizeof(line));
	key = fnv(key, method, method_len);
	for (;;) {
		if (!key)
			key = 1;
		s = imp_table_put(t, key, created);
		if (!s)
			return NULL;
		if (*created) {
			/* one block: the file, a NUL, the method, a NUL */
			s->file = malloc(file_len + method_len + 2);
			if (!s->file)
				return NULL;
			memcpy(s->file, file, file_len);
			s->file[file_len] = '\0';
			s->method = s->file + file_len + 1;
			memcpy(s->method, method, method_len);
			s->method[method_len] = '\0';
			s->file_len = file_len;
			s->method_len = method_len;
			s->line = line;
			return s;
		}
		if (s->line == line && s->file_len == file_len &&
		    s->method_len == method_len &&
		    memcmp(s->file, file, file_len) == 0 &&
		    memcmp(s->method, method, method_len) == 0)
			return s;
		key = key * 0x9e3779b97f4a7c15ull + 1;
	}
}

void ruby_sites_free(struct imp_table *t)
{
	size_t i;

	IMP_TABLE_FOR(t, i)
	{
		struct ruby_site *s = imp_table_value(t, i);

		free(s->file); /* and the method, in the same block */
	}
	imp_table_free(t);
}
