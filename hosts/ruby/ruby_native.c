/*
 * ruby_native.c - Ruby lines for the malloc tracker's native stacks.
 *
 * Under vmheap-run the tracker accounts each malloc to its C stack; this
 * hook adds the Ruby file:line running on the allocating thread, as mwrap
 * does, so that a leak through Fiddle.malloc or a C extension points at
 * the Ruby line that called it.  The tracker calls it inside malloc, on
 * any thread:
 *
 *   - ruby_thread_has_gvl_p() is false on a thread that is not a Ruby
 *     thread or runs without the GVL (a blocking region): no location.
 *     (In 3.1 it is true also for a Ruby thread that waits for the GVL
 *     outside a blocking region, at its start: such a thread reads only
 *     its own frames below, which no other thread writes);
 *   - rb_sourcefile() and rb_sourceline() read the thread's own control
 *     frames: the Ruby-level frame nearest the top, its iseq's path
 *     string (no new object) and the line of its pc (a lookup in the
 *     iseq's line table).  Neither allocates a Ruby object nor calls
 *     malloc, raises or takes a lock (under gdb: no malloc, calloc or
 *     realloc ran inside this hook in 5,682 calls).
 *
 * Memory the VM allocates for its own housekeeping is charged to that,
 * not to the Ruby line that happened to run (a row such as
 * `... < <ruby: gc>`, with its C stack):
 *
 *   - while GC runs (marking, sweeping, a lazy sweep step inside an
 *     allocation, objects' free functions) the hook says "<ruby: gc>":
 *     rb_during_gc() is public API (ruby/internal/intern/gc.h), reads one
 *     flag of the VM's object space, and is right at any stack depth,
 *     where GC's own functions are static, so unnamed in Debian's
 *     stripped libruby;
 *   - postponed jobs (rb_postponed_job_flush: moving Hashes' and Arrays'
 *     tables out of the transient heap, deferred finalizers, profilers'
 *     jobs) run at an interrupt check of whatever Ruby line ran: the
 *     agent charges a native stack that passes through
 *     rb_postponed_job_flush (found by its dynamic symbol, which every
 *     MRI since 2.0 exports) to "<ruby: postponed job>"
 *     (vmheap_agent_native_activity).  No flag says "in a postponed job"
 *     outside the VM's private structures; the frame is within a few of
 *     malloc (six for an evacuated Hash), well inside the 16 the tracker
 *     takes.
 *
 * The hook is set when the extension loads (kept by the agent for a
 * tracker that `set config.native.track true` loads later) and removed
 * by the end proc, before the VM that it reads is torn down.
 */
#include <dlfcn.h>
#include <ruby.h>

#include "ruby-internal.h"

/* Exported by libruby, declared in none of its public headers. */
int ruby_thread_has_gvl_p(void);

static int ruby_location(const char **file, uint32_t *line)
{
	const char *f;
	int l;

	if (!ruby_thread_has_gvl_p())
		return 0;
	if (rb_during_gc()) {
		*file = "<ruby: gc>";
		*line = 0;
		return 1;
	}
	f = rb_sourcefile();
	if (f == NULL)
		return 0;
	l = rb_sourceline();
	*file = f;
	*line = l > 0 ? (uint32_t)l : 0;
	return 1;
}

int ruby_native_init(void)
{
	void *flush = dlsym(RTLD_DEFAULT, "rb_postponed_job_flush");

	/* kept by the agent when no tracker is loaded yet: it hands the
	 * hook over if `set config.native.track true` loads one */
	int rc = vmheap_agent_native_location(ruby_location);
	if (flush != NULL)
		vmheap_agent_native_activity("<ruby: postponed job>", flush);
	return rc;
}

void ruby_native_stop(void)
{
	vmheap_agent_native_location(NULL);
}
