/*
 * graph_class_retained.c - retained bytes per class: the sum of the retained
 * sizes of the instances that no other instance of the same class
 * dominates, so that nothing is counted twice.  One depth-first walk of the
 * dominator tree (no recursion) keeps, for each class, how many of its
 * instances are on the path from the root: an instance counts when that is
 * none.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

struct tree {
	uint32_t *start;   /* [n + 1] children of v: child[start[v]..] */
	uint32_t *child;   /* [reachable] */
	uint32_t *next;	   /* [n] the next child to visit */
	uint32_t *on_path; /* [classes] instances on the current path */
};

static void free_tree(struct tree *t)
{
	free(t->start);
	free(t->child);
	free(t->next);
	free(t->on_path);
}

/* Children of every object in the dominator tree, in index order. */
static int build_tree(const vmheap_graph *g, struct tree *t)
{
	uint32_t n = g->n, reached = 0;

	t->start = calloc((size_t)n + 1, sizeof(*t->start));
	t->next = malloc(((size_t)n + 1) * sizeof(*t->next));
	t->on_path = calloc(g->nclasses + 1, sizeof(*t->on_path));
	if (!t->start || !t->next || !t->on_path)
		return VMHEAP_ENOMEM;
	for (uint32_t v = 0; v < n; v++) {
		uint32_t d = g->idom[v];
		if (d == VMHEAP_GRAPH_NONE)
			continue;
		reached++;
		if (d != VMHEAP_GRAPH_ROOT)
			t->start[d + 1]++;
	}
	for (uint32_t v = 0; v < n; v++)
		t->start[v + 1] += t->start[v];
	t->child = malloc(((size_t)reached + 1) * sizeof(*t->child));
	if (!t->child)
		return VMHEAP_ENOMEM;
	memcpy(t->next, t->start, (size_t)n * sizeof(*t->next));
	for (uint32_t v = 0; v < n; v++) {
		uint32_t d = g->idom[v];
		if (d != VMHEAP_GRAPH_NONE && d != VMHEAP_GRAPH_ROOT)
			t->child[t->next[d]++] = v;
	}
	memcpy(t->next, t->start, (size_t)n * sizeof(*t->next));
	return 0;
}

static void enter(const vmheap_graph *g, struct tree *t, uint64_t *retained,
		  uint32_t v)
{
	uint32_t c = g->class_of[v];

	if (t->on_path[c]++ == 0)
		retained[c] += g->retained[v];
}

int vmheap_graph_class_retained(vmheap_graph *g, uint64_t *retained)
{
	struct tree t = {0};
	int rc;

	if ((rc = vmheap_graph_dominators(g)) < 0)
		return rc;
	if ((rc = build_tree(g, &t)) < 0) {
		free_tree(&t);
		return graph_fail(g, rc,
				  "out of memory for the retained "
				  "sizes of classes");
	}
	memset(retained, 0, g->nclasses * sizeof(*retained));
	for (uint32_t top = 0; top < g->n; top++) {
		uint32_t v = top;

		if (g->idom[top] != VMHEAP_GRAPH_ROOT)
			continue; /* not a child of the virtual root */
		enter(g, &t, retained, v);
		while (v != VMHEAP_GRAPH_ROOT) {
			if (t.next[v] < t.start[v + 1]) {
				v = t.child[t.next[v]++];
				enter(g, &t, retained, v);
				continue;
			}
			t.on_path[g->class_of[v]]--;
			v = g->idom[v];
		}
	}
	free_tree(&t);
	return 0;
}
