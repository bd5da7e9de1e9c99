/*
 * identity-internal.h - the state of vmheap_identity_diff's passes
 * (identity.c), shared with identity_results.c, which makes the result's
 * rows from it.  Not installed.
 */
#ifndef VMHEAP_IDENTITY_INTERNAL_H
#define VMHEAP_IDENTITY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "analysis-internal.h"
#include "vmheap_analysis.h"

/* Tags of the pair tables' keys (key, key2): pass B counts objects and
 * bytes per (NEW class id, OLD class id); pass R counts references per
 * (target class index, referrer class id or root kind string id). */
#define PAIR_PRESENT 1u /* key2 is the OLD class id */
#define PAIR_ROOT 2u	/* key2 is a root's kind string id */

enum pass { PASS_OLD, PASS_NEW, PASS_TARGETS, PASS_REFS };

struct pending_ref {
	uint64_t referrer; /* id of an object continued in MORE_REFS */
	uint64_t tidx;
	uint64_t count;
};

struct string_rec {
	uint64_t id;
	char *text;
};

/* An object waiting for its table lookup (whose slot is being fetched). */
struct pending_obj {
	uint64_t id, class_id, bytes;
};

#define LOOKAHEAD 16

struct id_class {
	uint64_t id, class_id;
};

struct thread_state {
	vmheap_block_cursor *cur;
	struct id_class *olds; /* A: OLD's objects */
	size_t nolds, olds_cap;
	struct pending_obj ring[LOOKAHEAD]; /* B, T: lookups in flight */
	unsigned ring_head, ring_count;
	struct vmheap_idmap ids; /* T: id -> tidx */
	struct vmheap_map pairs; /* B: classes; R: (tidx, referrer) */
	struct vmheap_idmap big; /* R: id -> class of objects whose
			    references may continue */
	struct pending_ref *pending;
	size_t npending, pending_cap;
	struct string_rec *strings;
	size_t nstrings, strings_cap;
	char pad[64];
};

struct ident {
	const struct vmheap_identity_options *o;
	enum pass pass;
	unsigned threads;
	struct thread_state *ts;
	vmheap_census *census;		   /* fed in A and B */
	struct vmheap_idmap old_ids;	   /* after A: OLD id -> class id */
	struct vmheap_map targets_by_pair; /* T: (new, old, flag) -> tidx */
	struct vmheap_idmap targets;	   /* R: target id -> tidx */
	uint64_t *filter; /* R: one bit per hashed target id (a Bloom filter
			     with one hash): most references miss it, and
			     it fits in a cache where the table does not */
	uint64_t filter_mask;
};

/* The new objects per class name, from pass B's pairs, merged by name
 * and sorted as o->sort says, into res->news (and res->new_objects,
 * res->new_bytes).  0, or VMHEAP_ENOMEM. */
int vmheap_identity_collect_news(const struct vmheap_identity_options *o,
				 struct ident *x,
				 struct vmheap_identity_result *res);

/* Map every new-object pair of the first ntop classes of res->news to
 * that class's index (x->targets_by_pair), releasing the pairs.  0, or
 * VMHEAP_ENOMEM. */
int vmheap_identity_target_pairs(struct ident *x,
				 struct vmheap_identity_result *res,
				 size_t ntop);

/* The retainers of each of the first ntop classes, from pass R's counts,
 * into res->retained.  0, or VMHEAP_ENOMEM. */
int vmheap_identity_collect_retainers(struct ident *x,
				      struct vmheap_identity_result *res,
				      size_t ntop);

#endif /* VMHEAP_IDENTITY_INTERNAL_H */
