/*
 * graph_classes.c - a class named on a graph tool's command line: its
 * instances, or the message with the nearest class names when the dump
 * has none (part of libvmheap-report).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_graph_query.h"
#include "vmheap_report.h"

#define SUGGESTIONS 5

void vmheap_strbuf_add_no_class(struct vmheap_strbuf *sb,
				const vmheap_graph *g, const char *label,
				const char *dump)
{
	size_t ks[SUGGESTIONS + 1];
	int64_t n =
	    vmheap_graph_nearest_classes(g, label, ks, SUGGESTIONS + 1);
	int shown = 0;

	vmheap_strbuf_addf(sb, "no objects of class ");
	vmheap_strbuf_add_text(sb, label);
	vmheap_strbuf_addf(sb, " in %s", dump);
	for (int64_t k = 0; k < n && shown < SUGGESTIONS; k++) {
		char *l = vmheap_graph_class_label(
		    g, vmheap_graph_class_id(g, ks[k]));
		if (l && strcmp(l, label)) {
			vmheap_strbuf_addf(sb, "%s", shown ? ", " : "; nearest: ");
			vmheap_strbuf_add_text(sb, l);
			shown++;
		}
		free(l);
	}
	if (!shown)
		vmheap_strbuf_addf(sb, "; no class name is near it");
}

unsigned char *vmheap_graph_label_mask(const vmheap_graph *g,
				       const char *label, size_t *nclasses)
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
		tmp[k].label = vmheap_graph_class_label(
		    g, vmheap_graph_class_id(g, k));
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
