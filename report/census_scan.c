/*
 * census_scan.c - a tool's census of one opened dump, with the tool's
 * threads and progress bar (part of libvmheap-report; vmheap-histo,
 * vmheap-diff and vmheap-report read their censuses through it).
 */
#include <stdio.h>

#include "vmheap_report.h"

int vmheap_census_scan(const struct vmheap_report_options *o, vmheap_reader *r,
		       const char *name, uint64_t size,
		       enum vmheap_census_group group, vmheap_census **c,
		       char *err, size_t errsz)
{
	struct vmheap_scan_options sopt;
	struct vmheap_progress bar;
	int rc;

	vmheap_report_scan_options(o, name, size, &bar, &sopt);
	rc = vmheap_census_new(c, group, vmheap_scan_threads(&sopt));
	if (rc < 0) {
		snprintf(err, errsz, "out of memory");
		return rc;
	}
	rc = vmheap_census_read(*c, r, &sopt);
	vmheap_progress_clear(&bar);
	if (rc < 0)
		snprintf(err, errsz, "%s", vmheap_census_error(*c));
	return rc;
}
