/*
 * leaker.c - a small C "VM" with the vmheap agent, run under vmheap-run
 * by spec/native_test.c.  Its heap walk writes nothing; its native memory
 * is the point.  Each line on stdin is a command, answered "ok":
 *
 *   leak N SIZE     N mallocs of SIZE bytes in leak_in_here(), kept
 *   free N          free N of them in release_in_here()
 *   churn N         N malloc/free pairs in churn_in_here()
 *   steady RATE     a thread leaks RATE bytes a second, in blocks of
 *                   STEADY_BLOCK bytes, in steady_leak_here(): the blocks
 *                   due by the monotonic clock since the command
 *   waitsteady N    answers once the thread has leaked N bytes in all
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmheap_agent.h"

static void **kept;
static size_t nkept, capkept;

__attribute__((noinline)) void leak_in_here(size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		if (nkept == capkept) {
			capkept = capkept ? 2 * capkept : 1024;
			kept = realloc(kept, capkept * sizeof(*kept));
		}
		kept[nkept] = malloc(size); /* the leak */
		memset(kept[nkept], 0x5a, size);
		nkept++;
	}
}

__attribute__((noinline)) void release_in_here(size_t n)
{
	while (n-- > 0 && nkept > 0)
		free(kept[--nkept]);
}

__attribute__((noinline)) void churn_in_here(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *volatile p = malloc(100 + i % 50);
		p[0] = 1;
		free(p);
	}
}

#define STEADY_BLOCK 4096u

static pthread_mutex_t steady_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t steady_more = PTHREAD_COND_INITIALIZER;
static uint64_t steady_rate, steady_leaked; /* bytes a second, bytes */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One block of the steady leak (never freed). */
__attribute__((noinline)) void *steady_leak_here(void)
{
	char *p = malloc(STEADY_BLOCK);

	memset(p, 0x5b, STEADY_BLOCK);
	return p;
}

/* Leak the blocks due at steady_rate since the start, every 5 ms. */
static void *steady_thread(void *arg)
{
	double start = now_s();
	struct timespec tick = {0, 5000000};

	(void)arg;
	for (;;) {
		uint64_t due =
		    (uint64_t)((now_s() - start) * (double)steady_rate);
		pthread_mutex_lock(&steady_lock);
		while (steady_leaked + STEADY_BLOCK <= due) {
			volatile void *kept_block = steady_leak_here();
			(void)kept_block;
			steady_leaked += STEADY_BLOCK;
		}
		pthread_cond_broadcast(&steady_more);
		pthread_mutex_unlock(&steady_lock);
		nanosleep(&tick, NULL);
	}
	return NULL;
}

static void steady_start(uint64_t rate)
{
	pthread_t t;

	steady_rate = rate;
	if (pthread_create(&t, NULL, steady_thread, NULL) == 0)
		pthread_detach(t);
}

static void steady_wait(uint64_t bytes)
{
	pthread_mutex_lock(&steady_lock);
	while (steady_leaked < bytes)
		pthread_cond_wait(&steady_more, &steady_lock);
	pthread_mutex_unlock(&steady_lock);
}

static int run_stopped(void *ctx, int (*fn)(void *arg), void *arg)
{
	(void)ctx;
	return fn(arg);
}

static int walk_heap(void *ctx, vmheap_writer *w)
{
	(void)ctx, (void)w;
	return 0;
}

int main(void)
{
	static const struct vmheap_agent_host host = {
		.vm_name = "leaker",
		.vm_version = "1.0",
		.run_stopped = run_stopped,
		.walk_heap = walk_heap,
	};
	struct vmheap_agent_config cfg;
	vmheap_agent *a;
	char err[512], line[256];

	if (vmheap_agent_config_from_env(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "leaker: %s\n", err);
		return 1;
	}
	if (vmheap_agent_start(&a, &cfg, &host) < 0) {
		fprintf(stderr, "leaker: %s\n", vmheap_agent_error(a));
		vmheap_agent_stop(a);
		return 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long n = 0, size = 0;
		if (sscanf(line, "leak %lu %lu", &n, &size) == 2)
			leak_in_here(n, size);
		else if (sscanf(line, "free %lu", &n) == 1)
			release_in_here(n);
		else if (sscanf(line, "churn %lu", &n) == 1)
			churn_in_here(n);
		else if (sscanf(line, "steady %lu", &n) == 1)
			steady_start(n);
		else if (sscanf(line, "waitsteady %lu", &n) == 1)
			steady_wait(n);
		printf("ok\n");
	}
	vmheap_agent_stop(a);
	return 0;
}
