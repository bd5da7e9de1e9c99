/*
 * token.c - the session token: 128 random bits, compared in constant time.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "agent-internal.h"

int agent_token_new(char hex[33], char *err, size_t errlen)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char raw[16];
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
					  "getrandom: %s", strerror(errno));
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(raw); i++) {
		hex[2 * i] = digits[raw[i] >> 4];
		hex[2 * i + 1] = digits[raw[i] & 15];
	}
	hex[32] = '\0';
	return 0;
}

int agent_token_equal(const char *expected, const char *got, size_t got_len)
{
	/* expected is always 32 bytes; compare all 32 whatever got holds. */
	volatile unsigned char diff = (unsigned char)(got_len != 32);

	for (size_t i = 0; i < 32; i++) {
		unsigned char g = i < got_len ? (unsigned char)got[i] : 0;
		diff |= (unsigned char)expected[i] ^ g;
	}
	return diff == 0;
}
