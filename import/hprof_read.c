/*
 * hprof_read.c - reading HPROF's big-endian values and records from the
 * input (part of libvmheap-import).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hprof-internal.h"

#define MAX_GET (1u << 20)

int hprof_bad(struct hprof_in *h, uint64_t offset, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!h->status)
		h->status = imp_fail(h->res, h->name, VMHEAP_EFORMAT,
				     "%s at byte offset %" PRIu64, msg, offset);
	return h->status;
}

static int truncated(struct hprof_in *h, long got, const char *what)
{
	uint64_t at = imp_input_offset(h->in);

	if (h->status)
		return h->status;
	if (got == VMHEAP_EIO)
		h->status =
		    imp_fail(h->res, h->name, VMHEAP_EIO,
			     "cannot read at byte offset %" PRIu64 ": %s", at,
			     strerror(h->in->error));
	else if (got < 0)
		h->status =
		    imp_fail(h->res, h->name, (int)got,
			     "out of memory at byte offset %" PRIu64, at);
	else
		h->status = imp_fail(h->res, h->name, VMHEAP_ETRUNCATED,
				     "truncated: the input ends at byte offset "
				     "%" PRIu64 " in %s",
				     at + (uint64_t)got, what);
	return h->status;
}

const unsigned char *hprof_get(struct hprof_in *h, size_t n, const char *what)
{
	const unsigned char *p;
	long got;

	if (h->status)
		return NULL;
	if (n > MAX_GET) {
		hprof_bad(h, imp_input_offset(h->in),
			  "%s of %zu bytes, more than this reader takes at "
			  "once",
			  what, n);
		return NULL;
	}
	got = imp_input_fill(h->in, n);
	if (got < 0 || (size_t)got < n) {
		truncated(h, got, what);
		return NULL;
	}
	p = h->in->buf + h->in->pos;
	h->in->pos += n;
	return p;
}

const unsigned char *hprof_get_record(struct hprof_in *h, uint64_t at,
				      uint32_t len, uint32_t expected,
				      const char *what)
{
	if (len != expected) {
		hprof_bad(h, at, "%s of %" PRIu32 " bytes (expected %" PRIu32 ")",
			  what, len, expected);
		return NULL;
	}
	return hprof_get(h, len, what);
}

int hprof_skip(struct hprof_in *h, uint64_t n, const char *what)
{
	while (n > 0 && !h->status) {
		long got = imp_input_fill(h->in, 1);
		size_t take;

		if (got <= 0)
			return truncated(h, got, what);
		take = (uint64_t)got < n ? (size_t)got : (size_t)n;
		h->in->pos += take;
		n -= take;
	}
	return h->status;
}

unsigned hprof_type_size(const struct hprof_in *h, unsigned type)
{
	switch (type) {
	case HPROF_OBJECT:
		return h->id_size;
	case HPROF_BOOLEAN:
	case HPROF_BYTE:
		return 1;
	case HPROF_CHAR:
	case HPROF_SHORT:
		return 2;
	case HPROF_FLOAT:
	case HPROF_INT:
		return 4;
	case HPROF_DOUBLE:
	case HPROF_LONG:
		return 8;
	default:
		return 0;
	}
}
