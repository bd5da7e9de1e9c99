/*
 * path-internal.h - the parts of vmheap-path.
 *
 *   main.c     options, messages, exit status
 *   target.c   the target: an object by address, or every instance of a
 *              class by label (with the nearest labels when none has it),
 *              and their paths merged by shape (libvmheap-analysis)
 *   site.c     the target's allocation site(s), when the dump has them
 *   report.c   text and JSON output
 *   retainers.c  --retainers: every reference to the target, grouped
 */
#ifndef PATH_INTERNAL_H
#define PATH_INTERNAL_H

#include "vmheap_graph_query.h"
#include "vmheap_report.h"

#define PATH_DEFAULT_TOP 10

struct path_options {
	const char *dump;   /* path, or "-" */
	const char *target; /* CLASS or 0xADDRESS */
	struct vmheap_report_options report; /* --top, --format, --bytes */
	int shortest;	    /* --shortest: the plain shortest paths */
	unsigned exclude;   /* --exclude: VMHEAP_GRAPH_EXCLUDE_... */
	int retainers;	    /* --retainers: the referrers, not the paths */
};

/* An allocation site of the target (site.c). */
struct path_site {
	char *text;	      /* "file:line in method" */
	uint64_t count, bytes; /* the target's objects allocated there */
};

struct path_result {
	vmheap_reader *reader; /* the dump's header */
	vmheap_graph *g;
	int by_address;
	uint64_t address;
	struct vmheap_graph_class_paths *paths; /* the merged groups */
	struct vmheap_graph_retainers *retainers; /* with --retainers */
	struct path_site *sites; /* most objects first; NULL: none known */
	size_t nsites;
};

/*
 * Load the dump, find the target, merge its paths.  Returns 0; 1 when the
 * target is not in the dump (the message, with the nearest class labels,
 * in err); or a negative code with err set (a damaged dump, memory).
 */
int path_find(const struct path_options *o, struct path_result *res,
	      char *err, size_t errsz);

/* Render the result in o->report.format into out. */
void path_render(const struct path_options *o, const struct path_result *res,
		 struct vmheap_strbuf *out);

void path_result_release(struct path_result *res);

/* --retainers in o->report.format into out (retainers.c). */
void path_render_retainers(const struct path_options *o,
			   const struct path_result *res,
			   struct vmheap_strbuf *out);

/* The target's sites into res->sites (none for a dump read from stdin or
 * without sites).  Returns 0 or a negative code with err set. */
int path_find_sites(const struct path_options *o, struct path_result *res,
		    char *err, size_t errsz);
void path_sites_release(struct path_result *res);

#endif /* PATH_INTERNAL_H */
