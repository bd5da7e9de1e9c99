/*
 * native_bench.c - an allocation-heavy C workload for the malloc tracker's
 * benchmark (bench/native_bench.sh): THREADS threads each do OPS mallocs
 * of mixed sizes (16 B to 4 KiB, a few 64 KiB), keep a window of the last
 * 4096 and free the oldest, through a few levels of calls so that the
 * stacks look like an application's.  Prints its wall time, and, when the
 * tracker is loaded and on, the tracker's figures with the live heap.
 *
 * usage: native_bench THREADS OPS
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmheap_native.h"

#define WINDOW 4096

static unsigned long ops;
static pthread_barrier_t ready, done_work;

static __attribute__((noinline)) void *make(unsigned *seed, int kind)
{
	unsigned r = (unsigned)rand_r(seed);
	size_t n = kind == 0 ? 16 + r % 240 : kind == 1 ? 256 + r % 3840
						       : 65536;
	char *p = malloc(n);
	p[0] = (char)r;
	return p;
}

static __attribute__((noinline)) void *level2(unsigned *seed, int kind)
{
	return make(seed, kind);
}

static __attribute__((noinline)) void *level1(unsigned *seed, unsigned long i)
{
	/* mostly small, some medium, rarely large */
	int kind = i % 64 == 0 ? 2 : i % 4 == 0 ? 1 : 0;
	return level2(seed, kind);
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	void **win = calloc(WINDOW, sizeof(*win));

	for (unsigned long i = 0; i < ops; i++) {
		size_t k = i % WINDOW;
		free(win[k]);
		win[k] = level1(&seed, i);
		if (i % 1000 == 999) { /* some realloc and calloc too */
			win[k] = realloc(win[k], 512);
			free(calloc(8, 32));
		}
	}
	pthread_barrier_wait(&ready);     /* all windows full: measure */
	pthread_barrier_wait(&done_work); /* then free */
	for (size_t k = 0; k < WINDOW; k++)
		free(win[k]);
	free(win);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[64];
	struct timespec a, b;

	ops = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000000;
	if (threads < 1 || threads > 64)
		return 2;
	pthread_barrier_init(&ready, NULL, (unsigned)threads + 1);
	pthread_barrier_init(&done_work, NULL, (unsigned)threads + 1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	pthread_barrier_wait(&ready);
	clock_gettime(CLOCK_MONOTONIC, &b);
	vmheap_native_get_totals_fn totals =
		(vmheap_native_get_totals_fn)dlsym(RTLD_DEFAULT,
						   "vmheap_native_get_totals");
	if (totals) {
		vmheap_native_totals tt;
		totals(&tt);
		if (tt.stacks)
			printf("tracked: %llu sites, %llu live allocations, "
			       "%llu live bytes, tracker memory %llu bytes\n",
			       (unsigned long long)tt.stacks,
			       (unsigned long long)tt.live_count,
			       (unsigned long long)tt.live_bytes,
			       (unsigned long long)tt.overhead_bytes);
	}
	pthread_barrier_wait(&done_work);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("seconds %.3f\n", (double)(b.tv_sec - a.tv_sec) +
				      (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
