/*
 * clock.c - the monotonic clock of the tests (see vmheap_spec.h).
 */
#include <errno.h>
#include <time.h>

#include "vmheap_spec.h"

int64_t spec_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void spec_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
