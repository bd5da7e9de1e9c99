/*
 * census-internal.h - hash tables shared by the census files of libvmheap.
 *
 * vmheap_u64map: open addressing, linear probing, power-of-two capacity,
 * keys are 64-bit integers with two 64-bit counters each.  Used for
 * "class id -> (count, bytes)" and similar small maps on hot paths.
 *
 * vmheap_namemap: NUL-terminated string -> index, strings copied into the
 * map; used to merge census rows by display name.
 */
#ifndef CENSUS_INTERNAL_H
#define CENSUS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

struct vmheap_u64map_slot {
	uint64_t key;
	uint64_t a, b;
	uint64_t used;
};

struct vmheap_u64map {
	struct vmheap_u64map_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t len;
};

static inline size_t vmheap_hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k;
}

/* Slot for `key`, inserted with zero counters when absent; NULL when out
 * of memory. */
struct vmheap_u64map_slot *vmheap_u64map_upsert_slow(struct vmheap_u64map *m,
						     uint64_t key);

static inline struct vmheap_u64map_slot *
vmheap_u64map_upsert(struct vmheap_u64map *m, uint64_t key)
{
	if (m->cap && (m->len + 1) * 4 <= m->cap * 3) {
		size_t mask = m->cap - 1, i = vmheap_hash64(key) & mask;
		for (;;) {
			struct vmheap_u64map_slot *s = &m->slots[i];
			if (s->used && s->key == key)
				return s;
			if (!s->used) {
				s->used = 1;
				s->key = key;
				m->len++;
				return s;
			}
			i = (i + 1) & mask;
		}
	}
	return vmheap_u64map_upsert_slow(m, key);
}

/* Slot for `key`, or NULL when absent. */
static inline struct vmheap_u64map_slot *
vmheap_u64map_find(const struct vmheap_u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1, i = vmheap_hash64(key) & mask;
	for (;;) {
		struct vmheap_u64map_slot *s = &m->slots[i];
		if (!s->used)
			return NULL;
		if (s->key == key)
			return s;
		i = (i + 1) & mask;
	}
}

void vmheap_u64map_release(struct vmheap_u64map *m);

struct vmheap_namemap_slot {
	char *name;
	size_t index;
};

struct vmheap_namemap {
	struct vmheap_namemap_slot *slots;
	size_t cap, len;
};

/*
 * Index of `name` (NUL-terminated); when absent it is copied in with index
 * `next_index` and *added is set.  Returns the index, or (size_t)-1 when
 * out of memory.  *stored (if not NULL) receives the map's copy.
 */
size_t vmheap_namemap_intern(struct vmheap_namemap *m, const char *name,
			     size_t next_index, int *added,
			     const char **stored);

void vmheap_namemap_release(struct vmheap_namemap *m);

#endif /* CENSUS_INTERNAL_H */
