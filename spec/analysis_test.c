/*
 * analysis_test.c - Check suite for libvmheap-analysis: its hash table,
 * name table and object id table, the census of a dump, the census diff
 * and object identity matching.
 *
 * Dumps are written by the real writer (libvmheap) into files of a
 * scratch directory and read back through the library's public API; the
 * tables are tested through their internal headers.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmheap.h"
#include "vmheap_analysis.h"
#include "lib/vmheap_spec.h"
#include "analysis-internal.h"

/* ------------------------------------------------------------ helpers */

/* A path in the suite's scratch directory. */
static const char *scratch_path(const char *name)
{
	static char buf[4][PATH_MAX];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", spec_root(), name);
	return p;
}

struct aobj {
	uint64_t id, cls, bytes;
	uint64_t ref; /* 0: none */
};

/* A real writer on the new file scratch/name (*f, for
 * finish_scratch_dump), vm "testvm", pid 77, kinds object and string;
 * with allocation sites when `sites`. */
static vmheap_writer *open_scratch_dump(const char *name, int sites, FILE **f)
{
	static const char *const kinds[] = {"object", "string"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;

	*f = fopen(scratch_path(name), "wb");
	ck_assert_ptr_nonnull(*f);
	opt.vm_name = "testvm";
	opt.pid = 77;
	opt.kind_names = kinds;
	opt.kind_count = 2;
	opt.sites = sites;
	ck_assert_int_eq(vmheap_writer_open(&w, fileno(*f), &opt), 0);
	return w;
}

static void finish_scratch_dump(vmheap_writer *w, FILE *f)
{
	ck_assert_msg(vmheap_writer_finish(w) == 0, "%s",
		      vmheap_writer_error(w));
	vmheap_writer_free(w);
	fclose(f);
}

/*
 * Write a dump of `classes` (id i+1 is named names[i]) and objects to
 * scratch/name with the real writer; a root of kind "global" holds
 * `root` when it is not 0.  Returns the path.
 */
static const char *write_dump(const char *name, const char *const *names,
			      size_t nclasses, const struct aobj *objs,
			      size_t nobjs, uint64_t root)
{
	FILE *f;
	vmheap_writer *w = open_scratch_dump(name, 0, &f);

	for (size_t i = 0; i < nclasses; i++)
		ck_assert_int_eq(vmheap_writer_add_class(w, i + 1, names[i],
							 strlen(names[i]), 0,
							 0),
				 0);
	for (size_t i = 0; i < nobjs; i++)
		ck_assert_int_eq(
		    vmheap_writer_add_object(w, objs[i].id, objs[i].cls,
					     objs[i].bytes, objs[i].cls % 2,
					     &objs[i].ref, objs[i].ref ? 1 : 0),
		    0);
	if (root) {
		ck_assert_int_eq(vmheap_writer_add_string(w, 500, "global", 6),
				 0);
		ck_assert_int_eq(vmheap_writer_add_root(w, 500, root), 0);
	}
	finish_scratch_dump(w, f);
	return scratch_path(name);
}

/* The census of the dump at `path`, read on `threads` threads. */
static vmheap_census *
census_of(const char *path, enum vmheap_census_group group, unsigned threads)
{
	struct vmheap_scan_options opt = VMHEAP_SCAN_OPTIONS_INIT;
	vmheap_census *c;
	vmheap_reader *r;

	opt.threads = threads;
	ck_assert_int_eq(vmheap_reader_open_path(&r, path), 0);
	ck_assert_int_eq(vmheap_census_new(&c, group, threads), 0);
	ck_assert_msg(vmheap_census_read(c, r, &opt) == 0, "%s",
		      vmheap_census_error(c));
	vmheap_reader_free(r);
	return c;
}

/* The row of `name` in a finished census, or NULL. */
static const struct vmheap_census_row *row_named(vmheap_census *c,
						 const char *name)
{
	size_t n;
	struct vmheap_census_row *rows = vmheap_census_rows(c, &n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

/* ------------------------------------------------------------ tables */

/* The table the census and vmheap-diff count in: keys that differ only
 * in their second word or tag stay apart, through many growths. */
START_TEST(map_keeps_keys_apart_by_every_part_through_growth)
{
	struct vmheap_map m = VMHEAP_MAP_INIT;
	struct vmheap_map_slot *s;

	for (uint64_t k = 0; k < 20000; k++) {
		for (uint32_t tag = 0; tag < 2; tag++) {
			s = vmheap_map_upsert(&m, k % 100, k, tag);
			ck_assert_ptr_nonnull(s);
			ck_assert_uint_eq(s->a, 0);
			s->a = k + 1;
			s->b = tag;
		}
	}
	ck_assert_uint_eq(m.len, 40000);
	ck_assert_uint_ge(m.cap * 3, m.len * 4);
	for (uint64_t k = 0; k < 20000; k++) {
		s = vmheap_map_find(&m, k % 100, k, 1);
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(s->a, k + 1);
		ck_assert_uint_eq(s->b, 1);
		ck_assert_ptr_eq(vmheap_map_upsert(&m, k % 100, k, 1), s);
	}
	ck_assert_uint_eq(m.len, 40000);
	ck_assert_ptr_null(vmheap_map_find(&m, 5, 6, 0));
	ck_assert_ptr_null(vmheap_map_find(&m, 0, 0, 2));
	vmheap_map_release(&m);
	ck_assert_uint_eq(m.cap, 0);
	ck_assert_ptr_null(vmheap_map_find(&m, 0, 0, 0));
}
END_TEST

/* Names are interned once each, keep the index they were given and are
 * found again by content, through growth. */
START_TEST(name_table_interns_each_name_once_through_growth)
{
	struct vmheap_namemap m = {0};
	const char *stored, *again;
	char name[32];
	int added;

	for (size_t i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "Class%zu", i);
		ck_assert_uint_eq(
		    vmheap_namemap_intern(&m, name, i, &added, &stored), i);
		ck_assert_int_eq(added, 1);
		ck_assert_str_eq(stored, name);
		ck_assert_ptr_ne(stored, name);
	}
	ck_assert_uint_eq(m.len, 5000);
	for (size_t i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "Class%zu", i);
		ck_assert_uint_eq(
		    vmheap_namemap_intern(&m, name, 99999, &added, &again), i);
		ck_assert_int_eq(added, 0);
		ck_assert_str_eq(again, name);
	}
	ck_assert_uint_eq(vmheap_namemap_intern(&m, "", 5000, &added, NULL),
			  5000);
	ck_assert_int_eq(added, 1);
	ck_assert_uint_eq(m.len, 5001);
	vmheap_namemap_release(&m);
	ck_assert_uint_eq(m.len, 0);
}
END_TEST

/* Object ids, 0 among them, map to values; a put overwrites; a reserved
 * table does not move; release empties it. */
START_TEST(id_table_maps_every_id_including_zero_through_growth)
{
	struct vmheap_idmap m = {0};
	uint64_t v;

	ck_assert_int_eq(vmheap_idmap_get(&m, 40, &v), 0);
	ck_assert_int_eq(vmheap_idmap_get(&m, 0, &v), 0);
	for (uint64_t i = 0; i < 200000; i++)
		ck_assert_int_eq(vmheap_idmap_put(&m, i * 40, i + 7), 0);
	ck_assert_uint_eq(m.len, 199999); /* id 0 is kept aside */
	ck_assert_uint_ge(m.cap * 3, m.len * 4);
	for (uint64_t i = 0; i < 200000; i++) {
		ck_assert_int_eq(vmheap_idmap_get(&m, i * 40, &v), 1);
		ck_assert_uint_eq(v, i + 7);
	}
	ck_assert_int_eq(vmheap_idmap_get(&m, 41, &v), 0);
	ck_assert_int_eq(vmheap_idmap_put(&m, 80, 1), 0);
	ck_assert_int_eq(vmheap_idmap_get(&m, 80, &v), 1);
	ck_assert_uint_eq(v, 1);
	ck_assert_uint_eq(m.len, 199999);
	vmheap_idmap_release(&m);
	ck_assert_int_eq(vmheap_idmap_get(&m, 80, &v), 0);
	ck_assert_int_eq(vmheap_idmap_get(&m, 0, &v), 0);

	ck_assert_int_eq(vmheap_idmap_reserve(&m, 10000), 0);
	struct vmheap_idslot *slots = m.slots;
	for (uint64_t i = 1; i <= 10000; i++)
		ck_assert_int_eq(vmheap_idmap_put(&m, i, i), 0);
	ck_assert_ptr_eq(m.slots, slots);
	vmheap_idmap_release(&m);
}
END_TEST

/* ------------------------------------------------------------ census */

static const char *const census_names[] = {"String", "Array", "String", ""};
static const struct aobj census_objs[] = {
    {0x1000, 1, 40, 0},	     {0x1028, 1, 40, 0}, {0x1050, 3, 24, 0x1000},
    {0x1078, 2, 80, 0x1028}, {0x10a0, 4, 16, 0}, {0x10c8, 9, 8, 0},
    {0x10f0, 70000, 8, 0},
};

/* Class ids that share a name are one row; a class without a record, an
 * empty name and an id past the direct table read as documented; the
 * same on 1 and 3 threads. */
START_TEST(census_counts_per_class_name_with_placeholders)
{
	const char *path =
	    write_dump("census.vmheap", census_names, 4, census_objs, 7, 0);

	for (unsigned threads = 1; threads <= 3; threads += 2) {
		vmheap_census *c = census_of(path, VMHEAP_GROUP_CLASS, threads);
		size_t n;
		vmheap_census_rows(c, &n);
		ck_assert_uint_eq(n, 5);
		ck_assert_uint_eq(row_named(c, "String")->count, 3);
		ck_assert_uint_eq(row_named(c, "String")->bytes, 104);
		ck_assert_uint_eq(row_named(c, "Array")->count, 1);
		ck_assert_uint_eq(row_named(c, "<anonymous class>")->bytes, 16);
		ck_assert_uint_eq(row_named(c, "<unknown class 0x9>")->count,
				  1);
		ck_assert_uint_eq(
		    row_named(c, "<unknown class 0x11170>")->count, 1);
		ck_assert_str_eq(vmheap_census_class_name(c, 3), "String");
		const struct vmheap_totals *t = vmheap_census_totals(c);
		ck_assert_uint_eq(t->objects, 7);
		ck_assert_uint_eq(t->references, 2);
		ck_assert_uint_eq(t->classes, 4);
		vmheap_census_free(c);
	}

	vmheap_census *k = census_of(path, VMHEAP_GROUP_KIND, 1);
	ck_assert_uint_eq(row_named(k, "object")->count, 3); /* even ids */
	ck_assert_uint_eq(row_named(k, "string")->count, 4);
	size_t n;
	struct vmheap_census_row *rows = vmheap_census_rows(k, &n);
	vmheap_census_rows_sort(rows, n, VMHEAP_SORT_NAME);
	ck_assert_str_eq(rows[0].name, "object");
	vmheap_census_free(k);
}
END_TEST

/* A census made for one thread refuses a scan on two, with a message. */
START_TEST(census_refuses_more_threads_than_it_was_made_for)
{
	const char *path =
	    write_dump("threads.vmheap", census_names, 4, census_objs, 7, 0);
	struct vmheap_scan_options opt = VMHEAP_SCAN_OPTIONS_INIT;
	vmheap_census *c;
	vmheap_reader *r;

	opt.threads = 2;
	ck_assert_int_eq(vmheap_reader_open_path(&r, path), 0);
	ck_assert_int_eq(vmheap_census_new(&c, VMHEAP_GROUP_CLASS, 1), 0);
	ck_assert_int_eq(vmheap_census_read(c, r, &opt), VMHEAP_EINVAL);
	ck_assert_str_eq(vmheap_census_error(c),
			 "census made for 1 threads, scan asks for 2");
	vmheap_census_free(c);
	vmheap_reader_free(r);
}
END_TEST

/* The diff matches rows by name: grown, new and gone classes each get a
 * delta, unchanged ones none; sorted by count delta, growth first. */
START_TEST(census_diff_matches_classes_by_name)
{
	static const char *const old_names[] = {"A", "B", "Gone"};
	static const char *const new_names[] = {"B", "A", "New"};
	static const struct aobj old_objs[] = {
	    {0x10, 1, 8, 0}, {0x20, 2, 8, 0}, {0x30, 3, 8, 0}};
	static const struct aobj new_objs[] = {
	    {0x10, 2, 8, 0}, {0x20, 1, 8, 0}, {0x28, 1, 8, 0}, {0x40, 3, 5, 0}};
	vmheap_census *o =
	    census_of(write_dump("d-old.vmheap", old_names, 3, old_objs, 3, 0),
		      VMHEAP_GROUP_CLASS, 1);
	vmheap_census *n =
	    census_of(write_dump("d-new.vmheap", new_names, 3, new_objs, 4, 0),
		      VMHEAP_GROUP_CLASS, 1);
	struct vmheap_census_delta *d;
	size_t nd;

	ck_assert_int_eq(vmheap_census_diff(o, n, &d, &nd), 0);
	ck_assert_uint_eq(nd, 3);
	vmheap_census_deltas_sort(d, nd, VMHEAP_SORT_COUNT);
	ck_assert_str_eq(d[0].name, "B");
	ck_assert_int_eq(d[0].count_delta, 1);
	ck_assert_str_eq(d[1].name, "New");
	ck_assert_int_eq(d[1].bytes_delta, 5);
	ck_assert_str_eq(d[2].name, "Gone");
	ck_assert_int_eq(d[2].count_delta, -1);
	ck_assert_uint_eq(d[2].count_old, 1);
	ck_assert_uint_eq(d[2].count_new, 0);
	free(d);
	vmheap_census_free(o);
	vmheap_census_free(n);
}
END_TEST

/* ------------------------------------------------------------ sites */

/* An object of class 1 ("A") or 2 ("B") at a site id (0: none). */
struct site_obj {
	uint64_t id, cls, bytes, site;
};

/* A dump whose site 1 is a.rb:3 in m and site 2 is b.rb:7 (no method),
 * or the other way round when `swapped`; classes 1 "A", 2 "B". */
static const char *write_site_dump(const char *name, int swapped,
				   const struct site_obj *objs, size_t n)
{
	FILE *f;
	vmheap_writer *w = open_scratch_dump(name, 1, &f);

	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "A", 1, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 2, "B", 1, 0, 0), 0);
	ck_assert_int_eq(
	    vmheap_writer_add_site(w, swapped ? 2 : 1, "a.rb", 4, 3, "m", 1),
	    0);
	ck_assert_int_eq(
	    vmheap_writer_add_site(w, swapped ? 1 : 2, "b.rb", 4, 7, "", 0),
	    0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(vmheap_writer_add_object_named(
				     w, objs[i].id, objs[i].cls, objs[i].bytes,
				     0, NULL, NULL, 0, objs[i].site),
				 0);
	finish_scratch_dump(w, f);
	return scratch_path(name);
}

/* The row of (name, site) in a census by site (site NULL: none). */
static const struct vmheap_census_row *
site_row(vmheap_census *c, const char *name, const char *site)
{
	size_t n;
	struct vmheap_census_row *rows = vmheap_census_rows(c, &n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name) &&
		    (site ? rows[i].site && !strcmp(rows[i].site, site)
			  : !rows[i].site))
			return &rows[i];
	return NULL;
}

/* A census by site counts (class, site) pairs, names sites by their
 * text ("file:line in method", "file:line"), and the diff matches rows
 * by that text, not by the dumps' site ids. */
START_TEST(census_by_site_counts_class_site_pairs_and_diff_matches_text)
{
	static const struct site_obj old_objs[] = {
	    {0x10, 1, 8, 1}, {0x18, 1, 8, 1}, {0x20, 1, 8, 2},
	    {0x28, 1, 8, 0}, {0x30, 2, 5, 1}, {0x38, 2, 5, 9}};
	/* the same sites under swapped ids: a.rb:3 is 2, b.rb:7 is 1 */
	static const struct site_obj new_objs[] = {
	    {0x10, 1, 8, 2}, {0x18, 1, 8, 2}, {0x20, 1, 8, 2},
	    {0x28, 1, 8, 0}, {0x30, 2, 5, 2}, {0x40, 2, 5, 1}};
	vmheap_census *o = census_of(
	    write_site_dump("s-old.vmheap", 0, old_objs, 6), VMHEAP_GROUP_SITE,
	    2);
	vmheap_census *nw = census_of(
	    write_site_dump("s-new.vmheap", 1, new_objs, 6), VMHEAP_GROUP_SITE,
	    1);
	const struct vmheap_census_row *r;
	struct vmheap_census_delta *d;
	size_t n;

	vmheap_census_rows(o, &n);
	ck_assert_uint_eq(n, 5);
	r = site_row(o, "A", "a.rb:3 in m");
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->count, 2);
	ck_assert_uint_eq(r->bytes, 16);
	ck_assert_uint_eq(site_row(o, "A", "b.rb:7")->count, 1);
	ck_assert_uint_eq(site_row(o, "A", NULL)->count, 1);
	ck_assert_uint_eq(site_row(o, "B", "a.rb:3 in m")->count, 1);
	ck_assert_uint_eq(site_row(o, "B", "<unknown site 9>")->count, 1);
	ck_assert_uint_eq(vmheap_census_totals(o)->sites, 2);

	ck_assert_int_eq(vmheap_census_diff(o, nw, &d, &n), 0);
	vmheap_census_deltas_sort(d, n, VMHEAP_SORT_COUNT);
	/* A at a.rb:3 +1 (new id 2 is a.rb:3), B at b.rb:7 +1 (new), B at
	 * the unknown site -1; A at b.rb:7 -1 (its object moved to a.rb:3);
	 * A without a site and B at a.rb:3 unchanged: no delta */
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(d[0].name, "A");
	ck_assert_str_eq(d[0].site, "a.rb:3 in m");
	ck_assert_int_eq(d[0].count_delta, 1);
	ck_assert_str_eq(d[1].name, "B");
	ck_assert_str_eq(d[1].site, "b.rb:7");
	ck_assert_int_eq(d[1].count_delta, 1);
	ck_assert_int_eq(d[2].count_delta, -1);
	ck_assert_int_eq(d[3].count_delta, -1);
	free(d);

	/* by class, the same dump has two rows */
	vmheap_census_free(o);
	o = census_of(scratch_path("s-old.vmheap"), VMHEAP_GROUP_CLASS, 1);
	ck_assert_uint_eq(row_named(o, "A")->count, 4);
	ck_assert_ptr_null(row_named(o, "A")->site);
	vmheap_census_free(o);
	vmheap_census_free(nw);
}
END_TEST

/* ------------------------------------------------------------ identity */

/* Open OLD and NEW for an identity match. */
static void open_both(const char *old_path, const char *new_path,
		      vmheap_reader **old_r, vmheap_reader **new_r)
{
	ck_assert_int_eq(vmheap_reader_open_path(old_r, old_path), 0);
	ck_assert_int_eq(vmheap_reader_open_path(new_r, new_path), 0);
}

/* Free what an identity match leaves. */
static void identity_done(struct vmheap_identity_result *res,
			  vmheap_reader *old_r, vmheap_reader *new_r)
{
	vmheap_identity_result_release(res);
	vmheap_reader_free(old_r);
	vmheap_reader_free(new_r);
}

struct hook_calls {
	int begin[2], end[2];
};

static void count_begin(void *arg, enum vmheap_identity_dump which,
			struct vmheap_scan_options *sopt)
{
	((struct hook_calls *)arg)->begin[which]++;
	ck_assert_ptr_null(sopt->progress);
}

static void count_end(void *arg, enum vmheap_identity_dump which)
{
	((struct hook_calls *)arg)->end[which]++;
}

/* New objects are those whose id is absent from OLD or holds another
 * class name there; their retainers are classes and roots of NEW.  The
 * caller's hooks run around each pass: OLD once, NEW three times. */
START_TEST(identity_finds_new_objects_and_who_retains_them)
{
	static const char *const old_names[] = {"Holder", "Msg", "Other"};
	static const char *const new_names[] = {"Msg", "Holder", "Other"};
	static const struct aobj old_objs[] = {
	    {0x100, 1, 40, 0}, {0x200, 2, 10, 0}, {0x300, 3, 10, 0}};
	/* NEW: Holder 0x100 (id 2 now) keeps 0x200 and a new Msg 0x400;
	 * 0x300 is a Msg now (it was an Other): new by class name. */
	static const struct aobj new_objs[] = {{0x100, 2, 40, 0x400},
					       {0x200, 1, 10, 0},
					       {0x300, 1, 10, 0},
					       {0x400, 1, 12, 0x300},
					       {0x500, 3, 1, 0x200}};
	const char *old_path =
	    write_dump("i-old.vmheap", old_names, 3, old_objs, 3, 0);
	const char *new_path =
	    write_dump("i-new.vmheap", new_names, 3, new_objs, 5, 0x400);
	struct vmheap_identity_options o = VMHEAP_IDENTITY_OPTIONS_INIT;
	struct vmheap_identity_result res;
	struct hook_calls calls = {{0, 0}, {0, 0}};
	vmheap_reader *old_r, *new_r;
	char err[256] = "";

	memset(&res, 0, sizeof(res));
	o.threads = 2;
	o.retainer_classes = 5;
	o.scan_begin = count_begin;
	o.scan_end = count_end;
	o.arg = &calls;
	open_both(old_path, new_path, &old_r, &new_r);
	ck_assert_msg(vmheap_identity_diff(old_r, &new_r, new_path, &o, &res,
					   err, sizeof(err)) == 0,
		      "%s", err);
	/* reopened from the path for the retainers; still readable */
	ck_assert_ptr_nonnull(new_r);
	ck_assert_str_eq(vmheap_reader_name(new_r), new_path);
	ck_assert_str_eq(vmheap_reader_header(new_r)->vm_name, "testvm");
	ck_assert_int_eq(calls.begin[VMHEAP_IDENTITY_OLD], 1);
	ck_assert_int_eq(calls.end[VMHEAP_IDENTITY_OLD], 1);
	ck_assert_int_eq(calls.begin[VMHEAP_IDENTITY_NEW], 3);
	ck_assert_int_eq(calls.end[VMHEAP_IDENTITY_NEW], 3);

	ck_assert_uint_eq(res.nnews, 2);
	ck_assert_str_eq(res.news[0].name, "Msg"); /* 0x300, 0x400 */
	ck_assert_uint_eq(res.news[0].count, 2);
	ck_assert_uint_eq(res.news[0].bytes, 22);
	ck_assert_str_eq(res.news[1].name, "Other"); /* 0x500 */
	ck_assert_uint_eq(res.new_objects, 3);
	ck_assert_uint_eq(res.new_bytes, 23);
	ck_assert_ptr_nonnull(res.old_census);
	ck_assert_ptr_nonnull(res.new_census);

	ck_assert_uint_eq(res.nretained, 2);
	const struct vmheap_retained *msg = &res.retained[0];
	ck_assert_str_eq(msg->cls.name, "Msg");
	/* 0x400 from Holder and a root, 0x300 from Msg 0x400 */
	ck_assert_uint_eq(msg->nretainers, 3);
	for (size_t i = 0; i < msg->nretainers; i++) {
		ck_assert_uint_eq(msg->retainers[i].references, 1);
		ck_assert(!strcmp(msg->retainers[i].name, "Holder") ||
			  !strcmp(msg->retainers[i].name, "Msg") ||
			  !strcmp(msg->retainers[i].name, "<root global>"));
	}
	ck_assert_uint_eq(res.retained[1].nretainers, 0);

	vmheap_identity_result_release(&res);
	ck_assert_ptr_null(res.news);
	ck_assert_ptr_null(res.new_census);
	identity_done(&res, old_r, new_r);
}
END_TEST

/* Without retainer classes NEW is read once and its reader kept. */
START_TEST(identity_without_retainers_reads_each_dump_once)
{
	static const char *const names[] = {"A"};
	static const struct aobj objs[] = {{0x10, 1, 8, 0}};
	const char *path = write_dump("once.vmheap", names, 1, objs, 1, 0);
	struct vmheap_identity_options o = VMHEAP_IDENTITY_OPTIONS_INIT;
	struct vmheap_identity_result res;
	vmheap_reader *old_r, *new_r, *first_new;
	char err[256];

	memset(&res, 0, sizeof(res));
	o.threads = 1;
	open_both(path, path, &old_r, &new_r);
	first_new = new_r;
	ck_assert_int_eq(vmheap_identity_diff(old_r, &new_r, NULL, &o, &res,
					      err, sizeof(err)),
			 0);
	ck_assert_ptr_eq(new_r, first_new);
	ck_assert_uint_eq(res.nnews, 0);
	ck_assert_uint_eq(res.nretained, 0);
	identity_done(&res, old_r, new_r);
}
END_TEST

/* A damaged NEW fails the match with the reader's message. */
START_TEST(identity_reports_a_truncated_dump)
{
	static const char *const names[] = {"A"};
	static const struct aobj objs[] = {{0x10, 1, 8, 0}};
	const char *path = write_dump("whole.vmheap", names, 1, objs, 1, 0);
	const char *cut = scratch_path("cut.vmheap");
	struct vmheap_identity_options o = VMHEAP_IDENTITY_OPTIONS_INIT;
	struct vmheap_identity_result res;
	vmheap_reader *old_r, *new_r;
	char err[256] = "";
	FILE *in = fopen(path, "rb"), *out = fopen(cut, "wb");
	char buf[4096];
	size_t len = fread(buf, 1, sizeof(buf), in);

	ck_assert_uint_gt(len, 40);
	fwrite(buf, 1, len - 20, out);
	fclose(in);
	fclose(out);
	memset(&res, 0, sizeof(res));
	open_both(path, cut, &old_r, &new_r);
	ck_assert_int_lt(vmheap_identity_diff(old_r, &new_r, cut, &o, &res, err,
					      sizeof(err)),
			 0);
	ck_assert_msg(strstr(err, "cut.vmheap") != NULL, "%s", err);
	identity_done(&res, old_r, new_r);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("analysis");
	TCase *tc;

	tc = spec_tcase(s, "tables", 60);
	tcase_add_test(tc, map_keeps_keys_apart_by_every_part_through_growth);
	tcase_add_test(tc, name_table_interns_each_name_once_through_growth);
	tcase_add_test(tc,
		       id_table_maps_every_id_including_zero_through_growth);

	tc = spec_tcase(s, "census", 60);
	tcase_add_test(tc, census_counts_per_class_name_with_placeholders);
	tcase_add_test(tc, census_refuses_more_threads_than_it_was_made_for);
	tcase_add_test(tc, census_diff_matches_classes_by_name);
	tcase_add_test(
	    tc, census_by_site_counts_class_site_pairs_and_diff_matches_text);

	tc = spec_tcase(s, "identity", 60);
	tcase_add_test(tc, identity_finds_new_objects_and_who_retains_them);
	tcase_add_test(tc, identity_without_retainers_reads_each_dump_once);
	tcase_add_test(tc, identity_reports_a_truncated_dump);
	return s;
}
