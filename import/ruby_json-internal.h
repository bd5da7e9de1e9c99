/*
 * ruby_json-internal.h - the parts of the dump_all converter: kinds and
 * the class table.
 */
#ifndef VMHEAP_RUBY_JSON_INTERNAL_H
#define VMHEAP_RUBY_JSON_INTERNAL_H

#include "import-internal.h"

#define RUBY_T_IMEMO 0x1au
#define RUBY_T_NODE 0x1bu
#define RUBY_T_ICLASS 0x1cu
#define RUBY_T_COUNT 0x1fu /* kinds 0..0x1e are T_ values */

struct ruby_kinds {
	char **names;
	size_t count;
};

int ruby_kinds_init(struct ruby_kinds *k);
void ruby_kinds_free(struct ruby_kinds *k);
/* The T_ value of a dump_all "type" string, or -1. */
int ruby_kind_of_type(const char *type, size_t len);
/* The kind of an imemo of dump_all's "imemo_type" (NULL: unknown). */
unsigned ruby_kind_of_imemo(const struct ruby_kinds *k, const char *imemo);
/* The kind of an object of a type this converter does not know. */
unsigned ruby_kind_unknown(const struct ruby_kinds *k);

/* Class flags, as hosts/ruby writes them. */
#define RUBY_CLASS_ANONYMOUS 0x1u
#define RUBY_CLASS_INTERNAL 0x2u

/* What the table knows of one CLASS, MODULE or ICLASS address. */
struct ruby_class {
	char *name;	      /* "name", or NULL */
	char *real_name;      /* "real_class_name", or NULL */
	uint64_t super;	      /* "superclass", or 0 */
	uint32_t id;	      /* the class id objects use, 0: none yet */
	unsigned char seen;   /* its record was read */
	unsigned char skip;   /* singleton or ICLASS: its real class is
				 further up */
};

#endif /* VMHEAP_RUBY_JSON_INTERNAL_H */
