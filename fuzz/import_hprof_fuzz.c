/*
 * import_hprof_fuzz.c - fuzz target of vmheap-import's HPROF converter
 * (the checks are import_fuzz.c's).
 */
#include "fuzz-internal.h"

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_import_one(data, size, 1);
}
#endif
