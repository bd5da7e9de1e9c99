/*
 * format-internal.h - byte-level constants of the dump format shared by the
 * writer and the reader.  format/FORMAT.md is the normative description.
 */
#ifndef VMHEAP_FORMAT_INTERNAL_H
#define VMHEAP_FORMAT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* File magic: 0x89 'V' 'M' 'H' CR LF SUB LF (PNG style). */
#define VMHEAP_MAGIC "\x89VMH\r\n\x1a\n"
#define VMHEAP_MAGIC_LEN 8

/* End magic, the last 8 bytes of the trailer. */
#define VMHEAP_END_MAGIC "VMHEND\r\n"
#define VMHEAP_END_MAGIC_LEN 8

/* Section header: tag[4], payload length u32 BE, record count u32 BE,
 * CRC32C u32 BE of (the first 12 header bytes, then the payload). */
#define VMHEAP_SECTION_HEADER_LEN 16
/* Trailer: u64 BE offset of the FOOT section header, then the end magic. */
#define VMHEAP_TRAILER_LEN 16

#define VMHEAP_TAG_HEAD "HEAD"
#define VMHEAP_TAG_BLCK "BLCK"
#define VMHEAP_TAG_FOOT "FOOT"
#define VMHEAP_TAG_NATV "NATV" /* the native section, format 1.1 */

/* A block is closed at most this far past its target size, so the writer
 * caps the block_bytes option well below VMHEAP_MAX_SECTION_BYTES. */
/* The block summary record (FORMAT.md section 6): first in a block, read
 * by a census, skipped by every other reader as a record of an unknown
 * tag.  Not in the public enum: no reader returns it. */
#define VMHEAP_RECORD_SUMMARY 7

#define VMHEAP_MAX_BLOCK_TARGET (8u * 1024u * 1024u)

static inline void vmheap_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void vmheap_put_be64(uint8_t *p, uint64_t v)
{
	vmheap_put_be32(p, (uint32_t)(v >> 32));
	vmheap_put_be32(p + 4, (uint32_t)v);
}

static inline uint32_t vmheap_get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline uint64_t vmheap_get_be64(const uint8_t *p)
{
	return ((uint64_t)vmheap_get_be32(p) << 32) | vmheap_get_be32(p + 4);
}

/* seconds * 1000, saturated at the ends of int64_t (a damaged or odd
 * header's time must not overflow). */
static inline int64_t vmheap_seconds_to_ms(int64_t s)
{
	if (s > INT64_MAX / 1000)
		return INT64_MAX;
	if (s < INT64_MIN / 1000)
		return INT64_MIN;
	return s * 1000;
}

/*
 * Decode the payload of a native section (`len` bytes; `offset` is the
 * section header's file offset, for messages): vmheap_reader_native(),
 * the fuzz target and the tests.  0 with *out set (free it with
 * vmheap_native_free), or VMHEAP_EFORMAT / VMHEAP_ELIMIT / VMHEAP_ENOMEM
 * with *out NULL and the reason in err ("what at byte offset N"; always
 * NUL-terminated when errlen > 0).
 */
struct vmheap_native;
int vmheap_native_decode(const uint8_t *payload, size_t len, uint64_t offset,
			 struct vmheap_native **out, char *err, size_t errlen);

struct vmheap_block_cursor;
struct vmheap_record;

/* block_cursor.c, for block_summary.c: stop the cursor with `code` and
 * the message "WHAT at byte offset N (block at M)"; returns code. */
int vmheap_block_cursor_fail(struct vmheap_block_cursor *c, int code,
			     const uint8_t *at, const char *what);
/* Decode the one record at c->pos (a counted record must be left): 1
 * with *rec filled, 2 when the record was of a tag readers skip, or a
 * negative code (c->error). */
int vmheap_block_cursor_decode_one(struct vmheap_block_cursor *c,
				   struct vmheap_record *rec, int shallow);

#endif /* VMHEAP_FORMAT_INTERNAL_H */
