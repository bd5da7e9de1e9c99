/*
 * graph_object_paths.c - the shortest paths of any set of objects merged
 * by shape (vmheap_graph_query.h).
 *
 * The shapes form a trie: a node is (parent node, class, name of the
 * reference from the parent), a top node (root kind and name, class of
 * the root object).  Names are compared by code (one per text; every
 * element index and hash key is one "element" code).  A run of objects
 * of one class reached by one name (the nodes of a linked list, each
 * reached by "@next") is one node: a child with its parent's class and
 * name is its parent, so a chain of any length is one step and paths
 * that differ only in a run's length have one shape.  Every object on a
 * path gets the node of its path's shape, memoized, so that an object
 * shared by many paths (the Hash that holds 100,000 instances) is
 * resolved once: the work and the memory are linear in the objects on
 * the paths, however long they are, and the shapes' classes are as many
 * as the shapes' steps.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"
#include "vmheap_graph_query.h"

#define NO_NODE UINT32_MAX

struct node {
	uint32_t parent; /* NO_NODE for a top node */
	uint32_t cls;	 /* class table index */
	uint64_t kind;	 /* root kind string id (top nodes), else 0 */
	uint32_t name;	 /* shape code of the reference's or root's name */
	uint32_t depth;	 /* classes in the shape */
	uint32_t example;
	uint64_t count, bytes;
};

struct trie {
	vmheap_graph *g;
	struct node *nodes;
	size_t nnodes, cap;
	uint32_t *table; /* node index + 1 */
	size_t table_cap;
	uint32_t *memo; /* [n] node of each object's shape, or NO_NODE */
	/* [n] the root object of the path of each object with a memo: a
	 * group's root record without walking its example's path again */
	uint32_t *root_of;
	uint32_t *stack;
	size_t stack_cap;
};

/* The result with the storage of its shapes. */
struct object_paths_owned {
	struct vmheap_graph_class_paths pub;
	uint64_t *pool;
};

static uint64_t node_hash(uint32_t parent, uint32_t cls, uint64_t kind,
			  uint32_t name)
{
	uint64_t h = ((uint64_t)parent << 32 | cls) ^
		     ((kind ^ (uint64_t)name << 40) * 0x9e3779b97f4a7c15ULL);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static int grow_table(struct trie *t)
{
	size_t cap = t->table_cap ? 2 * t->table_cap : 256;
	uint32_t *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < t->nnodes; k++) {
		const struct node *x = &t->nodes[k];
		size_t h = node_hash(x->parent, x->cls, x->kind, x->name) &
			   (cap - 1);
		while (tab[h])
			h = (h + 1) & (cap - 1);
		tab[h] = (uint32_t)k + 1;
	}
	free(t->table);
	t->table = tab;
	t->table_cap = cap;
	return 0;
}

/* The node (parent, cls, kind, name), made if new; NO_NODE when out of
 * memory. */
static uint32_t intern(struct trie *t, uint32_t parent, uint32_t cls,
		       uint64_t kind, uint32_t name)
{
	size_t h;

	if (2 * (t->nnodes + 1) > t->table_cap && grow_table(t) < 0)
		return NO_NODE;
	if (t->nnodes >= NO_NODE - 1)
		return NO_NODE;
	for (h = node_hash(parent, cls, kind, name) & (t->table_cap - 1);
	     t->table[h]; h = (h + 1) & (t->table_cap - 1)) {
		const struct node *x = &t->nodes[t->table[h] - 1];
		if (x->parent == parent && x->cls == cls && x->kind == kind &&
		    x->name == name)
			return t->table[h] - 1;
	}
	if (t->nnodes == t->cap) {
		void *p = vmheap_array_grow(t->nodes, &t->cap,
					    sizeof(*t->nodes), 64);
		if (!p)
			return NO_NODE;
		t->nodes = p;
	}
	t->nodes[t->nnodes] = (struct node){
	    .parent = parent,
	    .cls = cls,
	    .kind = kind,
	    .name = name,
	    .depth = parent == NO_NODE ? 1 : t->nodes[parent].depth + 1,
	    .example = NO_NODE,
	};
	t->table[h] = (uint32_t)t->nnodes + 1;
	return (uint32_t)t->nnodes++;
}

/* The node of reachable object v's shape: walk up to the first object
 * already resolved (or the root object), then resolve back down. */
static uint32_t shape_of(struct trie *t, uint32_t v)
{
	vmheap_graph *g = t->g;
	size_t depth = 0;
	uint32_t node = NO_NODE, root_object = NO_NODE;

	for (uint32_t u = v;; u = g->path_parent[u]) {
		if (t->memo[u] != NO_NODE) {
			node = t->memo[u];
			root_object = t->root_of[u];
			break;
		}
		if (depth == t->stack_cap) {
			void *p = vmheap_array_grow(t->stack, &t->stack_cap,
						    sizeof(*t->stack), 64);
			if (!p)
				return NO_NODE;
			t->stack = p;
		}
		t->stack[depth++] = u;
		if (g->path_parent[u] == VMHEAP_GRAPH_ROOT) {
			root_object = u;
			break;
		}
	}
	while (depth--) {
		uint32_t u = t->stack[depth];
		if (node == NO_NODE) { /* u is the root object */
			size_t root = 0;
			vmheap_graph_path(g, u, NULL, 0, &root);
			node = intern(t, NO_NODE, g->class_of[u],
				      g->roots[root].kind_string_id,
				      graph_root_name_code(g, root));
		} else {
			uint32_t cls = g->class_of[u],
				 name = graph_path_shape_name(g, u);
			const struct node *up = &t->nodes[node];
			/* a run of one class and one name is one step */
			if (up->parent == NO_NODE || up->cls != cls ||
			    up->name != name)
				node = intern(t, node, cls, 0, name);
		}
		if (node == NO_NODE)
			return NO_NODE;
		t->memo[u] = node;
		t->root_of[u] = root_object;
	}
	return node;
}

static int compare_groups(const void *a, const void *b)
{
	const struct vmheap_graph_path_group *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->example < y->example ? -1 : x->example > y->example;
}

/* The groups: every node an object ended on, its shape spelled out. */
static int collect(struct trie *t, struct object_paths_owned *res)
{
	size_t ngroups = 0, pool_len = 0, at = 0;
	struct vmheap_graph_path_group *groups;

	for (size_t k = 0; k < t->nnodes; k++)
		if (t->nodes[k].count) {
			ngroups++;
			pool_len += t->nodes[k].depth;
		}
	groups = calloc(ngroups ? ngroups : 1, sizeof(*groups));
	res->pool = malloc((pool_len ? pool_len : 1) * sizeof(*res->pool));
	if (!groups || !res->pool) {
		free(groups);
		free(res->pool);
		res->pool = NULL;
		return VMHEAP_ENOMEM;
	}
	ngroups = 0;
	for (size_t k = 0; k < t->nnodes; k++) {
		const struct node *x = &t->nodes[k];
		uint64_t *shape = res->pool + at;
		uint32_t top = (uint32_t)k;
		size_t root = 0;

		if (!x->count)
			continue;
		for (uint32_t y = (uint32_t)k, d = x->depth; d--;
		     y = t->nodes[y].parent) {
			shape[d] = t->g->classes[t->nodes[y].cls].id;
			top = y;
		}
		/* the example's own root record (another root object of the
		 * same class and kind may have made the top node): the first
		 * record of its path's root object */
		vmheap_graph_path(t->g, t->root_of[x->example], NULL, 0, &root);
		groups[ngroups++] = (struct vmheap_graph_path_group){
		    .count = x->count,
		    .bytes = x->bytes,
		    .example = x->example,
		    .root = root,
		    .kind_string_id = t->nodes[top].kind,
		    .length = x->depth,
		    .classes = shape,
		};
		at += x->depth;
	}
	qsort(groups, ngroups, sizeof(*groups), compare_groups);
	res->pub.groups = groups;
	res->pub.group_count = ngroups;
	return 0;
}

static int merge(struct trie *t, struct object_paths_owned *res,
		 const uint32_t *objects, size_t n)
{
	vmheap_graph *g = t->g;

	for (size_t k = 0; k < n; k++) {
		uint32_t v = objects[k];
		uint64_t bytes = vmheap_graph_object_bytes(g, v);

		res->pub.instances++;
		if (g->path_parent[v] == VMHEAP_GRAPH_NONE) {
			res->pub.unreachable++;
			graph_add_bytes(g, &res->pub.unreachable_bytes, bytes);
			continue;
		}
		uint32_t node = shape_of(t, v);
		if (node == NO_NODE)
			return VMHEAP_ENOMEM;
		struct node *x = &t->nodes[node];
		x->count++;
		graph_add_bytes(g, &x->bytes, bytes);
		if (x->example == NO_NODE || v < x->example)
			x->example = v;
	}
	return collect(t, res);
}

int vmheap_graph_object_paths(vmheap_graph *g, const uint32_t *objects,
			      size_t n, struct vmheap_graph_class_paths **out)
{
	struct trie t = {.g = g};
	struct object_paths_owned *res;
	int rc;

	*out = NULL;
	if ((rc = graph_paths_for(g, objects, n)) < 0)
		return rc;
	res = calloc(1, sizeof(*res));
	t.memo = malloc((g->n ? g->n : 1) * sizeof(*t.memo));
	t.root_of = malloc((g->n ? g->n : 1) * sizeof(*t.root_of));
	if (res && t.memo && t.root_of) {
		memset(t.memo, 0xff, (size_t)g->n * sizeof(*t.memo));
		rc = merge(&t, res, objects, n);
	} else {
		rc = VMHEAP_ENOMEM;
	}
	free(t.nodes);
	free(t.table);
	free(t.memo);
	free(t.root_of);
	free(t.stack);
	if (rc < 0) {
		vmheap_graph_object_paths_free(res ? &res->pub : NULL);
		return graph_fail(g, rc, "out of memory for the paths");
	}
	*out = &res->pub;
	return 0;
}

void vmheap_graph_object_paths_free(struct vmheap_graph_class_paths *paths)
{
	struct object_paths_owned *res = (struct object_paths_owned *)paths;

	if (!res)
		return;
	free(res->pub.groups);
	free(res->pool);
	free(res);
}
