/*
 * vmheap_report.h - what the tools (vmheap-histo, vmheap-diff,
 * vmheap-console) share to show things to people: the command-line
 * options histo and diff share, opening a dump named on the command line,
 * a growable string buffer, the one escaper behind JSON, CSV and text
 * output, text tables, human units, a progress bar, and how a dump's
 * origin is described.
 *
 * libvmheap-report is a static library of the tools, never installed; it
 * may use libvmheap (vmheap.h) and libvmheap-analysis (vmheap_analysis.h),
 * which never use it.  Like the libraries it never exits; the progress bar
 * and vmheap_strbuf_write write to the descriptor they are given.
 */
#ifndef VMHEAP_REPORT_H
#define VMHEAP_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap.h"
#include "vmheap_analysis.h"
#include "vmheap_graph.h"

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

/* Parse a sort key: "count", "bytes" or "name".  Returns 0 or
 * VMHEAP_EINVAL. */
int vmheap_sort_parse(const char *text, enum vmheap_sort *out);

/* ------------------------------------------------------------- options */

/*
 * The options the tools share, as a tool's parsed command line keeps
 * them (vmheap-path and vmheap-dominators take --top, --format and
 * --bytes of them).
 */
struct vmheap_report_options {
	enum vmheap_sort sort;		  /* --sort KEY; count by default */
	size_t top;			  /* --top N; 0: every row */
	enum vmheap_output_format format; /* --format FMT; text by default */
	unsigned threads;		  /* --threads N (1-64); 0: automatic */
	int progress;			  /* 0 after --no-progress */
	int raw_bytes; /* --bytes: text sizes as exact byte counts */
};
#define VMHEAP_REPORT_OPTIONS_INIT                                             \
	{                                                                      \
		VMHEAP_SORT_COUNT, 0, VMHEAP_OUTPUT_TEXT, 0, 1, 0              \
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
	{"no-progress", no_argument, NULL, (val)},                             \
	{"bytes", no_argument, NULL, (val)}
/* clang-format on */

/*
 * Apply the shared option `name` (its long name without dashes: "sort",
 * "top", "format", "threads", "no-progress" or "bytes") with `value`
 * (NULL for no-progress and bytes).  Returns 1 when it was applied, 0 when
 * `name` is none of them, or VMHEAP_EINVAL with a message for the user in err,
 * which names the bad value and what is expected ("--top needs a positive
 * number, not 'x'").
 */
int vmheap_report_option(struct vmheap_report_options *o, const char *name,
			 const char *value, char *err, size_t errsz);

struct vmheap_progress;

/*
 * A size cell of a text report: vmheap_format_size(), or the exact count
 * with o->raw_bytes (--bytes).  The _delta form signs it ("+464 KiB").
 */
void vmheap_report_size(const struct vmheap_report_options *o, char *buf,
			size_t len, uint64_t bytes);
void vmheap_report_size_delta(const struct vmheap_report_options *o, char *buf,
			      size_t len, int64_t delta);

/*
 * A byte count in a sentence of a text report ("Leak: 200 new objects,
 * 7.81 KiB; ..."): vmheap_format_size(), or "8000 bytes" with --bytes.
 */
void vmheap_report_amount(const struct vmheap_report_options *o, char *buf,
			  size_t len, uint64_t bytes);

/*
 * The size of a whole dump or target in a summary line ("20000 objects,
 * 1.91 MiB (1999280 bytes)"): vmheap_format_bytes(), or "1999280 bytes"
 * with --bytes.
 */
void vmheap_report_bytes(const struct vmheap_report_options *o, char *buf,
			 size_t len, uint64_t bytes);

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
 * Read the dump that `r` opened (named `name`, `size` bytes, 0 when
 * unknown) into a new census *c grouped by `group`, with o's threads and,
 * on a terminal, its progress bar (vmheap_report_scan_options).  Returns
 * 0, or a negative code with the message in err (the census's, naming the
 * file and byte offset); *c is set whenever it was made: free it in every
 * case.
 */
int vmheap_census_scan(const struct vmheap_report_options *o, vmheap_reader *r,
		       const char *name, uint64_t size,
		       enum vmheap_census_group group, vmheap_census **c,
		       char *err, size_t errsz);

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

/*
 * The one escaper of the reports.  Text in a dump (class names, VM names)
 * is meant to be UTF-8 but may hold any bytes; every output shows every
 * byte, and JSON output stays valid UTF-8 JSON:
 *
 *  - JSON: a string literal, quotes included.  ", \, \n, \r and \t are
 *    escaped as such, other control characters and DEL as \u00XX; valid
 *    UTF-8 sequences pass through; each byte that is not part of a valid
 *    UTF-8 sequence (a stray continuation byte, an overlong form, a
 *    surrogate, a truncated sequence) becomes U+FFFD, written as \ufffd.
 *  - text (table cells): control characters, DEL and each invalid byte
 *    are shown as \xNN (two lowercase hex digits), e.g. \xc4.
 *  - CSV: the text form, then quoted (RFC 4180) when it holds a comma, a
 *    quote, CR or LF, with inner quotes doubled.
 */

/* Length of the valid UTF-8 sequence at s[0..len) (1 for ASCII), or 0
 * when s[0] starts no valid sequence. */
size_t vmheap_utf8_length(const unsigned char *s, size_t len);

/* Append `len` bytes of `s` as a JSON string literal. */
void vmheap_strbuf_add_json_bytes(struct vmheap_strbuf *sb, const char *s,
				  size_t len);

/* Append NUL-terminated `s` as a JSON string literal. */
void vmheap_strbuf_add_json(struct vmheap_strbuf *sb, const char *s);

/* Append `s` with control characters and invalid UTF-8 bytes shown as
 * \xNN. */
void vmheap_strbuf_add_text(struct vmheap_strbuf *sb, const char *s);

/* Append `s` as one CSV field (the text form, quoted when needed). */
void vmheap_strbuf_add_csv(struct vmheap_strbuf *sb, const char *s);

/* Write the whole buffer to `fd`.  Returns 0 or VMHEAP_EIO (errno set). */
int vmheap_strbuf_write(const struct vmheap_strbuf *sb, int fd);

/* Free the buffer and reset it to empty. */
void vmheap_strbuf_release(struct vmheap_strbuf *sb);

/* Append "NAME (vm VM VERSION, pid PID)" for the dump `r` reads;
 * "NAME (vm VM, pid PID)" when the header has no version (an import). */
void vmheap_strbuf_add_dump_origin(struct vmheap_strbuf *sb, vmheap_reader *r);

/*
 * Append the JSON members that describe a dump, without braces:
 * "file", "vm", "vm_version", "pid", "time" (seconds), "time_ms" (when the
 * dump started, milliseconds since the epoch: the header's time_ms, else
 * time x 1000), then "objects" and "bytes" from *t (the census's totals;
 * left out when t is NULL).
 */
void vmheap_strbuf_add_dump_json(struct vmheap_strbuf *sb, vmheap_reader *r,
				 const struct vmheap_totals *t);

/*
 * The label of a report's total row: "TOTAL (N NOUN)", or
 * "TOTAL (N NOUN, top SHOWN shown)" when only the first `shown` of the n
 * rows are printed; e.g. "total (12 classes, top 5 shown)".  `noun` is
 * plural; for n = 1 its first word is made singular ("total (1 class
 * changed)").
 */
void vmheap_report_total_label(char *buf, size_t size, const char *total,
			       size_t n, const char *noun, size_t shown);

/*
 * A text table: columns of cells, each column right- or left-aligned,
 * separated by two spaces.  Cells are escaped as text (control
 * characters and invalid UTF-8 bytes shown as \xNN, see above) so a class
 * name cannot break the layout; widths count UTF-8 characters.
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

/* Append the table, one line per row, to sb.  No line ends in spaces:
 * the last cell is not padded when it is left-aligned, and empty cells
 * at the end of a row are left out. */
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

/* ------------------------------------------------------- native sites */

/*
 * Naming native frames offline (symbols.c, elfutils' libdw): the module
 * file at the dump's path, if its build id matches, gives the function
 * and, with debug info, the file and line.
 */
typedef struct vmheap_symbolizer vmheap_symbolizer;

/* A new symbolizer (it caches each module it opens), or NULL. */
vmheap_symbolizer *vmheap_symbolizer_new(void);

/* "function (file.c:LINE)", "function (module)", "module+0xOFF" (with
 * " (missing)", " (not a regular file)" or " (other build)" when the file
 * cannot be trusted; a FIFO or device is never opened blocking) or
 * "0xADDR" for frame f of native section n. */
void vmheap_symbolize(vmheap_symbolizer *s, const struct vmheap_native *n,
		      const struct vmheap_dump_frame *f, char *buf, size_t len);

/* A frame named in parts, for writers that keep them apart (pprof). */
struct vmheap_symbol {
	int named;	    /* 1: function is the symbol's name */
	char function[512]; /* the name, else "module+0xOFF (why)" or
			       "0xADDR" as vmheap_symbolize writes them */
	char file[256];	    /* the source file's base name, or "" */
	int line;	    /* its line, or 0 */
	char module[256];   /* the module's base name, or "" */
	int runtime;	    /* 1: the module defines MRI's allocator
			       (ruby_xmalloc: libruby, or a static ruby) */
};

/* Frame f of native section n in parts (vmheap_symbolize's figures):
 * never fails, a name too long is cut. */
void vmheap_symbolize_frame(vmheap_symbolizer *s,
			    const struct vmheap_native *n,
			    const struct vmheap_dump_frame *f,
			    struct vmheap_symbol *out);

void vmheap_symbolizer_free(vmheap_symbolizer *s);

/*
 * Read the dump named `arg` (as vmheap_dump_open) to its end and decode
 * its native section into *out.  0, or a negative code with the message
 * in err.  A whole dump without a native section gives 0 with *out NULL
 * and "ARG has no native section: ..." in err.  *r (free it) keeps the
 * header.
 */
int vmheap_native_load(const char *arg, vmheap_reader **r,
		       struct vmheap_native **out, char *err, size_t errsz);

/* A row of a native report: the sites whose innermost frames read the
 * same, their live count and bytes (or the change of them). */
struct vmheap_native_row {
	char *site; /* frames joined by " < ", innermost first, then the
		       VM's "file:line" when the site has one */
	int64_t count, bytes;
};

/* The rows of section n, grouped by their first `frames` frames, in the
 * order of `site`; vmheap's own sites are not rows (vmheap_native_own).
 * 0 or VMHEAP_ENOMEM. */
int vmheap_native_rows(const struct vmheap_native *n, vmheap_symbolizer *sym,
		       size_t frames, struct vmheap_native_row **rows,
		       size_t *nrows);
void vmheap_native_rows_free(struct vmheap_native_row *rows, size_t n);

/* vmheap's own live memory in section n (its sites, which the rows leave
 * out: location VMHEAP_NATIVE_OWN): bytes and blocks. */
void vmheap_native_own(const struct vmheap_native *n, uint64_t *bytes,
		       uint64_t *count);

/* Whether site s is vmheap's own memory (FORMAT.md section 15). */
int vmheap_native_is_own(const struct vmheap_dump_stack *s);

/* Site i of section n named as a row names it (its first `frames`
 * frames, then its VM location): a string to free, or NULL when out of
 * memory. */
char *vmheap_native_stack_name(const struct vmheap_native *n,
			       vmheap_symbolizer *sym, size_t i, size_t frames);

/* A row of a leak report (histo --native --leaks): the sites whose
 * innermost frames read the same and their blocks by leak class. */
struct vmheap_native_leak_row {
	char *site;
	struct vmheap_dump_leaks l;
};

/* The leak rows of section n (which has n->leaks), grouped as
 * vmheap_native_rows groups, vmheap's own sites left out; sorted leaked
 * first: by leaked bytes, then indirect, possible, reachable bytes, then
 * site.  0 or VMHEAP_ENOMEM. */
int vmheap_native_leak_rows(const struct vmheap_native *n,
			    vmheap_symbolizer *sym, size_t frames,
			    struct vmheap_native_leak_row **rows, size_t *nrows);
void vmheap_native_leak_rows_free(struct vmheap_native_leak_row *rows,
				  size_t n);

/*
 * Append the first `shown` of n leak rows in o->format: a text table
 * (leaked, bytes, indirect, bytes, possible, bytes, reachable, bytes,
 * site) with a total row; CSV with the columns leaked_count, leaked_bytes,
 * indirect_count, indirect_bytes, possible_count, possible_bytes,
 * reachable_count, reachable_bytes, site; or the JSON members "sites":
 * [...], "total": {...} (no braces) with those keys.
 */
void vmheap_native_leak_render(struct vmheap_strbuf *sb,
			       const struct vmheap_native_leak_row *rows,
			       size_t n, size_t shown,
			       const struct vmheap_report_options *o);

/* A row of a leak diff (vmheap-diff --native --leaks): a site's eight
 * figures in NEW (0 when the site is gone) and each one's growth since
 * OLD (NEW minus OLD). */
struct vmheap_native_leak_delta_row {
	char *site;
	struct vmheap_dump_leaks l;
	int64_t growth[8]; /* in the order of l's members */
};

/*
 * The leak diff of two dumps' leak rows (vmheap_native_leak_rows; the
 * arrays are not changed): one row per site named in either, matched by
 * name, the rows of sites with every figure and growth 0 left out;
 * sorted leaked first: by the growth of leaked bytes, then leaked bytes
 * in NEW, then the growth of indirect, possible, reachable bytes, then
 * site.  *rows (free with vmheap_native_leak_delta_free) gets the rows.
 * 0 or VMHEAP_ENOMEM.
 */
int vmheap_native_leak_delta(const struct vmheap_native_leak_row *old,
			     size_t no,
			     const struct vmheap_native_leak_row *new,
			     size_t nn,
			     struct vmheap_native_leak_delta_row **rows,
			     size_t *nrows);
void vmheap_native_leak_delta_free(struct vmheap_native_leak_delta_row *rows,
				   size_t n);

/*
 * Append the first `shown` of n leak diff rows in o->format: a text table
 * (each figure of vmheap_native_leak_render followed by its growth,
 * "+/-") with a total row; CSV with the columns leaked_count,
 * leaked_count_delta, leaked_bytes, leaked_bytes_delta, ... reachable_bytes,
 * reachable_bytes_delta, site; or the JSON members "sites": [...],
 * "total": {...} (no braces) with those keys.
 */
void vmheap_native_leak_delta_render(
    struct vmheap_strbuf *sb, const struct vmheap_native_leak_delta_row *rows,
    size_t n, size_t shown, const struct vmheap_report_options *o);

/* Largest bytes first (then count, then site). */
void vmheap_native_rows_sort(struct vmheap_native_row *rows, size_t n);

/*
 * The change from rows `o` (no rows) to rows `n` (nn rows), both in the
 * order of vmheap_native_rows (by site): a row per site whose count or
 * bytes changed, new minus old, by site, into *out (free with
 * vmheap_native_rows_free).  What vmheap-diff --native and vmheap-report
 * show.  0 or VMHEAP_ENOMEM.
 */
int vmheap_native_rows_delta(const struct vmheap_native_row *o, size_t no,
			     const struct vmheap_native_row *n, size_t nn,
			     struct vmheap_native_row **out, size_t *nout);

/*
 * Append the first `shown` of n rows in o->format: a text table
 * "count  bytes  site" with a total row (bytes in human units unless
 * o->raw_bytes, --bytes), CSV "count,bytes,site" lines, or the JSON
 * members "sites": [...], "total": {...} (no braces); CSV and JSON give
 * exact bytes.  `sign` (a diff) writes positive figures with a '+', and
 * names the JSON members and CSV columns count_delta and bytes_delta.
 */
void vmheap_native_render(struct vmheap_strbuf *sb,
			  const struct vmheap_native_row *rows, size_t n,
			  size_t shown, const struct vmheap_report_options *o,
			  int sign);

/* ------------------------------------------------------ process memory */

/*
 * "memory: RSS X; the heap's objects Y (P% of RSS); malloc holds A in use,
 * F free, M mmapped" and a newline, from a header's memory figures and
 * the heap's object bytes; nothing when the header has none.
 */
void vmheap_strbuf_add_memory_line(struct vmheap_strbuf *sb,
				   const struct vmheap_header *h,
				   uint64_t heap_bytes);

/*
 * Between two dumps (headers a and b, heap object bytes old and new):
 * "memory: RSS +X; malloc (in use and mmapped) +Y; the heap's objects +Z"
 * into sb (may be NULL), and into warn (may be NULL) a warning that points
 * at --native when RSS or malloc (in use and mmapped) grew by more than
 * 1 MiB and by more than twice the heap's objects, naming the figure or
 * figures that did ("RSS grew by X", "malloc grew by Y", or both).
 * Nothing unless both headers have memory figures.
 */
void vmheap_strbuf_add_memory_delta(struct vmheap_strbuf *sb,
				    struct vmheap_strbuf *warn,
				    const struct vmheap_header *a,
				    const struct vmheap_header *b,
				    uint64_t old_heap, uint64_t new_heap);

/* ---------------------------------------------------------------- units */

/*
 * A byte count for people, in binary units with three significant
 * digits: "512 B", "1.50 KiB", "14.2 MiB", "132 MiB", "1.00 GiB".
 */
void vmheap_format_size(char *buf, size_t len, unsigned long long bytes);

/* A signed byte count the same way: "+464 KiB", "-1.20 MiB", "0 B". */
void vmheap_format_size_delta(char *buf, size_t len, long long delta);

/* A byte count with its exact figure: "512 bytes", or
 * "1.50 MiB (1572864 bytes)". */
void vmheap_format_bytes(char *buf, size_t len, unsigned long long bytes);

/* ------------------------------------------------------ the graph tools */

/*
 * What vmheap-path, vmheap-dominators and the graph modes of vmheap-histo
 * and vmheap-diff share (report/graph_load.c, report/graph_paths.c).
 */

/*
 * Read the dump named by a tool's argument ("-" is stdin) into a heap
 * graph.  *r keeps the reader (its header and name stay readable; free it
 * with vmheap_reader_free), *g the graph.  Returns 0, or a negative code
 * with one message in err (a damaged dump: the reader's message, naming
 * the file and byte offset); then nothing is left to free.
 */
int vmheap_graph_load(const char *arg, vmheap_reader **r, vmheap_graph **g,
		      char *err, size_t errsz);

/* Root record `root` as people read it: "root KIND NAME" ("root
 * global_tbl $audit"), without NAME when the root has none (dumps before
 * format 1.1 have none), "root" alone when the dump has no string for its
 * kind either. */
void vmheap_strbuf_add_root_text(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, size_t root);

/* The same as a JSON object: {"kind":KIND or null,"name":NAME or null}. */
void vmheap_strbuf_add_root_json(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, size_t root);

/*
 * Object `holder` as it holds the next object of a path by the reference
 * named *name (format 1.1 names, FORMAT.md's text conventions), in text:
 *
 *   no name          Hash                      (the holder's class)
 *   index 17         Array[17]
 *   ["k17"]          Hash["k17"]               (hash keys, "[...]")
 *   "@store"         @store of Registry        (instance variables; a
 *                                              class object known by name,
 *                                              as for fields: @cache of Gem)
 *   "::STORE"        constant Registry::STORE  (Registry: the holder's
 *                    own name: the class record whose id is its id, else
 *                    the constant it is held by, *holder_in, else the
 *                    name of a root of it that starts with an upper-case
 *                    letter (a class root named by its path), else its
 *                    class)
 *   ".next"          Node.next                 (fields; a class object
 *                                              with a class record of its
 *                                              id: Registry.COUNT)
 *   "local x of ..." local messages of <main> (app.rb)  (a local
 *                                              variable says whose it is)
 *   "key", other     key of Hash, NAME of Hash
 *   unknown string   <string 12> of Hash
 *
 * A holder shown by its class is shown as vmheap_strbuf_add_object does
 * ("Class Service" for a class object).  A class object's own name is
 * first the class whose record names it as its object (FORMAT.md "Class
 * objects").
 *
 * `holder_in` is the name of the reference that holds `holder` itself
 * (NULL: unknown).
 */
void vmheap_strbuf_add_holder(struct vmheap_strbuf *sb, const vmheap_graph *g,
			      uint32_t holder,
			      const struct vmheap_graph_name *name,
			      const struct vmheap_graph_name *holder_in);

/* A reference's name as JSON members after others (nothing for none):
 * ,"name":TEXT  or  ,"index":N  or  ,"name_string_id":ID (a string the
 * dump does not have). */
void vmheap_strbuf_add_name_json(struct vmheap_strbuf *sb,
				 const struct vmheap_graph_name *name);

/* Objects shown at each end of a long path; the middle is one line
 * "... N more objects ...". */
#define VMHEAP_PATH_ENDS 20

/*
 * The shortest path of reachable object `i` (shortest paths computed), in
 * text, each line starting with `indent`.  When the dump names references
 * or roots (format 1.1), first the path on one line as people say it, the
 * object first, each holder with its reference's name, the root last:
 *
 *   Entry ← Hash["k17"] ← @store of Registry ← constant Registry::STORE ← root vm
 *
 * (vmheap_strbuf_add_holder; a run of holders of one class by one name
 * is one "@next of Node ×99,999"; when more than 9 such steps, the middle
 * is "← ... N more"), then "also from the stack of thread ..." when a
 * thread's stack also holds an object of the path (vmheap_graph_stack_holder).  Then one line for its root record, then one line
 * per object from the root object down to `i`, "CLASS  0xADDRESS", and
 * for an object reached by a named reference "  ← HOLDER" (the holder
 * phrase of the object above it).  Paths longer than 2 * VMHEAP_PATH_ENDS
 * objects show both ends.  Appends nothing for an unreachable object.  A
 * dump without names gives no chain line and no "← " on the lines.
 */
void vmheap_strbuf_add_path_text(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, uint32_t i,
				 const char *indent);

/*
 * When a thread's stack also holds reachable object `i` or an object on
 * its path (paths computed; vmheap_graph_stack_holder), "; also from the
 * stack of thread 0x... (holding Hash 0x...)" for a "held by" clause;
 * else nothing.
 */
void vmheap_strbuf_add_also_from(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, uint32_t i);

/*
 * Group k (counted from 1) of merged paths (vmheap_graph_object_paths) in
 * text: "INDENT#K  COUNT NOUN (SHARE), SIZE, path of N objects", SHARE
 * the group's count as a share of `of` and SIZE its bytes as
 * vmheap_report_amount() gives them, then its example's path
 * (vmheap_strbuf_add_path_text) indented four more columns.
 */
void vmheap_strbuf_add_path_group(struct vmheap_strbuf *sb,
				  const struct vmheap_report_options *o,
				  const vmheap_graph *g,
				  const struct vmheap_graph_path_group *grp,
				  size_t k, const char *noun, uint64_t of,
				  const char *indent);

/*
 * The same as JSON members, without braces: "root":{"kind":KIND or
 * null,"name":NAME or null}, "length":N, "path":[{"class":C,
 * "address":"0x..."}, ...] (every object, root object first), where an
 * object reached by a named reference also has its name as
 * vmheap_strbuf_add_name_json() gives it ("name":"@store" or "index":17).
 */
void vmheap_strbuf_add_path_json(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, uint32_t i);

/* The label of class `class_id` (vmheap_graph_class_label) as text, JSON
 * or a CSV field; "<out of memory>" when it cannot be made. */
void vmheap_strbuf_add_class(struct vmheap_strbuf *sb, const vmheap_graph *g,
			     uint64_t class_id, enum vmheap_output_format f);

/* Object `i` where its class would go (vmheap_graph_object_label): its
 * class's label, or "Class Service" for a class object; as text, JSON or
 * a CSV field. */
void vmheap_strbuf_add_object(struct vmheap_strbuf *sb, const vmheap_graph *g,
			      uint32_t i, enum vmheap_output_format f);

/* For a class object (vmheap_graph_object_as_class), the JSON member
 * ,"class_of_itself":LABEL after others ("Service"); nothing for any
 * other object. */
void vmheap_strbuf_add_self_json(struct vmheap_strbuf *sb,
				 const vmheap_graph *g, uint32_t i);

/*
 * The classes of a path shape from the root object down to the object
 * above `example` (`length` objects in all, as in
 * vmheap_graph_path_group), each after " > ": "root vm > Binding >
 * <imemo:env> > Array".  A step held by a named reference on the path of
 * `example` is shown by its holder phrase instead (vmheap_strbuf_add_holder:
 * "> Binding > local messages of <main> (app.rb) > Array"), and a class
 * object as vmheap_strbuf_add_object shows it.  Text only.
 */
void vmheap_strbuf_add_shape_steps(struct vmheap_strbuf *sb,
				   const vmheap_graph *g, uint32_t example,
				   size_t length, const uint64_t *classes);

/*
 * Who holds the objects of path group `grp` (the top shape of a class's
 * merged paths), as vmheap-path and vmheap-diff --suspects name it: the
 * root (vmheap_strbuf_add_root_text), the shape's steps above the object
 * (vmheap_strbuf_add_shape_steps) and "; also from the stack of thread
 * ..." when a stack holds it too (vmheap_strbuf_add_also_from): "root
 * global_tbl $kept > Array".  Text only.
 */
void vmheap_strbuf_add_held_by(struct vmheap_strbuf *sb, const vmheap_graph *g,
			       const struct vmheap_graph_path_group *grp);

/*
 * The message of a graph tool when no object of class `label` is in
 * `dump`: "no objects of class LABEL in DUMP; nearest: A, B" (the nearest
 * class names by edit distance, vmheap_graph_nearest_classes), or "...;
 * no class name is near it".
 */
void vmheap_strbuf_add_no_class(struct vmheap_strbuf *sb, const vmheap_graph *g,
				const char *label, const char *dump);

struct option;

/*
 * The option loop of a graph tool: getopt_long() over argv with `longopts`
 * (short option -h only).  Options whose val is 'R' are the shared ones
 * and are applied to *o (vmheap_report_option).  Returns the val of the
 * next other option (optarg set), -1 at the end (optind at the first
 * operand), or '?' with a message for the user in msg: an unknown or
 * incomplete option, or a bad value of a shared one.
 */
int vmheap_report_getopt(int argc, char **argv, const struct option *longopts,
			 struct vmheap_report_options *o, char *msg,
			 size_t msgsz);

/*
 * The end of a graph tool's main(): with rc 0, write `out` to stdout;
 * else print "TOOL: ERR" on stderr.  Releases `out`.  Returns the exit
 * status: 0, 1 when rc > 0 (the target is not in the dump), 2 for a
 * negative rc (a damaged dump, memory) or a failed write.
 */
int vmheap_tool_finish(const char *tool, int rc, const char *err,
		       struct vmheap_strbuf *out);

/*
 * `part` as a share of `total`, one decimal: "12.3%", "0.0%"; "-" when
 * total is not positive.  With `plus`, a positive share gets a "+".
 */
void vmheap_format_share(char *buf, size_t len, double part, double total,
			 int plus);

/* ------------------------------------------------------------- version */

/* VMHEAP_VERSION, the version every tool prints, is in vmheap_tool.h. */
#include "vmheap_tool.h"

/*
 * What an output says when a sum of sizes was held at 2^64 - 1
 * (vmheap_census_saturated, vmheap_graph_saturated): in text the line
 * "warning: byte sums passed 2^64 - 1 ...", in JSON the members
 * ,"saturated":true,"warning":"..." (after the dump's figures), in CSV
 * the line "# warning: ..." after the rows.
 */
void vmheap_strbuf_add_saturated(struct vmheap_strbuf *out,
				 enum vmheap_output_format format);

#endif /* VMHEAP_REPORT_H */
