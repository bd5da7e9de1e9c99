/*
 * cfa_fuzz.c - fuzz target of the malloc tracker's unwind-table reader
 * (native/cfa.c), which reads the .eh_frame of whatever code is loaded.
 *
 * The input is 4 bytes of code offset (little-endian) and then an
 * .eh_frame section: length-prefixed CIEs and FDEs.  The section is
 * copied into a buffer of exactly its size (so that ASan sees any read
 * past it) and each FDE in it is read for a function at 0x1000, at the
 * code address 0x1000 plus the offset modulo 4096.  Whatever the bytes:
 * no read outside the section, no crash, and a rule that holds together.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz-internal.h"
#include "native-internal.h"

int fuzz_cfa_one(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	uint32_t off;
	memcpy(&off, data, 4);
	size_t n = size - 4;
	uint8_t *sec = malloc(n ? n : 1);
	if (sec == NULL)
		abort();
	memcpy(sec, data + 4, n);
	uintptr_t lo = (uintptr_t)sec, hi = lo + n;
	size_t at = 0;
	while (n - at >= 8) {
		uint32_t len, id;
		memcpy(&len, sec + at, 4);
		memcpy(&id, sec + at + 4, 4);
		if (len < 4 || len > n - at - 4)
			break;
		if (id != 0) { /* an FDE: id is its CIE's distance back */
			struct native_cfa_rule r;
			int k = native_cfa_rule(lo, hi, sec + at, 0x1000,
						0x1000 + off % 4096, &r);
			if (k == NATIVE_CFA_OK && r.cfa_rbp != 0 && r.cfa_rbp != 1)
				abort();
			if (k != NATIVE_CFA_OK && k != NATIVE_CFA_END &&
			    k != NATIVE_CFA_UNSUPPORTED)
				abort();
		}
		at += 4 + (size_t)len;
	}
	free(sec);
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_cfa_one(data, size);
}
#endif
