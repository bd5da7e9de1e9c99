/*
 * pprof.c - vmheap-diff --by site --format pprof: the class diff by
 * allocation site as a pprof profile (report/vmheap_pprof.h), a sample
 * per changed class at a site with its change (negative when it shrank).
 */
#include "diff-internal.h"
#include "vmheap_pprof.h"

void diff_render_pprof(const struct diff_options *o,
		       const struct diff_result *res,
		       struct vmheap_strbuf *out)
{
	vmheap_pprof *p = vmheap_pprof_new();
	struct vmheap_strbuf cm = VMHEAP_STRBUF_INIT;
	int rc = p ? 0 : VMHEAP_ENOMEM;

	(void)o;
	for (size_t i = 0; rc == 0 && i < res->ndeltas; i++)
		rc = vmheap_pprof_add_site(p, res->deltas[i].name,
					   res->deltas[i].site,
					   res->deltas[i].count_delta,
					   res->deltas[i].bytes_delta);
	if (rc == 0) {
		int64_t t0 = vmheap_pprof_nanos(
			    vmheap_reader_header(res->old_d.reader)->time_ms),
			t1 = vmheap_pprof_nanos(
			    vmheap_reader_header(res->new_d.reader)->time_ms);
		vmheap_pprof_set_time(p, t1, t0 && t1 > t0 ? t1 - t0 : 0);
		vmheap_strbuf_addf(&cm, "vmheap-diff --by site: objects by "
					"allocation site (label class), ");
		vmheap_strbuf_add_dump_origin(&cm, res->new_d.reader);
		vmheap_strbuf_addf(&cm, " minus ");
		vmheap_strbuf_add_dump_origin(&cm, res->old_d.reader);
		rc = cm.failed ? VMHEAP_ENOMEM : vmheap_pprof_comment(p, cm.buf);
	}
	if (rc == 0)
		rc = vmheap_pprof_write(p, out);
	if (rc < 0)
		out->failed = 1;
	vmheap_strbuf_release(&cm);
	vmheap_pprof_free(p);
}
