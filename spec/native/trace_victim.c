/*
 * trace_victim.c - a program recorded by spec/trace_test.c under
 * `vmheap-run --record`.  Every block it asks for has a size in
 * [40000, 41000) (calloc and reallocarray: the product), which the C
 * library's own allocations do not use, so the test can pick its calls
 * out of the trace.  It prints what it did: the calls of each kind, its
 * free() calls, and the blocks and bytes it leaves live at exit.
 *
 *   trace_victim work [THREADS]   threads that allocate with every call
 *                                 of the family, free blocks that other
 *                                 threads allocated, grow realloc chains
 *   trace_victim churn [THREADS]  threads sharing one glibc arena (so
 *                                 the same 1 MiB regions) make, realloc
 *                                 and free small blocks, 40,000 each,
 *                                 half of them freed by another thread
 *   trace_victim fork             allocate, fork; the child allocates,
 *                                 prints "child PID", exits 0
 *   trace_victim many N           N malloc-free pairs
 *   trace_victim threads          300 threads one after the other, then
 *                                 50 at once, each making one block of
 *                                 BASE+600 bytes that it keeps
 *   trace_victim own              a thread marked vmheap's own (as the
 *                                 agent marks its threads) makes 100
 *                                 blocks of BASE+500 bytes, the main
 *                                 thread 10 of BASE+501
 */

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BASE 40000u

enum { MALLOC, CALLOC, REALLOC, REALLOCARRAY, FREE, POSIX_MEMALIGN,
       ALIGNED_ALLOC, MEMALIGN, VALLOC, PVALLOC, NOPS };
static const char *const names[NOPS] = {
	"malloc", "calloc", "realloc", "reallocarray", "free",
	"posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc"};

static _Atomic unsigned long counts[NOPS];
static _Atomic unsigned long live_blocks, live_bytes;

static void *must(void *p)
{
	if (p == NULL) {
		fprintf(stderr, "trace_victim: out of memory\n");
		exit(1);
	}
	return p;
}

static void count(int op)
{
	atomic_fetch_add(&counts[op], 1);
}

/* A block of `size` bytes the victim keeps track of. */
struct blk {
	void *p;
	size_t size;
};

static void gone(struct blk *b)
{
	free(b->p);
	count(FREE);
	atomic_fetch_sub(&live_blocks, 1);
	atomic_fetch_sub(&live_bytes, b->size);
	b->p = NULL;
}

static void got(struct blk *b, void *p, size_t size)
{
	b->p = must(p);
	b->size = size;
	((volatile char *)p)[0] = 1;
	atomic_fetch_add(&live_blocks, 1);
	atomic_fetch_add(&live_bytes, size);
}

/* Blocks one thread allocated for the next to free. */
#define HANDED 300
static struct blk handed[16][HANDED];
static pthread_barrier_t barrier;
static int nthreads;

/* Small blocks, many in few 1 MiB regions shared by every thread (one
 * arena), so that the recorder's table grows while other threads add
 * and remove blocks of the same stripes: each thread fills CHURN, then
 * frees the previous thread's while it makes and reallocs as many of its
 * own, which the next thread frees. */
#define CHURN 20000
static void *made[16][CHURN], *remade[16][CHURN];

static void *arena_churn(void *arg)
{
	int me = (int)(long)arg;
	for (int k = 0; k < CHURN; k++)
		made[me][k] = must(malloc(16 + (size_t)(k % 185)));
	pthread_barrier_wait(&barrier);
	void **theirs = made[(me + nthreads - 1) % nthreads];
	for (int k = 0; k < CHURN; k++) {
		free(theirs[k]);
		void *q = must(malloc(16 + (size_t)(k % 97)));
		remade[me][k] = must(realloc(q, 16 + (size_t)(k % 300)));
	}
	pthread_barrier_wait(&barrier);
	for (int k = 0; k < CHURN; k++)
		free(remade[(me + 1) % nthreads][k]);
	return NULL;
}

static void *worker(void *arg)
{
	int me = (int)(long)arg;
	struct blk b, *mine = handed[me];
	void *p;

	for (int k = 0; k < HANDED; k++) { /* for the next thread */
		got(&mine[k], malloc(BASE + (size_t)k), BASE + (size_t)k);
		count(MALLOC);
	}
	pthread_barrier_wait(&barrier);
	/* the previous thread's blocks, freed here */
	struct blk *theirs = handed[(me + nthreads - 1) % nthreads];
	for (int k = 0; k < HANDED; k++)
		gone(&theirs[k]);

	for (int k = 0; k < 200; k++) {
		size_t s = BASE + (size_t)(k * 7 % 997);
		got(&b, malloc(s), s);
		count(MALLOC);
		gone(&b);
		got(&b, calloc(10, 4000 + (size_t)(k % 99)),
		    10 * (4000 + (size_t)(k % 99)));
		count(CALLOC);
		gone(&b);
		/* a realloc chain from NULL, growing and shrinking */
		size_t rs = BASE;
		void *volatile nul = NULL; /* else gcc calls malloc */
		void *r = must(realloc(nul, rs));
		count(REALLOC);
		for (int j = 1; j <= 20; j++) {
			rs = BASE + (size_t)((j * 37) % 900);
			r = must(realloc(r, rs));
			count(REALLOC);
		}
		r = must(reallocarray(r, 4, 10000 + (size_t)(k % 200)));
		count(REALLOCARRAY);
		got(&b, r, 4 * (10000 + (size_t)(k % 200)));
		gone(&b);
		/* odd alignments: memalign takes any */
		static const size_t odd[] = {24, 40, 100, 48, 4096};
		size_t a = odd[k % 5], ms = BASE + (size_t)(k % 50);
		got(&b, memalign(a, ms), ms);
		count(MEMALIGN);
		if ((a & (a - 1)) == 0 && (uintptr_t)b.p % a != 0)
			exit(3);
		gone(&b);
		if (posix_memalign(&p, 64, BASE + 1) != 0)
			exit(1);
		got(&b, p, BASE + 1);
		count(POSIX_MEMALIGN);
		gone(&b);
		got(&b, aligned_alloc(128, BASE + 128), BASE + 128);
		count(ALIGNED_ALLOC);
		gone(&b);
		got(&b, valloc(BASE + 2), BASE + 2);
		count(VALLOC);
		gone(&b);
		got(&b, pvalloc(BASE + 3), BASE + 3);
		count(PVALLOC);
		if (k % 50 != 0) /* 4 pvalloc'd blocks a thread stay live */
			gone(&b);
	}
	return NULL;
}

static void print_counts(void)
{
	for (int i = 0; i < NOPS; i++)
		printf("%s %lu\n", names[i], atomic_load(&counts[i]));
	printf("live_blocks %lu\nlive_bytes %lu\n", atomic_load(&live_blocks),
	       atomic_load(&live_bytes));
	fflush(stdout);
}

static int work(int n, void *(*fn)(void *))
{
	pthread_t t[16];
	nthreads = n < 2 ? 2 : n > 16 ? 16 : n;
	pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)(long)i) != 0)
			return 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	struct blk keep;
	got(&keep, malloc(BASE + 999), BASE + 999); /* live at exit */
	count(MALLOC);
	print_counts();
	return 0;
}

static int forks(void)
{
	struct blk b;
	got(&b, malloc(BASE + 5), BASE + 5);
	count(MALLOC);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		struct blk c;
		for (int i = 0; i < 100; i++) {
			got(&c, malloc(BASE + 7), BASE + 7);
			gone(&c);
		}
		got(&c, malloc(BASE + 123), BASE + 123); /* the child's leak */
		printf("child %ld\n", (long)getpid());
		exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 1;
	printf("parent %ld\n", (long)getpid());
	return 0;
}

static int many(long n)
{
	for (long i = 0; i < n; i++) {
		void *volatile p = must(malloc(BASE + (size_t)(i % 1000)));
		free(p);
	}
	printf("done %ld\n", n);
	return 0;
}

static void *own_main(void *arg)
{
	void (*own)(void) = (void (*)(void))dlsym(RTLD_DEFAULT,
						  "vmheap_native_own_thread");
	(void)arg;
	if (own == NULL)
		exit(4);
	own();
	for (int i = 0; i < 100; i++) {
		void *volatile p = must(malloc(BASE + 500));
		free(p);
	}
	return NULL;
}

static void *one_block(void *arg)
{
	(void)arg;
	void *volatile p = must(malloc(BASE + 600));
	(void)p;
	return NULL;
}

static int churn(void)
{
	pthread_t t[50];
	for (int i = 0; i < 300; i++) {
		if (pthread_create(&t[0], NULL, one_block, NULL) != 0)
			return 1;
		pthread_join(t[0], NULL);
	}
	for (int i = 0; i < 50; i++)
		if (pthread_create(&t[i], NULL, one_block, NULL) != 0)
			return 1;
	for (int i = 0; i < 50; i++)
		pthread_join(t[i], NULL);
	printf("done\n");
	return 0;
}

static int owns(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, own_main, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	for (int i = 0; i < 10; i++) {
		void *volatile p = must(malloc(BASE + 501));
		free(p);
	}
	printf("done\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "work") == 0)
		return work(argc > 2 ? atoi(argv[2]) : 4, worker);
	if (argc >= 2 && strcmp(argv[1], "churn") == 0) {
		mallopt(M_ARENA_MAX, 1);
		return work(argc > 2 ? atoi(argv[2]) : 4, arena_churn);
	}
	if (argc >= 2 && strcmp(argv[1], "fork") == 0)
		return forks();
	if (argc >= 2 && strcmp(argv[1], "threads") == 0)
		return churn();
	if (argc >= 2 && strcmp(argv[1], "own") == 0)
		return owns();
	if (argc >= 3 && strcmp(argv[1], "many") == 0)
		return many(atol(argv[2]));
	fprintf(stderr,
		"usage: trace_victim work [THREADS] | churn [THREADS] | fork | "
		"many N | own | threads\n");
	return 2;
}
