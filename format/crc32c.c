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

/*
 * The crc32 instruction has a latency of about 3 cycles but can start one
 * per cycle, so long inputs run as three interleaved lanes of LANE bytes
 * whose CRC registers are then combined.  The register is linear in its
 * input: running it over n zero bytes is a fixed 32x32 bit matrix, and
 * shift_1[j][v] / shift_2[j][v] hold that matrix for LANE and 2*LANE zero
 * bytes applied to the byte value v placed at byte j of the register.
 */
#define LANE 4096u

static uint32_t shift_1[4][256], shift_2[4][256];
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2"))) static uint32_t zeros(uint32_t c, size_t n)
{
	uint64_t x = c;

	for (size_t i = 0; i < n; i += 8)
		x = _mm_crc32_u64(x, 0);
	return (uint32_t)x;
}

static void fill_shift(uint32_t t[4][256], size_t n)
{
	uint32_t basis[32];

	for (int i = 0; i < 32; i++)
		basis[i] = zeros(1u << i, n);
	for (int j = 0; j < 4; j++)
		for (unsigned v = 0; v < 256; v++) {
			uint32_t r = 0;
			for (int bit = 0; bit < 8; bit++)
				if (v & (1u << bit))
					r ^= basis[8 * j + bit];
			t[j][v] = r;
		}
}

static void init_shift(void)
{
	fill_shift(shift_1, LANE);
	fill_shift(shift_2, 2 * LANE);
}

static uint32_t apply(uint32_t t[4][256], uint32_t c)
{
	return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^
	       t[3][c >> 24];
}

__attribute__((target("sse4.2"))) uint32_t
vmheap_crc32c_hw(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t c = ~crc;

	while (len && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		len--;
	}
	if (len >= 3 * LANE)
		pthread_once(&shift_once, init_shift);
	while (len >= 3 * LANE) {
		uint64_t b = 0, d = 0, x;
		for (size_t i = 0; i < LANE; i += 8) {
			memcpy(&x, p + i, 8);
			c = _mm_crc32_u64(c, x);
			memcpy(&x, p + LANE + i, 8);
			b = _mm_crc32_u64(b, x);
			memcpy(&x, p + 2 * LANE + i, 8);
			d = _mm_crc32_u64(d, x);
		}
		c = apply(shift_2, (uint32_t)c) ^ apply(shift_1, (uint32_t)b) ^
		    (uint32_t)d;
		p += 3 * LANE;
		len -= 3 * LANE;
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
