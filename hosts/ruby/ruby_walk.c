/*
 * ruby_walk.c - walk_heap for MRI: every object, class and root.
 *
 * The walk runs on a Ruby thread holding the GVL (in-process dumps), or on
 * that same thread in a forked child (fork dumps).  It must not allocate a
 * Ruby object: an allocation could start a GC, move the heap under the
 * walk, or run finalizers.  So:
 *
 *  - the GC is disabled for the walk (rb_gc_disable; restored after);
 *  - objects come from rb_objspace_each_objects over every heap slot, free
 *    slots (flags 0 / T_NONE), zombies and moved slots are skipped;
 *  - references come from rb_objspace_reachable_objects_from and roots
 *    from rb_objspace_reachable_objects_from_root, both of which call a C
 *    callback per object and allocate nothing;
 *  - class names come from rb_class_path_cached, which returns the name
 *    string the class already holds (no copy, unlike rb_class_name which
 *    dups it); a class without one is anonymous and is named in C as Ruby
 *    would print it, "#<Class:0x...>".  rb_class_name itself is never
 *    called during the walk because it allocates;
 *  - the class of an object is rb_obj_class (singleton classes and
 *    included-module iclasses resolve to the real class).  Internal slots
 *    without a Ruby class get a name in angle brackets by type: imemos by
 *    their imemo type, "<imemo:iseq>", "<imemo:ment>", ... (ruby_imemo.c),
 *    "<node>", "<iclass>", and hidden objects (klass 0, e.g. the VM's own
 *    strings and arrays) "<hidden-string>", "<hidden-array>", ...;
 *  - class ids are small dense integers from a C hash table, and a class
 *    record (after its superclass's) is written before its first object;
 *    its flags say anonymous (0x1) or internal (0x2, no Ruby class).
 *
 * Object kinds are Ruby's T_ type values; ruby_kind_names names them.
 * Each object carries its allocation site when it has one
 * (ruby_dump_sites.c: an iseq's own location, or the tracer's record).
 * Names on references and roots come from ruby_names.c (unless
 * config.dump.names is false).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ruby-internal.h"

const char *const ruby_kind_names[] = {
    [0x00] = "none",	    [0x01] = "object",	    [0x02] = "class",
    [0x03] = "module",	    [0x04] = "float",	    [0x05] = "string",
    [0x06] = "regexp",	    [0x07] = "array",	    [0x08] = "hash",
    [0x09] = "struct",	    [0x0a] = "bignum",	    [0x0b] = "file",
    [0x0c] = "data",	    [0x0d] = "match",	    [0x0e] = "complex",
    [0x0f] = "rational",    [0x10] = "unused-0x10", [0x11] = "nil",
    [0x12] = "true",	    [0x13] = "false",	    [0x14] = "symbol",
    [0x15] = "fixnum",	    [0x16] = "undef",	    [0x17] = "unused-0x17",
    [0x18] = "unused-0x18", [0x19] = "unused-0x19", [0x1a] = "imemo",
    [0x1b] = "node",	    [0x1c] = "iclass",	    [0x1d] = "zombie",
    [0x1e] = "moved",
};
const size_t ruby_kind_count =
    sizeof(ruby_kind_names) / sizeof(ruby_kind_names[0]);

/* Class record flags written by the Ruby host (FORMAT.md: VM-specific). */
#define RUBY_CLASS_ANONYMOUS 0x1u /* no name: "#<Class:0x...>" made here */
#define RUBY_CLASS_INTERNAL 0x2u  /* "<imemo:iseq>" etc.: no Ruby class */

#define MAX_CATEGORIES 64
/* Pseudo-class keys: far below any heap address, never 0. */
#define PSEUDO_KEY(type, hidden) (0x1000u | ((hidden) ? 0x100u : 0) | (type))
#define IMEMO_KEY(imemo_type) (0x2000u | (imemo_type))
#define LABEL_KEY(n) (0x3000u | (n))

struct walk {
	vmheap_writer *w;
	int rc;
	struct ruby_class_table classes;
	uint64_t *refs;
	size_t nrefs, refs_cap;
	int refs_failed;
	/* class_id(): a new class and its superclasses not yet written,
	 * subclass first; grown on demand, so inheritance has no depth
	 * limit. */
	VALUE *chain;
	size_t chain_cap;
	struct ruby_dump_sites sites; /* ruby_dump_sites.c */
	const char *category[MAX_CATEGORIES];
	uint64_t category_id[MAX_CATEGORIES];
	size_t ncategories;
	struct ruby_names *names; /* NULL: config.dump.names false */
	struct ruby_vm_tables tables; /* the symbol table, ... */
};

static void fail(struct walk *wk, int rc)
{
	if (!wk->rc)
		wk->rc = rc;
}

/* ------------------------------------------------------------ roots */

static uint64_t category_string(struct walk *wk, const char *category)
{
	size_t i;
	int rc;

	for (i = 0; i < wk->ncategories; i++)
		if (wk->category[i] == category ||
		    strcmp(wk->category[i], category) == 0)
			return wk->category_id[i];
	if (wk->ncategories == MAX_CATEGORIES)
		category = "other";
	i = wk->ncategories < MAX_CATEGORIES ? wk->ncategories++
					     : MAX_CATEGORIES - 1;
	wk->category[i] = category;
	wk->category_id[i] = i + 1;
	rc = vmheap_writer_add_string(wk->w, i + 1, category, strlen(category));
	if (rc < 0)
		fail(wk, rc);
	return i + 1;
}

static void add_root(const char *category, VALUE obj, void *data)
{
	struct walk *wk = data;
	uint64_t kind, name;
	int rc;

	if (wk->rc)
		return;
	kind = category_string(wk, category ? category : "unknown");
	if (wk->rc)
		return;
	name = wk->names ? ruby_names_for_root(wk->names, category, obj) : 0;
	if (ruby_names_error(wk->names)) {
		fail(wk, ruby_names_error(wk->names));
		return;
	}
	rc = name ? vmheap_writer_add_root_named(wk->w, kind, (uint64_t)obj,
						 name)
		  : vmheap_writer_add_root(wk->w, kind, (uint64_t)obj);
	if (rc < 0)
		fail(wk, rc);
}

/* ------------------------------------------------------------ classes */

static uint32_t emit_class(struct walk *wk, uint64_t key, const char *name,
			   size_t len, uint64_t super_id, uint32_t flags,
			   VALUE self)
{
	uint32_t id = ruby_class_table_add(&wk->classes, key);
	int rc;

	if (!id) {
		fail(wk, VMHEAP_ENOMEM);
		return 0;
	}
	if (len > VMHEAP_MAX_STRING_BYTES)
		len = VMHEAP_MAX_STRING_BYTES;
	/* the class's own object: a name, so only with names on */
	rc = vmheap_writer_add_class_object(wk->w, id, name, len, super_id,
					    flags,
					    wk->names ? (uint64_t)self : 0);
	if (rc < 0) {
		fail(wk, rc);
		return 0;
	}
	return id;
}

/* The real superclass (skipping include/prepend iclasses), or 0. */
static VALUE real_superclass(VALUE klass)
{
	VALUE super;

	if (!RB_TYPE_P(klass, T_CLASS))
		return 0;
	super = rb_class_get_superclass(klass);
	while (super && !NIL_P(super) && RB_TYPE_P(super, T_ICLASS))
		super = rb_class_get_superclass(super);
	if (!super || NIL_P(super) || !RB_TYPE_P(super, T_CLASS))
		return 0;
	return super;
}

/*
 * The name of a class or module without a path of its own, as Ruby prints
 * it: "#<Class:0x...>", "#<Module:0x...>", and for a singleton class
 * "#<Class:Service>" or "#<Class:#<Service:0x...>>" (the object it is the
 * singleton class of, read from its "__attached__" ivar).
 */
static int anonymous_name(VALUE klass, char *buf, size_t size)
{
	static ID attached_id;
	VALUE of, path;

	if (RB_TYPE_P(klass, T_MODULE))
		return snprintf(buf, size, "#<Module:0x%016" PRIxPTR ">",
				(uintptr_t)klass);
	if (!RB_FL_TEST_RAW(klass, RUBY_FL_SINGLETON))
		return snprintf(buf, size, "#<Class:0x%016" PRIxPTR ">",
				(uintptr_t)klass);
	if (!attached_id)
		attached_id = rb_intern("__attached__");
	of = rb_attr_get(klass, attached_id);
	if (RB_SPECIAL_CONST_P(of))
		return snprintf(buf, size, "#<Class:0x%016" PRIxPTR ">",
				(uintptr_t)klass);
	if (RB_TYPE_P(of, T_CLASS) || RB_TYPE_P(of, T_MODULE)) {
		path = rb_class_path_cached(of);
		if (RB_TYPE_P(path, T_STRING))
			return snprintf(buf, size, "#<Class:%.*s>",
					(int)RSTRING_LEN(path),
					RSTRING_PTR(path));
		return snprintf(buf, size, "#<Class:#<%s:0x%016" PRIxPTR ">>",
				RB_TYPE_P(of, T_MODULE) ? "Module" : "Class",
				(uintptr_t)of);
	}
	path = rb_class_path_cached(rb_obj_class(of));
	if (RB_TYPE_P(path, T_STRING))
		return snprintf(buf, size, "#<Class:#<%.*s:0x%016" PRIxPTR ">>",
				(int)RSTRING_LEN(path), RSTRING_PTR(path),
				(uintptr_t)of);
	return snprintf(buf, size, "#<Class:0x%016" PRIxPTR ">",
			(uintptr_t)klass);
}

/* A class or module's record; it names klass as its own object. */
static uint32_t emit_ruby_class(struct walk *wk, VALUE klass, uint64_t super_id)
{
	VALUE path = rb_class_path_cached(klass);
	char anon[RUBY_NAME_MAX_BYTES];
	int len;

	if (RB_TYPE_P(path, T_STRING))
		return emit_class(wk, klass, RSTRING_PTR(path),
				  (size_t)RSTRING_LEN(path), super_id, 0,
				  klass);
	len = anonymous_name(klass, anon, sizeof(anon));
	if (len < 0)
		len = 0;
	if ((size_t)len >= sizeof(anon))
		len = (int)strlen(anon);
	return emit_class(wk, klass, anon, (size_t)len, super_id,
			  RUBY_CLASS_ANONYMOUS, klass);
}

/* Append k to wk->chain (n entries so far); -1 when out of memory. */
static int chain_push(struct walk *wk, size_t n, VALUE k)
{
	if (n == wk->chain_cap) {
		size_t cap = wk->chain_cap ? wk->chain_cap * 2 : 64;
		VALUE *chain = realloc(wk->chain, cap * sizeof(*chain));

		if (!chain)
			return -1;
		wk->chain = chain;
		wk->chain_cap = cap;
	}
	wk->chain[n] = k;
	return 0;
}

/*
 * The id of a real class, writing it (and its superclasses) if new.  The
 * superclasses not yet written are collected first (a loop, not a
 * recursion, however deep the inheritance) and written from the top
 * down, so that each class record names its superclass's id.
 */
static uint32_t class_id(struct walk *wk, VALUE klass)
{
	size_t n = 0;
	uint32_t id = ruby_class_table_get(&wk->classes, klass);
	VALUE k;

	if (id)
		return id;
	for (k = klass; k; k = real_superclass(k)) {
		if (ruby_class_table_get(&wk->classes, k))
			break;
		if (chain_push(wk, n++, k) < 0) {
			fail(wk, VMHEAP_ENOMEM);
			return 0;
		}
	}
	/* k is now known, or 0 (no superclass). */
	id = k ? ruby_class_table_get(&wk->classes, k) : 0;
	while (n-- > 0) {
		id = emit_ruby_class(wk, wk->chain[n], id);
		if (!id)
			return 0;
	}
	return id;
}

static uint32_t pseudo_class_id(struct walk *wk, int type, int hidden)
{
	uint64_t key = PSEUDO_KEY((unsigned)type, hidden);
	uint32_t id = ruby_class_table_get(&wk->classes, key);
	char name[64];
	int len;

	if (id)
		return id;
	len = snprintf(name, sizeof(name), hidden ? "<hidden-%s>" : "<%s>",
		       (size_t)type < ruby_kind_count ? ruby_kind_names[type]
						      : "unknown");
	return emit_class(wk, key, name, (size_t)len, 0, RUBY_CLASS_INTERNAL,
			  0);
}

/* "<symbol table>" or "<registered objects>": a VM-internal holder
 * (ruby_name_layout.c), one class per label (with names on). */
static uint32_t label_class_id(struct walk *wk, const char *label)
{
	uint64_t key = LABEL_KEY((uint64_t)(strcmp(label, "<symbol table>") == 0));
	uint32_t id = ruby_class_table_get(&wk->classes, key);

	if (id)
		return id;
	return emit_class(wk, key, label, strlen(label), 0,
			  RUBY_CLASS_INTERNAL, 0);
}

/* "<imemo:iseq>", ...: one class per imemo type (ruby_imemo.c). */
static uint32_t imemo_class_id(struct walk *wk, VALUE obj)
{
	int type = ruby_imemo_type(obj);
	uint64_t key = IMEMO_KEY((unsigned)type);
	uint32_t id = ruby_class_table_get(&wk->classes, key);
	char name[64];
	int len;

	if (id)
		return id;
	len = ruby_imemo_class_name(type, name, sizeof(name));
	if (len < 0 || (size_t)len >= sizeof(name))
		len = (int)strlen(name);
	return emit_class(wk, key, name, (size_t)len, 0, RUBY_CLASS_INTERNAL,
			  0);
}

static uint32_t object_class_id(struct walk *wk, VALUE obj, int type)
{
	VALUE klass;

	switch (type) {
	case T_IMEMO:
		return imemo_class_id(wk, obj);
	case T_NODE:
	case T_ICLASS:
		return pseudo_class_id(wk, type, 0);
	default:
		break;
	}
	if (!RBASIC_CLASS(obj)) {
		const char *label = ruby_vm_table_label(&wk->tables, obj);

		if (label)
			return label_class_id(wk, label);
		return pseudo_class_id(wk, type, 1);
	}
	klass = rb_obj_class(obj);
	if (!klass || NIL_P(klass) || !RB_TYPE_P(klass, T_CLASS))
		return pseudo_class_id(wk, type, 1);
	return class_id(wk, klass);
}

/* ------------------------------------------------------------ objects */

static void add_ref(VALUE ref, void *data)
{
	struct walk *wk = data;

	if (wk->nrefs == wk->refs_cap) {
		size_t cap = wk->refs_cap ? wk->refs_cap * 2 : 256;
		uint64_t *refs = realloc(wk->refs, cap * sizeof(*refs));

		if (!refs) {
			wk->refs_failed = 1;
			return;
		}
		wk->refs = refs;
		wk->refs_cap = cap;
	}
	wk->refs[wk->nrefs++] = (uint64_t)ref;
}

static int walk_page(void *start, void *end, size_t stride, void *data)
{
	struct walk *wk = data;
	uintptr_t p;

	for (p = (uintptr_t)start; p < (uintptr_t)end; p += stride) {
		VALUE obj = (VALUE)p;
		const int64_t *names = NULL;
		uint32_t cid;
		size_t bytes;
		uint64_t site;
		int type, rc;

		if (!RBASIC(obj)->flags)
			continue; /* a free slot */
		type = (int)RB_BUILTIN_TYPE(obj);
		if (type == T_NONE || type == T_ZOMBIE || type == T_MOVED)
			continue;
		cid = object_class_id(wk, obj, type);
		if (!cid)
			return 1;
		/* a class or module: its own record names this object */
		if ((type == T_CLASS || type == T_MODULE) && wk->names &&
		    !class_id(wk, obj))
			return 1;
		bytes = rb_obj_memsize_of(obj);
		wk->nrefs = 0;
		rb_objspace_reachable_objects_from(obj, add_ref, wk);
		if (wk->refs_failed) {
			fail(wk, VMHEAP_ENOMEM);
			return 1;
		}
		if (wk->names) {
			/* a Thread's references come from its stack */
			if (type == T_DATA && RBASIC_CLASS(obj) &&
			    rb_obj_class(obj) == rb_cThread)
				names = ruby_names_of_thread_stack(
				    wk->names, obj, wk->nrefs);
			else
				names = ruby_names_for_object(
				    wk->names, obj, type, wk->refs, wk->nrefs);
			if (ruby_names_error(wk->names)) {
				fail(wk, ruby_names_error(wk->names));
				return 1;
			}
		}
		rc = ruby_dump_site_of(&wk->sites, obj, type, &site);
		if (rc == 0)
			rc = vmheap_writer_add_object_named(
			    wk->w, (uint64_t)obj, cid, (uint64_t)bytes,
			    (uint32_t)type, wk->refs, names, wk->nrefs, site);
		if (rc < 0) {
			fail(wk, rc);
			return 1;
		}
	}
	return 0;
}

int ruby_walk_heap(vmheap_writer *w)
{
	struct walk wk;
	VALUE gc_was_disabled;

	memset(&wk, 0, sizeof(wk));
	wk.w = w;
	ruby_class_table_init(&wk.classes);
	ruby_dump_sites_init(&wk.sites, w);

	wk.rc = ruby_names_open(&wk.names, w, MAX_CATEGORIES + 1);
	if (!wk.rc && wk.names)
		wk.rc = ruby_vm_tables_open(&wk.tables);
	if (wk.rc) {
		ruby_names_close(wk.names);
		ruby_class_table_free(&wk.classes);
		ruby_dump_sites_free(&wk.sites);
		return wk.rc;
	}
	gc_was_disabled = rb_gc_disable();
	rb_objspace_reachable_objects_from_root(add_root, &wk);
	if (!wk.rc)
		rb_objspace_each_objects(walk_page, &wk);
	if (!RTEST(gc_was_disabled))
		rb_gc_enable();

	ruby_names_close(wk.names);
	ruby_vm_tables_close(&wk.tables);
	ruby_class_table_free(&wk.classes);
	ruby_dump_sites_free(&wk.sites);
	free(wk.refs);
	free(wk.chain);
	return wk.rc;
}
