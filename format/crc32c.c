/*
 * crc32c.c - CRC32C (Castagnoli) as used by every vmheap section.
 *
 * Polynomial 0x1EDC6F41, processed bit-reflected (0x82F63B78), initial
 * value 0xFFFFFFFF, final xor 0xFFFFFFFF.  The check value of the nine
 * ASCII bytes "123456789" is 0xE3069283.
 *
 * Two implementations: the SSE4.2 crc32 instruction, and a portable
 * slicing-by-8 table for other CPUs.  The choice is made once.
 */
#include <pthread.h>
#include <string.h>

#include "vmheap.h"
#include "crc32c-internal.h"

#define CRC32C_POLY_REFLECTED 0x82F63B78u

static uint32_t table[8][256];
static int hw_ok;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_tables(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? CRC32C_POLY_REFLECTED : 0);
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^
				      table[0][table[t - 1][i] & 0xff];
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	hw_ok = __builtin_cpu_supports("sse4.2");
#else
	hw_ok = 0;
#endif
}

static uint64_t load_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint32_t vmheap_crc32c_sw(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	pthread_once(&init_once, init_tables);
	crc = ~crc;
	while (len >= 8) {
		uint64_t v = load_le64(p) ^ crc;
		crc = table[7][v & 0xff] ^ table[6][(v >> 8) & 0xff] ^
		      table[5][(v >> 16) & 0xff] ^ table[4][(v >> 24) & 0xff] ^
		      table[3][(v >> 32) & 0xff] ^ table[2][(v >> 40) & 0xff] ^
		      table[1][(v >> 48) & 0xff] ^ table[0][v >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

int vmheap_crc32c_hw_available(void)
{
	pthread_once(&init_once, init_tables);
	return hw_ok;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) uint32_t
vmheap_crc32c_hw(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t c = ~crc;

	while (len && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		len--;
	}
	while (len >= 32) {
		uint64_t a, b, d, e;
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		memcpy(&d, p + 16, 8);
		memcpy(&e, p + 24, 8);
		c = _mm_crc32_u64(c, a);
		c = _mm_crc32_u64(c, b);
		c = _mm_crc32_u64(c, d);
		c = _mm_crc32_u64(c, e);
		p += 32;
		len -= 32;
	}
	while (len >= 8) {
		uint64_t a;
		memcpy(&a, p, 8);
		c = _mm_crc32_u64(c, a);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#else
uint32_t vmheap_crc32c_hw(uint32_t crc, const void *data, size_t len)
{
	return vmheap_crc32c_sw(crc, data, len);
}
#endif

uint32_t vmheap_crc32c(uint32_t crc, const void *data, size_t len)
{
	if (vmheap_crc32c_hw_available())
		return vmheap_crc32c_hw(crc, data, len);
	return vmheap_crc32c_sw(crc, data, len);
}
