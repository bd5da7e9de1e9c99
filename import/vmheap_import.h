/*
 * vmheap_import.h - converters of other VMs' heap dumps into vmheap dumps:
 * MRI's ObjectSpace.dump_all JSON and the JVM's HPROF.
 *
 * libvmheap-import is a static library of vmheap-import, never installed.
 * It uses libvmheap's writer (vmheap.h) and nothing else of ours.  Like
 * the other libraries it never prints and never exits: a conversion
 * returns 0 or a negative VMHEAP_E... code with its message in the
 * result.
 *
 * Both converters stream: the input is read once, front to back, through
 * the caller's read function (a pipe works), and each object is written
 * as soon as it is read.  Memory is bounded by the class and string
 * tables (and, for JSON, by the longest line; for HPROF by the largest
 * record's instance or array), not by the size of the dump.
 */
#ifndef VMHEAP_IMPORT_H
#define VMHEAP_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap.h"

/* The input formats. */
enum vmheap_import_format {
	VMHEAP_IMPORT_GUESS = 0, /* guess from the first bytes */
	VMHEAP_IMPORT_RUBY_JSON, /* MRI ObjectSpace.dump_all, one JSON
				    object per line */
	VMHEAP_IMPORT_HPROF,	 /* "JAVA PROFILE 1.0.1", "1.0.2", "1.0.3" */
};

/*
 * Read up to `len` bytes of input into `buf`: the count read, 0 at the
 * end of the input, or -1 on an error (errno set).
 */
typedef long (*vmheap_import_read_fn)(void *ctx, void *buf, size_t len);

/* What to convert and where to. */
struct vmheap_import_options {
	enum vmheap_import_format from; /* VMHEAP_IMPORT_GUESS: guess */
	const char *name;		/* the input's name in messages */
	vmheap_import_read_fn read;
	void *read_ctx;
	int out_fd; /* the vmheap dump is written here (not closed) */
	/* The VM's pid for the dump's header (neither input records it);
	 * 0: libvmheap's writer puts the caller's own. */
	uint64_t pid;
	/* Called now and then with the input bytes read so far; may be
	 * NULL. */
	void (*progress)(void *arg, uint64_t offset);
	void *progress_arg;
};

/* What a conversion did, and why it failed. */
struct vmheap_import_result {
	enum vmheap_import_format from; /* the format read */
	uint64_t bytes_in;		/* input bytes read */
	uint64_t objects, classes, roots, references;
	uint64_t sites; /* allocation sites (dump_all with allocation
			   tracing) */
	uint64_t bytes_out; /* vmheap dump bytes written */
	char error[512];    /* "what is wrong at line N (byte offset M)" */
};

/*
 * Convert the input into a vmheap dump on opt->out_fd.  Returns 0, or a
 * negative code (VMHEAP_EFORMAT for input that is not a well-formed dump
 * of the format, VMHEAP_ETRUNCATED for one that ends early, VMHEAP_EIO,
 * VMHEAP_ENOMEM, VMHEAP_ENOSPC, VMHEAP_EINVAL for an input of no known
 * format) with the message in res->error, which names the input, what is
 * wrong, and where: the byte offset, and for JSON the line.  After a
 * failure whatever was written to out_fd is no dump (the caller removes
 * it).
 */
int vmheap_import(const struct vmheap_import_options *opt,
		  struct vmheap_import_result *res);

/*
 * The format of an input that starts with the `len` bytes at `head`
 * ("JAVA PROFILE " for HPROF; '{' for dump_all JSON), or
 * VMHEAP_IMPORT_GUESS when it is neither.
 */
enum vmheap_import_format vmheap_import_guess(const void *head, size_t len);

/* "hprof", "ruby-json", or "guess". */
const char *vmheap_import_format_name(enum vmheap_import_format f);

/* Parse "hprof" or "ruby-json".  Returns 0 or VMHEAP_EINVAL. */
int vmheap_import_format_parse(const char *text,
			       enum vmheap_import_format *out);

#endif /* VMHEAP_IMPORT_H */
