/*
 * map-internal.h - libvmheap-analysis's hash table: a key of two 64-bit
 * words and a small tag, mapped to two 64-bit values; and the one hash
 * mixer of the library (vmheap_hash64), which the id table
 * (analysis-internal.h) uses too.
 *
 * The census counts objects and bytes per class id with it (key2 and tag
 * 0); identity matching counts objects per (class id in NEW, class id in
 * OLD, whether the object was in OLD) and references per (target,
 * referrer); the name table keys it by a string's hash.
 * Open addressing with linear probing, a power-of-two capacity kept at
 * most three quarters full; a slot is 40 bytes.  The table holds no
 * pointers into itself, so it may be copied by value only before use.
 *
 *	struct vmheap_map m = VMHEAP_MAP_INIT;
 *	struct vmheap_map_slot *s = vmheap_map_upsert(&m, class_id, 0, 0);
 *	if (!s) ...out of memory...
 *	s->a++;			// objects
 *	s->b += bytes;		// their bytes
 *	for (size_t i = 0; i < m.cap; i++)
 *		if (m.slots[i].used) ...
 *	vmheap_map_release(&m);
 *
 * Slot pointers stay valid until the next upsert (which may grow the
 * table) or release.
 */
#ifndef VMHEAP_MAP_INTERNAL_H
#define VMHEAP_MAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vmheap_map_slot {
	uint64_t key, key2; /* the key, with tag */
	uint32_t tag;
	uint32_t used; /* 0: an empty slot */
	uint64_t a, b; /* the values: 0 when the key was added */
};

struct vmheap_map {
	struct vmheap_map_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t len; /* slots in use */
};
#define VMHEAP_MAP_INIT                                                        \
	{                                                                      \
		0                                                              \
	}

/* Mix the bits of a 64-bit word so that any of the result's bits can
 * index a table (object ids are aligned addresses: their low bits are
 * constant). */
static inline uint64_t vmheap_hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

/* The hash of a key.  A key of (k, 0, 0) hashes as k alone would. */
static inline uint64_t vmheap_map_hash(uint64_t key, uint64_t key2,
				       uint32_t tag)
{
	return vmheap_hash64(key ^ (key2 * 0x9e3779b97f4a7c15ULL) ^
			     (uint64_t)tag << 56);
}

/* Slot for the key when the table must grow first; use
 * vmheap_map_upsert(). */
struct vmheap_map_slot *vmheap_map_upsert_grow(struct vmheap_map *m,
					       uint64_t key, uint64_t key2,
					       uint32_t tag);

/*
 * The slot of the key, added with both values 0 when absent.  Returns
 * NULL only when the table had to grow and memory ran out (the table is
 * then unchanged).
 */
static inline struct vmheap_map_slot *vmheap_map_upsert(struct vmheap_map *m,
							uint64_t key,
							uint64_t key2,
							uint32_t tag)
{
	if (!m->cap || (m->len + 1) * 4 > m->cap * 3)
		return vmheap_map_upsert_grow(m, key, key2, tag);
	size_t mask = m->cap - 1, i = vmheap_map_hash(key, key2, tag) & mask;
	for (;;) {
		struct vmheap_map_slot *s = &m->slots[i];
		if (!s->used) {
			s->used = 1;
			s->key = key;
			s->key2 = key2;
			s->tag = tag;
			m->len++;
			return s;
		}
		if (s->key == key && s->key2 == key2 && s->tag == tag)
			return s;
		i = (i + 1) & mask;
	}
}

/* The slot of the key, or NULL when it is absent. */
static inline struct vmheap_map_slot *
vmheap_map_find(const struct vmheap_map *m, uint64_t key, uint64_t key2,
		uint32_t tag)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1, i = vmheap_map_hash(key, key2, tag) & mask;
	for (;;) {
		struct vmheap_map_slot *s = &m->slots[i];
		if (!s->used)
			return NULL;
		if (s->key == key && s->key2 == key2 && s->tag == tag)
			return s;
		i = (i + 1) & mask;
	}
}

/* Free the slots and make the table empty (it can be used again). */
void vmheap_map_release(struct vmheap_map *m);

#ifdef __cplusplus
}
#endif

#endif /* VMHEAP_MAP_INTERNAL_H */
