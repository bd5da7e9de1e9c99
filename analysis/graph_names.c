/*
 * graph_names.c - the names of references and roots (format 1.1): one
 * 4-byte code per reference, kept only when the dump names some, and the
 * queries of vmheap_graph.h on them.
 *
 * A code is GRAPH_NAME_NONE, an element index below GRAPH_NAME_INDEX with
 * that bit set (no table entry), or 1 + a position in g->name_table,
 * where each distinct text has one entry once the build is over (two
 * string records with one text share a code, so that path shapes compare
 * codes).
 */
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

static uint64_t hash_value(int64_t v)
{
	uint64_t h = (uint64_t)v * 0x9e3779b97f4a7c15ULL;

	return h ^ (h >> 29);
}

static int grow_codes(vmheap_graph *g, struct graph_name_codes *c)
{
	size_t cap = c->cap ? 2 * c->cap : 256;
	uint32_t *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return VMHEAP_ENOMEM;
	for (size_t k = 0; k < g->nname_table; k++) {
		size_t h = hash_value(g->name_table[k].value) & (cap - 1);
		while (tab[h])
			h = (h + 1) & (cap - 1);
		tab[h] = (uint32_t)k + 1;
	}
	free(c->table);
	c->table = tab;
	c->cap = cap;
	return 0;
}

int graph_name_code(vmheap_graph *g, struct graph_name_codes *c, int64_t v,
		    uint32_t *code)
{
	size_t h;

	if (v == 0) {
		*code = GRAPH_NAME_NONE;
		return 0;
	}
	if (v < 0 && vmheap_edge_name_index_of(v) < GRAPH_NAME_INDEX) {
		*code =
		    GRAPH_NAME_INDEX | (uint32_t)vmheap_edge_name_index_of(v);
		return 0;
	}
	if (c->last_code && c->last_value == v) {
		*code = c->last_code;
		return 0;
	}
	if (2 * (g->nname_table + 1) > c->cap && grow_codes(g, c) < 0)
		return VMHEAP_ENOMEM;
	for (h = hash_value(v) & (c->cap - 1); c->table[h];
	     h = (h + 1) & (c->cap - 1))
		if (g->name_table[c->table[h] - 1].value == v) {
			*code = c->table[h];
			goto found;
		}
	if (g->nname_table >= GRAPH_NAME_INDEX - 1)
		return graph_fail(g, VMHEAP_ELIMIT,
				  "more than %u distinct reference names",
				  (unsigned)(GRAPH_NAME_INDEX - 2));
	if (g->nname_table == g->name_table_cap) {
		void *p = vmheap_array_grow(g->name_table, &g->name_table_cap,
					    sizeof(*g->name_table), 64);
		if (!p)
			return VMHEAP_ENOMEM;
		g->name_table = p;
	}
	g->name_table[g->nname_table] = (struct graph_name){.value = v};
	c->table[h] = (uint32_t)++g->nname_table;
	*code = c->table[h];
found:
	c->last_value = v;
	c->last_code = *code;
	return 0;
}

/* The first string record of `id`, or NULL. */
static const struct graph_string *find_string(const struct graph_string *s,
					      size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && s[lo].id == id ? &s[lo] : NULL;
}

/* A name table entry while equal texts are merged. */
struct by_text {
	const char *text; /* NULL: no text (never merged) */
	size_t len;
	uint32_t pos;
};

/* Entries with text by text, then position; the others after, by
 * position. */
static int compare_texts(const void *a, const void *b)
{
	const struct by_text *p = a, *q = b;

	if (!p->text != !q->text)
		return p->text ? -1 : 1;
	if (p->text) {
		size_t n = p->len < q->len ? p->len : q->len;
		int d = memcmp(p->text, q->text, n);
		if (d)
			return d;
		if (p->len != q->len)
			return p->len < q->len ? -1 : 1;
	}
	return p->pos < q->pos ? -1 : p->pos > q->pos;
}

static void remap(uint32_t *codes, size_t n, const uint32_t *to)
{
	for (size_t k = 0; k < n; k++)
		if (codes[k] && !(codes[k] & GRAPH_NAME_INDEX))
			codes[k] = to[codes[k]];
}

int graph_names_resolve(vmheap_graph *g, struct graph_name_codes *c,
			const struct graph_string *strings, size_t nstrings)
{
	size_t n = g->nname_table, merged = 0;
	struct by_text *order;
	uint32_t *to;

	free(c->table);
	c->table = NULL;
	for (size_t k = 0; k < n; k++) {
		struct graph_name *x = &g->name_table[k];
		const struct graph_string *s =
		    x->value > 0
			? find_string(strings, nstrings, (uint64_t)x->value)
			: NULL;
		if (s) {
			x->has_text = 1;
			x->off = s->off;
			x->len = s->len;
		}
	}
	if (n < 2)
		return 0;
	order = malloc(n * sizeof(*order));
	to = malloc((n + 1) * sizeof(*to));
	if (!order || !to) {
		free(order);
		free(to);
		return VMHEAP_ENOMEM;
	}
	for (size_t k = 0; k < n; k++) {
		const struct graph_name *x = &g->name_table[k];
		order[k] =
		    (struct by_text){x->has_text ? g->names + x->off : NULL,
				     x->len, (uint32_t)k};
	}
	qsort(order, n, sizeof(*order), compare_texts);
	to[0] = 0;
	for (size_t k = 0, head = 0; k < n; k++) {
		const struct by_text *x = &order[k], *h = &order[head];
		if (k && x->text && h->text && x->len == h->len &&
		    !memcmp(x->text, h->text, x->len))
			merged++;
		else
			head = k;
		to[x->pos + 1] = order[head].pos + 1;
	}
	if (merged) {
		if (g->edge_name)
			remap(g->edge_name, g->fwd_off[g->n], to);
		if (g->root_name)
			remap(g->root_name, g->nroots, to);
	}
	free(order);
	free(to);
	return 0;
}

uint32_t graph_path_shape_name(const vmheap_graph *g, uint32_t i)
{
	uint32_t code;
	const struct graph_name *x;

	if (!g->path_edge || g->path_parent[i] == VMHEAP_GRAPH_ROOT ||
	    g->path_parent[i] == VMHEAP_GRAPH_NONE)
		return GRAPH_NAME_NONE;
	code = g->edge_name[g->path_edge[i]];
	if (code == GRAPH_NAME_NONE)
		return code;
	if (code & GRAPH_NAME_INDEX)
		return GRAPH_NAME_ELEMENT;
	x = &g->name_table[code - 1];
	if (x->value < 0 || (x->has_text && x->len && g->names[x->off] == '['))
		return GRAPH_NAME_ELEMENT;
	return code;
}

uint32_t graph_root_name_code(const vmheap_graph *g, size_t k)
{
	return g->root_name ? g->root_name[k] : GRAPH_NAME_NONE;
}

/* ------------------------------------------------------------ queries */

static int describe(const vmheap_graph *g, uint32_t code,
		    struct vmheap_graph_name *out)
{
	const struct graph_name *x;

	memset(out, 0, sizeof(*out));
	if (code == GRAPH_NAME_NONE)
		return out->type = VMHEAP_GRAPH_NAME_NONE;
	if (code & GRAPH_NAME_INDEX) {
		out->index = code & ~GRAPH_NAME_INDEX;
		return out->type = VMHEAP_GRAPH_NAME_INDEX;
	}
	x = &g->name_table[code - 1];
	if (x->value < 0) {
		out->index = vmheap_edge_name_index_of(x->value);
		return out->type = VMHEAP_GRAPH_NAME_INDEX;
	}
	out->string_id = (uint64_t)x->value;
	if (!x->has_text)
		return out->type = VMHEAP_GRAPH_NAME_UNKNOWN;
	out->text = g->names + x->off;
	out->len = x->len;
	return out->type = VMHEAP_GRAPH_NAME_TEXT;
}

int vmheap_graph_has_edge_names(const vmheap_graph *g)
{
	return g->edge_name != NULL;
}

int vmheap_graph_reference_name(const vmheap_graph *g, uint32_t i, uint32_t k,
				struct vmheap_graph_name *out)
{
	return describe(g, g->edge_name ? g->edge_name[g->fwd_off[i] + k] : 0,
			out);
}

int vmheap_graph_edge_name(const vmheap_graph *g, uint32_t from, uint32_t to,
			   struct vmheap_graph_name *out)
{
	if (g->edge_name)
		for (uint32_t k = g->fwd_off[from]; k < g->fwd_off[from + 1];
		     k++)
			if (g->fwd[k] == to)
				return describe(g, g->edge_name[k], out);
	return describe(g, GRAPH_NAME_NONE, out);
}

int vmheap_graph_path_name(const vmheap_graph *g, uint32_t i,
			   struct vmheap_graph_name *out)
{
	uint32_t code = GRAPH_NAME_NONE;

	if (g->path_edge && g->path_parent[i] != VMHEAP_GRAPH_ROOT &&
	    g->path_parent[i] != VMHEAP_GRAPH_NONE)
		code = g->edge_name[g->path_edge[i]];
	return describe(g, code, out);
}

const char *vmheap_graph_root_name(const vmheap_graph *g, size_t k, size_t *len)
{
	struct vmheap_graph_name x;

	if (!g->root_name ||
	    describe(g, g->root_name[k], &x) != VMHEAP_GRAPH_NAME_TEXT) {
		if (len)
			*len = 0;
		return NULL;
	}
	if (len)
		*len = x.len;
	return x.text;
}
