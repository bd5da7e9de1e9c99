/*
 * ruby_name_layout.c - the two pieces of MRI's private structures that
 * names need and no exported function reads without allocating: an
 * environment's local variables (by its iseq's local table) and a
 * thread's Thread#name.
 *
 * Locals.  An env (T_IMEMO of type env) is MRI's rb_env_t (vm_core.h):
 * flags, iseq, ep, env, env_size; env->env[i] is the local variable
 * local_table[i] of its iseq for i < local_table_size (vm.c's
 * get_local_variable_ptr reads it so).  The local table is in the
 * iseq's body (struct rb_iseq_constant_body), at offsets that only a
 * given build knows: Debian's Ruby 3.1 reads local_table at 0x98 and
 * local_table_size at 0xf0 (in the machine code of
 * rb_iseq_local_variables).  These offsets are believed only after a
 * probe at load passes: code with a known local is run, its Binding's
 * env found among the Binding's references, and the local's name and
 * value must be where the offsets say.  Without that (another Ruby),
 * locals have no names.
 *
 * Thread names.  Thread#name is rb_thread_t's `name` field, a String
 * (frozen copy of what Thread#name= got) or nil.  Its offset is learnt
 * from the agent's own thread, which the extension names at load: the
 * words of its rb_thread_t are read from the start until one equals
 * what Thread#name returns (called then, at load, not in a dump), so
 * every read stays inside the structure.  A dump then reads that field
 * of each Thread; without the offset, threads go by number only.
 *
 * VM tables.  Two VM-internal holders are hidden Arrays of hidden Arrays
 * that paths pass through: the objects C code registered with
 * rb_gc_register_mark_object (the VM's mark_object_ary, in buckets of
 * 1024) and, among them, the symbol table (symbol.c's global_symbols.ids,
 * in chunks: each entry a Symbol's String and the Symbol).  Neither is
 * exported.  At load a dynamic Symbol is made and the heap searched: the
 * hidden Array holding it is a chunk, the one holding that chunk the
 * table, the one holding the table a bucket, the one holding that bucket
 * mark_object_ary.  A dump reads their members again (the chunks and
 * buckets change) and believes them only while the table is still in a
 * bucket (GC.compact may move them: then they go unlabelled).
 *
 * Everything here that runs during a dump only reads memory: no Ruby
 * object is made and no method called.
 */
#include "ruby-internal.h"

#include <stdlib.h>
#include <string.h>

#include <ruby/version.h>

/* Exported by libruby, declared only in its internal headers (iseq.c). */
const void *rb_iseqw_to_iseq(VALUE iseqw);
VALUE rb_iseq_label(const void *iseq);

/* internal/imemo.h (3.1): imemo_env and imemo_iseq. */
#define IMEMO_ENV 0
#define IMEMO_ISEQ 7

/* The body offsets of Debian's Ruby 3.1 (see above); other Rubies get
 * neither local nor thread names. */
#if RUBY_API_VERSION_MAJOR == 3 && RUBY_API_VERSION_MINOR == 1 && \
    SIZEOF_VOIDP == 8
#define LAYOUT_KNOWN 1
#define BODY_LOCAL_TABLE 0x98
#define BODY_LOCAL_TABLE_SIZE 0xf0
#endif

/* MRI's rb_env_t (vm_core.h, 2.3 to 3.3). */
struct ruby_env {
	VALUE flags;
	const VALUE *iseq;
	const VALUE *ep;
	const VALUE *env;
	unsigned int env_size;
};

static int locals_ok;		  /* the probe passed */
static VALUE symbol_table;	  /* global_symbols.ids, or 0 */
static VALUE registered;	  /* the VM's mark_object_ary, or 0 */
static long thread_name_slot = -1; /* rb_thread_t's name, in VALUEs */

static int is_imemo(VALUE v, int type)
{
	return !RB_SPECIAL_CONST_P(v) && RB_BUILTIN_TYPE(v) == T_IMEMO &&
	       ruby_imemo_type(v) == type;
}

/* The local table of iseq `iq` (an imemo iseq with a body), or 0. */
static unsigned int local_table(VALUE iq, const ID **table)
{
#ifdef BODY_LOCAL_TABLE
	const char *body = (const char *)((const VALUE *)iq)[2];
	unsigned int size;

	if (!body)
		return 0;
	memcpy(table, body + BODY_LOCAL_TABLE, sizeof(*table));
	memcpy(&size, body + BODY_LOCAL_TABLE_SIZE, sizeof(size));
	return *table ? size : 0;
#else
	(void)iq;
	*table = NULL;
	return 0;
#endif
}

int ruby_env_locals(VALUE env, struct ruby_env_locals *out)
{
	const struct ruby_env *e = (const struct ruby_env *)env;
	VALUE iq;

	if (!locals_ok || !is_imemo(env, IMEMO_ENV))
		return 0;
	iq = (VALUE)e->iseq;
	if (!iq || !is_imemo(iq, IMEMO_ISEQ) || !e->env)
		return 0;
	out->count = local_table(iq, &out->ids);
	if (out->count > e->env_size)
		out->count = e->env_size;
	out->values = e->env;
	out->iseq = iq;
	return out->count > 0;
}

VALUE ruby_iseq_label_string(VALUE iseq)
{
	VALUE s = rb_iseq_label((const void *)iseq);

	return RB_TYPE_P(s, T_STRING) ? s : Qnil;
}

/* rb_objspace_reachable_objects_from's callback: keep an env. */
static void find_env(VALUE obj, void *data)
{
	if (is_imemo(obj, IMEMO_ENV))
		*(VALUE *)data = obj;
}

/*
 * The probe: a Binding of code whose one local is `vmheap_probe_local`,
 * holding a String of our own.  The offsets are believed when the env
 * that Binding holds has that local's name at some i and its value at
 * env[i].
 */
static void probe_locals(void)
{
	static const char code[] = "vmheap_probe_local = +'vmheap-probe'; "
				   "[binding, vmheap_probe_local]";
	VALUE pair, binding, value, env = Qnil;
	struct ruby_env_locals l;
	ID want;
	unsigned int i;
	int state = 0;

	/* protected: a probe that fails leaves locals unnamed, nothing else */
	pair = rb_eval_string_protect(code, &state);
	if (state) {
		rb_set_errinfo(Qnil);
		return;
	}
	if (!RB_TYPE_P(pair, T_ARRAY) || RARRAY_LEN(pair) != 2)
		return;
	binding = rb_ary_entry(pair, 0);
	value = rb_ary_entry(pair, 1);
	if (!rb_obj_is_kind_of(binding, rb_cBinding))
		return;
	want = rb_intern("vmheap_probe_local");
	rb_objspace_reachable_objects_from(binding, find_env, &env);
	locals_ok = 1; /* for ruby_env_locals, while the probe reads */
	if (NIL_P(env) || !ruby_env_locals(env, &l)) {
		locals_ok = 0;
		return;
	}
	locals_ok = 0;
	for (i = 0; i < l.count; i++)
		if (l.ids[i] == want && l.values[i] == value)
			locals_ok = 1;
	RB_GC_GUARD(pair);
}

/* A hidden (class 0) Array. */
static int hidden_array(VALUE v)
{
	return !RB_SPECIAL_CONST_P(v) && RB_BUILTIN_TYPE(v) == T_ARRAY &&
	       !RBASIC_CLASS(v);
}

static int array_holds(VALUE ary, VALUE v)
{
	long i, len = RARRAY_LEN(ary);
	const VALUE *p = RARRAY_CONST_PTR_TRANSIENT(ary);

	for (i = 0; i < len; i++)
		if (p[i] == v)
			return 1;
	return 0;
}

struct holder_search {
	VALUE target, found;
};

static int search_page(void *start, void *end, size_t stride, void *data)
{
	struct holder_search *hs = data;
	uintptr_t p;

	for (p = (uintptr_t)start; p < (uintptr_t)end; p += stride) {
		VALUE v = (VALUE)p;

		if (RBASIC(v)->flags && hidden_array(v) &&
		    array_holds(v, hs->target)) {
			hs->found = v;
			return 1;
		}
	}
	return 0;
}

/* The hidden Array that holds `v`, or 0. */
static VALUE hidden_holder(VALUE v)
{
	struct holder_search hs = {v, 0};

	if (v)
		rb_objspace_each_objects(search_page, &hs);
	return hs.found;
}

static void probe_vm_tables(void)
{
	VALUE sym = rb_str_intern(rb_str_new_cstr("vmheap probe symbol"));
	VALUE chunk, table, bucket, ary;

	if (!RB_DYNAMIC_SYM_P(sym))
		return;
	/* a dynamic Symbol enters the table's chunks when it gets an ID */
	(void)rb_sym2id(sym);
	chunk = hidden_holder(sym);
	table = hidden_holder(chunk);
	bucket = hidden_holder(table);
	ary = hidden_holder(bucket);
	RB_GC_GUARD(sym);
	if (!ary)
		return;
	symbol_table = table;
	registered = ary;
}

void ruby_name_layout_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	probe_locals();
	probe_vm_tables();
}

/* ------------------------------------------------------ VM tables */

static int compare_values(const void *a, const void *b)
{
	VALUE x = *(const VALUE *)a, y = *(const VALUE *)b;

	return x < y ? -1 : x > y;
}

/* Append the hidden Arrays that `ary` holds to t (sorted later). */
static int add_members(struct ruby_vm_tables *t, VALUE ary, int which)
{
	long i, len = RARRAY_LEN(ary);
	const VALUE *p = RARRAY_CONST_PTR_TRANSIENT(ary);

	for (i = 0; i < len; i++) {
		if (!hidden_array(p[i]))
			continue;
		if (t->n[which] == t->cap[which]) {
			size_t cap = t->cap[which] ? 2 * t->cap[which] : 64;
			VALUE *m = realloc(t->members[which],
					   cap * sizeof(*m));
			if (!m)
				return -1;
			t->members[which] = m;
			t->cap[which] = cap;
		}
		t->members[which][t->n[which]++] = p[i];
	}
	qsort(t->members[which], t->n[which], sizeof(VALUE), compare_values);
	return 0;
}

int ruby_vm_tables_open(struct ruby_vm_tables *t)
{
	size_t i;
	int ok = 0;

	memset(t, 0, sizeof(*t));
	if (!symbol_table || !hidden_array(symbol_table) ||
	    !hidden_array(registered))
		return 0;
	if (add_members(t, registered, 1) < 0 ||
	    add_members(t, symbol_table, 0) < 0) {
		ruby_vm_tables_close(t);
		return VMHEAP_ENOMEM;
	}
	/* still what the probe found: the table is in a bucket */
	for (i = 0; i < t->n[1] && !ok; i++)
		ok = array_holds(t->members[1][i], symbol_table);
	if (!ok) {
		ruby_vm_tables_close(t);
		return 0;
	}
	t->symbols = symbol_table;
	t->registered = registered;
	return 0;
}

static int is_member(const struct ruby_vm_tables *t, int which, VALUE v)
{
	return t->n[which] &&
	       bsearch(&v, t->members[which], t->n[which], sizeof(VALUE),
		       compare_values) != NULL;
}

const char *ruby_vm_table_label(const struct ruby_vm_tables *t, VALUE obj)
{
	if (!t->symbols)
		return NULL;
	if (obj == t->symbols || is_member(t, 0, obj))
		return "<symbol table>";
	if (obj == t->registered || is_member(t, 1, obj))
		return "<registered objects>";
	return NULL;
}

void ruby_vm_tables_close(struct ruby_vm_tables *t)
{
	free(t->members[0]);
	free(t->members[1]);
	memset(t, 0, sizeof(*t));
}

int ruby_name_layout_locals_known(void)
{
	return locals_ok;
}

void ruby_name_layout_learn_thread(VALUE thread)
{
	const VALUE *th;
	VALUE name;
	long i;

#ifndef LAYOUT_KNOWN
	return;
#endif
	if (thread_name_slot >= 0 || !RB_TYPE_P(thread, T_DATA))
		return;
	name = rb_funcall(thread, rb_intern("name"), 0);
	th = (const VALUE *)DATA_PTR(thread);
	if (!th || !RB_TYPE_P(name, T_STRING))
		return;
	/* A Ruby 3.1 rb_thread_t is well under 4 KiB; name is in it. */
	for (i = 0; i < 512; i++)
		if (th[i] == name) {
			thread_name_slot = i;
			return;
		}
}

VALUE ruby_thread_name_string(VALUE thread)
{
	const VALUE *th;
	VALUE name;

	if (thread_name_slot < 0 || !RB_TYPE_P(thread, T_DATA) ||
	    !RBASIC_CLASS(thread) || rb_obj_class(thread) != rb_cThread)
		return Qnil;
	th = (const VALUE *)DATA_PTR(thread);
	if (!th)
		return Qnil;
	name = th[thread_name_slot];
	return RB_TYPE_P(name, T_STRING) ? name : Qnil;
}
