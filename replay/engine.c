/*
 * engine.c - one replay of a program (replay-internal.h) in this process,
 * under whatever allocator malloc resolves to.
 *
 * The block table (one entry per slot: a state word, the pointer, the
 * size) and the workers are mmap'ed before the replay starts; the threads
 * are made before it too (glibc's pthread_create takes a few bytes of
 * malloc for a thread's TLS vector, before the measured phase).  During
 * the replay the only calls into the allocator are the program's.
 *
 * A slot's state word is 2*use+1 while block (slot, use) lives and
 * 2*use+2 once it is freed (0: never used).  An event that needs a block
 * another thread makes, or a slot another thread frees, spins briefly
 * then sleeps on the word with futex(2); whoever changes a word that has
 * the WAITERS bit wakes the sleepers.  The builder has shown that one
 * order satisfies every wait, so none waits forever.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "replay-internal.h"

#define WAITERS 0x80000000u

struct slot {
	_Atomic uint32_t state;
	uint32_t pad;
	char *ptr;
	uint64_t size;
};

struct worker {
	const struct rp_program *p;
	struct slot *slots;
	const struct rp_thread *t;
	_Atomic uint32_t *go;
	pthread_t tid;
	int pages;    /* write a byte of every page, not only the first */
	int64_t live; /* bytes this thread made minus bytes it freed */
	uint64_t ops, failures;
	char pad[64];
};

static long futex(_Atomic uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

static void wait_state(_Atomic uint32_t *w, uint32_t want)
{
	uint32_t s = atomic_load_explicit(w, memory_order_acquire);
	int spin;

	if ((s & ~WAITERS) == want)
		return;
	for (spin = 0; spin < 200; spin++) {
		__builtin_ia32_pause();
		s = atomic_load_explicit(w, memory_order_acquire);
		if ((s & ~WAITERS) == want)
			return;
	}
	for (;;) {
		s = atomic_load_explicit(w, memory_order_acquire);
		if ((s & ~WAITERS) == want)
			return;
		if (!(s & WAITERS) &&
		    !atomic_compare_exchange_weak_explicit(
			w, &s, s | WAITERS, memory_order_acquire,
			memory_order_acquire))
			continue;
		futex(w, FUTEX_WAIT_PRIVATE, s | WAITERS);
	}
}

static void set_state(_Atomic uint32_t *w, uint32_t v)
{
	uint32_t old = atomic_exchange_explicit(w, v, memory_order_release);

	if (old & WAITERS)
		futex(w, FUTEX_WAKE_PRIVATE, INT_MAX);
}

/* Make the block of e; NULL when the allocator refused. */
static char *make(const struct rp_event *e, char *old)
{
	size_t align = (size_t)1 << e->align_shift;
	void *p = NULL;

	switch (e->op) {
	case RP_MALLOC:
		return malloc(e->size);
	case RP_CALLOC:
		return calloc(1, e->size);
	case RP_REALLOC:
		return realloc(old, e->size);
	case RP_REALLOCARRAY:
		return reallocarray(old, 1, e->size);
	case RP_POSIX_MEMALIGN:
		return posix_memalign(&p, align, e->size) ? NULL : p;
	case RP_ALIGNED_ALLOC:
		return aligned_alloc(align, e->size);
	case RP_MEMALIGN:
		return memalign(align, e->size);
	case RP_VALLOC:
		return valloc(e->size);
	case RP_PVALLOC:
		return pvalloc(e->size);
	}
	return NULL;
}

/*
 * One event.  `sync` is 0 when nothing runs beside this thread (--threads
 * 1, or one recorded thread): the states are then written, never waited
 * for.
 */
static inline void step(struct worker *w, const struct rp_event *e, int sync)
{
	struct slot *s = &w->slots[e->slot];
	char *p, *old = NULL;

	if (e->op == RP_FREE) {
		if (sync)
			wait_state(&s->state, 2 * e->use + 1);
		free(s->ptr);
		w->live -= (int64_t)s->size;
		s->ptr = NULL;
		if (sync)
			set_state(&s->state, 2 * e->use + 2);
		else
			atomic_store_explicit(&s->state, 2 * e->use + 2,
					      memory_order_relaxed);
		w->ops++;
		return;
	}
	if (e->op == RP_REALLOC || e->op == RP_REALLOCARRAY) {
		struct slot *o = &w->slots[e->old_slot];

		if (sync)
			wait_state(&o->state, 2 * e->old_use + 1);
		old = o->ptr;
		w->live -= (int64_t)o->size;
		if (e->old_slot != e->slot) {
			o->ptr = NULL;
			if (sync)
				set_state(&o->state, 2 * e->old_use + 2);
			else
				atomic_store_explicit(&o->state,
						      2 * e->old_use + 2,
						      memory_order_relaxed);
		}
	}
	if (sync && !((e->op == RP_REALLOC || e->op == RP_REALLOCARRAY) &&
		      e->old_slot == e->slot))
		wait_state(&s->state, 2 * e->use);
	p = make(e, old);
	if (p && e->size) {
		*(volatile char *)p = 1;
		if (w->pages)
			for (uint64_t off = 4096; off < e->size; off += 4096)
				((volatile char *)p)[off] = 1;
	} else if (!p && e->size) {
		w->failures++;
	}
	s->ptr = p;
	s->size = e->size;
	w->live += (int64_t)e->size;
	if (sync)
		set_state(&s->state, 2 * e->use + 1);
	else
		atomic_store_explicit(&s->state, 2 * e->use + 1,
				      memory_order_relaxed);
	w->ops++;
}

static void *run_thread(void *arg)
{
	struct worker *w = arg;
	const struct rp_event *ev = rp_events(w->p) + w->t->first;
	uint64_t i, n = w->t->count;

	while (atomic_load_explicit(w->go, memory_order_acquire) == 0)
		futex(w->go, FUTEX_WAIT_PRIVATE, 0);
	for (i = 0; i < n; i++)
		step(w, &ev[i], 1);
	return NULL;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* VmRSS and VmHWM of /proc/self/status in bytes (read without stdio:
 * fopen would call the allocator under test). */
static int read_rss(uint64_t *rss, uint64_t *hwm)
{
	char buf[8192], *l;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC), got = 0;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if ((l = strstr(buf, "\nVmRSS:")) != NULL) {
		*rss = strtoull(l + 7, NULL, 10) * 1024;
		got++;
	}
	if ((l = strstr(buf, "\nVmHWM:")) != NULL) {
		*hwm = strtoull(l + 7, NULL, 10) * 1024;
		got++;
	}
	return got == 2 ? 0 : -1;
}

/* Make VmHWM the current RSS (Linux 4.0+); 0 when it could. */
static int reset_hwm(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	int ok = fd >= 0 && write(fd, "5", 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

static void where_malloc(struct rp_result *r)
{
	Dl_info info;
	void *f = dlsym(RTLD_DEFAULT, "malloc");

	if (f && dladdr(f, &info) && info.dli_fname)
		snprintf(r->malloc_from, sizeof r->malloc_from, "%s",
			 info.dli_fname);
}

static int failed(struct rp_result *r, int code, const char *what)
{
	r->status = code;
	snprintf(r->message, sizeof r->message, "%s: %s", what,
		 strerror(errno));
	return code;
}

static void *map_anon(size_t bytes)
{
	void *m = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

int rp_replay(const struct rp_program *p, int serial, int pages, int release,
	      struct rp_result *r)
{
	size_t slots_bytes = (size_t)p->nslots * sizeof(struct slot);
	uint32_t nw = serial || p->nthreads <= 1 ? 1 : p->nthreads, i;
	size_t w_bytes = nw * sizeof(struct worker);
	struct slot *slots = map_anon(slots_bytes);
	struct worker *w = map_anon(w_bytes);
	_Atomic uint32_t go = 0;
	uint64_t t0, c0, rss_now = 0, hwm = 0;
	int hwm_reset;

	memset(r, 0, sizeof *r);
	r->magic = RP_RESULT_MAGIC;
	where_malloc(r);
	if (!slots || !w)
		return failed(r, RP_ENOMEM, "cannot map the block table");
	for (i = 0; i < nw; i++) {
		w[i].p = p;
		w[i].slots = slots;
		w[i].t = &rp_threads(p)[i];
		w[i].go = &go;
		w[i].pages = pages;
	}
	if (nw > 1)
		for (i = 0; i < nw; i++)
			if ((errno = pthread_create(&w[i].tid, NULL, run_thread,
						    &w[i])) != 0) {
				atomic_store(&go, 1);
				futex(&go, FUTEX_WAKE_PRIVATE, INT_MAX);
				while (i-- > 0)
					pthread_join(w[i].tid, NULL);
				return failed(r, RP_ENOMEM,
					      "cannot start a replay thread");
			}
	hwm_reset = reset_hwm();
	read_rss(&r->rss_base, &hwm);
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (nw > 1) {
		atomic_store_explicit(&go, 1, memory_order_release);
		futex(&go, FUTEX_WAKE_PRIVATE, INT_MAX);
		for (i = 0; i < nw; i++)
			pthread_join(w[i].tid, NULL);
	} else if (p->nthreads == 1 && !serial) {
		const struct rp_event *ev = rp_events(p);
		uint64_t k;

		for (k = 0; k < p->nevents; k++)
			step(&w[0], &ev[k], 0);
	} else {
		const struct rp_event *ev = rp_events(p);
		const uint64_t *order = rp_serial(p);
		uint64_t k;

		for (k = 0; k < p->nevents; k++)
			step(&w[0], &ev[order[k]], 0);
	}
	r->cpu_ns = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	r->wall_ns = now_ns(CLOCK_MONOTONIC) - t0;
	r->threads = nw;
	if (read_rss(&rss_now, &hwm) == 0) {
		if (hwm_reset < 0 || hwm < r->rss_base)
			hwm = rss_now; /* no reset: the peak is unknown */
		r->rss_peak = hwm - r->rss_base;
		r->rss_end = rss_now > r->rss_base ? rss_now - r->rss_base : 0;
		if (rss_now > hwm)
			r->rss_peak = rss_now - r->rss_base;
	}
	for (i = 0; i < nw; i++) {
		r->ops += w[i].ops;
		r->failures += w[i].failures;
		r->live_deltas += (uint64_t)w[i].live;
	}
	for (i = 0; i < p->nslots; i++)
		if (atomic_load_explicit(&slots[i].state,
					 memory_order_relaxed) &
		    1)
			r->live_end += slots[i].size;
	if (r->failures) {
		r->status = RP_ENOMEM;
		snprintf(r->message, sizeof r->message,
			 "the allocator refused %llu of the allocations",
			 (unsigned long long)r->failures);
	}
	/* the blocks still live stay: the process exits with them */
	for (i = 0; release && i < p->nslots; i++)
		if (atomic_load_explicit(&slots[i].state,
					 memory_order_relaxed) &
		    1)
			free(slots[i].ptr);
	munmap(w, w_bytes);
	munmap(slots, slots_bytes);
	return r->status;
}
