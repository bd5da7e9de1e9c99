/*
 * ruby_peek.c - reading this process's memory at an address that may not
 * be mapped: process_vm_readv on the process itself answers EFAULT where
 * a plain read would raise SIGSEGV.  For the dump child's checks of
 * Ruby's private layouts (ruby_vm_stacks.c, ruby_transient_heap.c).
 */
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ruby-internal.h"

int ruby_peek(uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
		       (ssize_t)len
		   ? 0
		   : -1;
}
