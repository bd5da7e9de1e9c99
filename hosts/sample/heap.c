/*
 * heap.c - the sample VM's object heap and its mutator.
 *
 * Objects are malloc'd structs linked on one list; an object's id in a
 * dump is its address.  Each tick the mutator builds a Session with some
 * Messages, Strings and Hashes, drops the previous Session, and keeps
 * `--leak CLASS:N` objects per tick in the globals' leak Array: those
 * are the leak a person should find with vmheap-diff.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sample-internal.h"

const char *const sample_ref_names[REF_NAMES] = {
    [REF_GLOBALS] = "@globals", [REF_LEAKS] = "[:leaks]",
    [REF_APP] = "[:app]",	[REF_BUFFER] = "@buffer",
    [REF_TEXT] = "@text",	[REF_HEADERS] = "@headers",
    [REF_BODY] = "[\"body\"]",
};

static const struct {
	const char *name;
	const char *super;
	enum sample_kind kind;
} builtin_classes[] = {
    {"Object", NULL, KIND_OBJECT},	{"String", "Object", KIND_STRING},
    {"Array", "Object", KIND_ARRAY},	{"Hash", "Object", KIND_HASH},
    {"Message", "Object", KIND_OBJECT}, {"Session", "Object", KIND_OBJECT},
    {"Buffer", "Object", KIND_STRING},
};

static uint32_t class_id(struct sample_vm *vm, const char *name)
{
	for (uint32_t i = 1; i <= vm->nclasses; i++)
		if (!strcmp(vm->classes[i].name, name))
			return i;
	return 0;
}

uint32_t sample_class_find_or_add(struct sample_vm *vm, const char *name)
{
	uint32_t id = class_id(vm, name);
	struct sample_class *c;

	if (id || vm->nclasses == SAMPLE_MAX_CLASSES ||
	    strlen(name) >= sizeof(c->name) || !*name)
		return id;
	c = &vm->classes[++vm->nclasses];
	strcpy(c->name, name);
	c->super = class_id(vm, "Object");
	c->kind = KIND_OBJECT;
	return vm->nclasses;
}

static uint64_t rnd(struct sample_vm *vm)
{
	/* xorshift64 */
	vm->rng ^= vm->rng << 13;
	vm->rng ^= vm->rng >> 7;
	vm->rng ^= vm->rng << 17;
	return vm->rng;
}

static size_t obj_size(const struct sample_obj *o)
{
	return sizeof(*o) + o->payload;
}

static struct sample_obj *obj_new(struct sample_vm *vm, const char *cls,
				  size_t payload)
{
	struct sample_obj *o = calloc(1, sizeof(*o));

	if (!o)
		abort(); /* the sample VM has no out-of-memory story */
	o->cls = class_id(vm, cls);
	if (!o->cls)
		o->cls = sample_class_find_or_add(vm, cls);
	o->payload = payload;
	if (payload && !(o->data = malloc(payload)))
		abort();
	if (payload)
		memset(o->data, 'x', payload);
	o->next = vm->all;
	if (vm->all)
		vm->all->prev = o;
	vm->all = o;
	vm->live[o->cls]++;
	vm->live_objects++;
	vm->live_bytes += obj_size(o);
	return o;
}

/* o references `to` by the reference named `name`. */
static void obj_ref(struct sample_obj *o, struct sample_obj *to,
		    enum sample_ref_name name)
{
	if (o->nrefs == o->cap) {
		uint32_t nc = o->cap ? o->cap * 2 : 4;
		void *p = realloc(o->refs, nc * sizeof(*o->refs));
		if (!p)
			abort();
		o->refs = p;
		if (!(p = realloc(o->ref_names, nc * sizeof(*o->ref_names))))
			abort();
		o->ref_names = p;
		o->cap = nc;
	}
	o->ref_names[o->nrefs] = (uint8_t)name;
	o->refs[o->nrefs++] = to;
}

static void obj_free(struct sample_vm *vm, struct sample_obj *o)
{
	if (o->prev)
		o->prev->next = o->next;
	else
		vm->all = o->next;
	if (o->next)
		o->next->prev = o->prev;
	vm->live[o->cls]--;
	vm->live_objects--;
	vm->live_bytes -= obj_size(o);
	free(o->refs);
	free(o->ref_names);
	free(o->data);
	free(o);
}

/* Free a Session and what only it holds (its Buffer). */
static void session_free(struct sample_vm *vm, struct sample_obj *s)
{
	for (uint32_t i = 0; i < s->nrefs; i++)
		obj_free(vm, s->refs[i]);
	obj_free(vm, s);
}

void sample_heap_init(struct sample_vm *vm)
{
	pthread_mutex_init(&vm->heap_lock, NULL);
	pthread_mutex_init(&vm->stats_lock, NULL);
	vm->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)time(NULL);
	for (size_t i = 0;
	     i < sizeof(builtin_classes) / sizeof(*builtin_classes); i++) {
		struct sample_class *c = &vm->classes[++vm->nclasses];
		strcpy(c->name, builtin_classes[i].name);
		c->super = builtin_classes[i].super
			       ? class_id(vm, builtin_classes[i].super)
			       : 0;
		c->kind = builtin_classes[i].kind;
	}
	vm->vm_root = obj_new(vm, "Object", 64);
	vm->globals = obj_new(vm, "Hash", 0);
	vm->leaks = obj_new(vm, "Array", 0);
	obj_ref(vm->vm_root, vm->globals, REF_GLOBALS);
	obj_ref(vm->globals, vm->leaks, REF_LEAKS);
	obj_ref(vm->globals, obj_new(vm, "String", 12), REF_APP);
	sample_publish_census(vm);
}

void sample_heap_free(struct sample_vm *vm)
{
	while (vm->all)
		obj_free(vm, vm->all);
	pthread_mutex_destroy(&vm->heap_lock);
	pthread_mutex_destroy(&vm->stats_lock);
}

void sample_publish_census(struct sample_vm *vm)
{
	pthread_mutex_lock(&vm->stats_lock);
	memcpy(vm->census, vm->live, sizeof(vm->census));
	vm->census_objects = vm->live_objects;
	vm->census_bytes = vm->live_bytes;
	vm->census_classes = vm->nclasses;
	pthread_mutex_unlock(&vm->stats_lock);
}

/* One tick of work; the caller holds heap_lock. */
void sample_tick(struct sample_vm *vm)
{
	struct sample_obj *tmp[64], *s;
	int n = 0;

	/* temporaries: garbage by the end of the tick */
	for (int i = 0; i < 16; i++) {
		struct sample_obj *m = obj_new(vm, "Message", 24);
		struct sample_obj *str =
		    obj_new(vm, "String", 16 + rnd(vm) % 64);
		struct sample_obj *h = obj_new(vm, "Hash", 0);
		obj_ref(m, str, REF_TEXT);
		obj_ref(m, h, REF_HEADERS);
		obj_ref(h, str, REF_BODY);
		tmp[n++] = m;
		tmp[n++] = str;
		tmp[n++] = h;
	}
	for (int i = 0; i < n; i++)
		obj_free(vm, tmp[i]);

	/* the current Session replaces the last one */
	s = obj_new(vm, "Session", 48);
	obj_ref(s, obj_new(vm, "Buffer", 256), REF_BUFFER);
	if (vm->session)
		session_free(vm, vm->session);
	vm->session = s;

	/* the leak */
	for (int l = 0; l < vm->nleak; l++)
		for (unsigned k = 0; k < vm->leak[l].per_tick; k++)
			obj_ref(
			    vm->leaks,
			    obj_new(vm, vm->classes[vm->leak[l].cls].name, 32),
			    REF_UNNAMED); /* an element: named by index */
}

void *sample_mutator_main(void *arg)
{
	struct sample_vm *vm = arg;

	while (!atomic_load(&vm->stop)) {
		struct timespec ts;
		int ms, idle = vm->max_ticks &&
			       atomic_load(&vm->ticks) >= vm->max_ticks;

		if (!idle) {
			pthread_mutex_lock(&vm->heap_lock);
			sample_tick(vm);
			atomic_fetch_add(&vm->ticks, 1);
			sample_publish_census(vm);
			pthread_mutex_unlock(&vm->heap_lock);
		}
		ms = atomic_load(&vm->tick_ms);
		if (idle && ms < 10)
			ms = 10;
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (long)(ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
	}
	return NULL;
}
