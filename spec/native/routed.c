/*
 * routed.c - the tracker loaded into a running program and routed to
 * through the GOT (native/got.c) while four threads allocate, for
 * spec/native_test.c.  No LD_PRELOAD: the program dlopen's LIB (the
 * attach build) as the agent does.
 *
 *   1. Four threads malloc, calloc, realloc and free without a pause,
 *      each keeping a window of 256 blocks; main keeps 1000 blocks of its
 *      own from before the tracker.
 *   2. dlopen(LIB), vmheap_native_route, vmheap_native_start, while the
 *      threads run.  Some slot is written; a second route writes none.
 *   3. made_after() makes 500 blocks of 100 bytes with aligned_alloc
 *      (called here for the first time: its lazy PLT slot still pointed
 *      at the stub when it was routed): the tracker has exactly 500 live
 *      blocks, 50,000 bytes, at a site whose first frame is made_after.
 *   4. The 1000 blocks from before are freed (unknown to the tracker:
 *      nothing counted), and 250 of the 500: 250 live there.
 *   5. Stop; the other 250 are freed (tracked, then stopped); start and
 *      stop again while the threads run; the threads free all and end.
 *
 * Prints "ok" and exits 0, or says what failed and exits 1.  A heap the
 * routing broke makes glibc abort.  Built with -rdynamic (dladdr names
 * made_after).  usage: native_routed LIB
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_native.h"

#define THREADS 4
#define WINDOW 256

static atomic_int stop_threads;
static atomic_ulong ops;

static void *churn(void *arg)
{
	void *w[WINDOW] = {0};
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (unsigned long i = 0; !atomic_load(&stop_threads); i++) {
		unsigned r = (unsigned)rand_r(&seed);
		size_t k = i % WINDOW, n = 16 + r % 2000;
		free(w[k]);
		switch (r % 4) {
		case 0:
			w[k] = calloc(1, n);
			break;
		case 1:
			w[k] = realloc(malloc(8), n);
			break;
		default:
			w[k] = malloc(n);
		}
		if (w[k] == NULL)
			abort();
		memset(w[k], (int)r, n < 64 ? n : 64);
		atomic_fetch_add(&ops, 1);
	}
	for (size_t k = 0; k < WINDOW; k++)
		free(w[k]);
	return NULL;
}

/* Until the threads did `more` more operations. */
static void let_run(unsigned long more)
{
	unsigned long until = atomic_load(&ops) + more;
	while (atomic_load(&ops) < until)
		sched_yield();
}

static void *made[500];

__attribute__((noinline, visibility("default"))) void made_after(void)
{
	for (int i = 0; i < 500; i++) {
		made[i] = aligned_alloc(64, 100);
		if (made[i] == NULL)
			abort();
	}
}

/* The live count and bytes of the site whose first frame is in
 * made_after. */
static int made_site(vmheap_native_stacks_fn sites, uint64_t *count,
		     uint64_t *bytes)
{
	static vmheap_native_stack v[4096];
	size_t n = sites(v, 4096);
	int found = 0;

	*count = *bytes = 0;
	for (size_t i = 0; i < n && i < 4096; i++) {
		Dl_info info;
		if (v[i].depth == 0 ||
		    !dladdr((void *)(uintptr_t)(v[i].frames[0] - 1), &info) ||
		    info.dli_sname == NULL ||
		    strcmp(info.dli_sname, "made_after") != 0)
			continue;
		*count += v[i].live_count;
		*bytes += v[i].live_bytes;
		found = 1;
	}
	return found;
}

#define FAIL(...)                                                              \
	do {                                                                   \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		return 1;                                                      \
	} while (0)

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	void *before[1000];
	uint64_t count, bytes;
	vmheap_native_route_info info;

	if (argc != 2)
		FAIL("usage: native_routed LIB");
	for (int i = 0; i < 1000; i++)
		before[i] = malloc(64 + (size_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1));
	let_run(20000);

	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		FAIL("dlopen: %s", dlerror());
	vmheap_native_route_fn route =
		(vmheap_native_route_fn)dlsym(h, "vmheap_native_route");
	vmheap_native_start_fn start =
		(vmheap_native_start_fn)dlsym(h, "vmheap_native_start");
	vmheap_native_stop_fn stop =
		(vmheap_native_stop_fn)dlsym(h, "vmheap_native_stop");
	vmheap_native_stacks_fn sites =
	    (vmheap_native_stacks_fn)dlsym(h, "vmheap_native_stacks");
	if (!route || !start || !stop || !sites)
		FAIL("the tracker's API is missing");
	if (route(&info) != 0)
		FAIL("route: %s", info.why);
	if (info.preloaded || info.written == 0 || info.failed != 0)
		FAIL("route: preloaded %d, %llu written, %llu failed",
		     info.preloaded, (unsigned long long)info.written,
		     (unsigned long long)info.failed);
	unsigned long long routed = info.routed;
	if (route(&info) != 0 || info.written != 0 || info.routed != routed)
		FAIL("second route: %llu written, %llu routed (first %llu)",
		     (unsigned long long)info.written,
		     (unsigned long long)info.routed, routed);
	if (start() != 0)
		FAIL("start");
	let_run(20000);

	made_after();
	if (!made_site(sites, &count, &bytes) || count != 500 ||
	    bytes != 50000)
		FAIL("made_after: %llu blocks, %llu bytes (want 500, 50000)",
		     (unsigned long long)count, (unsigned long long)bytes);

	for (int i = 0; i < 1000; i++)
		free(before[i]);
	for (int i = 0; i < 250; i++)
		free(made[i]);
	if (!made_site(sites, &count, &bytes) || count != 250 ||
	    bytes != 25000)
		FAIL("after the frees: %llu blocks, %llu bytes (want 250, "
		     "25000)",
		     (unsigned long long)count, (unsigned long long)bytes);
	let_run(20000);

	stop();
	for (int i = 250; i < 500; i++)
		free(made[i]);
	let_run(20000);
	if (start() != 0)
		FAIL("second start");
	let_run(20000);
	stop();
	atomic_store(&stop_threads, 1);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("ok %llu slots routed, %lu operations\n", routed,
	       atomic_load(&ops));
	return 0;
}
