/*
 * graph_retainers.c - every reference to a set of objects, grouped by the
 * holder's class and the reference's name (vmheap-path --retainers): one
 * pass over the references with a mark per target.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"
#include "vmheap_graph_query.h"

struct table {
	struct vmheap_graph_retainer_group *v;
	size_t n, cap;
	uint32_t *slot; /* group index + 1, by hash of the key */
	size_t slots;	/* power of two */
	uint32_t *last; /* [group] last holder counted, + 1 */
};

static uint64_t key_hash(uint32_t cls, uint64_t name)
{
	uint64_t h = ((uint64_t)cls << 32 ^ name) * 0x9e3779b97f4a7c15ULL;

	return h ^ h >> 29;
}

static int rehash(struct table *t)
{
	size_t slots = t->slots ? 2 * t->slots : 64;
	uint32_t *slot = calloc(slots, sizeof(*slot));

	if (!slot)
		return VMHEAP_ENOMEM;
	for (size_t x = 0; x < t->n; x++) {
		size_t h = key_hash(t->v[x].holder_class, t->v[x].key) &
			   (slots - 1);
		while (slot[h])
			h = (h + 1) & (slots - 1);
		slot[h] = (uint32_t)x + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->slots = slots;
	return 0;
}

/* The group of (cls, key), made if new; NULL when out of memory. */
static struct vmheap_graph_retainer_group *
group_of(struct table *t, uint32_t cls, uint64_t key, uint32_t *index)
{
	size_t h;

	if (2 * (t->n + 1) > t->slots && rehash(t) < 0)
		return NULL;
	for (h = key_hash(cls, key) & (t->slots - 1); t->slot[h];
	     h = (h + 1) & (t->slots - 1)) {
		struct vmheap_graph_retainer_group *x = &t->v[t->slot[h] - 1];
		if (x->holder_class == cls && x->key == key) {
			*index = t->slot[h] - 1;
			return x;
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap;
		void *p = vmheap_array_grow(t->v, &t->cap, sizeof(*t->v), 16);
		if (!p)
			return NULL;
		t->v = p;
		p = realloc(t->last, t->cap * sizeof(*t->last));
		if (!p) {
			t->cap = cap;
			return NULL;
		}
		t->last = p;
	}
	t->v[t->n] = (struct vmheap_graph_retainer_group){
	    .holder_class = cls,
	    .key = key,
	    .example = VMHEAP_GRAPH_NONE,
	};
	t->last[t->n] = 0;
	t->slot[h] = (uint32_t)t->n + 1;
	*index = (uint32_t)t->n;
	return &t->v[t->n++];
}

/* The group key of reference k (fwd position): its name's code, every
 * element index and hash key one code (graph_path_shape_name's rule). */
static uint64_t name_key(const vmheap_graph *g, uint32_t k)
{
	uint32_t code = g->edge_name ? g->edge_name[k] : GRAPH_NAME_NONE;
	const struct graph_name *x;

	if (code == GRAPH_NAME_NONE)
		return code;
	if (code & GRAPH_NAME_INDEX)
		return GRAPH_NAME_ELEMENT;
	x = &g->name_table[code - 1];
	if (x->value < 0 || (x->has_text && x->len && g->names[x->off] == '['))
		return GRAPH_NAME_ELEMENT;
	return code;
}

static int compare_groups(const void *a, const void *b)
{
	const struct vmheap_graph_retainer_group *x = a, *y = b;

	if (x->references != y->references)
		return x->references > y->references ? -1 : 1;
	if (x->holders != y->holders)
		return x->holders > y->holders ? -1 : 1;
	return x->example < y->example ? -1 : x->example > y->example;
}

static int count(const vmheap_graph *g, const unsigned char *target,
		 struct table *t, struct vmheap_graph_retainers *res)
{
	for (uint32_t s = 0; s < g->n; s++)
		for (uint32_t k = g->fwd_off[s]; k < g->fwd_off[s + 1]; k++) {
			struct vmheap_graph_retainer_group *x;
			uint32_t w = g->fwd[k], at;
			if (!target[w])
				continue;
			x = group_of(t, g->class_of[s], name_key(g, k), &at);
			if (!x)
				return VMHEAP_ENOMEM;
			x->references++;
			res->references++;
			if (t->last[at] != s + 1) {
				t->last[at] = s + 1;
				x->holders++;
			}
			if (x->example == VMHEAP_GRAPH_NONE) {
				x->example = s;
				x->example_reference = k - g->fwd_off[s];
				x->example_target = w;
			}
			x->stack |= graph_edge_is_stack(g, k);
			x->internal |= graph_class_is_internal(g, g->class_of[s]);
		}
	for (size_t k = 0; k < g->nroots; k++) {
		struct vmheap_graph_retainer_group *x;
		uint32_t w = g->roots[k].object, at;
		if (w == VMHEAP_GRAPH_NONE || !target[w])
			continue;
		x = group_of(t, VMHEAP_GRAPH_ROOT, g->roots[k].kind_string_id,
			     &at);
		if (!x)
			return VMHEAP_ENOMEM;
		x->references++;
		x->holders++;
		res->roots++;
		if (x->example == VMHEAP_GRAPH_NONE) {
			x->example = (uint32_t)k;
			x->example_target = w;
		}
		x->stack |= vmheap_graph_root_is_stack(g, k);
	}
	return 0;
}

int vmheap_graph_retainers(vmheap_graph *g, const uint32_t *objects,
			   size_t n, struct vmheap_graph_retainers **out)
{
	struct vmheap_graph_retainers *res = calloc(1, sizeof(*res));
	unsigned char *target = calloc(g->n ? g->n : 1, 1);
	struct table t = {0};
	int rc = VMHEAP_ENOMEM;

	*out = NULL;
	if (res && target) {
		for (size_t k = 0; k < n; k++)
			if (!target[objects[k]]) {
				target[objects[k]] = 1;
				res->targets++;
			}
		rc = count(g, target, &t, res);
	}
	free(target);
	free(t.slot);
	free(t.last);
	if (rc < 0) {
		free(t.v);
		free(res);
		return graph_fail(g, rc, "out of memory for the retainers");
	}
	for (size_t x = 0; x < t.n; x++) {
		struct vmheap_graph_retainer_group *grp = &t.v[x];
		if (grp->holder_class == VMHEAP_GRAPH_ROOT) {
			grp->holder_class_id = 0;
			continue;
		}
		grp->holder_class_id = g->classes[grp->holder_class].id;
		vmheap_graph_reference_name(g, grp->example,
					    grp->example_reference, &grp->name);
		grp->element = grp->key == GRAPH_NAME_ELEMENT;
	}
	qsort(t.v, t.n, sizeof(*t.v), compare_groups);
	res->groups = t.v;
	res->group_count = t.n;
	*out = res;
	return 0;
}

void vmheap_graph_retainers_free(struct vmheap_graph_retainers *r)
{
	if (!r)
		return;
	free(r->groups);
	free(r);
}
