/*
 * diff-internal.h - the parts of vmheap-diff.
 *
 *   main.c      options, warnings, exit status
 *   classes.c   opening the dumps; the class-by-class diff (two
 *               censuses, by libvmheap-analysis)
 *   objects.c   --objects and --retainers (libvmheap-analysis's identity
 *               matching), with a progress bar per pass
 *   report.c    text, JSON and CSV output of every mode
 *   paths.c     --paths: the new objects' paths from the roots, merged
 *               by shape, for the classes that grew most (heap graphs)
 */
#ifndef DIFF_INTERNAL_H
#define DIFF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap_analysis.h"
#include "vmheap_report.h"

enum diff_mode {
	DIFF_CLASSES,
	DIFF_OBJECTS,
	DIFF_RETAINERS,
	DIFF_PATHS,
	DIFF_NATIVE
};

struct diff_paths; /* --paths (paths.c) */

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

struct diff_result {
	struct diff_dump old_d, new_d;
	/* DIFF_CLASSES */
	struct vmheap_census_delta *deltas;
	size_t ndeltas;
	/* DIFF_OBJECTS and DIFF_RETAINERS (its censuses are moved to
	 * old_d and new_d) */
	struct vmheap_identity_result ident;
	/* DIFF_PATHS */
	struct diff_paths *paths;
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

/* --objects and --retainers (vmheap_identity_diff). */
int diff_identity(const struct diff_options *o, struct diff_result *res,
		  char *err, size_t errsz);

/* --paths: both dumps read into heap graphs (through the readers
 * diff_open opened), the new objects matched by identity (id and class
 * name, as vmheap_identity_diff does), the top classes' paths merged. */
int diff_paths(const struct diff_options *o, struct diff_result *res,
	       char *err, size_t errsz);
void diff_paths_release(struct diff_paths *p);
void diff_paths_text(const struct diff_options *o, struct diff_result *res,
		     struct vmheap_strbuf *out);
void diff_paths_json(const struct diff_options *o, struct diff_result *res,
		     struct vmheap_strbuf *out);
void diff_paths_csv(const struct diff_options *o, struct diff_result *res,
		    struct vmheap_strbuf *out);

/* "WHICH: NAME (vm VM VERSION, pid PID): N objects, SIZE" and a newline,
 * SIZE as vmheap_report_bytes() gives it ("1.91 MiB (1999280 bytes)"). */
void diff_dump_line(struct vmheap_strbuf *out, const struct diff_options *o,
		    const char *which, vmheap_reader *r, uint64_t objects,
		    uint64_t bytes);

/* Render the result of o->mode into out. */
void diff_render(const struct diff_options *o, struct diff_result *res,
		 struct vmheap_strbuf *out);

/* Free everything the result holds. */
void diff_result_release(struct diff_result *res);

/* Progress options for reading `d`. */
void diff_scan_options(const struct diff_options *o, const struct diff_dump *d,
		       struct vmheap_progress *bar,
		       struct vmheap_scan_options *sopt);

/* --native (native.c): print the growth of native memory by call site;
 * the exit status (0, 1 when a dump has no native section, 2). */
int diff_native_main(const struct diff_options *o);

#endif /* DIFF_INTERNAL_H */
