/*
 * dump_origin.c - how the tools' reports describe a dump and
 * their total line: the dump's name and origin in text, the same as
 * JSON fields, and the label of the total row (part of libvmheap-report).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vmheap_report.h"

void vmheap_strbuf_add_dump_origin(struct vmheap_strbuf *sb, vmheap_reader *r)
{
	const struct vmheap_header *h = vmheap_reader_header(r);

	/* an imported dump may not know the VM's version: no gap then */
	vmheap_strbuf_addf(sb, "%s (vm %s%s%s, pid %" PRIu64 ")",
			   vmheap_reader_name(r), h->vm_name,
			   h->vm_version[0] ? " " : "", h->vm_version, h->pid);
}

void vmheap_strbuf_add_dump_json(struct vmheap_strbuf *sb, vmheap_reader *r,
				 const struct vmheap_totals *t)
{
	const struct vmheap_header *h = vmheap_reader_header(r);

	vmheap_strbuf_add(sb, "\"file\":", 7);
	vmheap_strbuf_add_json(sb, vmheap_reader_name(r));
	vmheap_strbuf_add(sb, ",\"vm\":", 6);
	vmheap_strbuf_add_json(sb, h->vm_name);
	vmheap_strbuf_add(sb, ",\"vm_version\":", 14);
	vmheap_strbuf_add_json(sb, h->vm_version);
	vmheap_strbuf_addf(sb,
			   ",\"pid\":%" PRIu64 ",\"time\":%" PRId64
			   ",\"time_ms\":%" PRId64,
			   h->pid, h->time, h->time_ms);
	if (t)
		vmheap_strbuf_addf(sb,
				   ",\"objects\":%" PRIu64 ",\"bytes\":%" PRIu64,
				   t->objects, t->bytes);
}

/* The length of the singular of `noun`'s first word (a plural): "classes"
 * -> "class", "kinds" -> "kind", "sites" -> "site". */
static size_t singular_len(const char *noun)
{
	size_t w = strcspn(noun, " ");

	if (w > 4 && !strncmp(noun + w - 4, "sses", 4))
		return w - 2;
	if (w > 1 && noun[w - 1] == 's')
		return w - 1;
	return w;
}

void vmheap_report_total_label(char *buf, size_t size, const char *total,
			       size_t n, const char *noun, size_t shown)
{
	if (n == 1) {
		size_t w = strcspn(noun, " ");
		snprintf(buf, size, "%s (1 %.*s%s)", total,
			 (int)singular_len(noun), noun, noun + w);
		return;
	}
	if (shown < n)
		snprintf(buf, size, "%s (%zu %s, top %zu shown)", total, n,
			 noun, shown);
	else
		snprintf(buf, size, "%s (%zu %s)", total, n, noun);
}
