/*
 * sites.c - call sites.  A site is a stack of return addresses; it has an
 * id (1, 2, ...) and counters.  The sites live in chunks that are mapped
 * as needed and never move, so that counting at a site needs no lock
 * (atomic adds).  Finding a stack's id goes through an index split into
 * stripes by the stack's hash, each an open-addressing table of ids
 * under its own lock.
 */
#include <pthread.h>
#include <string.h>

#include "native-internal.h"

#define INDEX_STRIPES 16
#define CHUNK_SITES 1024
#define CHUNKS 4096 /* at most 4M sites */
#define FIRST_CAP 256

/* A site's counters are split into shards, each on its own cache line.
 * A thread owns one of the first SHARDS - 1 while it lives and counts
 * into it with plain adds (no other thread writes there; a snapshot reads
 * each word whole); threads that find none free share the last one, with
 * atomic adds.  A snapshot adds the shards up. */
#define SHARDS 8
#define SHARED (SHARDS - 1)
struct counters {
	_Atomic uint64_t allocs, frees, live_bytes, alloc_bytes;
} __attribute__((aligned(64)));

struct site {
	uint64_t hash;
	const char *file; /* the VM's location (files.c), or NULL */
	uint32_t line;
	uint32_t depth;
	uint64_t frames[VMHEAP_NATIVE_MAX_FRAMES];
	struct counters c[SHARDS];
};

static _Atomic unsigned owned; /* bit i: shard i has its thread */
static pthread_key_t shard_key; /* its value: the owned shard + 1 */
static int have_key;
/* 0: not chosen yet, else the shard + 1 */
static __thread unsigned my_shard __attribute__((tls_model("initial-exec")));

/* At thread exit: the shard is free again (the counts in it stay). */
static void shard_release(void *v)
{
	unsigned i = (unsigned)(uintptr_t)v - 1;
	atomic_fetch_and(&owned, ~(1u << i));
	my_shard = SHARED + 1; /* what it frees from now on */
}

static unsigned claim(void)
{
	unsigned m = atomic_load(&owned);
	while (have_key) {
		unsigned free_ = ~m & ((1u << SHARED) - 1);
		if (free_ == 0)
			break;
		unsigned i = (unsigned)__builtin_ctz(free_);
		if (atomic_compare_exchange_weak(&owned, &m, m | 1u << i)) {
			if (pthread_setspecific(shard_key,
						(void *)(uintptr_t)(i + 1)) != 0) {
				atomic_fetch_and(&owned, ~(1u << i));
				break;
			}
			my_shard = i + 1;
			return i;
		}
	}
	my_shard = SHARED + 1;
	return SHARED;
}

void native_shards_init(void)
{
	have_key = pthread_key_create(&shard_key, shard_release) == 0;
}

/* In a forked child only the forking thread lives on. */
void native_shards_after_fork(void)
{
	unsigned mine = my_shard;
	atomic_store(&owned, mine != 0 && mine - 1 != SHARED
				     ? 1u << (mine - 1) : 0u);
}

/* Add v to x of shard `shard`. */
static void add(_Atomic uint64_t *x, uint64_t v, unsigned shard)
{
	if (shard != SHARED)
		atomic_store_explicit(
			x, atomic_load_explicit(x, memory_order_relaxed) + v,
			memory_order_relaxed);
	else
		atomic_fetch_add_explicit(x, v, memory_order_relaxed);
}

/* The sums of a site's shards. */
static void sum_site(struct site *s, uint64_t *allocs, uint64_t *frees,
		     uint64_t *live, uint64_t *bytes)
{
	*allocs = *frees = *live = *bytes = 0;
	for (int i = 0; i < SHARDS; i++) {
		*allocs += atomic_load(&s->c[i].allocs);
		*frees += atomic_load(&s->c[i].frees);
		*live += atomic_load(&s->c[i].live_bytes);
		*bytes += atomic_load(&s->c[i].alloc_bytes);
	}
}

struct index {
	pthread_mutex_t lock;
	uint32_t *ids; /* 0: empty */
	size_t cap, count;
	char pad[64];
};

static struct index index_[INDEX_STRIPES] = {
	[0 ... INDEX_STRIPES - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER},
};
static struct site *_Atomic chunks[CHUNKS];
static _Atomic uint32_t next_id; /* ids handed out */

static struct site *site_at(uint32_t id)
{
	struct site *c = atomic_load_explicit(&chunks[(id - 1) / CHUNK_SITES],
					      memory_order_acquire);
	return &c[(id - 1) % CHUNK_SITES];
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

/* Is site s the one of w? */
static int is_at(const struct site *s, const struct native_where *w)
{
	return s->depth == w->depth && s->file == w->file &&
	       s->line == w->line &&
	       memcmp(s->frames, w->frames, w->depth * sizeof *w->frames) == 0;
}

/* A new site's storage, its chunk mapped if this is the chunk's first. */
static uint32_t new_id(void)
{
	uint32_t id = atomic_fetch_add(&next_id, 1) + 1;
	size_t c = (id - 1) / CHUNK_SITES;
	if (c >= CHUNKS)
		return 0;
	if (atomic_load(&chunks[c]) == NULL) {
		struct site *mem = native_pages(CHUNK_SITES * sizeof *mem);
		struct site *none = NULL;
		if (mem == NULL)
			return 0;
		if (!atomic_compare_exchange_strong(&chunks[c], &none, mem))
			native_pages_free(mem, CHUNK_SITES * sizeof *mem);
	}
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
		size_t j = site_at(x->ids[i])->hash & (cap - 1);
		while (ids[j] != 0)
			j = (j + 1) & (cap - 1);
		ids[j] = x->ids[i];
	}
	native_pages_free(x->ids, x->cap * sizeof *x->ids);
	x->ids = ids;
	x->cap = cap;
	return 0;
}

/* A small per-thread cache of the sites a thread used last: a hit needs
 * no lock (sites never move; an entry of another generation is stale). */
#define CACHE 64
struct cached {
	uint64_t state, hash;
	uint32_t id;
};
static __thread struct cached cache[CACHE]
	__attribute__((tls_model("initial-exec")));

static uint32_t site_get_locked(const struct native_where *w,
				uint64_t state, uint64_t h);

uint32_t native_site_get(const struct native_where *w, uint64_t state)
{
	uint64_t h = hash_where(w);
	struct cached *c = &cache[h % CACHE];

	if (c->state == state && c->hash == h && is_at(site_at(c->id), w))
		return c->id;
	uint32_t id = site_get_locked(w, state, h);
	if (id != 0)
		*c = (struct cached){state, h, id};
	return id;
}

static uint32_t site_get_locked(const struct native_where *w,
				uint64_t state, uint64_t h)
{
	struct index *x = &index_[h >> 60 & (INDEX_STRIPES - 1)];
	uint32_t id = 0;
	pthread_mutex_lock(&x->lock);
	if (atomic_load(&native_state) != state)
		goto out;
	if (x->ids != NULL) {
		size_t mask = x->cap - 1;
		for (size_t i = h & mask; x->ids[i] != 0; i = (i + 1) & mask) {
			struct site *s = site_at(x->ids[i]);
			if (s->hash == h && is_at(s, w)) {
				id = x->ids[i];
				goto out;
			}
		}
	}
	if (index_grow(x) != 0 || (id = new_id()) == 0)
		goto out;
	struct site *s = site_at(id);
	s->hash = h;
	s->file = w->file;
	s->line = w->line;
	s->depth = w->depth;
	memcpy(s->frames, w->frames, w->depth * sizeof *w->frames);
	for (int i = 0; i < SHARDS; i++) {
		atomic_store(&s->c[i].allocs, 0);
		atomic_store(&s->c[i].frees, 0);
		atomic_store(&s->c[i].live_bytes, 0);
		atomic_store(&s->c[i].alloc_bytes, 0);
	}
	size_t i = h & (x->cap - 1);
	while (x->ids[i] != 0)
		i = (i + 1) & (x->cap - 1);
	x->ids[i] = id;
	x->count++;
out:
	pthread_mutex_unlock(&x->lock);
	return id;
}

void native_site_alloc(uint32_t id, uint64_t bytes)
{
	unsigned k = my_shard ? my_shard - 1 : claim();
	struct counters *c = &site_at(id)->c[k];
	add(&c->allocs, 1, k);
	add(&c->live_bytes, bytes, k);
	add(&c->alloc_bytes, bytes, k);
}

/* A shard's live_bytes may go below zero (freed by another thread than
 * the one that allocated): the sum is right, modulo 2^64. */
void native_site_free(uint32_t id, uint64_t bytes)
{
	unsigned k = my_shard ? my_shard - 1 : claim();
	struct counters *c = &site_at(id)->c[k];
	add(&c->frees, 1, k);
	add(&c->live_bytes, -bytes, k);
}

void native_sites_lock(void)
{
	for (int i = 0; i < INDEX_STRIPES; i++)
		pthread_mutex_lock(&index_[i].lock);
}

void native_sites_unlock(void)
{
	for (int i = INDEX_STRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&index_[i].lock);
}

void native_sites_clear(void)
{
	native_sites_lock();
	for (int i = 0; i < INDEX_STRIPES; i++) {
		native_pages_free(index_[i].ids,
				  index_[i].cap * sizeof *index_[i].ids);
		index_[i].ids = NULL;
		index_[i].cap = index_[i].count = 0;
	}
	/* The chunks stay mapped for the next start; ids start over. */
	atomic_store(&next_id, 0);
	native_sites_unlock();
}

size_t native_sites_copy(vmheap_native_site *out, size_t cap)
{
	native_sites_lock(); /* no site is half made while we copy */
	uint32_t n = atomic_load(&next_id);
	size_t got = 0;
	for (uint32_t id = 1; id <= n; id++) {
		if ((id - 1) / CHUNK_SITES >= CHUNKS)
			break;
		/* An id whose chunk could not be mapped has no site. */
		if (atomic_load(&chunks[(id - 1) / CHUNK_SITES]) == NULL)
			continue;
		struct site *s = site_at(id);
		if (s->depth == 0)
			continue;
		if (got < cap) {
			vmheap_native_site *o = &out[got];
			memset(o, 0, sizeof *o);
			o->depth = s->depth;
			memcpy(o->frames, s->frames,
			       s->depth * sizeof *s->frames);
			sum_site(s, &o->allocs, &o->frees, &o->live_bytes,
				 &o->alloc_bytes);
			o->live_count = o->allocs - o->frees;
			o->vm_file = s->file;
			o->vm_line = s->line;
		}
		got++;
	}
	native_sites_unlock();
	return got;
}

void native_sites_sum(vmheap_native_totals *t)
{
	native_sites_lock();
	uint32_t n = atomic_load(&next_id);
	for (uint32_t id = 1; id <= n && (id - 1) / CHUNK_SITES < CHUNKS; id++) {
		if (atomic_load(&chunks[(id - 1) / CHUNK_SITES]) == NULL)
			continue;
		struct site *s = site_at(id);
		if (s->depth == 0)
			continue;
		uint64_t a, f, live, bytes;
		sum_site(s, &a, &f, &live, &bytes);
		t->sites++;
		t->allocs += a;
		t->frees += f;
		t->live_count += a - f;
		t->live_bytes += live;
	}
	native_sites_unlock();
}
