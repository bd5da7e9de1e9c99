/*
 * diff-internal.h - the parts of vmheap-diff.
 *
 *   main.c      options, warnings, exit status
 *   classes.c   opening the dumps; the class-by-class diff (two
 *               censuses, by libvmheap-analysis)
 *   objects.c   --objects and --retainers (libvmheap-analysis's identity
 *               matching), with a progress bar per pass
 *   report.c    text, JSON and CSV output of every mode
 *   graphs.c    the graph modes' reading: heap graphs, new objects marked
 *   paths.c     --paths: the new objects' paths from the roots, merged
 *               by shape, for the classes that grew most (heap graphs)
 *   suspects.c  --suspects: both heap graphs read, the leak suspects
 *               ranked by libvmheap-analysis (vmheap_suspects.h);
 *               suspects_report.c prints them
 *   class_suspects.c  the short suspects section of the class diff
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
	DIFF_NATIVE,
	DIFF_SUSPECTS
};

struct diff_paths;    /* --paths (paths.c) */
struct diff_suspects; /* --suspects (suspects.c) */
#include "vmheap_graph.h"
#include "vmheap_suspects.h"

struct diff_options {
	const char *old_path, *new_path;
	/* every dump named, in order (old_path and new_path are the first
	 * two); three or more give the timeline (timeline.c) */
	char **dumps;
	int ndumps;
	enum diff_mode mode;
	int by_site; /* --by site: the class diff by class and site */
	/* --sort, --top (0: every row; retainers: 10 classes), --format,
	 * --threads, --no-progress */
	struct vmheap_report_options report;
	int no_suspects; /* --no-suspects: no section in the class diff */
	unsigned exclude; /* --exclude: VMHEAP_GRAPH_EXCLUDE_... (graphs) */
	int shortest;	  /* --shortest: plain shortest paths (graphs) */
	int pprof;	  /* --format pprof (--native, --by site) */
	int leaks;	  /* --leaks (--native): the leak classes' growth */
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
	/* DIFF_SUSPECTS, and the class diff's suspects section */
	struct diff_suspects *suspects;
	/* DIFF_CLASSES: why the section was not computed ("" when it was,
	 * or when the dumps have no references or roots to compute it) */
	char suspects_skipped[400];
	/* the graph modes' --exclude and --shortest (diff_graphs_read) */
	unsigned exclude;
	int shortest;
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

/* What the graph modes (--paths, --suspects) read: both dumps as heap
 * graphs (graphs.c). */
struct diff_graphs {
	vmheap_graph *old_g, *new_g;
	char **names;	 /* NEW's class labels, sorted, each once */
	size_t nnames;
	uint32_t *group; /* NEW's class k is labelled names[group[k]] */
	/* object i of NEW: group + 1 of its class when it is new (OLD has
	 * no object of its id, or one of another class name: the rule of
	 * vmheap_identity_diff), else 0 */
	uint32_t *mark;
};

/* Read OLD and NEW (the readers diff_open opened) into *dg, group NEW's
 * classes by label, mark its new objects.  Returns 0 or a code with err
 * set; *dg is released with diff_graphs_release() either way. */
int diff_graphs_read(struct diff_result *res, struct diff_graphs *dg,
		     char *err, size_t errsz);
void diff_graphs_release(struct diff_graphs *dg);
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

/* --suspects: both dumps read into heap graphs, the suspects ranked by
 * vmheap_suspects_rank (suspects.c); res->suspects is set even on failure
 * (released with the result). */
struct diff_suspects {
	vmheap_graph *old_g, *new_g;
	struct vmheap_suspects *s; /* NULL until ranked */
};
int diff_suspects(const struct diff_options *o, struct diff_result *res,
		  char *err, size_t errsz);
void diff_suspects_release(struct diff_suspects *s);
void diff_suspects_text(const struct diff_options *o, struct diff_result *res,
			struct vmheap_strbuf *out);
void diff_suspects_json(const struct diff_options *o, struct diff_result *res,
			struct vmheap_strbuf *out);
void diff_suspects_csv(const struct diff_options *o, struct diff_result *res,
		       struct vmheap_strbuf *out);

/* The class diff's suspects section: most suspects shown, and most
 * objects of NEW for which it is computed by default. */
#define DIFF_SECTION_SUSPECTS 3
#define DIFF_SECTION_MAX_OBJECTS 2000000u

/* After diff_classes: compute the suspects section into res->suspects
 * when the options and dumps allow it (class_suspects.c), else say why in
 * res->suspects_skipped (or nothing, for dumps without references). */
void diff_class_suspects(const struct diff_options *o, struct diff_result *res);

/* The section in text (nothing when neither computed nor skipped), and as
 * the JSON member ,"leak_suspects":{...} (nothing unless computed). */
void diff_suspects_section_text(const struct diff_options *o,
				struct diff_result *res,
				struct vmheap_strbuf *out);
void diff_suspects_section_json(const struct diff_options *o,
				struct diff_result *res,
				struct vmheap_strbuf *out);

/* Render the result of o->mode into out. */
void diff_render(const struct diff_options *o, struct diff_result *res,
		 struct vmheap_strbuf *out);

/* Free everything the result holds. */
void diff_result_release(struct diff_result *res);

/* Progress options for reading `d`. */
void diff_scan_options(const struct diff_options *o, const struct diff_dump *d,
		       struct vmheap_progress *bar,
		       struct vmheap_scan_options *sopt);

/* --by site --format pprof (pprof.c): the class diff's deltas as a pprof
 * profile into `out` (out->failed when out of memory). */
void diff_render_pprof(const struct diff_options *o,
		       const struct diff_result *res,
		       struct vmheap_strbuf *out);

/* The end of a run (main.c): with rc < 0 print err and return 2, else
 * write the warnings to stderr and the report to stdout and return 0 (2
 * when stdout fails); both buffers are released. */
int diff_emit(int rc, const char *err, struct vmheap_strbuf *out,
	      struct vmheap_strbuf *warn);

/* --native (native.c): print the growth of native memory by call site;
 * the exit status (0, 1 when a dump has no native section, 2). */
int diff_native_main(const struct diff_options *o);

#endif /* DIFF_INTERNAL_H */
