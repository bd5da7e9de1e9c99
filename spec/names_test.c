/*
 * names_test.c - names on the paths (format 1.1 edge and root names):
 * the graph keeps them, and vmheap-path, vmheap-dominators and vmheap-diff
 * --paths/--suspects show them as a person reads them.
 *
 *  - "queries": a dump written with the real writer, every name form
 *    (instance variable, constant, hash key, field, "key", element index,
 *    a string the dump lacks), read back through vmheap_graph.h; path
 *    shapes with names against brute force on random heaps;
 *  - "tools": the same dump through the tools (text and JSON), the same
 *    heap without names (paths as before, no names), and the real sample
 *    VM's dumps (no Ruby needed): its leak's path names the global root,
 *    the hash key and the element index.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools_harness-internal.h"
#include "vmheap.h"
#include "vmheap_graph.h"
#include "vmheap_graph_query.h"

#define LEFT "\xe2\x86\x90" /* ← */

/* ------------------------------------------------------------ the dump */

/*
 * Strings, classes and objects of the named heap:
 *
 *   root vm -> Registry (class object 0x100, also class id 0x100)
 *     .COUNT -> String 0x7a0
 *     ::STORE -> Registry 0x200
 *       @store -> Hash 0x300 -["k17"]-> Entry 0x400, ["k1"] 0x410,
 *                               ["k2"] 0x420
 *       @cache -> Hash 0x310 -["k1"]-> Entry 0x430
 *   root globals $audit -> Array 0x500 -[0]-> Node 0x600, [1] Node 0x610
 *     Node 0x610 .next (another string of that text) -> Node 0x740
 *     Node 0x600 .next -> Node 0x700, key -> String 0x710,
 *       weird -> String 0x720, string 999 (no record) -> String 0x730
 *   root vm -> Object 0x900 ::App -> Module 0xa00 ::CONFIG -> Hash 0xb00
 *   root vm Config -> Class 0xd00 (no class record of its id)
 *     ::LIMIT -> Hash 0xd10, @cache -> String 0xd20
 */
enum {
	S_VM = 1,
	S_GLOBALS,
	S_AUDIT,
	S_CONST_STORE,
	S_STORE,
	S_CACHE,
	S_K17,
	S_K1,
	S_K2,
	S_NEXT,
	S_KEY,
	S_WEIRD,
	S_APP,
	S_CONFIG,
	S_K1_AGAIN,   /* the text of S_K1 under another id */
	S_NEXT_AGAIN, /* the text of S_NEXT under another id */
	S_COUNT,
	S_CONFIG_ROOT, /* "Config": a root named by its class's path */
	S_LIMIT,
	S_MISSING = 999,
};

enum {
	C_REGISTRY = 0x100,
	C_HASH = 1,
	C_ENTRY,
	C_ARRAY,
	C_NODE,
	C_STRING,
	C_OBJECT,
	C_MODULE,
	C_CLASS,
};

static void ok(int rc, vmheap_writer *w)
{
	ck_assert_msg(rc == 0, "writer: %s", w ? vmheap_writer_error(w) : "");
}

static void obj(vmheap_writer *w, uint64_t id, uint64_t cls, uint64_t bytes,
		const uint64_t *refs, const int64_t *names, size_t n)
{
	ok(vmheap_writer_add_object_named(w, id, cls, bytes, 0, refs, names, n,
					  0),
	   w);
}

/* Write the heap above to tmp_dir()/name, with its names when `named`
 * (else format 1.0: the same objects and roots, no name at all). */
static const char *write_named_heap(const char *name, int named)
{
	static const struct {
		uint64_t id;
		const char *text;
	} strings[] = {
	    {S_VM, "vm"},
	    {S_GLOBALS, "globals"},
	    {S_AUDIT, "$audit"},
	    {S_CONST_STORE, "::STORE"},
	    {S_STORE, "@store"},
	    {S_CACHE, "@cache"},
	    {S_K17, "[\"k17\"]"},
	    {S_K1, "[\"k1\"]"},
	    {S_K2, "[\"k2\"]"},
	    {S_NEXT, ".next"},
	    {S_KEY, "key"},
	    {S_WEIRD, "weird"},
	    {S_APP, "::App"},
	    {S_CONFIG, "::CONFIG"},
	    {S_K1_AGAIN, "[\"k1\"]"},
	    {S_NEXT_AGAIN, ".next"},
	    {S_COUNT, ".COUNT"},
	    {S_CONFIG_ROOT, "Config"},
	    {S_LIMIT, "::LIMIT"},
	};
	static const struct {
		uint64_t id;
		const char *name;
	} classes[] = {
	    {C_REGISTRY, "Registry"}, {C_HASH, "Hash"},
	    {C_ENTRY, "Entry"},	      {C_ARRAY, "Array"},
	    {C_NODE, "Node"},	      {C_STRING, "String"},
	    {C_OBJECT, "Object"},     {C_MODULE, "Module"},
	    {C_CLASS, "Class"},
	};
	const char *path = tmp_path(name);
	struct vmheap_writer_options o = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w = NULL;
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	o.vm_name = "test";
	o.vm_version = "1";
	o.edge_names = named;
	ok(vmheap_writer_open(&w, fileno(f), &o), w);
	for (size_t k = 0; k < sizeof(strings) / sizeof(*strings); k++)
		ok(vmheap_writer_add_string(w, strings[k].id, strings[k].text,
					    strlen(strings[k].text)),
		   w);
	for (size_t k = 0; k < sizeof(classes) / sizeof(*classes); k++)
		ok(vmheap_writer_add_class(w, classes[k].id, classes[k].name,
					   strlen(classes[k].name), 0, 0),
		   w);
#define LEAF(id, cls, bytes) obj(w, id, cls, bytes, NULL, NULL, 0)
#define NAMED(id, cls, bytes, names, ...)                                      \
	do {                                                                   \
		static const uint64_t r_[] = {__VA_ARGS__};                    \
		static const int64_t n_[] = names;                             \
		obj(w, id, cls, bytes, r_, named ? n_ : NULL,                  \
		    sizeof(r_) / sizeof(*r_));                                 \
	} while (0)
#define N(...) {__VA_ARGS__}
	NAMED(0x100, C_CLASS, 100, N(S_CONST_STORE, S_COUNT), 0x200, 0x7a0);
	NAMED(0x200, C_REGISTRY, 40, N(S_STORE, S_CACHE), 0x300, 0x310);
	NAMED(0x300, C_HASH, 80, N(S_K17, S_K1, S_K2), 0x400, 0x410, 0x420);
	NAMED(0x310, C_HASH, 80, N(S_K1_AGAIN), 0x430);
	LEAF(0x400, C_ENTRY, 24);
	LEAF(0x410, C_ENTRY, 24);
	LEAF(0x420, C_ENTRY, 24);
	LEAF(0x430, C_ENTRY, 24);
	NAMED(0x500, C_ARRAY, 56, N(-1, -2), 0x600, 0x610);
	NAMED(0x600, C_NODE, 32, N(S_NEXT, S_KEY, S_WEIRD, S_MISSING), 0x700,
	      0x710, 0x720, 0x730);
	NAMED(0x610, C_NODE, 32, N(S_NEXT_AGAIN), 0x740);
	LEAF(0x700, C_NODE, 32);
	LEAF(0x710, C_STRING, 16);
	LEAF(0x720, C_STRING, 16);
	LEAF(0x730, C_STRING, 16);
	LEAF(0x740, C_NODE, 32);
	LEAF(0x7a0, C_STRING, 16);
	NAMED(0x900, C_OBJECT, 40, N(S_APP), 0xa00);
	NAMED(0xa00, C_MODULE, 40, N(S_CONFIG), 0xb00);
	LEAF(0xb00, C_HASH, 80);
	NAMED(0xd00, C_CLASS, 100, N(S_LIMIT, S_CACHE), 0xd10, 0xd20);
	LEAF(0xd10, C_HASH, 80);
	LEAF(0xd20, C_STRING, 16);
#undef LEAF
#undef NAMED
#undef N
	ok(vmheap_writer_add_root(w, S_VM, 0x100), w);
	ok(named ? vmheap_writer_add_root_named(w, S_GLOBALS, 0x500, S_AUDIT)
		 : vmheap_writer_add_root(w, S_GLOBALS, 0x500),
	   w);
	ok(vmheap_writer_add_root(w, S_VM, 0x900), w);
	ok(named ? vmheap_writer_add_root_named(w, S_VM, 0xd00, S_CONFIG_ROOT)
		 : vmheap_writer_add_root(w, S_VM, 0xd00),
	   w);
	ok(vmheap_writer_finish(w), w);
	vmheap_writer_free(w);
	fclose(f);
	return path;
}

/* ------------------------------------------------------------ queries */

static uint32_t find(const vmheap_graph *g, uint64_t id)
{
	uint32_t i = vmheap_graph_find(g, id);

	ck_assert_msg(i != VMHEAP_GRAPH_NONE, "no object 0x%" PRIx64, id);
	return i;
}

/* The text of the name of the reference from `from` to `to`. */
static void expect_edge_text(const vmheap_graph *g, uint64_t from, uint64_t to,
			     const char *text)
{
	struct vmheap_graph_name n;

	ck_assert_int_eq(
	    vmheap_graph_edge_name(g, find(g, from), find(g, to), &n),
	    VMHEAP_GRAPH_NAME_TEXT);
	ck_assert_uint_eq(n.len, strlen(text));
	ck_assert_str_eq(n.text, text);
}

START_TEST(graph_keeps_every_name_form)
{
	const char *path = write_named_heap("named.vmheap", 1);
	vmheap_graph *g = NULL;
	struct vmheap_graph_name n;
	size_t len;

	ck_assert_int_eq(vmheap_graph_open_path(&g, path), 0);
	ck_assert_int_eq(vmheap_graph_has_edge_names(g), 1);
	expect_edge_text(g, 0x100, 0x200, "::STORE");
	expect_edge_text(g, 0x200, 0x310, "@cache");
	expect_edge_text(g, 0x300, 0x400, "[\"k17\"]");
	expect_edge_text(g, 0x310, 0x430, "[\"k1\"]");
	expect_edge_text(g, 0x600, 0x710, "key");
	/* element index 1, and a string id without a record */
	ck_assert_int_eq(
	    vmheap_graph_edge_name(g, find(g, 0x500), find(g, 0x610), &n),
	    VMHEAP_GRAPH_NAME_INDEX);
	ck_assert_uint_eq(n.index, 1);
	ck_assert_int_eq(vmheap_graph_reference_name(g, find(g, 0x600), 3, &n),
			 VMHEAP_GRAPH_NAME_UNKNOWN);
	ck_assert_uint_eq(n.string_id, S_MISSING);
	/* no reference, and an unnamed one */
	ck_assert_int_eq(
	    vmheap_graph_edge_name(g, find(g, 0x400), find(g, 0x100), &n),
	    VMHEAP_GRAPH_NAME_NONE);
	/* root names */
	ck_assert_ptr_null(vmheap_graph_root_name(g, 0, &len));
	ck_assert_str_eq(vmheap_graph_root_name(g, 1, &len), "$audit");
	ck_assert_uint_eq(len, 6);
	ck_assert_uint_eq(vmheap_graph_root(g, 1)->name_string_id, S_AUDIT);
	/* the path's names: the reference each object is reached by */
	ck_assert_int_eq(vmheap_graph_path_name(g, find(g, 0x400), &n),
			 VMHEAP_GRAPH_NAME_NONE); /* before the paths */
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
	ck_assert_int_eq(vmheap_graph_path_name(g, find(g, 0x400), &n),
			 VMHEAP_GRAPH_NAME_TEXT);
	ck_assert_str_eq(n.text, "[\"k17\"]");
	ck_assert_int_eq(vmheap_graph_path_name(g, find(g, 0x100), &n),
			 VMHEAP_GRAPH_NAME_NONE); /* a root object */
	vmheap_graph_free(g);

	/* the same heap without names: nothing kept, nothing shown */
	path = write_named_heap("plain.vmheap", 0);
	ck_assert_int_eq(vmheap_graph_open_path(&g, path), 0);
	ck_assert_int_eq(vmheap_graph_has_edge_names(g), 0);
	ck_assert_int_eq(vmheap_graph_shortest_paths(g), 0);
	ck_assert_int_eq(vmheap_graph_path_name(g, find(g, 0x400), &n),
			 VMHEAP_GRAPH_NAME_NONE);
	ck_assert_ptr_null(vmheap_graph_root_name(g, 1, NULL));
	vmheap_graph_free(g);
}
END_TEST

/*
 * Shapes against brute force: random heaps (up to 150 objects of classes
 * 1..4, 0 to 3 references each, duplicates, self-loops and missing ids;
 * 1 to 4 roots of two kinds, named or not) whose references carry random
 * names: an ivar under two string ids of one text, another ivar, a hash
 * key, a field, an index, a string the dump lacks, or none.  A breadth-
 * first search from the root records in file order gives each object its
 * path; its shape is spelled out as text (root kind and name, then each
 * class with the name it is reached by, elements as one word); the
 * groups vmheap_graph_class_paths() makes must be exactly those texts,
 * with the same counts.
 */
#define RMAX 150

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 8) & 0xffff;
}

struct rheap {
	size_t n, nroots;
	uint64_t cls[RMAX];
	size_t nrefs[RMAX];
	long ref[RMAX][3]; /* object index, -1: a missing id */
	int64_t name[RMAX][3];
	size_t root_obj[4];
	uint64_t root_kind[4], root_name[4];
};

/* Name values: string ids 1..7 (see texts), 0, or an index. */
static const char *const rtexts[] = {NULL, "@a", "@b", "[\"x\"]",
				     ".f", "@a", "$g", "$h"};

static const char *write_rheap(const struct rheap *h, const char *name)
{
	const char *path = tmp_path(name);
	struct vmheap_writer_options o = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w = NULL;
	FILE *f = fopen(path, "wb");
	uint64_t refs[3];

	ck_assert_ptr_nonnull(f);
	o.edge_names = 1;
	ok(vmheap_writer_open(&w, fileno(f), &o), w);
	for (uint64_t k = 1; k < sizeof(rtexts) / sizeof(*rtexts); k++)
		ok(vmheap_writer_add_string(w, k, rtexts[k], strlen(rtexts[k])),
		   w);
	ok(vmheap_writer_add_string(w, 10, "vm", 2), w);
	ok(vmheap_writer_add_string(w, 11, "globals", 7), w);
	for (size_t i = 0; i < h->n; i++) {
		for (size_t r = 0; r < h->nrefs[i]; r++)
			refs[r] = h->ref[i][r] < 0
				      ? 0x99990
				      : 0x1000 + 0x10 * (uint64_t)h->ref[i][r];
		obj(w, 0x1000 + 0x10 * i, h->cls[i], 16, refs, h->name[i],
		    h->nrefs[i]);
	}
	for (size_t k = 0; k < h->nroots; k++)
		ok(vmheap_writer_add_root_named(w, h->root_kind[k],
						0x1000 + 0x10 * h->root_obj[k],
						h->root_name[k]),
		   w);
	ok(vmheap_writer_finish(w), w);
	vmheap_writer_free(w);
	fclose(f);
	return path;
}

static void random_rheap(struct rheap *h, unsigned seed)
{
	unsigned s = seed * 2654435761u + 7;

	memset(h, 0, sizeof(*h));
	h->n = 1 + rnd(&s) % RMAX;
	for (size_t i = 0; i < h->n; i++) {
		h->cls[i] = 1 + rnd(&s) % 4;
		h->nrefs[i] = rnd(&s) % 4;
		for (size_t r = 0; r < h->nrefs[i]; r++) {
			/* "@a" under either of its ids most often */
			static const int64_t pick[10] = {0, 1, 1, 5,  5,
							 2, 3, 4, -1, 99};
			int64_t v = pick[rnd(&s) % 10];
			h->ref[i][r] =
			    rnd(&s) % 12 ? (long)(rnd(&s) % h->n) : -1;
			h->name[i][r] = v == -1 ? vmheap_edge_name_index(r) : v;
		}
	}
	h->nroots = 1 + rnd(&s) % 4;
	for (size_t k = 0; k < h->nroots; k++) {
		h->root_obj[k] = rnd(&s) % h->n;
		h->root_kind[k] = 10 + rnd(&s) % 2;
		h->root_name[k] = rnd(&s) % 3 ? 6 + rnd(&s) % 2 : 0;
	}
}

/* The shape text of a name value: "" none, "E" element, else its text
 * (two ids of one text are one name), "?99" a string the dump lacks. */
static void name_word(int64_t v, char *buf, size_t len)
{
	if (v == 0)
		snprintf(buf, len, "-");
	else if (v < 0 || (v < 8 && rtexts[v][0] == '['))
		snprintf(buf, len, "E");
	else if (v < 8)
		snprintf(buf, len, "%s", rtexts[v]);
	else
		snprintf(buf, len, "?%lld", (long long)v);
}

/* Breadth-first from the roots in file order; the shape text of each
 * reachable object into shape[i] (NULL: unreachable). */
static void brute_shapes(const struct rheap *h, char **shape)
{
	long parent[RMAX], via[RMAX], root_of[RMAX];
	size_t queue[RMAX], head = 0, tail = 0;
	char word[32];

	for (size_t i = 0; i < h->n; i++)
		parent[i] = -2, shape[i] = NULL;
	for (size_t k = 0; k < h->nroots; k++) {
		size_t v = h->root_obj[k];
		if (parent[v] != -2)
			continue;
		parent[v] = -1;
		root_of[v] = (long)k;
		queue[tail++] = v;
	}
	while (head < tail) {
		size_t v = queue[head++];
		for (size_t r = 0; r < h->nrefs[v]; r++) {
			long w = h->ref[v][r];
			if (w < 0 || parent[w] != -2)
				continue;
			parent[w] = (long)v;
			via[w] = (long)r;
			queue[tail++] = (size_t)w;
		}
	}
	/* in BFS order, so that a parent's text exists before its child's */
	for (size_t q = 0; q < tail; q++) {
		size_t v = queue[q];
		char buf[4096];
		if (parent[v] == -1) {
			size_t k = (size_t)root_of[v];
			name_word((int64_t)h->root_name[k], word, sizeof(word));
			snprintf(buf, sizeof(buf), "%llu %s | %llu",
				 (unsigned long long)h->root_kind[k], word,
				 (unsigned long long)h->cls[v]);
		} else {
			size_t p = (size_t)parent[v];
			char up[64];
			name_word(h->name[p][via[v]], word, sizeof(word));
			snprintf(buf, sizeof(buf), "%s > %s %llu", shape[p],
				 word, (unsigned long long)h->cls[v]);
			/* a run of one class by one name is one step */
			if (parent[p] != -1 && h->cls[p] == h->cls[v]) {
				name_word(h->name[parent[p]][via[p]], up,
					  sizeof(up));
				if (!strcmp(up, word))
					snprintf(buf, sizeof(buf), "%s",
						 shape[p]);
			}
		}
		shape[v] = strdup(buf);
	}
}

START_TEST(shapes_with_names_agree_with_brute_force)
{
	struct rheap *h = malloc(sizeof(*h));
	char *shape[RMAX], name[64];
	vmheap_graph *g = NULL;

	ck_assert_ptr_nonnull(h);
	random_rheap(h, (unsigned)_i);
	brute_shapes(h, shape);
	snprintf(name, sizeof(name), "random-%d.vmheap", _i);
	ck_assert_int_eq(vmheap_graph_open_path(&g, write_rheap(h, name)), 0);
	for (uint64_t c = 1; c <= 4; c++) {
		struct vmheap_graph_class_paths *p = NULL;
		size_t shapes = 0, covered = 0;

		ck_assert_int_eq(vmheap_graph_class_paths(g, c, &p), 0);
		/* the distinct shape texts of class c, and their counts */
		for (size_t i = 0; i < h->n; i++) {
			int first = 1;
			if (h->cls[i] != c || !shape[i])
				continue;
			for (size_t j = 0; j < i && first; j++)
				if (h->cls[j] == c && shape[j] &&
				    !strcmp(shape[j], shape[i]))
					first = 0;
			shapes += first;
		}
		ck_assert_uint_eq(p->group_count, shapes);
		for (size_t k = 0; k < p->group_count; k++) {
			const struct vmheap_graph_path_group *grp =
			    &p->groups[k];
			size_t ex =
			    (size_t)((vmheap_graph_object_id(g, grp->example) -
				      0x1000) /
				     0x10);
			uint64_t count = 0;
			for (size_t i = 0; i < h->n; i++)
				count += h->cls[i] == c && shape[i] &&
					 !strcmp(shape[i], shape[ex]);
			ck_assert_msg(count == grp->count,
				      "seed %d class %llu shape '%s': %llu "
				      "objects, the graph says %llu",
				      _i, (unsigned long long)c, shape[ex],
				      (unsigned long long)count,
				      (unsigned long long)grp->count);
			covered += count;
		}
		ck_assert_uint_eq(covered + p->unreachable, p->instances);
		vmheap_graph_class_paths_free(p);
	}
	for (size_t i = 0; i < h->n; i++)
		free(shape[i]);
	vmheap_graph_free(g);
	free(h);
}
END_TEST

/* ------------------------------------------------------------ tools */

/* Run `name` with `args` (exit 0) and expect `want` in its output. */
static void expect_out(const char *name, const char *const *args,
		       const char *want)
{
	struct spec_run r = spec_tool_ok(name, args);

	ck_assert_msg(strstr(r.out, want), "%s", r.out);
	spec_run_free(&r);
}

START_TEST(paths_read_as_people_say_them)
{
	const char *path = write_named_heap("named.vmheap", 1);
	struct spec_run r;

	/* the example: every Entry of the @store Hash is one shape
	 * (hash keys are elements), the @cache one another */
	r = spec_tool_ok("vmheap-path", (const char *[]){path, "Entry", NULL});
	ck_assert_msg(strstr(r.out, "2 path shapes"), "%s", r.out);
	ck_assert_msg(
	    strstr(r.out,
		   "#1  3 instances (75.0%), 72 B, path of 4 objects\n"
		   "    Entry " LEFT " Hash[\"k17\"] " LEFT
		   " @store of Registry " LEFT " constant Registry::STORE " LEFT
		   " root vm\n"
		   "    root vm\n"
		   "      Class  0x100\n"
		   "      Registry  0x200  " LEFT " constant Registry::STORE\n"
		   "      Hash  0x300  " LEFT " @store of Registry\n"
		   "      Entry  0x400  " LEFT " Hash[\"k17\"]\n"),
	    "%s", r.out);
	ck_assert_msg(strstr(r.out,
			     "#2  1 instance (25.0%), 24 B, path of 4 "
			     "objects\n    Entry " LEFT " Hash[\"k1\"] " LEFT
			     " @cache of Registry " LEFT),
		      "%s", r.out);
	spec_run_free(&r);

	/* an element index, a field, "key", a verbatim name, a string the
	 * dump lacks, and the root's name */
	r = spec_tool_ok("vmheap-path", (const char *[]){path, "String", NULL});
	ck_assert_msg(strstr(r.out, "    String " LEFT " key of Node " LEFT
				    " Array[0] " LEFT " root globals $audit\n"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "    String " LEFT " weird of Node " LEFT
				    " Array[0] " LEFT),
		      "%s", r.out);
	ck_assert_msg(
	    strstr(r.out, "    String " LEFT " <string 999> of Node "), "%s",
	    r.out);
	ck_assert_msg(strstr(r.out, "    String " LEFT " Registry.COUNT " LEFT
				    " root vm\n"),
		      "%s", r.out);
	spec_run_free(&r);
	/* two string records of one text are one name: Node 0x700 and Node
	 * 0x740, each reached by a ".next" of its own record, are one shape */
	r = spec_tool_ok("vmheap-path", (const char *[]){path, "Node", NULL});
	ck_assert_msg(strstr(r.out,
			     "class Node: 4 instances, 128 bytes; 2 path "
			     "shapes;"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "#2  2 instances (50.0%), 64 B, path of 3 "
				    "objects\n    Node " LEFT " Node.next " LEFT
				    " Array[0] " LEFT " root globals $audit\n"),
		      "%s", r.out);
	spec_run_free(&r);
	expect_out("vmheap-path", (const char *[]){path, "0x700", NULL},
		   "    Node " LEFT " Node.next " LEFT " Array[0] " LEFT
		   " root globals $audit\n"
		   "    root globals $audit\n");

	/* a constant of a module that has no class record of its own id:
	 * its name is the constant that holds it */
	expect_out("vmheap-path", (const char *[]){path, "0xb00", NULL},
		   "    Hash " LEFT " constant App::CONFIG " LEFT
		   " constant Object::App " LEFT " root vm\n");
	/* a class that is a root named by its path (as the Ruby host does) */
	expect_out("vmheap-path", (const char *[]){path, "0xd10", NULL},
		   "    Hash " LEFT " constant Config::LIMIT " LEFT
		   " root vm Config\n");
	expect_out("vmheap-path", (const char *[]){path, "0xd20", NULL},
		   "    String " LEFT " @cache of Config " LEFT
		   " root vm Config\n");

	/* the dominators' chain */
	expect_out(
	    "vmheap-dominators",
	    (const char *[]){"--class", "Hash", "--format", "csv", path, NULL},
	    ",@store of Registry 0x200 " LEFT
	    " constant Registry::STORE 0x100 " LEFT " root vm\n");
}
END_TEST

START_TEST(json_carries_the_names)
{
	const char *path = write_named_heap("named.vmheap", 1);
	struct spec_run r =
	    spec_tool_ok("vmheap-path", (const char *[]){"--format", "json",
							 path, "Node", NULL});
	struct jval *j = json_parse(r.out);
	const struct jval *grp, *p, *root;

	ck_assert_msg(j, "%s", r.out);
	grp = json_get(j, "groups")->items[0];
	root = json_get(grp, "root");
	ck_assert_str_eq(json_get(root, "kind")->str, "globals");
	ck_assert_str_eq(json_get(root, "name")->str, "$audit");
	p = json_get(grp, "path");
	ck_assert_uint_eq(p->n, 2);
	ck_assert_ptr_null(json_get(p->items[0], "name"));
	ck_assert_ptr_null(json_get(p->items[0], "index"));
	ck_assert_int_eq(json_get(p->items[1], "index")->inum, 0);
	json_free(j);
	spec_run_free(&r);

	r = spec_tool_ok("vmheap-path", (const char *[]){"--format", "json",
							 path, "0x400", NULL});
	ck_assert_msg((j = json_parse(r.out)), "%s", r.out);
	p = json_get(json_get(j, "groups")->items[0], "path");
	ck_assert_uint_eq(p->n, 4);
	ck_assert_str_eq(json_get(p->items[1], "name")->str, "::STORE");
	ck_assert_str_eq(json_get(p->items[2], "name")->str, "@store");
	ck_assert_str_eq(json_get(p->items[3], "name")->str, "[\"k17\"]");
	ck_assert_int_eq(
	    json_get(json_get(json_get(j, "groups")->items[0], "root"), "name")
		->type,
	    J_NULL);
	json_free(j);
	spec_run_free(&r);
}
END_TEST

START_TEST(a_dump_without_names_prints_its_paths_as_before)
{
	const char *path = write_named_heap("plain.vmheap", 0);
	struct spec_run r =
	    spec_tool_ok("vmheap-path", (const char *[]){path, "Entry", NULL});

	/* no shape per name: the four Entries of the two Hashes are one */
	ck_assert_msg(strstr(r.out, "#1  4 instances (100.0%), 96 B, path of 4 "
				    "objects\n"
				    "    root vm\n"
				    "      Class  0x100\n"
				    "      Registry  0x200\n"
				    "      Hash  0x300\n"
				    "      Entry  0x400\n"),
		      "%s", r.out);
	ck_assert_msg(!strstr(r.out, LEFT), "%s", r.out);
	spec_run_free(&r);
	r = spec_tool_ok("vmheap-dominators",
			 (const char *[]){"--top", "3", path, NULL});
	ck_assert_msg(!strstr(r.out, "@store") && !strstr(r.out, "constant") &&
			  !strstr(r.out, "$audit"),
		      "%s", r.out);
	spec_run_free(&r);
	r = spec_tool_ok("vmheap-path", (const char *[]){"--format", "json",
							 path, "0x400", NULL});
	ck_assert_msg(
	    !strstr(r.out, "\"index\"") &&
		strstr(r.out, "\"root\":{\"kind\":\"vm\",\"name\":null}") &&
		strstr(r.out, "{\"class\":\"Entry\",\"address\":"
			      "\"0x400\"}"),
	    "%s", r.out);
	spec_run_free(&r);
}
END_TEST

/* ------------------------------------------------------------ sample VM */

/* Ask the sample VM `vm` for a dump into `path` (vmheap-console). */
static void sample_dump(const struct spec_vm *vm, const char *path)
{
	char cmd[600], envtmp[300];
	struct spec_run r;

	snprintf(cmd, sizeof(cmd), "set system.memory.dump %s", path);
	snprintf(envtmp, sizeof(envtmp), "VMHEAP_AGENT_TMPDIR=%s", vm->tmpdir);
	ck_assert_int_eq(spec_run((const char *[]){spec_bin("vmheap-console"),
						   "-e", cmd, NULL},
				  (const char *[]){envtmp, NULL}, NULL, 60000,
				  &r),
			 0);
	ck_assert_msg(r.status == 0, "console: %s%s", r.out, r.err);
	spec_run_free(&r);
}

/* Dumps of the sample VM until its leak Array holds `want` Requests. */
static const char *sample_dump_with(const struct spec_vm *vm, const char *name,
				    int want)
{
	char wanted[64], file[64];

	struct spec_wait w;

	snprintf(wanted, sizeof(wanted), "class Request: %d instances", want);
	spec_wait_begin(&w, 30000);
	w.interval_ms = 100;
	for (int tries = 0;; tries++) {
		const char *path;
		snprintf(file, sizeof(file), "%d-%s", tries, name);
		path = tmp_path(file);
		struct spec_run r;
		sample_dump(vm, path);
		r = spec_tool("vmheap-path",
			      (const char *[]){path, "Request", NULL});
		int done = r.status == 0 && strstr(r.out, wanted);
		spec_run_free(&r);
		if (done)
			return path;
		spec_wait_or_fail(&w, "the sample VM's heap to hold %d Requests",
				  want);
	}
}

START_TEST(the_sample_vm_names_its_leak_path)
{
	struct spec_vm vm;
	const char *dump;
	struct spec_run r;
	struct jval *j;
	const struct jval *p;

	spec_vm_start(&vm, tmp_dir(), tmp_dir(),
		      &(struct spec_vm_opts){
			  .args = (const char *[]){"--leak", "Request:4",
						   "--ticks", "3", NULL}});
	dump = sample_dump_with(&vm, "sample.vmheap", 12);
	/* the 12 Requests of the leak Array are one shape; the example is
	 * the newest (the sample lists its objects newest first): element 11 */
	r = spec_tool_ok("vmheap-path",
			 (const char *[]){dump, "Request", NULL});
	ck_assert_msg(strstr(r.out, "1 path shape;"), "%s", r.out);
	ck_assert_msg(strstr(r.out,
			     "    Request " LEFT " Array[11] " LEFT
			     " Hash[:leaks] " LEFT " root globals $globals\n"
			     "    root globals $globals\n"),
		      "%s", r.out);
	spec_run_free(&r);
	expect_out("vmheap-path", (const char *[]){dump, "Buffer", NULL},
		   "    Buffer " LEFT " @buffer of Session " LEFT
		   " root stack thread \"mutator\"\n");
	r = spec_tool_ok(
	    "vmheap-path",
	    (const char *[]){"--format", "json", dump, "Request", NULL});
	ck_assert_msg((j = json_parse(r.out)), "%s", r.out);
	p = json_get(json_get(j, "groups")->items[0], "path");
	ck_assert_uint_eq(p->n, 3);
	ck_assert_str_eq(json_get(p->items[1], "name")->str, "[:leaks]");
	ck_assert_int_eq(json_get(p->items[2], "index")->inum, 11);
	json_free(j);
	spec_run_free(&r);
	r = spec_tool_ok("vmheap-dominators",
			 (const char *[]){"--top", "2", dump, NULL});
	ck_assert_msg(strstr(r.out, "Hash[:leaks] 0x"), "%s", r.out);
	ck_assert_msg(strstr(r.out, " " LEFT " root globals $globals\n"), "%s",
		      r.out);
	spec_run_free(&r);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
}
END_TEST

START_TEST(diff_paths_and_suspects_name_the_leak)
{
	struct spec_vm vm;
	const char *old, *new;
	struct spec_run r;

	spec_vm_start(&vm, tmp_dir(), tmp_dir(),
		      &(struct spec_vm_opts){
			  .args = (const char *[]){"--leak", "Request:50",
						   "--tick-ms", "20", NULL}});
	old = tmp_path("old.vmheap");
	new = tmp_path("new.vmheap");
	sample_dump(&vm, old);
	spec_vm_wait_ticks(&vm, 15, 30000); /* 750 more Requests */
	sample_dump(&vm, new);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	r = spec_tool_ok("vmheap-diff",
			 (const char *[]){"--paths", old, new, NULL});
	ck_assert_msg(strstr(r.out, "Request " LEFT " Array["), "%s", r.out);
	ck_assert_msg(strstr(r.out, "] " LEFT " Hash[:leaks] " LEFT
				    " root globals $globals\n"),
		      "%s", r.out);
	spec_run_free(&r);
	r = spec_tool_ok("vmheap-diff",
			 (const char *[]){"--suspects", old, new, NULL});
	ck_assert_msg(strstr(r.out, "    held by root globals $globals > "),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, " " LEFT " Hash[:leaks] " LEFT
				    " root globals $globals\n"),
		      "%s", r.out);
	spec_run_free(&r);
}
END_TEST

/*
 * Class records that name their own object (element 5): the object reads
 * as its class ("Class Service"), an anonymous one as the VM printed it,
 * and a local variable's name says whose it is, without " of HOLDER":
 *
 *   root vm -> Object 0x10 ::Service -> Class 0x20 (class 2 "Service")
 *     Class 0x20 @rows -> Array 0x50 -[0]-> Service 0x60
 *   root vm -> Class 0x30 (class 3, anonymous) @big -> Array 0x70
 *   root vm -> Binding 0x80 -> <imemo:env> 0x90
 *     local messages of <main> (app.rb) -> Array 0xa0 -[0]-> Message 0xb0
 *   Module 0x40: a module no class record names ("Module" alone)
 */
START_TEST(class_objects_and_locals_read_by_name)
{
	enum { K_CLASS = 1, K_SERVICE, K_ANON, K_OBJECT, K_ARRAY, K_MODULE,
	       K_BINDING, K_ENV, K_MESSAGE };
	enum { T_VM = 1, T_SERVICE, T_ROWS, T_BIG, T_LOCAL };
	static const char anon[] = "#<Class:0x0000000000000030>";
	const char *path = tmp_path("classes.vmheap");
	struct vmheap_writer_options o = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w = NULL;
	vmheap_graph *g = NULL;
	FILE *f = fopen(path, "wb");
	char *label;
	uint64_t self = 0;
	struct spec_run r;

	ck_assert_ptr_nonnull(f);
	o.vm_name = "test";
	o.edge_names = 1;
	ok(vmheap_writer_open(&w, fileno(f), &o), w);
	ok(vmheap_writer_add_string(w, T_VM, "vm", 2), w);
	ok(vmheap_writer_add_string(w, T_SERVICE, "::Service", 9), w);
	ok(vmheap_writer_add_string(w, T_ROWS, "@rows", 5), w);
	ok(vmheap_writer_add_string(w, T_BIG, "@big", 4), w);
	ok(vmheap_writer_add_string(w, T_LOCAL,
				    "local messages of <main> (app.rb)", 33),
	   w);
	ok(vmheap_writer_add_class(w, K_CLASS, "Class", 5, 0, 0), w);
	ok(vmheap_writer_add_class_object(w, K_SERVICE, "Service", 7, 0, 0,
					  0x20),
	   w);
	ok(vmheap_writer_add_class_object(w, K_ANON, anon, sizeof(anon) - 1,
					  0, 1, 0x30),
	   w);
	ok(vmheap_writer_add_class_object(w, K_OBJECT, "Object", 6, 0, 0,
					  0x10),
	   w);
	ok(vmheap_writer_add_class(w, K_ARRAY, "Array", 5, 0, 0), w);
	ok(vmheap_writer_add_class(w, K_MODULE, "Module", 6, 0, 0), w);
	ok(vmheap_writer_add_class(w, K_BINDING, "Binding", 7, 0, 0), w);
	ok(vmheap_writer_add_class(w, K_ENV, "<imemo:env>", 11, 0, 0), w);
	ok(vmheap_writer_add_class(w, K_MESSAGE, "Message", 7, 0, 0), w);
	{
		static const uint64_t r10[] = {0x20}, r20[] = {0x50},
				      r30[] = {0x70}, r50[] = {0x60},
				      r80[] = {0x90}, r90[] = {0xa0},
				      ra0[] = {0xb0};
		static const int64_t n10[] = {T_SERVICE}, n20[] = {T_ROWS},
				     n30[] = {T_BIG}, n50[] = {-1},
				     n90[] = {T_LOCAL}, na0[] = {-1};
		obj(w, 0x10, K_CLASS, 500, r10, n10, 1);
		obj(w, 0x20, K_CLASS, 400, r20, n20, 1);
		obj(w, 0x30, K_CLASS, 300, r30, n30, 1);
		obj(w, 0x40, K_MODULE, 200, NULL, NULL, 0);
		obj(w, 0x50, K_ARRAY, 1000, r50, n50, 1);
		obj(w, 0x60, K_SERVICE, 40, NULL, NULL, 0);
		obj(w, 0x70, K_ARRAY, 2000, NULL, NULL, 0);
		obj(w, 0x80, K_BINDING, 40, r80, NULL, 1);
		obj(w, 0x90, K_ENV, 40, r90, n90, 1);
		obj(w, 0xa0, K_ARRAY, 800, ra0, na0, 1);
		obj(w, 0xb0, K_MESSAGE, 40, NULL, NULL, 0);
	}
	ok(vmheap_writer_add_root(w, T_VM, 0x10), w);
	ok(vmheap_writer_add_root(w, T_VM, 0x30), w);
	ok(vmheap_writer_add_root(w, T_VM, 0x40), w);
	ok(vmheap_writer_add_root(w, T_VM, 0x80), w);
	ok(vmheap_writer_finish(w), w);
	vmheap_writer_free(w);
	fclose(f);

	/* the queries */
	ck_assert_int_eq(vmheap_graph_open_path(&g, path), 0);
	ck_assert_int_eq(vmheap_graph_object_as_class(g, find(g, 0x20), &self),
			 1);
	ck_assert_uint_eq(self, K_SERVICE);
	ck_assert_int_eq(vmheap_graph_object_as_class(g, find(g, 0x40), &self),
			 0);
	ck_assert_int_eq(vmheap_graph_object_as_class(g, find(g, 0x60), &self),
			 0);
	label = vmheap_graph_object_label(g, find(g, 0x20));
	ck_assert_str_eq(label, "Class Service");
	free(label);
	label = vmheap_graph_object_label(g, find(g, 0x30));
	ck_assert_str_eq(label, anon);
	free(label);
	label = vmheap_graph_object_label(g, find(g, 0x40));
	ck_assert_str_eq(label, "Module");
	free(label);
	label = vmheap_graph_object_label(g, find(g, 0x60));
	ck_assert_str_eq(label, "Service");
	free(label);
	vmheap_graph_free(g);

	/* the tools */
	r = spec_tool_ok("vmheap-dominators", (const char *[]){path, NULL});
	ck_assert_msg(strstr(r.out, "  Class Service  "), "%s", r.out);
	ck_assert_msg(strstr(r.out, "  Class Object  "), "%s", r.out);
	ck_assert_msg(strstr(r.out, anon), "%s", r.out);
	/* the Array's dominator chain: @rows of the class, by name */
	ck_assert_msg(strstr(r.out, "@rows of Service 0x20 " LEFT
				    " constant Object::Service 0x10 " LEFT
				    " root vm"),
		      "%s", r.out);
	spec_run_free(&r);
	expect_out("vmheap-path", (const char *[]){path, "Service", NULL},
		   "    Service " LEFT " Array[0] " LEFT " @rows of Service "
		   LEFT " constant Object::Service " LEFT " root vm\n");
	expect_out("vmheap-path", (const char *[]){path, "Service", NULL},
		   "      Class Object  0x10\n"
		   "      Class Service  0x20  " LEFT
		   " constant Object::Service\n");
	/* JSON keeps "class" and adds the class the object is */
	expect_out("vmheap-dominators",
		   (const char *[]){"--format", "json", path, NULL},
		   "\"address\":\"0x20\",\"class\":\"Class\","
		   "\"class_of_itself\":\"Service\",");
	expect_out("vmheap-path", (const char *[]){path, "Message", NULL},
		   "    Message " LEFT " Array[0] " LEFT
		   " local messages of <main> (app.rb) " LEFT " Binding " LEFT
		   " root vm\n");
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("names");
	TCase *q = spec_tcase(s, "queries", 60);
	TCase *t = spec_tcase(s, "tools", 60);
	TCase *vm = spec_tcase(s, "sample VM", 120);

	tcase_add_test(q, graph_keeps_every_name_form);
	tcase_add_loop_test(q, shapes_with_names_agree_with_brute_force, 0, 40);
	tcase_add_test(t, paths_read_as_people_say_them);
	tcase_add_test(t, json_carries_the_names);
	tcase_add_test(t, a_dump_without_names_prints_its_paths_as_before);
	tcase_add_test(t, class_objects_and_locals_read_by_name);
	tcase_add_test(vm, the_sample_vm_names_its_leak_path);
	tcase_add_test(vm, diff_paths_and_suspects_name_the_leak);
	return s;
}
