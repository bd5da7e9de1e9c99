/*
 * trace_fuzz.c - fuzz target of the malloc trace reader
 * (format/trace_reader.c, format/TRACE.md).
 *
 * The input is a whole trace file.  Whatever the bytes, opening and
 * reading end in 0 or a negative code with a message that names a byte
 * offset (or the magic), never a crash, a hang or a leak; every event
 * given out names a known op, a thread below the trailer's threads and
 * slots below its slots (or none), and a reader that says 0 has matched
 * every count of the trailer.  Each input is read twice: as it is, and
 * with its CRCs made right (the header's, and each chunk's found by
 * walking the chunk lengths), so that mutations reach the event decoder
 * behind the checksums.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz-internal.h"
#include "vmheap_trace.h"

static void read_one(const uint8_t *data, size_t size)
{
	vmheap_trace_reader *r = NULL;
	struct vmheap_trace_event ev;
	uint64_t n = 0;
	int rc = vmheap_trace_open_mem(&r, data, size, "fuzz");
	if (rc == 0) {
		const struct vmheap_trace_info *in = vmheap_trace_info(r);
		while ((rc = vmheap_trace_next(r, &ev)) > 0) {
			n++;
			if (ev.op < 1 || ev.op > VMHEAP_TRACE_OP_MAX ||
			    ev.thread >= in->threads ||
			    (ev.block.slot != VMHEAP_TRACE_NONE &&
			     ev.block.slot >= in->slots) ||
			    (ev.old_block.slot != VMHEAP_TRACE_NONE &&
			     ev.old_block.slot >= in->slots) ||
			    ev.offset >= size)
				abort();
		}
		if (rc == 0 && n != in->events)
			abort();
	}
	if (rc < 0) {
		const char *m = vmheap_trace_error(r);
		if (m[0] == '\0' || (strstr(m, "byte offset") == NULL &&
				     rc != VMHEAP_ENOMEM))
			abort();
	}
	vmheap_trace_free(r);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int fuzz_trace_one(const uint8_t *data, size_t size)
{
	read_one(data, size);
	if (size < 48)
		return 0;
	uint8_t *b = malloc(size);
	if (b == NULL)
		return 0;
	memcpy(b, data, size);
	put_le32(b + 44, vmheap_crc32c(0, b, 44));
	for (size_t at = 48; at + 20 <= size;) {
		uint32_t len = le32(b + at + 12);
		if (len > size - at - 20)
			break;
		put_le32(b + at + 16 + len, vmheap_crc32c(0, b + at, 16 + len));
		at += 20 + (size_t)len;
	}
	read_one(b, size);
	free(b);
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_trace_one(data, size);
}
#endif
