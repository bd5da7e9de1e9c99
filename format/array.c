/*
 * array.c - growing the malloc'ed arrays that libvmheap and the tools
 * append to one element at a time.
 */
#include <stdint.h>
#include <stdlib.h>

#include "vmheap.h"

void *vmheap_array_grow(void *items, size_t *cap, size_t size, size_t first)
{
	size_t ncap = *cap ? *cap * 2 : first;
	void *grown;

	if (ncap < *cap || (size && ncap > SIZE_MAX / size))
		return NULL;
	grown = realloc(items, ncap * size);
	if (grown)
		*cap = ncap;
	return grown;
}
