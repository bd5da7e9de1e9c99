/*
 * run_agent.c - one agent per process under vmheap-run.
 *
 * vmheap-run preloads, with the malloc tracker, a native-only agent
 * (hosts/native: libvmheap-native-agent.so) into any program, so that a
 * C, C++ or Rust program can be dumped from the console.  A VM that
 * embeds an agent of its own (the Ruby extension, vmheap-sample, a
 * program linking libvmheap-agent) is the better host: its agent walks
 * the managed heap too.  So an agent that starts, unless it is that
 * native one, first asks it to step aside through the one function the
 * native agent's library exports, vmheap_run_agent_yield: the native
 * agent stops (waiting for a dump it runs) and removes its discovery
 * file, whose name (vmheap-agent.PID) this agent then takes.  The module
 * is looked for by name first, so that no dlsym fails when it is absent
 * (a failing dlsym leaves a dlerror record that LeakSanitizer reports).
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "agent-internal.h"

#define RUN_AGENT_MODULE "libvmheap-native-agent"

struct search {
	uint64_t self; /* an address of this agent's own code */
	void *handle;
};

static int find_run_agent(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct search *s = arg;
	const char *name = info->dlpi_name, *base;

	(void)size;
	if (!name || !*name)
		return 0;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strncmp(base, RUN_AGENT_MODULE, strlen(RUN_AGENT_MODULE)) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && s->self >= lo &&
		    s->self < lo + ph->p_memsz)
			return 1; /* this agent is the native one itself */
	}
	s->handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	return 1;
}

void agent_run_agent_yield(void)
{
	struct search s = {(uint64_t)(uintptr_t)agent_run_agent_yield, NULL};
	void (*yield)(void);

	dl_iterate_phdr(find_run_agent, &s);
	if (!s.handle)
		return;
	*(void **)&yield = dlsym(s.handle, "vmheap_run_agent_yield");
	if (yield)
		yield();
	dlclose(s.handle);
}
