/*
 * scan.c - read a dump's blocks once and decode them on several threads
 * (vmheap_scan_blocks, see vmheap_analysis.h).  libvmheap-analysis owns
 * the threads: libvmheap itself starts none.
 *
 * With T threads, T-1 decoding threads are started and the calling thread
 * is the T-th.  It reads each block with vmheap_reader_next_block() (which
 * checks its CRC); when a slot of the queue is free it copies the block
 * there for the decoding threads, and when every slot is taken (they are
 * busy) it decodes the block itself, in place.  So the work balances
 * itself, and no thread sits idle on a machine with T processors.
 * Decoding threads take queued slots in file order, run the caller's
 * function on them and give the slot back.  The first failure stops the
 * queue; of several failures the earliest block wins, and a decoding
 * failure always comes before the reader's own (the reader had already
 * handed that block out).  A caller may name blocks that are cheaper to
 * decode on the reading thread than to copy (vmheap_scan_blocks_cheap:
 * the census, for blocks with a summary).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmheap_analysis.h"
#include "analysis-internal.h"

#define SLOTS_PER_WORKER 3
#define PROGRESS_INTERVAL_NS 100000000ull

struct slot {
	uint8_t *buf;
	size_t cap;
	struct vmheap_block blk;
};

struct scan {
	pthread_mutex_t mu;
	pthread_cond_t ready_cv, free_cv;
	struct slot *slots;
	size_t nslots;
	size_t *free_idx, nfree;
	size_t *ready, rhead, rcount;
	int done, failed;

	vmheap_scan_fn fn;
	vmheap_scan_cheap_fn cheap; /* NULL: no block is */
	void *state;

	int err_code;
	uint64_t err_offset;
	char err[512];
};

struct worker {
	struct scan *s;
	unsigned index;
	pthread_t tid;
};

unsigned vmheap_scan_threads(const struct vmheap_scan_options *opt)
{
	if (opt && opt->threads)
		return opt->threads;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 1 ? 2 : 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Record a decoding failure; caller holds the lock. */
static void note_failure(struct scan *s, int rc, uint64_t offset,
			 const char *msg)
{
	if (!s->failed || offset < s->err_offset) {
		s->err_code = rc;
		s->err_offset = offset;
		snprintf(s->err, sizeof(s->err), "%s", msg);
	}
	s->failed = 1;
	pthread_cond_broadcast(&s->ready_cv);
	pthread_cond_broadcast(&s->free_cv);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct scan *s = w->s;
	char err[512];

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->rcount && !s->done && !s->failed)
			pthread_cond_wait(&s->ready_cv, &s->mu);
		if (!s->rcount || s->failed)
			break;
		size_t idx = s->ready[s->rhead];
		s->rhead = (s->rhead + 1) % s->nslots;
		s->rcount--;
		pthread_mutex_unlock(&s->mu);

		err[0] = '\0';
		int rc = s->fn(s->state, w->index, &s->slots[idx].blk, err,
			       sizeof(err));

		pthread_mutex_lock(&s->mu);
		if (rc < 0)
			note_failure(s, rc, s->slots[idx].blk.offset, err);
		s->free_idx[s->nfree++] = idx;
		pthread_cond_signal(&s->free_cv);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static void maybe_progress(const struct vmheap_scan_options *opt,
			   vmheap_reader *r, uint64_t *last)
{
	if (!opt || !opt->progress)
		return;
	uint64_t t = now_ns();
	if (t - *last < PROGRESS_INTERVAL_NS)
		return;
	*last = t;
	opt->progress(opt->progress_arg, vmheap_reader_offset(r));
}

static void set_fn_error(char *err, size_t errlen, vmheap_reader *r,
			 const char *msg, int rc)
{
	snprintf(err, errlen, "%s: %s", vmheap_reader_name(r),
		 *msg ? msg : vmheap_strerror(rc));
}

static int scan_inline(vmheap_reader *r, vmheap_scan_fn fn, void *state,
		       const struct vmheap_scan_options *opt, char *err,
		       size_t errlen)
{
	struct vmheap_block blk;
	uint64_t last = 0; /* the first block draws at once */
	char msg[512];
	int rc;

	while ((rc = vmheap_reader_next_block(r, &blk)) > 0) {
		msg[0] = '\0';
		int frc = fn(state, 0, &blk, msg, sizeof(msg));
		if (frc < 0) {
			set_fn_error(err, errlen, r, msg, frc);
			return frc;
		}
		maybe_progress(opt, r, &last);
	}
	if (rc < 0)
		snprintf(err, errlen, "%s", vmheap_reader_error(r));
	return rc;
}

static int scan_init(struct scan *s, unsigned threads)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->ready_cv, NULL);
	pthread_cond_init(&s->free_cv, NULL);
	s->nslots = (size_t)(threads - 1) * SLOTS_PER_WORKER;
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	s->free_idx = calloc(s->nslots, sizeof(*s->free_idx));
	s->ready = calloc(s->nslots, sizeof(*s->ready));
	if (!s->slots || !s->free_idx || !s->ready)
		return VMHEAP_ENOMEM;
	for (size_t i = 0; i < s->nslots; i++)
		s->free_idx[i] = s->nslots - 1 - i;
	s->nfree = s->nslots;
	return 0;
}

static void scan_release(struct scan *s)
{
	if (s->slots)
		for (size_t i = 0; i < s->nslots; i++)
			free(s->slots[i].buf);
	free(s->slots);
	free(s->free_idx);
	free(s->ready);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->ready_cv);
	pthread_cond_destroy(&s->free_cv);
}

/* Copy `blk` into a free slot and queue it, or, when no slot is free,
 * decode it here as thread `self`.  Returns 0, or -1 when a block failed
 * (stop reading), or VMHEAP_ENOMEM. */
static int produce(struct scan *s, const struct vmheap_block *blk,
		   unsigned self)
{
	pthread_mutex_lock(&s->mu);
	if (s->failed) {
		pthread_mutex_unlock(&s->mu);
		return -1;
	}
	if (!s->nfree || (s->cheap && s->cheap(s->state, blk))) {
		pthread_mutex_unlock(&s->mu);
		char err[512];
		err[0] = '\0';
		int rc = s->fn(s->state, self, blk, err, sizeof(err));
		if (rc < 0) {
			pthread_mutex_lock(&s->mu);
			note_failure(s, rc, blk->offset, err);
			pthread_mutex_unlock(&s->mu);
			return -1;
		}
		return 0;
	}
	size_t idx = s->free_idx[--s->nfree];
	pthread_mutex_unlock(&s->mu);

	struct slot *sl = &s->slots[idx];
	if (sl->cap < blk->length) {
		size_t ncap = blk->length < 65536 ? 65536 : blk->length;
		uint8_t *nb = realloc(sl->buf, ncap);
		if (!nb) {
			pthread_mutex_lock(&s->mu);
			s->free_idx[s->nfree++] = idx;
			pthread_mutex_unlock(&s->mu);
			return VMHEAP_ENOMEM;
		}
		sl->buf = nb;
		sl->cap = ncap;
	}
	if (blk->length)
		memcpy(sl->buf, blk->data, blk->length);
	sl->blk = *blk;
	sl->blk.data = sl->buf;

	pthread_mutex_lock(&s->mu);
	s->ready[(s->rhead + s->rcount) % s->nslots] = idx;
	s->rcount++;
	pthread_cond_signal(&s->ready_cv);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

int vmheap_scan_blocks(vmheap_reader *r, vmheap_scan_fn fn, void *state,
		       const struct vmheap_scan_options *opt, char *err,
		       size_t errlen)
{
	return vmheap_scan_blocks_cheap(r, fn, NULL, state, opt, err, errlen);
}

int vmheap_scan_blocks_cheap(vmheap_reader *r, vmheap_scan_fn fn,
			     vmheap_scan_cheap_fn cheap, void *state,
			     const struct vmheap_scan_options *opt, char *err,
			     size_t errlen)
{
	unsigned threads = vmheap_scan_threads(opt);

	if (errlen)
		err[0] = '\0';
	if (threads <= 1)
		return scan_inline(r, fn, state, opt, err, errlen);

	struct scan s;
	struct worker *workers = calloc(threads, sizeof(*workers));
	int rc = scan_init(&s, threads);
	if (rc < 0 || !workers) {
		snprintf(err, errlen, "%s: out of memory",
			 vmheap_reader_name(r));
		scan_release(&s);
		free(workers);
		return VMHEAP_ENOMEM;
	}
	s.fn = fn;
	s.cheap = cheap;
	s.state = state;

	unsigned started = 0;
	for (; started < threads - 1; started++) {
		workers[started].s = &s;
		workers[started].index = started;
		if (pthread_create(&workers[started].tid, NULL, worker_main,
				   &workers[started]))
			break;
	}

	struct vmheap_block blk;
	uint64_t last = 0; /* the first block draws at once */
	int rrc = 0, prc = 0;
	if (!started)
		prc = VMHEAP_ENOMEM;
	while (!prc && (rrc = vmheap_reader_next_block(r, &blk)) > 0) {
		prc = produce(&s, &blk, threads - 1);
		maybe_progress(opt, r, &last);
	}

	pthread_mutex_lock(&s.mu);
	s.done = 1;
	pthread_cond_broadcast(&s.ready_cv);
	pthread_mutex_unlock(&s.mu);
	for (unsigned i = 0; i < started; i++)
		pthread_join(workers[i].tid, NULL);

	if (s.failed) {
		set_fn_error(err, errlen, r, s.err, s.err_code);
		rc = s.err_code;
	} else if (prc == VMHEAP_ENOMEM) {
		snprintf(err, errlen, "%s: out of memory",
			 vmheap_reader_name(r));
		rc = prc;
	} else if (rrc < 0) {
		snprintf(err, errlen, "%s", vmheap_reader_error(r));
		rc = rrc;
	} else {
		rc = 0;
	}
	scan_release(&s);
	free(workers);
	return rc;
}
