/*
 * ruby_vars.c - the Ruby host's variables.
 *
 *   system.gc.<key>           every GC.stat figure (system.gc.count, ...)
 *   system.threads.backtrace  [{"thread": inspect, "backtrace": [...]}]
 *                             for every Ruby thread but the agent's own
 *   config.trace.allocations, system.allocations.*: ruby_alloc_sites.c
 *   config.dump.names: ruby_names_var.c
 *
 * The agent asks for them on its loop thread, which may not call Ruby;
 * the values are read by a job on the Ruby worker thread with the GVL.
 * The key list is learnt once at load, so list_vars needs no Ruby.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ruby-internal.h"

#define GC_PREFIX "system.gc."
#define BACKTRACE_VAR "system.threads.backtrace"
/* How long the loop thread waits for the Ruby thread to get the GVL. */
#define VAR_TIMEOUT_MS 10000

static char **gc_names; /* full names: "system.gc.count", ... */
static size_t gc_count;

static int add_gc_key(VALUE key, VALUE value, VALUE unused)
{
	const char *k;
	char **names;
	size_t len;

	(void)value;
	(void)unused;
	if (!SYMBOL_P(key))
		return ST_CONTINUE;
	k = rb_id2name(SYM2ID(key));
	if (!k)
		return ST_CONTINUE;
	names = realloc(gc_names, (gc_count + 1) * sizeof(*gc_names));
	if (!names)
		return ST_STOP;
	gc_names = names;
	len = strlen(GC_PREFIX) + strlen(k) + 1;
	gc_names[gc_count] = malloc(len);
	if (!gc_names[gc_count])
		return ST_STOP;
	strcpy(gc_names[gc_count], GC_PREFIX);
	strcat(gc_names[gc_count], k);
	gc_count++;
	return ST_CONTINUE;
}

int ruby_vars_init(void)
{
	VALUE stat;

	if (gc_count)
		return 0;
	stat = rb_hash_new();
	rb_gc_stat(stat);
	rb_hash_foreach(stat, add_gc_key, Qnil);
	RB_GC_GUARD(stat);
	return gc_count ? 0 : -1;
}

void ruby_vars_list(void *ctx,
		    void (*add)(void *arg, const char *name, const char *type),
		    void *arg)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < gc_count; i++)
		add(arg, gc_names[i], "int");
	add(arg, BACKTRACE_VAR, "array");
	ruby_names_list_var(add, arg);
	ruby_alloc_sites_list(add, arg);
}

/* ------------------------------------------------------------ GC.stat */

struct gc_job {
	const char *key; /* without the prefix */
	vmheap_value_writer *pk;
};

static VALUE read_gc_stat(VALUE key)
{
	return SIZET2NUM(rb_gc_stat(ID2SYM(rb_intern((const char *)key))));
}

static int gc_stat_job(void *arg)
{
	struct gc_job *job = arg;
	int state = 0;
	VALUE v = rb_protect(read_gc_stat, (VALUE)job->key, &state);

	if (state) {
		rb_set_errinfo(Qnil);
		return VMHEAP_AGENT_ENOTFOUND;
	}
	vmheap_value_write_uint(job->pk, (uint64_t)NUM2SIZET(v));
	return 0;
}

/* ------------------------------------------------------------ backtraces */

static VALUE collect_backtraces(VALUE unused)
{
	VALUE threads = rb_funcall(rb_cThread, rb_intern("list"), 0);
	VALUE self = rb_thread_current();
	VALUE out = rb_ary_new();
	long i, j;

	(void)unused;
	for (i = 0; i < RARRAY_LEN(threads); i++) {
		VALUE th = rb_ary_entry(threads, i);
		VALUE bt, lines;

		if (th == self)
			continue;
		bt = rb_funcall(th, rb_intern("backtrace"), 0);
		lines = rb_ary_new();
		if (RB_TYPE_P(bt, T_ARRAY))
			for (j = 0; j < RARRAY_LEN(bt); j++)
				rb_ary_push(lines, rb_obj_as_string(
						       rb_ary_entry(bt, j)));
		rb_ary_push(out, rb_assoc_new(rb_inspect(th), lines));
	}
	return out;
}

static void pack_string(vmheap_value_writer *pk, VALUE s)
{
	vmheap_value_write_str(pk, RSTRING_PTR(s), (size_t)RSTRING_LEN(s));
}

static void pack_cstr(vmheap_value_writer *pk, const char *s)
{
	vmheap_value_write_str(pk, s, strlen(s));
}

static int backtrace_job(void *arg)
{
	vmheap_value_writer *pk = arg;
	int state = 0;
	VALUE all = rb_protect(collect_backtraces, Qnil, &state);
	long i, j;

	if (state) {
		rb_set_errinfo(Qnil);
		return VMHEAP_AGENT_EDUMP;
	}
	/* Only reads from here on: nothing can raise half-way through. */
	vmheap_value_write_array(pk, (uint32_t)RARRAY_LEN(all));
	for (i = 0; i < RARRAY_LEN(all); i++) {
		VALUE pair = RARRAY_AREF(all, i);
		VALUE lines = RARRAY_AREF(pair, 1);

		vmheap_value_write_map(pk, 2);
		pack_cstr(pk, "thread");
		pack_string(pk, RARRAY_AREF(pair, 0));
		pack_cstr(pk, "backtrace");
		vmheap_value_write_array(pk, (uint32_t)RARRAY_LEN(lines));
		for (j = 0; j < RARRAY_LEN(lines); j++)
			pack_string(pk, RARRAY_AREF(lines, j));
	}
	RB_GC_GUARD(all);
	return 0;
}

/* ------------------------------------------------------------ get */

int ruby_vars_get(void *ctx, const char *name, vmheap_value_writer *pk)
{
	size_t i;
	int rc;

	(void)ctx;
	if (strcmp(name, BACKTRACE_VAR) == 0)
		return ruby_worker_run(backtrace_job, pk, VAR_TIMEOUT_MS);
	if (ruby_names_get_var(name, pk) == 0)
		return 0;
	rc = ruby_alloc_sites_get(name, pk);
	if (rc != VMHEAP_AGENT_ENOTFOUND)
		return rc;
	for (i = 0; i < gc_count; i++) {
		if (strcmp(name, gc_names[i]) == 0) {
			struct gc_job job = {name + strlen(GC_PREFIX), pk};

			return ruby_worker_run(gc_stat_job, &job,
					       VAR_TIMEOUT_MS);
		}
	}
	return VMHEAP_AGENT_ENOTFOUND;
}

/* ------------------------------------------------------------ set */

int ruby_vars_set(void *ctx, const char *name, const vmheap_value *value,
		  vmheap_value_writer *pk, char *err, size_t errlen)
{
	int rc = ruby_names_set_var(name, value, pk, err, errlen);
	size_t i;

	if (rc != VMHEAP_AGENT_ENOTFOUND || err[0])
		return rc;
	rc = ruby_alloc_sites_set(ctx, name, value, pk, err, errlen);
	if (rc != VMHEAP_AGENT_ENOTFOUND || err[0])
		return rc;
	for (i = 0; i < gc_count; i++)
		if (strcmp(name, gc_names[i]) == 0)
			break;
	if (i == gc_count && strcmp(name, BACKTRACE_VAR) != 0)
		return VMHEAP_AGENT_ENOTFOUND;
	snprintf(err, errlen, "%s is read-only", name);
	return VMHEAP_AGENT_EREADONLY;
}
