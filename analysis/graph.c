/*
 * graph.c - constructors, accessors and the class table of vmheap_graph,
 * and its reverse references.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

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
	return g->error;
}

int vmheap_graph_read(vmheap_graph **out, vmheap_reader *r, char *err,
		      size_t err_len)
{
	return graph_build(out, r, err, err_len);
}

int vmheap_graph_open_path(vmheap_graph **out, const char *path, char *err,
			   size_t err_len)
{
	vmheap_reader *r = NULL;
	int rc = vmheap_reader_open_path(&r, path);

	*out = NULL;
	if (rc < 0) {
		if (err && err_len)
			snprintf(err, err_len, "%s",
				 r ? vmheap_reader_error(r)
				   : vmheap_strerror(rc));
		vmheap_reader_free(r);
		return rc;
	}
	rc = graph_build(out, r, err, err_len);
	vmheap_reader_free(r);
	return rc;
}

void vmheap_graph_free(vmheap_graph *g)
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
	free(g->rev_off);
	free(g->rev);
	free(g->classes);
	free(g->class_hash);
	free(g->names);
	free(g->roots);
	free(g->idom);
	free(g->retained);
	free(g->path_parent);
	free(g->root_by_obj);
	free(g);
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

/* ------------------------------------------------------------ classes */

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dULL;
	x ^= x >> 33;
	return x;
}

uint32_t graph_class_lookup(const vmheap_graph *g, uint64_t id)
{
	size_t mask = g->class_hash_cap - 1;

	if (!g->class_hash_cap)
		return UINT32_MAX;
	for (size_t h = mix64(id) & mask;; h = (h + 1) & mask) {
		uint32_t slot = g->class_hash[h];
		if (slot == 0)
			return UINT32_MAX;
		if (g->classes[slot - 1].id == id)
			return slot - 1;
	}
}

static void class_hash_put(uint32_t *table, size_t cap, uint64_t id,
			   uint32_t index)
{
	size_t mask = cap - 1, h = mix64(id) & mask;

	while (table[h])
		h = (h + 1) & mask;
	table[h] = index + 1;
}

uint32_t graph_class_intern(vmheap_graph *g, uint64_t id)
{
	uint32_t c = graph_class_lookup(g, id);

	if (c != UINT32_MAX)
		return c;
	if (g->nclasses >= UINT32_MAX - 1)
		return UINT32_MAX;
	if (2 * (g->nclasses + 1) > g->class_hash_cap) {
		size_t cap = g->class_hash_cap ? g->class_hash_cap * 2 : 64;
		uint32_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return UINT32_MAX;
		for (size_t k = 0; k < g->nclasses; k++)
			class_hash_put(t, cap, g->classes[k].id, (uint32_t)k);
		free(g->class_hash);
		g->class_hash = t;
		g->class_hash_cap = cap;
	}
	if (g->nclasses == g->classes_cap) {
		void *p = vmheap_array_grow(g->classes, &g->classes_cap,
					    sizeof(*g->classes), 64);
		if (!p)
			return UINT32_MAX;
		g->classes = p;
	}
	c = (uint32_t)g->nclasses++;
	g->classes[c] = (struct graph_class){.id = id};
	class_hash_put(g->class_hash, g->class_hash_cap, id, c);
	return c;
}

const char *vmheap_graph_class_name(const vmheap_graph *g, uint64_t class_id,
				    size_t *len)
{
	uint32_t c = graph_class_lookup(g, class_id);

	if (c == UINT32_MAX || !g->classes[c].has_name) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = g->classes[c].name_len;
	return g->names + g->classes[c].name_off;
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

int vmheap_graph_index_referrers(vmheap_graph *g)
{
	uint32_t n = g->n, m = g->fwd_off[n];
	uint32_t *off, *rev;

	if (g->rev_off)
		return 0;
	off = calloc((size_t)n + 1, sizeof(*off));
	rev = malloc((m ? m : 1) * sizeof(*rev));
	if (!off || !rev) {
		free(off);
		free(rev);
		return graph_fail(g, VMHEAP_ENOMEM,
				  "out of memory for the reverse references");
	}
	for (uint32_t k = 0; k < m; k++)
		off[g->fwd[k] + 1]++;
	for (uint32_t i = 0; i < n; i++)
		off[i + 1] += off[i];
	/* fill with off[t] as cursor (sources in increasing order), then
	 * shift back */
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t k = g->fwd_off[s]; k < g->fwd_off[s + 1]; k++)
			rev[off[g->fwd[k]]++] = s;
	memmove(off + 1, off, (size_t)n * sizeof(*off));
	off[0] = 0;
	g->rev_off = off;
	g->rev = rev;
	return 0;
}

uint32_t vmheap_graph_referrers(const vmheap_graph *g, uint32_t i,
				const uint32_t **sources)
{
	if (!g->rev_off) {
		*sources = NULL;
		return 0;
	}
	*sources = g->rev + g->rev_off[i];
	return g->rev_off[i + 1] - g->rev_off[i];
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
