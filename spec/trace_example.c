/*
 * trace_example.c - the worked example of format/TRACE.md section 10,
 * built with the encoder the tracker uses (vmheap_trace_encode.h), item
 * by item as the section's table lists them.  spec/trace_test.c compares
 * it with the document's bytes and reads it back.
 */
#include <stdlib.h>
#include <string.h>

#include "trace_example.h"
#include "vmheap_trace_encode.h"

struct builder {
	uint8_t *buf;
	size_t len;
	size_t chunk_at; /* offset of the open chunk's head */
	uint32_t count;
	struct vmheap_trace_stream st[2];
	uint64_t ring[2][2];
};

static void open_chunk(struct builder *b)
{
	b->chunk_at = b->len;
	b->len += VMHEAP_TRACE_CHUNK_HEAD;
	b->count = 0;
}

static void close_chunk(struct builder *b, uint32_t thread)
{
	uint8_t *c = b->buf + b->chunk_at;
	uint32_t length =
		(uint32_t)(b->len - b->chunk_at - VMHEAP_TRACE_CHUNK_HEAD);
	vmheap_trace_put_chunk_head(c, VMHEAP_TRACE_KIND_EVENTS, thread,
				    b->count, length);
	vmheap_trace_put_u32(b->buf + b->len,
			     vmheap_crc32c(0, c, VMHEAP_TRACE_CHUNK_HEAD + length));
	b->len += VMHEAP_TRACE_CHUNK_CRC;
}

static struct vmheap_trace_block blk(uint32_t slot, uint32_t gen)
{
	struct vmheap_trace_block x = {slot, gen};
	return x;
}

static const struct vmheap_trace_block none = {VMHEAP_TRACE_NONE, 0};

/* One event; its ring effects as TRACE.md section 6 says (the caller
 * names the source it must have). */
static void ev(struct builder *b, unsigned t, unsigned op,
	       struct vmheap_trace_block block, struct vmheap_trace_block old,
	       uint64_t a, uint64_t c, unsigned source)
{
	struct vmheap_trace_event e;
	memset(&e, 0, sizeof e);
	e.op = (uint8_t)op;
	e.block = block;
	e.old_block = old;
	switch (op) {
	case VMHEAP_TRACE_CALLOC:
	case VMHEAP_TRACE_REALLOCARRAY:
		e.nmemb = a;
		e.elsize = c;
		e.size = a * c;
		break;
	case VMHEAP_TRACE_POSIX_MEMALIGN:
	case VMHEAP_TRACE_MEMALIGN:
	case VMHEAP_TRACE_ALIGNED_ALLOC:
		e.align = a;
		e.size = c;
		break;
	default:
		e.size = a;
	}
	struct vmheap_trace_stream *s = &b->st[t];
	uint8_t *p = vmheap_trace_put_event(b->buf + b->len, s, &e, source);
	b->len = (size_t)(p - b->buf);
	b->count++;
	/* the stream's ring, as the writer keeps it */
	if (op == VMHEAP_TRACE_FREE && block.slot != VMHEAP_TRACE_NONE)
		vmheap_trace_ring_put(s, vmheap_trace_id(block.slot, block.gen),
				      NULL);
	if (old.slot != VMHEAP_TRACE_NONE &&
	    (block.slot != VMHEAP_TRACE_NONE || e.size == 0))
		vmheap_trace_ring_put(s, vmheap_trace_id(old.slot, old.gen),
				      NULL);
	if (op != VMHEAP_TRACE_FREE && block.slot != VMHEAP_TRACE_NONE &&
	    source == 0)
		vmheap_trace_ring_take(s);
}

static void time_item(struct builder *b, uint64_t d)
{
	b->len = (size_t)(vmheap_trace_put_time(b->buf + b->len, d) - b->buf);
}

static void batch_item(struct builder *b, uint32_t first)
{
	b->len = (size_t)(vmheap_trace_put_batch(b->buf + b->len, first) -
			  b->buf);
}

uint8_t *trace_example(size_t *len)
{
	struct builder b;
	memset(&b, 0, sizeof b);
	b.buf = calloc(1, 4096);
	for (int t = 0; t < 2; t++) {
		b.st[t].ids = b.ring[t];
		b.st[t].cap = 2;
		b.st[t].min = 2;
	}
	enum { B = VMHEAP_TRACE_F_BATCH, X = VMHEAP_TRACE_F_EXPLICIT };
	vmheap_trace_put_header(b.buf, 2, 2, 4, 4242, 1700000000000000ull);
	vmheap_trace_put_u32(b.buf + 44, vmheap_crc32c(0, b.buf, 44));
	b.len = VMHEAP_TRACE_HEADER_BYTES;

	open_chunk(&b); /* thread 0 */
	batch_item(&b, 0);
	ev(&b, 0, VMHEAP_TRACE_MALLOC, blk(0, 0), none, 100, 0, B);
	ev(&b, 0, VMHEAP_TRACE_CALLOC, blk(1, 0), none, 3, 8, B);
	ev(&b, 0, VMHEAP_TRACE_POSIX_MEMALIGN, blk(2, 0), none, 64, 40, B);
	ev(&b, 0, VMHEAP_TRACE_FREE, blk(1, 0), none, 0, 0, 0);
	ev(&b, 0, VMHEAP_TRACE_REALLOC, blk(1, 1), blk(0, 0), 200, 0, 0);
	time_item(&b, 1500);
	ev(&b, 0, VMHEAP_TRACE_FREE, blk(2, 0), none, 0, 0, 0);
	ev(&b, 0, VMHEAP_TRACE_FREE, blk(1, 1), none, 0, 0, 0);
	close_chunk(&b, 0);

	open_chunk(&b); /* thread 1 */
	batch_item(&b, 4);
	ev(&b, 1, VMHEAP_TRACE_MALLOC, blk(4, 0), none, 5000, 0, B);
	ev(&b, 1, VMHEAP_TRACE_CALLOC, blk(0, 1), none, 1, 32, X);
	ev(&b, 1, VMHEAP_TRACE_FREE, none, none, 0, 0, 0);
	ev(&b, 1, VMHEAP_TRACE_MALLOC, none, none, (uint64_t)1 << 40, 0, 0);
	ev(&b, 1, VMHEAP_TRACE_MEMALIGN, blk(5, 0), none, 24, 10, B);
	ev(&b, 1, VMHEAP_TRACE_REALLOCARRAY, blk(6, 0), blk(0, 1), 4, 8, B);
	close_chunk(&b, 1);

	open_chunk(&b); /* thread 0 again */
	time_item(&b, 250);
	ev(&b, 0, VMHEAP_TRACE_MALLOC, blk(2, 1), none, 16, 0, 0);
	ev(&b, 0, VMHEAP_TRACE_REALLOC, none, blk(2, 1), 0, 0, 0);
	ev(&b, 0, VMHEAP_TRACE_REALLOC, blk(1, 2), none, 64, 0, 0);
	close_chunk(&b, 0);

	struct vmheap_trace_info in;
	memset(&in, 0, sizeof in);
	in.events = 16;
	in.threads = 2;
	in.slots = 7;
	in.live_blocks = 4;
	in.live_bytes = 5000 + 10 + 32 + 64;
	in.end_time_us = 2000;
	uint64_t at = b.len;
	uint8_t *t = b.buf + b.len;
	size_t body = VMHEAP_TRACE_CHUNK_HEAD + VMHEAP_TRACE_TRAILER_PAYLOAD;
	vmheap_trace_put_chunk_head(t, VMHEAP_TRACE_KIND_TRAILER, UINT32_MAX, 0,
				    VMHEAP_TRACE_TRAILER_PAYLOAD);
	vmheap_trace_put_trailer(t + VMHEAP_TRACE_CHUNK_HEAD, &in);
	vmheap_trace_put_u32(t + body, vmheap_crc32c(0, t, body));
	vmheap_trace_put_end(t + body + VMHEAP_TRACE_CHUNK_CRC, at);
	b.len += body + VMHEAP_TRACE_CHUNK_CRC + VMHEAP_TRACE_END_BYTES;
	*len = b.len;
	return b.buf;
}
