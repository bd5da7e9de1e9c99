/*
 * program.c - a malloc trace turned into a replay program (see
 * replay-internal.h): two passes over the trace's events, then one
 * simulation that gives every block its use of its slot, checks that each
 * free and realloc ends a live block, and finds one serial order that
 * respects every block's life (the order of --threads 1, and the proof
 * that the threads of the replay cannot wait for each other forever).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay-internal.h"

/* Limits of what one replay holds (the engine's table and threads). */
#define MAX_THREADS 65536u
#define MAX_SLOTS (1ull << 31)
#define MAX_USES (1u << 30) /* the state word keeps 2*use+2 < 2^31 */

static const char *const op_names[RP_OP_COUNT] = {
    "malloc",	      "calloc",	       "realloc", "reallocarray",
    "free",	      "posix_memalign", "aligned_alloc", "memalign",
    "valloc",	      "pvalloc",
};

const char *rp_op_name(unsigned op)
{
	return op < RP_OP_COUNT ? op_names[op] : "?";
}

static int is_realloc(unsigned op)
{
	return op == RP_REALLOC || op == RP_REALLOCARRAY;
}

struct slot_sim {
	uint64_t size;	   /* of the live block */
	uint32_t use;	   /* of the last block made in it */
	uint32_t gen;	   /* its generation in the trace */
	uint8_t live, used;
};

struct build {
	const struct rp_source *src;
	char *err;
	size_t errsz;
	uint64_t *count;  /* events per recorded thread */
	uint32_t nrec;	  /* recorded threads seen (max index + 1) */
	uint64_t nevents;
	uint64_t max_slot;
	struct rp_program *p; /* the memfd's mapping */
	struct rp_thread *threads;
	struct rp_event *ev;
	uint64_t *serial;
	uint64_t *offset; /* each event's trace offset, for messages */
	uint32_t *thread_of; /* recorded index -> program thread */
	struct slot_sim *slots;
};

static int fail(struct build *b, int code, uint64_t off, const char *fmt,
		const char *what)
{
	char text[200];

	snprintf(text, sizeof text, fmt, what);
	snprintf(b->err, b->errsz, "%s: %s (byte offset %llu)", b->src->name,
		 text, (unsigned long long)off);
	return code;
}

/* Pass 1: count each thread's events, check what one event alone shows. */
static int count_events(struct build *b)
{
	struct rp_input in;
	uint32_t cap = 0;
	int rc;

	while ((rc = b->src->next(b->src->ctx, &in, b->err, b->errsz)) > 0) {
		if (in.op >= RP_OP_COUNT)
			return fail(b, RP_EFORMAT, in.offset,
				    "unknown operation %s", "");
		if (in.thread >= MAX_THREADS)
			return fail(b, RP_EFORMAT, in.offset,
				    "thread index out of range%s", "");
		if (in.slot >= MAX_SLOTS ||
		    (is_realloc(in.op) && in.old_slot >= MAX_SLOTS))
			return fail(b, RP_EFORMAT, in.offset,
				    "block slot out of range%s", "");
		if (in.gen > b->src->gen_mask ||
		    (is_realloc(in.op) && in.old_gen > b->src->gen_mask))
			return fail(b, RP_EFORMAT, in.offset,
				    "block generation out of range%s", "");
		if ((in.op == RP_POSIX_MEMALIGN ||
		     in.op == RP_ALIGNED_ALLOC || in.op == RP_MEMALIGN) &&
		    (in.align == 0 || (in.align & (in.align - 1))))
			return fail(b, RP_EFORMAT, in.offset,
				    "%s alignment is not a power of two",
				    rp_op_name(in.op));
		if (in.thread >= cap) {
			uint32_t n = cap ? cap : 16;
			uint64_t *c;

			while (n <= in.thread)
				n *= 2;
			c = realloc(b->count, n * sizeof *c);
			if (!c)
				return fail(b, RP_ENOMEM, in.offset,
					    "out of memory%s", "");
			memset(c + cap, 0, (n - cap) * sizeof *c);
			b->count = c;
			cap = n;
		}
		if (in.thread >= b->nrec)
			b->nrec = in.thread + 1;
		b->count[in.thread]++;
		b->nevents++;
		if (in.slot > b->max_slot)
			b->max_slot = in.slot;
		if (is_realloc(in.op) && in.old_slot > b->max_slot)
			b->max_slot = in.old_slot;
	}
	return rc;
}

static void *map_anon(size_t bytes)
{
	void *m = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

static uint64_t align8(uint64_t n)
{
	return (n + 7) & ~7ull;
}

/* The memfd and its layout. */
static int make_memfd(struct build *b, int *fd)
{
	uint32_t nthreads = 0, t;
	uint64_t bytes, first = 0;
	struct rp_program *p;

	for (t = 0; t < b->nrec; t++)
		nthreads += b->count[t] > 0;
	*fd = memfd_create("vmheap-replay-program",
			   MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (*fd < 0) {
		snprintf(b->err, b->errsz, "memfd_create: %s",
			 strerror(errno));
		return RP_EIO;
	}
	bytes = align8(sizeof *p) + align8(nthreads * sizeof(struct rp_thread)) +
		b->nevents * (sizeof(struct rp_event) + sizeof(uint64_t));
	if (ftruncate(*fd, (off_t)bytes) < 0 ||
	    (p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd,
		      0)) == MAP_FAILED) {
		snprintf(b->err, b->errsz,
			 "cannot make the replay program of %llu bytes: %s",
			 (unsigned long long)bytes, strerror(errno));
		return RP_ENOMEM;
	}
	p->magic = RP_PROGRAM_MAGIC;
	p->bytes = bytes;
	p->nthreads = nthreads;
	p->nslots = b->nevents ? (uint32_t)(b->max_slot + 1) : 0;
	p->nevents = b->nevents;
	p->threads_off = align8(sizeof *p);
	p->events_off = p->threads_off + align8(nthreads * sizeof *b->threads);
	p->serial_off = p->events_off + b->nevents * sizeof(struct rp_event);
	b->p = p;
	b->threads = (struct rp_thread *)((char *)p + p->threads_off);
	b->ev = (struct rp_event *)((char *)p + p->events_off);
	b->serial = (uint64_t *)((char *)p + p->serial_off);
	b->thread_of = calloc(b->nrec ? b->nrec : 1, sizeof *b->thread_of);
	b->offset = map_anon(b->nevents * sizeof *b->offset);
	b->slots = map_anon((b->max_slot + 1) * sizeof *b->slots);
	if (!b->thread_of || !b->offset || !b->slots) {
		snprintf(b->err, b->errsz, "out of memory");
		return RP_ENOMEM;
	}
	nthreads = 0;
	for (t = 0; t < b->nrec; t++) {
		if (!b->count[t])
			continue;
		b->thread_of[t] = nthreads;
		b->threads[nthreads].first = first;
		b->threads[nthreads].count = 0; /* filled by pass 2 */
		b->threads[nthreads].recorded = t;
		first += b->count[t];
		nthreads++;
	}
	return 0;
}

/* Pass 2: each event in its thread's array, with the trace's ids (the
 * generations in use and old_use until simulate() replaces them). */
static int place_events(struct build *b)
{
	struct rp_input in;
	uint64_t seen = 0;
	int rc;

	rc = b->src->rewind(b->src->ctx, b->err, b->errsz);
	if (rc < 0)
		return rc;
	while ((rc = b->src->next(b->src->ctx, &in, b->err, b->errsz)) > 0) {
		struct rp_thread *t;
		struct rp_event *e;
		uint64_t i;

		if (in.thread >= b->nrec || ++seen > b->nevents)
			return fail(b, RP_EIO, in.offset,
				    "the trace changed while it was read%s",
				    "");
		t = &b->threads[b->thread_of[in.thread]];
		if (t->count >= b->count[in.thread])
			return fail(b, RP_EIO, in.offset,
				    "the trace changed while it was read%s",
				    "");
		i = t->first + t->count++;
		e = &b->ev[i];
		memset(e, 0, sizeof *e);
		e->op = in.op;
		e->size = in.size;
		e->slot = (uint32_t)in.slot;
		e->use = (uint32_t)in.gen;
		if (is_realloc(in.op)) {
			e->old_slot = (uint32_t)in.old_slot;
			e->old_use = (uint32_t)in.old_gen;
		}
		if (in.align > 1)
			e->align_shift = (uint8_t)__builtin_ctzll(in.align);
		b->offset[i] = in.offset;
	}
	if (rc == 0 && seen != b->nevents)
		return fail(b, RP_EIO, 0,
			    "the trace changed while it was read%s", "");
	return rc;
}

static int next_gen_ok(const struct build *b, const struct slot_sim *s,
		       uint32_t gen)
{
	if (!s->used)
		return gen == b->src->first_gen;
	return gen == ((s->gen + 1ull) & b->src->gen_mask);
}

/* Whether event e (its ids still the trace's) can run now. */
static int ready(const struct build *b, const struct rp_event *e)
{
	const struct slot_sim *s = &b->slots[e->slot];

	if (e->op == RP_FREE)
		return s->live && s->gen == e->use;
	if (is_realloc(e->op)) {
		const struct slot_sim *o = &b->slots[e->old_slot];

		if (!o->live || o->gen != e->old_use)
			return 0;
		/* the block it returns begins: the slot's next generation
		 * (never the old id again: two threads could then resize
		 * one block at once) */
		if (e->slot == e->old_slot)
			return e->use == ((e->old_use + 1ull) & b->src->gen_mask);
	}
	return !s->live && next_gen_ok(b, s, e->use);
}

/* Run event e in the simulation; its ids become uses of slots. */
static int apply(struct build *b, struct rp_event *e, uint64_t i)
{
	struct slot_sim *s = &b->slots[e->slot];

	if (e->op == RP_FREE) {
		e->use = s->use;
		s->live = 0;
		b->p->live_end -= s->size;
		return 0;
	}
	if (is_realloc(e->op)) {
		struct slot_sim *o = &b->slots[e->old_slot];

		e->old_use = o->use;
		b->p->live_end -= o->size;
		o->live = 0;
	}
	if (s->used && s->use + 1 >= MAX_USES)
		return fail(b, RP_EFORMAT, b->offset[i],
			    "a slot is reused more than 2^30 times%s", "");
	s->gen = e->use;
	e->use = s->used ? s->use + 1 : 0;
	s->use = e->use;
	s->used = 1;
	s->live = 1;
	s->size = e->size;
	b->p->live_end += e->size;
	if (b->p->live_end > b->p->live_peak)
		b->p->live_peak = b->p->live_end;
	return 0;
}

/* Why the blocked event with the lowest offset cannot run. */
static int stuck(struct build *b, const uint64_t *pos)
{
	uint64_t best = UINT64_MAX, i;
	const struct rp_event *e;
	const struct slot_sim *s;
	char what[160];
	uint32_t t;

	for (t = 0; t < b->p->nthreads; t++) {
		const struct rp_thread *th = &b->threads[t];

		if (pos[t] < th->count &&
		    (best == UINT64_MAX ||
		     b->offset[th->first + pos[t]] < b->offset[best]))
			best = th->first + pos[t];
	}
	i = best;
	e = &b->ev[i];
	s = &b->slots[e->slot];
	if (e->op == RP_FREE || is_realloc(e->op)) {
		uint32_t slot = e->op == RP_FREE ? e->slot : e->old_slot;
		uint32_t gen = e->op == RP_FREE ? e->use : e->old_use;

		s = &b->slots[slot];
		if (!s->live || s->gen != gen) {
			snprintf(what, sizeof what,
				 "%s of block %u#%u, which no order of the "
				 "threads makes live first",
				 rp_op_name(e->op), slot, gen);
			return fail(b, RP_EFORMAT, b->offset[i], "%s", what);
		}
	}
	if (is_realloc(e->op) && e->slot == e->old_slot) {
		snprintf(what, sizeof what,
			 "%s of block %u#%u returns block %u#%u: the block "
			 "it returns is its slot's next generation",
			 rp_op_name(e->op), e->old_slot, e->old_use, e->slot,
			 e->use);
		return fail(b, RP_EFORMAT, b->offset[i], "%s", what);
	}
	snprintf(what, sizeof what,
		 "%s makes block %u#%u, but its slot %s", rp_op_name(e->op),
		 e->slot, e->use,
		 s->live ? "holds a live block that is never freed first"
			 : "never reaches that generation");
	return fail(b, RP_EFORMAT, b->offset[i], "%s", what);
}

/* Find a serial order, threads in turn, each as far as it can go. */
static int simulate(struct build *b)
{
	uint32_t n = b->p->nthreads, t;
	uint64_t *pos = calloc(n ? n : 1, sizeof *pos);
	uint64_t done = 0;
	int rc = 0;

	if (!pos) {
		snprintf(b->err, b->errsz, "out of memory");
		return RP_ENOMEM;
	}
	while (done < b->nevents && rc == 0) {
		uint64_t before = done;

		for (t = 0; t < n && rc == 0; t++) {
			const struct rp_thread *th = &b->threads[t];

			while (pos[t] < th->count) {
				uint64_t i = th->first + pos[t];

				if (!ready(b, &b->ev[i]))
					break;
				if ((rc = apply(b, &b->ev[i], i)) < 0)
					break;
				b->serial[done++] = i;
				pos[t]++;
			}
		}
		if (rc == 0 && done == before)
			rc = stuck(b, pos);
	}
	free(pos);
	return rc;
}

static int seal(struct build *b, int fd)
{
	uint64_t bytes = b->p->bytes;

	munmap(b->p, bytes);
	b->p = NULL;
	if (fcntl(fd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) <
	    0) {
		snprintf(b->err, b->errsz, "cannot seal the replay program: %s",
			 strerror(errno));
		return RP_EIO;
	}
	return 0;
}

int rp_build(const struct rp_source *src, int *fd, struct rp_program *out,
	     char *err, size_t errsz)
{
	struct build b;
	int rc;

	memset(&b, 0, sizeof b);
	b.src = src;
	b.err = err;
	b.errsz = errsz;
	*fd = -1;
	err[0] = 0;
	rc = count_events(&b);
	if (rc == 0)
		rc = make_memfd(&b, fd);
	if (rc == 0)
		rc = place_events(&b);
	if (rc == 0)
		rc = simulate(&b);
	if (rc == 0) {
		*out = *b.p;
		rc = seal(&b, *fd);
	}
	if (b.p)
		munmap(b.p, b.p->bytes);
	if (b.offset)
		munmap(b.offset, b.nevents * sizeof *b.offset);
	if (b.slots)
		munmap(b.slots, (b.max_slot + 1) * sizeof *b.slots);
	free(b.thread_of);
	free(b.count);
	if (rc < 0 && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}
