/*
 * identity_results.c - the rows of vmheap_identity_diff's result, made
 * from the tables its passes filled (identity.c): the new objects per
 * class name (pass B's pairs, merged and sorted), the pairs of the top
 * classes whose objects pass T collects, and the retainers of each top
 * class (pass R's counts, with the roots by kind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis-internal.h"
#include "identity-internal.h"
#include "vmheap_analysis.h"

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
int vmheap_identity_collect_news(const struct vmheap_identity_options *o,
				 struct ident *x,
				 struct vmheap_identity_result *res)
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
int vmheap_identity_target_pairs(struct ident *x,
				 struct vmheap_identity_result *res,
				 size_t ntop)
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
int vmheap_identity_collect_retainers(struct ident *x,
				      struct vmheap_identity_result *res,
				      size_t ntop)
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
