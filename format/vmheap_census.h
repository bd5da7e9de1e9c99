/*
 * vmheap_census.h - per-class census of a dump, and what the analysis
 * tools (vmheap-histo, vmheap-diff) build on it.
 *
 * This is part of libvmheap.  It sits on top of the reader in vmheap.h and
 * offers:
 *
 *  - a block scanner that reads a dump once and decodes its blocks on
 *    several threads (vmheap_scan_blocks);
 *  - the census: objects and bytes per class (or per object kind), with
 *    the class table that names class ids, merged by class NAME so that
 *    two dumps can be compared even when class ids differ between runs;
 *  - the difference of two censuses, class by class;
 *  - small report helpers shared by the tools: the options they share,
 *    a growable string buffer, JSON and CSV quoting, a text table, a
 *    progress bar.
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
 * Memory is proportional to the number of classes (and threads), never to
 * the number of objects.  Errors follow vmheap.h: negative VMHEAP_E...
 * codes, a message kept in the object, nothing printed.
 */
#ifndef VMHEAP_CENSUS_H
#define VMHEAP_CENSUS_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- opening */

/*
 * Open the dump named by a tool's argument: "-" is standard input (named
 * "<stdin>" in messages), anything else a path.  *size is set to the
 * file's size when it is a regular file, else 0 (pipes).  *regular is set
 * to 1 for a regular file (which can be read a second time).  Returns 0,
 * or a negative code; on failure *out may still be set (read its message
 * with vmheap_reader_error, then free it), else the message is in err.
 */
int vmheap_dump_open(vmheap_reader **out, const char *arg, uint64_t *size,
		     int *regular, char *err, size_t errsz);

/* Dumps at least this large get a progress bar on a terminal. */
#define VMHEAP_PROGRESS_MIN_BYTES (100u * 1024u * 1024u)

/* ------------------------------------------------------------ scanning */

/*
 * Called once per block, on one of the scan's threads.  `thread` is the
 * index of the calling thread (0 .. threads-1) so that the callee can keep
 * per-thread state without locks.  Blocks arrive in no particular order
 * across threads.  Return 0, or a negative VMHEAP_E... code with a message
 * in err (at most errsz bytes) which should say what is wrong and at which
 * byte offset; the scan then stops and reports it, prefixed with the name
 * of the dump.
 */
typedef int (*vmheap_scan_fn)(void *state, unsigned thread,
			      const struct vmheap_block *blk, char *err,
			      size_t errsz);

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
unsigned vmheap_scan_threads(const struct vmheap_scan_options *opt);

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
int vmheap_scan_blocks(vmheap_reader *r, vmheap_scan_fn fn, void *state,
		       const struct vmheap_scan_options *opt, char *err,
		       size_t errsz);

/* -------------------------------------------------------------- census */

/* What a census counts objects by. */
enum vmheap_census_group {
	VMHEAP_GROUP_CLASS, /* the object's class name */
	VMHEAP_GROUP_KIND,  /* the object's kind, named by the header */
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
};

/*
 * Create an empty census that `threads` threads may feed at once (each
 * with its own thread index).  Returns 0 or VMHEAP_ENOMEM.
 */
int vmheap_census_new(vmheap_census **out, enum vmheap_census_group group,
		      unsigned threads);

/*
 * Count one decoded record on behalf of thread `thread`.  Class records
 * fill the class table; objects are counted by class id (or kind); roots,
 * strings and references are tallied for the totals check.  Records may
 * arrive in any order across threads: names are resolved in finish.
 * Returns 0 or VMHEAP_ENOMEM.
 */
int vmheap_census_add_record(vmheap_census *c, unsigned thread,
			     const struct vmheap_record *rec);

/*
 * Decode every record of `blk` with a block cursor and count it; a
 * vmheap_scan_fn-shaped helper (state is the census).  Returns 0 or a
 * negative code with the cursor's message in err.
 */
int vmheap_census_add_block(void *census, unsigned thread,
			    const struct vmheap_block *blk, char *err,
			    size_t errsz);

/*
 * Finish a census after a complete scan of `r`: compare the counted
 * totals with the footer's (a mismatch is VMHEAP_ETOTALS), resolve class
 * ids to names and merge the rows by name.  Uses the header's kind names
 * when grouping by kind.  Returns 0 or a negative code (message via
 * vmheap_census_error, naming the dump).
 */
int vmheap_census_finish(vmheap_census *c, vmheap_reader *r);

/*
 * Scan all of `r` with `opt` (opt->threads must resolve to at most the
 * census's thread count; NULL means one thread) and finish.  Returns 0 or
 * a negative code; the message, which names the file and the byte offset,
 * is in vmheap_census_error().
 */
int vmheap_census_read(vmheap_census *c, vmheap_reader *r,
		       const struct vmheap_scan_options *opt);

/* Message of the last error, or "". */
const char *vmheap_census_error(const vmheap_census *c);

/*
 * The rows after finish, one per distinct display name, in no particular
 * order; *n is set to their number.  The caller may reorder them (e.g.
 * with vmheap_census_rows_sort) but not free them.
 */
struct vmheap_census_row *vmheap_census_rows(vmheap_census *c, size_t *n);

/*
 * Display name of `class_id` after finish (see struct vmheap_census_row
 * for placeholders).  The pointer stays valid until the census is freed.
 * Returns NULL only when memory runs out while making a placeholder.
 */
const char *vmheap_census_class_name(vmheap_census *c, uint64_t class_id);

/* Totals as counted from the records (equal to the footer's after a
 * successful finish). */
const struct vmheap_totals *vmheap_census_totals(const vmheap_census *c);

/* Free the census and its rows. */
void vmheap_census_free(vmheap_census *c);

/* ------------------------------------------------------------- sorting */

enum vmheap_sort {
	VMHEAP_SORT_COUNT, /* count (or count delta), descending */
	VMHEAP_SORT_BYTES, /* bytes (or bytes delta), descending */
	VMHEAP_SORT_NAME,  /* name, ascending (bytewise) */
};

/* Parse "count", "bytes" or "name".  Returns 0 or VMHEAP_EINVAL. */
int vmheap_sort_parse(const char *text, enum vmheap_sort *out);

/* Sort census rows by `key`; ties are broken by name, so the order is
 * total and the output reproducible. */
void vmheap_census_rows_sort(struct vmheap_census_row *rows, size_t n,
			     enum vmheap_sort key);

/* ---------------------------------------------------------------- diff */

/* How one class (matched by display name) changed between two dumps. */
struct vmheap_census_delta {
	const char *name; /* owned by one of the two censuses */
	uint64_t count_old, count_new;
	uint64_t bytes_old, bytes_new;
	int64_t count_delta; /* count_new - count_old */
	int64_t bytes_delta; /* bytes_new - bytes_old */
};

/*
 * Compare two finished censuses by display name.  Every name whose count
 * or bytes changed gets a delta, including names present in only one of
 * them (new and gone classes).  *out is a malloc'ed array of *n deltas
 * (free it with free()); names stay valid while both censuses live.
 * Returns 0 or VMHEAP_ENOMEM.
 */
int vmheap_census_diff(vmheap_census *old_c, vmheap_census *new_c,
		       struct vmheap_census_delta **out, size_t *n);

/* Sort deltas: count delta or bytes delta descending (signed: growth
 * first, shrinkage last), or name; ties by name. */
void vmheap_census_deltas_sort(struct vmheap_census_delta *d, size_t n,
			       enum vmheap_sort key);

/* ------------------------------------------------------------- reports */

/* Output formats of the tools. */
enum vmheap_output_format {
	VMHEAP_OUTPUT_TEXT,
	VMHEAP_OUTPUT_JSON,
	VMHEAP_OUTPUT_CSV,
};

/* Parse "text", "json" or "csv".  Returns 0 or VMHEAP_EINVAL. */
int vmheap_output_format_parse(const char *text,
			       enum vmheap_output_format *out);

/* ------------------------------------------------------------- options */

/*
 * The options vmheap-histo and vmheap-diff share, as a tool's parsed
 * command line keeps them.
 */
struct vmheap_report_options {
	enum vmheap_sort sort;		  /* --sort KEY; count by default */
	size_t top;			  /* --top N; 0: every row */
	enum vmheap_output_format format; /* --format FMT; text by default */
	unsigned threads;		  /* --threads N (1-64); 0: automatic */
	int progress;			  /* 0 after --no-progress */
};
#define VMHEAP_REPORT_OPTIONS_INIT                                             \
	{                                                                      \
		VMHEAP_SORT_COUNT, 0, VMHEAP_OUTPUT_TEXT, 0, 1                 \
	}

/*
 * The getopt_long() entries of the shared options, each returning `val`
 * (a tool includes <getopt.h> and lists them in its own table):
 *
 *	static const struct option longopts[] = {
 *		VMHEAP_REPORT_LONGOPTS('R'),
 *		{"kind", no_argument, NULL, 'k'},
 *		...
 *	};
 *	case 'R': rc = vmheap_report_option(&opts, longopts[i].name,
 *					    optarg, msg, sizeof(msg));
 */
/* clang-format off */
#define VMHEAP_REPORT_LONGOPTS(val)                                            \
	{"sort", required_argument, NULL, (val)},                              \
	{"top", required_argument, NULL, (val)},                               \
	{"format", required_argument, NULL, (val)},                            \
	{"threads", required_argument, NULL, (val)},                           \
	{"no-progress", no_argument, NULL, (val)}
/* clang-format on */

/*
 * Apply the shared option `name` (its long name without dashes: "sort",
 * "top", "format", "threads" or "no-progress") with `value` (NULL for
 * no-progress).  Returns 1 when it was applied, 0 when `name` is none of
 * them, or VMHEAP_EINVAL with a message for the user in err, which names
 * the bad value and what is expected ("--top needs a positive number,
 * not 'x'").
 */
int vmheap_report_option(struct vmheap_report_options *o, const char *name,
			 const char *value, char *err, size_t errsz);

struct vmheap_progress;

/* How many of n rows a report prints: all, or the first o->top. */
size_t vmheap_report_rows_shown(const struct vmheap_report_options *o,
				size_t n);

/*
 * Scan options for reading a dump of `size` bytes (0 when unknown) named
 * `name`: o->threads, and a progress bar on standard error through *bar
 * when o->progress is set and vmheap_progress_wanted(2, size).  *bar must
 * live as long as the scan; clear it with vmheap_progress_clear() after.
 */
void vmheap_report_scan_options(const struct vmheap_report_options *o,
				const char *name, uint64_t size,
				struct vmheap_progress *bar,
				struct vmheap_scan_options *sopt);

/*
 * A growable byte buffer.  Appends never fail visibly: when memory runs
 * out the buffer sets `failed` and ignores later appends, so a caller
 * checks once at the end.  buf is NUL-terminated whenever len > 0.
 */
struct vmheap_strbuf {
	char *buf;
	size_t len, cap;
	int failed;
};
#define VMHEAP_STRBUF_INIT                                                     \
	{                                                                      \
		0                                                              \
	}

/* Append `len` bytes. */
void vmheap_strbuf_add(struct vmheap_strbuf *sb, const char *s, size_t len);

/* Append printf-formatted text. */
void vmheap_strbuf_addf(struct vmheap_strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Append `s` as a JSON string literal, quotes included.  Control
 * characters are escaped; other bytes pass through (names are UTF-8). */
void vmheap_strbuf_add_json(struct vmheap_strbuf *sb, const char *s);

/* Append `s` as one CSV field (RFC 4180): quoted when it holds a comma,
 * a quote, CR or LF, with inner quotes doubled. */
void vmheap_strbuf_add_csv(struct vmheap_strbuf *sb, const char *s);

/* Write the whole buffer to `fd`.  Returns 0 or VMHEAP_EIO (errno set). */
int vmheap_strbuf_write(const struct vmheap_strbuf *sb, int fd);

/* Free the buffer and reset it to empty. */
void vmheap_strbuf_release(struct vmheap_strbuf *sb);

/* Append "NAME (vm VM VERSION, pid PID)" for the dump `r` reads. */
void vmheap_strbuf_add_dump_origin(struct vmheap_strbuf *sb,
				   vmheap_reader *r);

/*
 * Append the JSON members that describe a dump, without braces:
 * "file", "vm", "vm_version", "pid", "time", then "objects" and "bytes"
 * from *t (the census's totals).
 */
void vmheap_strbuf_add_dump_json(struct vmheap_strbuf *sb, vmheap_reader *r,
				 const struct vmheap_totals *t);

/*
 * The label of a report's total row: "TOTAL (N NOUN)", or
 * "TOTAL (N NOUN, top SHOWN shown)" when only the first `shown` of the n
 * rows are printed; e.g. "total (12 classes, top 5 shown)".
 */
void vmheap_report_total_label(char *buf, size_t size, const char *total,
			       size_t n, const char *noun, size_t shown);

/*
 * A text table: columns of cells, each column right- or left-aligned,
 * separated by two spaces.  Widths count UTF-8 characters; control
 * characters in cells are shown as \xNN so a class name cannot break the
 * layout.
 */
typedef struct vmheap_table vmheap_table;

/*
 * New table of strlen(align) columns; align[i] is 'r' or 'l'.  Returns
 * NULL when out of memory.
 */
vmheap_table *vmheap_table_new(const char *align);

/* Add a row of as many cells as columns (copied).  Returns 0 or
 * VMHEAP_ENOMEM. */
int vmheap_table_add_row(vmheap_table *t, const char *const *cells);

/* Append the table, one line per row, to sb.  The last column is not
 * padded when it is left-aligned. */
void vmheap_table_render(const vmheap_table *t, struct vmheap_strbuf *sb);

/* Free the table. */
void vmheap_table_free(vmheap_table *t);

/*
 * A progress bar drawn on a terminal: "NAME  42% [#####     ] 50/120 MB".
 * Fill fd, name and total (bytes expected, > 0) and pass the struct as the
 * progress_arg of a scan with vmheap_progress_update as its progress
 * function.  The bar is drawn only on the caller's request: the tool
 * decides whether fd is a terminal.
 */
struct vmheap_progress {
	int fd;
	const char *name;
	uint64_t total;
	int drawn; /* set once something was drawn */
};

/* 1 when a tool should draw a bar on `fd` for a dump of `size` bytes: fd
 * is a terminal and size >= VMHEAP_PROGRESS_MIN_BYTES. */
int vmheap_progress_wanted(int fd, uint64_t size);

/* Draw the bar for `offset` bytes read (a vmheap_progress_fn). */
void vmheap_progress_update(void *progress, uint64_t offset);

/* Erase the bar if one was drawn. */
void vmheap_progress_clear(struct vmheap_progress *p);

#ifdef __cplusplus
}
#endif

#endif /* VMHEAP_CENSUS_H */
