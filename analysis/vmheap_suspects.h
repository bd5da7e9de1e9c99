/*
 * vmheap_suspects.h - leak suspects: what two heap graphs of one VM say
 * holds the growth between them.
 *
 * The new objects of NEW are those whose id OLD lacks, or holds with
 * another class name (the rule of vmheap_identity_diff).  They are grouped
 * by their owner: the top-most new object on their dominator chain in NEW
 * (the object itself when no new object dominates it).  A leaked request
 * holding strings and hashes is then one owner, and its strings are not
 * suspects of their own.  For each class of owners (by label):
 *
 *   held bytes   the shallow sizes of the new objects its owners dominate,
 *                the owners included: their retained size restricted to
 *                new objects;
 *   growth       instances in NEW less instances in OLD;
 *   share        min(1, max(0, growth - inside) / owners): the part of the
 *                owners that the class's growth accounts for (new owners
 *                that took the place of as many freed ones are churn);
 *   inside       the new instances of the class that owners hold (not
 *                owners themselves), each weighted by its owner class's
 *                share counted without `inside`: growth that a growing
 *                owner holds is that owner's, not its parts' own;
 *   ranked bytes held bytes x share.
 *
 * Suspects are the classes whose ranked bytes reach the threshold,
 * max(1 KiB, 1% of the reachable new bytes), most ranked bytes first.
 * vmheap-diff --suspects and the class diff's section print them; the
 * report shows them too.
 *
 *	struct vmheap_suspects *s;
 *	if (vmheap_suspects_rank(old_g, new_g, NULL, &s) < 0)
 *		... vmheap_graph_error(new_g) ...
 *	for (size_t k = 0; k < s->shown; k++)
 *		... s->objects.names[s->rows[k].name], s->rows[k].held_bytes
 *	vmheap_suspects_free(s);
 *
 * Errors: vmheap.h's convention (the one of every vmheap header), as in
 * vmheap_graph.h: functions that can fail return 0 or a negative
 * VMHEAP_E... code, with the message in vmheap_graph_error() of the graph
 * named; the library never prints nor exits; the graphs are used by one
 * thread at a time.
 */
#ifndef VMHEAP_SUSPECTS_H
#define VMHEAP_SUSPECTS_H

#include <stddef.h>
#include <stdint.h>

#include "vmheap_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ new objects */

/* NEW's classes grouped by label and its new objects marked. */
struct vmheap_new_objects {
	char **names;	 /* NEW's class labels in bytewise order, each once */
	size_t nnames;
	uint32_t *group; /* class k of NEW's class table is names[group[k]] */
	/* object i of NEW: 1 + the group of its class when it is new (OLD
	 * has no object of its id, or one of another class label), else 0 */
	uint32_t *mark;
};

/*
 * Group NEW's classes by label and mark its new objects against OLD (both
 * graphs read from dumps of one VM; neither is changed but for NEW's error
 * message).  Fills *out, whose arrays are malloc'd and released with
 * vmheap_new_objects_release().  Returns 0 or VMHEAP_ENOMEM, with the
 * message in vmheap_graph_error(new_g); *out is then empty (nothing to
 * release, releasing it is harmless).  Time linear in the objects of both
 * graphs (a lookup of each id of NEW in OLD); 4 bytes per object of NEW.
 */
VMHEAP_EXPORT int vmheap_new_objects_mark(const vmheap_graph *old_g,
					  vmheap_graph *new_g,
					  struct vmheap_new_objects *out);

/* Free what vmheap_new_objects_mark() filled and empty *nw (NULL and an
 * empty one are allowed). */
VMHEAP_EXPORT void vmheap_new_objects_release(struct vmheap_new_objects *nw);

/* ------------------------------------------------------------ suspects */

/* Classes of held new objects kept per suspect shown. */
#define VMHEAP_SUSPECT_HELD_CLASSES 3

/* New objects of one class that the owners of a suspect hold. */
struct vmheap_suspect_held {
	size_t name; /* label: objects.names[name] */
	uint64_t count, bytes;
};

/* One class (label) of owners. */
struct vmheap_suspect {
	size_t name;	 /* label: objects.names[name] */
	uint64_t owners; /* new objects of the label that own (reachable) */
	int64_t growth;	 /* instances in NEW less instances in OLD */
	double inside;	 /* its new instances inside owners, weighted */
	uint64_t held_objects, held_bytes; /* owners and what they hold */
	uint64_t ranked_bytes;		   /* held_bytes x share */
	/* Filled for the rows shown (below `shown`) only: */
	/* the classes the owners hold (owners left out), most objects
	 * first, held_count of them; held_classes: how many in all */
	struct vmheap_suspect_held held[VMHEAP_SUSPECT_HELD_CLASSES];
	size_t held_count, held_classes;
	/* the owners' shortest paths in NEW merged by shape
	 * (vmheap_graph_object_paths); NULL beyond `shown` */
	struct vmheap_graph_class_paths *paths;
};

struct vmheap_suspects_options {
	size_t top; /* rows with held classes and paths; 0: 10 */
};

#define VMHEAP_SUSPECTS_OPTIONS_INIT {0}

struct vmheap_suspects {
	/* NEW's labels and new objects; rows[].name index objects.names */
	struct vmheap_new_objects objects;
	uint64_t new_objects, new_bytes;	 /* reachable new ones */
	uint64_t unreachable, unreachable_bytes; /* new ones no root reaches */
	uint64_t owners;			 /* reachable owners */
	size_t owner_classes;			 /* labels with owners */
	uint64_t threshold;			 /* ranked bytes to be a suspect */
	/* one row per label (objects.nnames), most ranked bytes first (then
	 * held bytes, then label); the first nrows are the suspects, the
	 * first shown = min(nrows, top) of them have held[] and paths */
	struct vmheap_suspect *rows;
	size_t nrows, shown;
};

/*
 * Rank the leak suspects of NEW against OLD (opt NULL: the defaults).
 * Computes NEW's dominators and shortest paths if needed (they stay in
 * new_g, as vmheap_graph_dominators() leaves them); OLD is only read.
 * On success *out is the result, freed with vmheap_suspects_free(); the
 * paths in it refer to new_g, which must outlive it for their objects and
 * class ids to be read.  Returns 0 or VMHEAP_ENOMEM (then *out is NULL),
 * with the message in vmheap_graph_error(new_g).  Time linear in the
 * objects and references of NEW, plus a lookup per object of NEW in OLD.
 */
VMHEAP_EXPORT int vmheap_suspects_rank(const vmheap_graph *old_g,
				       vmheap_graph *new_g,
				       const struct vmheap_suspects_options *opt,
				       struct vmheap_suspects **out);

/* Free a result of vmheap_suspects_rank() (NULL is allowed). */
VMHEAP_EXPORT void vmheap_suspects_free(struct vmheap_suspects *s);

#ifdef __cplusplus
}
#endif

#endif /* VMHEAP_SUSPECTS_H */
