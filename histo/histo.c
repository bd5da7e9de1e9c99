/*
 * histo.c - read one dump into a census (vmheap-histo's single pass).
 */
#include <stdio.h>

#include "histo-internal.h"

int histo_run(const struct histo_options *o, struct vmheap_strbuf *out,
	      char *err, size_t errsz)
{
	vmheap_reader *r = NULL;
	vmheap_census *c = NULL;
	uint64_t size;
	int regular, rc;

	if (o->retained)
		return histo_run_retained(o, out, err, errsz);
	rc = vmheap_dump_open(&r, o->path, &size, &regular, err, errsz);
	if (rc < 0) {
		if (r)
			snprintf(err, errsz, "%s", vmheap_reader_error(r));
		vmheap_reader_free(r);
		return rc;
	}
	rc = vmheap_census_scan(&o->report, r, o->path, size,
				o->by_kind   ? VMHEAP_GROUP_KIND
				: o->by_site ? VMHEAP_GROUP_SITE
					     : VMHEAP_GROUP_CLASS,
				&c, err, errsz);
	if (rc == 0) {
		histo_render(o, r, c, out);
		if (out->failed) {
			snprintf(err, errsz, "out of memory for the report");
			rc = VMHEAP_ENOMEM;
		}
	}
	vmheap_census_free(c);
	vmheap_reader_free(r);
	return rc;
}
