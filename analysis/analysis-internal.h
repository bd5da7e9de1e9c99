/*
 * analysis-internal.h - the tables libvmheap-analysis's files share: the
 * name table and the object id table.  Both hash with vmheap_hash64 (see
 * map-internal.h).
 *
 * vmheap_namemap: NUL-terminated string -> index, strings copied into the
 * map; used to merge census rows by display name.  It is a vmheap_map
 * keyed by the string's hash (key2 counts strings of the same hash).
 *
 * vmheap_idmap: object id -> 64-bit value, 16-byte slots (it holds one
 * entry per object, so big tables come from huge pages): the OLD dump's
 * objects and the targets of identity matching.
 */
#ifndef VMHEAP_ANALYSIS_INTERNAL_H
#define VMHEAP_ANALYSIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "map-internal.h"
#include "vmheap_analysis.h"

/* ------------------------------------------------------------ names.c */

struct vmheap_namemap {
	struct vmheap_map map; /* (hash, nth) -> a: index + 1, b: the name */
	size_t len;	       /* names held */
};

/*
 * Index of `name` (NUL-terminated); when absent it is copied in with index
 * `next_index` and *added is set.  Returns the index, or (size_t)-1 when
 * out of memory.  *stored (if not NULL) receives the map's copy.
 */
size_t vmheap_namemap_intern(struct vmheap_namemap *m, const char *name,
			     size_t next_index, int *added,
			     const char **stored);

/* Free the names and the table. */
void vmheap_namemap_release(struct vmheap_namemap *m);

/* ------------------------------------------------------------ idmap.c */

struct vmheap_idslot {
	uint64_t id, val;
};

/* Object id -> 64-bit value, open addressing, linear probing. */
struct vmheap_idmap {
	struct vmheap_idslot *slots;
	size_t cap, len;
	int has_zero; /* id 0 is kept aside: 0 marks empty slots */
	uint64_t zero_val;
	int mapped; /* slots come from mmap (large tables) */
};

/* Make room for n ids without growing.  Returns 0 or VMHEAP_ENOMEM. */
int vmheap_idmap_reserve(struct vmheap_idmap *m, size_t n);

/* Insert or overwrite.  Returns 0 or VMHEAP_ENOMEM. */
int vmheap_idmap_put(struct vmheap_idmap *m, uint64_t id, uint64_t val);

static inline size_t vmheap_idmap_home(const struct vmheap_idmap *m,
				       uint64_t id)
{
	return (size_t)vmheap_hash64(id) & (m->cap - 1);
}

/* Start loading the slot where `id` would be (before a get).  Always
 * inlined: GCC 12 deems a function that only prefetches free of effects
 * and drops calls to it. */
static inline __attribute__((always_inline)) void
vmheap_idmap_prefetch(const struct vmheap_idmap *m, uint64_t id)
{
	if (m->cap)
		__builtin_prefetch(&m->slots[vmheap_idmap_home(m, id)]);
}

/* 1 and *val when present, else 0. */
static inline int vmheap_idmap_get(const struct vmheap_idmap *m, uint64_t id,
				   uint64_t *val)
{
	if (!id) {
		*val = m->zero_val;
		return m->has_zero;
	}
	if (!m->cap)
		return 0;
	size_t mask = m->cap - 1, i = vmheap_idmap_home(m, id);
	for (;;) {
		const struct vmheap_idslot *s = &m->slots[i];
		if (s->id == id) {
			*val = s->val;
			return 1;
		}
		if (!s->id)
			return 0;
		i = (i + 1) & mask;
	}
}

/* Free the slots and make the table empty (it can be used again). */
void vmheap_idmap_release(struct vmheap_idmap *m);

/* ------------------------------------------------------------- scan.c */

/* 1 when `blk` costs less to decode on the reading thread than to copy to
 * a decoding thread (the census: a block with a summary). */
typedef int (*vmheap_scan_cheap_fn)(void *state,
				    const struct vmheap_block *blk);

/* vmheap_scan_blocks, but blocks for which cheap() says 1 are decoded on
 * the reading thread, never copied.  `cheap` may be NULL. */
int vmheap_scan_blocks_cheap(vmheap_reader *r, vmheap_scan_fn fn,
			     vmheap_scan_cheap_fn cheap, void *state,
			     const struct vmheap_scan_options *opt, char *err,
			     size_t errlen);

#endif /* VMHEAP_ANALYSIS_INTERNAL_H */
