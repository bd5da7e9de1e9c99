/*
 * scan.c - the leak scan (vmheap_native_scan), for a forked child: a
 * conservative mark of the live tracked blocks from the process's roots,
 * as valgrind's leak check does (native/README.md, "The leak scan").
 *
 * The blocks are copied out of the side table (native_live_foreach) into
 * an array sorted by address, which answers "which block holds this
 * word" by binary search.  Then three marks:
 *   1. from the roots, through pointers to a block's start only:
 *      reachable.  A pointer into a block's interior only notes the hit;
 *   2. a block still unreached that was hit in its interior is possibly
 *      leaked, and so is every unreached block that it reaches (through
 *      any pointer into it);
 *   3. the rest is leaked: each unreached block in address order leads,
 *      and every unreached block reached from it (or an earlier leader)
 *      is indirectly leaked.  A cycle of forgotten blocks thus has one
 *      leaked block and the rest indirect, as valgrind counts a clique.
 * All memory comes from mmap (never malloc): nothing the scan does
 * changes the table it reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "native-internal.h"

enum { UNREACHED, REACHABLE, POSSIBLE, INDIRECT, LEAKED };
#define CLASS 0x7f
#define HIT_INSIDE 0x80 /* a root or reachable block points inside */

struct blk {
	uint64_t start, size; /* size: the bytes the program asked for */
	uint32_t stack;
	uint16_t slack; /* past size, up to glibc's usable size */
	uint8_t state;
};

struct range {
	uint64_t lo, hi;
};

#define MAX_OWN 1024
#define READ_BYTES (1u << 20)

struct scan {
	struct blk *b;
	uint64_t *starts; /* b[i].start, for the binary search */
	size_t n, cap;
	uint64_t lo, hi; /* the lowest start, the highest end */
	uint32_t *stack;
	size_t depth;
	struct range own[MAX_OWN]; /* the tracker's tables, the scan's memory */
	size_t nown;
	struct range mine[64]; /* the scan's memory, unmapped at the end */
	size_t nmine;
	uint8_t *buf;
	uint32_t max_id;
	uint64_t stack_lo; /* the calling thread's stack: read from here up */
	struct native_chunks chunks;
	struct range *spans; /* the current mapping's free glibc chunks */
	size_t nspans, capspans;
	vmheap_native_scan_info info;
	int failed;
};

/* ------------------------------------------------------------ memory */

static void add_own(struct scan *s, const void *p, size_t bytes)
{
	if (s->nown < MAX_OWN)
		s->own[s->nown++] = (struct range){(uint64_t)(uintptr_t)p,
						   (uint64_t)(uintptr_t)p + bytes};
	else
		s->failed = 1;
}

static void *scan_map(struct scan *s, size_t bytes)
{
	if (bytes == 0)
		bytes = 1;
	bytes = (bytes + 4095) & ~(size_t)4095;
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		s->failed = 1;
		return NULL;
	}
	add_own(s, p, bytes);
	if (s->nmine < sizeof s->mine / sizeof s->mine[0])
		s->mine[s->nmine++] = s->own[s->nown - 1];
	else
		s->failed = 1;
	s->info.memory_bytes += bytes;
	return p;
}

/* ------------------------------------------------------- the blocks */

static void count_block(uint64_t ptr, uint64_t size, uint32_t id, void *arg)
{
	struct scan *s = arg;
	(void)ptr, (void)size, (void)id;
	s->cap++;
}

static void note_table(const void *p, size_t bytes, void *arg)
{
	add_own(arg, p, bytes);
}

static void take_block(uint64_t ptr, uint64_t size, uint32_t id, void *arg)
{
	struct scan *s = arg;
	if (s->n < s->cap) {
		s->b[s->n++] = (struct blk){ptr, size, id, 0, UNREACHED};
		if (id > s->max_id)
			s->max_id = id;
	}
}

/* Sort the blocks by start: a radix sort (qsort may call malloc). */
static int sort_blocks(struct scan *s)
{
	struct blk *tmp = scan_map(s, s->n * sizeof *tmp);
	size_t *count = scan_map(s, 256 * sizeof *count);
	if (tmp == NULL || count == NULL)
		return -1;
	for (int shift = 0; shift < 64; shift += 8) {
		memset(count, 0, 256 * sizeof *count);
		for (size_t i = 0; i < s->n; i++)
			count[s->b[i].start >> shift & 255]++;
		if (count[s->b[0].start >> shift & 255] == s->n)
			continue; /* every block has this byte */
		size_t at = 0;
		for (int d = 0; d < 256; d++) {
			size_t c = count[d];
			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < s->n; i++)
			tmp[count[s->b[i].start >> shift & 255]++] = s->b[i];
		memcpy(s->b, tmp, s->n * sizeof *tmp);
	}
	/* (in address order: the size words are read one after another) */
	for (size_t i = 0; i < s->n; i++) {
		s->starts[i] = s->b[i].start;
		s->b[i].slack = native_chunk_slack(s->b[i].start, s->b[i].size);
	}
	return 0;
}

/* The end of the block's bytes: its usable size, slack included (what
 * the program may write there, learnt from malloc_usable_size, is the
 * block's; the tracker cleared what was there before: interpose.c). */
static uint64_t end_of(const struct blk *b)
{
	uint64_t n = b->size + b->slack;
	return b->start + (n ? n : 1);
}

/* The index of the block that holds address w, or -1. */
static long find(const struct scan *s, uint64_t w)
{
	if (w < s->lo || w >= s->hi)
		return -1;
	size_t lo = 0, hi = s->n; /* the last start <= w is below hi */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->starts[mid] <= w)
			lo = mid;
		else
			hi = mid;
	}
	if (s->starts[lo] > w || w >= end_of(&s->b[lo]))
		return -1;
	return (long)lo;
}

/* ----------------------------------------------------------- marking */

static void push(struct scan *s, long k)
{
	s->stack[s->depth++] = (uint32_t)k;
}

/* One word seen by mark `phase` (REACHABLE, POSSIBLE or INDIRECT);
 * leader: the block phase 3 started from. */
static void hit(struct scan *s, uint64_t w, int phase, long leader)
{
	long k = find(s, w);
	if (k < 0)
		return;
	struct blk *b = &s->b[k];
	int c = b->state & CLASS;
	if (phase == REACHABLE) {
		if (w == b->start) {
			if (c != REACHABLE) {
				b->state = REACHABLE;
				push(s, k);
			}
		} else if (c == UNREACHED &&
			   w != native_chunk_next_header(b->start)) {
			/* (the next chunk's header: glibc's free lists and top
			 * pointer point there, not the program) */
			b->state |= HIT_INSIDE;
		}
	} else if (phase == POSSIBLE) {
		if (c == UNREACHED) {
			b->state = POSSIBLE;
			push(s, k);
		}
	} else if (k != leader) {
		if (c == UNREACHED) {
			b->state = INDIRECT;
			push(s, k);
		} else if (c == LEAKED) { /* an earlier leader: its blocks are */
			b->state = INDIRECT; /* indirect already */
		}
	}
}

static void words(struct scan *s, const uint8_t *p, size_t len, int phase,
		  long leader)
{
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		if (w >= s->lo && w < s->hi)
			hit(s, w, phase, leader);
	}
}

static void drain(struct scan *s, int phase, long leader)
{
	while (s->depth > 0) {
		const struct blk *b = &s->b[s->stack[--s->depth]];
		words(s, (const uint8_t *)(uintptr_t)b->start,
		      b->size + b->slack, phase, leader);
	}
}

/* ------------------------------------------------------------- roots */

/* The words of mem (a copy of the process's [base, end), or that memory
 * itself) outside the tracked blocks and the tracker's and the scan's own
 * memory. */
static void root_words(struct scan *s, const uint8_t *mem, uint64_t base,
		       uint64_t end)
{
	/* the first block that ends after base (blocks do not overlap, so
	 * their ends are sorted too) */
	size_t k = 0, z = s->n, o = 0, f = 0;
	while (k < z) {
		size_t mid = k + (z - k) / 2;
		if (end_of(&s->b[mid]) <= base)
			k = mid + 1;
		else
			z = mid;
	}
	for (uint64_t a = base; a < end;) {
		while (k < s->n && end_of(&s->b[k]) <= a)
			k++;
		while (o < s->nown && s->own[o].hi <= a)
			o++;
		while (f < s->nspans && s->spans[f].hi <= a)
			f++;
		if (k < s->n && s->b[k].start <= a) {
			a = (end_of(&s->b[k]) + 7) & ~(uint64_t)7;
			continue;
		}
		if (o < s->nown && s->own[o].lo <= a) {
			a = s->own[o].hi;
			continue;
		}
		if (f < s->nspans && s->spans[f].lo <= a) {
			s->info.free_bytes += s->spans[f].hi - a;
			a = (s->spans[f].hi + 7) & ~(uint64_t)7;
			continue;
		}
		uint64_t stop = end;
		if (k < s->n && s->b[k].start < stop)
			stop = s->b[k].start;
		if (o < s->nown && s->own[o].lo < stop)
			stop = s->own[o].lo;
		if (f < s->nspans && s->spans[f].lo < stop)
			stop = s->spans[f].lo;
		s->info.root_bytes += stop - a;
		words(s, mem + (a - base), stop - a, REACHABLE, -1);
		a = stop;
	}
}

/* Read [lo, hi) of this process as roots: anonymous memory in place
 * (`direct`: it cannot fault), any other a chunk at a time through
 * process_vm_readv, so that a page that cannot be read (a file mapping
 * past its file's end) is skipped and counted, not a SIGBUS. */
static void roots(struct scan *s, uint64_t lo, uint64_t hi, int direct,
		  int *skipped)
{
	lo = (lo + 7) & ~(uint64_t)7;
	if (direct) {
		root_words(s, (const uint8_t *)(uintptr_t)lo, lo, hi);
		return;
	}
	while (lo + 8 <= hi) {
		size_t len = hi - lo < READ_BYTES ? hi - lo : READ_BYTES;
		struct iovec local = {s->buf, len};
		struct iovec remote = {(void *)(uintptr_t)lo, len};
		ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (got > 0) {
			root_words(s, s->buf, lo, lo + (uint64_t)got);
			lo += (uint64_t)got;
			continue;
		}
		/* the page at lo cannot be read */
		uint64_t next = (lo | 4095) + 1;
		if (next > hi)
			next = hi;
		s->info.skipped_bytes += next - lo;
		*skipped = 1;
		lo = next;
	}
}

static void add_span(uint64_t lo, uint64_t hi, void *arg)
{
	struct scan *s = arg;
	if (s->nspans == s->capspans) {
		size_t cap = s->capspans ? 2 * s->capspans : 4096;
		struct range *r = scan_map(s, cap * sizeof *r);
		if (r == NULL)
			return; /* the span stays a root */
		if (s->nspans)
			memcpy(r, s->spans, s->nspans * sizeof *r);
		s->spans = r;
		s->capspans = cap;
	}
	s->spans[s->nspans++] = (struct range){lo, hi};
}

/* The first block that starts at or after a. */
static size_t first_at(const struct scan *s, uint64_t a)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->starts[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The free glibc chunks of anonymous mapping [lo, hi), into s->spans: the
 * walks between its tracked blocks (and, in [heap], from its start), each
 * kept only when glibc's size words lead exactly from one to the next. */
static void free_chunks(struct scan *s, uint64_t lo, uint64_t hi, int heap)
{
	s->nspans = 0;
	size_t k = first_at(s, lo + 16), end = first_at(s, hi);
	if (heap && native_chunks_free(&s->chunks, lo,
				       k < end ? s->b[k].start - 16 : hi, hi,
				       add_span, s) != 0)
		s->info.unparsed_gaps++;
	for (; k < end; k++) {
		uint64_t at = native_chunk_next_header(s->b[k].start);
		uint64_t to = k + 1 < end ? s->b[k + 1].start - 16 : hi;
		if (at == 0 || at >= hi || at > to)
			continue; /* mmapped; or not glibc's layout */
		if (native_chunks_free(&s->chunks, at, to, hi, add_span, s) !=
		    0)
			s->info.unparsed_gaps++;
	}
}

static uint64_t hex(const char **p)
{
	uint64_t v = 0;
	for (;; (*p)++) {
		char c = **p;
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
					       : -1;
		if (d < 0)
			return v;
		v = v << 4 | (uint64_t)d;
	}
}

/* One line of /proc/self/maps. */
static void mapping(struct scan *s, const char *line)
{
	const char *p = line;
	uint64_t lo = hex(&p);
	if (*p++ != '-')
		return;
	uint64_t hi = hex(&p);
	if (*p++ != ' ' || strlen(p) < 4)
		return;
	int r = p[0] == 'r', w = p[1] == 'w';
	if (!w)
		return; /* code and read-only data: no root the scan takes */
	const char *path = strchr(p, '/');
	const char *bracket = strchr(p, '[');
	int skipped = 0;
	if (!r || (path && strncmp(path, "/dev/", 5) == 0 &&
		   strncmp(path, "/dev/zero", 9) != 0) ||
	    (bracket && strncmp(bracket, "[vvar", 5) == 0)) {
		/* no read permission, or a device: reading may fault or
		 * have effects */
		s->info.skipped_mappings++;
		s->info.skipped_bytes += hi - lo;
		return;
	}
	if (s->stack_lo >= lo && s->stack_lo < hi) {
		lo = s->stack_lo; /* below: this scan's frames, stale slots */
	} else {
		/* another thread's stack, its pointer noted before the fork:
		 * below it (and its 128-byte red zone) dead frames */
		uint64_t sp = native_threads_sp_in(lo, hi);
		if (sp != 0 && sp - 128 > lo) {
			s->info.stack_bytes_below_sp += sp - 128 - lo;
			lo = sp - 128;
			s->info.threads_from_sp++;
		}
	}
	/* anonymous: no path, or [heap], [stack], [anon:...] */
	int heap = bracket && strncmp(bracket, "[heap]", 6) == 0;
	int anonymous =
	    !path && (!bracket || heap || strncmp(bracket, "[stack]", 7) == 0 ||
		      strncmp(bracket, "[anon", 5) == 0);
	s->nspans = 0;
	if (anonymous)
		free_chunks(s, lo, hi, heap && lo % 16 == 0);
	roots(s, lo, hi, anonymous, &skipped);
	s->nspans = 0;
	if (skipped)
		s->info.skipped_mappings++;
}

static int all_roots(struct scan *s)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t cap = 1u << 20, len = 0;
	char *text = scan_map(s, cap);
	if (text == NULL) {
		close(fd);
		return -1;
	}
	for (;;) {
		if (len + 1 == cap) { /* the whole file first: mapping it
					 changes nothing after this */
			size_t ncap = cap * 2;
			char *t = scan_map(s, ncap);
			if (t == NULL) {
				close(fd);
				return -1;
			}
			memcpy(t, text, len);
			text = t;
			cap = ncap;
		}
		ssize_t got = read(fd, text + len, cap - 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	text[len] = '\0';
	/* own ranges sorted (insertion: a few hundred) */
	for (size_t i = 1; i < s->nown; i++)
		for (size_t j = i; j > 0 && s->own[j].lo < s->own[j - 1].lo; j--) {
			struct range t = s->own[j];
			s->own[j] = s->own[j - 1];
			s->own[j - 1] = t;
		}
	for (char *line = text; *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		mapping(s, line);
		if (!nl)
			break;
		line = nl + 1;
	}
	return 0;
}

/* ------------------------------------------------------------ the scan */

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void tally(vmheap_native_leaks *l, const struct blk *b)
{
	switch (b->state & CLASS) {
	case REACHABLE:
		l->reachable_count++;
		l->reachable_bytes += b->size;
		break;
	case POSSIBLE:
		l->possible_count++;
		l->possible_bytes += b->size;
		break;
	case INDIRECT:
		l->indirect_count++;
		l->indirect_bytes += b->size;
		break;
	default:
		l->leaked_count++;
		l->leaked_bytes += b->size;
	}
}

static void unmap_all(struct scan *s)
{
	for (size_t i = 0; i < s->nmine; i++)
		munmap((void *)(uintptr_t)s->mine[i].lo,
		       s->mine[i].hi - s->mine[i].lo);
}

static __attribute__((noinline)) int scan_run(uint64_t stack_lo,
					      vmheap_native_stack *stacks,
					      vmheap_native_leaks *leaks,
					      size_t cap, size_t *nstacks,
					      vmheap_native_scan_info *info)
{
	struct scan s;
	memset(&s, 0, sizeof s);
	s.stack_lo = stack_lo;
	uint64_t t0 = now_ns();
	native_chunks_prepare(&s.chunks);

	native_live_foreach(count_block, note_table, &s);
	s.b = scan_map(&s, s.cap * sizeof *s.b);
	s.starts = scan_map(&s, s.cap * sizeof *s.starts);
	s.stack = scan_map(&s, s.cap * sizeof *s.stack);
	s.buf = scan_map(&s, READ_BYTES);
	uint32_t *ids = scan_map(&s, cap * sizeof *ids);
	if (s.failed)
		goto fail;
	native_live_foreach(take_block, NULL, &s);
	if (s.n > 0) {
		if (sort_blocks(&s) != 0)
			goto fail;
		s.lo = s.b[0].start;
		for (size_t i = 0; i < s.n; i++)
			if (end_of(&s.b[i]) > s.hi)
				s.hi = end_of(&s.b[i]);
		/* 1: reachable */
		if (all_roots(&s) != 0 || s.failed)
			goto fail;
		drain(&s, REACHABLE, -1);
		/* 2: possibly leaked */
		for (size_t k = 0; k < s.n; k++)
			if (s.b[k].state == (UNREACHED | HIT_INSIDE)) {
				s.b[k].state = POSSIBLE;
				push(&s, (long)k);
			}
		drain(&s, POSSIBLE, -1);
		/* 3: leaked, indirectly leaked */
		for (size_t k = 0; k < s.n; k++)
			if ((s.b[k].state & CLASS) == UNREACHED) {
				s.b[k].state = LEAKED;
				push(&s, (long)k);
				drain(&s, INDIRECT, (long)k);
			}
	}
	vmheap_native_leaks *by_id = scan_map(&s, ((size_t)s.max_id + 1) *
						     sizeof *by_id);
	if (by_id == NULL)
		goto fail;
	for (size_t k = 0; k < s.n; k++)
		tally(&by_id[s.b[k].stack], &s.b[k]);
	*nstacks = native_stacks_copy(stacks, ids, cap);
	for (size_t i = 0; i < *nstacks && i < cap; i++) {
		if (ids[i] <= s.max_id)
			leaks[i] = by_id[ids[i]];
		else
			memset(&leaks[i], 0, sizeof leaks[i]);
	}
	s.info.blocks = s.n;
	s.info.scan_ns = now_ns() - t0;
	if (info)
		*info = s.info;
	unmap_all(&s);
	return 0;
fail:
	unmap_all(&s);
	return VMHEAP_ENOMEM;
}

VMHEAP_EXPORT int vmheap_native_scan(vmheap_native_stack *stacks,
				     vmheap_native_leaks *leaks, size_t cap,
				     size_t *nstacks,
				     vmheap_native_scan_info *info)
{
	/* The callers' values that live in callee-saved registers go onto
	 * the stack here, inside what the scan reads as the thread's
	 * stack (from regs up). */
	jmp_buf regs;
	if (!vmheap_native_tracking())
		return VMHEAP_ESTATE;
	if ((cap && (!stacks || !leaks)) || !nstacks)
		return VMHEAP_EINVAL;
	setjmp(regs);
	return scan_run((uint64_t)(uintptr_t)&regs, stacks, leaks, cap, nstacks,
			info);
}
