/*
 * wait.c - waiting for a condition with a deadline (see vmheap_spec.h):
 * the one place where a test's wait sleeps, between two looks at the
 * condition it waits for.
 */
#include <stdarg.h>
#include <stdio.h>

#include "vmheap_spec.h"

/* The poll interval when the caller sets none. */
#define SPEC_WAIT_DEFAULT_INTERVAL_MS 10

void spec_wait_begin(struct spec_wait *w, int timeout_ms)
{
	w->start = spec_now_ms();
	w->deadline = w->start + timeout_ms;
	w->interval_ms = SPEC_WAIT_DEFAULT_INTERVAL_MS;
	w->polls = 0;
}

int spec_wait_next(struct spec_wait *w)
{
	int64_t now = spec_now_ms(), left = w->deadline - now;
	int ms = w->interval_ms > 0 ? w->interval_ms
				    : SPEC_WAIT_DEFAULT_INTERVAL_MS;

	if (left <= 0)
		return 0;
	spec_sleep_ms(ms < left ? ms : (int)left);
	w->polls++;
	return 1;
}

void spec_wait_or_fail(struct spec_wait *w, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	if (spec_wait_next(w))
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	ck_abort_msg("gave up after %lld ms (%d polls) waiting for: %s",
		     (long long)(spec_now_ms() - w->start), w->polls, what);
}
