/*
 * paths.c - where the build and the sources are (see vmheap_spec.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "vmheap_spec.h"

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static char *ring(void)
{
	static char bufs[8][1024];
	static unsigned next;

	return bufs[next++ % 8];
}

const char *spec_bin(const char *name)
{
	char *b = ring();

	snprintf(b, 1024, "%s/bin/%s", env_or("VMHEAP_BUILD", "build"), name);
	return b;
}

const char *spec_build(const char *rel)
{
	char *b = ring();

	snprintf(b, 1024, "%s/%s", env_or("VMHEAP_BUILD", "build"), rel);
	return b;
}

const char *spec_src(const char *rel)
{
	char *b = ring();

	snprintf(b, 1024, "%s/%s", env_or("VMHEAP_SRC", "."), rel);
	return b;
}
