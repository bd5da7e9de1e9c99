/*
 * scanned.c - a C "VM" with the agent whose native blocks have a known
 * leak class each, for the leak scan's tests (spec/native_leaks_test.c).
 * Every shape is made by its own function, so that each is a site:
 *
 *   forget_here     FORGET blocks whose pointers are dropped: leaked
 *   keep_here       KEEP blocks in a static array: reachable
 *   parent_here     PARENTS blocks, dropped: leaked; each holds
 *   child_here      CHILDREN blocks: indirectly leaked
 *   interior_here   INTERIOR blocks known only by p + 16: possibly leaked
 *   hidden_here     HIDDEN blocks whose addresses are kept as longs:
 *                   reachable (the scan is conservative)
 *   self_here       SELF blocks that point at themselves, dropped: leaked
 *   cycle_here      CYCLE pairs pointing at each other, dropped: one of a
 *                   pair leaked, the other indirect (valgrind's clique)
 *   from_old_here   FROM_OLD blocks pointed at only from a block that was
 *                   allocated before tracking began: reachable
 *   unread_here     a block pointed at only from a write-only mapping:
 *                   leaked; one from a file mapping whose second page
 *                   faults: reachable (the dump counts both mappings
 *                   skipped; not made under valgrind)
 *
 * "vmheap-run --track scanned" stops and restarts tracking around the old
 * block (through the tracker's API) and then serves the agent, answering
 * "ready"; "scanned exit" (no agent, no tracker: for valgrind) makes the
 * same blocks and exits.  The line "more" on stdin runs forget_here,
 * parent_here and keep_here again (the 1,000 blocks kept before are
 * forgotten then); every line is answered "ok".
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmheap_agent.h"

#define FORGET 1000
#define KEEP 1000
#define PARENTS 100
#define CHILDREN 5
#define INTERIOR 100
#define HIDDEN 100
#define SELF 100
#define CYCLE 50
#define FROM_OLD 100

/* Not static: the compiler must keep their stores (and the allocations,
 * which it may drop when nothing reads what they return). */
void *kept[KEEP];
char *inner[INTERIOR];
long hidden[HIDDEN];
void **old; /* allocated before tracking began */
void **bulk;

/* Each returns its block through a volatile store, so that no pointer
 * outlives the call in a register the compiler keeps. */
static void *volatile sink;

__attribute__((noinline)) void forget_here(void)
{
	for (int i = 0; i < FORGET; i++) {
		sink = malloc(48);
		memset(sink, 0x11, 48);
	}
	sink = NULL;
}

__attribute__((noinline)) void keep_here(void)
{
	for (int i = 0; i < KEEP; i++)
		kept[i] = calloc(1, 64);
}

__attribute__((noinline)) void *child_here(void)
{
	long *p = calloc(1, 32);
	p[3] = 3; /* (not a tail call: the site's frame is this one) */
	return p;
}

__attribute__((noinline)) void parent_here(void)
{
	for (int i = 0; i < PARENTS; i++) {
		void **p = calloc(CHILDREN, sizeof(void *));
		for (int k = 0; k < CHILDREN; k++)
			p[k] = child_here();
		sink = p;
	}
	sink = NULL;
}

__attribute__((noinline)) void interior_here(void)
{
	for (int i = 0; i < INTERIOR; i++)
		inner[i] = (char *)calloc(1, 80) + 16;
}

__attribute__((noinline)) void hidden_here(void)
{
	for (int i = 0; i < HIDDEN; i++)
		hidden[i] = (long)calloc(1, 24);
}

__attribute__((noinline)) void self_here(void)
{
	for (int i = 0; i < SELF; i++) {
		void **p = malloc(40);
		p[0] = p;
		p[1] = p;
		sink = p;
	}
	sink = NULL;
}

__attribute__((noinline)) void cycle_here(void)
{
	for (int i = 0; i < CYCLE; i++) {
		void **a = calloc(1, 56), **b = calloc(1, 56);
		a[0] = b;
		b[0] = a;
		sink = a;
	}
	sink = NULL;
}

__attribute__((noinline)) void from_old_here(void)
{
	for (int i = 0; i < FROM_OLD; i++)
		old[i] = calloc(1, 72);
}

/* SCANNED_BULK_MIB=N (for measuring the scan, not in the tests): N MiB
 * more in 1 KiB blocks, every other one kept in an array, the rest
 * forgotten. */
__attribute__((noinline)) void bulk_here(void)
{
	const char *e = getenv("SCANNED_BULK_MIB");
	size_t n = e ? (size_t)strtoul(e, NULL, 10) * 1024 : 0;
	void **keep = n ? malloc(n / 2 * sizeof(*keep) + 1) : NULL;
	for (size_t i = 0; i < n; i++) {
		char *p = malloc(1024);
		memset(p, 0x22, 1024);
		if (i % 2 == 0)
			keep[i / 2] = p;
	}
	bulk = keep;
}

static void make_all(void)
{
	forget_here();
	keep_here();
	parent_here();
	interior_here();
	hidden_here();
	self_here();
	cycle_here();
	from_old_here();
	bulk_here();
	/* (the stack below main's frame is not scrubbed: what these left
	 * there is what the scan meets in a real program) */
}

/* Two writable mappings the scan cannot read all of: one mapped
 * write-only ("-w-p" in /proc/self/maps), which holds the only pointer to
 * a block of unread_here (the scan calls it leaked: its pointer is no
 * root), and a file mapping of two pages over a one-page file, whose
 * second page faults; its first page holds the only pointer to another
 * block (reachable: that page is read). */
__attribute__((noinline)) void unread_here(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void **w = mmap(NULL, (size_t)page, PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char name[] = "scanned-XXXXXX";
	int fd = mkstemp(name);
	void **f = MAP_FAILED;
	if (fd >= 0 && ftruncate(fd, page) == 0)
		f = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE, fd, 0);
	if (fd >= 0) {
		unlink(name);
		close(fd);
	}
	if (w == MAP_FAILED || f == MAP_FAILED) {
		fprintf(stderr, "scanned: cannot map the unreadable memory\n");
		exit(1);
	}
	w[0] = malloc(88);
	f[0] = malloc(88);
}

static int run_stopped(void *ctx, int (*fn)(void *arg), void *arg)
{
	(void)ctx;
	return fn(arg);
}

static pid_t fork_stopped(void *ctx)
{
	(void)ctx;
	return fork();
}

static int walk_heap(void *ctx, vmheap_writer *w)
{
	(void)ctx, (void)w;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct vmheap_agent_host host = {
		.vm_name = "scanned",
		.vm_version = "1.0",
		.run_stopped = run_stopped,
		.fork_stopped = fork_stopped,
		.walk_heap = walk_heap,
	};
	int (*start)(void) = (int (*)(void))dlsym(RTLD_DEFAULT,
						  "vmheap_native_start");
	void (*stop)(void) = (void (*)(void))dlsym(RTLD_DEFAULT,
						   "vmheap_native_stop");
	struct vmheap_agent_config cfg;
	vmheap_agent *a;
	char err[512], line[256];

	if (stop)
		stop(); /* the old block is untracked */
	old = calloc(FROM_OLD, sizeof(*old));
	if (start && start() != 0)
		return 1;
	if (argc < 2 || strcmp(argv[1], "exit") != 0)
		unread_here(); /* first: later calls overwrite its stack */
	make_all();
	if (argc > 1 && strcmp(argv[1], "exit") == 0)
		return 0;
	if (vmheap_agent_config_from_env(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "scanned: %s\n", err);
		return 1;
	}
	if (vmheap_agent_start(&a, &cfg, &host) < 0) {
		fprintf(stderr, "scanned: %s\n", vmheap_agent_error(a));
		vmheap_agent_stop(a);
		return 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (strcmp(line, "more\n") == 0) {
			forget_here(); /* 1,000 more leaked */
			parent_here(); /* 100 more leaked, 500 indirect */
			keep_here();   /* the 1,000 kept before: leaked now */
		}
		printf("ok\n");
	}
	vmheap_agent_stop(a);
	return 0;
}
