/*
 * vmheap_trace_encode.h - the encoder of malloc traces (format/TRACE.md):
 * the bytes of the header, of events and control items, of chunk frames,
 * of the trailer and end record, and each thread's ring, which the writer
 * (the tracker, native/record*.c) and the reader (format/trace_reader.c)
 * keep alike.
 *
 * Header only, static inline: the tracker encodes on its hot path, the
 * reader and the tests use the same code.  No allocation, no I/O, no
 * errors: the caller gives room enough (VMHEAP_TRACE_ITEM_MAX bytes for
 * an event with its control items) and values the format allows.  The
 * CRCs are the caller's (vmheap_crc32c of vmheap.h).
 */
#ifndef VMHEAP_TRACE_ENCODE_H
#define VMHEAP_TRACE_ENCODE_H

#include <stdint.h>
#include <string.h>

#include "vmheap_trace.h"

#define VMHEAP_TRACE_HEADER_BYTES 48
#define VMHEAP_TRACE_CHUNK_HEAD 16 /* before the payload */
#define VMHEAP_TRACE_CHUNK_CRC 4   /* after it */
#define VMHEAP_TRACE_TRAILER_PAYLOAD 72
#define VMHEAP_TRACE_END_BYTES 16
#define VMHEAP_TRACE_CHUNK_MAX ((uint32_t)1 << 24) /* payload bytes */
#define VMHEAP_TRACE_RING_MAX ((uint32_t)1 << 20)
#define VMHEAP_TRACE_BATCH_MAX ((uint32_t)1 << 20)
#define VMHEAP_TRACE_THREADS_MAX ((uint32_t)1 << 20)
/* The most bytes one event takes with a time and a batch item before it. */
#define VMHEAP_TRACE_ITEM_MAX 64

#define VMHEAP_TRACE_KIND_EVENTS 0x45
#define VMHEAP_TRACE_KIND_TRAILER 0x54

/* first-byte flags of ops 1-10 */
#define VMHEAP_TRACE_F_NONE 0x10
#define VMHEAP_TRACE_F_BATCH 0x20
#define VMHEAP_TRACE_F_EXPLICIT 0x40
#define VMHEAP_TRACE_F_SOURCE 0x60
#define VMHEAP_TRACE_F_OLD 0x80
/* control items (op 0) */
#define VMHEAP_TRACE_C_TIME 0x00
#define VMHEAP_TRACE_C_BATCH 0x10

static const uint8_t vmheap_trace_magic[8] = {0x89, 0x56, 0x4d, 0x54,
					      0x0d, 0x0a, 0x1a, 0x0a};
static const uint8_t vmheap_trace_end_magic[8] = {0x56, 0x4d, 0x54, 0x45,
						  0x4e, 0x44, 0x0d, 0x0a};

static inline uint8_t *vmheap_trace_put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	return p + 2;
}

static inline uint8_t *vmheap_trace_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 4;
}

static inline uint8_t *vmheap_trace_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 8;
}

static inline uint8_t *vmheap_trace_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint8_t *vmheap_trace_put_zigzag(uint8_t *p, int64_t v)
{
	return vmheap_trace_put_varint(
		p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* The 48-byte header without its CRC (bytes 44-47 are the caller's:
 * vmheap_crc32c(0, out, 44)). */
static inline void vmheap_trace_put_header(uint8_t *out, uint32_t ring,
					   uint32_t ring_min, uint32_t batch,
					   uint32_t pid, uint64_t start_unix_us)
{
	memcpy(out, vmheap_trace_magic, 8);
	vmheap_trace_put_u16(out + 8, VMHEAP_TRACE_MAJOR);
	vmheap_trace_put_u16(out + 10, VMHEAP_TRACE_MINOR);
	vmheap_trace_put_u32(out + 12, VMHEAP_TRACE_HEADER_BYTES);
	vmheap_trace_put_u32(out + 16, ring);
	vmheap_trace_put_u32(out + 20, ring_min);
	vmheap_trace_put_u32(out + 24, batch);
	vmheap_trace_put_u32(out + 28, pid);
	vmheap_trace_put_u64(out + 32, start_unix_us);
	vmheap_trace_put_u32(out + 40, 0);
	vmheap_trace_put_u32(out + 44, 0);
}

/* A chunk's 16-byte head (its CRC, after the payload, is the caller's:
 * vmheap_crc32c(0, head, 16 + length)). */
static inline void vmheap_trace_put_chunk_head(uint8_t *out, uint8_t kind,
					       uint32_t thread, uint32_t count,
					       uint32_t length)
{
	out[0] = kind;
	out[1] = out[2] = out[3] = 0;
	vmheap_trace_put_u32(out + 4, thread);
	vmheap_trace_put_u32(out + 8, count);
	vmheap_trace_put_u32(out + 12, length);
}

/* The trailer's 72-byte payload, from info's events, threads, slots,
 * live_blocks, live_bytes, end_time_us, untracked_frees, stalls, flags. */
static inline void
vmheap_trace_put_trailer(uint8_t *out, const struct vmheap_trace_info *in)
{
	uint8_t *p = out;
	p = vmheap_trace_put_u64(p, in->events);
	p = vmheap_trace_put_u64(p, in->threads);
	p = vmheap_trace_put_u64(p, in->slots);
	p = vmheap_trace_put_u64(p, in->live_blocks);
	p = vmheap_trace_put_u64(p, in->live_bytes);
	p = vmheap_trace_put_u64(p, in->end_time_us);
	p = vmheap_trace_put_u64(p, in->untracked_frees);
	p = vmheap_trace_put_u64(p, in->stalls);
	vmheap_trace_put_u64(p, in->flags);
}

/* The 16-byte end record. */
static inline void vmheap_trace_put_end(uint8_t *out, uint64_t trailer_offset)
{
	vmheap_trace_put_u64(out, trailer_offset);
	memcpy(out + 8, vmheap_trace_end_magic, 8);
}

/* ------------------------------------------------- a thread's stream */

/* A block id packed in 64 bits: slot high, generation low. */
static inline uint64_t vmheap_trace_id(uint32_t slot, uint32_t gen)
{
	return (uint64_t)slot << 32 | gen;
}

/*
 * The state of one thread's stream (TRACE.md section 6), kept alike by
 * the writer and the reader: the ring (ids[cap], cap a power of two),
 * the fresh batch [batch_next, batch_end), the previous slot, the time.
 */
struct vmheap_trace_stream {
	uint64_t *ids;
	uint32_t cap, min, head, count;
	uint32_t batch_next, batch_end;
	uint32_t prev_slot;
	uint64_t time_us;
};

/* The oldest id of the ring (count > 0), taken out. */
static inline uint64_t vmheap_trace_ring_take(struct vmheap_trace_stream *s)
{
	uint64_t id = s->ids[s->head];
	s->head = (s->head + 1) & (s->cap - 1);
	s->count--;
	return id;
}

/*
 * Put id at the back of the ring.  A full ring first drops its oldest
 * cap/2 ids, copied into dropped[] when it is not NULL; returns how many
 * were dropped (0 or cap/2).
 */
static inline uint32_t vmheap_trace_ring_put(struct vmheap_trace_stream *s,
					     uint64_t id, uint64_t *dropped)
{
	uint32_t n = 0;
	if (s->count == s->cap) {
		n = s->cap / 2;
		for (uint32_t i = 0; i < n; i++) {
			uint64_t d = vmheap_trace_ring_take(s);
			if (dropped != NULL)
				dropped[i] = d;
		}
	}
	s->ids[(s->head + s->count) & (s->cap - 1)] = id;
	s->count++;
	return n;
}

/* A time item of `delta` microseconds. */
static inline uint8_t *vmheap_trace_put_time(uint8_t *p, uint64_t delta)
{
	*p++ = VMHEAP_TRACE_C_TIME;
	return vmheap_trace_put_varint(p, delta);
}

/* A batch item: the thread's fresh batch starts at `first`. */
static inline uint8_t *vmheap_trace_put_batch(uint8_t *p, uint32_t first)
{
	*p++ = VMHEAP_TRACE_C_BATCH;
	return vmheap_trace_put_varint(p, first);
}

/*
 * The bytes of event *ev (op, block, old_block, size or nmemb and elsize,
 * align) whose returned block's id comes from `source` (0: the ring,
 * VMHEAP_TRACE_F_BATCH, VMHEAP_TRACE_F_EXPLICIT; ignored when the block
 * is NONE and for free).  Updates the stream's previous slot.  The
 * stream's ring and batch are the caller's to update (it chose the
 * source from them).
 */
static inline uint8_t *
vmheap_trace_put_event(uint8_t *p, struct vmheap_trace_stream *s,
		       const struct vmheap_trace_event *ev, unsigned source)
{
	unsigned op = ev->op, flags = 0;
	int has_old = 0, explicit_id = 0;
	uint8_t *first = p++;

	if (op == VMHEAP_TRACE_FREE) {
		if (ev->block.slot == VMHEAP_TRACE_NONE) {
			*first = (uint8_t)(op | VMHEAP_TRACE_F_NONE);
			return p;
		}
		*first = (uint8_t)op;
		p = vmheap_trace_put_zigzag(
			p, (int64_t)ev->block.slot - (int64_t)s->prev_slot);
		s->prev_slot = ev->block.slot;
		return vmheap_trace_put_varint(p, ev->block.gen);
	}
	if ((op == VMHEAP_TRACE_REALLOC || op == VMHEAP_TRACE_REALLOCARRAY) &&
	    ev->old_block.slot != VMHEAP_TRACE_NONE) {
		has_old = 1;
		flags |= VMHEAP_TRACE_F_OLD;
		p = vmheap_trace_put_zigzag(p, (int64_t)ev->old_block.slot -
						       (int64_t)s->prev_slot);
		s->prev_slot = ev->old_block.slot;
		p = vmheap_trace_put_varint(p, ev->old_block.gen);
	}
	(void)has_old;
	if (ev->block.slot == VMHEAP_TRACE_NONE) {
		flags |= VMHEAP_TRACE_F_NONE;
	} else {
		flags |= source & VMHEAP_TRACE_F_SOURCE;
		explicit_id = (source & VMHEAP_TRACE_F_SOURCE) ==
			      VMHEAP_TRACE_F_EXPLICIT;
	}
	switch (op) {
	case VMHEAP_TRACE_CALLOC:
	case VMHEAP_TRACE_REALLOCARRAY:
		p = vmheap_trace_put_varint(p, ev->nmemb);
		p = vmheap_trace_put_varint(p, ev->elsize);
		break;
	case VMHEAP_TRACE_POSIX_MEMALIGN:
	case VMHEAP_TRACE_ALIGNED_ALLOC:
	case VMHEAP_TRACE_MEMALIGN:
		p = vmheap_trace_put_varint(p, ev->align);
		p = vmheap_trace_put_varint(p, ev->size);
		break;
	default:
		p = vmheap_trace_put_varint(p, ev->size);
		break;
	}
	if (explicit_id) {
		p = vmheap_trace_put_varint(p, ev->block.slot);
		p = vmheap_trace_put_varint(p, ev->block.gen);
	}
	*first = (uint8_t)(op | flags);
	return p;
}

#endif /* VMHEAP_TRACE_ENCODE_H */
