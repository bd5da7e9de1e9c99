/*
 * ruby_vm.c - a real Ruby VM with the vmheap agent loaded, running a
 * script of the test, in a fresh directory (its dump and discovery
 * directory).  Under SAN=1 the extension is ASan-built and ruby gets the
 * ASan runtime preloaded (VMHEAP_ASAN_RUNTIME, set by spec/lib.mk).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_spec.h"

void spec_ruby_start_with(struct spec_ruby *vm, const char *script_text,
			  const struct spec_ruby_opts *o)
{
	static const struct spec_ruby_opts none;
	const char *argv[48], *env[40];
	char inc[PATH_MAX];
	struct spec_spawn sp = {0};
	size_t n = 0, e = 0;

	if (!o)
		o = &none;
	memset(vm, 0, sizeof(*vm));
	snprintf(vm->dir, sizeof(vm->dir), "%s", spec_mkdtemp("ruby"));
	snprintf(vm->script, sizeof(vm->script), "%s/program.rb", vm->dir);
	spec_write_text(vm->script, script_text);
	snprintf(vm->env_dir, sizeof(vm->env_dir), "VMHEAP_AGENT_DIR=%s",
		 vm->dir);
	snprintf(vm->env_tmp, sizeof(vm->env_tmp), "VMHEAP_AGENT_TMPDIR=%s",
		 vm->dir);
	vm->env[0] = vm->env_dir;
	vm->env[1] = vm->env_tmp;
	vm->env[2] = NULL;
	env[e++] = vm->env_dir;
	env[e++] = vm->env_tmp;
	env[e++] = "VMHEAP_AGENT_PORT";
	env[e++] = "VMHEAP_AGENT_VERBOSE";
#ifdef VMHEAP_ASAN_RUNTIME
	env[e++] = "LD_PRELOAD=" VMHEAP_ASAN_RUNTIME;
	env[e++] = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1";
#endif
	for (const char *const *v = o->env; v && *v; v++) {
		ck_assert_msg(e < 39, "spec_ruby_start: too much environment");
		env[e++] = *v;
	}
	env[e] = NULL;
	argv[n++] = "ruby";
	argv[n++] = "-I";
	/* absolute: it runs in its own directory */
	ck_assert_msg(realpath(spec_build("ruby"), inc), "%s: %s",
		      spec_build("ruby"), strerror(errno));
	argv[n++] = inc;
	argv[n++] = "-rvmheap_agent";
	argv[n++] = vm->script;
	for (const char *const *a = o->args; a && *a; a++) {
		ck_assert_msg(n < 47, "spec_ruby_start: too many arguments");
		argv[n++] = *a;
	}
	argv[n] = NULL;
	sp.argv = argv;
	sp.env = env;
	sp.dir = vm->dir;
	spec_proc_start(&vm->p, &sp, !o->stderr_apart);
	if (o->ready)
		ck_assert_msg(spec_proc_wait_for(&vm->p, o->ready, 60000),
			      "ruby did not say \"%s\": %.*s", o->ready,
			      (int)vm->p.len, vm->p.buf);
}

void spec_ruby_start(struct spec_ruby *vm, const char *script_text)
{
	spec_ruby_start_with(vm, script_text, NULL);
}
