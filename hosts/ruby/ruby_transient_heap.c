/*
 * ruby_transient_heap.c - in a dump's forked child, before the malloc
 * tracker's leak scan: the free part of every block of MRI's transient
 * heap is zeroed.
 *
 * MRI 2.6 to 3.2 keep the bodies of young Arrays, Objects' ivars, Hashes
 * and Structs in the transient heap (transient_heap.c): one 32 MiB arena
 * (a posix_memalign from Init_GC: a root of the scan, or a tracked block
 * when tracking began first) cut into 32 KiB blocks, each a header and a
 * bump-allocated buffer.  A block's bodies are moved out at each GC and the
 * block is reset (index 0) with its old bodies left in place; what lies
 * past a block's index is such stale bodies: Array elements and ivars
 * naming objects long dead, and the words of C structs that Ruby keeps in
 * ivars, among them addresses of freed malloc blocks that newer blocks
 * took (native/README.md, "The leak scan": in one run 28 of 10,000
 * forgotten blocks read possibly leaked because of them).  Ruby never
 * reads past the index: zeroing there in the child (a private copy)
 * changes nothing Ruby or the dump reads.
 *
 * Debian's ruby-dev does not install transient_heap.c's layout, so it is
 * checked at run time, block by block, and a block that does not match is
 * left as it is (its stale words stay roots, as before):
 *   - a fresh Array of 8 elements in the child lives in the transient
 *     heap (RARRAY_TRANSIENT_P); 16 bytes before its elements is the
 *     allocation's header {uint16 magic 0xfeab, uint16 size, int16, int16,
 *     VALUE obj} naming that Array.  Its 32 KiB-aligned block is one of
 *     the arena's; the arena's other blocks are its neighbours;
 *   - a block begins {int16 index; int16 last_marked_index; int16
 *     objects; VALUE *next_block}: index a multiple of 8 within the block,
 *     next_block 0 or a 32 KiB-aligned address; the allocations from its
 *     buffer's start up to index are exactly `objects` headers with the
 *     magic whose sizes add up to index; and last_marked_index is -1 or
 *     the offset of one of them (after a GC and until its postponed
 *     evacuation runs, which in the child is never, a block keeps its
 *     marks).
 * The walk goes down from that block and up from it, one block at a time,
 * while blocks match, at most the arena's 1,024 each way.  Every read of a
 * block not yet checked goes through process_vm_readv on this process: a
 * wrong guess reads EFAULT, never SIGSEGV.  Only while the tracker
 * tracks, and only words not 0 already (a page written is a page copied).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "ruby-internal.h"

#define BLOCK_SIZE 32768
#define BLOCK_HEADER 16
#define ARENA_BLOCKS 1024
#define ALLOC_MAGIC 0xfeab
#define ALLOC_HEADER 16
#define SLOT_WORDS 5	  /* an object's slot: RBasic and three words */
#define MARKING_LAST (-1) /* last_marked_index: no allocation marked */

static uint8_t block_copy[BLOCK_SIZE]; /* one block, read safely; zeroed
					  after the walk */

static int16_t i16(const uint8_t *p)
{
	int16_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static uint16_t u16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* The index of block b (its bytes in use past the header) when b is laid
 * out as a transient heap block, or -1. */
static int block_index(uint64_t b)
{
	uint64_t next;

	if (ruby_peek(b, block_copy, sizeof block_copy) != 0)
		return -1;
	int index = i16(block_copy), last_marked = i16(block_copy + 2);
	int objects = i16(block_copy + 4);
	memcpy(&next, block_copy + 8, sizeof next);
	if (index < 0 || index > BLOCK_SIZE - BLOCK_HEADER || index % 8 != 0 ||
	    (last_marked != MARKING_LAST &&
	     (last_marked < 0 || last_marked >= index)) ||
	    objects < 0 || next % BLOCK_SIZE != 0)
		return -1;
	int at = 0, n = 0, marked_found = last_marked == MARKING_LAST;
	while (at < index) {
		const uint8_t *h = block_copy + BLOCK_HEADER + at;
		int size = u16(h + 2);
		if (u16(h) != ALLOC_MAGIC || size < ALLOC_HEADER ||
		    size % 8 != 0 || at + size > index)
			return -1;
		marked_found |= at == last_marked;
		at += size;
		n++;
	}
	return n == objects && marked_found ? index : -1;
}

static void clear_words(uint64_t lo, uint64_t hi)
{
	for (uint64_t *w = (uint64_t *)(uintptr_t)lo;
	     w < (uint64_t *)(uintptr_t)hi; w++)
		if (*w != 0)
			*w = 0;
}

/* Whether the object `obj` names the allocation whose body is at `body`:
 * a live object holds its body's address among the words of its slot
 * past RBasic (an Array's, an Object's ivars', a Hash's table, a Struct's
 * members). */
static int holds(uint64_t obj, uint64_t body)
{
	uint64_t slot[SLOT_WORDS];
	int found = 0;

	if (obj % 8 != 0 || ruby_peek(obj, slot, sizeof slot) != 0)
		return 0; /* no object there */
	for (int i = 2; i < SLOT_WORDS; i++)
		found |= slot[0] != 0 && slot[i] == body; /* 0: a free slot */
	/* no copy of a free slot's stale words left on the stack, which the
	 * scan may read */
	explicit_bzero(slot, sizeof slot);
	return found;
}

/* Zero block b's dead words: past its index, and the bodies of its
 * allocations that no object holds. */
static void clear_block(uint64_t b, int index)
{
	for (int at = 0; at < index;) {
		const uint8_t *h = block_copy + BLOCK_HEADER + at;
		uint64_t obj,
		    body = b + BLOCK_HEADER + (uint64_t)at + ALLOC_HEADER;
		int size = u16(h + 2);
		memcpy(&obj, h + 8, sizeof obj);
		if (!holds(obj, body))
			clear_words(body, body + (uint64_t)size - ALLOC_HEADER);
		at += size;
	}
	clear_words(b + BLOCK_HEADER + (uint64_t)index, b + BLOCK_SIZE);
}

/* A block of the arena: the block of a fresh transient Array, or 0. */
static uint64_t some_block(void)
{
	VALUE ary = rb_ary_new_capa(8);
	uint8_t h[ALLOC_HEADER];
	uint64_t obj;

	if (RB_FL_ANY_RAW(ary, RARRAY_EMBED_FLAG) || !RARRAY_TRANSIENT_P(ary))
		return 0;
	uint64_t body = (uint64_t)(uintptr_t)RARRAY_CONST_PTR_TRANSIENT(ary);
	if (body < ALLOC_HEADER ||
	    ruby_peek(body - ALLOC_HEADER, h, sizeof h) != 0)
		return 0;
	memcpy(&obj, h + 8, sizeof obj);
	RB_GC_GUARD(ary);
	if (u16(h) != ALLOC_MAGIC || obj != (uint64_t)ary)
		return 0;
	return (body - ALLOC_HEADER) & ~(uint64_t)(BLOCK_SIZE - 1);
}

void ruby_clear_transient_heap(void)
{
	int (*tracking)(void) =
	    (int (*)(void))dlsym(RTLD_DEFAULT, "vmheap_native_tracking");

	if (!tracking || !tracking())
		return;
	uint64_t b0 = some_block();
	if (b0 == 0)
		return;
	for (int dir = -1; dir <= 1; dir += 2) {
		uint64_t b = dir < 0 ? b0 - BLOCK_SIZE : b0;
		for (int i = 0; i < ARENA_BLOCKS && b != 0; i++) {
			int index = block_index(b);
			if (index < 0)
				break;
			clear_block(b, index);
			b += (uint64_t)((int64_t)dir * BLOCK_SIZE);
		}
	}
	/* The copy of the last block read is a root of the scan (this
	 * library's data): the block past the arena is anything, a Ruby heap
	 * page with the stale words of its free slots among them (once: 123
	 * forgotten blocks read reachable). */
	explicit_bzero(block_copy, sizeof block_copy);
}
