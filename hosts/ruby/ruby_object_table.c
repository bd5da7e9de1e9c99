/*
 * ruby_object_table.c - object (VALUE) -> allocation site id, for the
 * allocation tracer.
 *
 * MRI's objects live in heap pages of 64 KiB, aligned to 64 KiB, and no
 * two objects are less than 40 bytes (one slot) apart.  So the table is
 * two levels: a directory from page (VALUE >> 16) to an array of site ids
 * indexed by (VALUE & 0xffff) / 40, 1639 entries of 4 bytes.  That is 4
 * bytes per slot of a page holding a traced object, instead of the 16 or
 * more per object of a hash table, and no probing: MRI allocates from a
 * page's free slots and sweeps page after page, so NEWOBJ and FREEOBJ walk
 * one array in order and the last page is remembered.  A page's array is
 * freed when its last traced object dies; its directory entry stays (a
 * page number, a NULL array), since MRI reuses its pages.  GC.compact
 * moves objects: ruby_object_table_move takes their entries along.  C
 * heap only.
 */
#include <stdlib.h>
#include <string.h>

#include "ruby-internal.h"

#define PAGE_SHIFT 16
#define SLOT_BYTES 40
#define SLOTS_PER_PAGE ((1u << PAGE_SHIFT) / SLOT_BYTES + 1)
#define INITIAL_DIR 256

struct ruby_object_page {
	uint32_t count; /* non-zero entries of site[] */
	/* (VALUE & 0xffff) % 40, the same for every slot of a page (slots
	 * are 40 bytes, or multiples of 40 apart): with a slot's index it
	 * gives back the object's address (ruby_object_table_move). */
	uint16_t offset;
	uint32_t site[SLOTS_PER_PAGE];
};

void ruby_object_table_init(struct ruby_object_table *t)
{
	memset(t, 0, sizeof(*t));
}

static size_t dir_home(uint64_t page, size_t cap)
{
	return (size_t)((page * 0x9E3779B97F4A7C15ull) >> 40) & (cap - 1);
}

static void dir_put(struct ruby_object_dir *dir, size_t cap, uint64_t page,
		    struct ruby_object_page *p)
{
	size_t i = dir_home(page, cap);

	while (dir[i].page)
		i = (i + 1) & (cap - 1);
	dir[i].page = page;
	dir[i].p = p;
}

static int dir_grow(struct ruby_object_table *t)
{
	size_t cap = t->dir_cap ? t->dir_cap * 2 : INITIAL_DIR;
	struct ruby_object_dir *dir = calloc(cap, sizeof(*dir));

	if (!dir)
		return -1;
	for (size_t i = 0; i < t->dir_cap; i++)
		if (t->dir[i].page)
			dir_put(dir, cap, t->dir[i].page, t->dir[i].p);
	free(t->dir);
	t->dir = dir;
	t->dir_cap = cap;
	t->last = NULL;
	return 0;
}

/* The directory entry of `page` (page numbers are never 0: no object
 * lives in the first 64 KiB), added when `add`; NULL when absent, or out
 * of memory. */
static struct ruby_object_dir *dir_entry(struct ruby_object_table *t,
					 uint64_t page, int add)
{
	size_t i;

	if (t->last && t->last->page == page)
		return t->last;
	if (t->dir_cap) {
		for (i = dir_home(page, t->dir_cap); t->dir[i].page;
		     i = (i + 1) & (t->dir_cap - 1))
			if (t->dir[i].page == page)
				return t->last = &t->dir[i];
	}
	if (!add)
		return NULL;
	if ((t->dir_len + 1) * 2 > t->dir_cap && dir_grow(t) < 0)
		return NULL;
	for (i = dir_home(page, t->dir_cap); t->dir[i].page;
	     i = (i + 1) & (t->dir_cap - 1))
		;
	t->dir[i].page = page;
	t->dir[i].p = NULL;
	t->dir_len++;
	return t->last = &t->dir[i];
}

int ruby_object_table_set(struct ruby_object_table *t, uint64_t key,
			  uint32_t site)
{
	struct ruby_object_dir *d = dir_entry(t, key >> PAGE_SHIFT, 1);
	uint32_t *slot;

	if (!d)
		return -1;
	if (!d->p) {
		d->p = calloc(1, sizeof(*d->p));
		if (!d->p)
			return -1;
		d->p->offset = (uint16_t)((key & ((1u << PAGE_SHIFT) - 1)) %
					  SLOT_BYTES);
		t->pages++;
	}
	slot = &d->p->site[(key & ((1u << PAGE_SHIFT) - 1)) / SLOT_BYTES];
	if (!*slot) {
		d->p->count++;
		t->count++;
	}
	*slot = site;
	return 0;
}

uint32_t ruby_object_table_get(struct ruby_object_table *t, uint64_t key)
{
	struct ruby_object_dir *d;

	if (!t->count)
		return 0;
	d = dir_entry(t, key >> PAGE_SHIFT, 0);
	if (!d || !d->p)
		return 0;
	return d->p->site[(key & ((1u << PAGE_SHIFT) - 1)) / SLOT_BYTES];
}

void ruby_object_table_remove(struct ruby_object_table *t, uint64_t key)
{
	struct ruby_object_dir *d;
	uint32_t *slot;

	if (!t->count)
		return;
	d = dir_entry(t, key >> PAGE_SHIFT, 0);
	if (!d || !d->p)
		return;
	slot = &d->p->site[(key & ((1u << PAGE_SHIFT) - 1)) / SLOT_BYTES];
	if (!*slot)
		return;
	*slot = 0;
	t->count--;
	if (--d->p->count == 0) {
		free(d->p);
		d->p = NULL;
		t->pages--;
	}
}

/* The entry of a moved object, on its way to its new slot. */
struct moved {
	uint64_t key;
	uint32_t site;
};

size_t ruby_object_table_move(struct ruby_object_table *t,
			      uint64_t (*where)(uint64_t key))
{
	struct moved *m = NULL;
	size_t n = 0, cap = 0, lost = 0;

	/* First take every moved entry out, then put them back at their new
	 * keys: an object may have moved into the slot of one that moved
	 * on. */
	for (size_t i = 0; i < t->dir_cap; i++) {
		struct ruby_object_page *p = t->dir[i].p;
		if (!p)
			continue;
		for (uint32_t k = 0; k < SLOTS_PER_PAGE; k++) {
			if (!p->site[k])
				continue;
			uint64_t key = t->dir[i].page << PAGE_SHIFT |
				       (uint64_t)(k * SLOT_BYTES + p->offset);
			uint64_t now = where(key);
			if (now == key)
				continue;
			if (n == cap) {
				size_t c = cap ? 2 * cap : 1024;
				struct moved *g = realloc(m, c * sizeof(*m));
				if (!g) {
					lost++; /* stays at its old key */
					continue;
				}
				m = g;
				cap = c;
			}
			m[n++] = (struct moved){now, p->site[k]};
			p->site[k] = 0;
			p->count--;
			t->count--;
		}
		if (p->count == 0) {
			free(p);
			t->dir[i].p = NULL;
			t->pages--;
		}
	}
	for (size_t j = 0; j < n; j++)
		if (ruby_object_table_set(t, m[j].key, m[j].site) < 0)
			lost++;
	free(m);
	return lost;
}

size_t ruby_object_table_bytes(const struct ruby_object_table *t)
{
	return t->dir_cap * sizeof(*t->dir) +
	       t->pages * sizeof(struct ruby_object_page);
}

void ruby_object_table_free(struct ruby_object_table *t)
{
	for (size_t i = 0; i < t->dir_cap; i++)
		free(t->dir[i].p);
	free(t->dir);
	ruby_object_table_init(t);
}
