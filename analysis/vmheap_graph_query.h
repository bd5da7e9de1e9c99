/*
 * vmheap_graph_query.h - what the graph tools ask of a heap graph
 * (vmheap_graph.h) beyond the graph itself: the class table and its labels,
 * classes found by label or by the nearest labels, the shortest paths of
 * any set of objects merged by shape, and retained bytes per group of
 * classes.
 *
 * Errors: vmheap.h's convention (the one of every vmheap header), as in
 * vmheap_graph.h: functions that can fail return 0 (or a documented count)
 * or a negative VMHEAP_E... code, with the message in the graph's
 * vmheap_graph_error(); the library never prints nor exits.
 */
#ifndef VMHEAP_GRAPH_QUERY_H
#define VMHEAP_GRAPH_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ classes */

/*
 * The class table is vmheap_graph.h's: vmheap_graph_class_count() classes,
 * class k with id vmheap_graph_class_id(g, k).
 */

/* The position in the class table of object `i`'s class. */
VMHEAP_EXPORT size_t vmheap_graph_object_class_index(const vmheap_graph *g,
						     uint32_t i);

/*
 * The label of class `class_id` as the tools print it, the census's display
 * name (vmheap_analysis.h): its class record's name (up to its first NUL
 * byte), "<anonymous class>" for an empty name, "<unknown class 0x...>"
 * without a class record.  malloc'd, NUL-terminated; NULL when out of
 * memory.
 */
VMHEAP_EXPORT char *vmheap_graph_class_label(const vmheap_graph *g,
					     uint64_t class_id);

/*
 * The class that object `i` is itself, when a class record names it as its
 * class object (FORMAT.md, "Class objects": a Ruby Class or Module, a
 * java.lang.Class): 1 and its id in *class_id; 0 for any other object.
 */
VMHEAP_EXPORT int vmheap_graph_object_as_class(const vmheap_graph *g,
					       uint32_t i, uint64_t *class_id);

/*
 * The label of object `i` where the tools print its class: for a class
 * object (vmheap_graph_object_as_class) its class's label and the label
 * of the class it is, "Class Service", "Module Billing", or only the
 * latter when that already says what it is ("#<Class:0x...>",
 * "#<Class:Service>"); else the label of its class.  malloc'd; NULL when
 * out of memory.
 */
VMHEAP_EXPORT char *vmheap_graph_object_label(const vmheap_graph *g,
					      uint32_t i);

/*
 * The classes labelled `label` (several class ids may share one): writes
 * the first `cap` of their positions in the class table to `ks` (NULL with
 * cap 0 just counts) and returns how many there are, or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int64_t vmheap_graph_classes_labelled(const vmheap_graph *g,
						    const char *label,
						    size_t *ks, size_t cap);

/*
 * The class labels nearest to `label` by edit distance (Levenshtein over
 * bytes, ignoring ASCII case; only the first 256 bytes of each label
 * count), each label once: writes up to `cap` class-table positions to
 * `ks`, nearest first, ties in label order, and returns how many, or
 * VMHEAP_ENOMEM.  Labels farther than max(3, strlen(label) / 2) edits are
 * left out (nothing near is no suggestion).
 */
VMHEAP_EXPORT int64_t vmheap_graph_nearest_classes(const vmheap_graph *g,
						   const char *label,
						   size_t *ks, size_t cap);

/* ------------------------------------------------------------ paths */

/*
 * Merge the shortest paths of the objects `objects[0..n)` by shape (root
 * kind and name, the classes and reference names from the root object
 * down to the object: struct vmheap_graph_path_group), as
 * vmheap_graph_class_paths() does for one class, computing the shortest
 * paths first if needed (all of them, unless a search of
 * vmheap_graph_shortest_paths_to() already reached these objects: then
 * they are used as they are).  The objects may be of any classes; an object
 * listed twice counts twice.  On success *out is the result (class_id 0,
 * instances n), freed with vmheap_graph_object_paths_free(); returns 0 or
 * VMHEAP_ENOMEM (then *out is NULL).  Time and memory: each object on the
 * paths is visited once (8 bytes per object of the graph while it runs),
 * however long the paths.
 */
VMHEAP_EXPORT int
vmheap_graph_object_paths(vmheap_graph *g, const uint32_t *objects, size_t n,
			  struct vmheap_graph_class_paths **out);

/* Free a result of vmheap_graph_object_paths() (NULL is allowed). */
VMHEAP_EXPORT void
vmheap_graph_object_paths_free(struct vmheap_graph_class_paths *paths);

/*
 * Where a thread's stack also holds an object whose path goes elsewhere
 * ("held by constant X; also from the stack of thread 2").
 */
struct vmheap_graph_stack_holder {
	uint32_t object;    /* the object on the path that the stack holds */
	uint32_t holder;    /* the object whose stack reference holds it, or
			       VMHEAP_GRAPH_ROOT for a root record of a stack
			       kind */
	uint32_t reference; /* that reference, k of vmheap_graph_references(
			       holder), or the root record's index */
};

/*
 * After vmheap_graph_shortest_paths(): when the path of object `i` has no
 * stack step but a stack reference or a stack root (vmheap_graph.h,
 * "Which path") holds an object on it, sets *out to the one nearest to
 * `i` (i itself first; ties: the first holder in file order, references
 * before root records) and returns 1; else 0 (also for an unreachable
 * object).  VMHEAP_ESTATE before the paths, VMHEAP_ENOMEM.  Time linear
 * in the objects and references; 4 bytes per object while it runs.
 */
VMHEAP_EXPORT int
vmheap_graph_stack_holder(const vmheap_graph *g, uint32_t i,
			  struct vmheap_graph_stack_holder *out);

/* ------------------------------------------------------------ retainers */

/* The references to a set of objects from holders of one class by one
 * name (every element index and hash key counting as one name), or from
 * root records of one kind. */
struct vmheap_graph_retainer_group {
	uint32_t holder_class;	  /* class table position, or
				     VMHEAP_GRAPH_ROOT: root records */
	uint64_t holder_class_id; /* its class id (0 for root records) */
	uint64_t key;		  /* the group's name key (internal) */
	struct vmheap_graph_name name; /* the example reference's name */
	int element;	     /* 1: the name is any element or hash key */
	int stack;	     /* 1: references from a thread's stack (or
				stack roots) */
	int internal;	     /* 1: the holders are VM-internal objects */
	uint64_t references; /* references (root records) to the set */
	uint64_t holders;    /* distinct holders among them */
	uint32_t example;    /* the first holder in file order, or the
				first root record's index */
	uint32_t example_reference; /* its reference, k of
				       vmheap_graph_references(example) */
	uint32_t example_target;    /* the object it references */
};

struct vmheap_graph_retainers {
	uint64_t targets;    /* distinct objects of the set */
	uint64_t references; /* references to them from objects */
	uint64_t roots;	     /* root records of them */
	size_t group_count;
	/* most references first; ties: more holders, lower example */
	struct vmheap_graph_retainer_group *groups;
};

/*
 * Every reference to the objects `objects[0..n)` (an object listed twice
 * counts once), and every root record of them, grouped by the holder's
 * class and the reference's name, or by root kind: DevTools' Retainers.
 * References among the objects count too (a list's nodes hold each
 * other).  On success *out is the result, freed with
 * vmheap_graph_retainers_free(); returns 0 or VMHEAP_ENOMEM (then *out is
 * NULL).  Time linear in objects and references; 1 byte per object while
 * it runs.
 */
VMHEAP_EXPORT int vmheap_graph_retainers(vmheap_graph *g,
					 const uint32_t *objects, size_t n,
					 struct vmheap_graph_retainers **out);

/* Free a result of vmheap_graph_retainers() (NULL is allowed). */
VMHEAP_EXPORT void
vmheap_graph_retainers_free(struct vmheap_graph_retainers *r);

/* ------------------------------------------------------------ retained */

/*
 * Retained bytes per group of classes, computing the dominators first if
 * needed.  group[k] is the group of class k of the class table (k <
 * vmheap_graph_class_count()), below `ngroups`.  out[0..ngroups) is set
 * to: for each group, the sum of the retained sizes of its instances that
 * no other instance of the same group dominates.  So an instance inside
 * the retained set of another of its group counts once, in the outer one:
 * out[x] is the size of the union of the retained sets of the instances
 * of group x.  (An object that two instances hold together, and neither
 * dominates alone, is in no retained set: it is not counted.)  Time
 * linear in the objects; 8 to 16 bytes per object while it runs.
 * Returns 0 or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_graph_group_retained(vmheap_graph *g,
					      const uint32_t *group,
					      size_t ngroups, uint64_t *out);

/* ------------------------------------------------------ classes by label */

/*
 * A mask over the class table (vmheap_graph_class_count() bytes): 1 for
 * the classes labelled `label`, their number in *nclasses.  malloc'd;
 * NULL when out of memory.
 */
VMHEAP_EXPORT unsigned char *vmheap_graph_label_mask(const vmheap_graph *g,
						     const char *label,
						     size_t *nclasses);

/*
 * The objects of every class labelled `label`, in index order: *objects
 * (malloc'd, NULL when none) and *n.  Returns 0 or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_graph_instances_of(const vmheap_graph *g,
					    const char *label,
					    uint32_t **objects, size_t *n);

/*
 * Group the class table of `g` by label (class ids that share a name are
 * one class for the tools): group[k] (vmheap_graph_class_count() entries,
 * the caller's) is set to the group of class k; *names to the groups'
 * labels in bytewise order (malloc'd, each malloc'd: free them and the
 * array), *ngroups to their number.  Returns 0 or VMHEAP_ENOMEM.
 */
VMHEAP_EXPORT int vmheap_graph_label_groups(const vmheap_graph *g,
					    uint32_t *group, char ***names,
					    size_t *ngroups);

#ifdef __cplusplus
}
#endif

#endif /* VMHEAP_GRAPH_QUERY_H */
