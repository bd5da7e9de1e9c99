/*
 * vmheap_analysis.h - libvmheap-analysis: what is computed from a dump.
 *
 * It sits on libvmheap's reader (vmheap.h) and offers:
 *
 *  - a block scanner that reads a dump once and decodes its blocks on
 *    several threads (vmheap_scan_blocks);
 *  - the census: objects and bytes per class (or per object kind), with
 *    the class table that names class ids, merged by class NAME so that
 *    two dumps can be compared even when class ids differ between runs;
 *  - the difference of two censuses, class by class;
 *  - object identity: the objects of a NEW dump absent from an OLD one
 *    (same id and class name), and which classes reference them.
 *
 * Typical use:
 *
 *	struct vmheap_scan_options opt = VMHEAP_SCAN_OPTIONS_INIT;
 *	vmheap_census *c;
 *	vmheap_census_new(&c, VMHEAP_GROUP_CLASS, vmheap_scan_threads(&opt));
 *	if (vmheap_census_read(c, reader, &opt) < 0)
 *		fprintf(stderr, "%s\n", vmheap_census_error(c));
 *	rows = vmheap_census_rows(c, &n);
 *	vmheap_census_rows_sort(rows, n, VMHEAP_SORT_COUNT);
 *
 * A census's memory is proportional to the number of classes (and
 * threads), never to the number of objects; identity matching holds one
 * 16-byte table slot per object of the OLD dump.
 *
 * Errors (vmheap.h's convention, the one of every vmheap header):
 *  - Functions return 0 on success or a negative VMHEAP_E... code.  The
 *    library never prints and never exits.
 *  - A census keeps the message of its last error: vmheap_census_error().
 *    Its constructor (vmheap_census_new) fails only for want of memory:
 *    *out is then NULL, and vmheap_census_error(NULL) is "out of memory".
 *  - A function without an object of its own (vmheap_scan_blocks,
 *    vmheap_identity_diff, a vmheap_scan_fn) takes `char *err, size_t
 *    errlen` and always leaves a NUL-terminated string there: "" on
 *    success, else the message, which says what is wrong first and then
 *    where (dump name, byte offset), cut to errlen - 1 bytes.  errlen 0
 *    asks for no message (err may then be NULL).
 */
#ifndef VMHEAP_ANALYSIS_H
#define VMHEAP_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ scanning */

/*
 * Called once per block, on one of the scan's threads.  `thread` is the
 * index of the calling thread (0 .. threads-1) so that the callee can keep
 * per-thread state without locks.  Blocks arrive in no particular order
 * across threads.  Return 0, or a negative VMHEAP_E... code with a message
 * in err (at most errlen bytes) which should say what is wrong and at which
 * byte offset; the scan then stops and reports it, prefixed with the name
 * of the dump.
 */
typedef int (*vmheap_scan_fn)(void *state, unsigned thread,
			      const struct vmheap_block *blk, char *err,
			      size_t errlen);

/* Progress callback: `offset` bytes of the input have been read. */
typedef void (*vmheap_progress_fn)(void *arg, uint64_t offset);

struct vmheap_scan_options {
	unsigned threads;	     /* decoding threads; 0: automatic */
	vmheap_progress_fn progress; /* NULL: none; called about 10 times/s */
	void *progress_arg;
};
#define VMHEAP_SCAN_OPTIONS_INIT                                               \
	{                                                                      \
		0                                                              \
	}

/*
 * The number of decoding threads a scan with `opt` uses: opt->threads if
 * set, else 2 when the machine has more than one processor, else 1.  With
 * 1, blocks are decoded on the calling thread and no thread is started.
 */
VMHEAP_EXPORT unsigned
vmheap_scan_threads(const struct vmheap_scan_options *opt);

/*
 * Read every block of `r` (a reader that has not returned a record yet)
 * and hand each one to fn(state, thread, block, ...).  The calling thread
 * reads and checks blocks; decoding threads run `fn`.  Returns 0 once the
 * footer was read and verified and every block was processed, or a
 * negative code with the message in err: the reader's message (it names
 * the file and byte offset), or fn's message prefixed with the reader's
 * name.  When several blocks fail, the one earliest in the file is
 * reported.
 */
VMHEAP_EXPORT int vmheap_scan_blocks(vmheap_reader *r, vmheap_scan_fn fn,
				     void *state,
				     const struct vmheap_scan_options *opt,
				     char *err, size_t errlen);

/* -------------------------------------------------------------- census */

/* What a census counts objects by. */
enum vmheap_census_group {
	VMHEAP_GROUP_CLASS, /* the object's class name */
	VMHEAP_GROUP_KIND,  /* the object's kind, named by the header */
	VMHEAP_GROUP_SITE,  /* the object's class name and allocation site */
};

typedef struct vmheap_census vmheap_census;

/*
 * One row of a census: every object whose class (or kind) has this
 * display name.  Class names come from class records; a class id without a
 * record reads "<unknown class 0x...>", an empty class name reads
 * "<anonymous class>", a kind beyond the header's names reads
 * "<unknown kind N>".
 */
struct vmheap_census_row {
	const char *name; /* NUL-terminated; owned by the census */
	uint64_t count;	  /* objects */
	uint64_t bytes;	  /* sum of their shallow sizes */
	/* VMHEAP_GROUP_SITE: the allocation site of these objects as
	 * "file:line in method" ("file:line" when the site names no
	 * method; "<unknown site N>" for an id without a site record), or
	 * NULL when they have none.  NULL in the other groups.  Owned by
	 * the census. */
	const char *site;
};

/*
 * Create an empty census that `threads` threads may feed at once (each
 * with its own thread index).  Returns 0 or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_census_new(vmheap_census **out,
				    enum vmheap_census_group group,
				    unsigned threads);

/*
 * Count one decoded record on behalf of thread `thread`.  Class records
 * fill the class table; objects are counted by class id (or kind); roots,
 * strings and references are tallied for the totals check.  Records may
 * arrive in any order across threads: names are resolved in finish.
 * Returns 0 or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_census_add_record(vmheap_census *c, unsigned thread,
					   const struct vmheap_record *rec);

/*
 * Decode every record of `blk` with a block cursor and count it; a
 * vmheap_scan_fn-shaped helper (state is the census).  Returns 0 or a
 * negative code with the cursor's message in err.
 */
VMHEAP_EXPORT int vmheap_census_add_block(void *census, unsigned thread,
					  const struct vmheap_block *blk,
					  char *err, size_t errlen);

/*
 * Finish a census after a complete scan of `r`: compare the counted
 * totals with the footer's (a mismatch is VMHEAP_ETOTALS), resolve class
 * ids to names and merge the rows by name.  Uses the header's kind names
 * when grouping by kind.  Returns 0 or a negative code (message via
 * vmheap_census_error, naming the dump).
 */
VMHEAP_EXPORT int vmheap_census_finish(vmheap_census *c, vmheap_reader *r);

/*
 * Scan all of `r` with `opt` (opt->threads must resolve to at most the
 * census's thread count; NULL means one thread) and finish.  Returns 0 or
 * a negative code; the message, which names the file and the byte offset,
 * is in vmheap_census_error().
 */
VMHEAP_EXPORT int vmheap_census_read(vmheap_census *c, vmheap_reader *r,
				     const struct vmheap_scan_options *opt);

/* Message of the last error, or "" ("out of memory" for NULL). */
VMHEAP_EXPORT const char *vmheap_census_error(const vmheap_census *c);

/*
 * The display text of a site record (VMHEAP_RECORD_SITE), as census rows
 * by site show it: "file:line in method", or "file:line" when the site
 * names no method.  A malloc'ed NUL-terminated string (free it), or NULL
 * when out of memory.
 */
VMHEAP_EXPORT char *vmheap_site_text(const struct vmheap_record *rec);

/*
 * The rows after finish, one per distinct display name, in no particular
 * order; *n is set to their number.  The caller may reorder them (e.g.
 * with vmheap_census_rows_sort) but not free them.
 */
VMHEAP_EXPORT struct vmheap_census_row *vmheap_census_rows(vmheap_census *c,
							   size_t *n);

/*
 * Display name of `class_id` after finish (see struct vmheap_census_row
 * for placeholders).  The pointer stays valid until the census is freed.
 * Returns NULL only when memory runs out while making a placeholder.
 */
VMHEAP_EXPORT const char *vmheap_census_class_name(vmheap_census *c,
						   uint64_t class_id);

/* Totals as counted from the records (equal to the footer's after a
 * successful finish), but `bytes`: the sum of the sizes, not modulo 2^64
 * as the footer's, held at UINT64_MAX if it would pass it. */
VMHEAP_EXPORT const struct vmheap_totals *
vmheap_census_totals(const vmheap_census *c);

/*
 * After finish: 1 if a sum of sizes (a row's bytes or the total) would
 * have passed UINT64_MAX and is held there (the sizes cannot all be
 * true: tools say so in every output), 0 if not.
 */
VMHEAP_EXPORT int vmheap_census_saturated(const vmheap_census *c);

/* Free the census and its rows. */
VMHEAP_EXPORT void vmheap_census_free(vmheap_census *c);

/* ------------------------------------------------------------- sorting */

enum vmheap_sort {
	VMHEAP_SORT_COUNT, /* count (or count delta), descending */
	VMHEAP_SORT_BYTES, /* bytes (or bytes delta), descending */
	VMHEAP_SORT_NAME,  /* name, ascending (bytewise) */
};

/* Sort census rows by `key`; ties are broken by name, so the order is
 * total and the output reproducible. */
VMHEAP_EXPORT void vmheap_census_rows_sort(struct vmheap_census_row *rows,
					   size_t n, enum vmheap_sort key);

/* ---------------------------------------------------------------- diff */

/* How one class (matched by display name) changed between two dumps. */
struct vmheap_census_delta {
	const char *name; /* owned by one of the two censuses */
	const char *site; /* by site: as in struct vmheap_census_row */
	uint64_t count_old, count_new;
	uint64_t bytes_old, bytes_new;
	int64_t count_delta; /* count_new - count_old */
	int64_t bytes_delta; /* bytes_new - bytes_old */
};

/*
 * Compare two finished censuses by display name (and by site, for
 * censuses grouped by site: a row is a class at one site).  Every name whose count
 * or bytes changed gets a delta, including names present in only one of
 * them (new and gone classes).  *out is a malloc'ed array of *n deltas
 * (free it with free()); names stay valid while both censuses live.
 * Returns 0 or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_census_diff(vmheap_census *old_c, vmheap_census *new_c,
				     struct vmheap_census_delta **out,
				     size_t *n);

/* Sort deltas: count delta or bytes delta descending (signed: growth
 * first, shrinkage last), or name; ties by name. */
VMHEAP_EXPORT void vmheap_census_deltas_sort(struct vmheap_census_delta *d,
					     size_t n, enum vmheap_sort key);

/* ------------------------------------------------------------ identity */

/* The objects of one class name in NEW that are absent from OLD. */
struct vmheap_new_class {
	const char *name; /* owned by the NEW census */
	uint64_t count, bytes;
};

/* Who references the new objects of one class: a referrer class, or a
 * root ("<root KIND>", or "<root>" when the root names no kind), or
 * "<unknown referrer>" for references continued in a more-references
 * record whose object was not found. */
struct vmheap_retainer {
	const char *name; /* owned by the census or the result */
	uint64_t references;
};

/* One class of new objects and its retainers, most references first. */
struct vmheap_retained {
	struct vmheap_new_class cls;
	struct vmheap_retainer *retainers;
	size_t nretainers;
};

/* The dump being scanned, as vmheap_identity_options' hooks name it. */
enum vmheap_identity_dump { VMHEAP_IDENTITY_OLD, VMHEAP_IDENTITY_NEW };

struct vmheap_identity_options {
	unsigned threads;	 /* decoding threads; 0: automatic */
	enum vmheap_sort sort;	 /* order of the new classes */
	size_t retainer_classes; /* retainers of the first N classes;
				    0: no retainer passes */
	/* Called before each pass over a dump, with scan options already
	 * holding `threads`, to add progress reporting (may be NULL) ... */
	void (*scan_begin)(void *arg, enum vmheap_identity_dump dump,
			   struct vmheap_scan_options *sopt);
	/* ... and after the pass (may be NULL). */
	void (*scan_end)(void *arg, enum vmheap_identity_dump dump);
	void *arg;
};
#define VMHEAP_IDENTITY_OPTIONS_INIT                                           \
	{                                                                      \
		0                                                              \
	}

/* What vmheap_identity_diff found.  Zero it before the call; free it with
 * vmheap_identity_result_release() whether the call succeeded or not. */
struct vmheap_identity_result {
	vmheap_census *old_census, *new_census; /* class-grouped, finished */
	struct vmheap_new_class *news; /* per class name, in o->sort order */
	size_t nnews;
	uint64_t new_objects, new_bytes;  /* sums over news */
	struct vmheap_retained *retained; /* the first retainer_classes */
	size_t nretained;
	char **owned_names; /* the root labels retainers point to */
	size_t nowned;
};

/*
 * Match the objects of two dumps by identity: an object of NEW is new when
 * OLD holds no object of its id, or one of another class name.  Reads
 * `old_r` once and *new_r once (both readers must not have returned a
 * record yet), counting a census of each on the way.  With
 * o->retainer_classes > 0 and new objects found, NEW is then read twice
 * more, reopened from
 * `new_path` (a regular file): *new_r is freed and replaced by the last
 * reader (NULL if reopening failed).  Returns 0 or a negative code with
 * the message in err.
 */
VMHEAP_EXPORT int vmheap_identity_diff(vmheap_reader *old_r,
				       vmheap_reader **new_r,
				       const char *new_path,
				       const struct vmheap_identity_options *o,
				       struct vmheap_identity_result *res,
				       char *err, size_t errlen);

/* Free everything `res` holds (censuses included) and zero it. */
VMHEAP_EXPORT void
vmheap_identity_result_release(struct vmheap_identity_result *res);

#ifdef __cplusplus
}
#endif

#endif /* VMHEAP_ANALYSIS_H */
