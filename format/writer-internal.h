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

#endif /* VMHEAP_WRITER_INTERNAL_H */
