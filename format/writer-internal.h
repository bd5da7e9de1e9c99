/*
 * writer-internal.h - the dump writer's state and the helpers its files
 * share: writer.c (open, records, finish) and writer_native.c (the native
 * section).  Not installed.
 */
#ifndef VMHEAP_WRITER_INTERNAL_H
#define VMHEAP_WRITER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#include "vmheap.h"

/* Rows a block summary's table holds (a power of two); a block with more
 * than half as many distinct (class, kind) pairs gets no summary. */
#define VMHEAP_SUMMARY_SLOTS 1024
/* Object records a block needs for a summary (unless it holds a
 * more-references record, which a census then counts without reading
 * its thousands of values): below it the summary saves a census little,
 * and small dumps (FORMAT.md's examples) keep their bytes. */
#define VMHEAP_SUMMARY_MIN_OBJECTS 64

struct vmheap_summary_slot {
	uint64_t class_id;
	uint64_t count; /* 0: the slot is free */
	uint64_t bytes;
	uint32_t kind;
};

/* The current block's summary (writer_summary.c). */
struct vmheap_writer_summary {
	struct vmheap_summary_slot *slots; /* VMHEAP_SUMMARY_SLOTS, or NULL */
	uint16_t *used;			   /* indexes of the rows in use */
	uint32_t nrows;
	uint64_t objects, references;
	uint32_t *others; /* offsets of the block's other records */
	size_t nothers, others_cap;
	int abandoned; /* this block gets no summary */
	int more_refs; /* it holds a more-references record */
};

struct vmheap_writer {
	int fd;
	int err;	/* sticky error code, 0 if none */
	int finished;	/* finish() ran (successfully or not) */
	int nomem;	/* the packer's append callback ran out of memory */
	int native;	/* opened for a native section; 2 once it is written */
	int edge_names; /* opened for edge and root names (1.1) */
	int sites;	/* opened for allocation sites (1.1) */
	char errmsg[512];

	/* Pending output: buf[0..blk_start) is ready to be written, then the
	 * current block: a 16-byte header slot and its payload so far. */
	uint8_t *buf;
	size_t len, cap;
	size_t blk_start;
	uint32_t blk_records;
	uint64_t prev_id; /* object id delta state; 0 at each block start */
	uint32_t block_bytes;
	size_t rec_start; /* where the record being packed starts in buf */
	struct vmheap_writer_summary summary;

	uint64_t written; /* bytes written to fd */
	uint64_t *blk_offsets;
	size_t blk_cap;
	struct vmheap_totals totals;
	msgpack_packer pk;
};

/* Set the sticky error: code (0 keeps the one set, or none) and message. */
void vmheap_writer_set_error(vmheap_writer *w, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The entry check of every add_* call: 0, or the code to return. */
int vmheap_writer_usable(vmheap_writer *w);

/* Write out everything pending, sealing the current block if it holds
 * records, and start a new block: 0 or the writer's error code. */
int vmheap_writer_flush_block(vmheap_writer *w);

/* Open a section: reserve its header slot at w->len, its index in *at;
 * -1 when out of memory. */
int vmheap_writer_begin_section(vmheap_writer *w, size_t *at);

/* Fill in the section header at buf[at] (tag, length, records, CRC) for
 * the payload that follows it. */
void vmheap_writer_seal_section(vmheap_writer *w, size_t at, const char *tag,
				uint32_t records);

/* Record running out of memory (VMHEAP_ENOMEM, the byte offset) and
 * return that code. */
int vmheap_writer_out_of_memory(vmheap_writer *w);

/* Pack a string of len bytes with msgpack-c's packer. */
void vmheap_writer_pack_str(msgpack_packer *pk, const char *s, size_t len);

/* ---------------------------------------------------- writer_summary.c */

/* Empty the summary for a new block. */
void vmheap_summary_reset(struct vmheap_writer_summary *s);
/* The home slot of a (class, kind) row. */
static inline size_t vmheap_summary_slot_of(uint64_t class_id, uint32_t kind)
{
	uint64_t h = (class_id ^ ((uint64_t)kind << 40)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 54) & (VMHEAP_SUMMARY_SLOTS - 1);
}

/* Count an object record of the current block.  Never fails: a summary
 * that cannot be kept (no memory, too many rows, bytes overflow) is
 * abandoned for this block.  vmheap_summary_count() is the fast path of
 * every object record: a row found in its home slot. */
void vmheap_summary_object(struct vmheap_writer_summary *s, uint64_t class_id,
			   uint32_t kind, uint64_t bytes, uint64_t nrefs);

static inline void vmheap_summary_count(struct vmheap_writer_summary *s,
					uint64_t class_id, uint32_t kind,
					uint64_t bytes, uint64_t nrefs)
{
	struct vmheap_summary_slot *e;

	if (__builtin_expect(s->slots != NULL, 1)) {
		e = &s->slots[vmheap_summary_slot_of(class_id, kind)];
		if (e->count && e->class_id == class_id && e->kind == kind &&
		    e->bytes + bytes >= e->bytes) {
			e->count++;
			e->bytes += bytes;
			s->objects++;
			s->references += nrefs;
			return;
		}
	}
	vmheap_summary_object(s, class_id, kind, bytes, nrefs);
}
/* Note a record that is no object, at `offset` bytes from the block's
 * first record; 0 (abandons the summary when out of memory). */
int vmheap_summary_other(struct vmheap_writer_summary *s, uint32_t offset);
/* 1 when the current block gets a summary record. */
int vmheap_summary_wanted(const struct vmheap_writer_summary *s);
/* Room the summary record needs at most. */
size_t vmheap_summary_max_bytes(const struct vmheap_writer_summary *s);
/* Encode the summary record at out; returns its length. */
size_t vmheap_summary_encode(const struct vmheap_writer_summary *s,
			     uint8_t *out);
/* Free the summary's memory. */
void vmheap_summary_release(struct vmheap_writer_summary *s);

#endif /* VMHEAP_WRITER_INTERNAL_H */
