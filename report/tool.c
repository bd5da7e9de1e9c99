/*
 * tool.c - the version line and the usage error of every tool (see
 * vmheap_tool.h).  Part of libvmheap-report; vmheap-run compiles it too.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap_tool.h"

int vmheap_tool_version(const char *prog)
{
	if (printf("%s %s\n", prog, VMHEAP_VERSION) < 0 || fflush(stdout))
		return 1;
	return 0;
}

void vmheap_tool_usage_error(const char *prog, const char *usage,
			     const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(usage);

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s%s", usage, n && usage[n - 1] == '\n' ? "" : "\n");
	exit(2);
}
