/*
 * native_vm.c - a program under vmheap-run, the native-only host (see
 * vmheap_spec.h).
 */
#include <stdio.h>
#include <string.h>

#include "vmheap_spec.h"

void spec_native_start(struct spec_native *vm, const char *dir,
		       const char *const *argv, const char *const *env)
{
	char tmpdir[300], dumpdir[300], err[700], where[256];
	const char *all[24] = {tmpdir, dumpdir, "VMHEAP_AGENT_PORT"};
	struct spec_spawn sp = {0};
	size_t n = 3;

	for (; env && *env; env++) {
		ck_assert_msg(n < 23,
			      "spec_native_start: too much environment");
		all[n++] = *env;
	}
	/* dir may be vm->dir */
	snprintf(where, sizeof(where), "%s",
		 dir ? dir : spec_mkdtemp("native"));
	memset(vm, 0, sizeof(*vm));
	snprintf(vm->dir, sizeof(vm->dir), "%s", where);
	snprintf(tmpdir, sizeof(tmpdir), "VMHEAP_AGENT_TMPDIR=%s", vm->dir);
	snprintf(dumpdir, sizeof(dumpdir), "VMHEAP_AGENT_DIR=%s", vm->dir);
	sp.argv = argv;
	sp.env = all;
	sp.dir = vm->dir;
	spec_proc_start(&vm->p, &sp, 1);
	ck_assert_msg(spec_proc_wait_for(&vm->p, "ready\n", 60000),
		      "%s did not say ready: %s", argv[0], vm->p.buf);
	ck_assert_msg(spec_discovery_wait(vm->dir, vm->p.pid, &vm->info, 60000,
					  err, sizeof(err)) == 0,
		      "discovery: %s", err);
}
