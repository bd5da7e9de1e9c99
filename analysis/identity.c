/*
 * identity.c - objects matched by identity (object id plus class name)
 * between two dumps, and who retains the new ones (vmheap_identity_diff,
 * part of libvmheap-analysis; vmheap-diff --objects and --retainers).
 *
 * Passes, each one streaming read decoded on the scan's threads:
 *
 *   A  OLD: census, and the (id, class id) of every object, appended to
 *      one list per thread; then one table object id -> class id is built
 *      from the lists, sized for them at once (this is the memory that
 *      grows with the number of objects: 16 bytes per OLD object in the
 *      lists while the table of 16-byte slots, at most three quarters
 *      full, is built; the lists are then freed);
 *   B  NEW: census, and per (NEW class id, OLD class id or none) the
 *      objects and bytes.  Table lookups are issued a few objects ahead
 *      (prefetch), so that the random accesses overlap.  After B the class
 * names of both dumps are known: an object is new when its id is absent from
 * OLD, or present with another class name.
 *
 * For retainers NEW is then read twice more (so NEW must be a regular file):
 *
 *   T  collect the ids of the new objects of the top classes;
 *   R  scan every reference (and root) of NEW into that set, counting per
 *      (target class, referrer class).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis-internal.h"
#include "identity-internal.h"
#include "vmheap_analysis.h"

static inline int old_class(const struct ident *x, uint64_t id, uint64_t *cid)
{
	return vmheap_idmap_get(&x->old_ids, id, cid);
}

static int add_old(struct thread_state *ts, uint64_t id, uint64_t class_id)
{
	if (ts->nolds == ts->olds_cap) {
		struct id_class *g = vmheap_array_grow(ts->olds, &ts->olds_cap,
						       sizeof(*g), 4096);
		if (!g)
			return VMHEAP_ENOMEM;
		ts->olds = g;
	}
	ts->olds[ts->nolds++] = (struct id_class){id, class_id};
	return 0;
}

/* After A: one table of every OLD object, built from the lists. */
static int build_old_table(struct ident *x)
{
	size_t total = 0;
	for (unsigned t = 0; t < x->threads; t++)
		total += x->ts[t].nolds;
	if (vmheap_idmap_reserve(&x->old_ids, total) < 0)
		return VMHEAP_ENOMEM;
	for (unsigned t = 0; t < x->threads; t++) {
		struct thread_state *ts = &x->ts[t];
		for (size_t i = 0; i < ts->nolds; i++) {
			if (i + LOOKAHEAD < ts->nolds)
				vmheap_idmap_prefetch(
				    &x->old_ids, ts->olds[i + LOOKAHEAD].id);
			if (vmheap_idmap_put(&x->old_ids, ts->olds[i].id,
					     ts->olds[i].class_id) < 0)
				return VMHEAP_ENOMEM;
		}
		free(ts->olds);
		ts->olds = NULL;
		ts->nolds = ts->olds_cap = 0;
	}
	return 0;
}

/* B and T: the object's table lookup has been prefetched; do it now. */
static int classify(struct ident *x, struct thread_state *ts,
		    const struct pending_obj *o)
{
	uint64_t ocid = 0;
	int found = old_class(x, o->id, &ocid);

	if (x->pass == PASS_NEW) {
		struct vmheap_map_slot *s = vmheap_map_upsert(
		    &ts->pairs, o->class_id, ocid, found ? PAIR_PRESENT : 0);
		if (!s)
			return VMHEAP_ENOMEM;
		s->a++; /* objects */
		s->b += o->bytes;
		return 0;
	}
	const struct vmheap_map_slot *ps = vmheap_map_find(
	    &x->targets_by_pair, o->class_id, ocid, found ? PAIR_PRESENT : 0);
	return ps ? vmheap_idmap_put(&ts->ids, o->id, ps->a) : 0;
}

/* Queue an object for classify(), starting its lookup. */
static int lookahead(struct ident *x, struct thread_state *ts,
		     const struct vmheap_record *rec)
{
	if (ts->ring_count == LOOKAHEAD) {
		int rc = classify(x, ts, &ts->ring[ts->ring_head]);
		if (rc < 0)
			return rc;
		ts->ring_head = (ts->ring_head + 1) % LOOKAHEAD;
		ts->ring_count--;
	}
	vmheap_idmap_prefetch(&x->old_ids, rec->u.object.id);
	ts->ring[(ts->ring_head + ts->ring_count) % LOOKAHEAD] =
	    (struct pending_obj){rec->u.object.id, rec->u.object.class_id,
				 rec->u.object.bytes};
	ts->ring_count++;
	return 0;
}

static int drain(struct ident *x, struct thread_state *ts)
{
	while (ts->ring_count) {
		int rc = classify(x, ts, &ts->ring[ts->ring_head]);
		if (rc < 0)
			return rc;
		ts->ring_head = (ts->ring_head + 1) % LOOKAHEAD;
		ts->ring_count--;
	}
	return 0;
}

static inline uint64_t filter_bit(const struct ident *x, uint64_t id)
{
	return (id * 0x9E3779B97F4A7C15ULL >> 17) & x->filter_mask;
}

/* 0 when `id` is certainly no target. */
static inline int maybe_target(const struct ident *x, uint64_t id)
{
	uint64_t b = filter_bit(x, id);
	return (x->filter[b >> 6] >> (b & 63)) & 1;
}

/* The filter over x->targets: 16 bits per target, so about one reference
 * in 16 that is no target goes on to the table. */
static int build_filter(struct ident *x)
{
	uint64_t bits = 4096;
	while (bits < (uint64_t)x->targets.len * 16 + 16)
		bits *= 2;
	x->filter = calloc(bits / 64, sizeof(uint64_t));
	if (!x->filter)
		return VMHEAP_ENOMEM;
	x->filter_mask = bits - 1;
	for (size_t i = 0; i < x->targets.cap; i++)
		if (x->targets.slots[i].id) {
			uint64_t b = filter_bit(x, x->targets.slots[i].id);
			x->filter[b >> 6] |= 1ull << (b & 63);
		}
	if (x->targets.has_zero)
		x->filter[0] |= 1; /* filter_bit(0) is 0 */
	return 0;
}

static int add_pending(struct thread_state *ts, uint64_t referrer,
		       uint64_t tidx)
{
	if (ts->npending) {
		struct pending_ref *last = &ts->pending[ts->npending - 1];
		if (last->referrer == referrer && last->tidx == tidx) {
			last->count++;
			return 0;
		}
	}
	if (ts->npending == ts->pending_cap) {
		struct pending_ref *g = vmheap_array_grow(
		    ts->pending, &ts->pending_cap, sizeof(*g), 16);
		if (!g)
			return VMHEAP_ENOMEM;
		ts->pending = g;
	}
	ts->pending[ts->npending++] = (struct pending_ref){referrer, tidx, 1};
	return 0;
}

static int add_string(struct thread_state *ts, const struct vmheap_record *rec)
{
	if (ts->nstrings == ts->strings_cap) {
		struct string_rec *g = vmheap_array_grow(
		    ts->strings, &ts->strings_cap, sizeof(*g), 16);
		if (!g)
			return VMHEAP_ENOMEM;
		ts->strings = g;
	}
	char *text = strndup(rec->u.string.text, rec->u.string.len);
	if (!text)
		return VMHEAP_ENOMEM;
	ts->strings[ts->nstrings++] =
	    (struct string_rec){rec->u.string.id, text};
	return 0;
}

static int count_refs(struct ident *x, struct thread_state *ts,
		      const struct vmheap_record *rec)
{
	const uint64_t *refs = rec->u.object.refs;
	int more = rec->type == VMHEAP_RECORD_MORE_REFS;
	uint64_t tidx;

	for (size_t i = 0; i < rec->u.object.nrefs; i++) {
		if (!maybe_target(x, refs[i]) ||
		    !vmheap_idmap_get(&x->targets, refs[i], &tidx))
			continue;
		if (more) {
			if (add_pending(ts, rec->u.object.id, tidx) < 0)
				return VMHEAP_ENOMEM;
			continue;
		}
		struct vmheap_map_slot *s = vmheap_map_upsert(
		    &ts->pairs, tidx, rec->u.object.class_id, 0);
		if (!s)
			return VMHEAP_ENOMEM;
		s->a++; /* references */
	}
	if (!more && rec->u.object.nrefs >= VMHEAP_MAX_REFS_PER_RECORD)
		return vmheap_idmap_put(&ts->big, rec->u.object.id,
					rec->u.object.class_id);
	return 0;
}

static int pass_record(struct ident *x, unsigned t, struct thread_state *ts,
		       const struct vmheap_record *rec)
{
	uint64_t tidx;
	int rc;

	switch (x->pass) {
	case PASS_OLD:
		if ((rc = vmheap_census_add_record(x->census, t, rec)) < 0)
			return rc;
		if (rec->type == VMHEAP_RECORD_OBJECT)
			return add_old(ts, rec->u.object.id,
				       rec->u.object.class_id);
		return 0;
	case PASS_NEW:
		if ((rc = vmheap_census_add_record(x->census, t, rec)) < 0)
			return rc;
		if (rec->type != VMHEAP_RECORD_OBJECT)
			return 0;
		return lookahead(x, ts, rec);
	case PASS_TARGETS:
		if (rec->type != VMHEAP_RECORD_OBJECT)
			return 0;
		return lookahead(x, ts, rec);
	case PASS_REFS:
		switch (rec->type) {
		case VMHEAP_RECORD_OBJECT:
		case VMHEAP_RECORD_MORE_REFS:
			return count_refs(x, ts, rec);
		case VMHEAP_RECORD_ROOT:
			if (!vmheap_idmap_get(&x->targets,
					      rec->u.root.object_id, &tidx))
				return 0;
			struct vmheap_map_slot *rs = vmheap_map_upsert(
			    &ts->pairs, tidx, rec->u.root.kind_string_id,
			    PAIR_ROOT);
			if (!rs)
				return VMHEAP_ENOMEM;
			rs->a++;
			return 0;
		case VMHEAP_RECORD_STRING:
			return add_string(ts, rec);
		default:
			return 0;
		}
	}
	return 0;
}

static int ident_block(void *state, unsigned t, const struct vmheap_block *blk,
		       char *err, size_t errlen)
{
	struct ident *x = state;
	struct thread_state *ts = &x->ts[t];
	struct vmheap_record rec;
	int rc;

	if (ts->cur) {
		vmheap_block_cursor_reset(ts->cur, blk);
	} else if ((rc = vmheap_block_cursor_open(&ts->cur, blk)) < 0) {
		snprintf(err, errlen, "%s", vmheap_block_cursor_error(ts->cur));
		return rc;
	}
	/* Only pass R follows references: the others skip them. */
	while ((rc = x->pass == PASS_REFS
			 ? vmheap_block_cursor_next(ts->cur, &rec)
			 : vmheap_block_cursor_next_shallow(ts->cur, &rec)) >
	       0) {
		if ((rc = pass_record(x, t, ts, &rec)) < 0) {
			snprintf(err, errlen, "out of memory");
			return rc;
		}
	}
	if (drain(x, ts) < 0) {
		snprintf(err, errlen, "out of memory");
		return VMHEAP_ENOMEM;
	}
	if (rc < 0)
		snprintf(err, errlen, "%s", vmheap_block_cursor_error(ts->cur));
	return rc;
}

/* One pass over `r`, with the caller's hooks around it. */
static int scan(struct ident *x, vmheap_reader *r,
		enum vmheap_identity_dump which, char *err, size_t errlen)
{
	struct vmheap_scan_options sopt = VMHEAP_SCAN_OPTIONS_INIT;

	sopt.threads = x->threads;
	if (x->o->scan_begin)
		x->o->scan_begin(x->o->arg, which, &sopt);
	sopt.threads = x->threads;
	int rc = vmheap_scan_blocks(r, ident_block, x, &sopt, err, errlen);
	if (x->o->scan_end)
		x->o->scan_end(x->o->arg, which);
	return rc;
}

/* Read `r` into a fresh census *census, in pass `p`. */
static int census_pass(struct ident *x, vmheap_reader *r,
		       enum vmheap_identity_dump which, vmheap_census **census,
		       enum pass p, char *err, size_t errlen)
{
	int rc = vmheap_census_new(census, VMHEAP_GROUP_CLASS, x->threads);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	x->pass = p;
	x->census = *census;
	rc = scan(x, r, which, err, errlen);
	if (rc < 0)
		return rc;
	rc = vmheap_census_finish(*census, r);
	if (rc < 0)
		snprintf(err, errlen, "%s", vmheap_census_error(*census));
	return rc;
}

/* Reopen NEW from `path` for another pass, in place of *r. */
static int reopen(vmheap_reader **r, const char *path, char *err, size_t errlen)
{
	vmheap_reader_free(*r);
	*r = NULL;
	int rc = vmheap_reader_open_path(r, path);
	if (rc < 0)
		snprintf(err, errlen, "%s",
			 *r ? vmheap_reader_error(*r) : vmheap_strerror(rc));
	return rc;
}

static int retainers(struct ident *x, vmheap_reader **new_r,
		     const char *new_path, struct vmheap_identity_result *res,
		     char *err, size_t errlen)
{
	size_t ntop = x->o->retainer_classes;
	int rc;

	if (ntop > res->nnews)
		ntop = res->nnews;
	if (!ntop)
		return 0; /* no new objects: nothing retains any */
	if ((rc = vmheap_identity_target_pairs(x, res, ntop)) < 0)
		goto nomem;

	/* T: the ids of the new objects of the top classes */
	if ((rc = reopen(new_r, new_path, err, errlen)) < 0)
		return rc;
	x->pass = PASS_TARGETS;
	if ((rc = scan(x, *new_r, VMHEAP_IDENTITY_NEW, err, errlen)) < 0)
		return rc;
	for (unsigned t = 0; t < x->threads; t++) {
		struct vmheap_idmap *m = &x->ts[t].ids;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].id &&
			    vmheap_idmap_put(&x->targets, m->slots[i].id,
					     m->slots[i].val) < 0)
				goto nomem;
		if (m->has_zero &&
		    vmheap_idmap_put(&x->targets, 0, m->zero_val) < 0)
			goto nomem;
		vmheap_idmap_release(m);
	}
	if (build_filter(x) < 0)
		goto nomem;
	/* the OLD table is not needed any more */
	vmheap_idmap_release(&x->old_ids);

	/* R: every reference and root into the targets */
	if ((rc = reopen(new_r, new_path, err, errlen)) < 0)
		return rc;
	x->pass = PASS_REFS;
	if ((rc = scan(x, *new_r, VMHEAP_IDENTITY_NEW, err, errlen)) < 0)
		return rc;
	if ((rc = vmheap_identity_collect_retainers(x, res, ntop)) < 0)
		goto nomem;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return VMHEAP_ENOMEM;
}

static void ident_release(struct ident *x)
{
	for (unsigned t = 0; t < x->threads; t++) {
		struct thread_state *ts = &x->ts[t];
		vmheap_block_cursor_free(ts->cur);
		vmheap_idmap_release(&ts->ids);
		vmheap_map_release(&ts->pairs);
		vmheap_idmap_release(&ts->big);
		free(ts->pending);
		for (size_t i = 0; i < ts->nstrings; i++)
			free(ts->strings[i].text);
		free(ts->strings);
		free(ts->olds);
	}
	free(x->ts);
	vmheap_idmap_release(&x->old_ids);
	vmheap_map_release(&x->targets_by_pair);
	vmheap_idmap_release(&x->targets);
	free(x->filter);
}

int vmheap_identity_diff(vmheap_reader *old_r, vmheap_reader **new_r,
			 const char *new_path,
			 const struct vmheap_identity_options *o,
			 struct vmheap_identity_result *res, char *err,
			 size_t errlen)
{
	struct vmheap_scan_options sopt = VMHEAP_SCAN_OPTIONS_INIT;
	struct ident x;
	int rc;

	if (errlen)
		err[0] = '\0';
	memset(&x, 0, sizeof(x));
	x.o = o;
	sopt.threads = o->threads;
	x.threads = vmheap_scan_threads(&sopt);
	x.ts = calloc(x.threads, sizeof(*x.ts));
	if (!x.ts) {
		snprintf(err, errlen, "out of memory");
		rc = VMHEAP_ENOMEM;
		goto out;
	}

	/* A: OLD's objects */
	if ((rc = census_pass(&x, old_r, VMHEAP_IDENTITY_OLD, &res->old_census,
			      PASS_OLD, err, errlen)) < 0)
		goto out;
	if ((rc = build_old_table(&x)) < 0) {
		snprintf(err, errlen, "out of memory for the objects of %s",
			 vmheap_reader_name(old_r));
		goto out;
	}

	/* B: NEW's objects, classified against OLD */
	if ((rc = census_pass(&x, *new_r, VMHEAP_IDENTITY_NEW, &res->new_census,
			      PASS_NEW, err, errlen)) < 0)
		goto out;
	if ((rc = vmheap_identity_collect_news(o, &x, res)) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (o->retainer_classes)
		rc = retainers(&x, new_r, new_path, res, err, errlen);
out:
	ident_release(&x);
	return rc;
}

void vmheap_identity_result_release(struct vmheap_identity_result *res)
{
	free(res->news);
	for (size_t i = 0; i < res->nretained; i++)
		free(res->retained[i].retainers);
	free(res->retained);
	for (size_t i = 0; i < res->nowned; i++)
		free(res->owned_names[i]);
	free(res->owned_names);
	vmheap_census_free(res->old_census);
	vmheap_census_free(res->new_census);
	memset(res, 0, sizeof(*res));
}
