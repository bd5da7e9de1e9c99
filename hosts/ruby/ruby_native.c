/*
 * ruby_native.c - Ruby lines for the malloc tracker's sites.
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
 * The hook is set when the extension loads and removed by the end proc,
 * before the VM that it reads is torn down.
 */
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
	return vmheap_agent_native_location(ruby_location);
}

void ruby_native_stop(void)
{
	vmheap_agent_native_location(NULL);
}
