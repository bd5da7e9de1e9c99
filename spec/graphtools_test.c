/*
 * graphtools_test.c - the graph tools (vmheap-path, vmheap-dominators,
 * vmheap-histo --retained, vmheap-diff --paths) and the queries behind them
 * (analysis/vmheap_graph_query.h), checked against brute force computed
 * here from the heap as the test wrote it with the real writer:
 *
 *  - reachability: a breadth-first search from the root records;
 *  - retained size of d: the bytes no root reaches once d is removed;
 *  - retained bytes of a class: the bytes of the objects that some
 *    instance of the class dominates (no root reaches them once that
 *    instance is removed), each counted once;
 *  - shortest path lengths: a breadth-first search.
 *
 * Known shapes (a leak held by a global's Array, by a chain of Hashes)
 * check what a person reads in the output; random heaps (cycles,
 * self-loops, missing ids, unreachable objects, several roots) check the
 * numbers.  The "suspects" TCase checks vmheap-diff --suspects on pairs of
 * heaps whose owners, held bytes and growth are known by construction (a
 * composite leak, lone Strings, churn).  The "ruby" TCase runs real Ruby
 * VMs: three leaks whose top paths lead to the roots that hold them, and
 * four dumps of one VM for --suspects (churn, LeakedRequests under
 * $REQUEST_CACHE, lone Strings under $LINES).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools_harness-internal.h"
#include "vmheap.h"
#include "vmheap_graph_query.h"
#include "vmheap_report.h"

/* ------------------------------------------------------------ heaps */

#define MAXN 2048

/* A heap as written: objects (struct tobj with `many` references), roots,
 * and the references resolved to indices for the brute force. */
struct heap {
	struct tobj objs[MAXN];
	uint64_t *refs[MAXN]; /* ids, owned */
	size_t nrefs[MAXN], caps[MAXN];
	size_t n;
	struct troot roots[8];
	size_t nroots;
	struct tclass classes[8];
	size_t nclasses;
};

static const struct tclass names[] = {
    {1, "Object"}, {2, "Array"}, {3, "Hash"}, {4, "Leak"}, {5, "Noise"},
};

static void heap_init(struct heap *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->classes, names, sizeof(names));
	h->nclasses = sizeof(names) / sizeof(*names);
}

static size_t obj(struct heap *h, uint64_t id, uint64_t cls, uint64_t bytes)
{
	ck_assert_uint_lt(h->n, MAXN);
	h->objs[h->n] = (struct tobj){.id = id, .cls = cls, .bytes = bytes};
	return h->n++;
}

static void ref(struct heap *h, size_t from, uint64_t to)
{
	if (h->nrefs[from] == h->caps[from]) {
		h->caps[from] = h->caps[from] ? 2 * h->caps[from] : 4;
		h->refs[from] = realloc(h->refs[from],
					h->caps[from] * sizeof(uint64_t));
		ck_assert_ptr_nonnull(h->refs[from]);
	}
	h->refs[from][h->nrefs[from]++] = to;
}

static void root(struct heap *h, const char *kind, uint64_t id)
{
	uint64_t sid = 0;

	for (size_t k = 0; k < h->nroots; k++)
		if (!strcmp(h->roots[k].kind, kind))
			sid = h->roots[k].string_id;
	h->roots[h->nroots] = (struct troot){
	    .string_id = sid ? sid : 100 + h->nroots, .kind = kind, .object = id};
	h->nroots++;
}

static const char *heap_write(struct heap *h, const char *name)
{
	struct tdump d = {0};

	for (size_t i = 0; i < h->n; i++) {
		h->objs[i].many = h->refs[i];
		h->objs[i].nrefs = h->nrefs[i];
	}
	d.classes = h->classes;
	d.nclasses = h->nclasses;
	d.objs = h->objs;
	d.nobjs = h->n;
	d.roots = h->roots;
	d.nroots = h->nroots;
	d.block_bytes = 4096;
	return write_dump(name, &d);
}

static void heap_free(struct heap *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->refs[i]);
}

/* Index of the first object of id `id`, or -1. */
static long find(const struct heap *h, uint64_t id)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->objs[i].id == id)
			return (long)i;
	return -1;
}

/* ------------------------------------------------------------ brute force */

/* Breadth-first search from the roots without object `skip` (-1: none):
 * dist[i] is the number of references from a root object (0 for one), or
 * -1 when no root reaches i. */
static void bfs(const struct heap *h, long skip, long *dist)
{
	static size_t queue[MAXN];
	size_t head = 0, tail = 0;

	for (size_t i = 0; i < h->n; i++)
		dist[i] = -1;
	for (size_t k = 0; k < h->nroots; k++) {
		long i = find(h, h->roots[k].object);
		if (i >= 0 && i != skip && dist[i] < 0) {
			dist[i] = 0;
			queue[tail++] = (size_t)i;
		}
	}
	while (head < tail) {
		size_t v = queue[head++];
		for (size_t r = 0; r < h->nrefs[v]; r++) {
			long w = find(h, h->refs[v][r]);
			if (w >= 0 && w != skip && dist[w] < 0) {
				dist[w] = dist[v] + 1;
				queue[tail++] = (size_t)w;
			}
		}
	}
}

/* Bytes no root reaches once d is removed (d reachable), d included. */
static uint64_t brute_retained(const struct heap *h, long d)
{
	static long all[MAXN], without[MAXN];
	uint64_t sum = 0;

	bfs(h, -1, all);
	bfs(h, d, without);
	for (size_t v = 0; v < h->n; v++)
		if (all[v] >= 0 && without[v] < 0)
			sum += h->objs[v].bytes;
	return sum;
}

/* Bytes of the objects some reachable instance of class `cls` dominates. */
static uint64_t brute_class_retained(const struct heap *h, uint64_t cls)
{
	static long all[MAXN], without[MAXN];
	static unsigned char held[MAXN];
	uint64_t sum = 0;

	bfs(h, -1, all);
	memset(held, 0, sizeof(held));
	for (size_t u = 0; u < h->n; u++) {
		if (h->objs[u].cls != cls || all[u] < 0)
			continue;
		bfs(h, (long)u, without);
		for (size_t v = 0; v < h->n; v++)
			if (all[v] >= 0 && without[v] < 0)
				held[v] = 1;
	}
	for (size_t v = 0; v < h->n; v++)
		if (held[v])
			sum += h->objs[v].bytes;
	return sum;
}

/* A random heap: 1 to 120 objects of classes 1..5, 0 to 3 references each
 * (self-loops, cycles, duplicates, ids that no object has), 1 to 3 roots
 * of two kinds (one may name a missing id), ids in and out of order. */
static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 8) & 0xffff;
}

static void random_heap(struct heap *h, unsigned seed)
{
	unsigned s = seed * 2654435761u + 1;
	size_t n = 1 + rnd(&s) % 120;

	heap_init(h);
	for (size_t i = 0; i < n; i++) {
		uint64_t id = 0x1000 + 0x10 * (rnd(&s) % 4 ? i : n + i);
		uint64_t cls = 1 + rnd(&s) % 5;
		obj(h, id, cls, 8 + rnd(&s) % 200);
	}
	for (size_t i = 0; i < n; i++) {
		size_t nr = rnd(&s) % 4;
		for (size_t r = 0; r < nr; r++) {
			int missing = rnd(&s) % 10 == 0;
			ref(h, i, missing ? 0x99990 : h->objs[rnd(&s) % n].id);
		}
	}
	size_t nroots = 1 + rnd(&s) % 3;
	for (size_t k = 0; k < nroots; k++) {
		int missing = rnd(&s) % 12 == 0;
		root(h, k % 2 ? "global_tbl" : "vm",
		     missing ? 0x88880 : h->objs[rnd(&s) % n].id);
	}
}

/* ------------------------------------------------------------ queries */

static vmheap_graph *open_graph(const char *path)
{
	vmheap_graph *g;
	ck_assert_msg(vmheap_graph_open_path(&g, path) == 0, "open %s: %s",
		      path, vmheap_graph_error(g));
	return g;
}

/* Retained bytes per class (each class id its own group) against brute
 * force. */
START_TEST(class_retained_bytes_agree_with_brute_force)
{
	for (unsigned seed = 0; seed < 40; seed++) {
		struct heap h;
		random_heap(&h, seed * 40 + (unsigned)_i);
		vmheap_graph *g = open_graph(heap_write(&h, "r.vmheap"));
		size_t nc = vmheap_graph_class_count(g);
		uint32_t group[16];
		uint64_t out[16];

		ck_assert_uint_le(nc, 16);
		for (size_t k = 0; k < nc; k++)
			group[k] = (uint32_t)k;
		ck_assert_int_eq(vmheap_graph_group_retained(g, group, nc, out),
				 0);
		for (size_t k = 0; k < nc; k++) {
			uint64_t cls = vmheap_graph_class_id(g, k);
			ck_assert_msg(out[k] == brute_class_retained(&h, cls),
				      "seed %u class %" PRIu64 ": %" PRIu64
				      " != brute force %" PRIu64,
				      seed, cls, out[k],
				      brute_class_retained(&h, cls));
		}
		/* all classes in one group: the bytes reachable */
		memset(group, 0, sizeof(group));
		ck_assert_int_eq(vmheap_graph_group_retained(g, group, 1, out),
				 0);
		uint64_t unreachable_bytes;
		ck_assert_int_eq(
		    vmheap_graph_unreachable(g, NULL, &unreachable_bytes), 0);
		ck_assert_uint_eq(out[0], vmheap_graph_total_bytes(g) -
					      unreachable_bytes);
		vmheap_graph_free(g);
		heap_free(&h);
	}
}
END_TEST

/*
 * Paths of a set of objects merged by shape: every object lands in the
 * group of its own path's shape (root kind, classes), the counts and bytes
 * add up, each example's path is as long as the brute-force distance, and
 * the unreachable ones are counted apart.
 */
/* 1 when path[l] continues a run (vmheap_graph.h: a run of one class
 * reached by one name below the root object is one step of a shape). */
static int run_step(const vmheap_graph *g, const uint32_t *path, int64_t l)
{
	struct vmheap_graph_name a, b;

	if (l < 2 || vmheap_graph_object_class(g, path[l]) !=
			 vmheap_graph_object_class(g, path[l - 1]))
		return 0;
	vmheap_graph_path_name(g, path[l], &a);
	vmheap_graph_path_name(g, path[l - 1], &b);
	if (a.type != b.type)
		return a.type != VMHEAP_GRAPH_NAME_NONE &&
		       b.type != VMHEAP_GRAPH_NAME_NONE &&
		       (a.type == VMHEAP_GRAPH_NAME_INDEX ||
			(a.text && a.text[0] == '[')) &&
		       (b.type == VMHEAP_GRAPH_NAME_INDEX ||
			(b.text && b.text[0] == '['));
	if (a.type == VMHEAP_GRAPH_NAME_TEXT)
		return a.string_id == b.string_id ||
		       (a.text[0] == '[' && b.text[0] == '[');
	return 1;
}

START_TEST(object_paths_merge_every_object_by_its_shape)
{
	for (unsigned seed = 0; seed < 40; seed++) {
		struct heap h;
		static long dist[MAXN];
		random_heap(&h, 7000 + seed * 40 + (unsigned)_i);
		vmheap_graph *g = open_graph(heap_write(&h, "p.vmheap"));
		uint32_t n = vmheap_graph_object_count(g), objs[MAXN];
		size_t m = 0;
		struct vmheap_graph_class_paths *p;
		uint64_t counted = 0, unreachable = 0;

		bfs(&h, -1, dist);
		for (uint32_t i = 0; i < n; i++)
			if (vmheap_graph_object_class(g, i) != 5)
				objs[m++] = i;
		if (m)
			objs[m++] = objs[0]; /* listed twice: counts twice */
		ck_assert_int_eq(vmheap_graph_object_paths(g, objs, m, &p), 0);
		ck_assert_uint_eq(p->instances, m);
		for (size_t k = 0; k < m; k++) {
			uint32_t i = objs[k], path[MAXN];
			size_t r;
			int64_t len = vmheap_graph_path(g, i, path, MAXN, &r);
			ck_assert_int_eq(len, dist[i] + 1);
			if (!len) {
				unreachable++;
				continue;
			}
			size_t hits = 0;
			for (size_t x = 0; x < p->group_count; x++) {
				const struct vmheap_graph_path_group *grp =
				    &p->groups[x];
				int same = grp->kind_string_id ==
					   vmheap_graph_root(g, r)
					       ->kind_string_id;
				size_t steps = 0;
				for (int64_t l = 0; same && l < len; l++) {
					if (run_step(g, path, l))
						continue;
					same = steps < grp->length &&
					       grp->classes[steps] ==
						   vmheap_graph_object_class(
						       g, path[l]);
					steps++;
				}
				hits += same && steps == grp->length;
			}
			ck_assert_uint_eq(hits, 1);
		}
		for (size_t x = 0; x < p->group_count; x++) {
			const struct vmheap_graph_path_group *grp = &p->groups[x];
			counted += grp->count;
			size_t example_root;
			/* a run is one step: the path has at least as many */
			ck_assert_int_ge(vmheap_graph_path(g, grp->example, NULL,
							   0, &example_root),
					 (int64_t)grp->length);
			ck_assert_uint_eq(grp->root, example_root);
			ck_assert_uint_eq(
			    grp->kind_string_id,
			    vmheap_graph_root(g, example_root)->kind_string_id);
			if (x)
				ck_assert_uint_ge(p->groups[x - 1].count,
						  grp->count);
		}
		ck_assert_uint_eq(counted + p->unreachable, m);
		ck_assert_uint_eq(p->unreachable, unreachable);
		vmheap_graph_object_paths_free(p);
		vmheap_graph_free(g);
		heap_free(&h);
	}
}
END_TEST

START_TEST(nearest_class_names_by_edit_distance)
{
	struct heap h;
	size_t ks[8];

	heap_init(&h);
	obj(&h, 0x10, 4, 8);
	vmheap_graph *g = open_graph(heap_write(&h, "n.vmheap"));
	int64_t n = vmheap_graph_nearest_classes(g, "leek", ks, 8);
	ck_assert_int_ge(n, 1);
	char *l = vmheap_graph_class_label(g, vmheap_graph_class_id(g, ks[0]));
	ck_assert_str_eq(l, "Leak");
	free(l);
	ck_assert_int_eq(vmheap_graph_nearest_classes(g, "Zzzzzzzzzzzz", ks, 8),
			 0);
	ck_assert_int_eq(vmheap_graph_classes_labelled(g, "Hash", NULL, 0), 1);
	ck_assert_int_eq(vmheap_graph_classes_labelled(g, "hash", NULL, 0), 0);
	vmheap_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------ known shapes */

#define ARRAY_ID 0x1000
#define HOLDER_ID 0x2000
#define HASH_ID 0x3000
#define LEAKS 300
#define HASH_LEAKS 20
#define LOST 5

/*
 * A global's Array holding LEAKS Leak objects; a "vm" root Object holding
 * a Hash with HASH_LEAKS more Leak objects and 50 Noise; LOST Leak objects
 * that no root reaches.  `leaks` leaves out the last Array leaks (for an
 * older dump).
 */
static void global_array_heap(struct heap *h, size_t leaks)
{
	heap_init(h);
	size_t holder = obj(h, HOLDER_ID, 1, 40);
	size_t hash = obj(h, HASH_ID, 3, 160);
	size_t array = obj(h, ARRAY_ID, 2, 2424);
	ref(h, holder, HASH_ID);
	for (size_t k = 0; k < 50; k++) {
		obj(h, 0x50000 + 0x10 * k, 5, 24);
		ref(h, hash, 0x50000 + 0x10 * k);
	}
	for (size_t k = 0; k < HASH_LEAKS; k++) {
		obj(h, 0x60000 + 0x10 * k, 4, 48);
		ref(h, hash, 0x60000 + 0x10 * k);
	}
	for (size_t k = 0; k < leaks; k++) {
		obj(h, 0x10000 + 0x10 * k, 4, 40);
		ref(h, array, 0x10000 + 0x10 * k);
	}
	for (size_t k = 0; k < LOST; k++)
		obj(h, 0x70000 + 0x10 * k, 4, 40);
	root(h, "vm", HOLDER_ID);
	root(h, "global_tbl", ARRAY_ID);
}

/* The line of `out` that starts (after spaces) with `prefix`, or NULL. */
static const char *line_starting(const char *out, const char *prefix)
{
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *t = l + strspn(l, " ");
		if (!strncmp(t, prefix, strlen(prefix)))
			return t;
	}
	return NULL;
}

/* Run tool `name` with `args`: it exits 0, and each of `want` (NULL
 * ends it) starts a line of its output, after the line's spaces. */
static void expect_lines(const char *name, const char *const *args,
			 const char *const *want)
{
	struct spec_run r = spec_tool(name, args);

	ck_assert_msg(r.status == 0, "%s: status %d: %s", name, r.status,
		      r.err);
	for (; *want; want++)
		ck_assert_msg(line_starting(r.out, *want), "no '%s' in:\n%s",
			      *want, r.out);
	spec_run_free(&r);
}

START_TEST(path_of_a_leak_held_by_a_globals_array)
{
	struct heap h;
	global_array_heap(&h, LEAKS);
	const char *dump = heap_write(&h, "global.vmheap");
	struct spec_run r =
	    spec_tool("vmheap-path", (const char *[]){dump, "Leak", NULL});

	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	/* sizes in units (13160 bytes = 12.85 KiB), shares with one
	 * decimal (300 of 325 = 92.3%) */
	ck_assert_msg(strstr(r.out, "class Leak: 325 instances, 12.9 KiB "
				    "(13160 bytes); 2 path shapes; 5 "
				    "unreachable, 200 B\n"),
		      "%s", r.out);
	/* the biggest group first: the global's Array, then the Hash */
	const char *g1 = strstr(r.out, "#1  300 instances (92.3%), 11.7 KiB, "
				       "path of 2 objects\n"
				       "    root global_tbl\n"
				       "      Array  0x1000\n"
				       "      Leak  0x10000\n");
	const char *g2 = strstr(r.out, "#2  20 instances (6.2%), 960 B, "
				       "path of 3 objects\n"
				       "    root vm\n"
				       "      Object  0x2000\n"
				       "      Hash  0x3000\n"
				       "      Leak  0x60000\n");
	ck_assert_msg(g1 && g2 && g1 < g2, "%s", r.out);
	spec_run_free(&r);

	/* --bytes: the exact counts */
	expect_lines("vmheap-path",
		     (const char *[]){"--bytes", dump, "Leak", NULL},
		     (const char *[]){"class Leak: 325 instances, 13160 bytes; "
				      "2 path shapes; 5 unreachable, 200 "
				      "bytes\n",
				      "#1  300 instances (92.3%), 12000 bytes, "
				      "path of 2 objects\n",
				      NULL});

	r = spec_tool("vmheap-path",
		      (const char *[]){"--format", "json", "--top", "1", dump,
				       "Leak", NULL});
	ck_assert_int_eq(r.status, 0);
	struct jval *j = json_parse(r.out);
	ck_assert_msg(j, "not JSON: %s", r.out);
	ck_assert_int_eq(json_get(j, "instances")->inum, 325);
	ck_assert_int_eq(json_get(j, "unreachable")->inum, LOST);
	ck_assert_int_eq(json_get(j, "group_count")->inum, 2);
	const struct jval *groups = json_get(j, "groups");
	ck_assert_uint_eq(groups->n, 1);
	ck_assert_int_eq(json_get(groups->items[0], "count")->inum, LEAKS);
	ck_assert_str_eq(
	    json_get(json_get(groups->items[0], "root"), "kind")->str,
	    "global_tbl");
	const struct jval *path = json_get(groups->items[0], "path");
	ck_assert_uint_eq(path->n, 2);
	ck_assert_str_eq(json_get(path->items[0], "class")->str, "Array");
	ck_assert_str_eq(json_get(path->items[0], "address")->str, "0x1000");
	json_free(j);
	spec_run_free(&r);

	/* one object by address: the Hash's leak */
	r = spec_tool("vmheap-path", (const char *[]){dump, "0x60010", NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "object 0x60010: Leak, 48 bytes\n"), "%s",
		      r.out);
	ck_assert_msg(strstr(r.out, "    root vm\n      Object  0x2000\n      "
				    "Hash  0x3000\n      Leak  0x60010\n"),
		      "%s", r.out);
	spec_run_free(&r);
	/* an unreachable one */
	r = spec_tool("vmheap-path", (const char *[]){dump, "0x70000", NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "unreachable: no root reaches it"), "%s",
		      r.out);
	spec_run_free(&r);
	heap_free(&h);
}
END_TEST

START_TEST(dominators_of_the_global_array_leak_match_brute_force)
{
	struct heap h;
	global_array_heap(&h, LEAKS);
	const char *dump = heap_write(&h, "dom.vmheap");
	struct spec_run r = spec_tool(
	    "vmheap-dominators",
	    (const char *[]){"--format", "csv", "--top", "3", dump, NULL});
	size_t nrows;
	char line[256];

	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	char ***rows = parse_csv(r.out, &nrows);
	ck_assert_uint_eq(nrows, 4);
	ck_assert_str_eq(rows[0][5], "dominated_by");
	/* the Array retains itself and its 300 leaks */
	ck_assert_str_eq(rows[1][0], "0x1000");
	ck_assert_str_eq(rows[1][1], "Array");
	ck_assert_str_eq(rows[1][2], "2424");
	snprintf(line, sizeof(line), "%" PRIu64,
		 brute_retained(&h, find(&h, ARRAY_ID)));
	ck_assert_str_eq(rows[1][3], line);
	ck_assert_str_eq(rows[1][3], "14424");
	ck_assert_str_eq(rows[1][5], "root global_tbl");
	/* then the holder Object, then its Hash, dominated by it */
	ck_assert_str_eq(rows[2][0], "0x2000");
	snprintf(line, sizeof(line), "%" PRIu64,
		 brute_retained(&h, find(&h, HOLDER_ID)));
	ck_assert_str_eq(rows[2][3], line);
	ck_assert_str_eq(rows[3][0], "0x3000");
	ck_assert_str_eq(rows[3][5], "Object 0x2000 \xe2\x86\x90 root vm");
	csv_free(rows, nrows);
	spec_run_free(&r);

	/* text: 14424 of 16984 bytes is 84.9%; 14424 bytes = 14.09 KiB,
	 * 2424 = 2.37 KiB, 16984 = 16.59 KiB */
	snprintf(line, sizeof(line), "%.1f%%", 100.0 * 14424 / 16984);
	ck_assert_str_eq(line, "84.9%");
	expect_lines("vmheap-dominators",
		     (const char *[]){"--top", "1", dump, NULL},
		     (const char *[]){"378 objects, 16.6 KiB (16984 bytes); "
				      "unreachable from the roots: 5 objects, "
				      "200 bytes\n",
				      "14.1 KiB  84.9%  2.37 KiB  Array  "
				      "0x1000   root global_tbl\n",
				      NULL});
	expect_lines("vmheap-dominators",
		     (const char *[]){"--bytes", "--top", "1", dump, NULL},
		     (const char *[]){"378 objects, 16984 bytes; unreachable "
				      "from the roots: 5 objects, 200 bytes\n",
				      "14424  84.9%  2424  Array  0x1000   "
				      "root global_tbl\n",
				      NULL});
	heap_free(&h);
}
END_TEST

/*
 * root -> Hash h1 -> Hash h2 -> Hash h3 -> 400 Leak, and h1 -> 30 Leak: the
 * chain of Hashes is the top path, each Hash's dominators are the Hashes
 * above it, and each retained size is brute force's.
 */
START_TEST(chain_of_hashes_shows_in_paths_and_dominators)
{
	struct heap h;
	size_t hs[3];

	heap_init(&h);
	for (int k = 0; k < 3; k++) {
		hs[k] = obj(&h, 0x100 + 0x100 * (uint64_t)k, 3, 100);
		if (k)
			ref(&h, hs[k - 1], 0x100 + 0x100 * (uint64_t)k);
	}
	for (size_t k = 0; k < 400; k++) {
		obj(&h, 0x10000 + 0x10 * k, 4, 40);
		ref(&h, hs[2], 0x10000 + 0x10 * k);
	}
	for (size_t k = 0; k < 30; k++) {
		obj(&h, 0x20000 + 0x10 * k, 4, 40);
		ref(&h, hs[0], 0x20000 + 0x10 * k);
	}
	root(&h, "vm", 0x100);
	const char *dump = heap_write(&h, "chain.vmheap");

	struct spec_run r =
	    spec_tool("vmheap-path", (const char *[]){dump, "Leak", NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "#1  400 instances (93.0%), 15.6 KiB, "
				    "path of 4 objects\n    root vm\n"
				    "      Hash  0x100\n      Hash  0x200\n"
				    "      Hash  0x300\n      Leak  0x10000\n"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "#2  30 instances (7.0%)"), "%s", r.out);
	spec_run_free(&r);

	r = spec_tool("vmheap-dominators",
		      (const char *[]){"--class", "Hash", "--format", "json",
				       dump, NULL});
	ck_assert_int_eq(r.status, 0);
	struct jval *j = json_parse(r.out);
	ck_assert_ptr_nonnull(j);
	const struct jval *top = json_get(j, "top");
	ck_assert_uint_eq(top->n, 3);
	for (int k = 0; k < 3; k++) {
		const struct jval *row = top->items[k];
		char want[32];
		snprintf(want, sizeof(want), "0x%x", 0x100 + 0x100 * k);
		ck_assert_str_eq(json_get(row, "address")->str, want);
		ck_assert_int_eq(json_get(row, "retained_bytes")->inum,
				 (long long)brute_retained(&h, (long)hs[k]));
		const struct jval *doms = json_get(row, "dominators");
		ck_assert_uint_eq(doms->n, (size_t)k);
		for (int d = 0; d < k; d++) {
			snprintf(want, sizeof(want), "0x%x",
				 0x100 + 0x100 * (k - 1 - d));
			ck_assert_str_eq(json_get(doms->items[d], "address")->str,
					 want);
		}
		ck_assert_str_eq(json_get(json_get(row, "root"), "kind")->str,
				 "vm");
	}
	json_free(j);
	spec_run_free(&r);

	/* Hash retains everything; Leak only itself per instance */
	r = spec_tool("vmheap-histo", (const char *[]){"--retained", "--format",
						       "csv", dump, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "3,Hash,300,17500,100.0000\n"), "%s",
		      r.out);
	ck_assert_msg(strstr(r.out, "430,Leak,17200,17200,98.2857\n"), "%s",
		      r.out);
	spec_run_free(&r);
	/* the same in text: units (17500 bytes = 17.09 KiB, 17200 = 16.80
	 * KiB), one decimal; exact counts with --bytes */
	/* (the total row has no retained share: it ends after its bytes) */
	expect_lines("vmheap-histo", (const char *[]){"--retained", dump, NULL},
		     (const char *[]){"3  Hash                  300 B  "
				      "17.1 KiB  100.0%\n",
				      "430  Leak               16.8 KiB  "
				      "16.8 KiB   98.3%\n",
				      "433  total (2 classes)  17.1 KiB\n",
				      NULL});
	expect_lines("vmheap-histo",
		     (const char *[]){"--retained", "--bytes", dump, NULL},
		     (const char *[]){"430  Leak               17200     "
				      "17200   98.3%\n",
				      NULL});
	heap_free(&h);
}
END_TEST

/* vmheap-histo --retained on random heaps: every class's retained bytes
 * and count are brute force's. */
START_TEST(histo_retained_column_agrees_with_brute_force)
{
	for (unsigned seed = 0; seed < 6; seed++) {
		struct heap h;
		size_t nrows;
		random_heap(&h, 300 + seed * 10 + (unsigned)_i);
		const char *dump = heap_write(&h, "histo.vmheap");
		struct spec_run r = spec_tool(
		    "vmheap-histo", (const char *[]){"--retained", "--format",
						     "csv", dump, NULL});
		ck_assert_msg(r.status == 0, "%s", r.err);
		char ***rows = parse_csv(r.out, &nrows);
		ck_assert_str_eq(rows[0][3], "retained_bytes");
		for (size_t k = 1; k < nrows; k++) {
			uint64_t cls = 0, count = 0;
			for (size_t c = 0; c < h.nclasses; c++)
				if (!strcmp(h.classes[c].name, rows[k][1]))
					cls = h.classes[c].id;
			for (size_t i = 0; i < h.n; i++)
				count += h.objs[i].cls == cls;
			ck_assert_uint_eq(strtoull(rows[k][0], NULL, 10),
					  count);
			ck_assert_msg(strtoull(rows[k][3], NULL, 10) ==
					  brute_class_retained(&h, cls),
				      "seed %u class %s: %s != %" PRIu64, seed,
				      rows[k][1], rows[k][3],
				      brute_class_retained(&h, cls));
			/* sorted by retained bytes, most first */
			if (k > 1)
				ck_assert_uint_ge(strtoull(rows[k - 1][3], NULL,
							   10),
						  strtoull(rows[k][3], NULL,
							   10));
		}
		csv_free(rows, nrows);
		spec_run_free(&r);
		heap_free(&h);
	}
}
END_TEST

START_TEST(diff_paths_show_where_the_new_objects_hang)
{
	struct heap old_h, new_h;
	global_array_heap(&old_h, 100);
	global_array_heap(&new_h, LEAKS);
	const char *old_dump = heap_write(&old_h, "old.vmheap");
	const char *new_dump = heap_write(&new_h, "new.vmheap");

	struct spec_run r =
	    spec_tool("vmheap-diff",
		      (const char *[]){"--paths", old_dump, new_dump, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	/* 8000 bytes = 7.81 KiB */
	ck_assert_msg(strstr(r.out, "new objects: 200, 7.81 KiB (8000 bytes), "
				    "in 1 class; paths of the top 1\n"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "Leak: 200 new objects, 7.81 KiB; 1 path "
				    "shape; 0 unreachable\n"
				    "  #1  200 new (100.0%), 7.81 KiB, path "
				    "of 2 objects\n"
				    "      root global_tbl\n"
				    "        Array  0x1000\n"
				    "        Leak  0x10640\n"),
		      "%s", r.out);
	spec_run_free(&r);

	/* --bytes: the exact counts, and each dump's totals */
	r = spec_tool(
	    "vmheap-diff",
	    (const char *[]){"--paths", "--bytes", old_dump, new_dump, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(
	    strstr(r.out, "new objects: 200, 8000 bytes, in 1 class; "
			  "paths of the top 1\n") &&
		strstr(r.out, "Leak: 200 new objects, 8000 bytes; ") &&
		strstr(r.out, "  #1  200 new (100.0%), 8000 bytes, "),
	    "%s", r.out);
	ck_assert_msg(strstr(r.out, "old.vmheap (vm ") &&
			  strstr(r.out, "): 178 objects, 8984 bytes\nnew: ") &&
			  strstr(r.out, "): 378 objects, 16984 bytes\nnew "
					"objects: "),
		      "%s", r.out);
	spec_run_free(&r);

	/* the same count as --objects, which matches by identity too */
	r = spec_tool("vmheap-diff",
		      (const char *[]){"--objects", "--format", "csv", old_dump,
				       new_dump, NULL});
	ck_assert_msg(strstr(r.out, "200,Leak,8000"), "%s", r.out);
	spec_run_free(&r);

	r = spec_tool("vmheap-diff",
		      (const char *[]){"--paths", "--format", "csv", old_dump,
				       new_dump, NULL});
	ck_assert_msg(strstr(r.out, "Leak,200,8000,1,200,8000,global_tbl,"
				    "Array > Leak\n"),
		      "%s", r.out);
	spec_run_free(&r);
	heap_free(&old_h);
	heap_free(&new_h);
}
END_TEST

/* A 100-object chain shows its two ends and the count between. */
START_TEST(long_paths_show_both_ends)
{
	struct heap h;

	heap_init(&h);
	for (size_t k = 0; k < 100; k++) {
		size_t i = obj(&h, 0x10 * (k + 1), k == 99 ? 4 : 1, 16);
		if (k < 99)
			ref(&h, i, 0x10 * (k + 2));
	}
	root(&h, "vm", 0x10);
	const char *dump = heap_write(&h, "long.vmheap");
	struct spec_run r =
	    spec_tool("vmheap-path", (const char *[]){dump, "Leak", NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "path of 100 objects"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "      Object  0x140\n"
				    "      ... 60 more objects ...\n"
				    "      Object  0x510\n"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "      Leak  0x640\n"), "%s", r.out);
	ck_assert_int_eq(spec_count(r.out, "Object  0x"), 39);
	spec_run_free(&r);
	heap_free(&h);
}
END_TEST

/* ------------------------------------------------------------ bad input */

/*
 * Bad uses of the graph tools and what each must say: its exit status
 * (1: nothing found, 2: bad usage or input), words its stderr holds and,
 * for some, nothing on stdout.  In args and err, "DUMP" is a good dump
 * (global_array_heap of 10) and "CUT" the same cut short by 40 bytes.
 */
static const struct bad_use {
	const char *tool;
	const char *args[6];
	int status;
	const char *err[2]; /* NULL: stderr not looked at */
	int quiet;	    /* stdout is empty */
} bad_uses[] = {
    {"vmheap-path",
     {"DUMP", "Laek"},
     1,
     {"no objects of class Laek in ", "; nearest: Leak"},
     1},
    {"vmheap-path", {"DUMP", "Quux"}, 1, {"no objects of class Quux in "}, 0},
    {"vmheap-path", {"DUMP", "0xdead"}, 1, {"no object at 0xdead in "}, 0},
    {"vmheap-dominators",
     {"--class", "Hsah", "DUMP"},
     1,
     {"no objects of class Hsah in ", "nearest: Hash"},
     0},
    {"vmheap-path", {"--format", "csv", "DUMP", "Leak"}, 2, {NULL}, 0},
    /* --exclude takes the documented kinds only, in every tool */
    {"vmheap-path",
     {"--exclude", "weak", "DUMP", "Leak"},
     2,
     {"bad --exclude 'weak' (a list of: stack, internal)"},
     1},
    {"vmheap-dominators", {"--exclude", "stack,", "DUMP"}, 2, {NULL}, 0},
    {"vmheap-diff",
     {"--paths", "--exclude", "", "DUMP", "DUMP"},
     2,
     {"bad --exclude"},
     0},
    /* a cut dump: every graph tool refuses it with the reader's message,
     * exit 2, nothing on stdout */
    {"vmheap-path", {"CUT", "Leak"}, 2, {"truncated", "CUT"}, 1},
    {"vmheap-dominators", {"CUT"}, 2, {"truncated", "CUT"}, 1},
    {"vmheap-histo", {"--retained", "CUT"}, 2, {"truncated", "CUT"}, 1},
    {"vmheap-diff", {"--paths", "DUMP", "CUT"}, 2, {"truncated", "CUT"}, 1},
    {"vmheap-diff", {"--suspects", "CUT", "DUMP"}, 2, {"truncated", "CUT"}, 1},
    /* one graph mode at a time */
    {"vmheap-diff",
     {"--paths", "--suspects", "DUMP", "DUMP"},
     2,
     {"--paths, --suspects and --native exclude each other"},
     0},
};

/* "DUMP" and "CUT" of a bad_use replaced by their paths. */
static const char *bad_use_word(const char *w, const char *dump,
				const char *cut)
{
	return !w		    ? NULL
	       : !strcmp(w, "DUMP") ? dump
	       : !strcmp(w, "CUT")  ? cut
				    : w;
}

START_TEST(unknown_class_or_address_exit_1_damaged_dump_exit_2)
{
	const struct bad_use *u = &bad_uses[_i];
	const char *args[7] = {NULL};
	struct heap h;
	size_t len;

	global_array_heap(&h, 10);
	const char *dump = heap_write(&h, "bad.vmheap");
	char *bytes = slurp(dump, &len);
	const char *cut = tmp_path("cut.vmheap");
	spec_write_file(cut, bytes, len - 40);
	free(bytes);
	for (size_t k = 0; k < 6 && u->args[k]; k++)
		args[k] = bad_use_word(u->args[k], dump, cut);

	struct spec_run r = spec_tool(u->tool, args);
	ck_assert_msg(r.status == u->status, "%s (row %d): status %d: %s",
		      u->tool, _i, r.status, r.err);
	for (size_t k = 0; k < 2 && u->err[k]; k++) {
		const char *want = bad_use_word(u->err[k], dump, cut);

		ck_assert_msg(strstr(r.err, want),
			      "%s (row %d): no \"%s\" in: %s", u->tool, _i,
			      want, r.err);
	}
	if (u->quiet)
		ck_assert_str_eq(r.out, "");
	spec_run_free(&r);
	heap_free(&h);
}
END_TEST

/* ------------------------------------------------------------ suspects */

#define C_REQUEST 6
#define C_STRING 7
#define C_TIME 8
#define REQUEST_BYTES (80 + 4 * 40 + 2 * 160 + 56)

/*
 * A global's Array (root global_tbl, 0x1000) holding `requests`
 * LeakedRequests numbered from `first` (80 bytes, each holding 4 Strings of
 * 40 bytes, 2 Hashes of 160 and a Time of 56) and `lone` Strings of 40
 * bytes; a "vm" root Object holding a Hash with 50 Strings of 40 bytes
 * whose ids start at `churn` (a new `churn` replaces them all).
 */
static void request_heap(struct heap *h, size_t first, size_t requests,
			 size_t lone, uint64_t churn)
{
	static const struct tclass more[] = {
	    {C_REQUEST, "LeakedRequest"}, {C_STRING, "String"}, {C_TIME, "Time"}};
	static const uint64_t parts[7][2] = {
	    {C_STRING, 40}, {C_STRING, 40}, {C_STRING, 40}, {C_STRING, 40},
	    {3, 160},	    {3, 160},	    {C_TIME, 56}};

	heap_init(h);
	memcpy(h->classes + h->nclasses, more, sizeof(more));
	h->nclasses += sizeof(more) / sizeof(*more);
	size_t array = obj(h, ARRAY_ID, 2, 40 + 8 * (requests + lone));
	size_t holder = obj(h, HOLDER_ID, 1, 40);
	size_t hash = obj(h, HASH_ID, 3, 160);
	ref(h, holder, HASH_ID);
	for (size_t k = first; k < first + requests; k++) {
		uint64_t id = 0x100000 + 0x100 * k;
		size_t req = obj(h, id, C_REQUEST, 80);
		ref(h, array, id);
		for (size_t j = 0; j < 7; j++) {
			obj(h, id + 0x10 * (j + 1), parts[j][0], parts[j][1]);
			ref(h, req, id + 0x10 * (j + 1));
		}
	}
	for (size_t k = 0; k < lone; k++) {
		obj(h, 0x200000 + 0x10 * k, C_STRING, 40);
		ref(h, array, 0x200000 + 0x10 * k);
	}
	for (size_t k = 0; k < 50; k++) {
		obj(h, churn + 0x10 * k, C_STRING, 40);
		ref(h, hash, churn + 0x10 * k);
	}
	root(h, "global_tbl", ARRAY_ID);
	root(h, "vm", HOLDER_ID);
}

/* A byte count as the text reports print it (vmheap_format_bytes), in
 * one of 4 buffers used in turn. */
static const char *human(unsigned long long bytes)
{
	static char buf[4][96];
	static int k;

	k = (k + 1) % 4;
	vmheap_format_bytes(buf[k], sizeof(buf[k]), bytes);
	return buf[k];
}

/* Assert that `out` holds the text that fmt and its arguments make. */
static void expect_text(const char *out, const char *fmt, ...)
{
	char want[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	ck_assert_msg(strstr(out, want), "wanted:\n%s\nin:\n%s", want, out);
}

/* vmheap-diff [MODE] --format FMT s_old.vmheap s_new.vmheap [ARG] (MODE
 * and ARG may be NULL): it exits 0. */
static struct spec_run diff_ok(const char *mode, const char *format,
			       const char *arg)
{
	const char *args[7];
	size_t n = 0;

	if (mode)
		args[n++] = mode;
	args[n++] = "--format";
	args[n++] = format;
	args[n++] = tmp_path("s_old.vmheap");
	args[n++] = tmp_path("s_new.vmheap");
	args[n++] = arg;
	args[n] = NULL;
	struct spec_run r = spec_tool("vmheap-diff", args);
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	return r;
}

/* vmheap-diff --suspects [--format FMT] of two request heaps. */
static struct spec_run suspects(struct heap *old_h, struct heap *new_h,
				const char *format)
{
	heap_write(old_h, "s_old.vmheap");
	heap_write(new_h, "s_new.vmheap");
	return diff_ok("--suspects", format, NULL);
}

/*
 * 100 more LeakedRequests under the global, and the 50 Strings of the vm
 * root's Hash replaced: the diff's top rows are +400 String and +200 Hash,
 * but the one suspect is LeakedRequest, holding every byte of its 800 new
 * objects, held by the global's Array.
 */
START_TEST(suspects_name_the_owner_of_a_composite_leak_first)
{
	static struct heap old_h, new_h;
	request_heap(&old_h, 0, 20, 0, 0x500000);
	request_heap(&new_h, 0, 120, 0, 0x600000);

	struct spec_run r = suspects(&old_h, &new_h, "text");
	expect_text(r.out,
		    "new objects: 850, %s, held by 150 owners of 2 classes\n"
		    "leak suspects: 1 class of owners holding %s or more of "
		    "new objects\n\n"
		    "#1  LeakedRequest: 100 new, holding %s (their String, "
		    "Hash and Time objects)\n"
		    "    class grew by 100; 800 new objects in all: 400 "
		    "String, 200 Hash, 100 Time\n"
		    "    held by root global_tbl > Array (100 of the 100, "
		    "100.0%%; 1 path shape)\n"
		    "      root global_tbl\n"
		    "        Array  0x1000\n"
		    "        LeakedRequest  0x101400\n",
		    human(63600), human(1024), human(100 * REQUEST_BYTES));
	spec_run_free(&r);
	/* the class-by-class diff ranks the parts first: the reason for
	 * --suspects */
	r = spec_tool("vmheap-diff",
		      (const char *[]){"--format", "csv",
				       tmp_path("s_old.vmheap"),
				       tmp_path("s_new.vmheap"), NULL});
	ck_assert_msg(strstr(r.out, "400,String,16000") <
			  strstr(r.out, "100,LeakedRequest,8000"),
		      "%s", r.out);
	spec_run_free(&r);

	r = suspects(&old_h, &new_h, "json");
	struct jval *j = json_parse(r.out);
	ck_assert_msg(j, "not JSON: %s", r.out);
	ck_assert_int_eq(json_get(j, "suspect_count")->inum, 1);
	const struct jval *s0 = json_get(j, "suspects")->items[0];
	ck_assert_str_eq(json_get(s0, "class")->str, "LeakedRequest");
	ck_assert_int_eq(json_get(s0, "owners")->inum, 100);
	ck_assert_int_eq(json_get(s0, "held_bytes")->inum, 100 * REQUEST_BYTES);
	ck_assert_int_eq(json_get(s0, "ranked_bytes")->inum,
			 100 * REQUEST_BYTES);
	const struct jval *held = json_get(s0, "held");
	ck_assert_uint_eq(held->n, 3);
	ck_assert_str_eq(json_get(held->items[0], "class")->str, "String");
	ck_assert_int_eq(json_get(held->items[0], "count")->inum, 400);
	ck_assert_int_eq(json_get(held->items[0], "bytes")->inum, 16000);
	const struct jval *top = json_get(s0, "top_path");
	ck_assert_int_eq(json_get(top, "count")->inum, 100);
	ck_assert_str_eq(json_get(json_get(top, "root"), "kind")->str,
			 "global_tbl");
	json_free(j);
	spec_run_free(&r);

	r = suspects(&old_h, &new_h, "csv");
	ck_assert_msg(strstr(r.out, "1,LeakedRequest,100,100,800,61600,61600,"
				    "400 String; 200 Hash; 100 Time,100,"
				    "root global_tbl > Array\n"),
		      "%s", r.out);
	spec_run_free(&r);
	heap_free(&old_h);
	heap_free(&new_h);
}
END_TEST

/* 200 lone Strings under the global, 50 more replaced under the vm root:
 * String is the suspect, ranked by the growth's share of its 250 new
 * owners, and its top path is the global's. */
START_TEST(suspects_find_a_leak_of_lone_strings)
{
	static struct heap old_h, new_h;
	request_heap(&old_h, 0, 0, 10, 0x500000);
	request_heap(&new_h, 0, 0, 210, 0x600000);

	struct spec_run r = suspects(&old_h, &new_h, "text");
	expect_text(r.out,
		    "#1  String: 250 new, holding %s\n"
		    "    class grew by 200 (ranked by the growth's share: "
		    "%s); 250 new objects in all\n"
		    "    held by root global_tbl > Array (200 of the 250, "
		    "80.0%%; 2 path shapes)\n",
		    human(10000), human(8000));
	ck_assert_ptr_null(strstr(r.out, "#2"));
	spec_run_free(&r);
	heap_free(&old_h);
	heap_free(&new_h);
}
END_TEST

/* Both leaks at once: the requests first, then the lone Strings, whose
 * growth less the 400 Strings inside the requests is theirs; --top 1
 * shows the first. */
START_TEST(suspects_rank_two_leaks_and_top_cuts_them)
{
	static struct heap old_h, new_h;
	request_heap(&old_h, 0, 20, 10, 0x500000);
	request_heap(&new_h, 0, 120, 210, 0x600000);

	struct spec_run r = suspects(&old_h, &new_h, "text");
	expect_text(r.out,
		    "leak suspects: 2 classes of owners holding %s or more of "
		    "new objects\n\n#1  LeakedRequest: 100 new, holding %s",
		    human(1024), human(100 * REQUEST_BYTES));
	expect_text(r.out,
		    "#2  String: 250 new, holding %s\n"
		    "    class grew by 600 (ranked by the growth's share: %s)",
		    human(10000), human(8000));
	spec_run_free(&r);
	r = spec_tool("vmheap-diff",
		      (const char *[]){"--suspects", "--top", "1",
				       tmp_path("s_old.vmheap"),
				       tmp_path("s_new.vmheap"), NULL});
	ck_assert_int_eq(r.status, 0);
	expect_text(r.out, "2 classes of owners holding %s or more of new "
			   "objects; the top 1\n\n#1  LeakedRequest",
		    human(1024));
	ck_assert_ptr_null(strstr(r.out, "#2"));
	spec_run_free(&r);
	heap_free(&old_h);
	heap_free(&new_h);
}
END_TEST

/* The same heap shape with every request and String replaced by a new
 * one: 450 new objects, no growth, no suspect. */
START_TEST(suspects_of_churn_without_a_leak_are_none)
{
	static struct heap old_h, new_h;
	request_heap(&old_h, 0, 50, 0, 0x500000);
	request_heap(&new_h, 50, 50, 0, 0x600000);

	struct spec_run r = suspects(&old_h, &new_h, "text");
	expect_text(r.out,
		    "new objects: 450, %s, held by 100 owners of 2 classes\n"
		    "no leak suspects: no class of owners holds %s of new "
		    "objects beyond churn\n",
		    human(32800), human(1024));
	spec_run_free(&r);
	r = suspects(&old_h, &new_h, "json");
	struct jval *j = json_parse(r.out);
	ck_assert_msg(j, "not JSON: %s", r.out);
	ck_assert_int_eq(json_get(j, "new_objects")->inum, 450);
	ck_assert_int_eq(json_get(j, "suspect_count")->inum, 0);
	ck_assert_uint_eq(json_get(j, "suspects")->n, 0);
	json_free(j);
	spec_run_free(&r);
	heap_free(&old_h);
	heap_free(&new_h);
}
END_TEST

/* A size as the short section prints it (vmheap_format_size). */
static const char *size_text(unsigned long long bytes)
{
	static char buf[4][64];
	static int k;

	k = (k + 1) % 4;
	vmheap_format_size(buf[k], sizeof(buf[k]), bytes);
	return buf[k];
}

/*
 * The class-by-class diff of the composite leak: its suspects section
 * names LeakedRequest above the table that starts with +400 String, as
 * --suspects does; the JSON has it as leak_suspects; --no-suspects and
 * CSV leave it out; churn alone says none.
 */
START_TEST(class_diff_puts_the_suspects_above_the_table)
{
	static struct heap old_h, new_h;
	request_heap(&old_h, 0, 20, 0, 0x500000);
	request_heap(&new_h, 0, 120, 0, 0x600000);
	heap_write(&old_h, "s_old.vmheap");
	heap_write(&new_h, "s_new.vmheap");

	struct spec_run r = diff_ok(NULL, "text", NULL);
	expect_text(r.out,
		    "leak suspects: 1 class of owners holding %s or more of "
		    "new objects (paths: vmheap-diff --suspects)\n"
		    "#1  LeakedRequest: 100 new, holding %s (their String, "
		    "Hash and Time objects), held by root global_tbl > Array\n",
		    size_text(1024), size_text(100 * REQUEST_BYTES));
	/* the table comes right after it */
	const char *table = strstr(r.out, "> Array\n") + 8;
	table += strspn(table, " ");
	ck_assert_msg(!strncmp(table, "count  class", 12), "%s", r.out);
	ck_assert_msg(table && strstr(table, "+400  String") &&
			  strstr(table, "+400  String") <
			      strstr(table, "+100  LeakedRequest"),
		      "%s", r.out);
	spec_run_free(&r);

	r = diff_ok(NULL, "json", NULL);
	struct jval *j = json_parse(r.out);
	ck_assert_msg(j, "not JSON: %s", r.out);
	const struct jval *ls = json_get(j, "leak_suspects");
	ck_assert_ptr_nonnull(ls);
	ck_assert_int_eq(json_get(ls, "suspect_count")->inum, 1);
	const struct jval *s0 = json_get(ls, "suspects")->items[0];
	ck_assert_str_eq(json_get(s0, "class")->str, "LeakedRequest");
	ck_assert_int_eq(json_get(s0, "held_bytes")->inum, 100 * REQUEST_BYTES);
	ck_assert_str_eq(json_get(json_get(j, "classes")->items[0], "class")->str,
			 "String");
	json_free(j);
	spec_run_free(&r);

	r = diff_ok(NULL, "text", "--no-suspects");
	ck_assert_msg(!strstr(r.out, "suspects"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "+400  String"), "%s", r.out);
	spec_run_free(&r);
	r = diff_ok(NULL, "json", "--no-suspects");
	ck_assert_msg(!strstr(r.out, "leak_suspects"), "%s", r.out);
	spec_run_free(&r);
	r = diff_ok(NULL, "csv", NULL);
	ck_assert_msg(!strstr(r.out, "suspect") &&
			  !strncmp(r.out, "count_delta,class,", 18),
		      "%s", r.out);
	spec_run_free(&r);
	r = spec_tool("vmheap-diff",
		      (const char *[]){"--objects", "--no-suspects",
				       tmp_path("s_old.vmheap"),
				       tmp_path("s_new.vmheap"), NULL});
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "--no-suspects goes with the class-by-"
				    "class diff"),
		      "%s", r.err);
	spec_run_free(&r);
	heap_free(&old_h);
	heap_free(&new_h);

	/* churn only: the section says none */
	request_heap(&old_h, 0, 50, 0, 0x500000);
	request_heap(&new_h, 50, 50, 0, 0x600000);
	heap_write(&old_h, "s_old.vmheap");
	heap_write(&new_h, "s_new.vmheap");
	r = diff_ok(NULL, "text", NULL);
	expect_text(r.out,
		    "leak suspects: none (no class of owners holds %s of new "
		    "objects beyond churn)\n",
		    size_text(1024));
	spec_run_free(&r);
	r = diff_ok(NULL, "json", NULL);
	j = json_parse(r.out);
	ck_assert_msg(j, "not JSON: %s", r.out);
	ck_assert_int_eq(
	    json_get(json_get(j, "leak_suspects"), "suspect_count")->inum, 0);
	json_free(j);
	spec_run_free(&r);
	heap_free(&old_h);
	heap_free(&new_h);
}
END_TEST

/* Without references or roots the section is left out without a word;
 * from standard input it is one line saying why. */
START_TEST(class_diff_section_needs_references_roots_and_files)
{
	static struct heap old_h, new_h;
	request_heap(&old_h, 0, 20, 0, 0x500000);
	request_heap(&new_h, 0, 120, 0, 0x600000);
	new_h.nroots = 0;
	heap_write(&old_h, "s_old.vmheap");
	heap_write(&new_h, "s_new.vmheap");

	struct spec_run r = diff_ok(NULL, "text", NULL);
	ck_assert_msg(!strstr(r.out, "suspects") &&
			  strstr(r.out, "+400  String"),
		      "%s", r.out);
	spec_run_free(&r);
	r = diff_ok(NULL, "json", NULL);
	ck_assert_msg(!strstr(r.out, "leak_suspects"), "%s", r.out);
	spec_run_free(&r);
	heap_free(&new_h);

	request_heap(&new_h, 0, 120, 0, 0x600000);
	heap_write(&new_h, "s_new.vmheap");
	r = spec_tool_with(
	    "vmheap-diff", ARGS("-", tmp_path("s_new.vmheap")),
	    &(struct spec_tool_opts){.stdin_path = tmp_path("s_old.vmheap")});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "leak suspects: not computed: OLD is "
				    "standard input (the section reads both "
				    "dumps a second time); vmheap-diff "
				    "--suspects computes them\n"),
		      "%s", r.out);
	spec_run_free(&r);
	heap_free(&old_h);
	heap_free(&new_h);
}
END_TEST


/* ------------------------------------------------------------ ruby */

static const char leaks_rb[] =
    "class ConstLeak; end\n"
    "class GlobalLeak; end\n"
    "class IvarLeak; end\n"
    "module Registry\n"
    "  STORE = {}\n"
    "end\n"
    "$audit = []\n"
    "class Service\n"
    "  def initialize; @cache = []; end\n"
    "  def call; @cache << IvarLeak.new; end\n"
    "end\n"
    "svc = Service.new\n"
    "3000.times { |i| Registry::STORE[\"k#{i}\"] = ConstLeak.new }\n"
    "2000.times { $audit << GlobalLeak.new }\n"
    "1000.times { svc.call }\n"
    "$stdout.puts \"ready\"; $stdout.flush\n"
    "$stdin.read\n"
    "p svc\n";

/* The classes of the top group's path and its root kind, as one line:
 * "KIND: A > B > C". */
static void top_path(const char *dump, const char *cls, char *line,
		     size_t size)
{
	struct spec_run r =
	    spec_tool("vmheap-path",
		      (const char *[]){"--format", "json", dump, cls, NULL});
	ck_assert_msg(r.status == 0, "%s: %s", cls, r.err);
	struct jval *j = json_parse(r.out);
	ck_assert_ptr_nonnull(j);
	const struct jval *grp = json_get(j, "groups")->items[0];
	const struct jval *path = json_get(grp, "path");
	size_t at = (size_t)snprintf(
	    line, size, "%s:",
	    json_get(json_get(grp, "root"), "kind")->str);
	for (size_t k = 0; k < path->n && at < size; k++)
		at += (size_t)snprintf(line + at, size - at, "%s %s",
				       k ? " >" : "",
				       json_get(path->items[k], "class")->str);
	ck_assert_int_ge(json_get(grp, "count")->inum,
			 json_get(j, "instances")->inum * 9 / 10);
	json_free(j);
	spec_run_free(&r);
}

/* The Ruby VMs of these tests print "ready" once set up. */
static const struct spec_ruby_opts ready = {.ready = "ready"};

/* Dump the VM's heap through vmheap-console into DIR/name, kept in dump. */
static void ruby_dump(struct spec_ruby *vm, const char *name, char *dump,
		      size_t size)
{
	char pidarg[32], setcmd[600];
	struct spec_run cr;

	snprintf(dump, size, "%s/%s", vm->dir, name);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)vm->p.pid);
	snprintf(setcmd, sizeof(setcmd), "set system.memory.dump %s", dump);
	const char *const cargv[] = {spec_bin("vmheap-console"), "-p", pidarg,
				     "-e", setcmd, NULL};
	ck_assert_int_eq(spec_run(cargv, vm->env, NULL, 120000, &cr), 0);
	ck_assert_msg(cr.status == 0, "console: %s", cr.err);
	spec_run_free(&cr);
}

START_TEST(ruby_leaks_lead_to_the_constant_the_global_and_the_ivar)
{
	char dump[512], line[512];
	struct spec_ruby vm;

	spec_ruby_start_with(&vm, leaks_rb, &ready);
	ruby_dump(&vm, "leaks.vmheap", dump, sizeof(dump));

	/* a constant's Hash: the module Registry, held by the VM's class
	 * table, then its constant table's Hash */
	top_path(dump, "ConstLeak", line, sizeof(line));
	ck_assert_msg(strstr(line, "vm:") == line &&
			  strstr(line, "> Module > Hash > ConstLeak"),
		      "ConstLeak: %s", line);
	/* a global Array: the global variables' root, then the Array */
	top_path(dump, "GlobalLeak", line, sizeof(line));
	ck_assert_str_eq(line, "global_tbl: Array > GlobalLeak");
	/* an instance variable: the Service object, then its @cache Array */
	top_path(dump, "IvarLeak", line, sizeof(line));
	ck_assert_msg(strstr(line, "> Service > Array > IvarLeak"), "IvarLeak: %s",
		      line);

	/* the dominators agree: the global's Array retains its 2000 leaks */
	struct spec_run r =
	    spec_tool("vmheap-dominators",
		      (const char *[]){"--class", "Array", "--top", "3",
				       "--format", "csv", dump, NULL});
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, ",Array,") && strstr(r.out, "root global_tbl"),
		      "%s", r.out);
	spec_run_free(&r);
	ck_assert_int_eq(spec_proc_wait_exit(&vm.p, 30000), 0);
}
END_TEST

/*
 * Four dumps of one Ruby VM: A; B after a churn (every String of $churn
 * replaced); C after 3000 LeakedRequests (4 Strings, 2 Hashes and a Time
 * each) went into $REQUEST_CACHE; D after 20000 lone Strings went into
 * $LINES.
 */
static const char suspects_rb[] =
    "class LeakedRequest\n"
    "  def initialize(i)\n"
    "    @path = \"/items/#{i}\"; @verb = String.new(\"GET\")\n"
    "    @body = \"x\" * 200; @agent = \"agent-#{i}\"\n"
    "    @headers = {}; @params = {}; @at = Time.now\n"
    "  end\n"
    "end\n"
    "$REQUEST_CACHE = []\n"
    "$LINES = []\n"
    "def churn; $churn = Array.new(2000) { |i| \"c#{i}\" * 4 }; end\n"
    "churn; GC.start\n"
    "$stdout.puts \"ready\"; $stdout.flush\n"
    "$stdin.gets; churn; GC.start\n"
    "$stdout.puts \"churned\"; $stdout.flush\n"
    "$stdin.gets\n"
    "3000.times { |i| $REQUEST_CACHE << LeakedRequest.new(i) }\n"
    "churn; GC.start\n"
    "$stdout.puts \"requests\"; $stdout.flush\n"
    "$stdin.gets\n"
    "20000.times { |i| $LINES << \"line #{i} \" * 3 }\n"
    "churn; GC.start\n"
    "$stdout.puts \"lines\"; $stdout.flush\n"
    "$stdin.read\n";

/* vmheap-diff --suspects --format json OLD NEW, parsed. */
static struct jval *ruby_suspects(const char *old_dump, const char *new_dump)
{
	struct spec_run r = spec_tool(
	    "vmheap-diff", (const char *[]){"--suspects", "--format", "json",
					    old_dump, new_dump, NULL});
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	struct jval *j = json_parse(r.out);
	ck_assert_msg(j, "not JSON: %s", r.out);
	spec_run_free(&r);
	return j;
}

/* The class-by-class diff (text, or JSON parsed into *json) of two
 * dumps: its leak suspects section. */
static struct spec_run ruby_class_diff(const char *old_dump,
				       const char *new_dump, struct jval **json)
{
	struct spec_run r = spec_tool(
	    "vmheap-diff",
	    (const char *[]){"--format", "json", old_dump, new_dump, NULL});
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	*json = json_parse(r.out);
	ck_assert_msg(*json, "not JSON: %s", r.out);
	ck_assert_msg(json_get(*json, "leak_suspects"), "no section: %s",
		      r.out);
	spec_run_free(&r);
	r = spec_tool("vmheap-diff",
		      (const char *[]){old_dump, new_dump, NULL});
	ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
	return r;
}

/* The top path of suspect `s` as "KIND: A > B". */
static void suspect_path(const struct jval *s, char *line, size_t size)
{
	const struct jval *top = json_get(s, "top_path");
	const struct jval *path = json_get(top, "path");
	size_t at = (size_t)snprintf(
	    line, size, "%s:", json_get(json_get(top, "root"), "kind")->str);

	for (size_t k = 0; k < path->n && at < size; k++)
		at += (size_t)snprintf(line + at, size - at, "%s %s",
				       k ? " >" : "",
				       json_get(path->items[k], "class")->str);
}

START_TEST(ruby_suspects_name_the_request_cache_and_the_lines)
{
	char a[512], b[512], c[512], d[512], line[512];
	struct spec_ruby vm;

	spec_ruby_start_with(&vm, suspects_rb, &ready);
	ruby_dump(&vm, "a.vmheap", a, sizeof(a));
	spec_proc_write(&vm.p, "go\n");
	ck_assert(spec_proc_wait_for(&vm.p, "churned", 60000));
	ruby_dump(&vm, "b.vmheap", b, sizeof(b));
	spec_proc_write(&vm.p, "go\n");
	ck_assert(spec_proc_wait_for(&vm.p, "requests", 60000));
	ruby_dump(&vm, "c.vmheap", c, sizeof(c));
	spec_proc_write(&vm.p, "go\n");
	ck_assert(spec_proc_wait_for(&vm.p, "lines", 60000));
	ruby_dump(&vm, "d.vmheap", d, sizeof(d));
	ck_assert_int_eq(spec_proc_wait_exit(&vm.p, 30000), 0);

	/* churn only: no suspect above the threshold */
	struct jval *j = ruby_suspects(a, b);
	ck_assert_msg(json_get(j, "new_objects")->inum >= 2000,
		      "new objects: %lld", json_get(j, "new_objects")->inum);
	ck_assert_int_eq(json_get(j, "suspect_count")->inum, 0);
	json_free(j);

	/* the requests: LeakedRequest first, all 3000, each holding at
	 * least its 4 Strings, 2 Hashes and Time, held by the global.  An
	 * object of a request can also be reached from another root (seen:
	 * 23,999 of 24,000 held in 3 of 9 runs under ASan, the dumps read
	 * the same by main's vmheap-diff; the likely root is a stale word
	 * of a machine stack, which Ruby marks conservatively): it is then
	 * not held by the suspect alone.  One request's worth is allowed. */
	j = ruby_suspects(b, c);
	const struct jval *s0 = json_get(j, "suspects")->items[0];
	ck_assert_str_eq(json_get(s0, "class")->str, "LeakedRequest");
	ck_assert_int_eq(json_get(s0, "owners")->inum, 3000);
	ck_assert_int_ge(json_get(s0, "held_objects")->inum, 3000 * 8 - 8);
	const struct jval *held = json_get(s0, "held");
	ck_assert_str_eq(json_get(held->items[0], "class")->str, "String");
	ck_assert_int_ge(json_get(held->items[0], "count")->inum, 3000 * 4 - 4);
	suspect_path(s0, line, sizeof(line));
	ck_assert_str_eq(line, "global_tbl: Array > LeakedRequest");
	json_free(j);

	/* the lone Strings: String first, held by the other global */
	j = ruby_suspects(c, d);
	s0 = json_get(j, "suspects")->items[0];
	ck_assert_str_eq(json_get(s0, "class")->str, "String");
	ck_assert_int_ge(json_get(s0, "owners")->inum, 20000);
	suspect_path(s0, line, sizeof(line));
	ck_assert_str_eq(line, "global_tbl: Array > String");
	json_free(j);

	/* the default diff's section says the same, above the table */
	struct spec_run r = ruby_class_diff(a, b, &j);
	ck_assert_int_eq(
	    json_get(json_get(j, "leak_suspects"), "suspect_count")->inum, 0);
	ck_assert_msg(strstr(r.out, "\nleak suspects: none (no class of "
				    "owners holds "),
		      "%s", r.out);
	json_free(j);
	spec_run_free(&r);

	r = ruby_class_diff(b, c, &j);
	s0 = json_get(json_get(j, "leak_suspects"), "suspects")->items[0];
	ck_assert_str_eq(json_get(s0, "class")->str, "LeakedRequest");
	ck_assert_int_eq(json_get(s0, "owners")->inum, 3000);
	suspect_path(s0, line, sizeof(line));
	ck_assert_str_eq(line, "global_tbl: Array > LeakedRequest");
	/* the table's first row is a part (String), the section's the
	 * owner, and the section comes first */
	ck_assert_str_eq(json_get(json_get(j, "classes")->items[0], "class")->str,
			 "String");
	const char *first = strstr(r.out, "\n#1  LeakedRequest: 3000 new, ");
	ck_assert_msg(first && strstr(first, ", held by root global_tbl "
					     "$REQUEST_CACHE > Array\n") &&
			  first < strstr(r.out, "count  class"),
		      "%s", r.out);
	json_free(j);
	spec_run_free(&r);

	r = ruby_class_diff(c, d, &j);
	s0 = json_get(json_get(j, "leak_suspects"), "suspects")->items[0];
	ck_assert_str_eq(json_get(s0, "class")->str, "String");
	ck_assert_int_ge(json_get(s0, "owners")->inum, 20000);
	ck_assert_msg(strstr(r.out, "\n#1  String: "), "%s", r.out);
	json_free(j);
	spec_run_free(&r);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("graphtools");
	TCase *q = spec_tcase(s, "queries", 120);
	TCase *t = spec_tcase(s, "tools", 120);
	TCase *b = spec_tcase(s, "bad input", 60);
	TCase *rb = spec_tcase(s, "ruby", 180);
	TCase *sus = spec_tcase(s, "suspects", 60);

	tcase_add_loop_test(q, class_retained_bytes_agree_with_brute_force, 0,
			    4);
	tcase_add_loop_test(q, object_paths_merge_every_object_by_its_shape, 0,
			    4);
	tcase_add_test(q, nearest_class_names_by_edit_distance);
	tcase_add_test(t, path_of_a_leak_held_by_a_globals_array);
	tcase_add_test(t, dominators_of_the_global_array_leak_match_brute_force);
	tcase_add_test(t, chain_of_hashes_shows_in_paths_and_dominators);
	tcase_add_loop_test(t, histo_retained_column_agrees_with_brute_force, 0,
			    3);
	tcase_add_test(t, diff_paths_show_where_the_new_objects_hang);
	tcase_add_test(t, long_paths_show_both_ends);
	tcase_add_loop_test(b,
			    unknown_class_or_address_exit_1_damaged_dump_exit_2,
			    0, (int)(sizeof(bad_uses) / sizeof(*bad_uses)));
	tcase_add_test(rb, ruby_leaks_lead_to_the_constant_the_global_and_the_ivar);
	tcase_add_test(sus, suspects_name_the_owner_of_a_composite_leak_first);
	tcase_add_test(sus, suspects_find_a_leak_of_lone_strings);
	tcase_add_test(sus, suspects_rank_two_leaks_and_top_cuts_them);
	tcase_add_test(sus, suspects_of_churn_without_a_leak_are_none);
	tcase_add_test(sus, class_diff_puts_the_suspects_above_the_table);
	tcase_add_test(sus, class_diff_section_needs_references_roots_and_files);
	tcase_add_test(rb, ruby_suspects_name_the_request_cache_and_the_lines);
	return s;
}
