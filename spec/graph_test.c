/*
 * graph_test.c - Check suite of the heap graph (analysis/vmheap_graph.h):
 * dumps written by the real writer to files, read back into a graph, and
 * every answer compared with brute force on the same heap:
 *
 *  - retained size of v: the bytes that no root reaches once v is removed
 *    (marking from the roots without v);
 *  - immediate dominator: d dominates v iff no root reaches v once d is
 *    removed; the idom is the strict dominator that all others dominate;
 *  - shortest path length: a plain breadth-first search from the roots;
 *
 * on hundreds of small random heaps (cycles, self-loops, duplicate
 * references, references and roots to missing ids, unreachable objects,
 * objects reached from several roots, ids in and out of order), and on
 * the shapes that break careless code: an empty dump, one object, a
 * 1M-long chain (no recursion may follow it), an object with more
 * references than one record holds, more-references records away from
 * their object (built by hand: the writer never makes them), duplicate
 * object ids.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <msgpack.h>

#include "vmheap.h"
#include "vmheap_graph.h"
#include "vmheap_graph_query.h"
#include "lib/vmheap_spec.h"

/* ------------------------------------------------------------ files */

/* A path in the suite's directory, unique to the calling test process. */
static const char *dump_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s-%ld.vmheap", spec_root(), name,
		 (long)getpid());
	return path;
}

/* ------------------------------------------------------------ heaps */

#define KIND_VM 1	/* string record "vm" */
#define KIND_STACK 2	/* string record "machine_context" */
#define KIND_NOSTRING 9 /* no string record has this id */
#define CLASSES 4	/* class ids 1..CLASSES, named "Class<id>" */
#define INTERNAL_CLASS 4 /* ... but this one "<internal4>": VM-internal */

/* A heap as the test writes it: objects in file order, raw reference ids
 * (some of them missing from the heap), root records. */
struct heap {
	uint32_t n;
	uint64_t *ids, *cls, *bytes;
	uint32_t *ref_off; /* [n + 1] into refs */
	uint64_t *refs;
	size_t nrefs;
	size_t nroots;
	uint64_t *root_kind, *root_obj;
};

static void heap_free(struct heap *h)
{
	free(h->ids);
	free(h->cls);
	free(h->bytes);
	free(h->ref_off);
	free(h->refs);
	free(h->root_kind);
	free(h->root_obj);
	memset(h, 0, sizeof(*h));
}

static void write_heap(const struct heap *h, const char *path)
{
	static const char *const kinds[] = {"object"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	char name[32];

	ck_assert_int_ge(fd, 0);
	opt.vm_name = "graph-test";
	opt.kind_names = kinds;
	opt.kind_count = 1;
	opt.block_bytes = 4096; /* several blocks even for small heaps */
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, KIND_VM, "vm", 2), 0);
	ck_assert_int_eq(
	    vmheap_writer_add_string(w, KIND_STACK, "machine_context", 15), 0);
	for (uint64_t c = 1; c <= CLASSES; c++) {
		int len = snprintf(name, sizeof(name),
				   c == INTERNAL_CLASS ? "<internal%llu>"
						       : "Class%llu",
				   (unsigned long long)c);
		ck_assert_int_eq(
		    vmheap_writer_add_class(w, c, name, (size_t)len, 0, 0), 0);
	}
	for (uint32_t i = 0; i < h->n; i++)
		ck_assert_int_eq(vmheap_writer_add_object(
				     w, h->ids[i], h->cls[i], h->bytes[i], 0,
				     h->refs ? h->refs + h->ref_off[i] : NULL,
				     h->ref_off[i + 1] - h->ref_off[i]),
				 0);
	for (size_t k = 0; k < h->nroots; k++)
		ck_assert_int_eq(
		    vmheap_writer_add_root(w, h->root_kind[k], h->root_obj[k]),
		    0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	ck_assert_int_eq(close(fd), 0);
}

static vmheap_graph *open_graph(const char *path)
{
	vmheap_graph *g = NULL;
	int rc = vmheap_graph_open_path(&g, path);

	ck_assert_msg(rc == 0, "open %s: %d %s", path, rc,
		      vmheap_graph_error(g));
	ck_assert_ptr_nonnull(g);
	return g;
}

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint64_t below(uint64_t n)
{
	return rng() % n;
}

/*
 * A random heap from `seed`: 1-40 objects at distinct ids (in increasing
 * order for even seeds, shuffled for odd ones), 0-4 references each to any
 * object (itself included, repeats allowed) or, one time in ten, to an id
 * that no object has; 0-5 root records, some repeated, some naming a
 * missing object or a kind with no string record.  A few objects are
 * larger than 4 GiB.
 */
static void random_heap(struct heap *h, uint64_t seed)
{
	uint32_t n = 1 + (uint32_t)below(40);

	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
	memset(h, 0, sizeof(*h));
	h->n = n;
	h->ids = calloc(n, sizeof(*h->ids));
	h->cls = calloc(n, sizeof(*h->cls));
	h->bytes = calloc(n, sizeof(*h->bytes));
	h->ref_off = calloc(n + 1, sizeof(*h->ref_off));
	h->refs = calloc((size_t)n * 4 + 1, sizeof(*h->refs));
	h->root_kind = calloc(6, sizeof(*h->root_kind));
	h->root_obj = calloc(6, sizeof(*h->root_obj));
	/* ids: 0x1000 + 40 k, every k distinct */
	for (uint32_t i = 0; i < n; i++)
		h->ids[i] = 0x1000 + 40 * (uint64_t)i;
	if (seed % 2)
		for (uint32_t i = n - 1; i > 0; i--) {
			uint32_t j = (uint32_t)below(i + 1);
			uint64_t t = h->ids[i];
			h->ids[i] = h->ids[j];
			h->ids[j] = t;
		}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nref = (uint32_t)below(5);
		h->cls[i] = 1 + below(CLASSES);
		h->bytes[i] = below(50) == 0 ? (5ULL << 32) + below(1000)
					     : 1 + below(1000);
		h->ref_off[i + 1] = h->ref_off[i] + nref;
		for (uint32_t k = 0; k < nref; k++)
			h->refs[h->nrefs++] =
			    below(10) == 0 ? 0x1000 + 40 * (uint64_t)n + 8
					   : h->ids[below(n)];
	}
	h->nroots = (size_t)below(6);
	for (size_t k = 0; k < h->nroots; k++) {
		uint64_t r = below(12);
		h->root_kind[k] = r == 0  ? KIND_NOSTRING
				  : r < 6 ? KIND_VM
					  : KIND_STACK;
		h->root_obj[k] = below(8) == 0 ? 0x999 : h->ids[below(n)];
		if (k > 0 && below(6) == 0)
			h->root_obj[k] = h->root_obj[k - 1];
	}
}

/* ------------------------------------------------------------ brute force */

/* The heap with references resolved to indices (missing ones dropped). */
struct plain {
	uint32_t n;
	uint32_t *off, *adj; /* CSR */
	uint32_t *roots;     /* root objects in record order, NONE if missing */
	size_t nroots;
	uint64_t missing;
};

static uint32_t plain_index(const struct heap *h, uint64_t id)
{
	for (uint32_t i = 0; i < h->n; i++)
		if (h->ids[i] == id)
			return i;
	return VMHEAP_GRAPH_NONE;
}

static void plain_of(struct plain *p, const struct heap *h)
{
	memset(p, 0, sizeof(*p));
	p->n = h->n;
	p->off = calloc(h->n + 1, sizeof(*p->off));
	p->adj = calloc(h->nrefs + 1, sizeof(*p->adj));
	p->roots = calloc(h->nroots + 1, sizeof(*p->roots));
	for (uint32_t i = 0; i < h->n; i++) {
		p->off[i + 1] = p->off[i];
		for (uint32_t k = h->ref_off[i]; k < h->ref_off[i + 1]; k++) {
			uint32_t t = plain_index(h, h->refs[k]);
			if (t == VMHEAP_GRAPH_NONE)
				p->missing++;
			else
				p->adj[p->off[i + 1]++] = t;
		}
	}
	p->nroots = h->nroots;
	for (size_t k = 0; k < h->nroots; k++)
		p->roots[k] = plain_index(h, h->root_obj[k]);
}

static void plain_free(struct plain *p)
{
	free(p->off);
	free(p->adj);
	free(p->roots);
}

/* Mark what the roots reach without going through `removed` (NONE: remove
 * nothing); dist[] gets the BFS distance from the roots (roots: 0). */
static void mark(const struct plain *p, uint32_t removed, char *seen,
		 uint32_t *dist)
{
	uint32_t *queue = calloc(p->n + 1, sizeof(*queue));
	uint32_t head = 0, tail = 0;

	memset(seen, 0, p->n);
	for (size_t k = 0; k < p->nroots; k++) {
		uint32_t v = p->roots[k];
		if (v != VMHEAP_GRAPH_NONE && v != removed && !seen[v]) {
			seen[v] = 1;
			if (dist)
				dist[v] = 0;
			queue[tail++] = v;
		}
	}
	while (head < tail) {
		uint32_t v = queue[head++];
		for (uint32_t k = p->off[v]; k < p->off[v + 1]; k++) {
			uint32_t w = p->adj[k];
			if (w != removed && !seen[w]) {
				seen[w] = 1;
				if (dist)
					dist[w] = dist[v] + 1;
				queue[tail++] = w;
			}
		}
	}
	free(queue);
}

static int has_edge(const struct plain *p, uint32_t from, uint32_t to)
{
	for (uint32_t k = p->off[from]; k < p->off[from + 1]; k++)
		if (p->adj[k] == to)
			return 1;
	return 0;
}

/* Check everything the graph says about heap `h` against brute force. */
static void check_against_brute_force(const struct heap *h, vmheap_graph *g,
				      uint64_t seed)
{
	struct plain p;
	uint32_t n = h->n;
	char *reach, *without;
	uint32_t *dist, *ndom;
	uint64_t unreach = 0, unreach_bytes = 0, got_count, got_bytes;

	plain_of(&p, h);
	reach = calloc(n + 1, 1);
	without = calloc((size_t)n * n + 1, 1); /* row d: reach without d */
	dist = calloc(n + 1, sizeof(*dist));
	ndom = calloc(n + 1, sizeof(*ndom));

	/* the graph as read */
	ck_assert_uint_eq(vmheap_graph_object_count(g), n);
	ck_assert_uint_eq(vmheap_graph_missing_references(g), p.missing);
	ck_assert_uint_eq(vmheap_graph_reference_count(g), p.off[n]);
	ck_assert_uint_eq(vmheap_graph_root_count(g), h->nroots);
	ck_assert_int_eq(vmheap_graph_index_referrers(g), 0);
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t *t, *s;
		uint32_t nt = vmheap_graph_references(g, i, &t);
		uint32_t ns = vmheap_graph_referrers(g, i, &s), want = 0;

		ck_assert_uint_eq(vmheap_graph_find(g, h->ids[i]), i);
		ck_assert_uint_eq(vmheap_graph_object_id(g, i), h->ids[i]);
		ck_assert_uint_eq(vmheap_graph_object_class(g, i), h->cls[i]);
		ck_assert_uint_eq(vmheap_graph_object_bytes(g, i), h->bytes[i]);
		ck_assert_uint_eq(nt, p.off[i + 1] - p.off[i]);
		for (uint32_t k = 0; k < nt; k++)
			ck_assert_uint_eq(t[k], p.adj[p.off[i] + k]);
		/* referrers: every source once per reference, increasing */
		for (uint32_t v = 0; v < n; v++)
			for (uint32_t k = p.off[v]; k < p.off[v + 1]; k++)
				if (p.adj[k] == i) {
					ck_assert_uint_lt(want, ns);
					ck_assert_uint_eq(s[want], v);
					want++;
				}
		ck_assert_uint_eq(ns, want);
	}
	ck_assert_uint_eq(vmheap_graph_find(g, 0x999), VMHEAP_GRAPH_NONE);
	for (size_t k = 0; k < h->nroots; k++) {
		const struct vmheap_graph_root *r = vmheap_graph_root(g, k);
		ck_assert_uint_eq(r->object, p.roots[k]);
		ck_assert_uint_eq(r->object_id, h->root_obj[k]);
		if (h->root_kind[k] == KIND_NOSTRING)
			ck_assert_ptr_null(r->kind);
		else
			ck_assert_str_eq(r->kind, h->root_kind[k] == KIND_VM
						      ? "vm"
						      : "machine_context");
	}

	/* brute force: reach without each object */
	mark(&p, VMHEAP_GRAPH_NONE, reach, dist);
	for (uint32_t d = 0; d < n; d++)
		mark(&p, d, without + (size_t)d * n, NULL);
	for (uint32_t v = 0; v < n; v++) {
		if (!reach[v]) {
			unreach++;
			unreach_bytes += h->bytes[v];
			continue;
		}
		for (uint32_t d = 0; d < n; d++)
			if (d != v && !without[(size_t)d * n + v])
				ndom[v]++;
	}

	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	ck_assert_int_eq(vmheap_graph_dominators(g), 0); /* once is enough */
	ck_assert_int_eq(vmheap_graph_unreachable(g, &got_count, &got_bytes),
			 0);
	ck_assert_msg(got_count == unreach && got_bytes == unreach_bytes,
		      "seed %llu: unreachable %llu (%llu bytes), want %llu "
		      "(%llu bytes)",
		      (unsigned long long)seed, (unsigned long long)got_count,
		      (unsigned long long)got_bytes,
		      (unsigned long long)unreach,
		      (unsigned long long)unreach_bytes);
	for (uint32_t v = 0; v < n; v++) {
		uint64_t retained = 0;
		uint32_t want_idom = VMHEAP_GRAPH_NONE;

		if (reach[v]) {
			/* retained: what becomes unreachable without v */
			for (uint32_t u = 0; u < n; u++)
				if (reach[u] && !without[(size_t)v * n + u])
					retained += h->bytes[u];
			/* idom: the strict dominator with one dominator
			 * fewer than v (the deepest) */
			want_idom = VMHEAP_GRAPH_ROOT;
			for (uint32_t d = 0; d < n; d++)
				if (d != v && !without[(size_t)d * n + v] &&
				    ndom[d] + 1 == ndom[v])
					want_idom = d;
		}
		ck_assert_msg(
		    vmheap_graph_retained_bytes(g, v) == retained,
		    "seed %llu: object %u retains %llu, want %llu",
		    (unsigned long long)seed, v,
		    (unsigned long long)vmheap_graph_retained_bytes(g, v),
		    (unsigned long long)retained);
		ck_assert_msg(vmheap_graph_idom(g, v) == want_idom,
			      "seed %llu: idom of %u is %u, want %u",
			      (unsigned long long)seed, v,
			      vmheap_graph_idom(g, v), want_idom);
	}

	/* retained per class: instances no other instance of it dominates */
	ck_assert_uint_eq(vmheap_graph_class_count(g), CLASSES);
	for (size_t c = 0; c < CLASSES; c++) {
		uint64_t got[CLASSES], want = 0;
		uint64_t cid = vmheap_graph_class_id(g, c);

		ck_assert_uint_eq(cid, c + 1); /* class records come first */
		ck_assert_int_eq(vmheap_graph_class_retained(g, got), 0);
		for (uint32_t v = 0; v < n; v++) {
			int dominated = 0;
			if (!reach[v] || h->cls[v] != cid)
				continue;
			for (uint32_t d = 0; d < n; d++)
				if (d != v && h->cls[d] == cid &&
				    !without[(size_t)d * n + v])
					dominated = 1;
			if (dominated)
				continue;
			for (uint32_t u = 0; u < n; u++)
				if (reach[u] && !without[(size_t)v * n + u])
					want += h->bytes[u];
		}
		ck_assert_msg(got[c] == want,
			      "seed %llu: class %llu retains %llu, want %llu",
			      (unsigned long long)seed, (unsigned long long)cid,
			      (unsigned long long)got[c],
			      (unsigned long long)want);
	}

	/* shortest paths (the explaining ones: check_explaining_paths) */
	ck_assert_int_eq(vmheap_graph_set_path_rule(g, VMHEAP_GRAPH_PATHS_SHORTEST),
			 0);
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
	ck_assert_int_eq(vmheap_graph_set_path_rule(g, VMHEAP_GRAPH_PATHS_SHORTEST),
			 0);
	ck_assert_int_eq(
	    vmheap_graph_set_path_rule(g, VMHEAP_GRAPH_PATHS_EXPLAINING),
	    VMHEAP_ESTATE);
	for (uint32_t v = 0; v < n; v++) {
		uint32_t path[64];
		size_t root = 12345;
		int64_t len = vmheap_graph_path(g, v, path, 64, &root);

		if (!reach[v]) {
			ck_assert_int_eq(len, 0);
			ck_assert_uint_eq(vmheap_graph_path_parent(g, v),
					  VMHEAP_GRAPH_NONE);
			continue;
		}
		ck_assert_msg(len == (int64_t)dist[v] + 1,
			      "seed %llu: path of %u has %lld objects, BFS "
			      "says %u",
			      (unsigned long long)seed, v, (long long)len,
			      dist[v] + 1);
		ck_assert_uint_eq(path[len - 1], v);
		for (int64_t k = 1; k < len; k++) {
			ck_assert(has_edge(&p, path[k - 1], path[k]));
			ck_assert_uint_eq(vmheap_graph_path_parent(g, path[k]),
					  path[k - 1]);
		}
		ck_assert_uint_eq(vmheap_graph_path_parent(g, path[0]),
				  VMHEAP_GRAPH_ROOT);
		/* the first root record of the path's root object */
		ck_assert_uint_lt(root, h->nroots);
		ck_assert_uint_eq(p.roots[root], path[0]);
		for (size_t k = 0; k < root; k++)
			ck_assert_uint_ne(p.roots[k], path[0]);
	}

	free(reach);
	free(without);
	free(dist);
	free(ndom);
	plain_free(&p);
}

/*
 * The explaining paths (vmheap_graph.h, "Which path") against brute
 * force: for every object the least (costly steps, references) over all
 * its paths, by relaxing every reference until nothing changes; a costly
 * step is a root of kind machine_context or a reference held by an
 * object of INTERNAL_CLASS.  The graph's path must be a path of the heap
 * and reach that least pair.
 */
static void check_explaining_paths(const struct heap *h, vmheap_graph *g,
				   uint64_t seed)
{
	struct plain p;
	uint32_t n = h->n, *cost = malloc((n + 1) * sizeof(*cost)),
		 *len = malloc((n + 1) * sizeof(*len));
	int changed = 1;

	plain_of(&p, h);
	memset(cost, 0xff, (n + 1) * sizeof(*cost));
	memset(len, 0xff, (n + 1) * sizeof(*len));
	for (size_t k = 0; k < p.nroots; k++) {
		uint32_t v = p.roots[k], c = h->root_kind[k] == KIND_STACK;
		if (v != VMHEAP_GRAPH_NONE &&
		    (c < cost[v] || (c == cost[v] && 0 < len[v]))) {
			cost[v] = c;
			len[v] = 0;
		}
	}
	while (changed) {
		changed = 0;
		for (uint32_t v = 0; v < n; v++) {
			if (cost[v] == UINT32_MAX)
				continue;
			for (uint32_t k = p.off[v]; k < p.off[v + 1]; k++) {
				uint32_t w = p.adj[k];
				uint32_t c = cost[v] + (h->cls[v] == INTERNAL_CLASS);
				if (c < cost[w] ||
				    (c == cost[w] && len[v] + 1 < len[w])) {
					cost[w] = c;
					len[w] = len[v] + 1;
					changed = 1;
				}
			}
		}
	}
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
	for (uint32_t v = 0; v < n; v++) {
		uint32_t path[64], c;
		size_t root = 0;
		int64_t got = vmheap_graph_path(g, v, path, 64, &root);

		if (cost[v] == UINT32_MAX) {
			ck_assert_int_eq(got, 0);
			continue;
		}
		ck_assert_int_gt(got, 0);
		ck_assert_uint_eq(path[got - 1], v);
		ck_assert_uint_eq(p.roots[root], path[0]);
		c = h->root_kind[root] == KIND_STACK;
		for (int64_t k = 1; k < got; k++) {
			ck_assert(has_edge(&p, path[k - 1], path[k]));
			c += h->cls[path[k - 1]] == INTERNAL_CLASS;
		}
		ck_assert_msg(c == cost[v] && got == (int64_t)len[v] + 1,
			      "seed %llu: path of %u has %u costly steps and "
			      "%lld objects, brute force says %u and %u",
			      (unsigned long long)seed, v, c, (long long)got,
			      cost[v], len[v] + 1);
	}
	free(cost);
	free(len);
	plain_free(&p);
}

/* The class paths of every class: groups partition the reachable
 * instances by shape (a run of one class below the root object being one
 * step: the random heaps have no names), each shape is its example's
 * path. */
static void check_class_paths(const struct heap *h, vmheap_graph *g)
{
	for (uint64_t c = 1; c <= CLASSES + 1; c++) {
		struct vmheap_graph_class_paths *cp;
		uint64_t instances = 0, unreachable = 0, ubytes = 0, sum = 0;
		uint32_t path[64];

		ck_assert_int_eq(vmheap_graph_class_paths(g, c, &cp), 0);
		ck_assert_uint_eq(cp->class_id, c);
		for (uint32_t i = 0; i < h->n; i++) {
			if (h->cls[i] != c)
				continue;
			instances++;
			if (vmheap_graph_path(g, i, NULL, 0, NULL) == 0) {
				unreachable++;
				ubytes += h->bytes[i];
			}
		}
		ck_assert_uint_eq(cp->instances, instances);
		ck_assert_uint_eq(cp->unreachable, unreachable);
		ck_assert_uint_eq(cp->unreachable_bytes, ubytes);
		for (size_t k = 0; k < cp->group_count; k++) {
			const struct vmheap_graph_path_group *grp =
			    &cp->groups[k];
			uint64_t count = 0, bytes = 0;
			uint32_t first = VMHEAP_GRAPH_NONE;

			sum += grp->count;
			if (k > 0)
				ck_assert_uint_ge(cp->groups[k - 1].count,
						  grp->count);
			/* recount: instances whose path has this shape */
			for (uint32_t i = 0; i < h->n; i++) {
				size_t root = 0;
				int64_t len =
				    vmheap_graph_path(g, i, path, 64, &root);
				int same = h->cls[i] == c && len > 0 &&
					   h->root_kind[root] ==
					       grp->kind_string_id;
				size_t steps = 0;
				for (int64_t j = 0; same && j < len; j++) {
					if (j >= 2 && h->cls[path[j]] ==
							  h->cls[path[j - 1]])
						continue; /* a run */
					same = steps < grp->length &&
					       h->cls[path[j]] ==
						   grp->classes[steps];
					steps++;
				}
				same = same && steps == grp->length;
				if (same) {
					count++;
					bytes += h->bytes[i];
					if (first == VMHEAP_GRAPH_NONE)
						first = i;
				}
			}
			ck_assert_uint_eq(grp->count, count);
			ck_assert_uint_eq(grp->bytes, bytes);
			ck_assert_uint_eq(grp->example, first);
			ck_assert_uint_eq(grp->classes[grp->length - 1], c);
		}
		ck_assert_uint_eq(sum + unreachable, instances);
		vmheap_graph_class_paths_free(cp);
	}
}

/* Two graphs' paths of object v agree: the same objects from the same
 * root record, reached by the same references. */
static void assert_same_path(vmheap_graph *a, vmheap_graph *b, uint32_t v,
			     uint64_t seed, const char *what)
{
	uint32_t pa[64], pb[64];
	size_t ra = 0, rb = 0;
	int64_t la = vmheap_graph_path(a, v, pa, 64, &ra);
	int64_t lb = vmheap_graph_path(b, v, pb, 64, &rb);

	ck_assert_msg(la == lb,
		      "seed %llu, %s: path of %u has %lld objects, "
		      "%lld after the whole search",
		      (unsigned long long)seed, what, v, (long long)lb,
		      (long long)la);
	for (int64_t k = 0; k < la && k < 64; k++) {
		struct vmheap_graph_name na, nb;
		ck_assert_uint_eq(pa[k], pb[k]);
		ck_assert_int_eq(vmheap_graph_path_name(a, pa[k], &na),
				 vmheap_graph_path_name(b, pb[k], &nb));
	}
	if (la > 0)
		ck_assert_uint_eq(ra, rb);
}

/*
 * A search stopped once it reached some objects
 * (vmheap_graph_shortest_paths_to) against the whole search (`full`, by
 * the same rule): for each class, a graph of its own searched to that
 * class's instances gives every instance the path of the whole search and
 * the same shapes; every object it reached has its final path, the others
 * none; vmheap_graph_shortest_paths() afterwards searches to the end.
 */
static unsigned check_paths_to(const struct heap *h, vmheap_graph *full,
			       const char *path, int rule, uint64_t seed)
{
	uint32_t *objs = malloc((h->n + 1) * sizeof(*objs));
	unsigned stopped = 0; /* searches that stopped before the end */

	ck_assert_ptr_nonnull(objs);
	ck_assert_int_eq(vmheap_graph_shortest_paths(full), 0);
	for (uint64_t c = 1; c <= CLASSES + 1; c++) {
		vmheap_graph *g = open_graph(path);
		struct vmheap_graph_class_paths *want, *got;
		uint32_t m = 0, reached = 0;
		uint64_t unreachable = 0;

		ck_assert_int_eq(vmheap_graph_set_path_rule(g, rule), 0);
		for (uint32_t i = 0; i < h->n; i++)
			if (h->cls[i] == c)
				objs[m++] = i;
		ck_assert_int_eq(vmheap_graph_shortest_paths_to(g, objs, m), 0);
		for (uint32_t i = 0; i < h->n; i++) {
			if (vmheap_graph_path_parent(g, i) == VMHEAP_GRAPH_NONE)
				continue;
			reached++;
			assert_same_path(full, g, i, seed, "reached");
		}
		for (uint32_t k = 0; k < m; k++)
			assert_same_path(full, g, objs[k], seed, "target");
		/* the shapes, from the partial search */
		ck_assert_int_eq(
		    vmheap_graph_object_paths(full, objs, m, &want), 0);
		ck_assert_int_eq(vmheap_graph_object_paths(g, objs, m, &got),
				 0);
		ck_assert_uint_eq(got->group_count, want->group_count);
		ck_assert_uint_eq(got->unreachable, want->unreachable);
		for (size_t k = 0; k < want->group_count; k++) {
			ck_assert_uint_eq(got->groups[k].count,
					  want->groups[k].count);
			ck_assert_uint_eq(got->groups[k].example,
					  want->groups[k].example);
			ck_assert_uint_eq(got->groups[k].length,
					  want->groups[k].length);
		}
		vmheap_graph_object_paths_free(want);
		vmheap_graph_object_paths_free(got);
		/* stopped early: no count of the unreachable yet */
		if (reached < h->n && m > 0 &&
		    vmheap_graph_unreachable(full, &unreachable, NULL) == 0 &&
		    reached < h->n - unreachable) {
			ck_assert_int_eq(
			    vmheap_graph_unreachable(g, NULL, NULL),
			    VMHEAP_ESTATE);
			stopped++;
		}
		/* and to the end */
		ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
		for (uint32_t i = 0; i < h->n; i++)
			assert_same_path(full, g, i, seed, "completed");
		ck_assert_int_eq(
		    vmheap_graph_unreachable(g, &unreachable, NULL), 0);
		vmheap_graph_free(g);
	}
	free(objs);
	return stopped;
}

/*
 * The shape issue 32 measures (bench/gen_dump -R), small: every object
 * reachable and many shared.  random_heap's ids, classes, sizes and roots,
 * with the references replaced: a random tree (each object but the first
 * referenced by a random earlier one, in the possibly shuffled order) and
 * 0-2 more references each to any object, self and repeats included; the
 * first root record names the tree's root object.
 */
static void random_reachable_heap(struct heap *h, uint64_t seed)
{
	uint32_t n, *parent;

	random_heap(h, seed);
	n = h->n;
	parent = calloc(n, sizeof(*parent));
	free(h->refs);
	h->refs = calloc((size_t)n * 3 + 1, sizeof(*h->refs));
	ck_assert_ptr_nonnull(parent);
	ck_assert_ptr_nonnull(h->refs);
	for (uint32_t i = 1; i < n; i++)
		parent[i] = (uint32_t)below(i);
	h->nrefs = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t extra = (uint32_t)below(3);
		h->ref_off[i] = (uint32_t)h->nrefs;
		for (uint32_t c = i + 1; c < n; c++)
			if (parent[c] == i)
				h->refs[h->nrefs++] = h->ids[c];
		while (extra--)
			h->refs[h->nrefs++] = h->ids[below(n)];
	}
	h->ref_off[n] = (uint32_t)h->nrefs;
	if (h->nroots == 0)
		h->nroots = 1;
	h->root_kind[0] = KIND_VM;
	h->root_obj[0] = h->ids[0];
	free(parent);
}

/* Dominators, retained sizes and both path rules against brute force on
 * random heaps where every object is reachable (random_reachable_heap). */
START_TEST(random_reachable_heaps_agree_with_brute_force)
{
	unsigned stopped = 0;

	for (uint64_t seed = 1000 + (uint64_t)_i * 50;
	     seed < 1000 + (uint64_t)_i * 50 + 50; seed++) {
		struct heap h;
		const char *path = dump_path("reachable");
		vmheap_graph *g;
		uint64_t unreachable = 1;

		random_reachable_heap(&h, seed);
		write_heap(&h, path);
		g = open_graph(path);
		check_against_brute_force(&h, g, seed);
		ck_assert_int_eq(
		    vmheap_graph_unreachable(g, &unreachable, NULL), 0);
		ck_assert_msg(unreachable == 0, "seed %llu: %llu unreachable",
			      (unsigned long long)seed,
			      (unsigned long long)unreachable);
		vmheap_graph_free(g);
		g = open_graph(path);
		check_explaining_paths(&h, g, seed);
		check_class_paths(&h, g);
		/* the searches to one class, on every fifth heap (each
		 * opens the graph again per class: time) */
		if (seed % 5 == 0)
			stopped += check_paths_to(
			    &h, g, path, VMHEAP_GRAPH_PATHS_EXPLAINING, seed);
		vmheap_graph_free(g);
		g = open_graph(path);
		vmheap_graph_set_path_rule(g, VMHEAP_GRAPH_PATHS_SHORTEST);
		if (seed % 5 == 0)
			stopped += check_paths_to(
			    &h, g, path, VMHEAP_GRAPH_PATHS_SHORTEST, seed);
		vmheap_graph_free(g);
		heap_free(&h);
	}
	/* the searches to one class stopped early on some of these heaps */
	ck_assert_uint_gt(stopped, 0);
}
END_TEST

START_TEST(random_heaps_agree_with_brute_force)
{
	unsigned stopped = 0;

	/* _i: the loop test's index; each runs 50 seeds */
	for (uint64_t seed = (uint64_t)_i * 50; seed < (uint64_t)_i * 50 + 50;
	     seed++) {
		struct heap h;
		const char *path = dump_path("random");
		vmheap_graph *g;

		random_heap(&h, seed);
		write_heap(&h, path);
		g = open_graph(path);
		check_against_brute_force(&h, g, seed);
		vmheap_graph_free(g);
		g = open_graph(path);
		check_explaining_paths(&h, g, seed);
		check_class_paths(&h, g);
		/* the searches to one class, on every fifth heap (each
		 * opens the graph again per class: time) */
		if (seed % 5 == 0)
			stopped += check_paths_to(
			    &h, g, path, VMHEAP_GRAPH_PATHS_EXPLAINING, seed);
		vmheap_graph_free(g);
		g = open_graph(path);
		vmheap_graph_set_path_rule(g, VMHEAP_GRAPH_PATHS_SHORTEST);
		if (seed % 5 == 0)
			stopped += check_paths_to(
			    &h, g, path, VMHEAP_GRAPH_PATHS_SHORTEST, seed);
		vmheap_graph_free(g);
		heap_free(&h);
	}
	/* the searches to one class stopped early on some of these heaps */
	ck_assert_uint_gt(stopped, 0);
}
END_TEST

/*
 * Dominators of a heap too big for brute force, by another algorithm: the
 * iterative one of Cooper, Harvey and Kennedy ("A Simple, Fast Dominance
 * Algorithm"), over a reverse postorder of the test's own depth-first
 * search.  The virtual root is vertex n; idom[v] = VMHEAP_GRAPH_NONE for
 * an unreachable v.
 */
static void iterative_dominators(const struct plain *p, uint32_t *idom)
{
	uint32_t n = p->n, *rpo_of = malloc(((size_t)n + 1) * sizeof(*rpo_of));
	uint32_t *order = malloc(((size_t)n + 1) * sizeof(*order));
	uint32_t *stack = malloc(((size_t)n + 1) * sizeof(*stack));
	uint32_t *next = malloc(((size_t)n + 1) * sizeof(*next));
	uint32_t *pred_off = calloc((size_t)n + 2, sizeof(*pred_off));
	uint32_t *pred, post = 0, changed = 1;
	size_t m = p->off[n] + p->nroots;

	ck_assert_ptr_nonnull(rpo_of);
	ck_assert_ptr_nonnull(order);
	ck_assert_ptr_nonnull(stack);
	ck_assert_ptr_nonnull(next);
	ck_assert_ptr_nonnull(pred_off);
	/* postorder from the virtual root, whose edges are the roots */
	for (uint32_t v = 0; v <= n; v++)
		rpo_of[v] = VMHEAP_GRAPH_NONE;
	rpo_of[n] = 0; /* seen */
	size_t len = 0;
	uint32_t rootk = 0;
	stack[len++] = n;
	while (len) {
		uint32_t v = stack[len - 1], w = VMHEAP_GRAPH_NONE;
		if (v == n) {
			while (rootk < p->nroots && w == VMHEAP_GRAPH_NONE) {
				uint32_t c = p->roots[rootk++];
				if (c != VMHEAP_GRAPH_NONE &&
				    rpo_of[c] == VMHEAP_GRAPH_NONE)
					w = c;
			}
		} else {
			while (next[v] < p->off[v + 1] &&
			       w == VMHEAP_GRAPH_NONE) {
				uint32_t c = p->adj[next[v]++];
				if (rpo_of[c] == VMHEAP_GRAPH_NONE)
					w = c;
			}
		}
		if (w == VMHEAP_GRAPH_NONE) {
			order[post++] = v; /* postorder */
			len--;
			continue;
		}
		rpo_of[w] = 0;
		next[w] = p->off[w];
		stack[len++] = w;
	}
	/* reverse postorder numbers: the virtual root 0 */
	for (uint32_t k = 0; k < post; k++)
		rpo_of[order[k]] = post - 1 - k;
	/* predecessors by vertex (the virtual root for each root record) */
	pred = malloc((m ? m : 1) * sizeof(*pred));
	ck_assert_ptr_nonnull(pred);
	for (uint32_t v = 0; v < n; v++)
		for (uint32_t k = p->off[v]; k < p->off[v + 1]; k++)
			pred_off[p->adj[k] + 1]++;
	for (size_t k = 0; k < p->nroots; k++)
		if (p->roots[k] != VMHEAP_GRAPH_NONE)
			pred_off[p->roots[k] + 1]++;
	for (uint32_t v = 0; v <= n; v++)
		pred_off[v + 1] += pred_off[v];
	for (uint32_t v = 0; v < n; v++)
		for (uint32_t k = p->off[v]; k < p->off[v + 1]; k++)
			pred[pred_off[p->adj[k]]++] = v;
	for (size_t k = 0; k < p->nroots; k++)
		if (p->roots[k] != VMHEAP_GRAPH_NONE)
			pred[pred_off[p->roots[k]]++] = n;
	memmove(pred_off + 1, pred_off, (size_t)n * sizeof(*pred_off));
	pred_off[0] = 0;
	/* idom by reverse postorder number, until nothing changes */
	uint32_t *dom = malloc((size_t)post * sizeof(*dom));
	ck_assert_ptr_nonnull(dom);
	for (uint32_t k = 0; k < post; k++)
		dom[k] = VMHEAP_GRAPH_NONE;
	dom[0] = 0;
	while (changed) {
		changed = 0;
		for (uint32_t b = 1; b < post; b++) {
			uint32_t v = order[post - 1 - b],
				 nd = VMHEAP_GRAPH_NONE;
			for (uint32_t k = pred_off[v]; k < pred_off[v + 1];
			     k++) {
				uint32_t q = rpo_of[pred[k]];
				if (q == VMHEAP_GRAPH_NONE ||
				    dom[q] == VMHEAP_GRAPH_NONE)
					continue;
				if (nd == VMHEAP_GRAPH_NONE) {
					nd = q;
					continue;
				}
				while (nd != q) { /* intersect */
					while (nd > q)
						nd = dom[nd];
					while (q > nd)
						q = dom[q];
				}
			}
			if (dom[b] != nd) {
				dom[b] = nd;
				changed = 1;
			}
		}
	}
	for (uint32_t v = 0; v < n; v++)
		idom[v] = rpo_of[v] == VMHEAP_GRAPH_NONE ? VMHEAP_GRAPH_NONE
			  : dom[rpo_of[v]] == 0
			      ? VMHEAP_GRAPH_ROOT
			      : order[post - 1 - dom[rpo_of[v]]];
	free(dom);
	free(pred);
	free(pred_off);
	free(next);
	free(stack);
	free(order);
	free(rpo_of);
}

/*
 * A heap of more than a million objects and references (what the
 * dominator computation does on two threads, in halves): random
 * references, self and repeats included, some to missing ids, and root
 * records for one object in 50 (some repeated), so that some objects are
 * unreachable and some roots referenced.  Ids in increasing order.
 */
static void big_random_heap(struct heap *h, uint32_t n, uint64_t seed)
{
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;
	memset(h, 0, sizeof(*h));
	h->n = n;
	h->ids = calloc(n, sizeof(*h->ids));
	h->cls = calloc(n, sizeof(*h->cls));
	h->bytes = calloc(n, sizeof(*h->bytes));
	h->ref_off = calloc((size_t)n + 1, sizeof(*h->ref_off));
	h->refs = calloc((size_t)n * 4 + 1, sizeof(*h->refs));
	h->root_kind = calloc(n / 50 + 1, sizeof(*h->root_kind));
	h->root_obj = calloc(n / 50 + 1, sizeof(*h->root_obj));
	ck_assert_ptr_nonnull(h->refs);
	ck_assert_ptr_nonnull(h->root_obj);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nref = (uint32_t)below(5);
		h->ids[i] = 0x1000 + 40 * (uint64_t)i;
		h->cls[i] = 1 + below(CLASSES);
		h->bytes[i] = 1 + below(1000);
		h->ref_off[i + 1] = h->ref_off[i] + nref;
		for (uint32_t k = 0; k < nref; k++) {
			uint64_t r = below(100);
			h->refs[h->nrefs++] =
			    r == 0 ? 0x1000 + 40 * (uint64_t)n + 8 /* missing */
			    : r == 1 ? 0x1000 + 40 * (uint64_t)i   /* itself */
				     : 0x1000 + 40 * below(n);
		}
	}
	h->nroots = n / 50 + 1;
	for (size_t k = 0; k < h->nroots; k++) {
		h->root_kind[k] = KIND_VM;
		h->root_obj[k] = k > 0 && below(10) == 0
				     ? h->root_obj[k - 1]
				     : 0x1000 + 40 * below(n);
	}
}

/* vmheap_graph_dominators against iterative_dominators: each object's
 * idom and retained bytes (summed here over the other's tree), the
 * unreachable objects and bytes. */
START_TEST(big_random_heap_agrees_with_the_iterative_algorithm)
{
	const uint32_t n = 1300000;
	struct heap h;
	struct plain p = {0};
	const char *path = dump_path("big");
	uint32_t *idom = malloc((size_t)n * sizeof(*idom));
	uint64_t *ret = calloc(n, sizeof(*ret));
	uint64_t unreach = 0, unreach_bytes = 0, got, got_bytes;
	uint32_t reachable = 0, *by_depth;
	vmheap_graph *g;

	ck_assert_ptr_nonnull(idom);
	ck_assert_ptr_nonnull(ret);
	big_random_heap(&h, n, 7);
	write_heap(&h, path);
	/* the heap resolved by index (ids are 0x1000 + 40 i) */
	p.n = n;
	p.off = calloc((size_t)n + 1, sizeof(*p.off));
	p.adj = calloc(h.nrefs + 1, sizeof(*p.adj));
	p.roots = calloc(h.nroots, sizeof(*p.roots));
	for (uint32_t i = 0; i < n; i++) {
		p.off[i + 1] = p.off[i];
		for (uint32_t k = h.ref_off[i]; k < h.ref_off[i + 1]; k++) {
			uint64_t t = (h.refs[k] - 0x1000) / 40;
			if (t < n)
				p.adj[p.off[i + 1]++] = (uint32_t)t;
		}
	}
	p.nroots = h.nroots;
	for (size_t k = 0; k < h.nroots; k++)
		p.roots[k] = (uint32_t)((h.root_obj[k] - 0x1000) / 40);
	iterative_dominators(&p, idom);

	/* retained: each reachable object's bytes added to every dominator
	 * above it, deepest objects first */
	by_depth = calloc(n, sizeof(*by_depth));
	ck_assert_ptr_nonnull(by_depth);
	for (uint32_t v = 0; v < n; v++) {
		if (idom[v] == VMHEAP_GRAPH_NONE) {
			unreach++;
			unreach_bytes += h.bytes[v];
			continue;
		}
		ret[v] = h.bytes[v];
		by_depth[reachable++] = v;
	}
	{
		/* depth in the tree, then a counting sort by it */
		uint32_t *depth = calloc(n, sizeof(*depth)), maxd = 0;
		uint32_t *cnt, *sorted = malloc((size_t)reachable * 4 + 4);
		ck_assert_ptr_nonnull(depth);
		for (uint32_t k = 0; k < reachable; k++) {
			uint32_t v = by_depth[k], d = 0;
			for (uint32_t u = v; idom[u] != VMHEAP_GRAPH_ROOT;
			     u = idom[u])
				d++;
			depth[v] = d;
			if (d > maxd)
				maxd = d;
		}
		cnt = calloc((size_t)maxd + 2, sizeof(*cnt));
		for (uint32_t k = 0; k < reachable; k++)
			cnt[depth[by_depth[k]] + 1]++;
		for (uint32_t d = 0; d <= maxd; d++)
			cnt[d + 1] += cnt[d];
		for (uint32_t k = 0; k < reachable; k++)
			sorted[cnt[depth[by_depth[k]]]++] = by_depth[k];
		for (uint32_t k = reachable; k-- > 0;)
			if (idom[sorted[k]] != VMHEAP_GRAPH_ROOT)
				ret[idom[sorted[k]]] += ret[sorted[k]];
		free(cnt);
		free(sorted);
		free(depth);
	}
	ck_assert_uint_gt(reachable, 1000000); /* two threads, each part */
	ck_assert_uint_gt(unreach, 0);

	g = open_graph(path);
	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	for (uint32_t v = 0; v < n; v++) {
		ck_assert_msg(vmheap_graph_idom(g, v) == idom[v],
			      "object %u: idom %u, the iterative algorithm "
			      "says %u",
			      v, vmheap_graph_idom(g, v), idom[v]);
		ck_assert_msg(
		    vmheap_graph_retained_bytes(g, v) == ret[v],
		    "object %u: retained %llu, expected %llu", v,
		    (unsigned long long)vmheap_graph_retained_bytes(g, v),
		    (unsigned long long)ret[v]);
	}
	ck_assert_int_eq(vmheap_graph_unreachable(g, &got, &got_bytes), 0);
	ck_assert_uint_eq(got, unreach);
	ck_assert_uint_eq(got_bytes, unreach_bytes);
	vmheap_graph_free(g);
	unlink(path);
	free(by_depth);
	free(ret);
	free(idom);
	plain_free(&p);
	heap_free(&h);
}
END_TEST

/* ------------------------------------------------------------ shapes */

START_TEST(empty_dump_has_no_objects_and_nothing_unreachable)
{
	struct heap h = {0};
	const char *path = dump_path("empty");
	struct vmheap_graph_class_paths *cp;
	uint64_t count = 1, bytes = 1;
	vmheap_graph *g;

	h.ref_off = calloc(1, sizeof(*h.ref_off));
	write_heap(&h, path);
	g = open_graph(path);
	ck_assert_uint_eq(vmheap_graph_object_count(g), 0);
	ck_assert_uint_eq(vmheap_graph_reference_count(g), 0);
	ck_assert_uint_eq(vmheap_graph_find(g, 0x1000), VMHEAP_GRAPH_NONE);
	ck_assert_uint_eq(vmheap_graph_find(g, 0), VMHEAP_GRAPH_NONE);
	ck_assert_int_eq(vmheap_graph_unreachable(g, &count, &bytes),
			 VMHEAP_ESTATE);
	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	ck_assert_int_eq(vmheap_graph_unreachable(g, &count, &bytes), 0);
	ck_assert_uint_eq(count, 0);
	ck_assert_uint_eq(bytes, 0);
	ck_assert_int_eq(vmheap_graph_index_referrers(g), 0);
	ck_assert_int_eq(vmheap_graph_class_paths(g, 1, &cp), 0);
	ck_assert_uint_eq(cp->instances, 0);
	ck_assert_uint_eq(cp->group_count, 0);
	vmheap_graph_class_paths_free(cp);
	vmheap_graph_free(g);
	heap_free(&h);
}
END_TEST

START_TEST(one_object_dump_with_and_without_its_root)
{
	uint64_t id = 0x7f0000001000ULL, cls = 2, bytes = 48, count, ub;
	uint32_t off[2] = {0, 0}, path[2];
	uint64_t kind = KIND_VM;
	struct heap h = {.n = 1,
			 .ids = &id,
			 .cls = &cls,
			 .bytes = &bytes,
			 .ref_off = off,
			 .nroots = 1,
			 .root_kind = &kind,
			 .root_obj = &id};
	const char *file = dump_path("one");
	size_t root = 9, len;
	const char *name;
	vmheap_graph *g;

	write_heap(&h, file);
	g = open_graph(file);
	ck_assert_uint_eq(vmheap_graph_object_count(g), 1);
	ck_assert_uint_eq(vmheap_graph_find(g, id), 0);
	ck_assert_uint_eq(vmheap_graph_find(g, id - 1), VMHEAP_GRAPH_NONE);
	ck_assert_uint_eq(vmheap_graph_find(g, id + 1), VMHEAP_GRAPH_NONE);
	name = vmheap_graph_class_name(g, 2, &len);
	ck_assert_uint_eq(len, 6);
	ck_assert_int_eq(memcmp(name, "Class2", 6), 0);
	ck_assert_ptr_null(vmheap_graph_class_name(g, 77, &len));
	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	ck_assert_uint_eq(vmheap_graph_idom(g, 0), VMHEAP_GRAPH_ROOT);
	ck_assert_uint_eq(vmheap_graph_retained_bytes(g, 0), 48);
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
	ck_assert_int_eq(vmheap_graph_path(g, 0, path, 2, &root), 1);
	ck_assert_uint_eq(path[0], 0);
	ck_assert_uint_eq(root, 0);
	vmheap_graph_free(g);

	/* the same object without a root: unreachable, in no tree */
	h.nroots = 0;
	write_heap(&h, file);
	g = open_graph(file);
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
	ck_assert_int_eq(vmheap_graph_unreachable(g, &count, &ub), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(ub, 48);
	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	ck_assert_uint_eq(vmheap_graph_idom(g, 0), VMHEAP_GRAPH_NONE);
	ck_assert_uint_eq(vmheap_graph_retained_bytes(g, 0), 0);
	ck_assert_int_eq(vmheap_graph_path(g, 0, path, 2, &root), 0);
	vmheap_graph_free(g);
}
END_TEST

/*
 * The length of the long chains and lists below: 1M objects, 200,000 in
 * the sanitizers' build, where they took 12 of make check's minutes.  A
 * walk that recursed would still overflow the 8 MiB stack there (ASan's
 * frames are larger than 42 bytes); ASan checks the same code paths at
 * either length.
 */
#define LONG_CHAIN (SPEC_SANITIZED ? 200000u : 1000000u)

/*
 * A chain of LONG_CHAIN objects, each referencing the next and (with
 * `back`) the head as well: the depth-first search, the path compression
 * and the shortest path all go that deep.  Ids decrease along the chain, so the
 * graph sorts them.  Objects are 16 bytes.
 */
static void check_long_chain(int back)
{
	const uint32_t n = LONG_CHAIN;
	const char *path = dump_path(back ? "chain-back" : "chain");
	static const char *const kinds[] = {"object"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	vmheap_graph *g;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	uint64_t head = 0x10000000ULL + 16ULL * n;
	uint32_t *p = malloc(n * sizeof(*p));
	uint64_t count;

	ck_assert_int_ge(fd, 0);
	opt.kind_names = kinds;
	opt.kind_count = 1;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, 1, "vm", 2), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Node", 4, 0, 0), 0);
	for (uint32_t k = 0; k < n; k++) {
		uint64_t id = head - 16ULL * k;
		uint64_t refs[2] = {id - 16, head};
		size_t nrefs = k + 1 < n ? 1 + (size_t)back : (size_t)back;
		if (k + 1 == n)
			refs[0] = head;
		ck_assert_int_eq(
		    vmheap_writer_add_object(w, id, 1, 16, 0, refs, nrefs), 0);
	}
	ck_assert_int_eq(vmheap_writer_add_root(w, 1, head), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	close(fd);

	g = open_graph(path);
	ck_assert_uint_eq(vmheap_graph_object_count(g), n);
	ck_assert_uint_eq(vmheap_graph_missing_references(g), 0);
	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	ck_assert_uint_eq(vmheap_graph_retained_bytes(g, 0), 16ULL * n);
	ck_assert_uint_eq(vmheap_graph_idom(g, 0), VMHEAP_GRAPH_ROOT);
	for (uint32_t k = 1; k < n; k++) {
		ck_assert_uint_eq(vmheap_graph_idom(g, k), k - 1);
		ck_assert_uint_eq(vmheap_graph_retained_bytes(g, k),
				  16ULL * (n - k));
	}
	ck_assert_int_eq(vmheap_graph_unreachable(g, &count, NULL), 0);
	ck_assert_uint_eq(count, 0);
	/* the class walk goes down the 1M-deep dominator tree */
	ck_assert_uint_eq(vmheap_graph_class_count(g), 1);
	ck_assert_int_eq(vmheap_graph_class_retained(g, &count), 0);
	ck_assert_uint_eq(count, 16ULL * n);
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
	ck_assert_int_eq(vmheap_graph_path(g, n - 1, p, n, NULL), n);
	for (uint32_t k = 0; k < n; k++)
		ck_assert_uint_eq(p[k], k);
	/* a short buffer gets the start of the path and nothing more */
	p[0] = p[1] = p[2] = 77;
	ck_assert_int_eq(vmheap_graph_path(g, n - 1, p, 2, NULL), n);
	ck_assert_uint_eq(p[0], 0);
	ck_assert_uint_eq(p[1], 1);
	ck_assert_uint_eq(p[2], 77);
	vmheap_graph_free(g);
	free(p);
	unlink(path);
}

START_TEST(million_long_chain_is_dominated_link_by_link)
{
	check_long_chain(0);
}
END_TEST

START_TEST(million_long_chain_with_edges_back_to_the_head)
{
	check_long_chain(1);
}
END_TEST

/*
 * A named linked list of n nodes: root vm "$head" -> Holder -@head->
 * Node 0 -@next-> Node 1 ... -> Node n-1, and a Thread (root vm "thread
 * 1") whose stack holds Node `stack_at` ("stack of thread 1").  Object
 * indices: Holder 0, Thread 1, Node k is 2 + k.
 */
static void write_named_chain(const char *path, uint32_t n, uint32_t stack_at)
{
	static const char *const kinds[] = {"object"};
	static const char *const strings[] = {"vm",	   "$head",
					      "@head",	   "@next",
					      "stack of thread 1", "thread 1"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	uint64_t ref;
	int64_t name;

	ck_assert_int_ge(fd, 0);
	opt.kind_names = kinds;
	opt.kind_count = 1;
	opt.edge_names = 1;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	for (uint64_t k = 0; k < 6; k++)
		ck_assert_int_eq(vmheap_writer_add_string(w, k + 1, strings[k],
							  strlen(strings[k])),
				 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Holder", 6, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 2, "Node", 4, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 3, "Thread", 6, 0, 0), 0);
	ref = 0x10000, name = 3;
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x1000, 1, 40, 0,
							&ref, &name, 1, 0),
			 0);
	ref = 0x10000 + 16ULL * stack_at, name = 5;
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x2000, 3, 40, 0,
							&ref, &name, 1, 0),
			 0);
	for (uint32_t k = 0; k < n; k++) {
		ref = 0x10000 + 16ULL * (k + 1), name = 4;
		ck_assert_int_eq(vmheap_writer_add_object_named(
				     w, 0x10000 + 16ULL * k, 2, 16, 0, &ref,
				     &name, k + 1 < n, 0),
				 0);
	}
	ck_assert_int_eq(vmheap_writer_add_root_named(w, 1, 0x1000, 2), 0);
	ck_assert_int_eq(vmheap_writer_add_root_named(w, 1, 0x2000, 6), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	ck_assert_int_eq(close(fd), 0);
}

/*
 * Paths at any length, and the explaining rule at scale: the LONG_CHAIN
 * (1M) nodes of a list merge into two shapes (the head by @head, the rest one
 * run by
 * @next), every node's path going down the list although the thread's
 * stack reaches the second half sooner; the stack is "also" there.  With
 * the shortest rule the second half goes through the thread.
 */
START_TEST(million_node_list_is_two_shapes_by_named_references)
{
	const uint32_t n = LONG_CHAIN, half = n / 2;
	const char *path = dump_path("list");
	struct vmheap_graph_class_paths *cp;
	struct vmheap_graph_stack_holder h;
	struct vmheap_graph_retainers *r;
	struct vmheap_graph_name name;
	uint32_t node = 2 + half;
	vmheap_graph *g;

	write_named_chain(path, n, half);
	g = open_graph(path);
	ck_assert_int_eq(vmheap_graph_class_paths(g, 2, &cp), 0);
	ck_assert_uint_eq(cp->instances, n);
	ck_assert_uint_eq(cp->group_count, 2);
	ck_assert_uint_eq(cp->groups[0].count, n - 1);
	ck_assert_uint_eq(cp->groups[0].bytes, 16ULL * (n - 1));
	ck_assert_uint_eq(cp->groups[0].example, 3);
	ck_assert_uint_eq(cp->groups[0].length, 3); /* Holder, Node, Node+ */
	ck_assert_uint_eq(cp->groups[1].count, 1);
	ck_assert_uint_eq(cp->groups[1].length, 2);
	vmheap_graph_class_paths_free(cp);
	/* the last node: 1M + 1 objects from the holder, by @next */
	ck_assert_int_eq(vmheap_graph_path(g, 2 + n - 1, NULL, 0, NULL), n + 1);
	ck_assert_int_eq(vmheap_graph_path_name(g, node, &name),
			 VMHEAP_GRAPH_NAME_TEXT);
	ck_assert_int_eq(memcmp(name.text, "@next", 5), 0);
	ck_assert_int_eq(vmheap_graph_stack_holder(g, 2 + n - 1, &h), 1);
	ck_assert_uint_eq(h.object, node);
	ck_assert_uint_eq(h.holder, 1);
	ck_assert_uint_eq(h.reference, 0);
	ck_assert_int_eq(vmheap_graph_stack_holder(g, 2 + half - 1, &h), 0);
	/* the retainers of the middle node: its neighbour and the stack */
	ck_assert_int_eq(vmheap_graph_retainers(g, &node, 1, &r), 0);
	ck_assert_uint_eq(r->targets, 1);
	ck_assert_uint_eq(r->references, 2);
	ck_assert_uint_eq(r->group_count, 2);
	/* one reference each: the lower example (the thread) first */
	ck_assert_uint_eq(r->groups[0].holder_class_id, 3);
	ck_assert_int_eq(r->groups[0].stack, 1);
	ck_assert_int_eq(memcmp(r->groups[0].name.text, "stack of", 8), 0);
	ck_assert_uint_eq(r->groups[1].holder_class_id, 2);
	ck_assert_uint_eq(r->groups[1].example, node - 1);
	ck_assert_int_eq(r->groups[1].stack, 0);
	ck_assert_int_eq(memcmp(r->groups[1].name.text, "@next", 5), 0);
	vmheap_graph_retainers_free(r);
	vmheap_graph_free(g);

	g = open_graph(path);
	ck_assert_int_eq(vmheap_graph_set_path_rule(g, VMHEAP_GRAPH_PATHS_SHORTEST),
			 0);
	ck_assert_int_eq(vmheap_graph_class_paths(g, 2, &cp), 0);
	ck_assert_uint_eq(cp->group_count, 4);
	ck_assert_uint_eq(cp->groups[0].count, half - 1);
	ck_assert_uint_eq(cp->groups[1].count, half - 1);
	vmheap_graph_class_paths_free(cp);
	ck_assert_int_eq(vmheap_graph_path(g, 2 + n - 1, NULL, 0, NULL),
			 n - half + 1);
	ck_assert_int_eq(vmheap_graph_stack_holder(g, 2 + n - 1, &h), 0);
	vmheap_graph_free(g);

	/* --exclude stack: the thread's reference is gone; dominators of
	 * the 1M-deep tree then follow the list alone */
	g = open_graph(path);
	ck_assert_int_eq(vmheap_graph_exclude(g, VMHEAP_GRAPH_EXCLUDE_STACK), 0);
	ck_assert_uint_eq(vmheap_graph_reference_count(g), n + 1 - 1 + 0);
	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	ck_assert_uint_eq(vmheap_graph_idom(g, 2 + n - 1), 2 + n - 2);
	ck_assert_uint_eq(vmheap_graph_retained_bytes(g, 0), 40 + 16ULL * n);
	ck_assert_int_eq(vmheap_graph_exclude(g, VMHEAP_GRAPH_EXCLUDE_STACK),
			 VMHEAP_ESTATE);
	vmheap_graph_free(g);
	g = open_graph(path);
	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	ck_assert_uint_eq(vmheap_graph_idom(g, node), VMHEAP_GRAPH_ROOT);
	ck_assert_uint_eq(vmheap_graph_retained_bytes(g, 0),
			  40 + 16ULL * half);
	vmheap_graph_free(g);
	unlink(path);
}
END_TEST

/*
 * An internal object's named reference is free, its unnamed or element
 * ones are costly (vmheap_graph.h, "Which path"):
 *
 *   root vm -> Env <imemo:env> -"local x of <main>"-> T
 *   root vm -> Thread -"stack of thread 1"-> T
 *   root vm -> Hidden <hidden-array> -[0]-> U
 *   root vm -> Holder -@a-> A -@b-> B -@c-> U
 *
 * T's path is the local's (a tie in length with the stack's), U's the
 * longer named one; --shortest takes the hidden array for U.
 */
START_TEST(internal_objects_are_passed_by_their_named_references_only)
{
	static const char *const kinds[] = {"object"};
	static const char *const str[] = {
	    "vm", "local x of <main>", "stack of thread 1", "@a", "@b", "@c"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	const char *path = dump_path("internal");
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	uint32_t p[8];
	vmheap_writer *w;
	vmheap_graph *g;
	uint64_t ref;
	int64_t name;

	ck_assert_int_ge(fd, 0);
	opt.kind_names = kinds;
	opt.kind_count = 1;
	opt.edge_names = 1;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	for (uint64_t k = 0; k < 6; k++)
		ck_assert_int_eq(
		    vmheap_writer_add_string(w, k + 1, str[k], strlen(str[k])), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "<imemo:env>", 11, 0, 0),
			 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 2, "Thread", 6, 0, 0), 0);
	ck_assert_int_eq(
	    vmheap_writer_add_class(w, 3, "<hidden-array>", 14, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 4, "Obj", 3, 0, 0), 0);
	/* objects 0 Env, 1 Thread, 2 Hidden, 3 Holder, 4 A, 5 B, 6 T, 7 U */
	ref = 0x700, name = 2;
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x100, 1, 8, 0, &ref,
							&name, 1, 0), 0);
	ref = 0x700, name = 3;
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x200, 2, 8, 0, &ref,
							&name, 1, 0), 0);
	ref = 0x800, name = vmheap_edge_name_index(0);
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x300, 3, 8, 0, &ref,
							&name, 1, 0), 0);
	for (uint64_t k = 0; k < 3; k++) {
		ref = k < 2 ? 0x500 + 0x100 * k : 0x800, name = 4 + (int64_t)k;
		ck_assert_int_eq(vmheap_writer_add_object_named(
				     w, 0x400 + 0x100 * k, 4, 8, 0, &ref, &name,
				     1, 0),
				 0);
	}
	ck_assert_int_eq(vmheap_writer_add_object(w, 0x700, 4, 8, 0, NULL, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_object(w, 0x800, 4, 8, 0, NULL, 0), 0);
	/* the thread's root first: a tie in costly steps and length would
	 * go to it */
	static const uint64_t roots[] = {0x200, 0x100, 0x300, 0x400};
	for (uint64_t k = 0; k < 4; k++)
		ck_assert_int_eq(vmheap_writer_add_root(w, 1, roots[k]), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	ck_assert_int_eq(close(fd), 0);

	g = open_graph(path);
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
	ck_assert_int_eq(vmheap_graph_path(g, 6, p, 8, NULL), 2);
	ck_assert_uint_eq(p[0], 0); /* by the local, not the stack */
	ck_assert_int_eq(vmheap_graph_path(g, 7, p, 8, NULL), 4);
	ck_assert_uint_eq(p[0], 3); /* by @a @b @c, not the hidden array */
	vmheap_graph_free(g);
	g = open_graph(path);
	ck_assert_int_eq(vmheap_graph_set_path_rule(g, VMHEAP_GRAPH_PATHS_SHORTEST),
			 0);
	ck_assert_int_eq(vmheap_graph_path(g, 7, p, 8, NULL), VMHEAP_ESTATE);
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
	ck_assert_int_eq(vmheap_graph_path(g, 7, p, 8, NULL), 2);
	ck_assert_uint_eq(p[0], 2);
	vmheap_graph_free(g);
	unlink(path);
}
END_TEST

START_TEST(exclude_lists_parse)
{
	unsigned k = 99;

	ck_assert_int_eq(vmheap_graph_parse_exclude("stack", &k), 0);
	ck_assert_uint_eq(k, VMHEAP_GRAPH_EXCLUDE_STACK);
	ck_assert_int_eq(vmheap_graph_parse_exclude("internal,stack", &k), 0);
	ck_assert_uint_eq(k, VMHEAP_GRAPH_EXCLUDE_STACK |
				 VMHEAP_GRAPH_EXCLUDE_INTERNAL);
	ck_assert_int_eq(vmheap_graph_parse_exclude("", &k), VMHEAP_EINVAL);
	ck_assert_int_eq(vmheap_graph_parse_exclude("stack,", &k),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(vmheap_graph_parse_exclude("stack,,internal", &k),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(vmheap_graph_parse_exclude("weak", &k), VMHEAP_EINVAL);
}
END_TEST

/* An object with more references than one record holds (the writer goes
 * on in more-references records): all of them are its references. */
START_TEST(references_continued_in_more_records_all_count)
{
	const uint32_t leaves = 70000;
	struct heap h = {0};
	const char *path = dump_path("hub");
	uint64_t kind = KIND_VM;
	vmheap_graph *g;
	const uint32_t *t;

	h.n = leaves + 1;
	h.ids = calloc(h.n, sizeof(*h.ids));
	h.cls = calloc(h.n, sizeof(*h.cls));
	h.bytes = calloc(h.n, sizeof(*h.bytes));
	h.ref_off = calloc(h.n + 1, sizeof(*h.ref_off));
	h.refs = calloc(leaves + 1, sizeof(*h.refs));
	for (uint32_t i = 0; i < h.n; i++) {
		h.ids[i] = 0x5000 + 8 * (uint64_t)i;
		h.cls[i] = i ? 2 : 1;
		h.bytes[i] = 8;
	}
	/* the hub (object 0): every leaf, then one missing id */
	for (uint32_t k = 0; k < leaves - 1; k++)
		h.refs[k] = h.ids[k + 1];
	h.refs[leaves - 1] = h.ids[leaves];
	h.refs[leaves] = 0x4;
	for (uint32_t i = 1; i <= h.n; i++)
		h.ref_off[i] = leaves + 1;
	h.nroots = 1;
	h.root_kind = &kind;
	h.root_obj = h.ids;
	write_heap(&h, path);
	g = open_graph(path);
	ck_assert_uint_eq(vmheap_graph_references(g, 0, &t), leaves);
	ck_assert_uint_eq(t[0], 1);
	ck_assert_uint_eq(t[leaves - 1], leaves);
	ck_assert_uint_eq(vmheap_graph_missing_references(g), 1);
	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	ck_assert_uint_eq(vmheap_graph_retained_bytes(g, 0), 8ULL * h.n);
	ck_assert_uint_eq(vmheap_graph_idom(g, leaves), 0);
	vmheap_graph_free(g);
	h.root_kind = NULL;
	h.root_obj = NULL;
	heap_free(&h);
}
END_TEST

/* Two records with one id are two objects; the id finds the first, and
 * references to it go to the first. */
START_TEST(duplicate_object_ids_resolve_to_the_first_record)
{
	uint64_t ids[3] = {0x2000, 0x1000, 0x2000}, cls[3] = {1, 1, 2};
	uint64_t bytes[3] = {10, 20, 30}, refs[1] = {0x2000};
	uint32_t off[4] = {0, 0, 1, 1};
	uint64_t kind = KIND_VM, root = 0x1000;
	struct heap h = {.n = 3,
			 .ids = ids,
			 .cls = cls,
			 .bytes = bytes,
			 .ref_off = off,
			 .refs = refs,
			 .nrefs = 1,
			 .nroots = 1,
			 .root_kind = &kind,
			 .root_obj = &root};
	const char *path = dump_path("dup");
	vmheap_graph *g;
	const uint32_t *t;
	uint64_t count, ub;

	write_heap(&h, path);
	g = open_graph(path);
	ck_assert_uint_eq(vmheap_graph_object_count(g), 3);
	ck_assert_uint_eq(vmheap_graph_find(g, 0x2000), 0);
	ck_assert_uint_eq(vmheap_graph_references(g, 1, &t), 1);
	ck_assert_uint_eq(t[0], 0);
	ck_assert_uint_eq(vmheap_graph_object_class(g, 2), 2);
	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	ck_assert_uint_eq(vmheap_graph_retained_bytes(g, 1), 30);
	ck_assert_int_eq(vmheap_graph_unreachable(g, &count, &ub), 0);
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(ub, 30);
	vmheap_graph_free(g);
}
END_TEST

/* Ids spread over the whole 64-bit range (an id directory over a huge
 * range) are all found, and ids between them are not. */
START_TEST(ids_at_both_ends_of_the_range_are_found)
{
	uint64_t ids[6] = {UINT64_MAX,	   0,	       1,
			   UINT64_MAX - 1, 1ULL << 63, 0x7f0000000000ULL};
	uint64_t cls[6] = {1, 1, 1, 1, 1, 1}, bytes[6] = {1, 2, 3, 4, 5, 6};
	uint32_t off[7] = {0};
	const char *path = dump_path("range");
	struct heap h = {
	    .n = 6, .ids = ids, .cls = cls, .bytes = bytes, .ref_off = off};
	vmheap_graph *g;

	write_heap(&h, path);
	g = open_graph(path);
	for (uint32_t i = 0; i < 6; i++)
		ck_assert_uint_eq(vmheap_graph_find(g, ids[i]), i);
	ck_assert_uint_eq(vmheap_graph_find(g, 2), VMHEAP_GRAPH_NONE);
	ck_assert_uint_eq(vmheap_graph_find(g, UINT64_MAX - 2),
			  VMHEAP_GRAPH_NONE);
	ck_assert_uint_eq(vmheap_graph_find(g, (1ULL << 63) + 1),
			  VMHEAP_GRAPH_NONE);
	ck_assert_uint_eq(vmheap_graph_total_bytes(g), 21);
	vmheap_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------ by hand */

/* Dumps the writer cannot produce, built byte by byte from FORMAT.md with
 * msgpack-c: magic, HEAD, one BLCK of the given records, FOOT, trailer. */
struct hand_dump {
	msgpack_sbuffer file, payload;
	msgpack_packer pk; /* packs into payload */
	uint32_t records;
};

static void hand_start(struct hand_dump *d)
{
	static const unsigned char magic[8] = {0x89, 'V',  'M',	 'H',
					       0x0D, 0x0A, 0x1A, 0x0A};
	msgpack_sbuffer_init(&d->file);
	msgpack_sbuffer_init(&d->payload);
	msgpack_packer_init(&d->pk, &d->payload, msgpack_sbuffer_write);
	d->records = 0;
	msgpack_sbuffer_write(&d->file, (const char *)magic, 8);
}

static void put_be(unsigned char *p, uint64_t v, int bytes)
{
	for (int k = bytes - 1; k >= 0; k--, v >>= 8)
		p[k] = (unsigned char)v;
}

/* Append the payload packed so far as section `tag`, and start afresh. */
static void hand_section(struct hand_dump *d, const char *tag, uint32_t count)
{
	unsigned char hdr[16];
	uint32_t crc;

	memcpy(hdr, tag, 4);
	put_be(hdr + 4, d->payload.size, 4);
	put_be(hdr + 8, count, 4);
	crc = vmheap_crc32c(0, hdr, 12);
	crc = vmheap_crc32c(crc, d->payload.data, d->payload.size);
	put_be(hdr + 12, crc, 4);
	msgpack_sbuffer_write(&d->file, (const char *)hdr, 16);
	msgpack_sbuffer_write(&d->file, d->payload.data, d->payload.size);
	msgpack_sbuffer_clear(&d->payload);
}

static void pack_key(msgpack_packer *pk, const char *key)
{
	msgpack_pack_str(pk, strlen(key));
	msgpack_pack_str_body(pk, key, strlen(key));
}

static void hand_head(struct hand_dump *d)
{
	msgpack_pack_map(&d->pk, 1);
	pack_key(&d->pk, "version");
	msgpack_pack_array(&d->pk, 2);
	msgpack_pack_uint64(&d->pk, 1);
	msgpack_pack_uint64(&d->pk, 0);
	hand_section(d, "HEAD", 0);
}

/* [3, id_delta, class, bytes, kind, [ref_delta...]] or, with class 0 and
 * more != 0, [5, id_delta, [ref_delta...]]. */
static void hand_refs_record(struct hand_dump *d, int more, int64_t id_delta,
			     uint64_t bytes, const int64_t *deltas,
			     size_t ndeltas)
{
	msgpack_pack_array(&d->pk, more ? 3 : 6);
	msgpack_pack_uint64(&d->pk, more ? 5 : 3);
	msgpack_pack_int64(&d->pk, id_delta);
	if (!more) {
		msgpack_pack_uint64(&d->pk, 1);
		msgpack_pack_uint64(&d->pk, bytes);
		msgpack_pack_uint64(&d->pk, 0);
	}
	msgpack_pack_array(&d->pk, ndeltas);
	for (size_t k = 0; k < ndeltas; k++)
		msgpack_pack_int64(&d->pk, deltas[k]);
	d->records++;
}

/* Close the block, write FOOT (with the given totals) and the trailer. */
static void hand_finish(struct hand_dump *d, uint64_t objects, uint64_t bytes,
			uint64_t roots, uint64_t references)
{
	uint64_t block_offset = d->file.size, foot_offset;
	unsigned char trailer[16];

	hand_section(d, "BLCK", d->records);
	foot_offset = d->file.size;
	msgpack_pack_map(&d->pk, 8);
	pack_key(&d->pk, "objects");
	msgpack_pack_uint64(&d->pk, objects);
	pack_key(&d->pk, "bytes");
	msgpack_pack_uint64(&d->pk, bytes);
	pack_key(&d->pk, "classes");
	msgpack_pack_uint64(&d->pk, 0);
	pack_key(&d->pk, "roots");
	msgpack_pack_uint64(&d->pk, roots);
	pack_key(&d->pk, "references");
	msgpack_pack_uint64(&d->pk, references);
	pack_key(&d->pk, "strings");
	msgpack_pack_uint64(&d->pk, 0);
	pack_key(&d->pk, "blocks");
	msgpack_pack_uint64(&d->pk, 1);
	pack_key(&d->pk, "block_offsets");
	msgpack_pack_array(&d->pk, 1);
	msgpack_pack_uint64(&d->pk, block_offset);
	hand_section(d, "FOOT", 0);
	put_be(trailer, foot_offset, 8);
	memcpy(trailer + 8, "VMHEND\r\n", 8);
	msgpack_sbuffer_write(&d->file, (const char *)trailer, 16);
}

static void hand_write(struct hand_dump *d, const char *path)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(d->file.data, 1, d->file.size, f),
			  d->file.size);
	ck_assert_int_eq(fclose(f), 0);
	msgpack_sbuffer_destroy(&d->file);
	msgpack_sbuffer_destroy(&d->payload);
}

/*
 * A more-references record that does not follow its object: it continues
 * object A (0x100) after object B (0x200) came between.  FORMAT.md
 * ("More-references record") says the reader MUST refuse it, naming the
 * record's byte offset: the graph does not open, with the reader's
 * message and code.
 */
START_TEST(more_references_away_from_their_object_are_refused)
{
	struct hand_dump d;
	const char *path = dump_path("more");
	const int64_t a_refs[1] = {0x100};	  /* A (0x100) -> B (0x200) */
	const int64_t b_refs[1] = {-0x100};	  /* B -> A */
	const int64_t more_a[2] = {0x100, 0x100}; /* A -> B, A -> B */
	vmheap_graph *g = (vmheap_graph *)1;
	char want[160];
	const char *err;
	uint64_t more_offset;

	hand_start(&d);
	hand_head(&d);
	hand_refs_record(&d, 0, 0x100, 10, a_refs, 1); /* A */
	hand_refs_record(&d, 0, 0x100, 20, b_refs, 1); /* B */
	/* the block's payload follows its 16-byte section header */
	more_offset = d.file.size + 16 + d.payload.size;
	hand_refs_record(&d, 1, -0x100, 0, more_a, 2); /* more of A */
	msgpack_pack_array(&d.pk, 3); /* root record: kind 1, object B */
	msgpack_pack_uint64(&d.pk, 4);
	msgpack_pack_uint64(&d.pk, 1);
	msgpack_pack_uint64(&d.pk, 0x200);
	d.records++;
	hand_finish(&d, 2, 30, 1, 4);
	hand_write(&d, path);

	/* a failed graph that holds the reader's message */
	ck_assert_int_eq(vmheap_graph_open_path(&g, path), VMHEAP_EFORMAT);
	ck_assert_ptr_nonnull(g);
	err = vmheap_graph_error(g);
	snprintf(want, sizeof(want),
		 "more-references record at byte offset %llu continues object "
		 "0x100, but object 0x200 comes right before it",
		 (unsigned long long)more_offset);
	ck_assert_msg(strstr(err, want) && strstr(err, path),
		      "message: %s\nwanted: %s", err, want);
	vmheap_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------ errors */

START_TEST(missing_file_fails_naming_the_path)
{
	vmheap_graph *g = (vmheap_graph *)1;
	const char *path = dump_path("absent");
	int rc = vmheap_graph_open_path(&g, path);

	ck_assert_int_eq(rc, VMHEAP_EIO);
	ck_assert_ptr_nonnull(g);
	ck_assert_msg(strstr(vmheap_graph_error(g), path) != NULL,
		      "message: %s", vmheap_graph_error(g));
	/* a failed graph is good for _error and _free only */
	ck_assert_uint_eq(vmheap_graph_object_count(g), 0);
	vmheap_graph_free(g);
}
END_TEST

START_TEST(truncated_dump_fails_with_the_readers_message)
{
	struct heap h;
	const char *path = dump_path("cut");
	vmheap_graph *g = (vmheap_graph *)1;
	off_t size;
	int fd;

	random_heap(&h, 7);
	write_heap(&h, path);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	size = lseek(fd, 0, SEEK_END);
	ck_assert_int_eq(ftruncate(fd, size - 20), 0);
	close(fd);
	ck_assert_int_eq(vmheap_graph_open_path(&g, path), VMHEAP_ETRUNCATED);
	ck_assert_msg(strstr(vmheap_graph_error(g), "truncated") &&
			  strstr(vmheap_graph_error(g), path),
		      "message: %s", vmheap_graph_error(g));
	vmheap_graph_free(g);
	/* a NULL `out` is refused without a graph */
	ck_assert_int_eq(vmheap_graph_open_path(NULL, path), VMHEAP_EINVAL);
	heap_free(&h);
}
END_TEST

#ifndef __SANITIZE_ADDRESS__ /* ASan reserves terabytes: no RLIMIT_AS */
/* Out of address space, each computation fails with VMHEAP_ENOMEM and a
 * message, leaves the graph as it was, and succeeds once memory is back. */
START_TEST(out_of_memory_fails_cleanly_and_the_graph_stays_usable)
{
	const uint32_t n = 300000;
	struct heap h = {0};
	const char *path = dump_path("oom");
	uint64_t kind = KIND_VM, pages, count;
	struct rlimit old, low;
	vmheap_graph *g;
	FILE *statm;

	h.n = n;
	h.ids = calloc(n, sizeof(*h.ids));
	h.cls = calloc(n, sizeof(*h.cls));
	h.bytes = calloc(n, sizeof(*h.bytes));
	h.ref_off = calloc(n + 1, sizeof(*h.ref_off));
	h.refs = calloc(n, sizeof(*h.refs));
	for (uint32_t i = 0; i < n; i++) {
		h.ids[i] = 0x8000 + 16 * (uint64_t)i;
		h.cls[i] = 1;
		h.bytes[i] = 16;
		h.refs[h.nrefs++] = 0x8000 + 16 * (uint64_t)((i + 1) % n);
		h.ref_off[i + 1] = (uint32_t)h.nrefs;
	}
	h.nroots = 1;
	h.root_kind = &kind;
	h.root_obj = h.ids;
	write_heap(&h, path);
	g = open_graph(path);

	statm = fopen("/proc/self/statm", "r");
	ck_assert_ptr_nonnull(statm);
	ck_assert_int_eq(fscanf(statm, "%llu", (unsigned long long *)&pages),
			 1);
	fclose(statm);
	ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
	low = old;
	low.rlim_cur = pages * (uint64_t)sysconf(_SC_PAGESIZE) + (1u << 20);
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &low), 0);
	ck_assert_int_eq(vmheap_graph_dominators(g), VMHEAP_ENOMEM);
	ck_assert_msg(strstr(vmheap_graph_error(g), "out of memory"),
		      "message: %s", vmheap_graph_error(g));
	ck_assert_uint_eq(vmheap_graph_idom(g, 1), VMHEAP_GRAPH_NONE);
	ck_assert_int_eq(vmheap_graph_unreachable(g, &count, NULL),
			 VMHEAP_ESTATE);
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), VMHEAP_ENOMEM);
	ck_assert_int_eq(vmheap_graph_path(g, 1, NULL, 0, NULL), VMHEAP_ESTATE);
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &old), 0);
	ck_assert_int_eq(vmheap_graph_dominators(g), 0);
	ck_assert_uint_eq(vmheap_graph_idom(g, 1), 0);
	ck_assert_uint_eq(vmheap_graph_retained_bytes(g, 0), 16ULL * n);
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
	ck_assert_int_eq(vmheap_graph_path(g, n - 1, NULL, 0, NULL), n);
	vmheap_graph_free(g);
	h.root_kind = NULL;
	h.root_obj = NULL;
	heap_free(&h);
}
END_TEST
#endif

/*
 * A dump of more than a million records (more than a build that read
 * ahead on another thread would read itself) whose next-to-last block is
 * damaged: the graph fails with the reader's own code and message, the
 * block's offset in it, as a reader that reads every record itself sees
 * them; the undamaged dump builds whole.
 */
START_TEST(damage_past_the_first_million_records_fails_with_the_readers_message)
{
	const uint32_t n = 1200000;
	const char *path = dump_path("late-damage");
	static const char *const kinds[] = {"object"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	struct vmheap_record rec;
	struct vmheap_block blk;
	uint64_t last = 0, before_last = 0;
	uint32_t last_len = 0, before_last_len = 0;
	vmheap_writer *w;
	vmheap_reader *r;
	vmheap_graph *g;
	char want[512];
	unsigned char byte;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	int rc, want_rc;

	ck_assert_int_ge(fd, 0);
	opt.kind_names = kinds;
	opt.kind_count = 1;
	opt.block_bytes = 65536; /* the last blocks hold the last records */
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, 1, "vm", 2), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Node", 4, 0, 0), 0);
	for (uint32_t k = 0; k < n; k++) {
		uint64_t id = 0x10000 + 16ULL * k, ref = id + 16;
		ck_assert_int_eq(
		    vmheap_writer_add_object(w, id, 1, 16, 0, &ref, k + 1 < n),
		    0);
	}
	ck_assert_int_eq(vmheap_writer_add_root(w, 1, 0x10000), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	close(fd);

	g = open_graph(path);
	ck_assert_uint_eq(vmheap_graph_object_count(g), n);
	ck_assert_uint_eq(vmheap_graph_reference_count(g), n - 1);
	ck_assert_uint_eq(vmheap_graph_missing_references(g), 0);
	vmheap_graph_free(g);

	/* the blocks' places; the next-to-last one gets a byte flipped in
	 * the middle of its payload (its CRC no longer matches) */
	ck_assert_int_eq(vmheap_reader_open_path(&r, path), 0);
	while ((rc = vmheap_reader_next_block(r, &blk)) > 0) {
		before_last = last;
		before_last_len = last_len;
		last = blk.offset;
		last_len = blk.length;
	}
	ck_assert_int_eq(rc, 0);
	vmheap_reader_free(r);
	ck_assert_uint_gt(before_last, 0);
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	/* (past the 16-byte section header, FORMAT.md) */
	off_t at = (off_t)(before_last + 16 + before_last_len / 2);
	ck_assert_int_eq(pread(fd, &byte, 1, at), 1);
	byte ^= 0x5a;
	ck_assert_int_eq(pwrite(fd, &byte, 1, at), 1);
	close(fd);

	/* the reader's own answer, record by record */
	ck_assert_int_eq(vmheap_reader_open_path(&r, path), 0);
	while ((want_rc = vmheap_reader_next(r, &rec)) > 0)
		;
	ck_assert_int_lt(want_rc, 0);
	snprintf(want, sizeof(want), "%s", vmheap_reader_error(r));
	vmheap_reader_free(r);
	ck_assert_msg(strstr(want, "offset") != NULL, "reader: %s", want);

	g = (vmheap_graph *)1;
	ck_assert_int_eq(vmheap_graph_open_path(&g, path), want_rc);
	ck_assert_ptr_nonnull(g);
	ck_assert_str_eq(vmheap_graph_error(g), want);
	vmheap_graph_free(g);
	unlink(path);
}
END_TEST

START_TEST(graph_from_an_open_reader)
{
	struct heap h;
	const char *path = dump_path("reader");
	vmheap_reader *r;
	vmheap_graph *g;

	random_heap(&h, 12);
	write_heap(&h, path);
	ck_assert_int_eq(vmheap_reader_open_path(&r, path), 0);
	ck_assert_int_eq(vmheap_graph_read(&g, r), 0);
	vmheap_reader_free(r);
	check_against_brute_force(&h, g, 12);
	vmheap_graph_free(g);
	heap_free(&h);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("graph");
	TCase *random = spec_tcase(s, "random heaps", 120);
	TCase *shapes = spec_tcase(s, "shapes", 120);
	TCase *errors = spec_tcase(s, "errors", 30);
	TCase *big = spec_tcase(s, "big heap", 120);

	tcase_add_loop_test(random, random_heaps_agree_with_brute_force, 0, 12);
	tcase_add_loop_test(
	    random, random_reachable_heaps_agree_with_brute_force, 0, 4);

	tcase_add_test(shapes,
		       empty_dump_has_no_objects_and_nothing_unreachable);
	tcase_add_test(shapes, one_object_dump_with_and_without_its_root);
	tcase_add_test(shapes, million_long_chain_is_dominated_link_by_link);
	tcase_add_test(shapes, million_long_chain_with_edges_back_to_the_head);
	tcase_add_test(shapes, references_continued_in_more_records_all_count);
	tcase_add_test(shapes,
		       million_node_list_is_two_shapes_by_named_references);
	tcase_add_test(shapes, exclude_lists_parse);
	tcase_add_test(shapes,
		       internal_objects_are_passed_by_their_named_references_only);
	tcase_add_test(shapes,
		       duplicate_object_ids_resolve_to_the_first_record);
	tcase_add_test(shapes, ids_at_both_ends_of_the_range_are_found);
	tcase_add_test(shapes,
		       more_references_away_from_their_object_are_refused);

	tcase_add_test(big,
		       big_random_heap_agrees_with_the_iterative_algorithm);

	tcase_add_test(errors, missing_file_fails_naming_the_path);
	tcase_add_test(errors, truncated_dump_fails_with_the_readers_message);
	tcase_add_test(errors, graph_from_an_open_reader);
	tcase_add_test(
	    big,
	    damage_past_the_first_million_records_fails_with_the_readers_message);

	/* its own case: it lowers RLIMIT_AS, which neither ASan (terabytes of
	 * shadow) nor valgrind (its own heap) survives */
#ifndef __SANITIZE_ADDRESS__
	TCase *memory = spec_tcase(s, "out of memory", 60);
	tcase_add_test(memory,
		       out_of_memory_fails_cleanly_and_the_graph_stays_usable);
#endif
	return s;
}
