/*
 * tools_harness-internal.h - helpers of the tools' suite: write dumps with
 * the real writer and parse what the tools print (text table, JSON, CSV);
 * the tools are run with spec/lib's spec_tool.
 */
#ifndef TOOLS_HARNESS_INTERNAL_H
#define TOOLS_HARNESS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <check.h>

#include "lib/vmheap_spec.h"

/* ------------------------------------------------------------ dumps */

struct tclass {
	uint64_t id;
	const char *name;
};

struct tobj {
	uint64_t id, cls, bytes;
	uint32_t kind;
	size_t nrefs;
	uint64_t refs[4];
	const uint64_t *many; /* when set, the references are many[0..nrefs) */
};

struct troot {
	uint64_t string_id; /* a string record with this id is written */
	const char *kind;
	uint64_t object;
};

struct tdump {
	const char *vm, *vm_version;
	uint64_t pid;
	int64_t time;
	int64_t time_ms; /* 0: time * 1000 */
	const struct tclass *classes;
	size_t nclasses;
	const struct tobj *objs;
	size_t nobjs;
	const struct troot *roots;
	size_t nroots;
	uint32_t block_bytes; /* 0: default */
};

/* The suite's scratch directory: spec/lib's root directory, made before
 * the first test and removed after the last. */
const char *tmp_dir(void);

/* tmp_dir()/name, in a static ring of buffers. */
const char *tmp_path(const char *name);

/* Write `d` to tmp_dir()/name with the real writer; returns the path. */
const char *write_dump(const char *name, const struct tdump *d);

/* Read a whole file (malloc'ed, NUL-terminated); *len its size.  Fails
 * the test if it cannot be read.  (Writing one: spec_write_file.) */
char *slurp(const char *path, size_t *len);

/* Running the tools: spec_tool (spec/lib/vmheap_spec.h). */

/* ------------------------------------------------------------ text */

/* A row of a text table: count (signed), name, bytes (signed). */
struct trow {
	long long count, bytes;
	char name[128];
};

/*
 * Parse the table lines of a tool's text output that start (after spaces)
 * with a number or a sign: "<count>  <name>  <bytes>  [<share>%]" (bytes
 * as exact numbers: run the tool with --bytes).  Returns the number of
 * rows stored (at most max).
 */
size_t parse_text_rows(const char *out, struct trow *rows, size_t max);

/* ------------------------------------------------------------ CSV */

/* Parse CSV text (RFC 4180 quoting, LF or CRLF).  Returns rows; each row
 * is a NULL-terminated array of malloc'ed fields.  *nrows is set. */
char ***parse_csv(const char *text, size_t *nrows);
void csv_free(char ***rows, size_t nrows);

/* ------------------------------------------------------------ JSON */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	double num;
	long long inum;
	char *str;
	struct jval **items; /* array items, or object values */
	char **keys;	     /* object keys */
	size_t n;
};

/* Parse a complete JSON text (trailing whitespace allowed); NULL when
 * malformed. */
struct jval *json_parse(const char *text);

/* Member of an object, or NULL. */
const struct jval *json_get(const struct jval *obj, const char *key);

void json_free(struct jval *v);

/* ------------------------------------------------------------ suites */

TCase *histo_tcase(void);
TCase *diff_tcase(void);
TCase *errors_tcase(void);
TCase *timeline_tcase(void);

#endif /* TOOLS_HARNESS_INTERNAL_H */
