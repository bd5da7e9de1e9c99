/*
 * ruby_names.c - names on the references and roots of a Ruby dump
 * (dump format 1.1: FORMAT.md, "Edge names").
 *
 * A name labels a reference that rb_objspace_reachable_objects_from
 * already reported; it never adds or removes one.  For each object the
 * names it can have are gathered from the VM as (target, name) pairs,
 * then given to the references whose target is that object, in order
 * (two references to one target take that target's names in turn).  A
 * reference that no pair matches has no name (0).
 *
 *   T_OBJECT, and any object with generic ivars   "@ivar"  (rb_ivar_foreach)
 *   T_CLASS / T_MODULE instance variables         "@ivar"  (the same)
 *   T_CLASS / T_MODULE constants                  "::NAME" (rb_mod_const_at,
 *                                                 rb_const_lookup)
 *   T_HASH values by key: Symbol [:sym], String ["k17"] (cut to 64 bytes
 *   with ...), Integer [42], in a Hash of at most RUBY_NAME_HASH_MAX
 *   entries; the reference to a key object itself "key"
 *   T_ARRAY elements                              index (negative-int form)
 *   T_STRUCT members                              ".name"
 *   an environment's locals (T_IMEMO env)         "local x of <main> (app.rb)"
 *   a Ractor's Thread objects                     "thread 2 \"worker\"",
 *                                                 "thread 3", "thread 1 main"
 *   roots: global_tbl (fork mode only)            "$name"
 *          machine_context (the walking thread)   "thread \"vmheap-agent\""
 *          a named class or module (vm, ...)      its path: "Object"
 *
 * None of this allocates a Ruby object or calls a Ruby method:
 * rb_ivar_foreach, rb_id2str and rb_sym2str read what exists, and so
 * does rb_hash_stlike_foreach (what the GC's marking uses, in the same
 * order; rb_hash_foreach would write the hash's iteration level into
 * every Hash, which in a fork child copies each page that holds one);
 * rb_mod_const_at builds a C st_table.  Global variables need
 * rb_f_global_variables (a new Array) and their getters (rb_gv_get):
 * ruby_names_prepare_child reads them in a forked dump child before its
 * GC, which frees that garbage, and keeps C copies; in-process dumps have
 * no "$name" roots.  Locals and Thread#name are read from MRI's private
 * structures (ruby_name_layout.c) rather than by calling a method, which
 * in the child would add a call cache to the heap being dumped.
 *
 * Each name text is one string record, written just before its first
 * use (ruby_name_strings.c); names of references take string ids from
 * the id ruby_names_open is given, names first used by roots from
 * RUBY_NAME_ROOT_IDS, so that the names objects use most stay small.
 *
 * The rb_const_entry_t layout below is MRI's constant.h (the same from
 * 2.3 to 3.3): flag, line, value, file.  Autoload constants, whose value
 * is not loaded, have no reference and so no name.
 */
#include "ruby-internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ruby/ractor.h>

struct ruby_const_entry {
	int flag;
	int line;
	VALUE value;
	VALUE file;
};

/* MRI exports these from libruby; declared only in its internal headers
 * (prototypes as in Ruby 3.1's variable.c and hash.c). */
struct ruby_const_entry *rb_const_lookup(VALUE klass, ID id);
int rb_hash_stlike_foreach(VALUE hash, st_foreach_callback_func *func,
			   st_data_t arg);

/* ------------------------------------------------------ the state */

struct name_pair {
	uint64_t target;
	int64_t name;
	uint32_t next; /* next pair with the same target, + 1; 0: none */
};

/* A key's name string id, by a dense index from a ruby_class_table. */
struct name_cache {
	struct ruby_class_table index;
	uint64_t *sid;
	size_t cap;
};

struct ruby_names {
	int rc;
	struct ruby_name_strings strings;
	/* the current object's (target, name) pairs */
	struct name_pair *pairs;
	size_t npairs, pairs_cap;
	/* match_pairs' fallback: a target's first unused pair (+ 1) */
	uint32_t *heads;
	size_t heads_cap;
	/* the names handed out */
	int64_t *names;
	size_t names_cap;
	/* name string ids already made: of IDs (ivars, constants) and of
	 * hash keys that are Symbols or Integers */
	struct name_cache ids, keys;
	uint64_t key_id; /* "key" */
	int hash_values; /* name this Hash's values by their keys */
	/* globals: "used" marks for roots */
	unsigned char *global_used;
	uint64_t current_thread_id;
	/* threads by number: the Ractor a root holds, and its Threads in
	 * the order it reports them (dense id = number), learnt once */
	VALUE ractor;
	int threads_known;
	struct ruby_class_table threads;
	struct ruby_ivar_layouts
	    ivars; /* T_OBJECT ivars (ruby_names_ivars.c) */
};

static void fail(struct ruby_names *n, int rc)
{
	if (!n->rc)
		n->rc = rc;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*p, c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/* ------------------------------------------------------ strings */

/* The string id of `text` (its record written the first time; a root's
 * name in the root range); 0 after a failure, recorded in n->rc. */
static uint64_t text_id(struct ruby_names *n, const char *text, size_t len,
			int root)
{
	uint64_t id = 0;
	int rc;

	if (n->rc)
		return 0;
	rc = ruby_name_strings_id(&n->strings, text, len, root, &id);
	if (rc < 0)
		fail(n, rc);
	return rc < 0 ? 0 : id;
}

static uint64_t string_id(struct ruby_names *n, const char *text, size_t len)
{
	return text_id(n, text, len, 0);
}

static uint64_t cstring_id(struct ruby_names *n, const char *text)
{
	return text_id(n, text, strlen(text), 0);
}

/* ------------------------------------------------------ pairs */

static void push_pair(struct ruby_names *n, VALUE target, int64_t name)
{
	if (RB_SPECIAL_CONST_P(target) || !name)
		return; /* not a heap object: no reference to name */
	if (grow((void **)&n->pairs, &n->pairs_cap, n->npairs + 1,
		 sizeof(*n->pairs)) < 0) {
		fail(n, VMHEAP_ENOMEM);
		return;
	}
	n->pairs[n->npairs].target = (uint64_t)target;
	n->pairs[n->npairs].name = name;
	n->pairs[n->npairs].next = 0;
	n->npairs++;
}

/*
 * Name the references by target: each target's pairs in the order they
 * were gathered, each used once.  Non-zero when one got a name.
 */
static int match_by_target(struct ruby_names *n, const uint64_t *refs,
			   size_t nrefs)
{
	struct ruby_class_table index;
	size_t i, j;
	int named = 0;

	ruby_class_table_init(&index);
	if (grow((void **)&n->heads, &n->heads_cap, n->npairs + 1,
		 sizeof(*n->heads)) < 0) {
		fail(n, VMHEAP_ENOMEM);
		return 0;
	}
	/* Chain each target's pairs: insert from the last. */
	for (j = n->npairs; j-- > 0;) {
		uint32_t d = ruby_class_table_get(&index, n->pairs[j].target);

		if (!d) {
			d = ruby_class_table_add(&index, n->pairs[j].target);
			if (!d) {
				fail(n, VMHEAP_ENOMEM);
				break;
			}
			n->heads[d] = 0;
		}
		n->pairs[j].next = n->heads[d];
		n->heads[d] = (uint32_t)(j + 1);
	}
	for (i = 0; i < nrefs && !n->rc; i++) {
		uint32_t d = ruby_class_table_get(&index, refs[i]);

		n->names[i] = 0;
		if (d && n->heads[d]) {
			struct name_pair *p = &n->pairs[n->heads[d] - 1];

			n->names[i] = p->name;
			n->heads[d] = p->next;
			named = 1;
		}
	}
	ruby_class_table_free(&index);
	return named;
}

/*
 * Give each reference the name of a pair with its target.  First in
 * order (the VM reports references in the order the pairs were gathered
 * for arrays, hashes and ivars): when that uses every pair, done.  Else
 * by a map from target to its pairs, each pair used once.
 */
static int match_pairs(struct ruby_names *n, const uint64_t *refs,
		       size_t nrefs)
{
	size_t i, j = 0;
	int named = 0;

	for (i = 0; i < nrefs; i++) {
		n->names[i] = 0;
		if (j < n->npairs && refs[i] == n->pairs[j].target) {
			n->names[i] = n->pairs[j++].name;
			named = 1;
		}
	}
	if (j == n->npairs)
		return named;
	return match_by_target(n, refs, nrefs);
}

/* The string id cached for key, or 0. */
static uint64_t cache_get(const struct name_cache *c, uint64_t key)
{
	uint32_t d = ruby_class_table_get(&c->index, key);

	return d ? c->sid[d] : 0;
}

static void cache_put(struct ruby_names *n, struct name_cache *c,
		      uint64_t key, uint64_t sid)
{
	uint32_t d = ruby_class_table_add(&c->index, key);

	if (!d || grow((void **)&c->sid, &c->cap, (size_t)d + 1,
		       sizeof(*c->sid)) < 0) {
		fail(n, VMHEAP_ENOMEM);
		return;
	}
	c->sid[d] = sid;
}

static void cache_free(struct name_cache *c)
{
	ruby_class_table_free(&c->index);
	free(c->sid);
}

/* The name of the value of hash key `key`: 0 for keys not named.  Symbol
 * and Integer keys are cached by VALUE; Strings go by their text. */
static int64_t key_name(struct ruby_names *n, VALUE key)
{
	char buf[RUBY_NAME_MAX_BYTES];
	int by_value = RB_FIXNUM_P(key) || RB_SYMBOL_P(key);
	uint64_t id = by_value ? cache_get(&n->keys, (uint64_t)key) : 0;
	size_t len;

	if (id)
		return (int64_t)id;
	len = ruby_name_key_text(key, buf);
	if (!len)
		return 0;
	id = string_id(n, buf, len);
	if (id && by_value)
		cache_put(n, &n->keys, (uint64_t)key, id);
	return (int64_t)id;
}

enum id_kind { ID_IVAR, ID_CONST, ID_FIELD };

/*
 * The name string id of ID `id`: "@name" for an ivar (as MRI spells it),
 * "::NAME" for a constant, ".name" for a Struct member; 0 when the ID has
 * no text.  Cached by ID and kind.
 */
static uint64_t id_name(struct ruby_names *n, ID id, enum id_kind kind)
{
	static const char *const prefix[] = {"", "::", "."};
	uint64_t key = ((uint64_t)id << 2) | (uint64_t)kind, sid;
	char buf[RUBY_NAME_MAX_BYTES];
	size_t len = 0;
	VALUE s;

	if ((sid = cache_get(&n->ids, key)) != 0)
		return sid;
	s = rb_id2str(id);
	if (!s || !RB_TYPE_P(s, T_STRING))
		return 0;
	ruby_name_put(buf, &len, prefix[kind], strlen(prefix[kind]));
	ruby_name_put(buf, &len, RSTRING_PTR(s), (size_t)RSTRING_LEN(s));
	sid = string_id(n, buf, len);
	if (sid)
		cache_put(n, &n->ids, key, sid);
	return sid;
}

/* ------------------------------------------------------ gatherers */

static int ivar_pair(ID id, VALUE value, st_data_t arg)
{
	struct ruby_names *n = (struct ruby_names *)arg;

	if (!RB_SPECIAL_CONST_P(value))
		push_pair(n, value, (int64_t)id_name(n, id, ID_IVAR));
	return n->rc ? ST_STOP : ST_CONTINUE;
}

/* ruby_ivar_layouts_each's callbacks: ivar_pair in two halves. */
static int64_t ivar_name(ID id, void *arg)
{
	return (int64_t)id_name(arg, id, ID_IVAR);
}

static int ivar_ref(VALUE value, int64_t name, void *arg)
{
	struct ruby_names *n = arg;

	push_pair(n, value, name);
	return n->rc ? -1 : 0;
}

struct const_walk {
	struct ruby_names *n;
	VALUE mod;
};

static int const_pair(st_data_t key, st_data_t value, st_data_t arg)
{
	struct const_walk *cw = (struct const_walk *)arg;
	struct ruby_const_entry *ce = rb_const_lookup(cw->mod, (ID)key);

	(void)value;
	if (!ce || RB_SPECIAL_CONST_P(ce->value) || ce->value == Qundef)
		return ST_CONTINUE;
	push_pair(cw->n, ce->value,
		  (int64_t)id_name(cw->n, (ID)key, ID_CONST));
	return cw->n->rc ? ST_STOP : ST_CONTINUE;
}

static void constant_pairs(struct ruby_names *n, VALUE mod)
{
	struct const_walk cw = {n, mod};
	st_table *tbl = rb_mod_const_at(mod, NULL);

	if (!tbl)
		return;
	st_foreach(tbl, const_pair, (st_data_t)&cw);
	st_free_table(tbl);
}

/* rb_hash_stlike_foreach's callback (key, value, arg as st_data_t). */
static int hash_pair(st_data_t k, st_data_t v, st_data_t arg)
{
	struct ruby_names *n = (struct ruby_names *)arg;
	VALUE key = (VALUE)k, value = (VALUE)v;

	if (!RB_SPECIAL_CONST_P(key)) {
		if (!n->key_id)
			n->key_id = cstring_id(n, "key");
		push_pair(n, key, (int64_t)n->key_id);
	}
	if (n->hash_values && !RB_SPECIAL_CONST_P(value))
		push_pair(n, value, key_name(n, key));
	return n->rc ? ST_STOP : ST_CONTINUE;
}

/*
 * A Struct's members: ".name" each.  The member names are the Array of
 * Symbols that Struct.new keeps in the class's "__members__" (read with
 * rb_attr_get, up the superclasses; rb_struct_members would raise on a
 * malformed class).
 */
static void struct_pairs(struct ruby_names *n, VALUE st)
{
	static ID members_id;
	VALUE klass, members = Qnil;
	long i, len;

	if (!members_id)
		members_id = rb_intern("__members__");
	for (klass = rb_obj_class(st); klass && RB_TYPE_P(klass, T_CLASS);
	     klass = rb_class_get_superclass(klass)) {
		members = rb_attr_get(klass, members_id);
		if (RB_TYPE_P(members, T_ARRAY))
			break;
	}
	if (!RB_TYPE_P(members, T_ARRAY))
		return;
	len = RSTRUCT_LEN(st);
	if (len != RARRAY_LEN(members))
		return;
	for (i = 0; i < len && !n->rc; i++) {
		VALUE sym = RARRAY_AREF(members, i);
		VALUE v = RSTRUCT_GET(st, (int)i);

		if (RB_STATIC_SYM_P(sym) && !RB_SPECIAL_CONST_P(v))
			push_pair(n, v,
				  (int64_t)id_name(n, RB_SYM2ID(sym), ID_FIELD));
	}
}

static void array_pairs(struct ruby_names *n, VALUE ary)
{
	long i, len = RARRAY_LEN(ary);
	const VALUE *p;

	/* A shared array's references are its class and the shared root,
	 * not its elements: nothing to name. */
	if (RB_FL_TEST_RAW(ary, RUBY_ELTS_SHARED))
		return;
	p = RARRAY_CONST_PTR_TRANSIENT(ary);

	for (i = 0; i < len && !n->rc; i++)
		push_pair(n, p[i], vmheap_edge_name_index((uint64_t)i));
}

/*
 * A thread's name: "thread N" (N its place among its Ractor's threads, from
 * 1; 0 for a root, which has none), then its Thread#name quoted as Ruby's
 * inspect quotes a String (control bytes such as ESC escaped), when it has
 * one that can be read; else " main" for the main thread.  A root without
 * a number or a readable name is "thread 0x55d0c0a8" (its address).
 */
static size_t thread_text(VALUE th, size_t number, char *buf)
{
	VALUE name = ruby_thread_name_string(th);
	size_t len = 0;
	int main = th == rb_thread_main();

	if (number)
		len = (size_t)snprintf(buf, RUBY_NAME_MAX_BYTES, "thread %zu",
				       number);
	else if (NIL_P(name))
		len = (size_t)snprintf(buf, RUBY_NAME_MAX_BYTES,
				       "thread 0x%" PRIxPTR, (uintptr_t)th);
	else
		ruby_name_put(buf, &len, "thread", 6);
	if (!NIL_P(name)) {
		ruby_name_put(buf, &len, " ", 1);
		ruby_name_put_quoted(buf, &len, RSTRING_PTR(name),
				     (size_t)RSTRING_LEN(name));
	} else if (main) {
		ruby_name_put(buf, &len, " main", 5);
	}
	return len;
}

static uint64_t thread_name(struct ruby_names *n, VALUE th, size_t number,
			    int root)
{
	char buf[RUBY_NAME_MAX_BYTES];
	size_t len = thread_text(th, number, buf);

	return text_id(n, buf, len, root);
}

static int is_thread(VALUE t)
{
	return RB_TYPE_P(t, T_DATA) && RBASIC_CLASS(t) &&
	       rb_obj_class(t) == rb_cThread;
}

/* rb_objspace_reachable_objects_from's callback on the Ractor: number
 * each Thread the first time it comes. */
static void number_thread(VALUE t, void *data)
{
	struct ruby_names *n = data;

	if (is_thread(t) && !ruby_class_table_get(&n->threads, t) &&
	    !ruby_class_table_add(&n->threads, t))
		fail(n, VMHEAP_ENOMEM);
}

/*
 * The number of thread `th`: its place among the Threads of the Ractor
 * that a root holds, in the order the Ractor reports them (its list of
 * threads, as Thread.list: the main thread first), from 1; 0 when
 * unknown.  Learnt at the first call, between two objects of the walk
 * (never inside the roots' walk: it reads the Ractor's references).
 */
static size_t thread_number(struct ruby_names *n, VALUE th)
{
	if (!n->threads_known) {
		n->threads_known = 1;
		if (n->ractor)
			rb_objspace_reachable_objects_from(n->ractor,
							   number_thread, n);
	}
	return ruby_class_table_get(&n->threads, th);
}

/* A Ractor's references to its Thread objects, by number. */
static void thread_pairs(struct ruby_names *n, const uint64_t *refs,
			 size_t nrefs)
{
	size_t i, number = 0;

	for (i = 0; i < nrefs && !n->rc; i++) {
		VALUE t = (VALUE)refs[i];
		size_t k;

		if (!is_thread(t))
			continue;
		/* the numbers of the Ractor that a root holds, else the
		 * order here */
		k = n->ractor ? thread_number(n, t) : 0;
		number = k ? k : number + 1;
		push_pair(n, t, (int64_t)thread_name(n, t, number, 0));
	}
}

/*
 * An environment's local variables (a frame's or block's, kept on the
 * heap by a Binding, a Proc or a block): each value named "local NAME
 * of LABEL (FILE)", LABEL being the iseq's ("<main>", "block in run",
 * "leak").  Hidden locals (no name Ruby would show) are skipped.
 */
static void env_pairs(struct ruby_names *n, VALUE env)
{
	struct ruby_env_locals l;
	const char *file = NULL;
	size_t file_len = 0;
	uint64_t line;
	VALUE label;
	unsigned int i;

	if (!ruby_env_locals(env, &l))
		return;
	label = ruby_iseq_label_string(l.iseq);
	if (!ruby_iseq_location(l.iseq, &file, &file_len, &line))
		file = NULL;
	for (i = 0; i < l.count && !n->rc; i++) {
		char buf[RUBY_NAME_MAX_BYTES];
		size_t len = 0;
		VALUE s;

		if (RB_SPECIAL_CONST_P(l.values[i]) || !l.ids[i] ||
		    !rb_is_local_id(l.ids[i]))
			continue;
		s = rb_id2str(l.ids[i]);
		if (!s || !RB_TYPE_P(s, T_STRING))
			continue;
		ruby_name_put(buf, &len, "local ", 6);
		ruby_name_put(buf, &len, RSTRING_PTR(s), (size_t)RSTRING_LEN(s));
		if (!NIL_P(label)) {
			ruby_name_put(buf, &len, " of ", 4);
			ruby_name_put(buf, &len, RSTRING_PTR(label),
				      (size_t)RSTRING_LEN(label));
		}
		if (file) {
			ruby_name_put(buf, &len, " (", 2);
			ruby_name_put(buf, &len, file, file_len);
			ruby_name_put(buf, &len, ")", 1);
		}
		push_pair(n, l.values[i], (int64_t)string_id(n, buf, len));
	}
}

const int64_t *ruby_names_for_object(struct ruby_names *n, VALUE obj,
				     int type, const uint64_t *refs,
				     size_t nrefs)
{
	if (!nrefs || n->rc)
		return NULL;
	n->npairs = 0;
	switch (type) {
	case T_OBJECT:
	case T_CLASS:
	case T_MODULE:
		if (type != T_OBJECT ||
		    !ruby_ivar_layouts_each(&n->ivars, obj, ivar_name, ivar_ref,
					    n))
			rb_ivar_foreach(obj, ivar_pair, (st_data_t)n);
		if (type != T_OBJECT)
			constant_pairs(n, obj);
		break;
	case T_HASH:
		/* Each distinct key text is a string record: a big Hash's
		 * values are not named by key (its keys still are "key"). */
		n->hash_values = RHASH_SIZE(obj) <= RUBY_NAME_HASH_MAX;
		rb_hash_stlike_foreach(obj, hash_pair, (st_data_t)n);
		break;
	case T_ARRAY:
		array_pairs(n, obj);
		break;
	case T_STRUCT:
		struct_pairs(n, obj);
		if (RB_FL_TEST_RAW(obj, RUBY_FL_EXIVAR))
			rb_ivar_foreach(obj, ivar_pair, (st_data_t)n);
		break;
	case T_DATA:
		if (RBASIC_CLASS(obj) && rb_obj_class(obj) == rb_cRactor)
			thread_pairs(n, refs, nrefs);
		break;
	case T_IMEMO:
		env_pairs(n, obj);
		break;
	default:
		/* Strings, Structs, ... with instance variables of their
		 * own (generic ivars). */
		if (RB_FL_TEST_RAW(obj, RUBY_FL_EXIVAR))
			rb_ivar_foreach(obj, ivar_pair, (st_data_t)n);
		break;
	}
	if (n->rc || !n->npairs)
		return NULL;
	if (grow((void **)&n->names, &n->names_cap, nrefs,
		 sizeof(*n->names)) < 0) {
		fail(n, VMHEAP_ENOMEM);
		return NULL;
	}
	return match_pairs(n, refs, nrefs) ? n->names : NULL;
}

/* ------------------------------------------------------ roots */

uint64_t ruby_names_for_root(struct ruby_names *n, const char *category,
			     VALUE obj)
{
	size_t i, count;

	if (!category || n->rc)
		return 0;
	/* the Ractor whose Threads are numbered (thread_number) */
	if (!n->ractor && RB_TYPE_P(obj, T_DATA) && RBASIC_CLASS(obj) &&
	    rb_obj_class(obj) == rb_cRactor)
		n->ractor = obj;
	if (strcmp(category, "global_tbl") == 0) {
		const struct ruby_name_global *g = ruby_name_globals(&count);

		for (i = 0; i < count; i++)
			if (!n->global_used[i] && g[i].value == obj) {
				n->global_used[i] = 1;
				return text_id(n, g[i].text, strlen(g[i].text),
					       1);
			}
		return 0;
	}
	if (strcmp(category, "machine_context") == 0) {
		/* the stack of the thread that walks */
		if (!n->current_thread_id)
			n->current_thread_id =
			    thread_name(n, rb_thread_current(), 0, 1);
		return n->current_thread_id;
	}
	/* A class or module that the VM holds (Object, Kernel, ...) is
	 * named by its path, the string it already holds. */
	if (RB_TYPE_P(obj, T_CLASS) || RB_TYPE_P(obj, T_MODULE)) {
		VALUE path = rb_class_path_cached(obj);

		if (RB_TYPE_P(path, T_STRING))
			return text_id(n, RSTRING_PTR(path),
				       (size_t)RSTRING_LEN(path), 1);
	}
	return 0;
}

/* ------------------------------------------------------ open/close */

int ruby_names_open(struct ruby_names **out, vmheap_writer *w,
		    uint64_t first_string_id)
{
	struct ruby_names *n;
	size_t count;

	*out = NULL;
	if (!ruby_names_enabled())
		return 0;
	n = calloc(1, sizeof(*n));
	if (!n)
		return VMHEAP_ENOMEM;
	ruby_name_strings_init(&n->strings, w, first_string_id);
	ruby_class_table_init(&n->ids.index);
	ruby_class_table_init(&n->keys.index);
	ruby_class_table_init(&n->threads);
	ruby_ivar_layouts_init(&n->ivars);
	ruby_name_globals(&count);
	n->global_used = calloc(count + 1, 1);
	if (!n->global_used) {
		ruby_names_close(n);
		return VMHEAP_ENOMEM;
	}
	*out = n;
	return 0;
}

int ruby_names_error(const struct ruby_names *n)
{
	return n ? n->rc : 0;
}

void ruby_names_close(struct ruby_names *n)
{
	if (!n)
		return;
	ruby_name_strings_free(&n->strings);
	free(n->pairs);
	free(n->heads);
	free(n->names);
	free(n->global_used);
	cache_free(&n->ids);
	cache_free(&n->keys);
	ruby_class_table_free(&n->threads);
	ruby_ivar_layouts_free(&n->ivars);
	free(n);
}

/* ------------------------------------------------------ thread stacks */

/* "stack of thread 1 main", "stack of thread 3 \"worker\"" (FORMAT.md
 * "Stack and internal references"): the thread's own name (thread_name,
 * by its number) after "stack of ". */
const int64_t *ruby_names_of_thread_stack(struct ruby_names *n, VALUE th,
					  size_t nrefs)
{
	char buf[RUBY_NAME_MAX_BYTES], own[RUBY_NAME_MAX_BYTES];
	uint64_t id;
	size_t len = 0, own_len;

	if (!nrefs || n->rc)
		return NULL;
	own_len = thread_text(th, thread_number(n, th), own);
	ruby_name_put(buf, &len, "stack of ", 9);
	ruby_name_put(buf, &len, own, own_len);
	id = text_id(n, buf, len, 0);
	if (!id || grow((void **)&n->names, &n->names_cap, nrefs,
			sizeof(*n->names)) < 0) {
		if (!n->rc)
			fail(n, VMHEAP_ENOMEM);
		return NULL;
	}
	for (size_t i = 0; i < nrefs; i++)
		n->names[i] = (int64_t)id;
	return n->names;
}
