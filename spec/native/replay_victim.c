/*
 * replay_victim.c - a program whose malloc trace vmheap-replay replays
 * (spec/replay_test.c): THREADS threads allocate with every
 * malloc-family call, put their blocks in one pool that all share, and
 * free or realloc blocks of the pool whoever made them (frees across
 * threads), leaving some live at exit.  It counts for itself: it prints
 * "live BYTES calls N", the bytes it asked for and did not free, and the
 * calls it made (the independent truth the replay is checked against;
 * the C library's own blocks come on top of it).
 *
 * usage: replay_victim [THREADS [ROUNDS]]
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL 4096

static struct {
	void *p;
	size_t size;
} pool[POOL];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long calls;
static int rounds = 20000;

static unsigned rnd(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* A block of `size` bytes by call `kind` (0-7); *asked the bytes the
 * call asks for (calloc: the product; aligned_alloc: a multiple). */
static void *make(unsigned kind, unsigned *seed, size_t size, size_t *asked)
{
	void *p = NULL;

	*asked = size;
	switch (kind) {
	case 0:
		*asked = (1 + size % 4) * (size / 4 + 1);
		return calloc(1 + size % 4, size / 4 + 1);
	case 1:
		return posix_memalign(&p, 64, size) ? NULL : p;
	case 2:
		*asked = (size + 31) & ~(size_t)31;
		return aligned_alloc(32, *asked);
	case 3:
		return memalign(128, size);
	case 4:
		return rnd(seed) % 16 ? malloc(size) : valloc(size);
	default:
		return malloc(size);
	}
}

static void *work(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;

	for (int i = 0; i < rounds; i++) {
		unsigned k = rnd(&seed) % POOL, what = rnd(&seed) % 4;
		size_t size = rnd(&seed) % 3 ? rnd(&seed) % 512 + 1
					     : rnd(&seed) % 70000 + 1;
		void *p;

		pthread_mutex_lock(&lock);
		if (pool[k].p && what == 0) {
			p = realloc(pool[k].p, size);
			if (p) {
				pool[k].p = p;
				pool[k].size = size;
			}
		} else if (pool[k].p && what == 1) {
			p = reallocarray(pool[k].p, 2, size / 2 + 1);
			if (p) {
				pool[k].p = p;
				pool[k].size = 2 * (size / 2 + 1);
			}
		} else if (pool[k].p) {
			free(pool[k].p);
			pool[k].p = NULL;
		} else {
			size_t n;

			p = make(rnd(&seed) % 8, &seed, size, &n);
			if (p) {
				memset(p, 1, n < 64 ? n : 64);
				pool[k].p = p;
				pool[k].size = n;
			}
		}
		calls++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[64];
	unsigned long long live = 0;

	if (argc > 2)
		rounds = atoi(argv[2]);
	if (threads < 1 || threads > 64)
		return 2;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, work, (void *)(uintptr_t)i);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < POOL; i++)
		if (pool[i].p)
			live += pool[i].size;
	printf("live %llu calls %llu\n", live, calls);
	return 0;
}
