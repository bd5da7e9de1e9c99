/*
 * counters.c - each native stack's counters: allocations, frees, live bytes and
 * bytes allocated.
 *
 * Every thread counts into a table of its own, with plain loads and
 * stores (no other thread writes there; a snapshot reads each word
 * whole), so that threads never share a cache line to count, however many
 * there are.  A table is one mapping: a header and the addresses of its
 * chunks, each the counters of TABLE_CHUNK_STACKS consecutive stack ids,
 * mapped the first time the thread counts at one of them.  A stack's
 * counts are the sums of its counters in every table and in its shared
 * counters (below).
 *
 * Tables are never unmapped.  At thread exit (a pthread key destructor)
 * the table goes on a free list with its counts, and the next new thread
 * takes it and goes on adding to them: sums stay right.  In a forked
 * child only the forking thread lives on; every other table is free.
 *
 * The shared counters, with atomic adds, take what no table can: a stack id
 * past a table's chunks, a thread that is exiting or whose table or chunk
 * could not be mapped.
 */
#include <pthread.h>
#include <string.h>

#include "native-internal.h"

#define TABLE_BYTES 8192u
#define TABLE_CHUNK_STACKS 256u
#define CHUNK_BYTES (TABLE_CHUNK_STACKS * sizeof(struct counts))
#define SHARED_CHUNK_STACKS 1024u
#define SHARED_CHUNKS (NATIVE_MAX_STACKS / SHARED_CHUNK_STACKS)

/* One stack's counters in one table.  live_bytes may go below zero in a
 * table (a block freed by another thread than the one that made it): the
 * sum is right, modulo 2^64. */
struct counts {
	_Atomic uint64_t allocs, frees, live_bytes, alloc_bytes;
};

struct table {
	struct table *_Atomic next_all; /* every table, newest first */
	struct table *next_free;	/* under free_lock */
	struct counts *_Atomic chunk[];
};

#define TABLE_CHUNKS                                                           \
	((TABLE_BYTES - sizeof(struct table)) / sizeof(struct counts *))

static struct table *_Atomic all_tables;
static struct table *free_tables;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t table_key;
static int have_key;

static void *_Atomic shared[SHARED_CHUNKS]; /* of SHARED_CHUNK_STACKS */

/* The thread's table; NULL until it first counts, and again once it
 * exits (then `exiting` is set and it counts in the shared counters). */
static __thread struct table *mine NATIVE_TLS;
static __thread int exiting NATIVE_TLS;

/* At thread exit: the table is free again (its counts stay). */
static void table_release(void *v)
{
	struct table *t = v;
	pthread_mutex_lock(&free_lock);
	t->next_free = free_tables;
	free_tables = t;
	pthread_mutex_unlock(&free_lock);
	mine = NULL;
	exiting = 1;
}

/* A table for this thread: a free one, or a new one; NULL when none can
 * be had (no key, no memory). */
static struct table *table_claim(void)
{
	struct table *t;

	if (!have_key || exiting)
		return NULL;
	pthread_mutex_lock(&free_lock);
	t = free_tables;
	if (t != NULL)
		free_tables = t->next_free;
	pthread_mutex_unlock(&free_lock);
	if (t == NULL) {
		t = native_pages(TABLE_BYTES);
		if (t == NULL)
			return NULL;
		struct table *head = atomic_load(&all_tables);
		do
			t->next_all = head;
		while (!atomic_compare_exchange_weak(&all_tables, &head, t));
	}
	if (pthread_setspecific(table_key, t) != 0) {
		table_release(t); /* back on the list; exiting is set */
		return NULL;
	}
	mine = t;
	return t;
}

void native_counters_init(void)
{
	have_key = pthread_key_create(&table_key, table_release) == 0;
}

void native_counters_lock(void)
{
	pthread_mutex_lock(&free_lock);
}

void native_counters_unlock(void)
{
	pthread_mutex_unlock(&free_lock);
}

void native_counters_after_fork(void)
{
	free_tables = NULL; /* free_lock is held: native_counters_lock */
	for (struct table *t = atomic_load(&all_tables); t != NULL;
	     t = atomic_load(&t->next_all))
		if (t != mine) {
			t->next_free = free_tables;
			free_tables = t;
		}
	pthread_mutex_unlock(&free_lock);
}

/* The shared counters of id, mapped if need be; NULL without memory. */
static struct counts *shared_counts(uint32_t id)
{
	struct counts *ch =
	    native_pages_once(&shared[(id - 1) / SHARED_CHUNK_STACKS],
			      SHARED_CHUNK_STACKS * sizeof(*ch));
	return ch != NULL ? &ch[(id - 1) % SHARED_CHUNK_STACKS] : NULL;
}

/* The thread's own counters of id, NULL when it must use the shared
 * ones. */
static inline struct counts *own_counts(uint32_t id)
{
	struct table *t = mine;
	size_t c = (id - 1) / TABLE_CHUNK_STACKS;

	if (__builtin_expect(t == NULL, 0) && (t = table_claim()) == NULL)
		return NULL;
	if (__builtin_expect(c >= TABLE_CHUNKS, 0))
		return NULL;
	struct counts *ch =
		atomic_load_explicit(&t->chunk[c], memory_order_relaxed);
	if (__builtin_expect(ch == NULL, 0)) {
		/* Fresh zero pages: a stack made before this chunk was mapped
		 * has no counts here yet. */
		if ((ch = native_pages(CHUNK_BYTES)) == NULL)
			return NULL;
		atomic_store_explicit(&t->chunk[c], ch, memory_order_release);
	}
	return &ch[(id - 1) % TABLE_CHUNK_STACKS];
}

/* Add v to x, which only this thread writes. */
static inline void own_add(_Atomic uint64_t *x, uint64_t v)
{
	atomic_store_explicit(
		x, atomic_load_explicit(x, memory_order_relaxed) + v,
		memory_order_relaxed);
}

/* The thread's own counters of stack id when its table and the chunk are
 * there already (nearly always), else NULL: the fast paths below then
 * call out of line, so that they keep no register of their own. */
static inline struct counts *own_counts_now(uint32_t id)
{
	struct table *t = mine;
	size_t c = (id - 1) / TABLE_CHUNK_STACKS;
	if (__builtin_expect(t == NULL || c >= TABLE_CHUNKS, 0))
		return NULL;
	struct counts *ch =
	    atomic_load_explicit(&t->chunk[c], memory_order_relaxed);
	return __builtin_expect(ch != NULL, 1)
		   ? &ch[(id - 1) % TABLE_CHUNK_STACKS]
		   : NULL;
}

/* An allocation counted when the thread has no table or chunk yet (or
 * cannot have one: then in the shared counters). */
static __attribute__((noinline)) void count_alloc_slow(uint32_t id,
						       uint64_t bytes)
{
	struct counts *c = own_counts(id);
	if (c != NULL) {
		own_add(&c->allocs, 1);
		own_add(&c->live_bytes, bytes);
		own_add(&c->alloc_bytes, bytes);
	} else if ((c = shared_counts(id)) != NULL) {
		atomic_fetch_add_explicit(&c->allocs, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->live_bytes, bytes,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&c->alloc_bytes, bytes,
					  memory_order_relaxed);
	}
}

static __attribute__((noinline)) void count_free_slow(uint32_t id,
						      uint64_t bytes)
{
	struct counts *c = own_counts(id);
	if (c != NULL) {
		own_add(&c->frees, 1);
		own_add(&c->live_bytes, -bytes);
	} else if ((c = shared_counts(id)) != NULL) {
		atomic_fetch_add_explicit(&c->frees, 1, memory_order_relaxed);
		atomic_fetch_sub_explicit(&c->live_bytes, bytes,
					  memory_order_relaxed);
	}
}

void native_count_alloc(uint32_t id, uint64_t bytes)
{
	struct counts *c = own_counts_now(id);
	if (__builtin_expect(c == NULL, 0)) {
		count_alloc_slow(id, bytes);
		return;
	}
	own_add(&c->allocs, 1);
	own_add(&c->live_bytes, bytes);
	own_add(&c->alloc_bytes, bytes);
}

void native_count_free(uint32_t id, uint64_t bytes)
{
	struct counts *c = own_counts_now(id);
	if (__builtin_expect(c == NULL, 0)) {
		count_free_slow(id, bytes);
		return;
	}
	own_add(&c->frees, 1);
	own_add(&c->live_bytes, -bytes);
}

/* f on every counters of id that exist: the shared ones and each
 * table's. */
static void each_counts(uint32_t id, void (*f)(struct counts *, void *),
			void *arg)
{
	size_t c = (id - 1) / TABLE_CHUNK_STACKS;
	struct counts *s = atomic_load(&shared[(id - 1) / SHARED_CHUNK_STACKS]);

	if (s != NULL)
		f(&s[(id - 1) % SHARED_CHUNK_STACKS], arg);
	if (c >= TABLE_CHUNKS)
		return;
	for (struct table *t = atomic_load(&all_tables); t != NULL;
	     t = atomic_load(&t->next_all)) {
		struct counts *ch = atomic_load(&t->chunk[c]);
		if (ch != NULL)
			f(&ch[(id - 1) % TABLE_CHUNK_STACKS], arg);
	}
}

static void zero(struct counts *c, void *arg)
{
	(void)arg;
	atomic_store(&c->allocs, 0);
	atomic_store(&c->frees, 0);
	atomic_store(&c->live_bytes, 0);
	atomic_store(&c->alloc_bytes, 0);
}

static void add_up(struct counts *c, void *arg)
{
	struct native_counts *sum = arg;
	sum->allocs += atomic_load(&c->allocs);
	sum->frees += atomic_load(&c->frees);
	sum->live_bytes += atomic_load(&c->live_bytes);
	sum->alloc_bytes += atomic_load(&c->alloc_bytes);
}

void native_counters_zero(uint32_t id)
{
	each_counts(id, zero, NULL);
}

void native_counters_sum(uint32_t id, struct native_counts *sum)
{
	memset(sum, 0, sizeof(*sum));
	each_counts(id, add_up, sum);
}
