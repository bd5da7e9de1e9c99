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
	struct vmheap_block_cursor cur;
	int cur_ready;
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
		       char *err, size_t errsz)
{
	struct ident *x = state;
	struct thread_state *ts = &x->ts[t];
	struct vmheap_record rec;
	int rc;

	if (ts->cur_ready) {
		vmheap_block_cursor_reset(&ts->cur, blk);
	} else {
		vmheap_block_cursor_init(&ts->cur, blk);
		ts->cur_ready = 1;
	}
	/* Only pass R follows references: the others skip them. */
	while ((rc = x->pass == PASS_REFS
			 ? vmheap_block_cursor_next(&ts->cur, &rec)
			 : vmheap_block_cursor_next_shallow(&ts->cur, &rec)) >
	       0) {
		if ((rc = pass_record(x, t, ts, &rec)) < 0) {
			snprintf(err, errsz, "out of memory");
			return rc;
		}
	}
	if (drain(x, ts) < 0) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	if (rc < 0)
		snprintf(err, errsz, "%s", ts->cur.error);
	return rc;
}

/* One pass over `r`, with the caller's hooks around it. */
static int scan(struct ident *x, vmheap_reader *r,
		enum vmheap_identity_dump which, char *err, size_t errsz)
{
	struct vmheap_scan_options sopt = VMHEAP_SCAN_OPTIONS_INIT;

	sopt.threads = x->threads;
	if (x->o->scan_begin)
		x->o->scan_begin(x->o->arg, which, &sopt);
	sopt.threads = x->threads;
	int rc = vmheap_scan_blocks(r, ident_block, x, &sopt, err, errsz);
	if (x->o->scan_end)
		x->o->scan_end(x->o->arg, which);
	return rc;
}

/* Read `r` into a fresh census *census, in pass `p`. */
static int census_pass(struct ident *x, vmheap_reader *r,
		       enum vmheap_identity_dump which, vmheap_census **census,
		       enum pass p, char *err, size_t errsz)
{
	int rc = vmheap_census_new(census, VMHEAP_GROUP_CLASS, x->threads);
	if (rc < 0) {
		snprintf(err, errsz, "out of memory");
		return rc;
	}
	x->pass = p;
	x->census = *census;
	rc = scan(x, r, which, err, errsz);
	if (rc < 0)
		return rc;
	rc = vmheap_census_finish(*census, r);
	if (rc < 0)
		snprintf(err, errsz, "%s", vmheap_census_error(*census));
	return rc;
}

/* Reopen NEW from `path` for another pass, in place of *r. */
static int reopen(vmheap_reader **r, const char *path, char *err, size_t errsz)
{
	vmheap_reader_free(*r);
	*r = NULL;
	int rc = vmheap_reader_open_path(r, path);
	if (rc < 0)
		snprintf(err, errsz, "%s",
			 *r ? vmheap_reader_error(*r) : vmheap_strerror(rc));
	return rc;
}

/* Is the pair of pass B a new object's (by name)?  Sets *name. */
static int pair_is_new(struct vmheap_identity_result *res,
		       const struct vmheap_map_slot *s, const char **name)
{
	*name = vmheap_census_class_name(res->new_census, s->key);
	if (!*name)
		return -1;
	if (!(s->tag & PAIR_PRESENT))
		return 1;
	const char *old = vmheap_census_class_name(res->old_census, s->key2);
	if (!old)
		return -1;
	return strcmp(old, *name) != 0;
}

static int by_name(const void *pa, const void *pb)
{
	const struct vmheap_new_class *a = pa, *b = pb;
	return strcmp(a->name, b->name);
}

static int news_by_count(const void *pa, const void *pb)
{
	const struct vmheap_new_class *a = pa, *b = pb;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return strcmp(a->name, b->name);
}

static int news_by_bytes(const void *pa, const void *pb)
{
	const struct vmheap_new_class *a = pa, *b = pb;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* The new objects per class name, from pass B's pairs. */
static int collect_news(const struct vmheap_identity_options *o,
			struct ident *x, struct vmheap_identity_result *res)
{
	size_t n = 0, cap = 0;
	struct vmheap_new_class *v = NULL;
	const char *name;

	for (unsigned t = 0; t < x->threads; t++) {
		struct vmheap_map *m = &x->ts[t].pairs;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slots[i].used)
				continue;
			int isnew = pair_is_new(res, &m->slots[i], &name);
			if (isnew < 0)
				goto nomem;
			if (!isnew)
				continue;
			if (n == cap) {
				struct vmheap_new_class *g =
				    vmheap_array_grow(v, &cap, sizeof(*g), 64);
				if (!g)
					goto nomem;
				v = g;
			}
			v[n++] = (struct vmheap_new_class){name, m->slots[i].a,
							   m->slots[i].b};
			res->new_objects += m->slots[i].a;
			res->new_bytes += m->slots[i].b;
		}
	}
	/* merge rows of the same name (several class ids, or threads) */
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (kept && !strcmp(v[kept - 1].name, v[i].name)) {
			v[kept - 1].count += v[i].count;
			v[kept - 1].bytes += v[i].bytes;
		} else {
			v[kept++] = v[i];
		}
	}
	if (kept && o->sort != VMHEAP_SORT_NAME)
		qsort(v, kept, sizeof(*v),
		      o->sort == VMHEAP_SORT_BYTES ? news_by_bytes
						   : news_by_count);
	res->news = v;
	res->nnews = kept;
	return 0;
nomem:
	free(v);
	return VMHEAP_ENOMEM;
}

/* Map every new-object pair of a top class to that class's index. */
static int build_target_pairs(struct ident *x,
			      struct vmheap_identity_result *res, size_t ntop)
{
	const char *name;

	for (unsigned t = 0; t < x->threads; t++) {
		struct vmheap_map *m = &x->ts[t].pairs;
		for (size_t i = 0; i < m->cap; i++) {
			struct vmheap_map_slot *s = &m->slots[i];
			if (!s->used)
				continue;
			int isnew = pair_is_new(res, s, &name);
			if (isnew < 0)
				return VMHEAP_ENOMEM;
			if (!isnew)
				continue;
			for (size_t k = 0; k < ntop; k++) {
				if (strcmp(res->news[k].name, name))
					continue;
				struct vmheap_map_slot *d =
				    vmheap_map_upsert(&x->targets_by_pair,
						      s->key, s->key2, s->tag);
				if (!d)
					return VMHEAP_ENOMEM;
				d->a = k; /* the class's index in news */
				break;
			}
		}
		vmheap_map_release(m);
	}
	return 0;
}

struct retainer_entry {
	uint64_t tidx;
	const char *name;
	uint64_t references;
};

static int entry_by_target_name(const void *pa, const void *pb)
{
	const struct retainer_entry *a = pa, *b = pb;
	if (a->tidx != b->tidx)
		return a->tidx < b->tidx ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int retainer_by_refs(const void *pa, const void *pb)
{
	const struct vmheap_retainer *a = pa, *b = pb;
	if (a->references != b->references)
		return a->references < b->references ? 1 : -1;
	return strcmp(a->name, b->name);
}

static const char *root_label(struct ident *x,
			      struct vmheap_identity_result *res,
			      uint64_t string_id)
{
	const char *kind = NULL;
	for (unsigned t = 0; t < x->threads && !kind; t++)
		for (size_t i = 0; i < x->ts[t].nstrings; i++)
			if (x->ts[t].strings[i].id == string_id) {
				kind = x->ts[t].strings[i].text;
				break;
			}
	char **no = realloc(res->owned_names, (res->nowned + 1) * sizeof(*no));
	if (!no)
		return NULL;
	res->owned_names = no;
	size_t len = (kind ? strlen(kind) : 0) + 16;
	char *label = malloc(len);
	if (!label)
		return NULL;
	if (kind && *kind)
		snprintf(label, len, "<root %s>", kind);
	else
		snprintf(label, len, "<root>");
	res->owned_names[res->nowned++] = label;
	return label;
}

static const char *referrer_of_pending(struct ident *x,
				       struct vmheap_identity_result *res,
				       uint64_t referrer)
{
	uint64_t cid;
	for (unsigned t = 0; t < x->threads; t++)
		if (vmheap_idmap_get(&x->ts[t].big, referrer, &cid))
			return vmheap_census_class_name(res->new_census, cid);
	return "<unknown referrer>";
}

static int push_entry(struct retainer_entry **v, size_t *n, size_t *cap,
		      struct retainer_entry e)
{
	if (!e.name)
		return VMHEAP_ENOMEM;
	if (*n == *cap) {
		struct retainer_entry *g =
		    vmheap_array_grow(*v, cap, sizeof(*g), 64);
		if (!g)
			return VMHEAP_ENOMEM;
		*v = g;
	}
	(*v)[(*n)++] = e;
	return 0;
}

/* Turn pass R's counts into res->retained. */
static int collect_retainers(struct ident *x,
			     struct vmheap_identity_result *res, size_t ntop)
{
	struct retainer_entry *v = NULL;
	size_t n = 0, cap = 0;
	int rc = VMHEAP_ENOMEM;

	res->retained = calloc(ntop ? ntop : 1, sizeof(*res->retained));
	if (!res->retained)
		return VMHEAP_ENOMEM;
	res->nretained = ntop;
	for (size_t k = 0; k < ntop; k++)
		res->retained[k].cls = res->news[k];

	for (unsigned t = 0; t < x->threads; t++) {
		struct thread_state *ts = &x->ts[t];
		for (size_t i = 0; i < ts->pairs.cap; i++) {
			struct vmheap_map_slot *s = &ts->pairs.slots[i];
			if (!s->used)
				continue;
			const char *name = s->tag & PAIR_ROOT
					       ? root_label(x, res, s->key2)
					       : vmheap_census_class_name(
						     res->new_census, s->key2);
			if (push_entry(
				&v, &n, &cap,
				(struct retainer_entry){s->key, name, s->a}))
				goto out;
		}
		for (size_t i = 0; i < ts->npending; i++) {
			struct pending_ref *p = &ts->pending[i];
			const char *name =
			    referrer_of_pending(x, res, p->referrer);
			if (push_entry(&v, &n, &cap,
				       (struct retainer_entry){p->tidx, name,
							       p->count}))
				goto out;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), entry_by_target_name);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint64_t sum = 0;
		while (j < n && v[j].tidx == v[i].tidx &&
		       !strcmp(v[j].name, v[i].name))
			sum += v[j++].references;
		struct vmheap_retained *r = &res->retained[v[i].tidx];
		struct vmheap_retainer *nr =
		    realloc(r->retainers, (r->nretainers + 1) * sizeof(*nr));
		if (!nr)
			goto out;
		r->retainers = nr;
		r->retainers[r->nretainers++] =
		    (struct vmheap_retainer){v[i].name, sum};
		i = j;
	}
	for (size_t k = 0; k < ntop; k++)
		if (res->retained[k].nretainers)
			qsort(res->retained[k].retainers,
			      res->retained[k].nretainers,
			      sizeof(struct vmheap_retainer), retainer_by_refs);
	rc = 0;
out:
	free(v);
	return rc;
}

static int retainers(struct ident *x, vmheap_reader **new_r,
		     const char *new_path, struct vmheap_identity_result *res,
		     char *err, size_t errsz)
{
	size_t ntop = x->o->retainer_classes;
	int rc;

	if (ntop > res->nnews)
		ntop = res->nnews;
	if (!ntop)
		return 0; /* no new objects: nothing retains any */
	if ((rc = build_target_pairs(x, res, ntop)) < 0)
		goto nomem;

	/* T: the ids of the new objects of the top classes */
	if ((rc = reopen(new_r, new_path, err, errsz)) < 0)
		return rc;
	x->pass = PASS_TARGETS;
	if ((rc = scan(x, *new_r, VMHEAP_IDENTITY_NEW, err, errsz)) < 0)
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
	if ((rc = reopen(new_r, new_path, err, errsz)) < 0)
		return rc;
	x->pass = PASS_REFS;
	if ((rc = scan(x, *new_r, VMHEAP_IDENTITY_NEW, err, errsz)) < 0)
		return rc;
	if ((rc = collect_retainers(x, res, ntop)) < 0)
		goto nomem;
	return 0;
nomem:
	snprintf(err, errsz, "out of memory");
	return VMHEAP_ENOMEM;
}

static void ident_release(struct ident *x)
{
	for (unsigned t = 0; t < x->threads; t++) {
		struct thread_state *ts = &x->ts[t];
		if (ts->cur_ready)
			vmheap_block_cursor_release(&ts->cur);
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
			 size_t errsz)
{
	struct vmheap_scan_options sopt = VMHEAP_SCAN_OPTIONS_INIT;
	struct ident x;
	int rc;

	memset(&x, 0, sizeof(x));
	x.o = o;
	sopt.threads = o->threads;
	x.threads = vmheap_scan_threads(&sopt);
	x.ts = calloc(x.threads, sizeof(*x.ts));
	if (!x.ts) {
		snprintf(err, errsz, "out of memory");
		rc = VMHEAP_ENOMEM;
		goto out;
	}

	/* A: OLD's objects */
	if ((rc = census_pass(&x, old_r, VMHEAP_IDENTITY_OLD, &res->old_census,
			      PASS_OLD, err, errsz)) < 0)
		goto out;
	if ((rc = build_old_table(&x)) < 0) {
		snprintf(err, errsz, "out of memory for the objects of %s",
			 vmheap_reader_name(old_r));
		goto out;
	}

	/* B: NEW's objects, classified against OLD */
	if ((rc = census_pass(&x, *new_r, VMHEAP_IDENTITY_NEW, &res->new_census,
			      PASS_NEW, err, errsz)) < 0)
		goto out;
	if ((rc = collect_news(o, &x, res)) < 0) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	if (o->retainer_classes)
		rc = retainers(&x, new_r, new_path, res, err, errsz);
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
