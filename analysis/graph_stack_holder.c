/*
 * graph_stack_holder.c - whether a thread's stack also holds an object
 * whose path goes elsewhere ("held by constant X; also from the stack of
 * thread 2"): one pass over the references, marking the path.
 */
#include <stdlib.h>

#include "graph-internal.h"
#include "vmheap_graph_query.h"

/* 1 when the path of i has a stack step (a stack reference or root). */
static int path_has_stack(const vmheap_graph *g, uint32_t i)
{
	for (uint32_t v = i;; v = g->path_parent[v]) {
		if (g->path_parent[v] == VMHEAP_GRAPH_ROOT) {
			size_t root = 0;
			vmheap_graph_path(g, v, NULL, 0, &root);
			return vmheap_graph_root_is_stack(g, root);
		}
		if (g->path_edge && graph_edge_is_stack(g, g->path_edge[v]))
			return 1;
	}
}

static int any_stack_root(const vmheap_graph *g)
{
	for (size_t k = 0; k < g->nroots; k++)
		if (g->roots[k].object != VMHEAP_GRAPH_NONE &&
		    vmheap_graph_root_is_stack(g, k))
			return 1;
	return 0;
}

int vmheap_graph_stack_holder(const vmheap_graph *g, uint32_t i,
			      struct vmheap_graph_stack_holder *out)
{
	uint32_t *pos, depth = 0, best = UINT32_MAX;

	if (!g->path_parent)
		return VMHEAP_ESTATE;
	if (g->path_parent[i] == VMHEAP_GRAPH_NONE || path_has_stack(g, i))
		return 0;
	if (!g->edge_name && !any_stack_root(g))
		return 0;
	/* pos[v]: 1 + v's distance from i on the path, 0 off the path */
	if (!(pos = calloc(g->n ? g->n : 1, sizeof(*pos))))
		return VMHEAP_ENOMEM;
	for (uint32_t v = i;; v = g->path_parent[v]) {
		pos[v] = ++depth;
		if (g->path_parent[v] == VMHEAP_GRAPH_ROOT)
			break;
	}
	/* stack[c]: name code c is a stack's; the references are tested by
	 * their names first (read in order), the path (random reads) only
	 * for stack references, and not at all when no name is a stack's */
	unsigned char *stack = NULL;
	int any = 0;
	if (g->edge_name) {
		if (!(stack = calloc(g->nname_table + 1, 1))) {
			free(pos);
			return VMHEAP_ENOMEM;
		}
		for (size_t c = 1; c <= g->nname_table; c++)
			any |= stack[c] =
			    (unsigned char)graph_code_is_stack(g, (uint32_t)c);
	}
	for (uint32_t s = 0; s < g->n && any; s++)
		for (uint32_t k = g->fwd_off[s]; k < g->fwd_off[s + 1]; k++) {
			uint32_t w = g->fwd[k], code = g->edge_name[k];
			if ((code & GRAPH_NAME_INDEX) || !stack[code])
				continue;
			if (pos[w] && pos[w] < best) {
				best = pos[w];
				*out = (struct vmheap_graph_stack_holder){
				    .object = w,
				    .holder = s,
				    .reference = k - g->fwd_off[s],
				};
			}
		}
	for (size_t k = 0; k < g->nroots; k++) {
		uint32_t w = g->roots[k].object;
		if (w != VMHEAP_GRAPH_NONE && pos[w] && pos[w] < best &&
		    vmheap_graph_root_is_stack(g, k)) {
			best = pos[w];
			*out = (struct vmheap_graph_stack_holder){
			    .object = w,
			    .holder = VMHEAP_GRAPH_ROOT,
			    .reference = (uint32_t)k,
			};
		}
	}
	free(pos);
	free(stack);
	return best != UINT32_MAX;
}
