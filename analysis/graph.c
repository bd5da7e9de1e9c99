/*
 * graph.c - constructors and accessors of vmheap_graph: objects, forward
 * references, roots.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "graph-internal.h"

#define HUGE_PAGE ((uintptr_t)2 << 20)

void graph_both_halves(void *(*fn)(void *), void *a, void *b, int big)
{
	pthread_t tid;
	int threaded = big && sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
		       pthread_create(&tid, NULL, fn, b) == 0;

	fn(a);
	if (threaded)
		pthread_join(tid, NULL);
	else
		fn(b);
}

void graph_huge_pages(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t end = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);

	if (p && end > start)
		(void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
	(void)p;
	(void)bytes;
#endif
}

/* Linux 6.1's synchronous collapse; older headers lack the number, older
 * kernels answer EINVAL (ignored: a hint). */
#if defined(__linux__) && !defined(MADV_COLLAPSE)
#define MADV_COLLAPSE 25
#endif

void graph_collapse_huge_pages(void *p, size_t bytes)
{
#ifdef MADV_COLLAPSE
	uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t end = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);

	if (p && end > start)
		(void)madvise((void *)start, end - start, MADV_COLLAPSE);
#else
	(void)p;
	(void)bytes;
#endif
}

int graph_fail(vmheap_graph *g, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->error, sizeof(g->error), fmt, ap);
	va_end(ap);
	return code;
}

const char *vmheap_graph_error(const vmheap_graph *g)
{
	return g ? g->error : "out of memory";
}

int vmheap_graph_read(vmheap_graph **out, vmheap_reader *r)
{
	if (!out)
		return VMHEAP_EINVAL;
	if (!r) {
		*out = NULL;
		if (!(*out = calloc(1, sizeof(**out))))
			return VMHEAP_ENOMEM;
		snprintf((*out)->error, sizeof((*out)->error),
			 "no reader to build the graph from");
		return VMHEAP_EINVAL;
	}
	return graph_build(out, r);
}

int vmheap_graph_open_path(vmheap_graph **out, const char *path)
{
	vmheap_reader *r = NULL;
	int rc;

	if (!out)
		return VMHEAP_EINVAL;
	rc = vmheap_reader_open_path(&r, path);
	if (rc < 0) {
		/* The reader's reason, in a failed graph. */
		if ((*out = calloc(1, sizeof(**out))))
			snprintf((*out)->error, sizeof((*out)->error), "%s",
				 vmheap_reader_error(r));
		vmheap_reader_free(r);
		return *out ? rc : VMHEAP_ENOMEM;
	}
	rc = graph_build(out, r);
	vmheap_reader_free(r);
	return rc;
}

void vmheap_graph_free(vmheap_graph *g)
{
	graph_release(g);
	free(g);
}

void graph_release(vmheap_graph *g)
{
	if (!g)
		return;
	free(g->ids);
	free(g->class_of);
	free(g->bytes32);
	free(g->big);
	free(g->order);
	free(g->dir);
	free(g->fwd_off);
	free(g->fwd);
	free(g->edge_name);
	free(g->name_table);
	free(g->root_name);
	free(g->rev_off);
	free(g->rev);
	free(g->classes);
	free(g->class_hash);
	free(g->class_objects);
	free(g->names);
	free(g->roots);
	free(g->idom);
	free(g->retained);
	free(g->path_parent);
	free(g->path_edge);
	free(g->root_by_obj);
}

/* ------------------------------------------------------------ objects */

uint32_t vmheap_graph_object_count(const vmheap_graph *g)
{
	return g->n;
}

uint64_t vmheap_graph_object_id(const vmheap_graph *g, uint32_t i)
{
	return g->ids[i];
}

uint64_t vmheap_graph_object_class(const vmheap_graph *g, uint32_t i)
{
	return g->classes[g->class_of[i]].id;
}

uint64_t vmheap_graph_object_bytes(const vmheap_graph *g, uint32_t i)
{
	size_t lo = 0, hi = g->nbig;

	if (g->bytes32[i] != GRAPH_BYTES_BIG)
		return g->bytes32[i];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->big[mid].object < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return g->big[lo].bytes;
}

uint64_t vmheap_graph_total_bytes(const vmheap_graph *g)
{
	return g->total_bytes;
}

int vmheap_graph_saturated(const vmheap_graph *g)
{
	return g->saturated;
}

int vmheap_graph_has_sites(const vmheap_graph *g)
{
	return g->has_sites;
}

/* ------------------------------------------------------------ references */

uint64_t vmheap_graph_reference_count(const vmheap_graph *g)
{
	return g->fwd_off[g->n];
}

uint64_t vmheap_graph_missing_references(const vmheap_graph *g)
{
	return g->missing_refs;
}

uint32_t vmheap_graph_references(const vmheap_graph *g, uint32_t i,
				 const uint32_t **targets)
{
	*targets = g->fwd + g->fwd_off[i];
	return g->fwd_off[i + 1] - g->fwd_off[i];
}

/* ------------------------------------------------------------ roots */

size_t vmheap_graph_root_count(const vmheap_graph *g)
{
	return g->nroots;
}

const struct vmheap_graph_root *vmheap_graph_root(const vmheap_graph *g,
						  size_t k)
{
	return &g->roots[k];
}

uint64_t vmheap_graph_missing_roots(const vmheap_graph *g)
{
	return g->missing_roots;
}

int vmheap_graph_unreachable(const vmheap_graph *g, uint64_t *count,
			     uint64_t *bytes)
{
	if (!g->have_unreachable)
		return VMHEAP_ESTATE;
	if (count)
		*count = g->unreachable;
	if (bytes)
		*bytes = g->unreachable_bytes;
	return 0;
}
