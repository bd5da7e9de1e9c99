/*
 * ruby_vm.c - a real Ruby VM with the vmheap agent loaded, running a
 * script of the test, in a fresh directory (its dump and discovery
 * directory).  Under SAN=1 the extension is ASan-built and ruby gets the
 * ASan runtime preloaded (VMHEAP_ASAN_RUNTIME, set by spec/lib.mk).
 */
#include <stdio.h>

#include "vmheap_spec.h"

void spec_ruby_start(struct spec_ruby *vm, const char *script_text)
{
	char script[512];
	size_t e = 0;

	vm->dir = spec_mkdtemp("ruby");
	snprintf(script, sizeof(script), "%s/script.rb", vm->dir);
	spec_write_text(script, script_text);
	snprintf(vm->env_dir, sizeof(vm->env_dir), "VMHEAP_AGENT_DIR=%s",
		 vm->dir);
	snprintf(vm->env_tmp, sizeof(vm->env_tmp), "VMHEAP_AGENT_TMPDIR=%s",
		 vm->dir);
	vm->env[e++] = vm->env_dir;
	vm->env[e++] = vm->env_tmp;
#ifdef VMHEAP_ASAN_RUNTIME
	vm->env[e++] = "LD_PRELOAD=" VMHEAP_ASAN_RUNTIME;
	vm->env[e++] = "ASAN_OPTIONS=detect_leaks=0";
#endif
	vm->env[e] = NULL;
	const char *const argv[] = {"ruby", "-I", spec_build("ruby"),
				    "-rvmheap_agent", script, NULL};
	struct spec_spawn sp = {.argv = argv, .env = vm->env};
	spec_proc_start(&vm->p, &sp, 1);
}
