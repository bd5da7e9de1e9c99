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

static int row_by_count(const void *pa, const void *pb)
{
	const struct vmheap_census_row *a = pa, *b = pb;
	int d = CMP_DESC(a->count, b->count);
	return d ? d : strcmp(a->name, b->name);
}

static int row_by_bytes(const void *pa, const void *pb)
{
	const struct vmheap_census_row *a = pa, *b = pb;
	int d = CMP_DESC(a->bytes, b->bytes);
	return d ? d : strcmp(a->name, b->name);
}

static int row_by_name(const void *pa, const void *pb)
{
	const struct vmheap_census_row *a = pa, *b = pb;
	return strcmp(a->name, b->name);
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
	return d ? d : strcmp(a->name, b->name);
}

static int delta_by_bytes(const void *pa, const void *pb)
{
	const struct vmheap_census_delta *a = pa, *b = pb;
	int d = CMP_DESC(a->bytes_delta, b->bytes_delta);
	if (!d)
		d = CMP_DESC(a->count_delta, b->count_delta);
	return d ? d : strcmp(a->name, b->name);
}

static int delta_by_name(const void *pa, const void *pb)
{
	const struct vmheap_census_delta *a = pa, *b = pb;
	return strcmp(a->name, b->name);
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

int vmheap_census_diff(vmheap_census *old_c, vmheap_census *new_c,
		       struct vmheap_census_delta **out, size_t *n)
{
	size_t nold, nnew;
	struct vmheap_census_row *ro = vmheap_census_rows(old_c, &nold);
	struct vmheap_census_row *rn = vmheap_census_rows(new_c, &nnew);
	struct vmheap_namemap names = {0};
	struct vmheap_census_delta *d = calloc(nold + nnew + 1, sizeof(*d));
	size_t nd = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return VMHEAP_ENOMEM;
	for (size_t i = 0; i < nold; i++) {
		int added;
		size_t idx =
		    vmheap_namemap_intern(&names, ro[i].name, nd, &added, NULL);
		if (idx == (size_t)-1)
			goto nomem;
		if (added) {
			d[nd].name = ro[i].name;
			nd++;
		}
		d[idx].count_old += ro[i].count;
		d[idx].bytes_old += ro[i].bytes;
	}
	for (size_t i = 0; i < nnew; i++) {
		int added;
		size_t idx =
		    vmheap_namemap_intern(&names, rn[i].name, nd, &added, NULL);
		if (idx == (size_t)-1)
			goto nomem;
		if (added) {
			d[nd].name = rn[i].name;
			nd++;
		}
		d[idx].count_new += rn[i].count;
		d[idx].bytes_new += rn[i].bytes;
	}
	vmheap_namemap_release(&names);

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
	vmheap_namemap_release(&names);
	free(d);
	return VMHEAP_ENOMEM;
}
