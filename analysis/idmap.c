/*
 * idmap.c - the object id table of libvmheap-analysis: object id -> value
 * (the OLD dump's objects, the targets of identity matching).  It holds
 * one entry per object, so its slots are 16 bytes and big tables come from
 * huge pages; counters keyed by class use vmheap_map.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "analysis-internal.h"
#include "vmheap.h"

/* Tables of 2 MiB and more come from mmap, with transparent huge pages
 * asked for: the identity passes probe them at random, and huge pages
 * spare most TLB misses. */
#define MAPPED_BYTES (2u << 20)

static struct vmheap_idslot *alloc_slots(size_t cap, int *mapped)
{
	size_t bytes = cap * sizeof(struct vmheap_idslot);
	*mapped = 0;
	if (bytes < MAPPED_BYTES)
		return calloc(cap, sizeof(struct vmheap_idslot));
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, bytes, MADV_HUGEPAGE);
	*mapped = 1;
	return p;
}

static void free_slots(struct vmheap_idslot *s, size_t cap, int mapped)
{
	if (mapped)
		munmap(s, cap * sizeof(*s));
	else
		free(s);
}

static int idmap_resize(struct vmheap_idmap *m, size_t ncap)
{
	int mapped;
	struct vmheap_idslot *ns = alloc_slots(ncap, &mapped);
	if (!ns)
		return VMHEAP_ENOMEM;
	struct vmheap_idmap n = {ns, ncap, 0, 0, 0, mapped};
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].id)
			continue;
		size_t j = vmheap_idmap_home(&n, m->slots[i].id);
		while (ns[j].id)
			j = (j + 1) & (ncap - 1);
		ns[j] = m->slots[i];
	}
	free_slots(m->slots, m->cap, m->mapped);
	m->slots = ns;
	m->cap = ncap;
	m->mapped = mapped;
	return 0;
}

int vmheap_idmap_reserve(struct vmheap_idmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 1024;
	while ((n + 1) * 4 > cap * 3)
		cap *= 2;
	return cap == m->cap ? 0 : idmap_resize(m, cap);
}

int vmheap_idmap_put(struct vmheap_idmap *m, uint64_t id, uint64_t val)
{
	if (!id) {
		m->has_zero = 1;
		m->zero_val = val;
		return 0;
	}
	if ((m->len + 1) * 4 > m->cap * 3 &&
	    idmap_resize(m, m->cap ? m->cap * 2 : 1024) < 0)
		return VMHEAP_ENOMEM;
	size_t mask = m->cap - 1, i = vmheap_idmap_home(m, id);
	while (m->slots[i].id && m->slots[i].id != id)
		i = (i + 1) & mask;
	if (!m->slots[i].id)
		m->len++;
	m->slots[i].id = id;
	m->slots[i].val = val;
	return 0;
}

void vmheap_idmap_release(struct vmheap_idmap *m)
{
	if (m->slots)
		free_slots(m->slots, m->cap, m->mapped);
	m->slots = NULL;
	m->cap = m->len = 0;
	m->has_zero = 0;
	m->mapped = 0;
}
