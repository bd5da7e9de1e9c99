/*
 * trace_reader.c - the reader of malloc traces (format/TRACE.md,
 * vmheap_trace.h).  It maps the file, checks the header and the trailer
 * at open, and then decodes chunk by chunk, each chunk's CRC checked
 * before its first event is given out; each thread's stream state (ring,
 * batch, previous slot, time) is vmheap_trace_encode.h's, kept alike with
 * the writer's.  The live blocks at the end are computed from the events
 * (per slot: the newest generation allocated and the newest ended, as the
 * file does not order the threads' chunks) and compared with the
 * trailer's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmheap_trace.h"
#include "vmheap_trace_encode.h"

/* Per slot: generation+1 of the newest block allocated and of the newest
 * ended (0: none), and the newest allocated block's size. */
struct slot_state {
	uint32_t alloc_gen1, end_gen1;
	uint64_t size;
};

struct vmheap_trace_reader {
	const uint8_t *data;
	size_t len;
	int map_owned; /* data is our mapping */
	int fd_owned;
	int fd;
	char name[256];
	char errmsg[512];
	int state; /* 0 reading, 1 ended, <0 the sticky error */
	struct vmheap_trace_info info;
	uint64_t trailer_at;
	/* the chunk being decoded */
	uint64_t pos, chunk_end, next_at;
	uint32_t chunk_thread, chunk_left;
	/* per thread */
	struct vmheap_trace_stream *streams;
	uint64_t *ring_mem;
	uint32_t threads_seen;
	uint64_t events_seen;
	struct slot_state *slots;
};

static int fail(vmheap_trace_reader *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(vmheap_trace_reader *r, int code, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->errmsg, sizeof r->errmsg, "%s: ", r->name);
	if (n < 0 || (size_t)n >= sizeof r->errmsg)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->errmsg + n, sizeof r->errmsg - (size_t)n, fmt, ap);
	va_end(ap);
	r->state = code;
	return code;
}

static uint16_t get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
	return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static int is_pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static int check_header(vmheap_trace_reader *r)
{
	const uint8_t *h = r->data;
	struct vmheap_trace_info *in = &r->info;

	if (r->len < 8 || memcmp(h, vmheap_trace_magic, 8) != 0)
		return fail(r, VMHEAP_EMAGIC,
			    "not a vmheap malloc trace (no trace magic at "
			    "byte offset 0)");
	if (r->len < VMHEAP_TRACE_HEADER_BYTES)
		return fail(r, VMHEAP_ETRUNCATED,
			    "trace is truncated at byte offset %zu: the "
			    "48-byte header is cut short",
			    r->len);
	in->major = get_u16(h + 8);
	in->minor = get_u16(h + 10);
	if (in->major > VMHEAP_TRACE_MAJOR)
		return fail(r, VMHEAP_EVERSION,
			    "trace version %u.%u is newer than this reader's "
			    "%d.%d (byte offset 8)",
			    in->major, in->minor, VMHEAP_TRACE_MAJOR,
			    VMHEAP_TRACE_MINOR);
	if (vmheap_crc32c(0, h, 44) != get_u32(h + 44))
		return fail(r, VMHEAP_ECHECKSUM,
			    "the header's CRC32C does not match (byte offset "
			    "44)");
	if (in->major != VMHEAP_TRACE_MAJOR ||
	    get_u32(h + 12) != VMHEAP_TRACE_HEADER_BYTES)
		return fail(r, VMHEAP_EFORMAT,
			    "bad header: version %u.%u, length %u (byte "
			    "offset 8)",
			    in->major, in->minor, get_u32(h + 12));
	in->ring = get_u32(h + 16);
	in->ring_min = get_u32(h + 20);
	in->batch = get_u32(h + 24);
	in->pid = get_u32(h + 28);
	in->start_unix_us = get_u64(h + 32);
	if (!is_pow2(in->ring) || in->ring < 2 ||
	    in->ring > VMHEAP_TRACE_RING_MAX || in->ring_min < 1 ||
	    in->ring_min > in->ring || in->batch < 1 ||
	    in->batch > VMHEAP_TRACE_BATCH_MAX || get_u32(h + 40) != 0)
		return fail(r, VMHEAP_EFORMAT,
			    "bad header: ring %u, ring minimum %u, batch %u, "
			    "reserved %u (byte offset 16)",
			    in->ring, in->ring_min, in->batch, get_u32(h + 40));
	return 0;
}

static int check_trailer(vmheap_trace_reader *r)
{
	struct vmheap_trace_info *in = &r->info;
	const size_t head = VMHEAP_TRACE_CHUNK_HEAD;
	const size_t tlen = head + VMHEAP_TRACE_TRAILER_PAYLOAD +
			    VMHEAP_TRACE_CHUNK_CRC;
	const size_t least = VMHEAP_TRACE_HEADER_BYTES + tlen +
			     VMHEAP_TRACE_END_BYTES;
	const uint8_t *end = r->data + r->len - VMHEAP_TRACE_END_BYTES;

	if (r->len < least ||
	    memcmp(end + 8, vmheap_trace_end_magic, 8) != 0)
		return fail(r, VMHEAP_ETRUNCATED,
			    "trace is truncated: it ends at byte offset %zu "
			    "without its end record (the recording did not "
			    "finish: killed, _exit, or a write failed)",
			    r->len);
	uint64_t at = get_u64(end);
	size_t end_at = r->len - VMHEAP_TRACE_END_BYTES;
	if (at != end_at - tlen)
		return fail(r, VMHEAP_ETRUNCATED,
			    "trace is truncated or damaged: the end record at "
			    "byte offset %zu places the trailer at %llu, "
			    "where a %zu-byte trailer cannot end at %zu",
			    end_at, (unsigned long long)at, tlen, end_at);
	const uint8_t *t = r->data + at;
	if (t[0] != VMHEAP_TRACE_KIND_TRAILER || t[1] || t[2] || t[3] ||
	    get_u32(t + 4) != UINT32_MAX || get_u32(t + 8) != 0 ||
	    get_u32(t + 12) != VMHEAP_TRACE_TRAILER_PAYLOAD)
		return fail(r, VMHEAP_EFORMAT,
			    "bad trailer chunk at byte offset %llu (kind "
			    "0x%02x, length %u)",
			    (unsigned long long)at, t[0], get_u32(t + 12));
	size_t body = head + VMHEAP_TRACE_TRAILER_PAYLOAD;
	if (vmheap_crc32c(0, t, body) != get_u32(t + body))
		return fail(r, VMHEAP_ECHECKSUM,
			    "the trailer's CRC32C does not match (chunk at "
			    "byte offset %llu)",
			    (unsigned long long)at);
	const uint8_t *p = t + head;
	uint64_t threads = get_u64(p + 8), slots = get_u64(p + 16),
		 flags = get_u64(p + 64);
	in->events = get_u64(p);
	in->live_blocks = get_u64(p + 24);
	in->live_bytes = get_u64(p + 32);
	in->end_time_us = get_u64(p + 40);
	in->untracked_frees = get_u64(p + 48);
	in->stalls = get_u64(p + 56);
	/* An event takes a byte at least; a batch item (2 bytes at least)
	 * opens B slots. */
	uint64_t room = (uint64_t)r->len * 2,
		 slot_room = ((uint64_t)r->len / 2 + 1) * in->batch;
	if (threads > VMHEAP_TRACE_THREADS_MAX || slots >= UINT32_MAX ||
	    slots > slot_room || in->events > room ||
	    in->live_blocks > slots ||
	    (flags & ~(uint64_t)VMHEAP_TRACE_FLAG_FORKED) != 0)
		return fail(r, VMHEAP_ELIMIT,
			    "the trailer at byte offset %llu gives %llu "
			    "threads, %llu slots, %llu events, %llu live "
			    "blocks, flags %llu: more than a %zu-byte trace "
			    "can hold, or unknown",
			    (unsigned long long)at, (unsigned long long)threads,
			    (unsigned long long)slots,
			    (unsigned long long)in->events,
			    (unsigned long long)in->live_blocks,
			    (unsigned long long)flags, r->len);
	in->threads = (uint32_t)threads;
	in->slots = (uint32_t)slots;
	in->flags = (uint32_t)flags;
	r->trailer_at = at;
	return 0;
}

static int setup(vmheap_trace_reader *r)
{
	struct vmheap_trace_info *in = &r->info;
	in->file_size = r->len;
	int rc = check_header(r);
	if (rc == 0)
		rc = check_trailer(r);
	if (rc < 0)
		return rc;
	/* The rings are allocated as threads appear (most traces have few). */
	r->streams = calloc(in->threads ? in->threads : 1, sizeof *r->streams);
	r->slots = calloc(in->slots ? in->slots : 1, sizeof *r->slots);
	if (r->streams == NULL || r->slots == NULL)
		return fail(r, VMHEAP_ENOMEM,
			    "out of memory for %u threads and %u slots",
			    in->threads, in->slots);
	r->pos = VMHEAP_TRACE_HEADER_BYTES;
	r->chunk_end = r->pos;
	r->next_at = r->pos;
	return 0;
}

static vmheap_trace_reader *new_reader(const char *name)
{
	vmheap_trace_reader *r = calloc(1, sizeof *r);
	if (r == NULL)
		return NULL;
	r->fd = -1;
	snprintf(r->name, sizeof r->name, "%s", name ? name : "trace");
	return r;
}

VMHEAP_EXPORT int vmheap_trace_open_mem(vmheap_trace_reader **out,
					const void *data, size_t len,
					const char *name)
{
	if (out == NULL)
		return VMHEAP_EINVAL;
	vmheap_trace_reader *r = *out = new_reader(name);
	if (r == NULL)
		return VMHEAP_ENOMEM;
	r->data = data;
	r->len = data != NULL ? len : 0;
	return setup(r);
}

VMHEAP_EXPORT int vmheap_trace_open_fd(vmheap_trace_reader **out, int fd,
				       const char *name)
{
	struct stat st;
	if (out == NULL)
		return VMHEAP_EINVAL;
	vmheap_trace_reader *r = *out = new_reader(name);
	if (r == NULL)
		return VMHEAP_ENOMEM;
	if (fstat(fd, &st) != 0)
		return fail(r, VMHEAP_EIO, "cannot stat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(r, VMHEAP_EIO, "not a regular file");
	r->len = (size_t)st.st_size;
	if (r->len > 0) {
		void *m = mmap(NULL, r->len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED)
			return fail(r, VMHEAP_EIO, "cannot map %zu bytes: %s",
				    r->len, strerror(errno));
		r->data = m;
		r->map_owned = 1;
	}
	return setup(r);
}

VMHEAP_EXPORT int vmheap_trace_open_path(vmheap_trace_reader **out,
					 const char *path)
{
	if (out == NULL)
		return VMHEAP_EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		vmheap_trace_reader *r = *out = new_reader(path);
		if (r == NULL)
			return VMHEAP_ENOMEM;
		return fail(r, VMHEAP_EIO, "cannot open: %s", strerror(errno));
	}
	int rc = vmheap_trace_open_fd(out, fd, path);
	if (*out != NULL) {
		(*out)->fd = fd;
		(*out)->fd_owned = 1;
	} else {
		close(fd);
	}
	return rc;
}

VMHEAP_EXPORT const struct vmheap_trace_info *
vmheap_trace_info(const vmheap_trace_reader *r)
{
	return r != NULL ? &r->info : NULL;
}

VMHEAP_EXPORT const char *vmheap_trace_error(const vmheap_trace_reader *r)
{
	return r != NULL ? r->errmsg : "";
}

VMHEAP_EXPORT const char *vmheap_trace_op_name(unsigned op)
{
	static const char *const names[] = {
		"control",	  "malloc",	   "calloc",
		"realloc",	  "reallocarray",  "free",
		"posix_memalign", "aligned_alloc", "memalign",
		"valloc",	  "pvalloc"};
	return op >= 1 && op <= VMHEAP_TRACE_OP_MAX ? names[op] : "?";
}

VMHEAP_EXPORT void vmheap_trace_free(vmheap_trace_reader *r)
{
	if (r == NULL)
		return;
	if (r->streams != NULL)
		for (uint32_t i = 0; i < r->info.threads; i++)
			free(r->streams[i].ids);
	free(r->streams);
	free(r->slots);
	if (r->map_owned)
		munmap((void *)r->data, r->len);
	if (r->fd_owned)
		close(r->fd);
	free(r);
}

/* ------------------------------------------------------------ decoding */

/* A varint at r->pos, inside the chunk. */
static int varint(vmheap_trace_reader *r, uint64_t at, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned i = 0; i < 10; i++) {
		if (r->pos >= r->chunk_end)
			return fail(r, VMHEAP_EFORMAT,
				    "the item at byte offset %llu runs past "
				    "the end of its chunk (%llu)",
				    (unsigned long long)at,
				    (unsigned long long)r->chunk_end);
		uint8_t b = r->data[r->pos++];
		if (i == 9 && b > 1)
			break;
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if ((b & 0x80) == 0) {
			*v = x;
			return 0;
		}
	}
	return fail(r, VMHEAP_EFORMAT,
		    "a varint of the item at byte offset %llu is longer than "
		    "64 bits",
		    (unsigned long long)at);
}

static int varint32(vmheap_trace_reader *r, uint64_t at, const char *what,
		    uint32_t limit, uint32_t *v)
{
	uint64_t x;
	int rc = varint(r, at, &x);
	if (rc < 0)
		return rc;
	if (x >= limit)
		return fail(r, VMHEAP_EFORMAT,
			    "the item at byte offset %llu names %s %llu "
			    "(at most %u)",
			    (unsigned long long)at, what,
			    (unsigned long long)x, limit - 1);
	*v = (uint32_t)x;
	return 0;
}

/* A block passed in: zigzag slot delta, generation. */
static int passed_block(vmheap_trace_reader *r, struct vmheap_trace_stream *s,
			uint64_t at, struct vmheap_trace_block *b)
{
	uint64_t z;
	int rc = varint(r, at, &z);
	if (rc < 0)
		return rc;
	int64_t d = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
	int64_t slot = (int64_t)s->prev_slot + d;
	if (slot < 0 || slot >= (int64_t)r->info.slots)
		return fail(r, VMHEAP_EFORMAT,
			    "the item at byte offset %llu names slot %lld; "
			    "the trace has %u",
			    (unsigned long long)at, (long long)slot,
			    r->info.slots);
	b->slot = (uint32_t)slot;
	s->prev_slot = b->slot;
	return varint32(r, at, "generation", UINT32_MAX, &b->gen);
}

/* The block (s, g) ends in this thread. */
static void ended(vmheap_trace_reader *r, struct vmheap_trace_stream *s,
		  struct vmheap_trace_block b)
{
	struct slot_state *st = &r->slots[b.slot];
	if (b.gen + 1 > st->end_gen1)
		st->end_gen1 = b.gen + 1;
	vmheap_trace_ring_put(s, vmheap_trace_id(b.slot, b.gen), NULL);
}

static void began(vmheap_trace_reader *r, struct vmheap_trace_block b,
		  uint64_t size)
{
	struct slot_state *st = &r->slots[b.slot];
	if (b.gen + 1 >= st->alloc_gen1) {
		st->alloc_gen1 = b.gen + 1;
		st->size = size;
	}
}

static uint64_t product(uint64_t a, uint64_t b)
{
	uint64_t p;
	return __builtin_mul_overflow(a, b, &p) ? UINT64_MAX : p;
}

/* The returned block's id, from its source. */
static int result_id(vmheap_trace_reader *r, struct vmheap_trace_stream *s,
		     uint64_t at, unsigned source,
		     struct vmheap_trace_block *b)
{
	uint64_t id;
	int rc;
	switch (source) {
	case 0:
		if (s->count < s->min)
			return fail(r, VMHEAP_EFORMAT,
				    "the event at byte offset %llu takes its "
				    "block from a ring of %u ids (at least "
				    "%u needed)",
				    (unsigned long long)at, s->count, s->min);
		id = vmheap_trace_ring_take(s);
		b->slot = (uint32_t)(id >> 32);
		b->gen = (uint32_t)id + 1;
		if (b->gen == UINT32_MAX)
			return fail(r, VMHEAP_EFORMAT,
				    "the event at byte offset %llu reuses "
				    "slot %u past its last generation",
				    (unsigned long long)at, b->slot);
		return 0;
	case VMHEAP_TRACE_F_BATCH:
		if (s->batch_next >= s->batch_end)
			return fail(r, VMHEAP_EFORMAT,
				    "the event at byte offset %llu takes a "
				    "slot from a used-up batch",
				    (unsigned long long)at);
		if (s->batch_next >= r->info.slots)
			return fail(r, VMHEAP_EFORMAT,
				    "the event at byte offset %llu takes slot "
				    "%u from its batch; the trace has %u",
				    (unsigned long long)at, s->batch_next,
				    r->info.slots);
		b->slot = s->batch_next++;
		b->gen = 0;
		return 0;
	case VMHEAP_TRACE_F_EXPLICIT:
		rc = varint32(r, at, "slot", r->info.slots, &b->slot);
		if (rc == 0)
			rc = varint32(r, at, "generation", UINT32_MAX, &b->gen);
		return rc;
	default:
		return fail(r, VMHEAP_EFORMAT,
			    "the event at byte offset %llu has source bits "
			    "0x60",
			    (unsigned long long)at);
	}
}

static int open_stream(vmheap_trace_reader *r, uint32_t t, uint64_t at)
{
	struct vmheap_trace_stream *s = &r->streams[t];
	if (s->ids != NULL)
		return 0;
	s->ids = malloc((size_t)r->info.ring * sizeof *s->ids);
	if (s->ids == NULL)
		return fail(r, VMHEAP_ENOMEM,
			    "out of memory for thread %u's ring (chunk at "
			    "byte offset %llu)",
			    t, (unsigned long long)at);
	s->cap = r->info.ring;
	s->min = r->info.ring_min;
	if (t + 1 > r->threads_seen)
		r->threads_seen = t + 1;
	return 0;
}

/* Move to the next chunk; 1 when there is one, 0 at the trailer. */
static int next_chunk(vmheap_trace_reader *r)
{
	uint64_t at = r->chunk_end;
	if (at != r->pos)
		return fail(r, VMHEAP_EFORMAT,
			    "the chunk that ends at byte offset %llu holds "
			    "bytes past its last event (at %llu)",
			    (unsigned long long)at,
			    (unsigned long long)r->pos);
	if (r->chunk_left != 0)
		return fail(r, VMHEAP_EFORMAT,
			    "the chunk that ends at byte offset %llu holds "
			    "%u events fewer than its count",
			    (unsigned long long)at, r->chunk_left);
	at = r->next_at;
	if (at == r->trailer_at)
		return 0;
	const uint8_t *c = r->data + at;
	if (at + VMHEAP_TRACE_CHUNK_HEAD + VMHEAP_TRACE_CHUNK_CRC >
	    r->trailer_at)
		return fail(r, VMHEAP_EFORMAT,
			    "a chunk at byte offset %llu overlaps the "
			    "trailer at %llu",
			    (unsigned long long)at,
			    (unsigned long long)r->trailer_at);
	uint32_t thread = get_u32(c + 4), count = get_u32(c + 8),
		 length = get_u32(c + 12);
	if (c[0] != VMHEAP_TRACE_KIND_EVENTS || c[1] || c[2] || c[3])
		return fail(r, VMHEAP_EFORMAT,
			    "bad chunk kind 0x%02x at byte offset %llu",
			    c[0], (unsigned long long)at);
	if (thread >= r->info.threads)
		return fail(r, VMHEAP_EFORMAT,
			    "the chunk at byte offset %llu names thread %u; "
			    "the trailer counts %u",
			    (unsigned long long)at, thread, r->info.threads);
	if (length > VMHEAP_TRACE_CHUNK_MAX ||
	    at + VMHEAP_TRACE_CHUNK_HEAD + length + VMHEAP_TRACE_CHUNK_CRC >
		    r->trailer_at)
		return fail(r, VMHEAP_EFORMAT,
			    "the chunk at byte offset %llu says %u bytes, "
			    "past the trailer at %llu",
			    (unsigned long long)at, length,
			    (unsigned long long)r->trailer_at);
	if (vmheap_crc32c(0, c, VMHEAP_TRACE_CHUNK_HEAD + (size_t)length) !=
	    get_u32(c + VMHEAP_TRACE_CHUNK_HEAD + length))
		return fail(r, VMHEAP_ECHECKSUM,
			    "the CRC32C of the chunk at byte offset %llu does "
			    "not match",
			    (unsigned long long)at);
	int rc = open_stream(r, thread, at);
	if (rc < 0)
		return rc;
	r->chunk_thread = thread;
	r->chunk_left = count;
	r->pos = at + VMHEAP_TRACE_CHUNK_HEAD;
	r->chunk_end = r->pos + length;
	r->next_at = r->chunk_end + VMHEAP_TRACE_CHUNK_CRC;
	return 1;
}

static int finish(vmheap_trace_reader *r)
{
	const struct vmheap_trace_info *in = &r->info;
	uint64_t blocks = 0, bytes = 0;
	for (uint32_t i = 0; i < in->slots; i++) {
		const struct slot_state *st = &r->slots[i];
		if (st->alloc_gen1 > st->end_gen1) {
			blocks++;
			bytes += st->size;
		}
	}
	if (r->events_seen != in->events || r->threads_seen > in->threads ||
	    blocks != in->live_blocks || bytes != in->live_bytes)
		return fail(r, VMHEAP_ETOTALS,
			    "the trailer (byte offset %llu) says %llu events, "
			    "%u threads, %llu live blocks of %llu bytes; the "
			    "trace holds %llu events, %u threads, %llu live "
			    "blocks of %llu bytes",
			    (unsigned long long)r->trailer_at,
			    (unsigned long long)in->events, in->threads,
			    (unsigned long long)in->live_blocks,
			    (unsigned long long)in->live_bytes,
			    (unsigned long long)r->events_seen,
			    r->threads_seen, (unsigned long long)blocks,
			    (unsigned long long)bytes);
	r->state = 1;
	return 0;
}

/* One item at r->pos: 1 an event in *ev, 0 a control item, <0 error. */
static int item(vmheap_trace_reader *r, struct vmheap_trace_event *ev)
{
	struct vmheap_trace_stream *s = &r->streams[r->chunk_thread];
	uint64_t at = r->pos, v;
	uint8_t first = r->data[r->pos++];
	unsigned op = first & 0x0f, flags = first & 0xf0;
	int rc;

	if (op == 0) {
		if (flags == VMHEAP_TRACE_C_TIME) {
			rc = varint(r, at, &v);
			if (rc == 0 && v > UINT64_MAX - s->time_us)
				rc = fail(r, VMHEAP_EFORMAT,
					  "the time item at byte offset %llu "
					  "overflows",
					  (unsigned long long)at);
			if (rc == 0)
				s->time_us += v;
			return rc;
		}
		if (flags == VMHEAP_TRACE_C_BATCH) {
			uint32_t b = 0;
			rc = varint32(r, at, "slot", r->info.slots, &b);
			if (rc < 0)
				return rc;
			/* A batch may end past the slots used. */
			s->batch_next = b;
			s->batch_end = b + r->info.batch < b
					       ? UINT32_MAX
					       : b + r->info.batch;
			return 0;
		}
		return fail(r, VMHEAP_EFORMAT,
			    "unknown control item 0x%02x at byte offset %llu",
			    first, (unsigned long long)at);
	}
	if (op > VMHEAP_TRACE_OP_MAX)
		return fail(r, VMHEAP_EFORMAT,
			    "unknown op %u at byte offset %llu", op,
			    (unsigned long long)at);
	if (r->chunk_left == 0)
		return fail(r, VMHEAP_EFORMAT,
			    "the chunk holds more events than its count (the "
			    "event at byte offset %llu)",
			    (unsigned long long)at);
	memset(ev, 0, sizeof *ev);
	ev->offset = at;
	ev->time_us = s->time_us;
	ev->thread = r->chunk_thread;
	ev->op = (uint8_t)op;
	ev->block.slot = ev->old_block.slot = VMHEAP_TRACE_NONE;
	unsigned source = flags & VMHEAP_TRACE_F_SOURCE;
	int none = (flags & VMHEAP_TRACE_F_NONE) != 0;
	int old = (flags & VMHEAP_TRACE_F_OLD) != 0;
	int reallocs = op == VMHEAP_TRACE_REALLOC ||
		       op == VMHEAP_TRACE_REALLOCARRAY;

	if ((none && source != 0) || (old && !reallocs) ||
	    (op == VMHEAP_TRACE_FREE && source != 0))
		return fail(r, VMHEAP_EFORMAT,
			    "bad flags 0x%02x for %s at byte offset %llu",
			    flags, vmheap_trace_op_name(op),
			    (unsigned long long)at);
	if (op == VMHEAP_TRACE_FREE) {
		if (!none) {
			rc = passed_block(r, s, at, &ev->block);
			if (rc < 0)
				return rc;
			ended(r, s, ev->block);
		}
		goto done;
	}
	if (old && (rc = passed_block(r, s, at, &ev->old_block)) < 0)
		return rc;
	switch (op) {
	case VMHEAP_TRACE_CALLOC:
	case VMHEAP_TRACE_REALLOCARRAY:
		if ((rc = varint(r, at, &ev->nmemb)) < 0 ||
		    (rc = varint(r, at, &ev->elsize)) < 0)
			return rc;
		ev->size = product(ev->nmemb, ev->elsize);
		break;
	case VMHEAP_TRACE_POSIX_MEMALIGN:
	case VMHEAP_TRACE_ALIGNED_ALLOC:
	case VMHEAP_TRACE_MEMALIGN:
		if ((rc = varint(r, at, &ev->align)) < 0 ||
		    (rc = varint(r, at, &ev->size)) < 0)
			return rc;
		break;
	default:
		if ((rc = varint(r, at, &ev->size)) < 0)
			return rc;
		break;
	}
	if (old && (!none || ev->size == 0))
		ended(r, s, ev->old_block);
	if (!none) {
		if ((rc = result_id(r, s, at, source, &ev->block)) < 0)
			return rc;
		began(r, ev->block, ev->size);
	}
done:
	r->chunk_left--;
	r->events_seen++;
	return 1;
}

VMHEAP_EXPORT int vmheap_trace_next(vmheap_trace_reader *r,
				    struct vmheap_trace_event *ev)
{
	if (r == NULL || ev == NULL)
		return VMHEAP_EINVAL;
	if (r->state < 0)
		return r->state;
	if (r->state == 1)
		return 0;
	for (;;) {
		if (r->pos >= r->chunk_end) {
			int rc = next_chunk(r);
			if (rc < 0)
				return rc;
			if (rc == 0)
				return finish(r);
			continue;
		}
		int rc = item(r, ev);
		if (rc != 0)
			return rc;
	}
}
