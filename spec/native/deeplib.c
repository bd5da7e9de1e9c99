/*
 * deeplib.c - a shared library that spec/native/semantics.c opens with
 * dlopen(RTLD_NOW | RTLD_DEEPBIND): its malloc, realloc and free bind to
 * glibc's own (its dependency libc.so.6 comes before the global scope,
 * where the tracker is), so it frees and reallocs the program's blocks,
 * and makes blocks that the program frees, without the tracker.
 */
#include <stdlib.h>
#include <string.h>

#define PUBLIC __attribute__((visibility("default")))

PUBLIC void deep_free(void *p)
{
	free(p);
}

PUBLIC void *deep_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

PUBLIC void *deep_malloc(size_t n)
{
	void *p = malloc(n);
	if (p != NULL)
		memset(p, 0x5a, n);
	return p;
}

/* Which free the library's calls reach (compared with the program's). */
PUBLIC void *deep_free_address(void)
{
	return (void *)free;
}
