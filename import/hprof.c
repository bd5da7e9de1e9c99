/*
 * hprof.c - the JVM's HPROF heap dump into a vmheap dump (part of
 * libvmheap-import).  Not written yet.
 */
#include "import-internal.h"

int imp_hprof(struct imp_input *in, struct vmheap_import_result *res)
{
	return imp_fail(res, in->opt->name ? in->opt->name : "<input>",
			VMHEAP_EINVAL, "HPROF import is not implemented yet");
}
