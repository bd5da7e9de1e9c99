/*
 * graph_labels.c - the graph's class table as the tools see it: class
 * labels (the census's display names), classes found by label, and the
 * labels nearest to a mistyped one, the classes and instances of a label,
 * and the class table grouped by label (vmheap_graph_query.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"
#include "vmheap_graph_query.h"

#define NEAR_PREFIX 256 /* bytes of a label the edit distance looks at */

size_t vmheap_graph_object_class_index(const vmheap_graph *g, uint32_t i)
{
	return g->class_of[i];
}

char *vmheap_graph_class_label(const vmheap_graph *g, uint64_t class_id)
{
	size_t len;
	const char *name = vmheap_graph_class_name(g, class_id, &len);
	char buf[64];

	if (!name) {
		snprintf(buf, sizeof(buf), "<unknown class 0x%" PRIx64 ">",
			 class_id);
		return strdup(buf);
	}
	len = strnlen(name, len);
	if (!len)
		return strdup("<anonymous class>");
	return strndup(name, len);
}

static int compare_class_objects(const void *x, const void *y)
{
	const struct graph_class_object *a = x, *b = y;

	if (a->object != b->object)
		return a->object < b->object ? -1 : 1;
	return a->klass < b->klass ? -1 : a->klass > b->klass;
}

int graph_index_class_objects(vmheap_graph *g)
{
	size_t n = 0;

	for (size_t k = 0; k < g->nclasses; k++)
		n += g->classes[k].object_id != 0;
	if (!n)
		return 0;
	g->class_objects = malloc(n * sizeof(*g->class_objects));
	if (!g->class_objects)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < g->nclasses; k++) {
		uint32_t i;
		if (!g->classes[k].object_id)
			continue;
		i = vmheap_graph_find(g, g->classes[k].object_id);
		if (i == VMHEAP_GRAPH_NONE)
			continue; /* names an object the dump lacks */
		g->class_objects[g->nclass_objects++] =
		    (struct graph_class_object){.object = i,
						.klass = (uint32_t)k};
	}
	/* two classes naming one object: the first in file order wins (the
	 * lookup finds the lowest class index) */
	qsort(g->class_objects, g->nclass_objects, sizeof(*g->class_objects),
	      compare_class_objects);
	return 0;
}

int vmheap_graph_object_as_class(const vmheap_graph *g, uint32_t i,
				 uint64_t *class_id)
{
	size_t lo = 0, hi = g->nclass_objects;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->class_objects[mid].object < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == g->nclass_objects || g->class_objects[lo].object != i)
		return 0;
	*class_id = g->classes[g->class_objects[lo].klass].id;
	return 1;
}

char *vmheap_graph_object_label(const vmheap_graph *g, uint32_t i)
{
	uint64_t self;
	char *of = vmheap_graph_class_label(g, vmheap_graph_object_class(g, i));
	char *own, *both;
	size_t n;

	if (!of || !vmheap_graph_object_as_class(g, i, &self))
		return of;
	own = vmheap_graph_class_label(g, self);
	if (!own || !strncmp(own, "#<", 2)) {
		free(of);
		return own;
	}
	n = strlen(of) + 1 + strlen(own) + 1;
	both = malloc(n);
	if (both)
		snprintf(both, n, "%s %s", of, own);
	free(of);
	free(own);
	return both;
}

int64_t vmheap_graph_classes_labelled(const vmheap_graph *g, const char *label,
				      size_t *ks, size_t cap)
{
	int64_t found = 0;

	for (size_t k = 0; k < g->nclasses; k++) {
		char *l = vmheap_graph_class_label(g, g->classes[k].id);
		if (!l)
			return VMHEAP_ENOMEM;
		if (!strcmp(l, label)) {
			if ((size_t)found < cap)
				ks[found] = k;
			found++;
		}
		free(l);
	}
	return found;
}

static unsigned char fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* Levenshtein distance of a and b (each at most NEAR_PREFIX bytes), with
 * one row of NEAR_PREFIX + 1 cells. */
static size_t distance(const char *a, size_t na, const char *b, size_t nb)
{
	size_t row[NEAR_PREFIX + 1];

	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t up = row[j];
			size_t best = diag + (fold((unsigned char)a[i - 1]) !=
					      fold((unsigned char)b[j - 1]));
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}

struct candidate {
	size_t dist, k;
	char *label;
};

static int compare_candidates(const void *x, const void *y)
{
	const struct candidate *a = x, *b = y;

	if (a->dist != b->dist)
		return a->dist < b->dist ? -1 : 1;
	int c = strcmp(a->label, b->label);
	if (c)
		return c;
	return a->k < b->k ? -1 : a->k > b->k;
}

int64_t vmheap_graph_nearest_classes(const vmheap_graph *g, const char *label,
				     size_t *ks, size_t cap)
{
	size_t nl = strnlen(label, NEAR_PREFIX), limit = strlen(label) / 2;
	struct candidate *c = calloc(g->nclasses ? g->nclasses : 1, sizeof(*c));
	size_t m = 0, out = 0;
	int64_t rc = 0;

	if (!c)
		return VMHEAP_ENOMEM;
	if (limit < 3)
		limit = 3;
	for (size_t k = 0; k < g->nclasses; k++) {
		char *l = vmheap_graph_class_label(g, g->classes[k].id);
		if (!l) {
			rc = VMHEAP_ENOMEM;
			goto done;
		}
		size_t d = distance(label, nl, l, strnlen(l, NEAR_PREFIX));
		if (d > limit) {
			free(l);
			continue;
		}
		c[m++] = (struct candidate){d, k, l};
	}
	qsort(c, m, sizeof(*c), compare_candidates);
	for (size_t i = 0; i < m && out < cap; i++)
		if (!i || strcmp(c[i].label, c[i - 1].label))
			ks[out++] = c[i].k;
	rc = (int64_t)out;
done:
	for (size_t i = 0; i < m; i++)
		free(c[i].label);
	free(c);
	return rc;
}

unsigned char *vmheap_graph_label_mask(const vmheap_graph *g, const char *label,
				       size_t *nclasses)
{
	size_t count = vmheap_graph_class_count(g);
	int64_t nk = vmheap_graph_classes_labelled(g, label, NULL, 0);
	size_t *ks = malloc((nk > 0 ? (size_t)nk : 1) * sizeof(*ks));
	unsigned char *mask = calloc(count ? count : 1, 1);

	if (nk < 0 || !ks || !mask) {
		free(ks);
		free(mask);
		return NULL;
	}
	vmheap_graph_classes_labelled(g, label, ks, (size_t)nk);
	for (int64_t k = 0; k < nk; k++)
		mask[ks[k]] = 1;
	free(ks);
	*nclasses = (size_t)nk;
	return mask;
}

int vmheap_graph_instances_of(const vmheap_graph *g, const char *label,
			      uint32_t **objects, size_t *n)
{
	uint32_t count = vmheap_graph_object_count(g);
	size_t nclasses;
	unsigned char *mask = vmheap_graph_label_mask(g, label, &nclasses);

	*objects = NULL;
	*n = 0;
	if (!mask)
		return VMHEAP_ENOMEM;
	for (uint32_t i = 0; i < count; i++)
		*n += mask[vmheap_graph_object_class_index(g, i)];
	if (*n && !(*objects = malloc(*n * sizeof(**objects)))) {
		free(mask);
		*n = 0;
		return VMHEAP_ENOMEM;
	}
	*n = 0;
	for (uint32_t i = 0; i < count; i++)
		if (mask[vmheap_graph_object_class_index(g, i)])
			(*objects)[(*n)++] = i;
	free(mask);
	return 0;
}

/* Sort entries: a label and the class position it came from. */
struct labelled {
	char *label;
	size_t k;
};

static int by_label(const void *a, const void *b)
{
	const struct labelled *x = a, *y = b;
	int c = strcmp(x->label, y->label);

	return c ? c : (x->k > y->k) - (x->k < y->k);
}

int vmheap_graph_label_groups(const vmheap_graph *g, uint32_t *group,
			      char ***names, size_t *ngroups)
{
	size_t n = vmheap_graph_class_count(g), m = 0;
	struct labelled *tmp = calloc(n ? n : 1, sizeof(*tmp));
	char **out = calloc(n ? n : 1, sizeof(*out));

	*names = NULL;
	*ngroups = 0;
	if (!tmp || !out)
		goto fail;
	for (size_t k = 0; k < n; k++) {
		tmp[k].k = k;
		tmp[k].label =
		    vmheap_graph_class_label(g, vmheap_graph_class_id(g, k));
		if (!tmp[k].label)
			goto fail;
	}
	qsort(tmp, n, sizeof(*tmp), by_label);
	for (size_t j = 0; j < n; j++) {
		if (m && !strcmp(out[m - 1], tmp[j].label))
			free(tmp[j].label);
		else
			out[m++] = tmp[j].label;
		tmp[j].label = NULL;
		group[tmp[j].k] = (uint32_t)(m - 1);
	}
	free(tmp);
	*names = out;
	*ngroups = m;
	return 0;
fail:
	for (size_t k = 0; tmp && k < n; k++)
		free(tmp[k].label);
	for (size_t k = 0; k < m; k++)
		free(out[k]);
	free(tmp);
	free(out);
	return VMHEAP_ENOMEM;
}
