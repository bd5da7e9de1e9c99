/*
 * suspects.c - leak suspects ranked by what they hold (vmheap_suspects.h
 * says what is computed and how it is ranked).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"
#include "vmheap_graph_query.h"
#include "vmheap_suspects.h"

#define DEFAULT_SUSPECTS 10
#define THRESHOLD_MIN 1024u
#define THRESHOLD_PERCENT 1u

/* Owner memo: not yet computed, and "no new object at or above". */
#define OWNER_UNSET VMHEAP_GRAPH_NONE
#define OWNER_NO_NEW VMHEAP_GRAPH_ROOT

/* ------------------------------------------------------------ compute */

/* Instances per label in OLD, by NEW's labels (classes NEW lacks are left
 * out), subtracted from `growth`. */
static int old_instances(const vmheap_graph *old_g,
			 const struct vmheap_suspects *s, int64_t *growth)
{
	size_t nold = vmheap_graph_class_count(old_g);
	uint32_t *to = malloc((nold ? nold : 1) * sizeof(*to));

	if (!to)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < nold; k++) {
		char *l = vmheap_graph_class_label(
		    old_g, vmheap_graph_class_id(old_g, k));
		if (!l) {
			free(to);
			return VMHEAP_ENOMEM;
		}
		size_t lo = 0, hi = s->objects.nnames;
		while (lo < hi) { /* the names are sorted */
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(s->objects.names[mid], l) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		to[k] = lo < s->objects.nnames && !strcmp(s->objects.names[lo], l)
			    ? (uint32_t)lo
			    : VMHEAP_GRAPH_NONE;
		free(l);
	}
	for (uint32_t j = 0; j < vmheap_graph_object_count(old_g); j++) {
		uint32_t x = to[vmheap_graph_object_class_index(old_g, j)];
		if (x != VMHEAP_GRAPH_NONE)
			growth[x]--;
	}
	free(to);
	return 0;
}

/*
 * owner[i] for every object i: the top-most new object on the dominator
 * chain of i, i included (OWNER_NO_NEW when there is none, as for an
 * unreachable object).  Each object is settled once: a walk up stops at
 * the first object already settled, then a second walk settles the chain.
 */
static void find_owners(const vmheap_graph *g, const uint32_t *mark,
			uint32_t *owner)
{
	uint32_t n = vmheap_graph_object_count(g);

	for (uint32_t i = 0; i < n; i++)
		owner[i] = OWNER_UNSET;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t top = OWNER_NO_NEW, v = i, stop;
		/* up to a settled object or the (virtual) root */
		while (v < VMHEAP_GRAPH_ROOT && owner[v] == OWNER_UNSET) {
			if (mark[v])
				top = v;
			v = vmheap_graph_idom(g, v);
		}
		stop = v;
		if (stop < VMHEAP_GRAPH_ROOT && owner[stop] != OWNER_NO_NEW)
			top = owner[stop];
		/* settle the chain: below `top` it owns, above it nothing */
		int past = 0;
		for (v = i; v != stop; v = vmheap_graph_idom(g, v)) {
			if (stop < VMHEAP_GRAPH_ROOT &&
			    owner[stop] != OWNER_NO_NEW)
				owner[v] = top;
			else {
				owner[v] = past ? OWNER_NO_NEW : top;
				if (v == top)
					past = 1;
			}
		}
	}
}

static int by_rank(const void *a, const void *b)
{
	const struct vmheap_suspect *x = a, *y = b;

	if (x->ranked_bytes != y->ranked_bytes)
		return x->ranked_bytes > y->ranked_bytes ? -1 : 1;
	if (x->held_bytes != y->held_bytes)
		return x->held_bytes > y->held_bytes ? -1 : 1;
	return (x->name > y->name) - (x->name < y->name);
}

/* Per label: owners, held objects and bytes; the totals. */
static void sum_owners(const vmheap_graph *new_g, struct vmheap_suspects *s,
		       const uint32_t *mark,
		       const uint32_t *owner, const uint32_t *group)
{
	const vmheap_graph *g = new_g;

	for (uint32_t i = 0; i < vmheap_graph_object_count(g); i++) {
		uint64_t b = vmheap_graph_object_bytes(g, i);
		if (!mark[i])
			continue;
		if (vmheap_graph_idom(g, i) == VMHEAP_GRAPH_NONE) {
			s->unreachable++;
			s->unreachable_bytes += b;
			continue;
		}
		struct vmheap_suspect *r =
		    &s->rows[group[vmheap_graph_object_class_index(g,
								   owner[i])]];
		if (owner[i] == i) {
			r->owners++;
			s->owners++;
		}
		r->held_objects++;
		r->held_bytes += b;
		s->new_objects++;
		s->new_bytes += b;
	}
}

/* The part of the owners of r that the growth of their class, less
 * `less`, accounts for: 0 to 1. */
static double share(const struct vmheap_suspect *r, double less)
{
	double net = (double)r->growth - less;

	if (!r->owners || net >= (double)r->owners)
		return 1.0;
	return net > 0 ? net / (double)r->owners : 0.0;
}

/* The `inside` of each label: its new instances that owners hold, each
 * weighted by the share of its owner's class. */
static int weigh_inside(const vmheap_graph *new_g, struct vmheap_suspects *s,
			const uint32_t *mark,
			const uint32_t *owner, const uint32_t *group)
{
	const vmheap_graph *g = new_g;
	double *raw = malloc((s->objects.nnames ? s->objects.nnames : 1) * sizeof(*raw));

	if (!raw)
		return VMHEAP_ENOMEM;
	for (size_t x = 0; x < s->objects.nnames; x++)
		raw[x] = share(&s->rows[x], 0.0);
	for (uint32_t i = 0; i < vmheap_graph_object_count(g); i++)
		if (mark[i] && owner[i] != i && owner[i] < VMHEAP_GRAPH_ROOT)
			s->rows[mark[i] - 1].inside +=
			    raw[group[vmheap_graph_object_class_index(
				g, owner[i])]];
	free(raw);
	return 0;
}

/* The ranked bytes of each label, the threshold, the order. */
static void rank(size_t top, struct vmheap_suspects *s)
{

	s->threshold = s->new_bytes / 100 * THRESHOLD_PERCENT;
	if (s->threshold < THRESHOLD_MIN)
		s->threshold = THRESHOLD_MIN;
	for (size_t x = 0; x < s->objects.nnames; x++) {
		struct vmheap_suspect *r = &s->rows[x];
		double part = share(r, r->inside);
		if (r->owners)
			s->owner_classes++;
		r->ranked_bytes =
		    part >= 1.0 ? r->held_bytes
				: (uint64_t)((double)r->held_bytes * part);
	}
	qsort(s->rows, s->objects.nnames, sizeof(*s->rows), by_rank);
	while (s->nrows < s->objects.nnames && s->rows[s->nrows].owners &&
	       s->rows[s->nrows].ranked_bytes >= s->threshold)
		s->nrows++;
	s->shown = s->nrows < top ? s->nrows : top;
}

static int by_count(const void *a, const void *b)
{
	const struct vmheap_suspect_held *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return (x->name > y->name) - (x->name < y->name);
}

/* For each suspect shown: the classes of the new objects its owners hold
 * (the owners left out), most first. */
static int held_classes(const vmheap_graph *new_g, struct vmheap_suspects *s,
			const uint32_t *mark,
			const uint32_t *owner, const uint32_t *group)
{
	const vmheap_graph *g = new_g;
	size_t *slot = malloc((s->objects.nnames ? s->objects.nnames : 1) * sizeof(*slot));
	struct vmheap_suspect_held *h = calloc(s->shown * s->objects.nnames + 1, sizeof(*h));

	if (!slot || !h) {
		free(slot);
		free(h);
		return VMHEAP_ENOMEM;
	}
	for (size_t x = 0; x < s->objects.nnames; x++)
		slot[x] = SIZE_MAX;
	for (size_t k = 0; k < s->shown; k++)
		slot[s->rows[k].name] = k;
	for (uint32_t i = 0; i < vmheap_graph_object_count(g); i++) {
		if (!mark[i] || owner[i] == i || owner[i] >= VMHEAP_GRAPH_ROOT)
			continue;
		size_t k =
		    slot[group[vmheap_graph_object_class_index(g, owner[i])]];
		if (k == SIZE_MAX)
			continue;
		struct vmheap_suspect_held *c = &h[k * s->objects.nnames + mark[i] - 1];
		c->count++;
		c->bytes += vmheap_graph_object_bytes(g, i);
	}
	for (size_t k = 0; k < s->shown; k++) {
		struct vmheap_suspect_held *row = &h[k * s->objects.nnames];
		struct vmheap_suspect *r = &s->rows[k];
		for (size_t x = 0; x < s->objects.nnames; x++) {
			row[x].name = x;
			r->held_classes += row[x].count != 0;
		}
		qsort(row, s->objects.nnames, sizeof(*row), by_count);
		while (r->held_count < VMHEAP_SUSPECT_HELD_CLASSES &&
		       r->held_count < r->held_classes) {
			r->held[r->held_count] = row[r->held_count];
			r->held_count++;
		}
	}
	free(slot);
	free(h);
	return 0;
}

/* The paths of each shown suspect's owners, merged by shape. */
static int owner_paths(vmheap_graph *new_g, struct vmheap_suspects *s,
		       const uint32_t *mark,
		       const uint32_t *owner)
{
	uint32_t n = vmheap_graph_object_count(new_g);
	uint32_t *objects = malloc((n ? n : 1) * sizeof(*objects));

	if (!objects)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < s->shown; k++) {
		size_t m = 0;
		for (uint32_t i = 0; i < n; i++)
			if (owner[i] == i && mark[i] == s->rows[k].name + 1 &&
			    vmheap_graph_idom(new_g, i) !=
				VMHEAP_GRAPH_NONE)
				objects[m++] = i;
		if (vmheap_graph_object_paths(new_g, objects, m,
					      &s->rows[k].paths) < 0) {
			free(objects);
			return VMHEAP_ENOMEM;
		}
	}
	free(objects);
	return 0;
}

static int compute(const vmheap_graph *old_g, vmheap_graph *new_g, size_t top,
		   struct vmheap_suspects *s)
{
	const uint32_t *group = s->objects.group, *mark = s->objects.mark;
	uint32_t n = vmheap_graph_object_count(new_g);
	uint32_t *owner = malloc((n ? n : 1) * sizeof(*owner));
	int64_t *growth = NULL;
	int rc = VMHEAP_ENOMEM;

	if (!owner)
		goto done;
	if (!(s->rows =
		  calloc(s->objects.nnames ? s->objects.nnames : 1, sizeof(*s->rows))) ||
	    !(growth = calloc(s->objects.nnames ? s->objects.nnames : 1, sizeof(*growth))))
		goto done;
	for (uint32_t i = 0; i < n; i++)
		growth[group[vmheap_graph_object_class_index(new_g, i)]]++;
	if ((rc = old_instances(old_g, s, growth)) < 0 ||
	    (rc = vmheap_graph_dominators(new_g)) < 0)
		goto done;
	find_owners(new_g, mark, owner);
	for (size_t x = 0; x < s->objects.nnames; x++) {
		s->rows[x].name = x;
		s->rows[x].growth = growth[x];
	}
	sum_owners(new_g, s, mark, owner, group);
	if ((rc = weigh_inside(new_g, s, mark, owner, group)) < 0)
		goto done;
	rank(top, s);
	if ((rc = held_classes(new_g, s, mark, owner, group)) == 0)
		rc = owner_paths(new_g, s, mark, owner);
done:
	free(owner);
	free(growth);
	return rc;
}

int vmheap_suspects_rank(const vmheap_graph *old_g, vmheap_graph *new_g,
			 const struct vmheap_suspects_options *opt,
			 struct vmheap_suspects **out)
{
	struct vmheap_suspects *s = calloc(1, sizeof(*s));
	size_t top = opt && opt->top ? opt->top : DEFAULT_SUSPECTS;
	int rc;

	*out = NULL;
	if (!s)
		return graph_fail(new_g, VMHEAP_ENOMEM,
				  "out of memory ranking the leak suspects");
	if ((rc = vmheap_new_objects_mark(old_g, new_g, &s->objects)) < 0) {
		free(s);
		return rc;
	}
	if ((rc = compute(old_g, new_g, top, s)) < 0) {
		vmheap_suspects_free(s);
		return graph_fail(new_g, rc,
				  "out of memory ranking the leak suspects");
	}
	*out = s;
	return 0;
}

void vmheap_suspects_free(struct vmheap_suspects *s)
{
	if (!s)
		return;
	for (size_t x = 0; s->rows && x < s->objects.nnames; x++)
		vmheap_graph_object_paths_free(s->rows[x].paths);
	free(s->rows);
	vmheap_new_objects_release(&s->objects);
	free(s);
}
