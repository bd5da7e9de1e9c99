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
/* The kind of an imemo of dump_all's "imemo_type" (len bytes). */
unsigned ruby_kind_of_imemo(const char *imemo, size_t len);
/* The kind of an object of a type this converter does not know. */
unsigned ruby_kind_unknown(const struct ruby_kinds *k);

/* One allocation site (file, line, method) of the site table. */
struct ruby_site {
	char *file, *method;
	size_t file_len, method_len;
	uint64_t line, id;
};

/*
 * ruby_sites.c: the site (file, line, method) of table `t` (values:
 * struct ruby_site), made if new: *created is then 1 and its id 0 (the
 * caller gives it one).  Texts longer than a string record holds are cut.
 * NULL when out of memory.
 */
struct ruby_site *ruby_site_get(struct imp_table *t, const char *file,
				size_t file_len, uint64_t line,
				const char *method, size_t method_len,
				int *created);
void ruby_sites_free(struct imp_table *t);

/* Class flags, as hosts/ruby writes them. */
#define RUBY_CLASS_ANONYMOUS 0x1u
#define RUBY_CLASS_INTERNAL 0x2u

/* What the table knows of one CLASS, MODULE or ICLASS address. */
struct ruby_class {
	char *name;	    /* "name", or NULL */
	char *real_name;    /* "real_class_name", or NULL */
	uint64_t super;	    /* "superclass", or 0 */
	uint32_t id;	    /* the class id objects use, 0: none yet */
	unsigned char seen; /* its record was read */
	unsigned char skip; /* singleton or ICLASS: its real class is
			       further up */
};

/* A decoded string of a line: bytes scratch[off..off+len). */
struct rj_str {
	size_t off, len;
	int set; /* the member was in the line */
};

/* What one dump_all line says (the members the converter uses). */
struct rj_line {
	struct rj_str type, name, real_name, root, imemo_type;
	struct rj_str file, method; /* allocation tracing's */
	uint64_t address, klass, super, memsize, line;
	unsigned char has_address, has_class, has_super, has_memsize;
	unsigned char singleton;
	uint64_t *refs; /* "references" */
	size_t nrefs, refs_cap;
	unsigned char *scratch; /* the decoded strings */
	size_t scratch_len, scratch_cap;
};

/* Clear the members of the last line (keeping the buffers). */
void rj_line_reset(struct rj_line *l);
/* Free the buffers. */
void rj_line_free(struct rj_line *l);
/* Append to the scratch buffer / the references: 0, or -1 when out of
 * memory. */
int rj_line_scratch_add(struct rj_line *l, const void *bytes, size_t n);
int rj_line_ref_add(struct rj_line *l, uint64_t ref);
/* The bytes of a decoded string (valid until the next line). */
static inline const char *rj_str_bytes(const struct rj_line *l, struct rj_str s)
{
	return l->scratch ? (const char *)l->scratch + s.off : "";
}
/* 1 when a decoded string equals NUL-terminated `text`. */
int rj_str_is(const struct rj_line *l, struct rj_str s, const char *text);

/*
 * Parse one line of `len` bytes into *l.  Returns 0, or -1 with *error a
 * static message ("a string expected", ...; "out of memory") and *column
 * the byte of the line where it was found.
 */
int rj_line_parse(struct rj_line *l, const char *text, size_t len,
		  size_t *column, const char **error);

#endif /* VMHEAP_RUBY_JSON_INTERNAL_H */
