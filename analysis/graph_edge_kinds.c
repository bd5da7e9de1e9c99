/*
 * graph_edge_kinds.c - the references a person cannot act on
 * (FORMAT.md, "Stack and internal references"): those that come from a
 * thread's stack (a reference named "stack" or "stack of ...", a root of
 * a stack kind) and those held by VM-internal objects (class names in
 * angle brackets, "<imemo:env>", "<hidden-array>"); and dropping them
 * from a graph (vmheap_graph_exclude, the tools' --exclude).
 */
#include <string.h>

#include "graph-internal.h"

/* Root kinds that stand for a thread's stack (FORMAT.md). */
static const char *const stack_root_kinds[] = {
    "stack", "machine_context", "java_frame", "jni_local", "native_stack",
};

int graph_code_is_stack(const vmheap_graph *g, uint32_t code)
{
	const struct graph_name *x;
	const char *t;

	if (code == GRAPH_NAME_NONE || (code & GRAPH_NAME_INDEX))
		return 0;
	x = &g->name_table[code - 1];
	if (!x->has_text || x->len < 5)
		return 0;
	t = g->names + x->off;
	if (memcmp(t, "stack", 5) != 0)
		return 0;
	return x->len == 5 || (x->len > 9 && memcmp(t + 5, " of ", 4) == 0);
}

int graph_edge_is_stack(const vmheap_graph *g, uint32_t k)
{
	return g->edge_name && graph_code_is_stack(g, g->edge_name[k]);
}

int graph_edge_is_named_field(const vmheap_graph *g, uint32_t k)
{
	return g->edge_name && graph_code_is_named_field(g, g->edge_name[k]);
}

int graph_code_is_named_field(const vmheap_graph *g, uint32_t code)
{
	const struct graph_name *x;

	if (code == GRAPH_NAME_NONE || (code & GRAPH_NAME_INDEX))
		return 0;
	x = &g->name_table[code - 1];
	return x->value > 0 && x->has_text && x->len &&
	       g->names[x->off] != '[' && !graph_code_is_stack(g, code);
}

int graph_class_is_internal(const vmheap_graph *g, uint32_t c)
{
	const struct graph_class *x = &g->classes[c];

	return x->has_name && x->name_len > 1 && g->names[x->name_off] == '<';
}

int vmheap_graph_root_is_stack(const vmheap_graph *g, size_t k)
{
	const char *kind = g->roots[k].kind;

	if (!kind)
		return 0;
	for (size_t s = 0; s < sizeof(stack_root_kinds) /
				   sizeof(stack_root_kinds[0]);
	     s++)
		if (strcmp(kind, stack_root_kinds[s]) == 0)
			return 1;
	return 0;
}

int vmheap_graph_reference_is_stack(const vmheap_graph *g, uint32_t i,
				    uint32_t k)
{
	return graph_edge_is_stack(g, g->fwd_off[i] + k);
}

int vmheap_graph_object_is_internal(const vmheap_graph *g, uint32_t i)
{
	return graph_class_is_internal(g, g->class_of[i]);
}

int vmheap_graph_parse_exclude(const char *list, unsigned *kinds)
{
	const char *p = list;

	*kinds = 0;
	if (!list || !*list)
		return VMHEAP_EINVAL;
	while (*p) {
		size_t len = strcspn(p, ",");
		if (len == 5 && memcmp(p, "stack", 5) == 0)
			*kinds |= VMHEAP_GRAPH_EXCLUDE_STACK;
		else if (len == 8 && memcmp(p, "internal", 8) == 0)
			*kinds |= VMHEAP_GRAPH_EXCLUDE_INTERNAL;
		else
			return VMHEAP_EINVAL;
		p += len;
		if (*p == ',' && !*++p)
			return VMHEAP_EINVAL;
	}
	return 0;
}

int vmheap_graph_exclude(vmheap_graph *g, unsigned kinds)
{
	uint32_t at = 0;
	size_t r = 0;

	if (kinds & ~(VMHEAP_GRAPH_EXCLUDE_STACK |
		      VMHEAP_GRAPH_EXCLUDE_INTERNAL))
		return graph_fail(g, VMHEAP_EINVAL,
				  "unknown kinds of references to exclude");
	if (g->rev_off || g->idom || g->path_parent)
		return VMHEAP_ESTATE;
	if (!kinds)
		return 0;
	for (uint32_t s = 0; s < g->n; s++) {
		uint32_t from = g->fwd_off[s], to = g->fwd_off[s + 1];
		int internal = (kinds & VMHEAP_GRAPH_EXCLUDE_INTERNAL) &&
			       graph_class_is_internal(g, g->class_of[s]);

		g->fwd_off[s] = at;
		for (uint32_t k = from; k < to && !internal; k++) {
			if ((kinds & VMHEAP_GRAPH_EXCLUDE_STACK) &&
			    graph_edge_is_stack(g, k))
				continue;
			g->fwd[at] = g->fwd[k];
			if (g->edge_name)
				g->edge_name[at] = g->edge_name[k];
			at++;
		}
	}
	g->fwd_off[g->n] = at;
	if (!(kinds & VMHEAP_GRAPH_EXCLUDE_STACK))
		return 0;
	for (size_t k = 0; k < g->nroots; k++) {
		if (vmheap_graph_root_is_stack(g, k))
			continue;
		g->roots[r] = g->roots[k];
		if (g->root_name)
			g->root_name[r] = g->root_name[k];
		r++;
	}
	g->nroots = r;
	return 0;
}
