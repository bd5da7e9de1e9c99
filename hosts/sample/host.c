/*
 * host.c - the sample VM's side of the agent's host interface: stop the
 * world (take the heap lock the mutator holds for each tick), walk the
 * heap into a dump writer, fork for dumps, and its own variables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sample-internal.h"

static const char *const kind_names[] = {"object", "string", "array", "hash"};

/* Root kinds and root names: string ids in the dump; the names of
 * references are string NAME_BASE + their enum sample_ref_name. */
enum {
	ROOT_VM = 1,
	ROOT_GLOBALS = 2,
	ROOT_STACK = 3,
	ROOT_NAME_GLOBALS = 4, /* "$globals" */
	ROOT_NAME_STACK = 5,   /* the mutator thread */
	NAME_BASE = 16,
};

static int run_stopped(void *ctx, int (*fn)(void *arg), void *arg)
{
	struct sample_vm *vm = ctx;
	int rc;

	pthread_mutex_lock(&vm->heap_lock);
	rc = fn(arg);
	pthread_mutex_unlock(&vm->heap_lock);
	return rc;
}

/* Called inside run_stopped: the heap lock is held by this thread, and
 * in the child this thread is the only one and still holds it. */
static pid_t fork_stopped(void *ctx)
{
	(void)ctx;
	return fork();
}

static int prepare_child(void *ctx, int gc)
{
	/* The sample frees its garbage at the end of every tick, so at a
	 * safe point everything on the heap is live: nothing to collect. */
	(void)ctx;
	(void)gc;
	return 0;
}

/* The strings a dump names roots and references with. */
static int add_strings(vmheap_writer *w)
{
	static const struct {
		uint64_t id;
		const char *text;
	} strings[] = {
	    {ROOT_VM, "vm"},
	    {ROOT_GLOBALS, "globals"},
	    {ROOT_STACK, "stack"},
	    {ROOT_NAME_GLOBALS, "$globals"},
	    {ROOT_NAME_STACK, "thread \"mutator\""},
	};
	int rc = 0;

	for (size_t i = 0; !rc && i < sizeof(strings) / sizeof(*strings); i++)
		rc = vmheap_writer_add_string(w, strings[i].id, strings[i].text,
					      strlen(strings[i].text));
	for (int n = 1; !rc && n < REF_NAMES; n++)
		rc = vmheap_writer_add_string(w, NAME_BASE + (uint64_t)n,
					      sample_ref_names[n],
					      strlen(sample_ref_names[n]));
	return rc;
}

/* The object record of o: its references with their names (an Array's by
 * index); `refs` and `names` have room for o->nrefs. */
static int add_object(struct sample_vm *vm, vmheap_writer *w,
		      const struct sample_obj *o, uint64_t *refs,
		      int64_t *names)
{
	int named = 0;

	for (uint32_t i = 0; i < o->nrefs; i++) {
		refs[i] = (uint64_t)(uintptr_t)o->refs[i];
		if (vm->classes[o->cls].kind == KIND_ARRAY)
			names[i] = vmheap_edge_name_index(i);
		else if (o->ref_names[i] != REF_UNNAMED)
			names[i] = NAME_BASE + (int64_t)o->ref_names[i];
		else
			names[i] = VMHEAP_EDGE_NAME_NONE;
		named |= names[i] != VMHEAP_EDGE_NAME_NONE;
	}
	return vmheap_writer_add_object_named(
	    w, (uint64_t)(uintptr_t)o, o->cls, sizeof(*o) + o->payload,
	    vm->classes[o->cls].kind, refs, named ? names : NULL, o->nrefs, 0);
}

static int walk_heap(void *ctx, vmheap_writer *w)
{
	struct sample_vm *vm = ctx;
	uint64_t *refs = NULL;
	int64_t *names = NULL;
	size_t cap = 0;
	int rc = add_strings(w);

	for (uint32_t i = 1; !rc && i <= vm->nclasses; i++) {
		const struct sample_class *c = &vm->classes[i];
		rc = vmheap_writer_add_class(w, i, c->name, strlen(c->name),
					     c->super, 0);
	}
	if (!rc && vm->walk_delay_ms > 0) {
		/* --walk-delay-ms: a slow walk, so tests can act mid-dump */
		struct timespec ts = {vm->walk_delay_ms / 1000,
				      (long)(vm->walk_delay_ms % 1000) *
					  1000000L};
		nanosleep(&ts, NULL);
	}
	for (struct sample_obj *o = vm->all; !rc && o; o = o->next) {
		if (o->nrefs > cap) {
			void *p = realloc(refs, o->nrefs * sizeof(*refs));
			if (!p) {
				rc = VMHEAP_ENOMEM;
				break;
			}
			refs = p;
			if (!(p = realloc(names, o->nrefs * sizeof(*names)))) {
				rc = VMHEAP_ENOMEM;
				break;
			}
			names = p;
			cap = o->nrefs;
		}
		rc = add_object(vm, w, o, refs, names);
	}
	free(refs);
	free(names);
	if (!rc)
		rc = vmheap_writer_add_root(w, ROOT_VM,
					    (uint64_t)(uintptr_t)vm->vm_root);
	if (!rc)
		rc = vmheap_writer_add_root_named(
		    w, ROOT_GLOBALS, (uint64_t)(uintptr_t)vm->globals,
		    ROOT_NAME_GLOBALS);
	if (!rc && vm->session)
		rc = vmheap_writer_add_root_named(
		    w, ROOT_STACK, (uint64_t)(uintptr_t)vm->session,
		    ROOT_NAME_STACK);
	return rc;
}

/* ------------------------------------------------------------ variables */

static const struct {
	const char *name, *type;
} host_vars[] = {
    {"sample.census", "map"},	    {"sample.fork", "int"},
    {"sample.fork_agent", "int"},   {"sample.fork_status", "int"},
    {"sample.tick_ms", "int"},	    {"sample.ticks", "int"},
    {"sample.write_mb", "int"},
    {"system.memory.bytes", "int"}, {"system.memory.count", "int"},
};

static void
list_vars(void *ctx, void (*add)(void *arg, const char *name, const char *type),
	  void *arg)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(host_vars) / sizeof(*host_vars); i++)
		add(arg, host_vars[i].name, host_vars[i].type);
}

static int get_var(void *ctx, const char *name, vmheap_value_writer *pk)
{
	struct sample_vm *vm = ctx;

	if (!strcmp(name, "sample.ticks")) {
		vmheap_value_write_uint(pk, atomic_load(&vm->ticks));
	} else if (!strcmp(name, "sample.tick_ms")) {
		vmheap_value_write_int(pk, atomic_load(&vm->tick_ms));
	} else if (!strcmp(name, "sample.write_mb")) {
		vmheap_value_write_int(pk, atomic_load(&vm->write_mb));
	} else if (!strcmp(name, "sample.fork_status")) {
		vmheap_value_write_int(pk, atomic_load(&vm->fork_status));
	} else if (!strcmp(name, "sample.fork") ||
		   !strcmp(name, "sample.fork_agent")) {
		vmheap_value_write_int(pk, atomic_load(&vm->fork_child));
	} else if (!strcmp(name, "sample.census") ||
		   !strcmp(name, "system.memory.count") ||
		   !strcmp(name, "system.memory.bytes")) {
		/* the census published at the end of the last tick: the
		 * heap as a dump sees it, without waiting for the heap lock */
		pthread_mutex_lock(&vm->stats_lock);
		if (!strcmp(name, "sample.census")) {
			uint32_t n = 0;
			for (uint32_t i = 1; i <= vm->census_classes; i++)
				n += vm->census[i] > 0;
			vmheap_value_write_map(pk, n);
			for (uint32_t i = 1; i <= vm->census_classes; i++) {
				if (!vm->census[i])
					continue;
				vmheap_value_write_str(
				    pk, vm->classes[i].name,
				    strlen(vm->classes[i].name));
				vmheap_value_write_uint(pk, vm->census[i]);
			}
		} else {
			vmheap_value_write_uint(pk, name[14] == 'c'
							? vm->census_objects
							: vm->census_bytes);
		}
		pthread_mutex_unlock(&vm->stats_lock);
	} else {
		return VMHEAP_AGENT_ENOTFOUND;
	}
	return 0;
}

/* An integer from an int or a decimal string (what a person types). */
static int want_int(const vmheap_value *v, long long *out)
{
	char buf[32], *end;
	const char *s;
	int64_t i;
	size_t len;

	if (vmheap_value_int(v, &i) == 0 && i >= 0 && i <= INT32_MAX) {
		*out = (long long)i;
		return 0;
	}
	if (vmheap_value_str(v, &s, &len) == 0 && len > 0 &&
	    len < sizeof(buf)) {
		memcpy(buf, s, len);
		buf[len] = '\0';
		errno = 0;
		*out = strtoll(buf, &end, 10);
		if (!errno && !*end && *out >= 0 && *out <= INT32_MAX)
			return 0;
	}
	return -1;
}

/*
 * `set sample.fork MS`: fork the VM the way an application would (from
 * this thread, with no safe point), as in Rubinius issue #3035.  The
 * child checks that its copy of the agent is stale, lives MS ms, and
 * exits through exit() (so at-exit hooks run in it).  Exit status 0
 * means the child saw a stale agent.
 *
 * `set sample.fork_agent MS`: the same, but the child drops the stale
 * agent and starts a fresh one of its own (its own port, token and
 * discovery file) for MS ms, then stops it.  Exit status 4: the fresh
 * agent did not start.
 */
static int test_fork(struct sample_vm *vm, long long ms, int fresh,
		     vmheap_value_writer *pk, char *err, size_t errlen)
{
	pid_t pid;

	if (atomic_load(&vm->fork_child) && atomic_load(&vm->fork_status) < 0) {
		snprintf(err, errlen,
			 "a forked child (pid %d) is still running",
			 atomic_load(&vm->fork_child));
		return VMHEAP_AGENT_EBUSY;
	}
	atomic_store(&vm->fork_status, -1);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return VMHEAP_AGENT_ESYS;
	}
	if (pid == 0) {
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
		int stale = vm->agent && vmheap_agent_is_stale(vm->agent);

		if (fresh) {
			vmheap_agent_stop(vm->agent);
			vm->agent = NULL;
			if (vmheap_agent_start(&vm->agent, &vm->cfg, vm->host) <
			    0)
				exit(4);
		}
		nanosleep(&ts, NULL);
		if (fresh)
			vmheap_agent_stop(vm->agent);
		exit(stale ? 0 : 3);
	}
	atomic_store(&vm->fork_child, pid);
	vmheap_value_write_int(pk, pid);
	return 0;
}

static int set_var(void *ctx, const char *name, const vmheap_value *value,
		   vmheap_value_writer *pk, char *err, size_t errlen)
{
	struct sample_vm *vm = ctx;
	long long v;

	if (!strcmp(name, "sample.write_mb")) {
		if (want_int(value, &v) < 0 ||
		    sample_writer_set(vm, v, err, errlen) < 0) {
			if (want_int(value, &v) < 0)
				snprintf(err, errlen,
					 "sample.write_mb takes MiB from 0 to "
					 "%d",
					 SAMPLE_WRITE_MAX_MB);
			return VMHEAP_AGENT_ETYPE;
		}
		vmheap_value_write_int(pk, v);
		return 0;
	}
	if (!strcmp(name, "sample.tick_ms") || !strcmp(name, "sample.fork") ||
	    !strcmp(name, "sample.fork_agent")) {
		if (want_int(value, &v) < 0) {
			snprintf(
			    err, errlen,
			    "%s takes a non-negative integer (milliseconds)",
			    name);
			return VMHEAP_AGENT_ETYPE;
		}
		if (name[7] == 'f')
			return test_fork(vm, v, name[11] == '_', pk, err,
					 errlen);
		atomic_store(&vm->tick_ms, (int)v);
		vmheap_value_write_int(pk, v);
		return 0;
	}
	for (size_t i = 0; i < sizeof(host_vars) / sizeof(*host_vars); i++)
		if (!strcmp(host_vars[i].name, name)) {
			snprintf(err, errlen, "%s is read-only", name);
			return VMHEAP_AGENT_EREADONLY;
		}
	return VMHEAP_AGENT_ENOTFOUND;
}

void sample_host_init(struct vmheap_agent_host *h, struct sample_vm *vm)
{
	memset(h, 0, sizeof(*h));
	h->vm_name = "sample";
	h->vm_version = "1.0";
	h->ctx = vm;
	h->run_stopped = run_stopped;
	h->walk_heap = walk_heap;
	h->fork_stopped = fork_stopped;
	h->prepare_child = prepare_child;
	h->kind_names = kind_names;
	h->kind_count = sizeof(kind_names) / sizeof(*kind_names);
	h->list_vars = list_vars;
	h->get_var = get_var;
	h->set_var = set_var;
	h->edge_names = 1;
}
