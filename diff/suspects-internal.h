/*
 * suspects-internal.h - what diff/suspects.c computes for vmheap-diff
 * --suspects and diff/suspects_report.c prints.
 */
#ifndef DIFF_SUSPECTS_INTERNAL_H
#define DIFF_SUSPECTS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "diff-internal.h"
#include "vmheap_graph_query.h"

/* Classes of held new objects shown per suspect. */
#define HELD_CLASSES 3

/* New objects of one class that the owners of a suspect hold. */
struct held {
	size_t name; /* class label index */
	uint64_t count, bytes;
};

/* One class of owners. */
struct suspect {
	size_t name; /* class label index */
	uint64_t owners;
	int64_t growth;
	double inside; /* new instances held by owners, weighted */
	uint64_t held_objects, held_bytes, ranked_bytes;
	struct held held[HELD_CLASSES]; /* most first, held_count used */
	size_t held_count, held_classes;
	struct vmheap_graph_class_paths *paths; /* of its owners */
};

struct diff_suspects {
	struct diff_graphs g; /* g.names: the labels rows[].name index */
	uint64_t new_objects, new_bytes;	 /* reachable new ones */
	uint64_t unreachable, unreachable_bytes; /* new ones no root reaches */
	uint64_t owners;
	size_t owner_classes;
	uint64_t threshold;
	struct suspect *rows; /* one per label; sorted; the first nrows pass */
	size_t nrows, shown;
};

#endif /* DIFF_SUSPECTS_INTERNAL_H */
