/*
 * graph_paths.c - shortest paths from the roots: a breadth-first search
 * from the virtual root that keeps the parent of every object, so that any
 * object's path is walked back from it.
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Root record indices ordered by object, then by record, so that the first
 * record of an object is found by binary search. */
static int index_roots(vmheap_graph *g)
{
	size_t k, m = 0;
	uint64_t *keys;

	if (g->nroots > UINT32_MAX)
		return graph_fail(g, VMHEAP_ELIMIT, "more than %u roots",
				  (unsigned)UINT32_MAX);
	keys = malloc((g->nroots ? g->nroots : 1) * sizeof(*keys));
	g->root_by_obj =
	    malloc((g->nroots ? g->nroots : 1) * sizeof(*g->root_by_obj));
	if (!keys || !g->root_by_obj) {
		free(keys);
		free(g->root_by_obj);
		g->root_by_obj = NULL;
		return VMHEAP_ENOMEM;
	}
	for (k = 0; k < g->nroots; k++)
		if (g->roots[k].object != VMHEAP_GRAPH_NONE)
			keys[m++] = (uint64_t)g->roots[k].object << 32 | k;
	qsort(keys, m, sizeof(*keys), compare_u64);
	for (k = 0; k < m; k++)
		g->root_by_obj[k] = (uint32_t)keys[k];
	free(keys);
	g->nroot_by_obj = m;
	return 0;
}

/* The root record that the path of root object `v` starts from: its
 * first, or with the explaining rule its first not of a stack kind if it
 * has one (the search took that one). */
static size_t first_root_of(const vmheap_graph *g, uint32_t v)
{
	size_t lo = 0, hi = g->nroot_by_obj;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->roots[g->root_by_obj[mid]].object < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (g->path_rule == VMHEAP_GRAPH_PATHS_EXPLAINING)
		for (size_t k = lo; k < g->nroot_by_obj &&
				    g->roots[g->root_by_obj[k]].object == v;
		     k++)
			if (!vmheap_graph_root_is_stack(g, g->root_by_obj[k]))
				return g->root_by_obj[k];
	return g->root_by_obj[lo];
}

/* Seeds of the next layer of the explaining paths: objects first reached
 * by a reference that costs (a stack reference, an unnamed or element
 * reference held by an internal object, a stack root), in the order of
 * their lengths. */
struct seed {
	uint32_t object, parent, edge, len;
};

struct seeds {
	struct seed *v;
	size_t n, cap, at;
};

static int seed_push(struct seeds *s, uint32_t object, uint32_t parent,
		     uint32_t edge, uint32_t len)
{
	if (s->n == s->cap) {
		void *p = vmheap_array_grow(s->v, &s->cap, sizeof(*s->v), 64);
		if (!p)
			return VMHEAP_ENOMEM;
		s->v = p;
	}
	s->v[s->n++] = (struct seed){object, parent, edge, len};
	return 0;
}

/* What a search needs to know of a name code: bits of a code below
 * GRAPH_NAME_INDEX (an element index's code is neither). */
#define CODE_STACK 1u
#define CODE_NAMED_FIELD 2u

/* The search's state: parent and edge are the results; queue the objects
 * reached, level by level (each object is queued once in all).  With the
 * ranked rule, code_kind[c] holds the CODE_ bits of name code c (NULL
 * without names), any_stack whether one of them has CODE_STACK, and
 * internal_obj one bit per object of a VM-internal class (NULL when no
 * class is): a reference's name is read only when it can make the
 * reference costly, and an object's class not at all. */
struct search {
	vmheap_graph *g;
	int ranked;
	uint32_t *parent, *edge, *queue;
	uint32_t tail;
	struct seeds next;
	unsigned char *code_kind;
	int any_stack;
	uint64_t *internal_obj;
	/* one bit per object reached: the test of every reference (n bits
	 * stay in the cache where parent[] would miss it) */
	uint64_t *seen;
	/* a search to some objects only: one bit per object still wanted,
	 * and how many; the search stops when the last is reached */
	uint64_t *want;
	size_t wanted;
};

static inline int seen(const struct search *s, uint32_t w)
{
	return s->seen[w / 64] >> w % 64 & 1;
}

/* The per-code and per-class bits of a ranked search, so that following
 * a reference reads one byte. */
static int search_kinds(struct search *s)
{
	const vmheap_graph *g = s->g;
	unsigned char *internal = malloc(g->nclasses ? g->nclasses : 1);
	int any_internal = 0;

	if (!internal)
		return VMHEAP_ENOMEM;
	for (size_t c = 0; c < g->nclasses; c++)
		any_internal |= internal[c] =
		    (unsigned char)graph_class_is_internal(g, (uint32_t)c);
	if (any_internal &&
	    !(s->internal_obj =
		  calloc((size_t)g->n / 64 + 1, sizeof(*s->internal_obj)))) {
		free(internal);
		return VMHEAP_ENOMEM;
	}
	for (uint32_t i = 0; any_internal && i < g->n; i++)
		if (internal[g->class_of[i]])
			s->internal_obj[i / 64] |= 1ull << i % 64;
	free(internal);
	if (!g->edge_name)
		return 0;
	s->code_kind = calloc(g->nname_table + 1, 1);
	if (!s->code_kind)
		return VMHEAP_ENOMEM;
	for (size_t c = 1; c <= g->nname_table; c++) {
		uint32_t code = (uint32_t)c;
		s->code_kind[c] =
		    (unsigned char)((graph_code_is_stack(g, code) ? CODE_STACK
								  : 0) |
				    (graph_code_is_named_field(g, code)
					 ? CODE_NAMED_FIELD
					 : 0));
		s->any_stack |= s->code_kind[c] & CODE_STACK;
	}
	return 0;
}

/* The CODE_ bits of the reference at fwd position k. */
static inline unsigned edge_kind(const struct search *s, uint32_t k)
{
	uint32_t code;

	if (!s->code_kind)
		return 0;
	code = s->g->edge_name[k];
	return code & GRAPH_NAME_INDEX ? 0 : s->code_kind[code];
}

/* w is reached from v by fwd position k (v VMHEAP_GRAPH_ROOT: a root):
 * queued for the next level. */
static void reach(struct search *s, uint32_t w, uint32_t v, uint32_t k)
{
	s->seen[w / 64] |= 1ull << w % 64;
	s->parent[w] = v;
	if (s->edge)
		s->edge[w] = k;
	s->queue[s->tail++] = w;
	if (s->want && (s->want[w / 64] >> w % 64 & 1))
		s->wanted--;
}

/* 1 when a search to some objects has reached them all. */
static inline int search_done(const struct search *s)
{
	return s->want && !s->wanted;
}

/* Follow the references of v (path length len): free ones reach their
 * targets now, costly ones become seeds of the next layer. */
static int expand(struct search *s, uint32_t v, uint32_t len)
{
	const vmheap_graph *g = s->g;
	int internal =
	    s->internal_obj && (s->internal_obj[v / 64] >> v % 64 & 1);
	/* a name makes a reference costly only if it is a stack's, or
	 * not a named field's when v is internal */
	int named_cost = s->ranked && (s->any_stack || internal);

	for (uint32_t k = g->fwd_off[v]; k < g->fwd_off[v + 1]; k++) {
		uint32_t w = g->fwd[k];
		if (seen(s, w))
			continue;
		if (search_done(s))
			break;
		unsigned kind = named_cost ? edge_kind(s, k) : 0;
		if (s->ranked && ((kind & CODE_STACK) ||
				  (internal && !(kind & CODE_NAMED_FIELD)))) {
			if (seed_push(&s->next, w, v, k, len + 1) < 0)
				return VMHEAP_ENOMEM;
		} else {
			reach(s, w, v, k);
		}
	}
	return 0;
}

/* Start loading what expanding the queued objects ahead of q will read
 * (random reads: a cache miss each): their reference offsets far ahead,
 * their references (and names, if a name can be a stack's) nearer. */
#define AHEAD_OFF 32
#define AHEAD_REFS 16

static inline void prefetch_ahead(const struct search *s, uint32_t q)
{
	const vmheap_graph *g = s->g;

	if (q + AHEAD_OFF < s->tail) {
		uint32_t x = s->queue[q + AHEAD_OFF];
		__builtin_prefetch(&g->fwd_off[x]);
	}
	if (q + AHEAD_REFS < s->tail) {
		uint32_t x = s->queue[q + AHEAD_REFS];
		__builtin_prefetch(&g->fwd[g->fwd_off[x]]);
		if (s->any_stack)
			__builtin_prefetch(&g->edge_name[g->fwd_off[x]]);
	}
}

/* Reach the seeds of length len or less that nothing reached first. */
static void admit(struct search *s, struct seeds *cur, uint32_t len)
{
	while (cur->at < cur->n && cur->v[cur->at].len <= len &&
	       !search_done(s)) {
		const struct seed *x = &cur->v[cur->at++];
		if (!seen(s, x->object))
			reach(s, x->object, x->parent, x->edge);
	}
}

/*
 * The paths: with VMHEAP_GRAPH_PATHS_SHORTEST a plain breadth-first
 * search; else (the explaining rule) fewest costly steps first, then
 * fewest references.  Layer b finds the objects whose best path has b
 * costly steps: a breadth-first search over the free references, level
 * by level, where the seeds that layer b - 1 reached by a costly step
 * join the level of their length (after the objects that free
 * references reached at that length: a tie).  An object is final when
 * first reached, is queued once, and each reference is followed once:
 * linear.  With no costly step (the shortest rule, or a dump without
 * stack references and internal objects) it is the breadth-first
 * search: the roots in file order, then each object's references in
 * record order.
 */
static int search(struct search *s)
{
	vmheap_graph *g = s->g;
	struct seeds cur = {0};
	int rc = 0;

	for (size_t k = 0; k < g->nroots && rc == 0; k++) {
		uint32_t v = g->roots[k].object;
		if (v == VMHEAP_GRAPH_NONE)
			continue;
		rc = seed_push(s->ranked && vmheap_graph_root_is_stack(g, k)
				   ? &s->next
				   : &cur,
			       v, VMHEAP_GRAPH_ROOT, 0, 0);
	}
	while (rc == 0 && !search_done(s)) {
		uint32_t start = s->tail, len;

		if (cur.at == cur.n) { /* the next layer */
			free(cur.v);
			cur = s->next;
			memset(&s->next, 0, sizeof(s->next));
			if (!cur.n)
				break;
		}
		len = cur.v[cur.at].len;
		admit(s, &cur, len);
		while (rc == 0 && !search_done(s) &&
		       (start < s->tail || cur.at < cur.n)) {
			uint32_t end = s->tail;
			if (start == end) { /* a gap: the next seeds */
				len = cur.v[cur.at].len;
				admit(s, &cur, len);
				continue;
			}
			for (uint32_t q = start;
			     q < end && rc == 0 && !search_done(s); q++) {
				prefetch_ahead(s, q);
				rc = expand(s, s->queue[q], len);
			}
			start = end;
			admit(s, &cur, ++len);
		}
	}
	free(cur.v);
	free(s->next.v);
	return rc;
}

/* Forget the paths of a search that stopped early (g->path_partial). */
static void drop_paths(vmheap_graph *g)
{
	free(g->path_parent);
	free(g->path_edge);
	free(g->root_by_obj);
	g->path_parent = NULL;
	g->path_edge = NULL;
	g->root_by_obj = NULL;
	g->nroot_by_obj = 0;
	g->path_partial = 0;
}

/* 1 when the paths are known for every one of objects[0..n). */
static int paths_cover(const vmheap_graph *g, const uint32_t *objects, size_t n)
{
	if (!g->path_parent)
		return 0;
	if (!g->path_partial)
		return 1;
	for (size_t k = 0; k < n; k++)
		if (g->path_parent[objects[k]] == VMHEAP_GRAPH_NONE)
			return 0;
	return 1;
}

/* The wanted bits of objects[0..n) into s (a search to them only). */
static int want_objects(struct search *s, const uint32_t *objects, size_t n)
{
	s->want = calloc((size_t)s->g->n / 64 + 1, sizeof(*s->want));
	if (!s->want)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < n; k++) {
		uint32_t w = objects[k];
		if (!(s->want[w / 64] >> w % 64 & 1)) {
			s->want[w / 64] |= 1ull << w % 64;
			s->wanted++;
		}
	}
	return 0;
}

/* The search from the roots, to every object (objects NULL) or until
 * every one of objects[0..n) is reached. */
static int search_paths(vmheap_graph *g, const uint32_t *objects, size_t n)
{
	uint32_t nobj = g->n;
	struct search s = {.g = g};
	int rc;

	if (g->path_parent)
		drop_paths(g); /* partial: searched again, to the end */
	s.ranked = g->path_rule != VMHEAP_GRAPH_PATHS_SHORTEST;
	s.parent = malloc(((size_t)nobj + 1) * sizeof(*s.parent));
	s.queue = malloc(((size_t)nobj + 1) * sizeof(*s.queue));
	s.seen = calloc((size_t)nobj / 64 + 1, sizeof(*s.seen));
	if (g->edge_name) /* names on the paths: the edge of each object */
		s.edge = malloc(((size_t)nobj + 1) * sizeof(*s.edge));
	graph_huge_pages(s.parent, ((size_t)nobj + 1) * sizeof(*s.parent));
	graph_huge_pages(s.queue, ((size_t)nobj + 1) * sizeof(*s.queue));
	graph_huge_pages(s.edge, ((size_t)nobj + 1) * sizeof(*s.edge));
	if (!s.parent || !s.queue || !s.seen || (g->edge_name && !s.edge) ||
	    (objects && want_objects(&s, objects, n) < 0)) {
		rc = graph_fail(g, VMHEAP_ENOMEM,
				"out of memory for the shortest paths");
		goto fail;
	}
	if (s.ranked && search_kinds(&s) < 0) {
		rc = graph_fail(g, VMHEAP_ENOMEM,
				"out of memory for the shortest paths");
		goto fail;
	}
	if ((rc = index_roots(g)) < 0) {
		if (rc == VMHEAP_ENOMEM)
			graph_fail(g, rc, "out of memory for the roots");
		goto fail;
	}
	memset(s.parent, 0xff, (size_t)nobj * sizeof(*s.parent));
	if ((rc = search(&s)) < 0) {
		free(g->root_by_obj);
		g->root_by_obj = NULL;
		graph_fail(g, rc, "out of memory for the shortest paths");
		goto fail;
	}
	free(s.queue);
	free(s.seen);
	free(s.code_kind);
	free(s.internal_obj);
	free(s.want);
	g->path_parent = s.parent;
	g->path_edge = s.edge;
	/* a search that reached every wanted object before its end knows
	 * no more than their paths and those it met on the way */
	g->path_partial = search_done(&s) && s.tail < nobj;
	if (!g->have_unreachable && !g->path_partial) {
		g->unreachable = nobj - s.tail;
		g->unreachable_bytes = 0;
		for (uint32_t i = 0; i < nobj; i++)
			if (s.parent[i] == VMHEAP_GRAPH_NONE)
				graph_add_bytes(g, &g->unreachable_bytes,
						vmheap_graph_object_bytes(g, i));
		g->have_unreachable = 1;
	}
	return 0;
fail:
	free(s.parent);
	free(s.queue);
	free(s.edge);
	free(s.seen);
	free(s.code_kind);
	free(s.internal_obj);
	free(s.want);
	return rc;
}

int vmheap_graph_shortest_paths(vmheap_graph *g)
{
	if (g->path_parent && !g->path_partial)
		return 0;
	return search_paths(g, NULL, 0);
}

int vmheap_graph_shortest_paths_to(vmheap_graph *g, const uint32_t *objects,
				   size_t n)
{
	if (paths_cover(g, objects, n))
		return 0;
	return search_paths(g, objects, n);
}

int graph_paths_for(vmheap_graph *g, const uint32_t *objects, size_t n)
{
	if (paths_cover(g, objects, n))
		return 0;
	return vmheap_graph_shortest_paths(g);
}

int vmheap_graph_set_path_rule(vmheap_graph *g, int rule)
{
	if (rule != VMHEAP_GRAPH_PATHS_EXPLAINING &&
	    rule != VMHEAP_GRAPH_PATHS_SHORTEST)
		return VMHEAP_EINVAL;
	if (g->path_parent)
		return g->path_rule == rule ? 0 : VMHEAP_ESTATE;
	g->path_rule = rule;
	return 0;
}

uint32_t vmheap_graph_path_parent(const vmheap_graph *g, uint32_t i)
{
	return g->path_parent ? g->path_parent[i] : VMHEAP_GRAPH_NONE;
}

int64_t vmheap_graph_path(const vmheap_graph *g, uint32_t i, uint32_t *path,
			  size_t cap, size_t *root)
{
	uint32_t v = i;
	int64_t len = 0;

	if (!g->path_parent)
		return VMHEAP_ESTATE;
	if (g->path_parent[i] == VMHEAP_GRAPH_NONE)
		return 0;
	/* count, then fill from the end */
	for (v = i;; v = g->path_parent[v]) {
		len++;
		if (g->path_parent[v] == VMHEAP_GRAPH_ROOT)
			break;
	}
	if (root)
		*root = first_root_of(g, v);
	if (path) {
		int64_t k = len - 1;
		for (v = i; k >= 0; v = g->path_parent[v], k--)
			if ((size_t)k < cap)
				path[k] = v;
	}
	return len;
}
