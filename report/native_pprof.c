/*
 * native_pprof.c - a dump's native sites as pprof samples
 * (vmheap_pprof_add_native): every frame symbolized in parts, the
 * allocator's frames at the leaf dropped, the VM's line as the root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_pprof.h"

/* The allocator and its internals by name: glibc's and C++'s entry
 * points, the tracker's (vmheap_native_*) and MRI's wrappers, whose
 * callers are the sites people fix. */
static const char *const allocator_names[] = {
    "malloc", "calloc", "realloc", "reallocarray", "free", "memalign",
    "aligned_alloc", "posix_memalign", "valloc", "pvalloc", "strdup",
    "strndup", "__libc_malloc", "__libc_calloc", "__libc_realloc",
    "__libc_memalign", "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
    "ruby_mimmalloc", "ruby_mimfree", "rb_alloc_tmp_buffer",
    "rb_alloc_tmp_buffer_with_count", "rb_alloc_tmp_buffer2",
};

/* Prefixes of MRI's allocation wrappers: ruby_xmalloc, ruby_xmalloc2,
 * ruby_xcalloc, ruby_xrealloc(2), objspace_xmalloc0, objspace_xcalloc,
 * objspace_xrealloc, rb_xmalloc_mul_add, rb_xcalloc_mul_add... */
static const char *const allocator_prefixes[] = {
    "ruby_xmalloc", "ruby_xcalloc", "ruby_xrealloc", "objspace_xmalloc",
    "objspace_xcalloc", "objspace_xrealloc", "objspace_malloc",
    "rb_xmalloc_mul_add", "rb_xcalloc_mul_add", "rb_xrealloc_mul_add",
    "vmheap_native_",
};

int vmheap_pprof_allocator_frame(const char *function)
{
	for (size_t i = 0;
	     i < sizeof(allocator_names) / sizeof(allocator_names[0]); i++)
		if (!strcmp(function, allocator_names[i]))
			return 1;
	for (size_t i = 0;
	     i < sizeof(allocator_prefixes) / sizeof(allocator_prefixes[0]);
	     i++)
		if (!strncmp(function, allocator_prefixes[i],
			     strlen(allocator_prefixes[i])))
			return 1;
	return 0;
}

/* Is s vmheap's own memory (FORMAT.md section 15)? */
static int is_own(const struct vmheap_dump_stack *s)
{
	return s->vm_file && s->vm_line == 0 &&
	       s->vm_file_len == sizeof(VMHEAP_NATIVE_OWN) - 1 &&
	       !memcmp(s->vm_file, VMHEAP_NATIVE_OWN, s->vm_file_len);
}

/* The frames of site s, leaf first, into f (names in y and vm). */
static size_t site_frames(const struct vmheap_native *n, vmheap_symbolizer *sym,
			  const struct vmheap_dump_stack *s,
			  struct vmheap_symbol *y, char *vm, size_t vmsz,
			  char *vmfile, size_t vmfilesz,
			  struct vmheap_pprof_frame *f)
{
	size_t depth = s->depth, k = 0, first = 0;

	for (size_t d = 0; d < depth; d++)
		vmheap_symbolize_frame(sym, n, &s->frames[d], &y[d]);
	/* the allocator's frames at the leaf go, but never every frame:
	 * named ones, and in MRI's library those without a symbol, its
	 * static internals (objspace_xmalloc0...) that the exported
	 * wrappers jump to, up to the first function with a name */
	while (first + 1 < depth &&
	       (y[first].named
		    ? vmheap_pprof_allocator_frame(y[first].function)
		    : y[first].runtime))
		first++;
	for (size_t d = first; d < depth; d++)
		f[k++] = (struct vmheap_pprof_frame){y[d].function, y[d].file,
						     y[d].line};
	if (s->vm_file && s->vm_file_len) {
		/* the VM's line: "file:line" (a label such as "<ruby: gc>"
		 * when its line is 0), the root of the stack */
		snprintf(vmfile, vmfilesz, "%.*s", (int)s->vm_file_len,
			 s->vm_file);
		size_t len = strlen(vmfile);
		if (s->vm_line)
			snprintf(vm, vmsz, "%.*s:%llu", (int)s->vm_file_len,
				 s->vm_file, (unsigned long long)s->vm_line);
		else if (len > 2 && vmfile[0] == '<' && vmfile[len - 1] == '>')
			/* pprof reads <...> as C++ template arguments and
			 * shortens them away: "<ruby: gc>" is "ruby: gc" */
			snprintf(vm, vmsz, "%.*s", (int)(len - 2), vmfile + 1);
		else
			snprintf(vm, vmsz, "%s", vmfile);
		f[k++] = (struct vmheap_pprof_frame){
		    vm, s->vm_line ? vmfile : "", (int64_t)s->vm_line};
	}
	return k;
}

int vmheap_pprof_add_native(vmheap_pprof *p, const struct vmheap_native *n,
			    vmheap_symbolizer *sym, int sign)
{
	struct vmheap_pprof_frame f[VMHEAP_MAX_STACK_FRAMES + 1];
	struct vmheap_symbol *y = calloc(VMHEAP_MAX_STACK_FRAMES, sizeof(*y));
	size_t vmsz = VMHEAP_MAX_STRING_BYTES + 32;
	char *vm = malloc(vmsz), *vmfile = malloc(vmsz);
	int rc = y && vm && vmfile ? 0 : VMHEAP_ENOMEM;

	for (size_t i = 0; rc == 0 && i < n->nstacks; i++) {
		const struct vmheap_dump_stack *s = &n->stacks[i];
		if (is_own(s))
			continue;
		size_t k = site_frames(n, sym, s, y, vm, vmsz, vmfile, vmsz, f);
		struct vmheap_pprof_frame unknown = {"<unknown>", "", 0};
		rc = vmheap_pprof_add(p, k ? f : &unknown, k ? k : 1,
				      sign * (int64_t)s->live_count,
				      sign * (int64_t)s->live_bytes);
	}
	free(y);
	free(vm);
	free(vmfile);
	return rc;
}
