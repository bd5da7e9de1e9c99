/*
 * reader-internal.h - the reader's state, shared by reader.c (input,
 * sections, records) and reader_maps.c (the HEAD and FOOT maps).
 */
#ifndef VMHEAP_READER_INTERNAL_H
#define VMHEAP_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap.h"
#include "block_cursor-internal.h"

enum reader_mode { MODE_UNSET, MODE_RECORDS, MODE_BLOCKS };

struct vmheap_reader {
	int fd, own_fd;
	char *name;
	int err;  /* sticky error code */
	int done; /* footer read and verified */
	enum reader_mode mode;
	char errmsg[768];

	/* Input buffer: buf[pos..len) is read but not consumed; buf[0] is at
	 * file offset buf_offset. */
	uint8_t *buf;
	size_t cap, pos, len;
	uint64_t buf_offset;

	struct vmheap_header hdr;
	char *vm_name, *vm_version;
	char **kinds;

	int in_block;
	struct vmheap_block_cursor cur;
	struct vmheap_totals seen, foot;
	int foot_has_sites; /* the footer has a `sites` key (1.1) */
	uint64_t *blk_offsets;
	size_t blk_cap;
	uint64_t foot_offset; /* of the FOOT header once it checked out */

	/* The first native section's payload (FORMAT.md section 15), kept
	 * for vmheap_reader_native(); native_offset 0: none seen. */
	uint8_t *native;
	uint32_t native_len;
	uint64_t native_offset;

	/* More-references records (record mode): chain_ok says the last
	 * known record was an object or more-references record, of object
	 * chain_id.  Objects of the fast path only count seen.objects; the
	 * chain catches up with them when seen.objects != chain_mark (their
	 * id is then the cursor's prev_id). */
	int chain_ok;
	int chain_type; /* of the last known record, 0 before the first */
	uint64_t chain_id, chain_mark;
};

struct vmheap_section {
	char tag[4];
	uint32_t length, records;
	uint64_t offset; /* of the header */
	const uint8_t *payload;
};

/* Record an error: "<name>: <message>"; returns `code`. */
int vmheap_reader_fail(vmheap_reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Parse the HEAD section's map into r->hdr (the version first). */
int vmheap_reader_parse_header(vmheap_reader *r,
			       const struct vmheap_section *s);

/* Parse the FOOT section's map into r->foot and check its block count and
 * block offsets against the blocks read. */
int vmheap_reader_parse_footer(vmheap_reader *r,
			       const struct vmheap_section *s);

#endif /* VMHEAP_READER_INTERNAL_H */
