/*
 * finish.c - how the graph tools end: the report on stdout, or one message
 * on stderr, and the exit status (part of libvmheap-report).
 */
#include <stdio.h>

#include "vmheap_report.h"

int vmheap_tool_finish(const char *tool, int rc, const char *err,
		       struct vmheap_strbuf *out)
{
	if (rc == 0 && out->failed) {
		err = "out of memory for the report";
		rc = VMHEAP_ENOMEM;
	}
	if (rc != 0) {
		fprintf(stderr, "%s: %s\n", tool, err);
		vmheap_strbuf_release(out);
		return rc > 0 ? 1 : 2;
	}
	rc = vmheap_strbuf_write(out, 1);
	vmheap_strbuf_release(out);
	if (rc < 0) {
		fprintf(stderr, "%s: writing the output: ", tool);
		perror(NULL);
		return 2;
	}
	return 0;
}
