/*
 * native_sites_fuzz.c - fuzz target of the console's naming of the live
 * native sites (console/native_sites.c): what vmheap-console does with
 * the value of `get system.native.sites`, which comes from the peer: each
 * row's frames resolved from the files they name (libdw), the row
 * rewritten, then printed as a table and as JSON to /dev/null.  The input
 * goes the way of a reply's bytes in the client API: frame_check, then
 * unpacked as one MessagePack value.  Any value must be either left as
 * it is or named and printed, without harm; a path that names no regular
 * file is not opened.
 */
#include <stdio.h>

#include <msgpack.h>

#include "agent-internal.h"
#include "console-internal.h"
#include "fuzz-internal.h"

int fuzz_native_sites_one(const uint8_t *data, size_t size)
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
			MSGPACK_UNPACK_SUCCESS) {
		char **named = console_native_sites(&u.data);
		console_render_reply(sink, "get", "system.native.sites",
				     &u.data);
		console_json_print(sink, &u.data);
		console_native_sites_free(named);
	}
	msgpack_unpacked_destroy(&u);
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_native_sites_one(data, size);
}
#endif
