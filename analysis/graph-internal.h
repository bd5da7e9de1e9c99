/*
 * graph-internal.h - the layout of vmheap_graph, shared by analysis/graph*.c.
 *
 * Every per-object array is indexed by the object's dense index (file
 * order).  No array holds a pointer per object.
 */
#ifndef VMHEAP_GRAPH_INTERNAL_H
#define VMHEAP_GRAPH_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
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
	uint64_t object_id; /* the object that is this class (1.1), 0: none */
};

/* A class object: object index -> class index (graph_labels.c). */
struct graph_class_object {
	uint32_t object, klass;
};

/* Codes of edge names (vmheap_graph.edge_name). */
#define GRAPH_NAME_NONE 0u
#define GRAPH_NAME_INDEX 0x80000000u

/* A name of the name table: a string record's text, or an element index
 * too large for a code. */
struct graph_name {
	int64_t value;	 /* as the dump gives it: string id, or -1 - index */
	size_t off, len; /* text in names; valid when has_text */
	int has_text;	 /* 0: an index, or a string id without record */
};

struct vmheap_graph {
	uint32_t n;	    /* objects */
	uint64_t *ids;	    /* [n] object ids */
	uint32_t *class_of; /* [n] index into classes */
	uint32_t *bytes32;  /* [n] shallow size, GRAPH_BYTES_BIG: see big */
	struct graph_big_bytes *big; /* by object, increasing */
	size_t nbig;
	uint64_t total_bytes;
	int has_sites; /* an object record names a site */

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

	/* Edge names (format 1.1), parallel to fwd: NULL when no record of
	 * the dump names a reference.  A code is GRAPH_NAME_NONE, an element
	 * index (GRAPH_NAME_INDEX bit set, index below GRAPH_NAME_INDEX), or
	 * 1 + a position in name_table.  Equal texts have one code. */
	uint32_t *edge_name;
	struct graph_name *name_table;
	size_t nname_table, name_table_cap;
	uint32_t *root_name; /* [nroots] codes of the roots' names, or NULL */

	/* Reverse references, once indexed. */
	uint32_t *rev_off; /* [n + 1] or NULL */
	uint32_t *rev;

	/* Classes, by first appearance; class_hash maps id -> index + 1. */
	struct graph_class *classes;
	size_t nclasses, classes_cap;
	uint32_t *class_hash;
	size_t class_hash_cap; /* power of two */
	char *names;	       /* class names and root kind strings */
	/* objects that are classes, by object index (graph_labels.c) */
	struct graph_class_object *class_objects;
	size_t nclass_objects;
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
	/* [n] position in fwd of the reference that reaches each object on
	 * its shortest path (kept only when edge_name is not NULL) */
	uint32_t *path_edge;
	/* 1: the search stopped once it had reached the objects it was
	 * asked for (vmheap_graph_shortest_paths_to): the objects it did
	 * not reach have no path yet, unreachable or not */
	int path_partial;
	uint32_t *root_by_obj; /* root record indices sorted by object */
	size_t nroot_by_obj;
	int have_unreachable;
	uint64_t unreachable, unreachable_bytes;
	int path_rule; /* VMHEAP_GRAPH_PATHS_... */
	int saturated; /* a sum of sizes was held at UINT64_MAX */

	char error[512];
};

/* `*sum += b`, held at UINT64_MAX (and g->saturated set) if it would
 * pass it: sizes are whatever the dump says. */
static inline void graph_add_bytes(vmheap_graph *g, uint64_t *sum, uint64_t b)
{
	*sum += b;
	if (*sum < b) {
		*sum = UINT64_MAX;
		g->saturated = 1;
	}
}

/* Ask the kernel for huge pages under the whole 2 MiB pages of
 * [p, p + bytes) (madvise MADV_HUGEPAGE; nothing where it has none, or for
 * less than 2 MiB): the graph's arrays are read at random, one TLB miss a
 * read with 4 KiB pages, and filled with 512 times fewer page faults.
 * Memory use is unchanged but for the last partial huge page of an array.
 * A hint: its failure is ignored. */
void graph_huge_pages(void *p, size_t bytes);

/* Move the pages already filled of [p, p + bytes) to huge pages now
 * (madvise MADV_COLLAPSE, Linux 6.1), for an array that was grown with
 * realloc (where MADV_HUGEPAGE would make mremap copy it at each growth)
 * and is then read at random.  It copies the array once (1.2 s for 1.6
 * GB on the bench machine) and needs one free huge page at a time, no
 * more memory.  A hint: its
 * failure (older kernels, no huge page free) is ignored. */
void graph_collapse_huge_pages(void *p, size_t bytes);

/* Below this many items (references, ids) a second thread costs more
 * than it saves. */
#define GRAPH_THREAD_MIN 1000000

/* fn(a) and fn(b), the two halves of one job that share nothing they
 * write: fn(b) on a second thread while fn(a) runs here when `big` and
 * there are two processors, else (or when no thread starts) one after the
 * other here.  Both are done on return. */
void graph_both_halves(void *(*fn)(void *), void *a, void *b, int big);

/* Arrays whose first touches (the kernel clearing each page) are taken
 * on a second thread while the caller fills them (graph_prefault.c):
 * add the arrays, begin, write them from the start, and end before any of
 * them is freed (end stops the thread and joins it).  Nothing is started
 * for less than 16 MiB in all, on one processor, or when no thread can
 * start; contents are never changed; a kernel without
 * MADV_POPULATE_WRITE (before 5.14) makes it a no-op. */
#define GRAPH_PREFAULT_PARTS 6
struct graph_prefault_part {
	void *p;
	size_t bytes;
};
struct graph_prefault {
	struct graph_prefault_part part[GRAPH_PREFAULT_PARTS];
	int n, started;
	_Atomic int stop;
	pthread_t tid;
};
void graph_prefault_add(struct graph_prefault *f, void *p, size_t bytes);
void graph_prefault_begin(struct graph_prefault *f);
void graph_prefault_end(struct graph_prefault *f);

/* Set g->error (printf style) and return `code`. */
int graph_fail(vmheap_graph *g, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The index of class `id` in g->classes, or UINT32_MAX if unknown. */
uint32_t graph_class_lookup(const vmheap_graph *g, uint64_t id);

/* Add class `id` if new; its index, or UINT32_MAX when out of memory. */
uint32_t graph_class_intern(vmheap_graph *g, uint64_t id);

/* Index the objects that class records name as themselves (after the
 * ids are indexed).  0 or VMHEAP_ENOMEM. */
int graph_index_class_objects(vmheap_graph *g);

/* Build order/dir from g->ids (ids_sorted: already non-decreasing). */
int graph_index_ids(vmheap_graph *g, int ids_sorted);

/* Replace each of ids[0..n) by its object index (vmheap_graph_find),
 * VMHEAP_GRAPH_NONE for an id not in the graph.  The lookups are
 * prefetched a few ids ahead (they are random reads), and a long array is
 * done in two halves on two threads when there are two processors. */
void graph_find_many(const vmheap_graph *g, uint64_t *ids, size_t n);

/* The paths of objects[0..n) and of the objects on them: those that exist
 * (a search that stopped early covers them, or every object's), else every
 * object's (vmheap_graph_shortest_paths).  0 or VMHEAP_ENOMEM. */
int graph_paths_for(vmheap_graph *g, const uint32_t *objects, size_t n);

/* Read every record of `r` into a new graph (graph_build.c). */
int graph_build(vmheap_graph **out, vmheap_reader *r);
/* Free what a graph holds, not the graph itself (graph.c). */
void graph_release(vmheap_graph *g);

/* A string record while the graph is built: its text is at names + off,
 * len bytes, NUL-terminated. */
struct graph_string {
	uint64_t id;
	size_t off, len;
};

/* What the build keeps to give each edge name value one code. */
struct graph_name_codes {
	uint32_t *table; /* name_table position + 1, by string id hash */
	size_t cap;	 /* power of two, or 0 */
	int64_t last_value;
	uint32_t last_code;
};

/* The code of name value `v` as a dump gives it (0 none, > 0 string id,
 * < 0 element index), adding it to g->name_table if new.  Returns 0 and
 * *code, or VMHEAP_ENOMEM. */
int graph_name_code(vmheap_graph *g, struct graph_name_codes *c, int64_t v,
		    uint32_t *code);

/* After the build: point the name table's string ids at their texts
 * (`strings` sorted by id, then file order: the first record of an id
 * wins) and give equal texts one code in g->edge_name and g->root_name.
 * Frees c's table.  Returns 0 or VMHEAP_ENOMEM. */
int graph_names_resolve(vmheap_graph *g, struct graph_name_codes *c,
			const struct graph_string *strings, size_t nstrings);

/* An element's name as a path shape sees it. */
#define GRAPH_NAME_ELEMENT UINT32_MAX

/* The code of object i's path name for path shapes: g's code, or
 * GRAPH_NAME_ELEMENT for an element index or a '[' text (hash key);
 * GRAPH_NAME_NONE without names or for a root object. */
uint32_t graph_path_shape_name(const vmheap_graph *g, uint32_t i);

/* The code of root record k's name, GRAPH_NAME_NONE for none. */
uint32_t graph_root_name_code(const vmheap_graph *g, size_t k);

/* Kinds of references (graph_edge_kinds.c, FORMAT.md "Stack and
 * internal references"): 1 when name code `code` marks a reference from a
 * thread's stack ("stack", "stack of ..."); when the reference at fwd
 * position k has such a name; when class c (an index into g->classes) is
 * VM-internal (a class name in angle brackets). */
int graph_code_is_stack(const vmheap_graph *g, uint32_t code);
int graph_edge_is_stack(const vmheap_graph *g, uint32_t k);
int graph_class_is_internal(const vmheap_graph *g, uint32_t c);
/* 1 when the reference at fwd position k has a text name that is not an
 * element's (no '[' key, no index) nor a stack's: "local messages of
 * <main> (app.rb)", "@store".  Such a reference held by an internal
 * object is not costly. */
int graph_edge_is_named_field(const vmheap_graph *g, uint32_t k);
/* The same of name code `code`. */
int graph_code_is_named_field(const vmheap_graph *g, uint32_t code);

#endif /* VMHEAP_GRAPH_INTERNAL_H */
