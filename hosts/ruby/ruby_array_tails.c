/*
 * ruby_array_tails.c - in a dump's forked child, before the malloc
 * tracker's leak scan: the words of each Array past its length, and of
 * each Hash past its entries, are zeroed.
 *
 * An Array's body has room for `capa` elements and Ruby reads (and its
 * GC marks) only the first `len`; the rest keeps whatever was there: the
 * elements of an earlier, longer Array, or, for a body Ruby copied out
 * of the transient heap with its whole capacity, the words that lay past
 * it there (other allocations' headers, interior pointers into strings
 * long freed), which the leak scan would take for pointers
 * (native/README.md, "The leak scan").  The layout is public
 * (ruby/internal/core/rarray.h): an embedded Array keeps its length in
 * its flags and its elements in its slot; another keeps len, capa and a
 * pointer, or, when it shares its elements (ELTS_SHARED), a shared root
 * in place of capa and is left alone, and so is the Array whose body
 * others share.  A small Hash keeps its pairs in an ar table of 8 (128
 * bytes, which Ruby copies whole out of the transient heap) and uses
 * those below the bound in its flags, a deleted one with the key Qundef
 * (internal/hash.h: not public; the table is checked to be a glibc block
 * of 128 bytes or in the transient heap's arena); a bigger one an st
 * table (ruby_st_tables.c).  Only the child's copy is written;
 * only while the tracker tracks.
 */
#include <dlfcn.h>
#include <stdint.h>

#include "ruby-internal.h"

#define MAX_CAPA ((long)1 << 28)
/* array.c's RARRAY_SHARED_ROOT_FLAG: the body other Arrays share, whose
 * elements past its own length they may see */
#define SHARED_ROOT RUBY_FL_USER12

static void zero(VALUE *from, VALUE *to)
{
	for (VALUE *w = from; w < to; w++)
		if (*w != 0)
			*w = 0;
}

/* internal/hash.h, Ruby 3.1 */
#define HASH_ST_TABLE RUBY_FL_USER3
#define HASH_BOUND_MASK                                                        \
	(RUBY_FL_USER8 | RUBY_FL_USER9 | RUBY_FL_USER10 | RUBY_FL_USER11)
#define HASH_BOUND_SHIFT (RUBY_FL_USHIFT + 8)
#define HASH_TRANSIENT RUBY_FL_USER12
#define AR_PAIRS 8

struct hash { /* struct RHash's start */
	struct RBasic basic;
	uint64_t table; /* st_table * or the ar table */
};

/* A glibc block of 128 bytes (up to 24 of slack), not mmapped. */
static int ar_block(uint64_t at)
{
	uint64_t head;
	if (at % 16 != 0 || ruby_peek(at - 8, &head, 8) != 0 || (head & 2))
		return 0;
	uint64_t usable = (head & ~(uint64_t)7) - 8;
	return usable >= AR_PAIRS * 16 && usable - AR_PAIRS * 16 <= 24;
}

static void clear_hash(VALUE flags, const struct hash *h)
{
	if (flags & HASH_ST_TABLE) {
		ruby_clear_st_table(h->table);
		return;
	}
	uint64_t bound = (flags & HASH_BOUND_MASK) >> HASH_BOUND_SHIFT;
	VALUE pairs[AR_PAIRS * 2];
	if (h->table == 0 || bound > AR_PAIRS ||
	    ruby_peek(h->table, pairs, sizeof pairs) != 0 ||
	    (!(flags & HASH_TRANSIENT) && !ar_block(h->table)))
		return;
	VALUE *w = (VALUE *)(uintptr_t)h->table;
	for (uint64_t i = 0; i < AR_PAIRS; i++) {
		if (i >= bound) /* never read */
			zero(w + 2 * i, w + 2 * i + 2);
		else if (pairs[2 * i] == RUBY_Qundef) /* deleted: its value */
			zero(w + 2 * i + 1, w + 2 * i + 2);
	}
}

static int clear_page(void *start, void *end, size_t stride, void *data)
{
	(void)data;
	for (uintptr_t p = (uintptr_t)start; p < (uintptr_t)end; p += stride) {
		VALUE flags = RBASIC((VALUE)p)->flags;
		if ((flags & RUBY_T_MASK) == RUBY_T_HASH) {
			clear_hash(flags, (const struct hash *)p);
			continue;
		}
		if ((flags & RUBY_T_MASK) != RUBY_T_ARRAY)
			continue;
		struct RArray *a = (struct RArray *)p;
		if (flags & RARRAY_EMBED_FLAG) {
			long len = (long)((flags & RARRAY_EMBED_LEN_MASK) >>
					  RARRAY_EMBED_LEN_SHIFT);
			if (len < RARRAY_EMBED_LEN_MAX)
				zero((VALUE *)a->as.ary + len,
				     (VALUE *)a->as.ary + RARRAY_EMBED_LEN_MAX);
			continue;
		}
		if (flags & (RUBY_ELTS_SHARED | SHARED_ROOT))
			continue;
		long len = a->as.heap.len, capa = a->as.heap.aux.capa;
		VALUE *ptr = (VALUE *)a->as.heap.ptr;
		if (ptr == NULL || len < 0 || capa <= len || capa > MAX_CAPA)
			continue;
		zero(ptr + len, ptr + capa);
	}
	return 0;
}

void ruby_clear_array_tails(void)
{
	int (*tracking)(void) =
	    (int (*)(void))dlsym(RTLD_DEFAULT, "vmheap_native_tracking");

	if (!tracking || !tracking())
		return;
	rb_objspace_each_objects(clear_page, NULL);
}
