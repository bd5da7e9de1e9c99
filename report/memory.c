/*
 * memory.c - the process's memory figures of dump headers (RSS and the C
 * allocator's, FORMAT.md section 5) for people: how much of the RSS the
 * heap's objects explain, how much malloc holds, and, between two dumps,
 * a warning when RSS or malloc grew while the heap did not.
 */
#include <stdio.h>

#include "vmheap_report.h"

#define MIB (1024u * 1024u)

static void signed_bytes(char *buf, size_t len, int64_t v)
{
	char b[96];

	vmheap_format_bytes(b, sizeof(b),
			    (unsigned long long)(v < 0 ? -(uint64_t)v : (uint64_t)v));
	snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", b);
}

void vmheap_strbuf_add_memory_line(struct vmheap_strbuf *sb,
				   const struct vmheap_header *h,
				   uint64_t heap_bytes)
{
	char rss[96], heap[96], in_use[96], fr[96], mm[96];
	const struct vmheap_process_memory *m = &h->memory;

	if (!h->has_memory)
		return;
	vmheap_format_bytes(rss, sizeof(rss), m->rss);
	vmheap_format_bytes(heap, sizeof(heap), heap_bytes);
	vmheap_format_bytes(in_use, sizeof(in_use), m->malloc_in_use);
	vmheap_format_bytes(fr, sizeof(fr), m->malloc_free);
	vmheap_format_bytes(mm, sizeof(mm), m->malloc_mmap);
	vmheap_strbuf_addf(sb, "memory: RSS %s; the heap's objects %s", rss,
			   heap);
	if (m->rss)
		vmheap_strbuf_addf(sb, " (%.1f%% of RSS)",
				   100.0 * (double)heap_bytes / (double)m->rss);
	vmheap_strbuf_addf(sb, "; malloc holds %s in use, %s free, %s mmapped\n",
			   in_use, fr, mm);
}

void vmheap_strbuf_add_memory_delta(struct vmheap_strbuf *sb,
				    struct vmheap_strbuf *warn,
				    const struct vmheap_header *a,
				    const struct vmheap_header *b,
				    uint64_t old_heap, uint64_t new_heap)
{
	char rss[128], mal[128], heap[128];

	if (!a->has_memory || !b->has_memory)
		return;
	int64_t drss = (int64_t)(b->memory.rss - a->memory.rss);
	int64_t dmal = (int64_t)((b->memory.malloc_in_use + b->memory.malloc_mmap) -
				 (a->memory.malloc_in_use + a->memory.malloc_mmap));
	int64_t dheap = (int64_t)(new_heap - old_heap);
	signed_bytes(rss, sizeof(rss), drss);
	signed_bytes(mal, sizeof(mal), dmal);
	signed_bytes(heap, sizeof(heap), dheap);
	if (sb)
		vmheap_strbuf_addf(sb,
				   "memory: RSS %s; malloc (in use and mmapped) "
				   "%s; the heap's objects %s\n",
				   rss, mal, heap);
	/* a figure points outside the heap when it grew by more than 1 MiB
	 * and by more than twice the heap's objects */
	int rss_out = drss > (int64_t)MIB && drss > 2 * (dheap > 0 ? dheap : 0);
	int mal_out = dmal > (int64_t)MIB && dmal > 2 * (dheap > 0 ? dheap : 0);
	if (!warn || (!rss_out && !mal_out))
		return;
	vmheap_strbuf_addf(warn, "vmheap-diff: warning: ");
	if (rss_out && mal_out)
		vmheap_strbuf_addf(warn, "RSS grew by %s and malloc by %s",
				   rss + 1, mal + 1);
	else if (rss_out)
		vmheap_strbuf_addf(warn, "RSS grew by %s", rss + 1);
	else
		vmheap_strbuf_addf(warn, "malloc grew by %s", mal + 1);
	vmheap_strbuf_addf(
	    warn,
	    " (more than 1 MiB and more than twice the heap's growth) while "
	    "the VM heap's objects grew by %s: the growth is outside the VM "
	    "heap; find it with vmheap-diff --native (start the VM with "
	    "vmheap-run and `set config.native.track true` before the "
	    "dumps)\n",
	    heap[0] == '+' ? heap + 1 : heap);
}
