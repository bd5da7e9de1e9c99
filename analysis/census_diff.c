/*
 * census_diff.c - sorting census rows, and the class-by-class difference
 * of two censuses (matched by display name, never by class id: ids differ
 * between runs of a VM).  Part of libvmheap-analysis.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis-internal.h"
#include "vmheap_analysis.h"

#define CMP_DESC(a, b) ((a) < (b) ? 1 : (a) > (b) ? -1 : 0)

/* Name, then site (none first): the order of rows of equal figures. */
static int name_site_cmp(const char *na, const char *sa, const char *nb,
			 const char *sb)
{
	int d = strcmp(na, nb);
	if (d || sa == sb)
		return d;
	if (!sa || !sb)
		return sa ? 1 : -1;
	return strcmp(sa, sb);
}
#define ROW_CMP(a, b) name_site_cmp((a)->name, (a)->site, (b)->name, (b)->site)

static int row_by_count(const void *pa, const void *pb)
{
	const struct vmheap_census_row *a = pa, *b = pb;
	int d = CMP_DESC(a->count, b->count);
	return d ? d : ROW_CMP(a, b);
}

static int row_by_bytes(const void *pa, const void *pb)
{
	const struct vmheap_census_row *a = pa, *b = pb;
	int d = CMP_DESC(a->bytes, b->bytes);
	return d ? d : ROW_CMP(a, b);
}

static int row_by_name(const void *pa, const void *pb)
{
	const struct vmheap_census_row *a = pa, *b = pb;
	return ROW_CMP(a, b);
}

void vmheap_census_rows_sort(struct vmheap_census_row *rows, size_t n,
			     enum vmheap_sort key)
{
	if (!n)
		return;
	qsort(rows, n, sizeof(*rows),
	      key == VMHEAP_SORT_BYTES	? row_by_bytes
	      : key == VMHEAP_SORT_NAME ? row_by_name
					: row_by_count);
}

static int delta_by_count(const void *pa, const void *pb)
{
	const struct vmheap_census_delta *a = pa, *b = pb;
	int d = CMP_DESC(a->count_delta, b->count_delta);
	if (!d)
		d = CMP_DESC(a->bytes_delta, b->bytes_delta);
	return d ? d : ROW_CMP(a, b);
}

static int delta_by_bytes(const void *pa, const void *pb)
{
	const struct vmheap_census_delta *a = pa, *b = pb;
	int d = CMP_DESC(a->bytes_delta, b->bytes_delta);
	if (!d)
		d = CMP_DESC(a->count_delta, b->count_delta);
	return d ? d : ROW_CMP(a, b);
}

static int delta_by_name(const void *pa, const void *pb)
{
	const struct vmheap_census_delta *a = pa, *b = pb;
	return ROW_CMP(a, b);
}

void vmheap_census_deltas_sort(struct vmheap_census_delta *d, size_t n,
			       enum vmheap_sort key)
{
	if (!n)
		return;
	qsort(d, n, sizeof(*d),
	      key == VMHEAP_SORT_BYTES	? delta_by_bytes
	      : key == VMHEAP_SORT_NAME ? delta_by_name
					: delta_by_count);
}

/* Names and sites of both censuses interned, and (name, site) pairs to
 * their delta. */
struct matcher {
	struct vmheap_namemap names, sites;
	struct vmheap_map pairs; /* (name index, site index + 1) -> a: delta */
};

/* The delta of a row's (name, site), added as d[*nd] when new; NULL when
 * out of memory. */
static struct vmheap_census_delta *delta_of(struct matcher *m,
					    struct vmheap_census_delta *d,
					    size_t *nd,
					    const struct vmheap_census_row *r)
{
	int added;
	size_t name = vmheap_namemap_intern(&m->names, r->name, m->names.len,
					    &added, NULL);
	size_t site = 0;
	if (name == (size_t)-1)
		return NULL;
	if (r->site) {
		site = vmheap_namemap_intern(&m->sites, r->site, m->sites.len,
					     &added, NULL) + 1;
		if (site == 0)
			return NULL;
	}
	struct vmheap_map_slot *s = vmheap_map_upsert(&m->pairs, name, site, 0);
	if (!s)
		return NULL;
	if (!s->a) {
		s->a = ++*nd;
		d[s->a - 1].name = r->name;
		d[s->a - 1].site = r->site;
	}
	return &d[s->a - 1];
}

static void matcher_release(struct matcher *m)
{
	vmheap_namemap_release(&m->names);
	vmheap_namemap_release(&m->sites);
	vmheap_map_release(&m->pairs);
}

int vmheap_census_diff(vmheap_census *old_c, vmheap_census *new_c,
		       struct vmheap_census_delta **out, size_t *n)
{
	size_t nold, nnew;
	struct vmheap_census_row *ro = vmheap_census_rows(old_c, &nold);
	struct vmheap_census_row *rn = vmheap_census_rows(new_c, &nnew);
	struct matcher m = {0};
	struct vmheap_census_delta *d = calloc(nold + nnew + 1, sizeof(*d));
	size_t nd = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return VMHEAP_ENOMEM;
	for (size_t i = 0; i < nold; i++) {
		struct vmheap_census_delta *x = delta_of(&m, d, &nd, &ro[i]);
		if (!x)
			goto nomem;
		x->count_old += ro[i].count;
		x->bytes_old += ro[i].bytes;
	}
	for (size_t i = 0; i < nnew; i++) {
		struct vmheap_census_delta *x = delta_of(&m, d, &nd, &rn[i]);
		if (!x)
			goto nomem;
		x->count_new += rn[i].count;
		x->bytes_new += rn[i].bytes;
	}
	matcher_release(&m);

	size_t kept = 0;
	for (size_t i = 0; i < nd; i++) {
		struct vmheap_census_delta *x = &d[i];
		if (x->count_old == x->count_new &&
		    x->bytes_old == x->bytes_new)
			continue;
		x->count_delta = (int64_t)(x->count_new - x->count_old);
		x->bytes_delta = (int64_t)(x->bytes_new - x->bytes_old);
		d[kept++] = *x;
	}
	*out = d;
	*n = kept;
	return 0;
nomem:
	matcher_release(&m);
	free(d);
	return VMHEAP_ENOMEM;
}
