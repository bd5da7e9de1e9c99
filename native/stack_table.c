/*
 * stack_table.c - the native stacks.  A native stack is the return
 * addresses of an allocation's call chain (and the VM's location); it has
 * an id (1, 2, ...), and its counters are kept by id in counters.c.  The
 * stacks live in chunks that are mapped as needed and never move.
 * Finding a stack's id goes through an index split into
 * stripes by the stack's hash, each an open-addressing table of ids
 * under its own lock.
 */
#include <pthread.h>
#include <string.h>

#include "native-internal.h"

#define INDEX_STRIPES 16
#define CHUNK_STACKS 1024
#define FIRST_CAP 256

#define CHUNKS (NATIVE_MAX_STACKS / CHUNK_STACKS)

struct stack {
	uint64_t hash;
	const char *file; /* the VM's location (files.c), or NULL */
	uint32_t line;
	uint32_t depth;
	uint64_t frames[VMHEAP_NATIVE_MAX_FRAMES];
};

struct index {
	pthread_mutex_t lock;
	uint32_t *ids; /* 0: empty */
	size_t cap, count;
	char pad[64];
};

static struct index index_[INDEX_STRIPES] = {
    [0 ... INDEX_STRIPES - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER},
};
static void *_Atomic chunks[CHUNKS]; /* of CHUNK_STACKS struct stack */
static _Atomic uint32_t next_id;     /* ids handed out */

static struct stack *stack_at(uint32_t id)
{
	struct stack *c = atomic_load_explicit(&chunks[(id - 1) / CHUNK_STACKS],
					       memory_order_acquire);
	return &c[(id - 1) % CHUNK_STACKS];
}

static uint64_t hash_where(const struct native_where *w)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ w->depth;
	for (unsigned i = 0; i < w->depth; i++) {
		h ^= w->frames[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (w->file != NULL) { /* interned: the pointer is the file */
		h ^= (uint64_t)(uintptr_t)w->file ^ (uint64_t)w->line << 48;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

/* Is stack s the one of w? */
static int is_at(const struct stack *s, const struct native_where *w)
{
	return s->depth == w->depth && s->file == w->file &&
	       s->line == w->line &&
	       memcmp(s->frames, w->frames, w->depth * sizeof *w->frames) == 0;
}

/* A new stack's storage, its chunk mapped if this is the chunk's first. */
static uint32_t new_id(void)
{
	uint32_t id = atomic_fetch_add(&next_id, 1) + 1;
	size_t c = (id - 1) / CHUNK_STACKS;
	if (c >= CHUNKS)
		return 0;
	if (native_pages_once(&chunks[c],
			      CHUNK_STACKS * sizeof(struct stack)) == NULL)
		return 0;
	return id;
}

static int index_grow(struct index *x)
{
	if (x->ids != NULL && (x->count + 1) * 2 <= x->cap)
		return 0;
	size_t cap = x->cap ? x->cap * 2 : FIRST_CAP;
	uint32_t *ids = native_pages(cap * sizeof *ids);
	if (ids == NULL)
		return -1;
	for (size_t i = 0; i < x->cap; i++) {
		if (x->ids[i] == 0)
			continue;
		size_t j = stack_at(x->ids[i])->hash & (cap - 1);
		while (ids[j] != 0)
			j = (j + 1) & (cap - 1);
		ids[j] = x->ids[i];
	}
	native_pages_free(x->ids, x->cap * sizeof *x->ids);
	x->ids = ids;
	x->cap = cap;
	return 0;
}

/* A small per-thread cache of the stacks a thread used last: a hit needs
 * no lock (stacks never move; an entry of another generation is stale). */
#define CACHE 64
struct cached {
	uint64_t state, hash;
	uint32_t id;
};
static __thread struct cached cache[CACHE] NATIVE_TLS;

static uint32_t stack_get_locked(const struct native_where *w, uint64_t state,
				 uint64_t h);

uint32_t native_stacks_get(const struct native_where *w, uint64_t state)
{
	uint64_t h = hash_where(w);
	struct cached *c = &cache[h % CACHE];

	if (c->state == state && c->hash == h && is_at(stack_at(c->id), w))
		return c->id;
	uint32_t id = stack_get_locked(w, state, h);
	if (id != 0)
		*c = (struct cached){state, h, id};
	return id;
}

static uint32_t stack_get_locked(const struct native_where *w, uint64_t state,
				 uint64_t h)
{
	struct index *x = &index_[h >> 60 & (INDEX_STRIPES - 1)];
	uint32_t id = 0;
	pthread_mutex_lock(&x->lock);
	if (atomic_load(&native_state) != state)
		goto out;
	if (x->ids != NULL) {
		size_t mask = x->cap - 1;
		for (size_t i = h & mask; x->ids[i] != 0; i = (i + 1) & mask) {
			struct stack *s = stack_at(x->ids[i]);
			if (s->hash == h && is_at(s, w)) {
				id = x->ids[i];
				goto out;
			}
		}
	}
	if (index_grow(x) != 0 || (id = new_id()) == 0)
		goto out;
	struct stack *s = stack_at(id);
	s->hash = h;
	s->file = w->file;
	s->line = w->line;
	s->depth = w->depth;
	memcpy(s->frames, w->frames, w->depth * sizeof *w->frames);
	native_counters_zero(id); /* the id may have been a stack before */
	size_t i = h & (x->cap - 1);
	while (x->ids[i] != 0)
		i = (i + 1) & (x->cap - 1);
	x->ids[i] = id;
	x->count++;
out:
	pthread_mutex_unlock(&x->lock);
	return id;
}

void native_stacks_lock(void)
{
	for (int i = 0; i < INDEX_STRIPES; i++)
		pthread_mutex_lock(&index_[i].lock);
}

void native_stacks_unlock(void)
{
	for (int i = INDEX_STRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&index_[i].lock);
}

void native_stacks_clear(void)
{
	native_stacks_lock();
	for (int i = 0; i < INDEX_STRIPES; i++) {
		native_pages_free(index_[i].ids,
				  index_[i].cap * sizeof *index_[i].ids);
		index_[i].ids = NULL;
		index_[i].cap = index_[i].count = 0;
	}
	/* The chunks stay mapped for the next start; ids start over. */
	atomic_store(&next_id, 0);
	native_stacks_unlock();
}

size_t native_stacks_copy(vmheap_native_stack *out, uint32_t *ids, size_t cap)
{
	native_stacks_lock(); /* no stack is half made while we copy */
	uint32_t n = atomic_load(&next_id);
	size_t got = 0;
	for (uint32_t id = 1; id <= n; id++) {
		if ((id - 1) / CHUNK_STACKS >= CHUNKS)
			break;
		/* An id whose chunk could not be mapped has no stack. */
		if (atomic_load(&chunks[(id - 1) / CHUNK_STACKS]) == NULL)
			continue;
		struct stack *s = stack_at(id);
		if (s->depth == 0)
			continue;
		if (got < cap) {
			vmheap_native_stack *o = &out[got];
			memset(o, 0, sizeof *o);
			if (ids)
				ids[got] = id;
			o->depth = s->depth;
			memcpy(o->frames, s->frames,
			       s->depth * sizeof *s->frames);
			struct native_counts sum;
			native_counters_sum(id, &sum);
			o->allocs = sum.allocs;
			o->frees = sum.frees;
			o->live_bytes = sum.live_bytes;
			o->alloc_bytes = sum.alloc_bytes;
			o->live_count = o->allocs - o->frees;
			o->vm_file = s->file;
			o->vm_line = s->line;
		}
		got++;
	}
	native_stacks_unlock();
	return got;
}

void native_stacks_sum(vmheap_native_totals *t)
{
	native_stacks_lock();
	uint32_t n = atomic_load(&next_id);
	for (uint32_t id = 1; id <= n && (id - 1) / CHUNK_STACKS < CHUNKS;
	     id++) {
		if (atomic_load(&chunks[(id - 1) / CHUNK_STACKS]) == NULL)
			continue;
		struct stack *s = stack_at(id);
		if (s->depth == 0)
			continue;
		struct native_counts sum;
		native_counters_sum(id, &sum);
		t->stacks++;
		t->allocs += sum.allocs;
		t->frees += sum.frees;
		t->live_count += sum.allocs - sum.frees;
		t->live_bytes += sum.live_bytes;
	}
	native_stacks_unlock();
}
