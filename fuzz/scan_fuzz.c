/*
 * scan_fuzz.c - fuzz target of what the malloc tracker's leak scan reads
 * in the process it scans, beyond its own tables: glibc's chunk headers
 * between two tracked blocks (native/chunks.c) and a thread's
 * /proc/self/task/TID/syscall text (native/threads.c).
 *
 * Input: one byte; if even, the rest is a NUL-terminated syscall text
 * for native_threads_parse_sp.  If odd, 8 bytes of tcache key and 4 of
 * a target offset, then the bytes of a "heap" copied into a buffer of
 * exactly their size (16-byte aligned by malloc): native_chunks_free
 * walks from its start to the target chunk (the offset rounded down to
 * 16, at most the end).  Whatever the bytes: no read outside the buffer,
 * and every free span it reports lies inside the walk, in order.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz-internal.h"
#include "native-internal.h"

struct spans {
	uint64_t lo, hi, last;
};

static void check_span(uint64_t lo, uint64_t hi, void *arg)
{
	struct spans *s = arg;
	if (lo > hi || lo < s->lo || hi > s->hi || lo < s->last)
		abort();
	s->last = hi;
}

int fuzz_scan_one(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0) {
		char *text = malloc(size);
		if (text == NULL)
			abort();
		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0';
		(void)native_threads_parse_sp(text);
		free(text);
		return 0;
	}
	if (size < 13)
		return 0;
	struct native_chunks c;
	uint32_t off;
	memcpy(&c.tcache_key, data + 1, 8);
	memcpy(&off, data + 9, 4);
	size_t n = size - 13;
	uint8_t *heap = malloc(n ? n : 1);
	if (heap == NULL)
		abort();
	memcpy(heap, data + 13, n);
	uint64_t lo = (uint64_t)(uintptr_t)heap, end = lo + n;
	uint64_t to = lo + (off % (n + 1)) / 16 * 16;
	struct spans s = {lo, end, lo};
	(void)native_chunks_free(&c, lo, to, end, check_span, &s);
	free(heap);
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_scan_one(data, size);
}
#endif
