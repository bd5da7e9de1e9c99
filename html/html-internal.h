/*
 * html-internal.h - the parts of vmheap-report, which writes one
 * self-contained HTML file about one or more dumps.
 *
 *   main.c     options, messages, exit status, writing the file
 *   census.c   each dump's census: the summary, the classes of the last
 *              dump, the growth of the top classes, the diff of the first
 *              and last dumps (the figures of vmheap-diff)
 *   graph.c    the last dump's heap graph: the dominator tree (capped) and
 *              the merged paths to the roots of the classes that grew most
 *   sites.c    the allocation sites of the last dump, when it has them
 *   site_growth.c  with several dumps, the sites by growth (first to last)
 *   native.c   the native (malloc) sites of the last dump, when it has them
 *   native_leaks.c  their leak classification (the section's leak scan)
 *   suspects.c the answer at the top: the leak suspects of the last dump
 *              against the first (vmheap-diff --suspects's), the native
 *              sites that grew most (vmheap-diff --native's)
 *   page.c     the HTML: page.html (built into the tool) with the data as
 *              JSON in a <script type="application/json"> element
 *
 * The data is one JSON object; page.html's script reads it and draws the
 * charts (hand-written SVG) and tables, setting text only through
 * textContent.  Every limit below is in the man page.
 */
#ifndef HTML_INTERNAL_H
#define HTML_INTERNAL_H

#include "vmheap_graph_query.h"
#include "vmheap_report.h"

/* Rows of the class table (of the last dump, most bytes first). */
#define HTML_CLASSES_MAX 5000
/* Rows of the diff table (sorted as vmheap-diff sorts: count change). */
#define HTML_DIFF_MAX 5000
/* Classes drawn in the growth chart (the first of the diff's order). */
#define HTML_GROWTH_CLASSES 8
/* The dominator tree: children kept per object, depth below the virtual
 * root, objects in all. */
#define HTML_TREE_CHILDREN 25
#define HTML_TREE_DEPTH 12
#define HTML_TREE_NODES 4000
/* Classes shown when the children of an object are grouped by class (the
 * treemap, the "more" line). */
#define HTML_TREE_GROUPS 10
/* Merged paths: for this many classes, this many shapes each, and the
 * objects shown at each end of a long shape. */
#define HTML_PATH_CLASSES 5
#define HTML_PATH_GROUPS 5
#define HTML_PATH_ENDS 12
/* Allocation sites: rows (class and site, most bytes first). */
#define HTML_SITES_MAX 1000
/* Native sites: rows, and frames of a site shown (as vmheap-histo). */
#define HTML_NATIVE_ROWS 100
#define HTML_NATIVE_FRAMES 5
/* The answer at the top: leak suspects and native sites by growth. */
#define HTML_SUSPECTS 5
#define HTML_NATIVE_GROWTH 5

struct html_options {
	const char *out; /* -o FILE */
	char **dumps;	 /* operands */
	size_t ndumps;
	int no_graph; /* --no-graph: no tree, no paths */
};

/* One dump read into a census. */
struct html_dump {
	const char *arg;
	vmheap_reader *reader;
	vmheap_census *census;
};

/* Everything the report shows. */
struct html_report {
	struct html_dump *dumps;
	size_t ndumps;
	/* last dump against the first (when ndumps > 1), sorted by count */
	struct vmheap_census_delta *deltas;
	size_t ndeltas;
};

/* Read every dump's census into rep (err: the reader's message). */
int html_read_censuses(const struct html_options *o, struct html_report *rep,
		       char *err, size_t errsz);

/* Append the JSON members "dumps", "classes", "growth" and "diff". */
void html_census_json(const struct html_report *rep, struct vmheap_strbuf *sb);

/* The classes whose paths the report shows: the first of the diff (grew
 * most), or with one dump the classes with most bytes.  Up to `cap`
 * names (owned by the censuses) into names; returns how many. */
size_t html_path_classes(const struct html_report *rep, const char **names,
			 size_t cap);

/* Read the last dump into a heap graph and append the JSON members
 * "tree", "paths" and "native" (the native section, read from the same
 * reader once the graph has read it to its end). */
int html_graph_json(const struct html_options *o, const struct html_report *rep,
		    struct vmheap_strbuf *sb, char *err, size_t errsz);

/* Read the dump `arg` again into a census by class and allocation site
 * and append its rows as the value of "sites".  0, or a negative code
 * with err set. */
int html_sites_json(const char *arg, struct vmheap_strbuf *sb, char *err,
		    size_t errsz);

/* The first and the last dump again into censuses by class and
 * allocation site, compared as vmheap-diff --by site compares them:
 * append their changed rows, most bytes grown first and those without a
 * site last, as the value of "site_growth".  0, or a negative code with
 * err set. */
int html_site_growth_json(const struct html_options *o,
			  struct vmheap_strbuf *sb, char *err, size_t errsz);

/* The leak scan of a native section by site, grouped as the report's
 * native rows (vmheap_native_leak_rows with HTML_NATIVE_FRAMES frames),
 * sorted by site for html_leaks_json. */
struct html_leaks {
	struct vmheap_native_leak_row *rows;
	size_t n;
	int scanned; /* the section has a leak scan */
};

/* Load the leak rows of section n (may be NULL; without a scan: no rows,
 * scanned 0) with `sym`.  0 or VMHEAP_ENOMEM; release with
 * html_leaks_release either way. */
int html_leaks_load(const struct vmheap_native *n, vmheap_symbolizer *sym,
		    struct html_leaks *out);

/* Append the leak classes of the row named `site` as a JSON array of 8
 * figures (leaked, indirect, possible, reachable: count then bytes, as
 * vmheap-histo --native --leaks), or null when there is no scan or no
 * live block at the site. */
void html_leaks_json(struct vmheap_strbuf *sb, const struct html_leaks *l,
		     const char *site);
void html_leaks_release(struct html_leaks *l);

/* Append "native": {...} or null for the native section `n` (may be
 * NULL).  0 or VMHEAP_ENOMEM. */
int html_native_json(const struct vmheap_native *n, struct vmheap_strbuf *sb);

/* Append ,"suspects":{...} (null with one dump or --no-graph): the
 * first HTML_SUSPECTS leak suspects of the last dump against the first,
 * as vmheap_suspects_rank ranks them for vmheap-diff --suspects, with
 * their growth per minute and holder.  0, or a negative code with err. */
int html_suspects_json(const struct html_options *o,
		       const struct html_report *rep, struct vmheap_strbuf *sb,
		       char *err, size_t errsz);

/* Append ,"native_growth":[...] (null unless the first and the last dump
 * both have native sections): the HTML_NATIVE_GROWTH sites whose live
 * bytes grew most, as vmheap-diff --native's rows, each with the leak
 * classes of its blocks in the last dump (html_leaks_json).  0 or
 * VMHEAP_ENOMEM. */
int html_native_growth_json(const struct html_report *rep,
			    const struct vmheap_native *first,
			    const struct vmheap_native *last,
			    struct vmheap_strbuf *sb);

/* Append the whole HTML page with `json` as its data. */
void html_page(struct vmheap_strbuf *out, const struct vmheap_strbuf *json);

void html_report_release(struct html_report *rep);

/* page.html, built into the tool (generated page_data.c). */
extern const char html_page_text[];
extern const unsigned long html_page_len;

#endif /* HTML_INTERNAL_H */
