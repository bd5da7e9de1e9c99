/*
 * pprof.c - vmheap-histo --by site --format pprof: the census by class
 * and allocation site as a pprof profile (report/vmheap_pprof.h), a
 * sample per row, every row (--top does not cut a profile).
 */
#include <stdint.h>

#include "histo-internal.h"
#include "vmheap_pprof.h"

/* A census figure as a pprof value (saturated ones stay the largest). */
static int64_t value(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

void histo_render_pprof(const struct histo_options *o, vmheap_reader *r,
			vmheap_census *c, struct vmheap_strbuf *out)
{
	size_t n;
	struct vmheap_census_row *rows = vmheap_census_rows(c, &n);
	vmheap_pprof *p = vmheap_pprof_new();
	struct vmheap_strbuf cm = VMHEAP_STRBUF_INIT;
	int rc = p ? 0 : VMHEAP_ENOMEM;

	(void)o;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = vmheap_pprof_add_site(p, rows[i].name, rows[i].site,
					   value(rows[i].count),
					   value(rows[i].bytes));
	if (rc == 0) {
		vmheap_pprof_set_time(
		    p, vmheap_pprof_nanos(vmheap_reader_header(r)->time_ms), 0);
		vmheap_strbuf_addf(&cm, "vmheap-histo --by site: objects by "
					"allocation site (label class) of ");
		vmheap_strbuf_add_dump_origin(&cm, r);
		rc = cm.failed ? VMHEAP_ENOMEM : vmheap_pprof_comment(p, cm.buf);
	}
	if (rc == 0)
		rc = vmheap_pprof_write(p, out);
	if (rc < 0)
		out->failed = 1;
	vmheap_strbuf_release(&cm);
	vmheap_pprof_free(p);
}
