/*
 * graph_load.c - a dump named on a graph tool's command line, read into a
 * heap graph with its reader kept for the header (part of
 * libvmheap-report).
 */
#include <stdio.h>

#include "vmheap_report.h"

int vmheap_graph_load(const char *arg, vmheap_reader **r, vmheap_graph **g,
		      char *err, size_t errsz)
{
	uint64_t size;
	int regular;
	int rc = vmheap_dump_open(r, arg, &size, &regular, err, errsz);

	*g = NULL;
	if (rc == 0) {
		rc = vmheap_graph_read(g, *r);
		if (rc < 0) {
			snprintf(err, errsz, "%s", vmheap_graph_error(*g));
			vmheap_graph_free(*g);
			*g = NULL;
		}
	} else if (*r)
		snprintf(err, errsz, "%s", vmheap_reader_error(*r));
	if (rc < 0) {
		vmheap_reader_free(*r);
		*r = NULL;
	}
	return rc;
}
