/*
 * vmheap_graph.h - the heap graph of a vmheap dump: dense object indices,
 * forward and reverse references, roots, dominators with retained sizes,
 * and shortest paths from the roots.
 *
 * A graph is built from a dump through libvmheap's reader.  Objects get
 * dense indices 0..n-1 in file order (the order of their object records).
 * References are kept as compact arrays (CSR: one uint32 offset per object
 * and one uint32 target per reference), with no allocation per object.
 *
 *	vmheap_graph *g;
 *	if (vmheap_graph_open_path(&g, "heap.vmheap") < 0)
 *		... vmheap_graph_error(g) says what and where ...
 *	else if (vmheap_graph_dominators(g) < 0)
 *		... vmheap_graph_error(g) ...
 *	for (uint32_t i = 0; i < vmheap_graph_object_count(g); i++)
 *		... vmheap_graph_retained_bytes(g, i) ...
 *	vmheap_graph_free(g);   // also after a failure
 *
 * Errors (vmheap.h's convention, the one of every vmheap header)
 * ------
 *  - Functions that can fail return 0 (or a documented count) on success and
 *    a negative VMHEAP_E... code from vmheap.h on failure.
 *  - The message is kept in the graph, read with vmheap_graph_error() until
 *    the next failing call; except the const queries
 *    vmheap_graph_unreachable() and vmheap_graph_path(), whose one failure,
 *    VMHEAP_ESTATE (asked before the computation they read), needs no
 *    message and leaves it alone.
 *  - Failed constructors (vmheap_graph_open_path, vmheap_graph_read): *out
 *    is a failed graph that holds the reason (the reader's message for a
 *    damaged dump), good only for vmheap_graph_error() and
 *    vmheap_graph_free(); NULL only with VMHEAP_ENOMEM when not even that
 *    could be allocated (vmheap_graph_error(NULL) is "out of memory").  A
 *    NULL `out` is refused with VMHEAP_EINVAL.
 *  - The library never prints and never exits.
 *  - A graph is used by one thread at a time.  Accessors take indices below
 *    vmheap_graph_object_count(); other indices are a caller bug (not
 *    checked).
 *
 * What the graph keeps of a dump
 * ------------------------------
 *  - Every object record is one object, duplicates included (FORMAT.md: the
 *    reader does not deduplicate).  A reference to an id held by several
 *    records goes to the first of them in file order, and so does
 *    vmheap_graph_find().
 *  - A reference to an id that no object record has is counted
 *    (vmheap_graph_missing_references()) and dropped: never followed.  So
 *    is a root record whose object is missing (vmheap_graph_missing_roots());
 *    such a root stays in the root list with object VMHEAP_GRAPH_NONE.
 *  - A more-references record continues the object it names, wherever it
 *    is; one whose id no object record has counts its references as
 *    missing.
 *  - Self-references and repeated references are kept as they are.
 *  - Limits: at most VMHEAP_GRAPH_MAX_OBJECTS objects and 2^32 - 1
 *    references, the missing ones included (VMHEAP_ELIMIT beyond).
 *
 * Memory, per object of a dump with r references per object: 21 + 4 r bytes
 * for the graph (8 id, 4 class, 4 shallow size, 4 offset, 4 r targets, 1 to 2
 * of id directory), plus 4 when the dump's object ids are not in increasing
 * order (a sorted index for vmheap_graph_find()); while it is read, 20 + 8 r
 * (the references as 8-byte ids until they are resolved).  The reverse
 * references add 4 + 4 r (vmheap_graph_index_referrers()), dominators 12
 * (idom and retained size; at most 20 + 4 r more while they are computed),
 * paths 4 (and 4 more while they are computed, plus 16 bytes per costly
 * reference that first reaches an object: "Which path" below).
 *
 * Names (format 1.1): when some record of the dump names its references,
 * the graph keeps a 4-byte code per reference (4 r per object; nothing
 * when no record has names), one table entry per distinct name text (the
 * texts stay with the dump's other strings), and the shortest paths keep
 * 4 more bytes per object: the reference each object is reached by.
 */
#ifndef VMHEAP_GRAPH_H
#define VMHEAP_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap.h" /* also VMHEAP_EXPORT */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vmheap_graph vmheap_graph;

/* "No object": an id not in the dump, an unreachable object's dominator or
 * path parent, a root whose object is missing. */
#define VMHEAP_GRAPH_NONE UINT32_MAX
/* The virtual root, which points at the object of every root record: the
 * immediate dominator of an object that no single object dominates, and the
 * path parent of a root object. */
#define VMHEAP_GRAPH_ROOT (UINT32_MAX - 1u)
/* Most objects a graph holds (indices stay below VMHEAP_GRAPH_ROOT). */
#define VMHEAP_GRAPH_MAX_OBJECTS (UINT32_MAX - 2u)

/* ------------------------------------------------------------ building */

/*
 * Read the whole dump at `path` and build its graph.  On success *out is the
 * graph (free it with vmheap_graph_free()); on failure see "Failed
 * constructors" above: a damaged dump gives the reader's code and message
 * (VMHEAP_ECHECKSUM, VMHEAP_ETRUNCATED, ...), memory VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_graph_open_path(vmheap_graph **out, const char *path);

/*
 * The same from a reader that the caller opened and has not read from yet.
 * The graph reads it to its end (vmheap_reader_next() returning 0) and does
 * not keep it: the caller frees it after this returns.
 */
VMHEAP_EXPORT int vmheap_graph_read(vmheap_graph **out, vmheap_reader *r);

/* Free the graph and everything computed on it (NULL is allowed). */
VMHEAP_EXPORT void vmheap_graph_free(vmheap_graph *g);

/* Message of the last failing call on `g`, or "" if none ("out of memory"
 * for NULL, which only a failed constructor gives). */
VMHEAP_EXPORT const char *vmheap_graph_error(const vmheap_graph *g);

/* ------------------------------------------------------------ objects */

/* Number of objects (object records) in the dump. */
VMHEAP_EXPORT uint32_t vmheap_graph_object_count(const vmheap_graph *g);

/* The object id (VM address) of object `i`. */
VMHEAP_EXPORT uint64_t vmheap_graph_object_id(const vmheap_graph *g,
					      uint32_t i);

/* The class id of object `i`, as its object record gives it. */
VMHEAP_EXPORT uint64_t vmheap_graph_object_class(const vmheap_graph *g,
						 uint32_t i);

/* The shallow size in bytes of object `i`. */
VMHEAP_EXPORT uint64_t vmheap_graph_object_bytes(const vmheap_graph *g,
						 uint32_t i);

/* Sum of the shallow sizes of all objects, held at UINT64_MAX if it
 * would pass it (as retained sizes and other sums of sizes are). */
VMHEAP_EXPORT uint64_t vmheap_graph_total_bytes(const vmheap_graph *g);

/* 1 if a sum of sizes (the total, a retained size, the unreachable
 * bytes) would have passed UINT64_MAX and is held there: the dump's sizes
 * cannot all be true, and tools say so.  0 if not. */
VMHEAP_EXPORT int vmheap_graph_saturated(const vmheap_graph *g);

/* Index of the object with id `id` (the first record of that id), or
 * VMHEAP_GRAPH_NONE when no object record has it. */
VMHEAP_EXPORT uint32_t vmheap_graph_find(const vmheap_graph *g, uint64_t id);

/* ------------------------------------------------------------ classes */

/*
 * The name of class `class_id` from its class record (not NUL-terminated,
 * *len bytes), or NULL when the dump has no class record of that id.  With
 * several records of one id, the first one's name.
 */
VMHEAP_EXPORT const char *
vmheap_graph_class_name(const vmheap_graph *g, uint64_t class_id, size_t *len);

/*
 * The classes of the dump, each once: those of class records and those that
 * object records name, in order of first appearance.  Class c (below
 * vmheap_graph_class_count()) has id vmheap_graph_class_id(g, c).
 */
VMHEAP_EXPORT size_t vmheap_graph_class_count(const vmheap_graph *g);

/* The class id of class `c` (c < vmheap_graph_class_count()). */
VMHEAP_EXPORT uint64_t vmheap_graph_class_id(const vmheap_graph *g, size_t c);

/* 1 when an object record of the dump names an allocation site (format
 * 1.1, FORMAT.md section 16), else 0: a reader of the sites can skip a
 * dump whose objects have none. */
VMHEAP_EXPORT int vmheap_graph_has_sites(const vmheap_graph *g);

/* ------------------------------------------------------------ references */

/* References kept in the graph, all objects together (missing ids are
 * dropped, see vmheap_graph_missing_references()). */
VMHEAP_EXPORT uint64_t vmheap_graph_reference_count(const vmheap_graph *g);

/* References to ids that no object record has (not in the graph). */
VMHEAP_EXPORT uint64_t vmheap_graph_missing_references(const vmheap_graph *g);

/*
 * The objects that object `i` references, in record order: sets *targets to
 * an array of indices (valid while the graph lives) and returns its length.
 */
VMHEAP_EXPORT uint32_t vmheap_graph_references(const vmheap_graph *g,
					       uint32_t i,
					       const uint32_t **targets);

/*
 * Build the reverse references (4 bytes per object and per reference), for
 * vmheap_graph_referrers().  Returns 0, at once if they already exist, or
 * VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_graph_index_referrers(vmheap_graph *g);

/*
 * The objects that reference object `i` (once per reference, so an object
 * referencing `i` twice is listed twice), in increasing index order: sets
 * *sources and returns their count.  Before vmheap_graph_index_referrers()
 * succeeded, returns 0 with *sources NULL.
 */
VMHEAP_EXPORT uint32_t vmheap_graph_referrers(const vmheap_graph *g, uint32_t i,
					      const uint32_t **sources);

/* ------------------------------------------------------------ roots */

/* One root record. */
struct vmheap_graph_root {
	uint32_t object;	 /* index, VMHEAP_GRAPH_NONE if missing */
	uint64_t object_id;	 /* as the record gives it */
	uint64_t kind_string_id; /* as the record gives it */
	const char *kind; /* NUL-terminated text of that string record, or
			     NULL when the dump has none of that id */
	uint64_t name_string_id; /* the root's name (format 1.1), 0: none;
				    its text: vmheap_graph_root_name() */
};

/* Number of root records, in file order. */
VMHEAP_EXPORT size_t vmheap_graph_root_count(const vmheap_graph *g);

/* Root record `k` (k < vmheap_graph_root_count()), valid while g lives. */
VMHEAP_EXPORT const struct vmheap_graph_root *
vmheap_graph_root(const vmheap_graph *g, size_t k);

/* Root records whose object id no object record has. */
VMHEAP_EXPORT uint64_t vmheap_graph_missing_roots(const vmheap_graph *g);

/*
 * The name of root record `k` (format 1.1: "$audit" for a global variable,
 * a thread's description for a stack root): its string record's text
 * (NUL-terminated, *len bytes when len is not NULL), or NULL when the root
 * has no name or the dump has no string record of its id.
 */
VMHEAP_EXPORT const char *vmheap_graph_root_name(const vmheap_graph *g,
						 size_t k, size_t *len);

/* ------------------------------------------------------------ names */

/*
 * Names of references (format 1.1, FORMAT.md "Edge names"): an instance
 * variable "@store", a constant "::STORE", a hash key '["k17"]', a field
 * ".next", "key", or an element index.  Text conventions are FORMAT.md's;
 * the graph keeps them as the dump gives them.
 */
enum vmheap_graph_name_type {
	VMHEAP_GRAPH_NAME_NONE,	   /* the reference has no name */
	VMHEAP_GRAPH_NAME_TEXT,	   /* text, len */
	VMHEAP_GRAPH_NAME_INDEX,   /* index: an element index */
	VMHEAP_GRAPH_NAME_UNKNOWN, /* string_id names a string that the dump
				      does not have */
};

struct vmheap_graph_name {
	enum vmheap_graph_name_type type;
	const char *text; /* NUL-terminated, valid while the graph lives */
	size_t len;	  /* bytes of text */
	uint64_t index;
	uint64_t string_id; /* TEXT and UNKNOWN */
};

/* 1 when some reference of the dump has a name (the graph keeps them),
 * else 0. */
VMHEAP_EXPORT int vmheap_graph_has_edge_names(const vmheap_graph *g);

/*
 * The name of reference `k` of object `i` (k below the count that
 * vmheap_graph_references() gives, in the same order): fills *out and
 * returns out->type.  Missing references are not in the graph, and
 * neither are their names.
 */
VMHEAP_EXPORT int vmheap_graph_reference_name(const vmheap_graph *g,
					      uint32_t i, uint32_t k,
					      struct vmheap_graph_name *out);

/*
 * The name of the first reference from object `from` to object `to` (the
 * one a shortest path takes): fills *out and returns out->type, which is
 * VMHEAP_GRAPH_NAME_NONE when that reference has no name or `from` does
 * not reference `to`.  Time linear in the references of `from`.
 */
VMHEAP_EXPORT int vmheap_graph_edge_name(const vmheap_graph *g, uint32_t from,
					 uint32_t to,
					 struct vmheap_graph_name *out);

/* ------------------------------------------------------------ dominators */

/*
 * Compute the dominator tree of the graph from the virtual root (which
 * points at the object of every root record) and the retained size of every
 * object: the sum of the shallow sizes of the objects it dominates, itself
 * included, which is what would become unreachable without it.  Iterative
 * (semi-NCA, no recursion: any depth works).  Returns 0, at once if already
 * computed, or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_graph_dominators(vmheap_graph *g);

/*
 * After vmheap_graph_dominators(): the immediate dominator of object `i`,
 * VMHEAP_GRAPH_ROOT when only the virtual root dominates it (a root object,
 * or one reached from several roots), VMHEAP_GRAPH_NONE when no root reaches
 * it.  Before it: VMHEAP_GRAPH_NONE.
 */
VMHEAP_EXPORT uint32_t vmheap_graph_idom(const vmheap_graph *g, uint32_t i);

/* After vmheap_graph_dominators(): the retained size of object `i` in
 * bytes, 0 for an object that no root reaches (and before). */
VMHEAP_EXPORT uint64_t vmheap_graph_retained_bytes(const vmheap_graph *g,
						   uint32_t i);

/*
 * After vmheap_graph_dominators() or vmheap_graph_shortest_paths(): the
 * objects that no root reaches, their number in *count and the sum of their
 * shallow sizes in *bytes (either pointer may be NULL).  They belong to no
 * dominator tree and to no path.  Returns 0, or VMHEAP_ESTATE before both.
 */
VMHEAP_EXPORT int vmheap_graph_unreachable(const vmheap_graph *g,
					   uint64_t *count, uint64_t *bytes);

/*
 * The retained bytes of every class (computing the dominators first if
 * needed): retained[c], for class c as numbered by vmheap_graph_class_id(),
 * is the sum of the retained sizes of the instances of c that no other
 * instance of c dominates.  So no byte is counted twice for one class: it
 * is what the instances of c keep alive on their own, together (objects
 * that two instances of c both reach, and neither dominates, are not in
 * it).  `retained` has vmheap_graph_class_count() elements.  The same as
 * vmheap_graph_group_retained() (vmheap_graph_query.h) with each class a
 * group of its own.  Returns 0 or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_graph_class_retained(vmheap_graph *g,
					      uint64_t *retained);

/* ------------------------------------------------------------ paths */

/*
 * Which path of an object the graph keeps (FORMAT.md "Stack and internal
 * references", man vmheap-path "WHICH PATH").  A step of a path is
 * costly when it comes from a thread's stack (a reference named "stack"
 * or "stack of ...", or a root record of a stack kind: stack,
 * machine_context, java_frame, jni_local, native_stack) or is a
 * reference held by a VM-internal object (a class name in angle
 * brackets: "<imemo:env>", "<hidden-array>") that has no name of its own
 * (none, an element index or hash key): an environment's "local messages
 * of <main> (app.rb)" is a name a person can act on, and is free.
 *
 *  VMHEAP_GRAPH_PATHS_EXPLAINING  (the default) the path with the fewest
 *      costly steps, then the fewest references: a path of named
 *      constants, instance variables and hash keys wins over one through
 *      a thread's stack, even when it is longer;
 *  VMHEAP_GRAPH_PATHS_SHORTEST    the path with the fewest references
 *      (a plain breadth-first search; vmheap-path --shortest).
 *
 * Both break ties by the earliest root record, then the earliest
 * reference.  In a dump without stack references, stack roots and
 * internal classes both rules give the same paths.
 */
enum vmheap_graph_path_rule {
	VMHEAP_GRAPH_PATHS_EXPLAINING = 0,
	VMHEAP_GRAPH_PATHS_SHORTEST = 1,
};

/*
 * Choose the rule of the paths, before they are computed.  Returns 0
 * (also when the paths exist and follow that rule), VMHEAP_EINVAL for an
 * unknown rule, VMHEAP_ESTATE when the paths were computed by the other.
 */
VMHEAP_EXPORT int vmheap_graph_set_path_rule(vmheap_graph *g, int rule);

/*
 * Compute the path from the roots to every reachable object, by the
 * graph's rule (above): a search from the virtual root, whose edges are
 * the root records in file order, then each object's references in
 * record order (so ties go to the earliest root record and the earliest
 * reference).  Linear in objects and references, whatever the paths'
 * lengths.  Returns 0, at once if already computed, or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_graph_shortest_paths(vmheap_graph *g);

/*
 * The same search, stopped as soon as it has reached every one of
 * objects[0..n) (indices below vmheap_graph_object_count()): when a few
 * objects are asked about (one class's instances, one address), the rest
 * of the heap is not searched.  Every object the search reached, those
 * and the objects on their paths among them, has the path that
 * vmheap_graph_shortest_paths() gives it (an object is final when first
 * reached); the path functions answer for any other object as for an
 * unreachable one, and vmheap_graph_unreachable() stays VMHEAP_ESTATE,
 * until vmheap_graph_shortest_paths() searches to the end (it does so
 * then, from the start).  Returns 0, at once if the paths of all of them
 * are known, or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_graph_shortest_paths_to(vmheap_graph *g,
						 const uint32_t *objects,
						 size_t n);

/* 1 when root record k is of a stack kind (above), else 0. */
VMHEAP_EXPORT int vmheap_graph_root_is_stack(const vmheap_graph *g, size_t k);

/* 1 when reference k of object i (as vmheap_graph_references() orders
 * them) comes from a thread's stack: its name is "stack" or starts with
 * "stack of ". */
VMHEAP_EXPORT int vmheap_graph_reference_is_stack(const vmheap_graph *g,
						 uint32_t i, uint32_t k);

/* 1 when object i is VM-internal: its class record's name starts with
 * '<' ("<imemo:env>", "<hidden-array>"). */
VMHEAP_EXPORT int vmheap_graph_object_is_internal(const vmheap_graph *g,
						 uint32_t i);

/* Kinds of references that vmheap_graph_exclude() drops. */
#define VMHEAP_GRAPH_EXCLUDE_STACK 0x1u	   /* stack references and roots */
#define VMHEAP_GRAPH_EXCLUDE_INTERNAL 0x2u /* held by internal objects */

/*
 * Drop references from the graph, before anything is computed on it (the
 * tools' --exclude): with VMHEAP_GRAPH_EXCLUDE_STACK every reference from
 * a thread's stack and every root record of a stack kind; with
 * VMHEAP_GRAPH_EXCLUDE_INTERNAL every reference held by a VM-internal
 * object.  The objects stay; those that only dropped references reached
 * become unreachable.  Returns 0, VMHEAP_EINVAL for unknown kind bits,
 * or VMHEAP_ESTATE once referrers, dominators or paths were computed.
 */
VMHEAP_EXPORT int vmheap_graph_exclude(vmheap_graph *g, unsigned kinds);

/*
 * Parse a comma-separated list of kinds ("stack", "internal",
 * "stack,internal") into VMHEAP_GRAPH_EXCLUDE_... bits.  Returns 0, or
 * VMHEAP_EINVAL for an empty list, an empty item or an unknown kind.
 */
VMHEAP_EXPORT int vmheap_graph_parse_exclude(const char *list,
					     unsigned *kinds);

/*
 * After vmheap_graph_shortest_paths(): the object before `i` on its
 * shortest path, VMHEAP_GRAPH_ROOT if `i` is the object of a root record,
 * VMHEAP_GRAPH_NONE if no root reaches `i` (and before).
 */
VMHEAP_EXPORT uint32_t vmheap_graph_path_parent(const vmheap_graph *g,
						uint32_t i);

/*
 * After vmheap_graph_shortest_paths(): the path of object `i`, root object
 * first and `i` last.  Writes the first min(cap, length) indices of it to
 * `path` (NULL with cap 0 just counts) and returns the path's length in objects
 * (1 for a root object), or VMHEAP_ESTATE before the paths were computed, or 0
 * when no root reaches `i`.  *root, if not NULL, is set to the index of the
 * root record the path starts from (the first record of the path's root
 * object).
 */
VMHEAP_EXPORT int64_t vmheap_graph_path(const vmheap_graph *g, uint32_t i,
					uint32_t *path, size_t cap,
					size_t *root);

/*
 * After vmheap_graph_shortest_paths(): the name of the reference by which
 * the shortest path of `i` reaches it from vmheap_graph_path_parent(g, i)
 * (the first reference from that parent to `i`).  Fills *out and returns
 * out->type: VMHEAP_GRAPH_NAME_NONE for a root object, an unreachable
 * object, before the paths, and in a dump without names.  Constant time.
 */
VMHEAP_EXPORT int vmheap_graph_path_name(const vmheap_graph *g, uint32_t i,
					 struct vmheap_graph_name *out);

/* Instances of one class whose paths have the same shape: the same root
 * kind and name, and the same sequence of steps from the root object down
 * to the instance, a step being a class and the name of the reference
 * that reaches it.  An element's name (an index, or a text that starts
 * with '[': a hash key) counts as "an element" in a shape: the 100,000
 * entries of one Hash are one shape, not 100,000; the group's example
 * path shows its own key.  A run of objects of one class reached by one
 * name (below the root object) is one step: a linked list of 100,000
 * nodes, each reached by "@next", is the step "Node by @next" whatever
 * its length, so that its nodes are one shape; the example's path (from
 * vmheap_graph_path()) has all its objects. */
struct vmheap_graph_path_group {
	uint64_t count;		 /* instances */
	uint64_t bytes;		 /* sum of their shallow sizes */
	uint32_t example;	 /* the instance of lowest index */
	size_t root;		 /* root record of the example's path */
	uint64_t kind_string_id; /* kind of that root record */
	size_t length;		 /* steps in the shape (objects on a path,
				    a run counting once) */
	const uint64_t *classes; /* class ids of the steps, root object's
				    first, the instance's class last */
};

/* The paths of every instance of a class, merged by shape. */
struct vmheap_graph_class_paths {
	uint64_t class_id;
	uint64_t instances;	    /* objects of that class */
	uint64_t unreachable;	    /* of them, reached by no root */
	uint64_t unreachable_bytes; /* their shallow sizes */
	size_t group_count;
	/* most instances first; ties: more bytes, then lower example index */
	struct vmheap_graph_path_group *groups;
};

/*
 * Merge the shortest paths of every object of class `class_id` by shape
 * (computing the shortest paths first if needed).  On success *out is the
 * result, freed with vmheap_graph_class_paths_free(); a class without
 * instances gives zero groups and instances 0.  Returns 0 or VMHEAP_ENOMEM
 * (then *out is NULL).
 */
VMHEAP_EXPORT int
vmheap_graph_class_paths(vmheap_graph *g, uint64_t class_id,
			 struct vmheap_graph_class_paths **out);

/* Free a result of vmheap_graph_class_paths() (NULL is allowed). */
VMHEAP_EXPORT void
vmheap_graph_class_paths_free(struct vmheap_graph_class_paths *paths);

#ifdef __cplusplus
}
#endif

#endif /* VMHEAP_GRAPH_H */
