/*
 * hprof-internal.h - the parts of the HPROF converter: reading HPROF's
 * big-endian values from the input, and the class table.
 */
#ifndef VMHEAP_HPROF_INTERNAL_H
#define VMHEAP_HPROF_INTERNAL_H

#include "import-internal.h"

/* HPROF basic types (the `type` byte of fields and primitive arrays). */
enum hprof_type {
	HPROF_OBJECT = 2,
	HPROF_BOOLEAN = 4,
	HPROF_CHAR = 5,
	HPROF_FLOAT = 6,
	HPROF_DOUBLE = 7,
	HPROF_BYTE = 8,
	HPROF_SHORT = 9,
	HPROF_INT = 10,
	HPROF_LONG = 11,
};

/* The reader of one HPROF input. */
struct hprof_in {
	struct imp_input *in;
	struct vmheap_import_result *res;
	const char *name;
	unsigned id_size; /* 4 or 8 */
	int status;	  /* sticky error, 0 if none */
};

/*
 * The next `n` bytes (at most 1 MiB), valid until the next call, or NULL
 * after an error (a truncated input: h->status and res->error set).
 * `what` names the thing being read for the message.
 */
const unsigned char *hprof_get(struct hprof_in *h, size_t n, const char *what);
/* Skip `n` bytes; 0 or the error. */
int hprof_skip(struct hprof_in *h, uint64_t n, const char *what);
/* Values at p: big-endian. */
uint64_t hprof_u(const unsigned char *p, unsigned size);
/* The bytes a value of `type` takes in HPROF (ids: id_size), 0 for a
 * type that is none of enum hprof_type. */
unsigned hprof_type_size(const struct hprof_in *h, unsigned type);
/* Fail with "MSG at byte offset N" (N: `offset`). Returns the code. */
int hprof_bad(struct hprof_in *h, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* VMHEAP_HPROF_INTERNAL_H */
