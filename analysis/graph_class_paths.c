/*
 * graph_class_paths.c - the shortest paths of every instance of a class,
 * merged by shape (root kind and the classes from the root object down to
 * the instance), counted and summed.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

/* The result with the storage of its shapes. */
struct class_paths_owned {
	struct vmheap_graph_class_paths pub;
	uint64_t *pool; /* every group's class ids, one after another */
};

struct merge {
	vmheap_graph *g;
	struct vmheap_graph_path_group *groups;
	size_t ngroups, groups_cap;
	size_t *shape_off; /* [groups_cap] offset of each shape in pool */
	uint64_t *hashes;  /* [groups_cap] */
	uint32_t *table;   /* group index + 1, open addressing */
	size_t table_cap;  /* power of two */
	uint64_t *pool;
	size_t pool_len, pool_cap;
	uint64_t *shape; /* the instance being merged */
	size_t shape_len, shape_cap;
};

static uint64_t hash_shape(uint64_t kind, const uint64_t *c, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ kind;

	for (size_t k = 0; k < len; k++) {
		h ^= c[k];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return h ^ len;
}

static int shape_push(struct merge *m, uint64_t class_id)
{
	if (m->shape_len == m->shape_cap) {
		void *p = vmheap_array_grow(m->shape, &m->shape_cap,
					    sizeof(*m->shape), 64);
		if (!p)
			return VMHEAP_ENOMEM;
		m->shape = p;
	}
	m->shape[m->shape_len++] = class_id;
	return 0;
}

static int grow_table(struct merge *m)
{
	size_t cap = m->table_cap ? m->table_cap * 2 : 64;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < m->ngroups; k++) {
		size_t h = m->hashes[k] & (cap - 1);
		while (t[h])
			h = (h + 1) & (cap - 1);
		t[h] = (uint32_t)k + 1;
	}
	free(m->table);
	m->table = t;
	m->table_cap = cap;
	return 0;
}

/* Add instance `i`, whose path shape is in m->shape, to its group. */
static int merge_instance(struct merge *m, uint32_t i, size_t root)
{
	vmheap_graph *g = m->g;
	uint64_t kind = g->roots[root].kind_string_id;
	uint64_t h = hash_shape(kind, m->shape, m->shape_len);
	uint64_t bytes = vmheap_graph_object_bytes(g, i);
	size_t slot;

	if (2 * (m->ngroups + 1) > m->table_cap && grow_table(m) < 0)
		return VMHEAP_ENOMEM;
	for (slot = h & (m->table_cap - 1); m->table[slot];
	     slot = (slot + 1) & (m->table_cap - 1)) {
		size_t k = m->table[slot] - 1;
		struct vmheap_graph_path_group *grp = &m->groups[k];
		if (m->hashes[k] == h && grp->kind_string_id == kind &&
		    grp->length == m->shape_len &&
		    !memcmp(m->pool + m->shape_off[k], m->shape,
			    m->shape_len * sizeof(*m->shape))) {
			grp->count++;
			grp->bytes += bytes;
			return 0;
		}
	}
	if (m->ngroups == m->groups_cap) {
		size_t cap = m->groups_cap;
		void *p =
		    vmheap_array_grow(m->groups, &cap, sizeof(*m->groups), 16);
		if (!p)
			return VMHEAP_ENOMEM;
		m->groups = p;
		if (!(p = realloc(m->shape_off, cap * sizeof(*m->shape_off))))
			return VMHEAP_ENOMEM;
		m->shape_off = p;
		if (!(p = realloc(m->hashes, cap * sizeof(*m->hashes))))
			return VMHEAP_ENOMEM;
		m->hashes = p;
		m->groups_cap = cap;
	}
	while (m->pool_len + m->shape_len > m->pool_cap) {
		void *p = vmheap_array_grow(m->pool, &m->pool_cap,
					    sizeof(*m->pool), 256);
		if (!p)
			return VMHEAP_ENOMEM;
		m->pool = p;
	}
	memcpy(m->pool + m->pool_len, m->shape,
	       m->shape_len * sizeof(*m->shape));
	m->shape_off[m->ngroups] = m->pool_len;
	m->pool_len += m->shape_len;
	m->hashes[m->ngroups] = h;
	m->groups[m->ngroups] = (struct vmheap_graph_path_group){
	    .count = 1,
	    .bytes = bytes,
	    .example = i,
	    .root = root,
	    .kind_string_id = kind,
	    .length = m->shape_len,
	};
	m->table[slot] = (uint32_t)++m->ngroups;
	return 0;
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

static int merge_class(struct merge *m, struct class_paths_owned *res,
		       uint32_t c)
{
	vmheap_graph *g = m->g;
	int rc;

	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t v = i;
		size_t root;

		if (g->class_of[i] != c)
			continue;
		res->pub.instances++;
		if (g->path_parent[i] == VMHEAP_GRAPH_NONE) {
			res->pub.unreachable++;
			res->pub.unreachable_bytes +=
			    vmheap_graph_object_bytes(g, i);
			continue;
		}
		m->shape_len = 0;
		for (;; v = g->path_parent[v]) {
			if ((rc = shape_push(
				 m, vmheap_graph_object_class(g, v))) < 0)
				return rc;
			if (g->path_parent[v] == VMHEAP_GRAPH_ROOT)
				break;
		}
		for (size_t a = 0, b = m->shape_len - 1; a < b; a++, b--) {
			uint64_t t = m->shape[a];
			m->shape[a] = m->shape[b];
			m->shape[b] = t;
		}
		vmheap_graph_path(g, v, NULL, 0, &root);
		if ((rc = merge_instance(m, i, root)) < 0)
			return rc;
	}
	/* the pool has stopped moving: point each group at its shape */
	for (size_t k = 0; k < m->ngroups; k++)
		m->groups[k].classes = m->pool + m->shape_off[k];
	if (m->ngroups)
		qsort(m->groups, m->ngroups, sizeof(*m->groups),
		      compare_groups);
	return 0;
}

int vmheap_graph_class_paths(vmheap_graph *g, uint64_t class_id,
			     struct vmheap_graph_class_paths **out)
{
	struct merge m = {.g = g};
	struct class_paths_owned *res;
	uint32_t c;
	int rc;

	*out = NULL;
	if ((rc = vmheap_graph_shortest_paths(g)) < 0)
		return rc;
	if (!(res = calloc(1, sizeof(*res))))
		return graph_fail(g, VMHEAP_ENOMEM,
				  "out of memory for the class paths");
	res->pub.class_id = class_id;
	c = graph_class_lookup(g, class_id);
	if (c != UINT32_MAX && (rc = merge_class(&m, res, c)) < 0) {
		free(m.groups);
		free(m.pool);
		free(res);
		res = NULL;
	} else {
		res->pub.groups = m.groups;
		res->pub.group_count = m.ngroups;
		res->pool = m.pool;
	}
	free(m.shape_off);
	free(m.hashes);
	free(m.table);
	free(m.shape);
	if (!res)
		return graph_fail(g, rc, "out of memory for the class paths");
	*out = &res->pub;
	return 0;
}

void vmheap_graph_class_paths_free(struct vmheap_graph_class_paths *paths)
{
	struct class_paths_owned *res = (struct class_paths_owned *)paths;

	if (!res)
		return;
	free(res->pub.groups);
	free(res->pool);
	free(res);
}
