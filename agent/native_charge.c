/*
 * native_charge.c - what a native stack is charged to, before anyone sees
 * it (system.native.stacks, a dump's native section):
 *
 *   1. vmheap's own memory: a stack whose frames pass through a module
 *      that holds a vmheap agent (this one, the Ruby extension
 *      vmheap_agent.so, libvmheap-agent.so, libvmheap-native-agent.so) is
 *      the agent's, the allocation tracer's or a dump's, whatever VM line
 *      was running: its location becomes
 *      VMHEAP_NATIVE_OWN ("<vmheap>", line 0), which the tools count
 *      apart (vmheap_own_bytes) and never list as a stack.  When the agent
 *      is linked into the program itself (a static host such as
 *      vmheap-sample), its code cannot be told from the program's by
 *      address, and nothing is charged so.
 *   2. the VM's housekeeping: a stack whose frames pass through a code
 *      range a host registered (vmheap_agent_native_activity: the Ruby
 *      host registers rb_postponed_job_flush, which runs the transient
 *      heap's evacuation and deferred finalizers) is charged to that
 *      activity's label, line 0, not to the VM line that the job
 *      happened to interrupt.  A label the host's location hook gave
 *      already (the Ruby host says "<ruby: gc>" while GC runs) stays.
 *
 * Frames are what the tracker took (VMHEAP_NATIVE_DEPTH, 16 by default):
 * a frame deeper than that is not seen.  Stacks that become the same
 * (same frames and location) are merged.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "agent-internal.h"
#include "vmheap_native.h"

#define MAX_ACTIVITIES 8

static struct activity {
	const char *label;
	uint64_t lo, hi;
} activities[MAX_ACTIVITIES];
static _Atomic size_t nactivities;
static pthread_mutex_t activity_lock = PTHREAD_MUTEX_INITIALIZER;

/* The extent [start, start + size) of the dynamic symbol at `fn`. */
static int extent_of(const void *fn, uint64_t *lo, uint64_t *hi)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	if (!dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) ||
	    sym == NULL || info.dli_saddr != fn || sym->st_size == 0)
		return -1;
	*lo = (uint64_t)(uintptr_t)fn;
	*hi = *lo + sym->st_size;
	return 0;
}

VMHEAP_EXPORT int vmheap_agent_native_activity(const char *label,
					       const void *fn)
{
	uint64_t lo, hi;
	int rc = VMHEAP_AGENT_ELIMIT;

	if (label == NULL || fn == NULL || extent_of(fn, &lo, &hi) != 0)
		return VMHEAP_EINVAL;
	pthread_mutex_lock(&activity_lock);
	size_t n = atomic_load(&nactivities);
	if (n < MAX_ACTIVITIES) {
		activities[n] = (struct activity){label, lo, hi};
		atomic_store(&nactivities, n + 1);
		rc = 0;
	}
	pthread_mutex_unlock(&activity_lock);
	return rc;
}

/* ------------------------------------------------------ vmheap's own */

/* The modules whose code is a vmheap agent: the one this code is in
 * (unless it is the main program: an agent linked into the VM), and
 * those vmheap builds under these names, of which a process may hold
 * more than one (`vmheap-run` preloads libvmheap-native-agent.so, whose
 * copy of this code writes a Ruby program's exit dump, while the Ruby
 * agent, vmheap_agent.so or vmheap_attach.so, made its own thread). */
static const char *const agent_modules[] = {
    "libvmheap-native-agent.so", "libvmheap-agent.so", "vmheap_agent.so",
    "vmheap_attach.so"};

#define OWN_MAX 8

struct own {
	uint64_t lo[OWN_MAX], hi[OWN_MAX]; /* executable ranges */
	size_t n;
};

/* path names one of agent_modules (any directory, any version suffix). */
static int agent_module(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(agent_modules) / sizeof(*agent_modules);
	     i++) {
		size_t len = strlen(agent_modules[i]);
		if (!strncmp(base, agent_modules[i], len) &&
		    (base[len] == '\0' || base[len] == '.'))
			return 1;
	}
	return 0;
}

static int find_own(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct own *o = arg;
	uint64_t me = (uint64_t)(uintptr_t)find_own, lo = UINT64_MAX, hi = 0;
	(void)size;
	/* The main program (listed with no name): an agent linked into it
	 * has the VM's code around it. */
	if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uint64_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (hi == 0 || o->n == OWN_MAX)
		return 0;
	if ((me >= lo && me < hi) || agent_module(info->dlpi_name)) {
		o->lo[o->n] = lo;
		o->hi[o->n] = hi;
		o->n++;
	}
	return 0;
}

static int is_own(const struct own *o, const vmheap_native_stack *s)
{
	for (uint32_t k = 0; k < s->depth; k++)
		for (size_t m = 0; m < o->n; m++)
			/* A return address: the call is the byte before it. */
			if (s->frames[k] - 1 >= o->lo[m] &&
			    s->frames[k] - 1 < o->hi[m])
				return 1;
	return 0;
}

static const char *activity_of(const vmheap_native_stack *s, size_t na)
{
	for (uint32_t k = 0; k < s->depth; k++)
		for (size_t a = 0; a < na; a++)
			if (s->frames[k] - 1 >= activities[a].lo &&
			    s->frames[k] - 1 < activities[a].hi)
				return activities[a].label;
	return NULL;
}

/* A housekeeping label that the VM's hook gave: "<...>" at line 0. */
static int labelled(const vmheap_native_stack *s)
{
	return s->vm_file != NULL && s->vm_file[0] == '<' && s->vm_line == 0;
}

static int by_where(const void *x, const void *y)
{
	const vmheap_native_stack *a = x, *b = y;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	int c = memcmp(a->frames, b->frames, a->depth * sizeof(*a->frames));
	if (c)
		return c;
	c = strcmp(a->vm_file ? a->vm_file : "", b->vm_file ? b->vm_file : "");
	if (c)
		return c;
	return a->vm_line < b->vm_line ? -1 : a->vm_line > b->vm_line;
}

/* A stack with its leak counts, to sort and merge both together. */
struct stack_leaks {
	vmheap_native_stack stack;
	vmheap_native_leaks leaks;
};

static int by_where_leaks(const void *x, const void *y)
{
	return by_where(&((const struct stack_leaks *)x)->stack,
			&((const struct stack_leaks *)y)->stack);
}

static void add_leaks(vmheap_native_leaks *to, const vmheap_native_leaks *l)
{
	to->leaked_count += l->leaked_count;
	to->leaked_bytes += l->leaked_bytes;
	to->indirect_count += l->indirect_count;
	to->indirect_bytes += l->indirect_bytes;
	to->possible_count += l->possible_count;
	to->possible_bytes += l->possible_bytes;
	to->reachable_count += l->reachable_count;
	to->reachable_bytes += l->reachable_bytes;
}

static void add_stack(vmheap_native_stack *to, const vmheap_native_stack *v)
{
	to->live_count += v->live_count;
	to->live_bytes += v->live_bytes;
	to->allocs += v->allocs;
	to->frees += v->frees;
	to->alloc_bytes += v->alloc_bytes;
}

/* Merge v[0..n) and leaks[0..n) together; the stacks' count after, or n
 * unmerged when no memory is left. */
static size_t merge_with_leaks(vmheap_native_stack *v, vmheap_native_leaks *l,
			       size_t n)
{
	struct stack_leaks *p = malloc(n * sizeof(*p));
	if (!p)
		return n;
	for (size_t i = 0; i < n; i++)
		p[i] = (struct stack_leaks){v[i], l[i]};
	qsort(p, n, sizeof(*p), by_where_leaks);
	size_t m = 1;
	for (size_t i = 1; i < n; i++) {
		if (by_where(&p[m - 1].stack, &p[i].stack) == 0) {
			add_stack(&p[m - 1].stack, &p[i].stack);
			add_leaks(&p[m - 1].leaks, &p[i].leaks);
			continue;
		}
		p[m++] = p[i];
	}
	for (size_t i = 0; i < m; i++) {
		v[i] = p[i].stack;
		l[i] = p[i].leaks;
	}
	free(p);
	return m;
}

size_t agent_native_charge(vmheap_native_stack *v, vmheap_native_leaks *leaks,
			   size_t n)
{
	size_t na = atomic_load(&nactivities);
	int changed = 0;

	/* Found again each time: an agent module may load after the first
	 * call (a Ruby program requires its agent after the preloaded one
	 * started). */
	struct own own = {.n = 0};
	dl_iterate_phdr(find_own, &own);
	for (size_t i = 0; i < n; i++) {
		const char *label = NULL;
		if (own.n != 0 && is_own(&own, &v[i]))
			label = VMHEAP_NATIVE_OWN;
		else if (na && !labelled(&v[i]))
			label = activity_of(&v[i], na);
		if (label != NULL) {
			v[i].vm_file = label;
			v[i].vm_line = 0;
			changed = 1;
		}
	}
	if (!changed || n < 2)
		return n;
	if (leaks)
		return merge_with_leaks(v, leaks, n);
	/* Stacks that now read the same are one. */
	qsort(v, n, sizeof(*v), by_where);
	size_t m = 1;
	for (size_t i = 1; i < n; i++) {
		if (by_where(&v[m - 1], &v[i]) == 0) {
			add_stack(&v[m - 1], &v[i]);
			continue;
		}
		v[m++] = v[i];
	}
	return m;
}
