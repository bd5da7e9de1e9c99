/*
 * histogram_fuzz.c - fuzz target of the console's reader and printer of a
 * live histogram reply (console/histogram.c): what vmheap-console does
 * with the value of `get system.memory.histogram`, which comes from the
 * peer.  The input goes the way of a reply's bytes in the client API:
 * frame_check (counts that fit the bytes), then unpacked as one
 * MessagePack value and printed to /dev/null; any value must be either
 * refused or printed, without harm.
 */
#include <stdio.h>

#include <msgpack.h>

#include "agent-internal.h"
#include "console-internal.h"
#include "fuzz-internal.h"

int fuzz_histogram_one(const uint8_t *data, size_t size)
{
	static FILE *sink;
	msgpack_unpacked u;
	size_t off = 0;

	if (!sink)
		sink = fopen("/dev/null", "w");
	if (frame_check((const char *)data, size, NULL, 0) < 0)
		return 0;
	msgpack_unpacked_init(&u);
	if (sink && msgpack_unpack_next(&u, (const char *)data, size, &off) ==
			MSGPACK_UNPACK_SUCCESS)
		console_render_histogram(sink, &u.data);
	msgpack_unpacked_destroy(&u);
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_histogram_one(data, size);
}
#endif
