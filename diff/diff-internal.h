/*
 * diff-internal.h - the parts of vmheap-diff.
 *
 *   main.c      options, warnings, exit status
 *   classes.c   the class-by-class diff (two censuses)
 *   identity.c  --objects and --retainers: objects matched by identity
 *   idmap.c     the object id table of the identity passes
 *   report.c    text, JSON and CSV output of every mode
 */
#ifndef DIFF_INTERNAL_H
#define DIFF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap_census.h"
#include "vmheap_map.h"

enum diff_mode { DIFF_CLASSES, DIFF_OBJECTS, DIFF_RETAINERS };

struct diff_options {
	const char *old_path, *new_path;
	enum diff_mode mode;
	/* --sort, --top (0: every row; retainers: 10 classes), --format,
	 * --threads, --no-progress */
	struct vmheap_report_options report;
};

/* One side of the comparison, once read. */
struct diff_dump {
	const char *path;
	vmheap_reader *reader; /* header stays readable */
	vmheap_census *census;
	uint64_t size;
	int regular;
};

/* A class with new objects (by identity). */
struct diff_new_class {
	const char *name; /* owned by the NEW census */
	uint64_t count, bytes;
};

/* Who references the new objects of one class. */
struct diff_retainer {
	const char *name; /* referrer class, or "<root NAME>" */
	uint64_t references;
};

struct diff_retained {
	struct diff_new_class cls;
	struct diff_retainer *retainers;
	size_t nretainers;
};

struct diff_result {
	struct diff_dump old_d, new_d;
	/* DIFF_CLASSES */
	struct vmheap_census_delta *deltas;
	size_t ndeltas;
	/* DIFF_OBJECTS and DIFF_RETAINERS */
	struct diff_new_class *news;
	size_t nnews;
	uint64_t new_objects, new_bytes;
	/* DIFF_RETAINERS */
	struct diff_retained *retained;
	size_t nretained;
	char **owned_names; /* "<root ...>" labels */
	size_t nowned;
};

/* Open both dumps (headers only).  Returns 0 or a code with err set. */
int diff_open(const struct diff_options *o, struct diff_result *res, char *err,
	      size_t errsz);

/* Read a dump into a census (the class-by-class mode).  Returns 0 or a
 * code with err set. */
int diff_read_census(const struct diff_options *o, struct diff_dump *d,
		     char *err, size_t errsz);

/* The class-by-class diff: both censuses, then the deltas. */
int diff_classes(const struct diff_options *o, struct diff_result *res,
		 char *err, size_t errsz);

/* --objects and --retainers. */
int diff_identity(const struct diff_options *o, struct diff_result *res,
		  char *err, size_t errsz);

/* Render the result of o->mode into out. */
void diff_render(const struct diff_options *o, struct diff_result *res,
		 struct vmheap_strbuf *out);

/* Free everything the result holds. */
void diff_result_release(struct diff_result *res);

/* Progress options for reading `d`. */
void diff_scan_options(const struct diff_options *o, const struct diff_dump *d,
		       struct vmheap_progress *bar,
		       struct vmheap_scan_options *sopt);

/* ------------------------------------------------------------ idmap.c */

/* Object id -> 64-bit value, open addressing, linear probing. */
struct diff_idmap {
	struct diff_idslot {
		uint64_t id, val;
	} * slots;
	size_t cap, len;
	int has_zero; /* id 0 is kept aside: 0 marks empty slots */
	uint64_t zero_val;
	int mapped; /* slots come from mmap (large tables) */
};

/* Make room for n ids without growing.  Returns 0 or VMHEAP_ENOMEM. */
int diff_idmap_reserve(struct diff_idmap *m, size_t n);

/* Insert or overwrite.  Returns 0 or VMHEAP_ENOMEM. */
int diff_idmap_put(struct diff_idmap *m, uint64_t id, uint64_t val);

static inline size_t diff_idmap_home(const struct diff_idmap *m, uint64_t id)
{
	uint64_t h = id ^ (id >> 33);
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & (m->cap - 1);
}

/* Start loading the slot where `id` would be (before a get).  Always
 * inlined: GCC 12 deems a function that only prefetches free of effects
 * and drops calls to it. */
static inline __attribute__((always_inline)) void
diff_idmap_prefetch(const struct diff_idmap *m, uint64_t id)
{
	if (m->cap)
		__builtin_prefetch(&m->slots[diff_idmap_home(m, id)]);
}

/* 1 and *val when present, else 0. */
static inline int diff_idmap_get(const struct diff_idmap *m, uint64_t id,
				 uint64_t *val)
{
	if (!id) {
		*val = m->zero_val;
		return m->has_zero;
	}
	if (!m->cap)
		return 0;
	size_t mask = m->cap - 1, i = diff_idmap_home(m, id);
	for (;;) {
		const struct diff_idslot *s = &m->slots[i];
		if (s->id == id) {
			*val = s->val;
			return 1;
		}
		if (!s->id)
			return 0;
		i = (i + 1) & mask;
	}
}

void diff_idmap_release(struct diff_idmap *m);

#endif /* DIFF_INTERNAL_H */
