/*
 * files.c - the VM source files that native stacks name (the location
 * hook).
 *
 * Each distinct path is copied once into memory from mmap that is never
 * given back, so that the copy's address is the file's identity (a stack
 * compares pointers) and stays valid for the life of the process, through
 * stops and starts.  The copies are found through one hash table under one
 * lock; a thread remembers the file it named last, and a VM runs many
 * allocations from one file, so most lookups take no lock.
 */
#include <pthread.h>
#include <string.h>

#include "native-internal.h"

#define ARENA_BYTES 65536
#define FIRST_CAP 256

struct name {
	uint64_t hash;
	size_t len;
	char s[]; /* NUL-terminated */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct name **table; /* open addressing, at most half full */
static size_t cap, count;
static char *arena;
static size_t arena_left;

static __thread struct name *last NATIVE_TLS;

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int same(const struct name *m, const char *s, size_t n)
{
	return m->len == n && memcmp(m->s, s, n) == 0;
}

static int grow(void)
{
	if (table != NULL && (count + 1) * 2 <= cap)
		return 0;
	size_t ncap = cap ? cap * 2 : FIRST_CAP;
	struct name **t = native_pages(ncap * sizeof *t);
	if (t == NULL)
		return -1;
	for (size_t i = 0; i < cap; i++) {
		if (table[i] == NULL)
			continue;
		size_t j = table[i]->hash & (ncap - 1);
		while (t[j] != NULL)
			j = (j + 1) & (ncap - 1);
		t[j] = table[i];
	}
	native_pages_free(table, cap * sizeof *table);
	table = t;
	cap = ncap;
	return 0;
}

/* A copy of s in the arena, or NULL. */
static struct name *copy(const char *s, size_t n, uint64_t h)
{
	size_t need = (sizeof(struct name) + n + 1 + 7) & ~(size_t)7;
	if (need > arena_left) {
		size_t bytes = need > ARENA_BYTES ? need : ARENA_BYTES;
		char *a = native_pages(bytes);
		if (a == NULL)
			return NULL;
		arena = a; /* the rest of the old arena stays unused */
		arena_left = bytes;
	}
	struct name *m = (struct name *)(void *)arena;
	arena += need;
	arena_left -= need;
	m->hash = h;
	m->len = n;
	memcpy(m->s, s, n);
	m->s[n] = '\0';
	return m;
}

const char *native_file_intern(const char *s)
{
	size_t n = strlen(s);
	struct name *m = last;

	if (m != NULL && same(m, s, n))
		return m->s;
	uint64_t h = hash_bytes(s, n);
	m = NULL;
	pthread_mutex_lock(&lock);
	if (table != NULL) {
		size_t mask = cap - 1;
		for (size_t i = h & mask; table[i] != NULL; i = (i + 1) & mask)
			if (table[i]->hash == h && same(table[i], s, n)) {
				m = table[i];
				goto out;
			}
	}
	if (grow() != 0 || (m = copy(s, n, h)) == NULL)
		goto out;
	size_t i = h & (cap - 1);
	while (table[i] != NULL)
		i = (i + 1) & (cap - 1);
	table[i] = m;
	count++;
out:
	pthread_mutex_unlock(&lock);
	if (m == NULL)
		return NULL;
	last = m;
	return m->s;
}

void native_files_lock(void)
{
	pthread_mutex_lock(&lock);
}

void native_files_unlock(void)
{
	pthread_mutex_unlock(&lock);
}
