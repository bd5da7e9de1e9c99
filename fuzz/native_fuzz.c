/*
 * native_fuzz.c - fuzz target of the native section's decoder
 * (vmheap_native_decode, FORMAT.md section 15).
 *
 * The input is a NATV payload.  Whatever the bytes, decoding ends in 0 or
 * a negative code with a message, never a crash or a leak; a decoded
 * section holds only frames that name a listed module (or none), paths
 * and build ids within their limits, and leak counts (key `leaks`) for
 * each of its sites.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap.h"
#include "format-internal.h" /* vmheap_native_decode */

int fuzz_native_one(const uint8_t *data, size_t size);

int fuzz_native_one(const uint8_t *data, size_t size)
{
	struct vmheap_native *n = NULL;
	char err[512] = "";
	int rc = vmheap_native_decode(data, size, 1000, &n, err, sizeof(err));
	uint64_t sum = 0;

	if (rc < 0) {
		if (!err[0] || n)
			abort();
		return 0;
	}
	if (rc != 0 || !n)
		abort();
	for (size_t i = 0; i < n->nmodules; i++) {
		const struct vmheap_dump_module *m = &n->modules[i];
		if (m->path_len > VMHEAP_MAX_STRING_BYTES ||
		    m->build_id_len > VMHEAP_MAX_BUILD_ID_BYTES)
			abort();
		if (m->path_len)
			sum += (uint8_t)m->path[m->path_len - 1];
		if (m->build_id_len)
			sum += m->build_id[m->build_id_len - 1];
	}
	for (size_t i = 0; i < n->nstacks; i++) {
		const struct vmheap_dump_stack *s = &n->stacks[i];
		if (s->depth > VMHEAP_MAX_STACK_FRAMES)
			abort();
		for (size_t k = 0; k < s->depth; k++) {
			if (s->frames[k].module != VMHEAP_NO_MODULE &&
			    s->frames[k].module >= n->nmodules)
				abort();
			sum += s->frames[k].offset;
		}
	}
	if (n->leaks) { /* one element per site */
		if (n->nstacks && !n->leaks->stacks)
			abort();
		for (size_t i = 0; i < n->nstacks; i++)
			sum += n->leaks->stacks[i].leaked_count +
			       n->leaks->stacks[i].reachable_bytes;
		sum += n->leaks->blocks + n->leaks->skipped_bytes;
	}
	(void)sum;
	vmheap_native_free(n);
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_native_one(data, size);
}
#endif
