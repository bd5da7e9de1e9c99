/*
 * import-internal.h - what the converters of libvmheap-import share: the
 * buffered input, a table keyed by 64-bit ids, and error messages.
 */
#ifndef VMHEAP_IMPORT_INTERNAL_H
#define VMHEAP_IMPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap.h"
#include "vmheap_import.h"

/* The largest object size an input may claim: 2^48 bytes (256 TiB), the
 * address space of x86-64 and AArch64; a larger one cannot be true, and
 * sums of such sizes would overflow. */
#define IMP_MAX_OBJECT_BYTES (UINT64_C(1) << 48)

/* ------------------------------------------------------------- input */

/* The input, read through the caller's function into a buffer that
 * grows only to hold the longest line (JSON) or the longest piece asked
 * for at once (HPROF). */
struct imp_input {
	const struct vmheap_import_options *opt;
	unsigned char *buf;
	size_t cap;
	size_t pos, end; /* unread bytes are buf[pos..end) */
	uint64_t base;	 /* input offset of buf[0] */
	uint64_t line;	 /* lines returned so far (JSON) */
	uint64_t next_progress;
	int eof, error; /* error: errno of a failed read */
};

/* Set up (allocating the buffer); VMHEAP_ENOMEM on failure. */
int imp_input_init(struct imp_input *in,
		   const struct vmheap_import_options *opt);
void imp_input_free(struct imp_input *in);

/* Input offset of the next unread byte. */
static inline uint64_t imp_input_offset(const struct imp_input *in)
{
	return in->base + in->pos;
}

/*
 * Make at least `n` unread bytes available at in->buf + in->pos (fewer
 * only at the end of the input).  Returns how many are available, or
 * VMHEAP_EIO / VMHEAP_ENOMEM.
 */
long imp_input_fill(struct imp_input *in, size_t n);

/*
 * The next line, without its '\n': *line points into the buffer until the
 * next call, *len is its length, *offset its input offset.  Returns 1, 0
 * at the end of the input, VMHEAP_ETRUNCATED for a last line without a
 * '\n', or VMHEAP_EIO / VMHEAP_ENOMEM.
 */
int imp_input_line(struct imp_input *in, const char **line, size_t *len,
		   uint64_t *offset);

/* ------------------------------------------------------------- table */

/* An open-addressing map from a non-zero 64-bit key to a slot of
 * `value_size` bytes (zeroed when new). */
struct imp_table {
	uint64_t *keys;
	unsigned char *values;
	size_t value_size, cap, count;
};

void imp_table_init(struct imp_table *t, size_t value_size);
void imp_table_free(struct imp_table *t);
/* The value of `key`, or NULL. */
void *imp_table_get(const struct imp_table *t, uint64_t key);
/* The value of `key`, made (zeroed) if new; NULL when out of memory. *
 * *created is set to 1 for a new key. Pointers stay valid until the next
 * imp_table_put. */
void *imp_table_put(struct imp_table *t, uint64_t key, int *created);
/* Visit every (key, value); order unspecified. */
#define IMP_TABLE_FOR(t, i)                                                    \
	for ((i) = 0; (i) < (t)->cap; (i)++)                                   \
		if ((t)->keys[i])
static inline void *imp_table_value(const struct imp_table *t, size_t i)
{
	return t->values + i * t->value_size;
}

/* ------------------------------------------------------------- errors */

/* printf into res->error, prefixed with "NAME: ". Returns rc. */
int imp_fail(struct vmheap_import_result *res, const char *name, int rc,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Copy a writer's error into res->error. Returns rc. */
int imp_writer_fail(struct vmheap_import_result *res, const char *name,
		    vmheap_writer *w, int rc);

/* Fill the result's counts from the writer. */
void imp_count_output(struct vmheap_import_result *res, vmheap_writer *w);

/* ------------------------------------------------------------- converters */

int imp_ruby_json(struct imp_input *in, struct vmheap_import_result *res);
int imp_hprof(struct imp_input *in, struct vmheap_import_result *res);

#endif /* VMHEAP_IMPORT_INTERNAL_H */
