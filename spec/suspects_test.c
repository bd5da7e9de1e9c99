/*
 * suspects_test.c - Check suite of libvmheap-analysis's leak suspects
 * (analysis/vmheap_suspects.h): vmheap_new_objects_mark() and
 * vmheap_suspects_rank() on dumps of the real writer, read back as heap
 * graphs.
 *
 *  - heaps whose owners, held bytes and growth are known by construction
 *    (a composite leak of requests, lone Strings, churn alone): the figures
 *    vmheap-diff --suspects prints (spec/graphtools_test.c checks the
 *    tool's text, JSON and CSV; real Ruby VMs are there too);
 *  - random heaps (cycles, shared parts, unreachable objects, ids that
 *    change class) against brute force computed here: an object's owner is
 *    the new object among those that dominate it (no root reaches it once
 *    that one is removed) which no other such new object dominates.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/vmheap_spec.h"
#include "tools_harness-internal.h"
#include "vmheap.h"
#include "vmheap_graph_query.h"
#include "vmheap_suspects.h"

/* ------------------------------------------------------------ heaps */

#define MAXN 2048

struct heap {
	struct tobj objs[MAXN];
	uint64_t refs[MAXN][8];
	uint64_t array_refs[MAXN], hash_refs[64]; /* request_heap()'s */
	size_t n;
	struct troot roots[8];
	size_t nroots;
};

#define C_OBJECT 1
#define C_ARRAY 2
#define C_HASH 3
#define C_REQUEST 6
#define C_STRING 7
#define C_TIME 8
#define C_STRING2 9 /* a second class id labelled String */

static const struct tclass classes[] = {
    {C_OBJECT, "Object"},	 {C_ARRAY, "Array"}, {C_HASH, "Hash"},
    {C_REQUEST, "LeakedRequest"}, {C_STRING, "String"}, {C_TIME, "Time"},
    {C_STRING2, "String"},
};

static size_t obj(struct heap *h, uint64_t id, uint64_t cls, uint64_t bytes)
{
	ck_assert_uint_lt(h->n, MAXN);
	h->objs[h->n] = (struct tobj){.id = id, .cls = cls, .bytes = bytes};
	return h->n++;
}

static void ref(struct heap *h, size_t from, uint64_t to)
{
	struct tobj *o = &h->objs[from];

	ck_assert_uint_lt(o->nrefs, 8);
	h->refs[from][o->nrefs++] = to;
}

static void root(struct heap *h, const char *kind, uint64_t id)
{
	ck_assert_uint_lt(h->nroots, 8);
	h->roots[h->nroots] = (struct troot){
	    .string_id = 100 + h->nroots, .kind = kind, .object = id};
	h->nroots++;
}

/* The heap written to scratch/name and read back as a graph. */
static vmheap_graph *graph_of(struct heap *h, const char *name)
{
	struct tdump d = {0};
	vmheap_graph *g;

	for (size_t i = 0; i < h->n; i++)
		h->objs[i].many = h->refs[i];
	d.classes = classes;
	d.nclasses = sizeof(classes) / sizeof(*classes);
	d.objs = h->objs;
	d.nobjs = h->n;
	d.roots = h->roots;
	d.nroots = h->nroots;
	ck_assert_msg(vmheap_graph_open_path(&g, write_dump(name, &d)) == 0,
		      "%s", vmheap_graph_error(g));
	return g;
}

/* ------------------------------------------------------------ requests */

#define REQUEST_BYTES (80 + 4 * 40 + 2 * 160 + 56)

/*
 * A global's Array (0x1000) holding `requests` LeakedRequests numbered from
 * `first` (80 bytes, each holding 4 Strings of 40 bytes, 2 Hashes of 160
 * and a Time of 56) and `lone` Strings of 40 bytes; a "vm" root Object
 * holding a Hash with 50 Strings of 40 bytes whose ids start at `churn`.
 * (The heaps of graphtools_test.c's "suspects" TCase.)
 */
static void request_heap(struct heap *h, size_t first, size_t requests,
			 size_t lone, uint64_t churn)
{
	static const uint64_t parts[7][2] = {
	    {C_STRING, 40}, {C_STRING, 40}, {C_STRING, 40}, {C_STRING, 40},
	    {C_HASH, 160},  {C_HASH, 160},  {C_TIME, 56}};
	uint64_t *many = h->array_refs;

	memset(h, 0, sizeof(*h));
	size_t array = obj(h, 0x1000, C_ARRAY, 40 + 8 * (requests + lone));
	size_t holder = obj(h, 0x2000, C_OBJECT, 40);
	size_t hash = obj(h, 0x3000, C_HASH, 160);
	size_t nmany = 0;
	ref(h, holder, 0x3000);
	for (size_t k = first; k < first + requests; k++) {
		uint64_t id = 0x100000 + 0x100 * k;
		size_t req = obj(h, id, C_REQUEST, 80);
		many[nmany++] = id;
		for (size_t j = 0; j < 7; j++) {
			obj(h, id + 0x10 * (j + 1), parts[j][0], parts[j][1]);
			ref(h, req, id + 0x10 * (j + 1));
		}
	}
	for (size_t k = 0; k < lone; k++) {
		obj(h, 0x200000 + 0x10 * k, C_STRING, 40);
		many[nmany++] = 0x200000 + 0x10 * k;
	}
	/* the Array's many references (more than the 8 of refs[]) */
	h->objs[array].nrefs = nmany;
	h->objs[array].many = many;
	for (size_t k = 0; k < 50; k++)
		obj(h, churn + 0x10 * k, C_STRING, 40);
	/* the churn Hash's 50 Strings: through a second list */
	for (size_t k = 0; k < 50; k++)
		h->hash_refs[k] = churn + 0x10 * k;
	h->objs[hash].nrefs = 50;
	h->objs[hash].many = h->hash_refs;
	root(h, "global_tbl", 0x1000);
	root(h, "vm", 0x2000);
}

/* graph_of() that keeps the `many` lists request_heap() set. */
static vmheap_graph *request_graph(struct heap *h, const char *name)
{
	struct tdump d = {0};
	vmheap_graph *g;

	for (size_t i = 0; i < h->n; i++)
		if (!h->objs[i].many)
			h->objs[i].many = h->refs[i];
	d.classes = classes;
	d.nclasses = 6;
	d.objs = h->objs;
	d.nobjs = h->n;
	d.roots = h->roots;
	d.nroots = h->nroots;
	ck_assert_msg(vmheap_graph_open_path(&g, write_dump(name, &d)) == 0,
		      "%s", vmheap_graph_error(g));
	return g;
}

/* The row of label `label`, or NULL. */
static const struct vmheap_suspect *row_of(const struct vmheap_suspects *s,
					   const char *label)
{
	for (size_t x = 0; x < s->objects.nnames; x++)
		if (!strcmp(s->objects.names[s->rows[x].name], label))
			return &s->rows[x];
	return NULL;
}

static const char *label(const struct vmheap_suspects *s, size_t name)
{
	return s->objects.names[name];
}

static struct vmheap_suspects *rank_requests(size_t o_first, size_t o_req,
					     size_t o_lone, size_t n_first,
					     size_t n_req, size_t n_lone,
					     size_t top, vmheap_graph **old_g,
					     vmheap_graph **new_g)
{
	static struct heap h;
	struct vmheap_suspects_options opt = VMHEAP_SUSPECTS_OPTIONS_INIT;
	struct vmheap_suspects *s = NULL;

	request_heap(&h, o_first, o_req, o_lone, 0x500000);
	*old_g = request_graph(&h, "r_old.vmheap");
	request_heap(&h, n_first, n_req, n_lone, 0x600000);
	*new_g = request_graph(&h, "r_new.vmheap");
	opt.top = top;
	ck_assert_msg(vmheap_suspects_rank(*old_g, *new_g, &opt, &s) == 0,
		      "%s", vmheap_graph_error(*new_g));
	ck_assert_ptr_nonnull(s);
	return s;
}

/*
 * 100 more LeakedRequests under the global, and the 50 Strings of the vm
 * root's Hash replaced: 850 new objects, 150 owners (100 requests, 50
 * Strings); the one suspect is LeakedRequest holding its 800 objects.
 */
START_TEST(composite_leak_is_its_owner)
{
	vmheap_graph *old_g, *new_g;
	struct vmheap_suspects *s =
	    rank_requests(0, 20, 0, 0, 120, 0, 0, &old_g, &new_g);

	ck_assert_uint_eq(s->new_objects, 850);
	ck_assert_uint_eq(s->new_bytes, 100 * REQUEST_BYTES + 50 * 40);
	ck_assert_uint_eq(s->unreachable, 0);
	ck_assert_uint_eq(s->owners, 150);
	ck_assert_uint_eq(s->owner_classes, 2);
	ck_assert_uint_eq(s->threshold, 1024);
	ck_assert_uint_eq(s->nrows, 1);
	ck_assert_uint_eq(s->shown, 1);
	const struct vmheap_suspect *r = &s->rows[0];
	ck_assert_str_eq(label(s, r->name), "LeakedRequest");
	ck_assert_uint_eq(r->owners, 100);
	ck_assert_int_eq(r->growth, 100);
	ck_assert_uint_eq(r->held_objects, 800);
	ck_assert_uint_eq(r->held_bytes, 100 * REQUEST_BYTES);
	ck_assert_uint_eq(r->ranked_bytes, 100 * REQUEST_BYTES);
	ck_assert_uint_eq(r->held_classes, 3);
	ck_assert_uint_eq(r->held_count, 3);
	ck_assert_str_eq(label(s, r->held[0].name), "String");
	ck_assert_uint_eq(r->held[0].count, 400);
	ck_assert_uint_eq(r->held[0].bytes, 16000);
	ck_assert_str_eq(label(s, r->held[1].name), "Hash");
	ck_assert_uint_eq(r->held[1].count, 200);
	ck_assert_str_eq(label(s, r->held[2].name), "Time");
	ck_assert_uint_eq(r->held[2].count, 100);
	/* one path shape, global_tbl > Array > LeakedRequest */
	ck_assert_ptr_nonnull(r->paths);
	ck_assert_uint_eq(r->paths->group_count, 1);
	ck_assert_uint_eq(r->paths->groups[0].count, 100);
	ck_assert_uint_eq(r->paths->groups[0].length, 2);
	ck_assert_uint_eq(r->paths->groups[0].classes[0], C_ARRAY);
	ck_assert_uint_eq(r->paths->groups[0].classes[1], C_REQUEST);
	/* the churned Strings own themselves, with no growth: not ranked */
	const struct vmheap_suspect *str = row_of(s, "String");
	ck_assert_uint_eq(str->owners, 50);
	ck_assert_int_eq(str->growth, 400);
	ck_assert_uint_eq(str->held_bytes, 2000);
	ck_assert_uint_eq(str->ranked_bytes, 0); /* its growth is inside */
	ck_assert_ptr_null(str->paths);		 /* not shown */
	vmheap_suspects_free(s);
	vmheap_graph_free(old_g);
	vmheap_graph_free(new_g);
}
END_TEST

/* 200 lone Strings under the global, 50 more replaced: String holds
 * 250 x 40 bytes, ranked by the growth's share 200/250. */
START_TEST(lone_strings_are_ranked_by_the_growth_share)
{
	vmheap_graph *old_g, *new_g;
	struct vmheap_suspects *s =
	    rank_requests(0, 0, 10, 0, 0, 210, 0, &old_g, &new_g);

	ck_assert_uint_eq(s->nrows, 1);
	ck_assert_str_eq(label(s, s->rows[0].name), "String");
	ck_assert_uint_eq(s->rows[0].owners, 250);
	ck_assert_int_eq(s->rows[0].growth, 200);
	ck_assert_uint_eq(s->rows[0].held_bytes, 10000);
	ck_assert_uint_eq(s->rows[0].ranked_bytes, 8000);
	ck_assert_uint_eq(s->rows[0].held_classes, 0);
	ck_assert_uint_eq(s->rows[0].paths->group_count, 2);
	ck_assert_uint_eq(s->rows[0].paths->groups[0].count, 200);
	vmheap_suspects_free(s);
	vmheap_graph_free(old_g);
	vmheap_graph_free(new_g);
}
END_TEST

/* Both leaks: requests first, then Strings; top 1 fills only the first. */
START_TEST(two_leaks_and_top)
{
	vmheap_graph *old_g, *new_g;
	struct vmheap_suspects *s =
	    rank_requests(0, 20, 10, 0, 120, 210, 1, &old_g, &new_g);

	ck_assert_uint_eq(s->nrows, 2);
	ck_assert_uint_eq(s->shown, 1);
	ck_assert_str_eq(label(s, s->rows[0].name), "LeakedRequest");
	ck_assert_str_eq(label(s, s->rows[1].name), "String");
	ck_assert_int_eq(s->rows[1].growth, 600);
	ck_assert_uint_eq(s->rows[1].ranked_bytes, 8000);
	ck_assert_ptr_nonnull(s->rows[0].paths);
	ck_assert_ptr_null(s->rows[1].paths);
	ck_assert_uint_eq(s->rows[1].held_count, 0);
	vmheap_suspects_free(s);
	vmheap_graph_free(old_g);
	vmheap_graph_free(new_g);
}
END_TEST

/* Every request and String replaced: 450 new objects, no suspect. */
START_TEST(churn_alone_has_no_suspect)
{
	vmheap_graph *old_g, *new_g;
	struct vmheap_suspects *s =
	    rank_requests(0, 50, 0, 50, 50, 0, 0, &old_g, &new_g);

	ck_assert_uint_eq(s->new_objects, 450);
	ck_assert_uint_eq(s->owners, 100);
	ck_assert_uint_eq(s->nrows, 0);
	ck_assert_uint_eq(s->shown, 0);
	for (size_t x = 0; x < s->objects.nnames; x++)
		ck_assert_uint_lt(s->rows[x].ranked_bytes, s->threshold);
	vmheap_suspects_free(s);
	vmheap_graph_free(old_g);
	vmheap_graph_free(new_g);
	vmheap_suspects_free(NULL);
	vmheap_new_objects_release(NULL);
}
END_TEST

/* ------------------------------------------------------------ marking */

/* An id kept with its class is old; one kept with a class of another
 * label is new; one whose class id changed to another id of the same
 * label is old; a new id is new. */
START_TEST(new_objects_follow_the_identity_rule)
{
	static struct heap o, n;
	struct vmheap_new_objects nw;

	memset(&o, 0, sizeof(o));
	obj(&o, 0x10, C_STRING, 40);
	obj(&o, 0x20, C_STRING, 40);
	obj(&o, 0x30, C_STRING, 40);
	root(&o, "vm", 0x10);
	memset(&n, 0, sizeof(n));
	obj(&n, 0x10, C_STRING, 40);  /* same */
	obj(&n, 0x20, C_HASH, 160);   /* another label: new */
	obj(&n, 0x30, C_STRING2, 40); /* same label "String": old */
	obj(&n, 0x40, C_TIME, 56);    /* new id */
	root(&n, "vm", 0x10);
	vmheap_graph *og = graph_of(&o, "m_old.vmheap");
	vmheap_graph *ng = graph_of(&n, "m_new.vmheap");
	ck_assert_int_eq(vmheap_new_objects_mark(og, ng, &nw), 0);
	/* the labels of NEW's class table, sorted, each once */
	ck_assert_uint_eq(nw.nnames, 6);
	for (size_t x = 1; x < nw.nnames; x++)
		ck_assert_int_lt(strcmp(nw.names[x - 1], nw.names[x]), 0);
	ck_assert_uint_eq(nw.mark[0], 0);
	ck_assert_str_eq(nw.names[nw.mark[1] - 1], "Hash");
	ck_assert_uint_eq(nw.mark[2], 0);
	ck_assert_str_eq(nw.names[nw.mark[3] - 1], "Time");
	vmheap_new_objects_release(&nw);
	ck_assert_ptr_null(nw.names);
	vmheap_new_objects_release(&nw); /* twice is harmless */
	vmheap_graph_free(og);
	vmheap_graph_free(ng);
}
END_TEST

/* ------------------------------------------------------------ random */

static uint64_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rnd_state >> 33) % n;
}

/* Reachable from the roots of h without passing through object `cut`
 * (SIZE_MAX: none): reach[i]. */
static void reach_without(const struct heap *h, size_t cut,
			  unsigned char *reach)
{
	size_t queue[MAXN], head = 0, tail = 0;

	memset(reach, 0, h->n);
	for (size_t r = 0; r < h->nroots; r++)
		for (size_t i = 0; i < h->n; i++)
			if (h->objs[i].id == h->roots[r].object && i != cut &&
			    !reach[i]) {
				reach[i] = 1;
				queue[tail++] = i;
			}
	while (head < tail) {
		const struct tobj *o = &h->objs[queue[head++]];
		for (size_t k = 0; k < o->nrefs; k++)
			for (size_t j = 0; j < h->n; j++)
				if (h->objs[j].id == o->many[k] && j != cut &&
				    !reach[j]) {
					reach[j] = 1;
					queue[tail++] = j;
				}
	}
}

static const char *label_of(uint64_t cls)
{
	for (size_t k = 0; k < sizeof(classes) / sizeof(*classes); k++)
		if (classes[k].id == cls)
			return classes[k].name;
	return NULL;
}

/* A random heap of n objects: ids 1..n*2 drawn without repeats (so that
 * OLD and NEW share some), classes of the table, 0 to 3 references each
 * (cycles and self-references included), 1 to 3 roots. */
static void random_heap(struct heap *h, size_t n, const uint64_t *ids)
{
	static const uint64_t cls[] = {C_OBJECT, C_ARRAY, C_HASH,
				       C_STRING, C_TIME,  C_STRING2};

	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < n; i++)
		obj(h, ids[i], cls[rnd(6)], 8 * (1 + rnd(20)));
	for (size_t i = 0; i < n; i++) {
		size_t k = rnd(4);
		for (size_t j = 0; j < k; j++)
			ref(h, i, ids[rnd((uint32_t)n)]);
		h->objs[i].many = h->refs[i];
	}
	size_t nr = 1 + rnd(3);
	for (size_t r = 0; r < nr; r++)
		root(h, r ? "global_tbl" : "vm", ids[rnd((uint32_t)n)]);
}

/* The brute force of one pair, compared with vmheap_suspects_rank(). */
static void check_random_pair(unsigned seed)
{
	static struct heap o, n;
	static unsigned char reach[MAXN], without[MAXN][MAXN];
	static uint64_t ids[2 * MAXN];
	static size_t owner[MAXN];
	size_t nn = 40 + seed % 60, no = 30 + seed % 50;

	rnd_state = seed;
	for (size_t i = 0; i < 2 * MAXN; i++)
		ids[i] = 0x1000 + 16 * i;
	for (size_t i = 0; i < 200; i++) { /* shuffle the first 200 */
		size_t j = rnd(200);
		uint64_t t = ids[i];
		ids[i] = ids[j];
		ids[j] = t;
	}
	random_heap(&o, no, ids);
	random_heap(&n, nn, ids + 20); /* shares ids[20..no) with OLD */

	/* new: OLD has no object of its id, or one of another label */
	unsigned char is_new[MAXN];
	for (size_t i = 0; i < n.n; i++) {
		is_new[i] = 1;
		for (size_t j = 0; j < o.n; j++)
			if (o.objs[j].id == n.objs[i].id)
				is_new[i] = strcmp(label_of(o.objs[j].cls),
						   label_of(n.objs[i].cls)) != 0;
	}
	reach_without(&n, SIZE_MAX, reach);
	for (size_t d = 0; d < n.n; d++)
		reach_without(&n, d, without[d]);
	/* d dominates x: x reachable, and not without d (d == x too) */
#define DOM(d, x) (reach[x] && !without[d][x])
	for (size_t x = 0; x < n.n; x++) {
		size_t best = SIZE_MAX, best_doms = SIZE_MAX;
		if (!reach[x] || !is_new[x])
			continue;
		for (size_t d = 0; d < n.n; d++) {
			if (!is_new[d] || !DOM(d, x))
				continue;
			size_t doms = 0; /* how many objects dominate d */
			for (size_t e = 0; e < n.n; e++)
				doms += DOM(e, d);
			if (doms < best_doms) {
				best = d;
				best_doms = doms;
			}
		}
		owner[x] = best;
	}

	vmheap_graph *og = graph_of(&o, "x_old.vmheap");
	vmheap_graph *ng = graph_of(&n, "x_new.vmheap");
	struct vmheap_suspects *s = NULL;
	struct vmheap_suspects_options opt = {.top = 100};
	ck_assert_msg(vmheap_suspects_rank(og, ng, &opt, &s) == 0, "%s",
		      vmheap_graph_error(ng));

	uint64_t new_objects = 0, new_bytes = 0, unreachable = 0, owners = 0;
	for (size_t x = 0; x < n.n; x++) {
		if (!is_new[x])
			continue;
		if (!reach[x]) {
			unreachable++;
			continue;
		}
		new_objects++;
		new_bytes += n.objs[x].bytes;
		owners += owner[x] == x;
	}
	ck_assert_uint_eq(s->new_objects, new_objects);
	ck_assert_uint_eq(s->new_bytes, new_bytes);
	ck_assert_uint_eq(s->unreachable, unreachable);
	ck_assert_uint_eq(s->owners, owners);
	for (size_t k = 0; k < s->objects.nnames; k++) {
		const struct vmheap_suspect *r = &s->rows[k];
		const char *l = label(s, r->name);
		uint64_t w_owners = 0, w_objects = 0, w_bytes = 0;
		int64_t growth = 0;
		for (size_t x = 0; x < n.n; x++) {
			growth += !strcmp(label_of(n.objs[x].cls), l);
			if (!is_new[x] || !reach[x] ||
			    strcmp(label_of(n.objs[owner[x]].cls), l))
				continue;
			w_owners += owner[x] == x;
			w_objects++;
			w_bytes += n.objs[x].bytes;
		}
		for (size_t x = 0; x < o.n; x++)
			growth -= !strcmp(label_of(o.objs[x].cls), l);
		ck_assert_msg(r->owners == w_owners &&
				  r->held_objects == w_objects &&
				  r->held_bytes == w_bytes &&
				  r->growth == growth,
			      "seed %u %s: owners %" PRIu64 "/%" PRIu64
			      " objects %" PRIu64 "/%" PRIu64 " bytes %" PRIu64
			      "/%" PRIu64 " growth %" PRId64 "/%" PRId64,
			      seed, l, r->owners, w_owners, r->held_objects,
			      w_objects, r->held_bytes, w_bytes, r->growth,
			      growth);
		ck_assert_uint_le(r->ranked_bytes, r->held_bytes);
		if (k)
			ck_assert_uint_le(r->ranked_bytes,
					  s->rows[k - 1].ranked_bytes);
		if (k < s->nrows)
			ck_assert_uint_ge(r->ranked_bytes, s->threshold);
		else
			ck_assert(r->ranked_bytes < s->threshold || !r->owners);
		/* the paths of a shown suspect count its reachable owners */
		if (k < s->shown) {
			uint64_t c = 0;
			for (size_t g = 0; g < r->paths->group_count; g++)
				c += r->paths->groups[g].count;
			ck_assert_uint_eq(c, r->owners);
		}
	}
	vmheap_suspects_free(s);
	vmheap_graph_free(og);
	vmheap_graph_free(ng);
}

START_TEST(random_heaps_match_brute_force)
{
	for (unsigned seed = 1; seed <= 60; seed++)
		check_random_pair(seed);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("suspects");
	TCase *tc = spec_tcase(s, "requests", 60);

	tcase_add_test(tc, composite_leak_is_its_owner);
	tcase_add_test(tc, lone_strings_are_ranked_by_the_growth_share);
	tcase_add_test(tc, two_leaks_and_top);
	tcase_add_test(tc, churn_alone_has_no_suspect);
	tc = spec_tcase(s, "marking", 30);
	tcase_add_test(tc, new_objects_follow_the_identity_rule);
	tc = spec_tcase(s, "random", 120);
	tcase_add_test(tc, random_heaps_match_brute_force);
	return s;
}
