/*
 * client.c - the client API towards a spec_vm: spec_vm_client for the
 * test's thread, and calls that never fail the test themselves, for
 * threads of a load test (see vmheap_spec.h).
 */
#include <stdio.h>

#include "vmheap_spec.h"

vmheap_client *spec_connect(const struct spec_vm *vm, int timeout_ms)
{
	vmheap_client *c = NULL;
	int rc = vmheap_client_connect_addr(&c, "127.0.0.1", vm->info.port,
					    vm->info.token, timeout_ms);

	if (rc < 0) {
		fprintf(stderr, "connect to pid %ld: %s\n", (long)vm->pid,
			c ? vmheap_client_error(c) : vmheap_agent_strerror(rc));
		if (c)
			vmheap_client_close(c);
		return NULL;
	}
	return c;
}

vmheap_client *spec_vm_client(const struct spec_vm *vm)
{
	vmheap_client *c = NULL;
	int rc = vmheap_client_connect(&c, &vm->info, 10000);

	ck_assert_msg(rc == 0, "connect to pid %ld: %s", (long)vm->pid,
		      vmheap_client_error(c));
	vmheap_client_set_timeout(c, 20000);
	return c;
}

int64_t spec_get_uint(vmheap_client *c, const char *var)
{
	struct spec_reply rep;
	int64_t v = -1;

	if (spec_client_call(c, "get", var, NULL, &rep) < 0) {
		spec_reply_release(&rep);
		return -1;
	}
	if (rep.ok && rep.value.type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		v = (int64_t)rep.value.via.u64;
	spec_reply_release(&rep);
	return v;
}

void spec_wait_uint(vmheap_client *c, const char *var, int64_t n,
		    int timeout_ms)
{
	struct spec_wait w;
	int64_t v;

	spec_wait_begin(&w, timeout_ms);
	while ((v = spec_get_uint(c, var)) < n) {
		ck_assert_msg(v >= 0, "get %s failed: %s", var,
			      vmheap_client_error(c));
		spec_wait_or_fail(&w, "%s to reach %lld (it is %lld)", var,
				  (long long)n, (long long)v);
	}
}

void spec_vm_wait_ticks(const struct spec_vm *vm, int64_t n, int timeout_ms)
{
	vmheap_client *c = spec_connect(vm, timeout_ms);
	int64_t now;

	ck_assert_msg(c != NULL, "cannot connect to the sample VM %ld",
		      (long)vm->pid);
	now = spec_get_uint(c, "sample.ticks");
	ck_assert_msg(now >= 0, "get sample.ticks: %s", vmheap_client_error(c));
	spec_wait_uint(c, "sample.ticks", now + n, timeout_ms);
	vmheap_client_close(c);
}
