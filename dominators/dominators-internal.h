/*
 * dominators-internal.h - the parts of vmheap-dominators.
 *
 *   main.c     options, messages, exit status
 *   top.c      the dominator tree (libvmheap-analysis) and the objects
 *              that retain the most
 *   report.c   text, JSON and CSV output
 */
#ifndef DOMINATORS_INTERNAL_H
#define DOMINATORS_INTERNAL_H

#include "vmheap_graph_query.h"
#include "vmheap_report.h"

#define DOMINATORS_DEFAULT_TOP 20
/* Dominators shown in a chain before "... N more" and the root. */
#define DOMINATORS_CHAIN 8

struct dominators_options {
	const char *dump;
	const char *cls; /* --class, or NULL */
	unsigned exclude; /* --exclude: VMHEAP_GRAPH_EXCLUDE_... */
	struct vmheap_report_options report; /* --top, --format, --bytes */
};

struct dominators_result {
	vmheap_reader *reader;
	vmheap_graph *g;
	uint32_t *top; /* most retained first */
	size_t ntop;
	size_t candidates; /* objects considered (of --class, or all) */
	uint64_t unreachable, unreachable_bytes;
};

/* Load, compute the dominators, pick the top objects.  Returns 0; 1 when
 * --class names no class of the dump (message in err); or a negative
 * code with err set. */
int dominators_find(const struct dominators_options *o,
		    struct dominators_result *res, char *err, size_t errsz);

void dominators_render(const struct dominators_options *o,
		       const struct dominators_result *res,
		       struct vmheap_strbuf *out);

void dominators_result_release(struct dominators_result *res);

#endif /* DOMINATORS_INTERNAL_H */
