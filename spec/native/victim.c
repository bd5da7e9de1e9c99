/*
 * victim.c - a program run under the malloc tracker by spec/native_test.c.
 * It switches tracking through the tracker's API (found with dlsym, as the
 * agent finds it), allocates in functions of known names, keeps its own
 * count of what it did, and prints the tracker's view next to it:
 *
 *   site LIVE_COUNT LIVE_BYTES ALLOCS FREES FUNC   one line per site
 *                                                  whose top frame is in
 *                                                  one of our functions
 *   own NAME VALUE                                 the program's own count
 *
 * usage: victim leak N SIZE | threads T N | fork N | onoff ROUNDS | blocks 1
 *        | paths N | vla N | signal N | dlopen ROUNDS | registered 1
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmheap_native.h"

static vmheap_native_start_fn start;
static vmheap_native_stop_fn stop;
static vmheap_native_stacks_fn sites;
static vmheap_native_get_totals_fn totals;

static void **kept;
static size_t nkept;

__attribute__((noinline, visibility("default"))) void leak_here(size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		kept[nkept] = malloc(size);
		memset(kept[nkept], 1, size);
		nkept++;
	}
}

__attribute__((noinline, visibility("default"))) void churn_here(size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *volatile p = malloc(64 + i % 200);
		p[0] = 1;
		free(p);
	}
}

static __attribute__((noinline)) void free_kept(size_t n)
{
	while (n-- > 0 && nkept > 0)
		free(kept[--nkept]);
}

/* Print, summed by function, the sites whose frame `at` (0: the top) is
 * in one of the functions `names`. */
static void report_at(unsigned at, const char *const *names, size_t count)
{
	size_t n = sites(NULL, 0) + 64;
	vmheap_native_stack *v = calloc(n, sizeof *v);
	n = sites(v, n);
	for (size_t k = 0; k < count; k++) {
		unsigned long long sum[4] = {0, 0, 0, 0};
		int seen = 0;
		for (size_t i = 0; i < n; i++) {
			Dl_info info;
			if (v[i].depth <= at ||
			    !dladdr((void *)(uintptr_t)(v[i].frames[at] - 1),
				    &info) ||
			    info.dli_sname == NULL ||
			    strcmp(info.dli_sname, names[k]) != 0)
				continue;
			seen = 1;
			sum[0] += v[i].live_count;
			sum[1] += v[i].live_bytes;
			sum[2] += v[i].allocs;
			sum[3] += v[i].frees;
		}
		if (seen)
			printf("site %llu %llu %llu %llu %s\n", sum[0], sum[1],
			       sum[2], sum[3], names[k]);
	}
	free(v);
	fflush(stdout);
}

/* The sites whose top frame is in one of this program's *_here
 * functions. */
static void report(void)
{
	static const char *const names[] = {"leak_here", "churn_here",
					    "thread_here", "blocks_here"};
	report_at(0, names, sizeof names / sizeof *names);
}

/*
 * Two call paths that differ only two frames up: path_a_here and
 * path_b_here, called from the same loop (so from the same stack address),
 * each call paths_mid, which calls paths_leaf, which mallocs.  The
 * innermost return addresses, and where they lie on the stack, are the
 * same on both paths; a stack cache that looked no further would give
 * both paths one site.
 */
static __attribute__((noinline)) void *paths_leaf(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory"); /* no tail call */
	return p;
}

static __attribute__((noinline)) void *paths_mid(size_t n)
{
	void *p = paths_leaf(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline, visibility("default"))) void *path_a_here(size_t n)
{
	void *p = paths_mid(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline, visibility("default"))) void *path_b_here(size_t n)
{
	void *p = paths_mid(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/*
 * A signal whose handler allocates, delivered while the tracker is in the
 * middle of a tracked malloc: the location hook (which the tracker calls
 * from inside malloc, past glibc's own work) raises it on every 100th
 * call.  The handler's malloc and free must go straight to glibc, with no
 * wait and no count.
 */
static volatile sig_atomic_t handler_allocs;
static unsigned long hook_calls;

__attribute__((noinline, visibility("default"))) void on_signal_here(int sig)
{
	(void)sig;
	char *volatile p = malloc(100);
	p[0] = 1;
	free(p);
	handler_allocs = handler_allocs + 1;
}

static int raising_hook(const char **file, uint32_t *line)
{
	if (++hook_calls % 100 == 0)
		raise(SIGUSR1);
	*file = "victim.c";
	*line = 1;
	return 1;
}

static void signals(unsigned long n)
{
	vmheap_native_set_location_fn set_location =
		(vmheap_native_set_location_fn)dlsym(
			RTLD_DEFAULT, "vmheap_native_set_location");
	static const char *const names[] = {"leak_here", "on_signal_here"};
	signal(SIGUSR1, on_signal_here);
	set_location(raising_hook);
	start();
	leak_here(n, 48);
	set_location(NULL);
	report_at(0, names, 2);
	printf("own handler-allocs %d\nown hook-calls %lu\n",
	       (int)handler_allocs, hook_calls);
}

/*
 * Frames the tracker's walker reads from the unwind tables: functions
 * built without frame pointers (their CFA is rsp plus an offset that
 * changes along the function) under functions with a variable-length
 * array (their CFA is rbp-based, their frame a different size at every
 * call), so that the first frame outside the tracker lies at a different
 * stack address nearly every time and the stack cache rarely helps.
 * vla_a_here and vla_b_here are two frames up from malloc.
 */
#define NO_FP __attribute__((noinline, optimize("omit-frame-pointer")))
static NO_FP void *vla_leaf(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory"); /* no tail call */
	return p;
}

static NO_FP void *vla_mid(size_t n, unsigned salt)
{
	volatile unsigned long spill[4] = {salt, salt + 1, salt + 2, n};
	void *p = vla_leaf((size_t)spill[3]);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline, visibility("default"))) void *vla_a_here(size_t n,
								  size_t pad)
{
	char buf[pad];
	buf[0] = 1;
	buf[pad - 1] = 2;
	__asm__ volatile("" : : "r"(buf) : "memory");
	void *p = vla_mid(n, (unsigned)pad);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline, visibility("default"))) void *vla_b_here(size_t n,
								  size_t pad)
{
	char buf[pad + 8];
	buf[0] = 1;
	buf[pad] = 2;
	__asm__ volatile("" : : "r"(buf) : "memory");
	void *p = vla_mid(n, (unsigned)pad);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static void vla(unsigned long n)
{
	static const char *const names[] = {"vla_a_here", "vla_b_here"};
	void *(*const via[2])(size_t, size_t) = {vla_a_here, vla_b_here};
	unsigned long bytes[2] = {0, 0}, count[2] = {0, 0};
	start();
	for (unsigned long i = 0; i < n && nkept < 1000000; i++) {
		int b = (i * 7 + i / 5) % 3 != 0;
		size_t size = 16 + i % 89, pad = 16 + (i * 2654435761u) % 3000;
		kept[nkept++] = via[b](size, pad);
		bytes[b] += size;
		count[b]++;
	}
	report_at(2, names, 2);
	printf("own a-bytes %lu\nown b-bytes %lu\nown a-count %lu\nown b-count %lu\n",
	       bytes[0], bytes[1], count[0], count[1]);
}

/*
 * Frame information registered at run time (as a JIT does), then looked
 * up: libgcc's _Unwind_Find_FDE sorts the registered FDEs with malloc
 * while it holds its lock.  A tracker that unwound that malloc through
 * libgcc would wait for that lock for ever.  Prints "own found 1".
 */
struct eh_bases {
	void *tbase, *dbase, *func;
};

static __attribute__((noinline)) int registered_code(int x)
{
	return x * 3 + 1;
}

static void registered(void)
{
	void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW);
	void (*reg)(void *) = (void (*)(void *))dlsym(gcc, "__register_frame");
	void (*dereg)(void *) =
		(void (*)(void *))dlsym(gcc, "__deregister_frame");
	const void *(*find)(void *, struct eh_bases *) =
		(const void *(*)(void *, struct eh_bases *))dlsym(
			gcc, "_Unwind_Find_FDE");
	/* A CIE (version 1, "zR", absolute pointers, CFA = rsp + 8, the
	 * return address at CFA - 8), one FDE for registered_code, and the
	 * zero word that ends the list. */
	static uint64_t words[16];
	uint8_t *p = (uint8_t *)words;
	static const uint8_t cie[] = {0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16,
				      1, 0x00, 0x0c, 7, 8, 0x90, 1, 0, 0};
	uint32_t len = sizeof cie, flen = 4 + 8 + 8 + 1 + 3;
	memcpy(p, &len, 4);
	memcpy(p + 4, cie, sizeof cie);
	uint8_t *fde = p + 4 + sizeof cie;
	int32_t back = (int32_t)(fde + 4 - p);
	uint64_t begin = (uint64_t)(uintptr_t)registered_code, range = 16;
	memcpy(fde, &flen, 4);
	memcpy(fde + 4, &back, 4);
	memcpy(fde + 8, &begin, 8);
	memcpy(fde + 16, &range, 8);
	start();
	reg(p);
	struct eh_bases b;
	const void *f = find((void *)((uintptr_t)registered_code + 1), &b);
	printf("own found %d\n", f != NULL && registered_code(1) == 4);
	dereg(p);
	stop();
}

/* N allocations, a third of them by path a, in an order that mixes the
 * paths; prints both paths' sites and the program's own byte counts. */
static void paths(unsigned long n)
{
	static const char *const names[] = {"path_a_here", "path_b_here"};
	void *(*const via[2])(size_t) = {path_a_here, path_b_here};
	unsigned long bytes[2] = {0, 0};
	start();
	for (unsigned long i = 0; i < n && nkept < 1000000; i++) {
		int b = i % 3 != 0;
		size_t size = 16 + i % 97;
		kept[nkept++] = via[b](size);
		bytes[b] += size;
	}
	report_at(2, names, 2);
	printf("own a-bytes %lu\nown b-bytes %lu\n", bytes[0], bytes[1]);
}

/* The array a thread keeps its pointers in (not a *_here site). */
static __attribute__((noinline)) void **array_of(unsigned long n)
{
	void **p = calloc(n, sizeof(void *));
	__asm__ volatile("" : : "r"(p) : "memory"); /* no tail call */
	return p;
}

static _Atomic unsigned long thread_allocs, thread_frees;
static unsigned long per_thread;

__attribute__((noinline, visibility("default"))) void *thread_here(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	void **mine = array_of(per_thread);
	for (unsigned long i = 0; i < per_thread; i++) {
		mine[i] = malloc(16 + rand_r(&seed) % 4000);
		atomic_fetch_add(&thread_allocs, 1);
		if (i % 2 == 1) {
			free(mine[i - 1]);
			mine[i - 1] = NULL;
			atomic_fetch_add(&thread_frees, 1);
		}
	}
	return mine; /* the odd ones stay live */
}

/*
 * dlopen while tracking: the main thread loads and unloads a library
 * (dlopen allocates while it holds the loader's lock) as threads allocate
 * from stacks of changing depth, each new stack unwound by libunwind,
 * which takes that lock too.  Every allocation is counted once.
 */
static _Atomic unsigned long deep_allocs;

__attribute__((noinline, visibility("default"))) void *deep_here(unsigned depth,
								size_t n)
{
	void *p = depth == 0 ? malloc(n) : deep_here(depth - 1, n);
	__asm__ volatile("" : : "r"(p) : "memory"); /* no tail call */
	return p;
}

static void *deep_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	for (unsigned long i = 0; i < per_thread; i++) {
		free(deep_here(rand_r(&seed) % 24, 32));
		atomic_fetch_add(&deep_allocs, 1);
	}
	return NULL;
}

static void loads(unsigned long rounds)
{
	static const char *const names[] = {"deep_here"};
	pthread_t t[4];
	per_thread = 20000;
	start();
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, deep_thread, (void *)(uintptr_t)(i + 1));
	unsigned long opened = 0;
	for (unsigned long r = 0; r < rounds; r++) {
		void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		if (h != NULL && dlsym(h, "cos") != NULL)
			opened++;
		if (h != NULL)
			dlclose(h);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	report_at(0, names, 1);
	printf("own opened %lu\nown deep-allocs %lu\n", opened,
	       atomic_load(&deep_allocs));
}

/* One allocation of each kind: 0 malloc, 1 calloc, 2 realloc of p,
 * 3 posix_memalign (64). */
__attribute__((noinline, visibility("default"))) void *
blocks_here(int kind, void *p, size_t n)
{
	void *r = NULL;
	if (kind == 0)
		r = malloc(n);
	else if (kind == 1)
		r = calloc(n, 1);
	else if (kind == 2)
		r = realloc(p, n);
	else if (posix_memalign(&r, 64, n) != 0)
		r = NULL;
	__asm__ volatile("" : : "r"(r) : "memory"); /* no tail call */
	return r;
}

/* Blocks tracked and made before tracking, through realloc,
 * malloc_usable_size and a stop: contents, sizes and alignment hold, and
 * the counts are exact.  Prints the site and "own bad N". */
static unsigned long blocks(void)
{
	unsigned long bad = 0;
	char *before = malloc(100); /* before tracking: not in the table */
	memset(before, 5, 100);
	start();
	char *a = blocks_here(0, NULL, 1000);
	bad += malloc_usable_size(a) < 1000;
	memset(a, 7, 1000);
	char *b = blocks_here(1, NULL, 3000);
	for (int i = 0; i < 3000; i++)
		bad += b[i] != 0;
	a = blocks_here(2, a, 50000);
	for (int i = 0; i < 1000; i++)
		bad += a[i] != 7;
	char *c = blocks_here(3, NULL, 4096);
	bad += ((uintptr_t)c & 63) != 0;
	before = blocks_here(2, before, 200);
	for (int i = 0; i < 100; i++)
		bad += before[i] != 5;
	free(b);
	report(); /* 3 live: 50000 + 4096 + 200 (a's first block and b freed) */
	stop();
	a = realloc(a, 10); /* made while tracking, realloc'ed after */
	bad += malloc_usable_size(a) < 10;
	for (int i = 0; i < 10; i++)
		bad += a[i] != 7;
	start();
	free(a); /* counted in no site of this generation */
	free(c);
	free(before);
	vmheap_native_totals t;
	totals(&t);
	bad += t.live_count != 0;
	stop();
	return bad;
}

int main(int argc, char **argv)
{
	start = (vmheap_native_start_fn)dlsym(RTLD_DEFAULT, "vmheap_native_start");
	stop = (vmheap_native_stop_fn)dlsym(RTLD_DEFAULT, "vmheap_native_stop");
	sites = (vmheap_native_stacks_fn)dlsym(RTLD_DEFAULT,
					       "vmheap_native_stacks");
	totals = (vmheap_native_get_totals_fn)dlsym(RTLD_DEFAULT,
						   "vmheap_native_get_totals");
	if (start == NULL || stop == NULL || sites == NULL || totals == NULL) {
		fprintf(stderr, "victim: the tracker is not loaded\n");
		return 2;
	}
	if (argc < 3)
		return 2;
	const char *mode = argv[1];
	unsigned long a = strtoul(argv[2], NULL, 10);
	unsigned long b = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;
	kept = calloc(1000000, sizeof *kept);

	if (strcmp(mode, "leak") == 0) {
		start();
		leak_here(a, b);
		churn_here(10000);
		report();
		printf("own leaked %lu\n", a * b);
	} else if (strcmp(mode, "threads") == 0) {
		pthread_t t[64];
		per_thread = b;
		start();
		for (unsigned long i = 0; i < a && i < 64; i++)
			pthread_create(&t[i], NULL, thread_here, (void *)(i + 1));
		for (unsigned long i = 0; i < a && i < 64; i++)
			pthread_join(t[i], NULL);
		report();
		printf("own allocs %lu\nown frees %lu\n",
		       atomic_load(&thread_allocs), atomic_load(&thread_frees));
	} else if (strcmp(mode, "waves") == 0) {
		/* a waves of b threads each, 20000 allocations a thread: each
		 * wave's threads take the counter tables the last one left */
		pthread_t t[64];
		per_thread = 20000;
		start();
		for (unsigned long w = 0; w < a; w++) {
			for (unsigned long i = 0; i < b && i < 64; i++)
				pthread_create(&t[i], NULL, thread_here,
					       (void *)(uintptr_t)(w * 64 + i + 1));
			for (unsigned long i = 0; i < b && i < 64; i++)
				pthread_join(t[i], NULL);
		}
		report();
		printf("own allocs %lu\nown frees %lu\n",
		       atomic_load(&thread_allocs), atomic_load(&thread_frees));
	} else if (strcmp(mode, "fork") == 0) {
		/* Threads allocate while the main thread forks. */
		pthread_t t[4];
		per_thread = 200000;
		start();
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, thread_here, (void *)(uintptr_t)(i + 1));
		leak_here(a, 100);
		pid_t pid = fork();
		if (pid == 0) {
			leak_here(a, 100); /* the child goes on tracking */
			printf("child:\n");
			report();
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("parent:\n");
		report();
		printf("own child-status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	} else if (strcmp(mode, "onoff") == 0) {
		pthread_t t;
		per_thread = 500000;
		pthread_create(&t, NULL, thread_here, (void *)7);
		unsigned long bad = 0;
		for (unsigned long r = 0; r < a; r++) {
			start();
			leak_here(10, 32);
			vmheap_native_totals tt;
			size_t n = sites(NULL, 0);
			vmheap_native_stack *v = calloc(n + 64, sizeof *v);
			n = sites(v, n + 64);
			unsigned long live = 0;
			for (size_t i = 0; i < n; i++) {
				Dl_info info;
				if (dladdr((void *)(uintptr_t)(v[i].frames[0] - 1), &info) &&
				    info.dli_sname != NULL && strcmp(info.dli_sname, "leak_here") == 0)
					live += v[i].live_bytes;
			}
			free(v);
			if (live != 320)
				bad++;
			stop();
			totals(&tt);
			if (tt.stacks != 0 || tt.live_count != 0)
				bad++;
			free_kept(10);
		}
		pthread_join(t, NULL);
		printf("own bad-rounds %lu\n", bad);
	} else if (strcmp(mode, "dlopen") == 0) {
		loads(a);
	} else if (strcmp(mode, "signal") == 0) {
		signals(a);
	} else if (strcmp(mode, "paths") == 0) {
		paths(a);
	} else if (strcmp(mode, "vla") == 0) {
		vla(a);
	} else if (strcmp(mode, "registered") == 0) {
		registered();
	} else if (strcmp(mode, "blocks") == 0) {
		unsigned long bad = blocks();
		printf("own bad %lu\n", bad);
	} else {
		return 2;
	}
	return 0;
}
