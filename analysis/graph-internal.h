/*
 * graph-internal.h - the layout of vmheap_graph, shared by analysis/graph*.c.
 *
 * Every per-object array is indexed by the object's dense index (file
 * order).  No array holds a pointer per object.
 */
#ifndef VMHEAP_GRAPH_INTERNAL_H
#define VMHEAP_GRAPH_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "vmheap_graph.h"

/* Sizes of 2^32 - 1 bytes and more live in a side table (rare). */
#define GRAPH_BYTES_BIG UINT32_MAX

struct graph_big_bytes {
	uint32_t object;
	uint64_t bytes;
};

/* A class seen in the dump: in a class record, or only in object records. */
struct graph_class {
	uint64_t id;
	size_t name_off; /* into names; valid when has_name */
	size_t name_len;
	int has_name;
};

struct vmheap_graph {
	uint32_t n;	    /* objects */
	uint64_t *ids;	    /* [n] object ids */
	uint32_t *class_of; /* [n] index into classes */
	uint32_t *bytes32;  /* [n] shallow size, GRAPH_BYTES_BIG: see big */
	struct graph_big_bytes *big; /* by object, increasing */
	size_t nbig;
	uint64_t total_bytes;

	/* Id lookup: the ids in increasing order are ids[order[k]] (or ids[k]
	 * when order is NULL: the dump's ids were already in order).  dir[b]
	 * is the first k whose (id - id_min) >> dir_shift is at least b. */
	uint32_t *order;
	uint32_t *dir; /* [dir_buckets + 1] */
	uint32_t dir_buckets;
	unsigned dir_shift;
	uint64_t id_min, id_max;

	/* Forward references (CSR): targets of i are fwd[fwd_off[i] ..
	 * fwd_off[i + 1]). */
	uint32_t *fwd_off; /* [n + 1] */
	uint32_t *fwd;
	uint64_t missing_refs;

	/* Reverse references, once indexed. */
	uint32_t *rev_off; /* [n + 1] or NULL */
	uint32_t *rev;

	/* Classes, by first appearance; class_hash maps id -> index + 1. */
	struct graph_class *classes;
	size_t nclasses, classes_cap;
	uint32_t *class_hash;
	size_t class_hash_cap; /* power of two */
	char *names;	       /* class names and root kind strings */
	size_t names_len, names_cap;

	/* Roots, in file order. */
	struct vmheap_graph_root *roots;
	size_t nroots;
	uint64_t missing_roots;

	/* Dominators, once computed. */
	uint32_t *idom;	    /* [n] */
	uint64_t *retained; /* [n] */
	/* Shortest paths, once computed: BFS parent of each object. */
	uint32_t *path_parent; /* [n] */
	uint32_t *root_by_obj; /* root record indices sorted by object */
	size_t nroot_by_obj;
	int have_unreachable;
	uint64_t unreachable, unreachable_bytes;

	char error[512];
};

/* Set g->error (printf style) and return `code`. */
int graph_fail(vmheap_graph *g, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The index of class `id` in g->classes, or UINT32_MAX if unknown. */
uint32_t graph_class_lookup(const vmheap_graph *g, uint64_t id);

/* Add class `id` if new; its index, or UINT32_MAX when out of memory. */
uint32_t graph_class_intern(vmheap_graph *g, uint64_t id);

/* Build order/dir from g->ids (ids_sorted: already non-decreasing). */
int graph_index_ids(vmheap_graph *g, int ids_sorted);

/* Read every record of `r` into a new graph (graph_build.c). */
int graph_build(vmheap_graph **out, vmheap_reader *r, char *err,
		size_t err_len);

#endif /* VMHEAP_GRAPH_INTERNAL_H */
