/*
 * crc32c-internal.h - the two CRC32C implementations behind vmheap_crc32c().
 *
 * vmheap_crc32c() picks the SSE4.2 instruction when the CPU has it and the
 * portable table otherwise.  Both are exposed here so that the tests can
 * check them against each other.
 */
#ifndef VMHEAP_CRC32C_INTERNAL_H
#define VMHEAP_CRC32C_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Portable slicing-by-8 table implementation; same contract as
 * vmheap_crc32c(). */
uint32_t vmheap_crc32c_sw(uint32_t crc, const void *data, size_t len);

/* Non-zero when this CPU can run vmheap_crc32c_hw(). */
int vmheap_crc32c_hw_available(void);

/* SSE4.2 implementation; only call it when vmheap_crc32c_hw_available().
 * On other architectures it falls back to vmheap_crc32c_sw(). */
uint32_t vmheap_crc32c_hw(uint32_t crc, const void *data, size_t len);

#endif /* VMHEAP_CRC32C_INTERNAL_H */
