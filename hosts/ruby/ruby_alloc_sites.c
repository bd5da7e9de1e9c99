/*
 * ruby_alloc_sites.c - the allocation tracer: where each object was made.
 *
 *   set config.trace.allocations true    start recording
 *   set config.trace.allocations false   stop, and free every record
 *   system.allocations.objects  objects recorded (alive, made while on)
 *   system.allocations.sites    distinct sites recorded
 *   system.allocations.bytes    the C memory of both tables
 *
 * Like ObjectSpace.trace_object_allocations, but in C and compact.  One
 * event hook on MRI's internal NEWOBJ and FREEOBJ events, added with
 * rb_add_event_hook2 and RUBY_EVENT_HOOK_FLAG_RAW_ARG (ruby/debug.h): it
 * gets the trace argument itself, without the TracePoint object that
 * rb_tracepoint_new would wrap it in (rb_tracearg_from_tracepoint and its
 * type check, once per event):
 *
 *  - NEWOBJ: the file and line of the nearest Ruby frame
 *    (rb_tracearg_path, rb_tracearg_lineno: the frame's own file, so code
 *    run by eval is "(eval)" or the name eval was given) and the method
 *    that frame belongs to (the first frame of rb_profile_frames that has
 *    a file: C methods such as Class#new are skipped, so `Foo.new` in
 *    method `leak` is "in leak", where ObjectSpace.allocation_method_id
 *    says `new`; none at the top level) are interned into a site table
 *    (ruby_site_table.c), and the object's VALUE is mapped to the site id
 *    (ruby_object_table.c).  A small direct-mapped cache on (file name
 *    string, line) finds the site of a hot allocation without hashing its
 *    text or looking for its method; a hit is checked against the site's
 *    own file name, so a string that died and whose slot holds another
 *    cannot give a wrong site.  (Two methods that eval code without a file
 *    name share "(eval)":LINE, and may share the method of the first.)
 *  - FREEOBJ: the object's entry is removed.  A site stays in the table
 *    (sites are few; an id must stay stable while dumps refer to it).
 *
 * Nothing here makes a Ruby object (MRI forbids it in these hooks); the
 * tables live on the C heap.  The hooks run holding the GVL, and so do
 * the dump's walk (ruby_dump_sites.c) and the set/get jobs, which run on
 * the agent's Ruby thread (ruby_worker.c): no lock is needed.  Memory a
 * record cannot get is counted in `dropped` and the object goes without a
 * site.  Objects moved by GC.compact take their entries along (the
 * anchor's dcompact function, below).
 */
#include <stdio.h>
#include <string.h>

#include "ruby-internal.h"

#include <ruby/debug.h>

#define TRACE_VAR "config.trace.allocations"
#define OBJECTS_VAR "system.allocations.objects"
#define SITES_VAR "system.allocations.sites"
#define BYTES_VAR "system.allocations.bytes"
#define VAR_TIMEOUT_MS 10000
#define CACHE_SIZE 512 /* a power of two */
#define MAX_FRAMES 8   /* C frames looked through for a Ruby one */

struct cache_entry {
	VALUE path; /* the frame's file name string */
	long line;
	uint32_t site;
};

static struct {
	int on;
	struct ruby_site_table sites;
	struct ruby_object_table objects;
	struct cache_entry cache[CACHE_SIZE];
	uint64_t dropped;
} tracer;

/* ------------------------------------------------------------ hooks */

/* The method of the nearest Ruby frame: the first of rb_profile_frames
 * with a file (C methods, such as Class#new, have none).  "" at the top
 * level.  Allocates nothing. */
static VALUE frame_method(void)
{
	VALUE frames[MAX_FRAMES];
	int lines[MAX_FRAMES], n = rb_profile_frames(0, MAX_FRAMES, frames,
						     lines);

	for (int k = 0; k < n; k++)
		if (RB_TYPE_P(rb_profile_frame_path(frames[k]), T_STRING))
			return rb_profile_frame_method_name(frames[k]);
	return Qnil;
}

static uint32_t intern_site(VALUE path, long line)
{
	VALUE method = frame_method();
	const char *m = "";
	size_t mlen = 0;
	int added;

	if (RB_TYPE_P(method, T_STRING)) {
		m = RSTRING_PTR(method);
		mlen = (size_t)RSTRING_LEN(method);
	}
	return ruby_site_table_intern(&tracer.sites, RSTRING_PTR(path),
				      (size_t)RSTRING_LEN(path),
				      line > 0 ? (uint64_t)line : 0, m, mlen,
				      &added);
}

static uint32_t site_of(VALUE path, long line)
{
	size_t i = (size_t)(((uint64_t)path ^ (uint64_t)line * 0x9E3779B1u) *
				0x9E3779B97F4A7C15ull >>
			    50) &
		   (CACHE_SIZE - 1);
	struct cache_entry *e = &tracer.cache[i];
	const struct ruby_site *s;
	uint32_t id;

	if (e->site && e->path == path && e->line == line) {
		s = ruby_site_table_get(&tracer.sites, e->site);
		if ((size_t)RSTRING_LEN(path) == s->file_len &&
		    memcmp(RSTRING_PTR(path), s->file, s->file_len) == 0)
			return e->site;
	}
	id = intern_site(path, line);
	if (id) {
		e->path = path;
		e->line = line;
		e->site = id;
	}
	return id;
}

/* The hook, called as a raw-argument event hook (rb_add_event_hook2 with
 * RUBY_EVENT_HOOK_FLAG_RAW_ARG): (data, trace arg). */
static void on_event(VALUE data, rb_trace_arg_t *arg)
{
	VALUE obj = rb_tracearg_object(arg);
	VALUE path;
	uint32_t site = 0;

	(void)data;
	if (rb_tracearg_event_flag(arg) == RUBY_INTERNAL_EVENT_FREEOBJ) {
		ruby_object_table_remove(&tracer.objects, (uint64_t)obj);
		return;
	}
	path = rb_tracearg_path(arg);
	if (RB_TYPE_P(path, T_STRING))
		site = site_of(path, FIX2LONG(rb_tracearg_lineno(arg)));
	if (!site) {
		/* no Ruby frame (the VM's own work): no site; a stale entry
		 * for this address (a moved object) must not be read */
		ruby_object_table_remove(&tracer.objects, (uint64_t)obj);
		return;
	}
	if (ruby_object_table_set(&tracer.objects, (uint64_t)obj, site) < 0) {
		tracer.dropped++;
		ruby_object_table_remove(&tracer.objects, (uint64_t)obj);
	}
}

/* ------------------------------------------------------------ compaction */

/* GC.compact moves objects, and a tracer sees no event for it: like
 * objspace's, this one keeps a hidden TypedData object (the anchor, made
 * the first time tracing starts and kept for the life of the VM) whose
 * dcompact function MRI calls while it updates references after moving,
 * when rb_gc_location gives each moved object's new address. */
static uint64_t moved_to(uint64_t key)
{
	return (uint64_t)rb_gc_location((VALUE)key);
}

static void on_compact(void *ptr)
{
	(void)ptr;
	if (tracer.on)
		tracer.dropped += ruby_object_table_move(&tracer.objects,
							 moved_to);
}

static const rb_data_type_t anchor_type = {
    .wrap_struct_name = "vmheap_alloc_sites",
    .function = {.dcompact = on_compact},
    .flags = RUBY_TYPED_FREE_IMMEDIATELY,
};
static VALUE anchor = Qfalse;

static void make_anchor(void)
{
	if (anchor != Qfalse)
		return;
	/* DATA_PTR must not be NULL: MRI calls dcompact only then. */
	anchor = TypedData_Wrap_Struct(0, &anchor_type, &tracer);
	rb_gc_register_mark_object(anchor);
}

/* ------------------------------------------------------------ on/off */

static void forget_all(void)
{
	ruby_object_table_free(&tracer.objects);
	ruby_site_table_free(&tracer.sites);
	memset(tracer.cache, 0, sizeof(tracer.cache));
	tracer.dropped = 0;
}

/* With the GVL. */
static int trace_job(void *arg)
{
	int want = *(int *)arg;

	if (want == tracer.on)
		return 0;
	if (want) {
		make_anchor();
		/* the cast through void (*)(void) is how C says "a function
		 * of another type": MRI calls it with the raw arguments */
		rb_add_event_hook2(
		    (rb_event_hook_func_t)(void (*)(void))on_event,
		    RUBY_INTERNAL_EVENT_NEWOBJ | RUBY_INTERNAL_EVENT_FREEOBJ,
		    Qnil, RUBY_EVENT_HOOK_FLAG_RAW_ARG);
		tracer.on = 1;
	} else {
		rb_remove_event_hook(
		    (rb_event_hook_func_t)(void (*)(void))on_event);
		tracer.on = 0;
		forget_all();
	}
	return 0;
}

int ruby_alloc_sites_on(void)
{
	return tracer.on;
}

uint32_t ruby_alloc_site_of(VALUE obj)
{
	return tracer.on ? ruby_object_table_get(&tracer.objects,
						 (uint64_t)obj)
			 : 0;
}

const struct ruby_site *ruby_alloc_site(uint32_t id)
{
	return ruby_site_table_get(&tracer.sites, id);
}

uint32_t ruby_alloc_site_count(void)
{
	return (uint32_t)tracer.sites.count;
}

/* ------------------------------------------------------------ variables */

void ruby_alloc_sites_list(void (*add)(void *arg, const char *name,
				       const char *type),
			   void *arg)
{
	add(arg, TRACE_VAR, "bool");
	add(arg, OBJECTS_VAR, "int");
	add(arg, SITES_VAR, "int");
	add(arg, BYTES_VAR, "int");
}

struct read_job {
	const char *name;
	vmheap_value_writer *pk;
};

static int read_job(void *arg)
{
	struct read_job *job = arg;
	uint64_t v;

	if (strcmp(job->name, TRACE_VAR) == 0) {
		vmheap_value_write_bool(job->pk, tracer.on);
		return 0;
	}
	if (strcmp(job->name, OBJECTS_VAR) == 0)
		v = tracer.objects.count;
	else if (strcmp(job->name, SITES_VAR) == 0)
		v = tracer.sites.count;
	else
		v = ruby_object_table_bytes(&tracer.objects) +
		    tracer.sites.bytes;
	vmheap_value_write_uint(job->pk, v);
	return 0;
}

int ruby_alloc_sites_get(const char *name, vmheap_value_writer *pk)
{
	struct read_job job = {name, pk};

	if (strcmp(name, TRACE_VAR) && strcmp(name, OBJECTS_VAR) &&
	    strcmp(name, SITES_VAR) && strcmp(name, BYTES_VAR))
		return VMHEAP_AGENT_ENOTFOUND;
	return ruby_worker_run(read_job, &job, VAR_TIMEOUT_MS);
}

/* true/false, or the strings a person types. */
static int want_bool(const vmheap_value *o, int *out)
{
	static const char *const words[][2] = {
	    {"true", "false"}, {"on", "off"}, {"1", "0"}, {"yes", "no"}};
	const char *s;
	uint64_t u;
	size_t len;

	if (vmheap_value_bool(o, out) == 0)
		return 0;
	if (vmheap_value_uint(o, &u) == 0 && u <= 1) {
		*out = (int)u;
		return 0;
	}
	if (vmheap_value_str(o, &s, &len) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		for (int v = 0; v < 2; v++)
			if (len == strlen(words[i][v]) &&
			    memcmp(s, words[i][v], len) == 0) {
				*out = !v;
				return 0;
			}
	return -1;
}

int ruby_alloc_sites_set(void *ctx, const char *name, const vmheap_value *value,
			 vmheap_value_writer *pk, char *err, size_t errlen)
{
	int want, rc;

	(void)ctx;
	if (strcmp(name, TRACE_VAR) != 0) {
		if (!strcmp(name, OBJECTS_VAR) || !strcmp(name, SITES_VAR) ||
		    !strcmp(name, BYTES_VAR)) {
			snprintf(err, errlen, "%s is read-only", name);
			return VMHEAP_AGENT_EREADONLY;
		}
		return VMHEAP_AGENT_ENOTFOUND;
	}
	if (want_bool(value, &want) < 0) {
		snprintf(err, errlen, "%s takes a boolean (true/false)", name);
		return VMHEAP_AGENT_ETYPE;
	}
	rc = ruby_worker_run(trace_job, &want, VAR_TIMEOUT_MS);
	if (rc < 0)
		return rc;
	vmheap_value_write_bool(pk, want);
	return 0;
}
