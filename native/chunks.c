/*
 * chunks.c - glibc's heap as the leak scan reads it (scan.c): which of
 * the chunks between two tracked blocks are free, so that the stale words
 * left in them are not taken for roots.
 *
 * A glibc chunk is a size word (8 bytes before the block; its low bits
 * are flags: 1 the previous chunk is in use, 2 mmapped, 4 not the main
 * arena) and the block; the next chunk starts `size` bytes after the
 * chunk, 16 bytes before its block.  A chunk is free when the next one's
 * "previous in use" bit is clear (the bins), when it is the top chunk
 * (it ends where its heap's mapping ends), or when it sits in a thread's
 * tcache: glibc writes its per-process random tcache key in the block's
 * second word then (glibc 2.34 on).  Fast-bin chunks look in use; the
 * child consolidates them first (malloc_trim), which marks them free.
 * Layout from glibc's malloc/malloc.c (2.36): this is read, never written.
 */
#include <malloc.h>
#include <string.h>

#include "native-internal.h"

#define MIN_CHUNK 32
#define CHUNK_FLAGS 7u
#define PREV_INUSE 1u
#define IS_MMAPPED 2u

static uint64_t word_at(uint64_t a)
{
	uint64_t w;
	memcpy(&w, (const void *)(uintptr_t)a, sizeof w);
	return w;
}

void native_chunks_prepare(struct native_chunks *c)
{
	memset(c, 0, sizeof *c);
	/* Fast-bin chunks into the bins (a private copy: the VM keeps its
	 * heap as it was; the pages of free chunks are dropped in the child
	 * only). */
	malloc_trim(0);
	/* The tcache key: what glibc writes in the second word of a block
	 * that goes into the tcache.  Two sizes must agree, and the key must
	 * not be 0, else there is no tcache (a tunable switched it off) and
	 * no chunk is taken for free by its key. */
	uint64_t key[2] = {0, 0};
	for (int i = 0; i < 2; i++) {
		void *p = __libc_malloc(i ? 72 : 40);
		if (p == NULL)
			return;
		__libc_free(p);
		key[i] = word_at((uint64_t)(uintptr_t)p + 8);
	}
	if (key[0] == key[1] && key[0] != 0)
		c->tcache_key = key[0];
}

uint64_t native_chunk_next_header(uint64_t block)
{
	uint64_t size = word_at(block - 8);
	if (size & IS_MMAPPED)
		return 0;
	return block - 16 + (size & ~(uint64_t)CHUNK_FLAGS);
}

/* One walk from chunk `at` up to chunk `to` (exclusive) inside the heap
 * mapping that ends at `end`: calls span(block, chunk end) for each free
 * chunk when `span` is not NULL; returns 0 when the walk lands exactly
 * on `to`, -1 when a size word does not fit. */
static int walk(const struct native_chunks *c, uint64_t at, uint64_t to,
		uint64_t end, native_chunk_span_fn span, void *arg)
{
	while (at < to) {
		if (at + 16 > end)
			return -1;
		uint64_t size = word_at(at + 8);
		if (size & IS_MMAPPED)
			return -1;
		size &= ~(uint64_t)CHUNK_FLAGS;
		if (size < MIN_CHUNK || size % 16 != 0 || size > end - at ||
		    at + size > to)
			return -1;
		uint64_t next = at + size;
		int is_free;
		if (next == end)
			is_free = 1; /* the top chunk */
		else if (next + 16 > end)
			return -1;
		else
			is_free = !(word_at(next + 8) & PREV_INUSE) ||
				  (c->tcache_key &&
				   word_at(at + 24) == c->tcache_key);
		/* (and the next chunk's first word: the free chunk's last
		 * usable word, which a tcache chunk leaves as the program
		 * wrote it) */
		if (is_free && span)
			span(at + 16, next == end ? next : next + 8, arg);
		at = next;
	}
	return at == to ? 0 : -1;
}

int native_chunks_free(const struct native_chunks *c, uint64_t at, uint64_t to,
		       uint64_t end, native_chunk_span_fn span, void *arg)
{
	if (at % 16 != 0 || to % 16 != 0 || to > end || at > to)
		return -1;
	if (walk(c, at, to, end, NULL, NULL) != 0)
		return -1;
	return walk(c, at, to, end, span, arg);
}

uint16_t native_chunk_slack(uint64_t block, uint64_t size)
{
	uint64_t head = word_at(block - 8);
	uint64_t chunk = head & ~(uint64_t)CHUNK_FLAGS;
	/* usable: the chunk but its size word, and for a chunk in the heap
	 * the next chunk's first word too (glibc's only while this one is
	 * free); an mmapped chunk has a 16-byte header */
	uint64_t usable = head & IS_MMAPPED ? chunk - 16 : chunk - 8;
	uint64_t most = head & IS_MMAPPED ? 4096 : 2 * MIN_CHUNK;
	if (chunk < MIN_CHUNK || usable < size || usable - size > most)
		return 0; /* not the layout of a block glibc holds */
	return (uint16_t)(usable - size);
}
