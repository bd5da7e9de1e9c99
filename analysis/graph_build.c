/*
 * graph_build.c - read a dump into a vmheap_graph.
 *
 * One pass over the records appends each object's id, class, size and raw
 * reference ids (8 bytes each) to growing arrays.  At the end the ids are
 * indexed (graph_ids.c), and every raw reference is resolved to a 4-byte
 * index in place, dropping the missing ones, so the raw array shrinks to
 * the final CSR targets without a second copy.  When records name their
 * references (format 1.1), a 4-byte name code per raw reference runs
 * alongside (graph_names.c) and is compacted with it; a dump without
 * names never allocates it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph-internal.h"

#define CLASS_CACHE 256

/* A more-references record that does not follow its object. */
struct build_side_ref {
	uint64_t source, target;
	uint32_t name; /* code (graph_names.c) */
};

struct build {
	vmheap_graph *g;
	size_t objects_cap;
	uint64_t *raw; /* reference ids, later resolved in place */
	size_t raw_len, raw_cap;
	/* [raw_cap] name codes of the raw references; NULL until a record
	 * names one (then g->edge_name after the resolution) */
	uint32_t *raw_names;
	struct graph_name_codes codes;
	struct build_side_ref *side;
	size_t nside, side_cap;
	struct graph_string *strings;
	size_t nstrings, strings_cap;
	size_t roots_cap;
	int ids_sorted;
	/* the class index of recent class ids, by a hash of the id: objects
	 * of a few classes alternate (the class table's hash is slower) */
	uint64_t cache_id[CLASS_CACHE];
	uint32_t cache_class[CLASS_CACHE]; /* index + 1, 0: empty */
};

static int names_add(vmheap_graph *g, const char *text, size_t len, size_t *off)
{
	while (g->names_len + len + 1 > g->names_cap) {
		char *p = vmheap_array_grow(g->names, &g->names_cap, 1, 4096);
		if (!p)
			return VMHEAP_ENOMEM;
		g->names = p;
	}
	*off = g->names_len;
	memcpy(g->names + g->names_len, text, len);
	g->names[g->names_len + len] = '\0';
	g->names_len += len + 1;
	return 0;
}

static int add_class(struct build *b, const struct vmheap_record *rec)
{
	vmheap_graph *g = b->g;
	uint32_t c = graph_class_intern(g, rec->u.klass.id);
	size_t off;

	if (c == UINT32_MAX)
		return VMHEAP_ENOMEM;
	if (g->classes[c].has_name)
		return 0; /* the first record of an id names it */
	if (names_add(g, rec->u.klass.name, rec->u.klass.name_len, &off) < 0)
		return VMHEAP_ENOMEM;
	g->classes[c].name_off = off;
	g->classes[c].name_len = rec->u.klass.name_len;
	g->classes[c].has_name = 1;
	g->classes[c].object_id = rec->u.klass.object_id;
	return 0;
}

static int add_string(struct build *b, const struct vmheap_record *rec)
{
	struct graph_string s = {.id = rec->u.string.id,
				 .len = rec->u.string.len};

	if (b->nstrings == b->strings_cap) {
		void *p = vmheap_array_grow(b->strings, &b->strings_cap,
					    sizeof(*b->strings), 16);
		if (!p)
			return VMHEAP_ENOMEM;
		b->strings = p;
	}
	if (names_add(b->g, rec->u.string.text, rec->u.string.len, &s.off) < 0)
		return VMHEAP_ENOMEM;
	b->strings[b->nstrings++] = s;
	return 0;
}

static int add_root(struct build *b, const struct vmheap_record *rec)
{
	vmheap_graph *g = b->g;

	if (g->nroots == b->roots_cap) {
		void *p = vmheap_array_grow(g->roots, &b->roots_cap,
					    sizeof(*g->roots), 16);
		if (!p)
			return VMHEAP_ENOMEM;
		g->roots = p;
	}
	g->roots[g->nroots++] = (struct vmheap_graph_root){
	    .object = VMHEAP_GRAPH_NONE,
	    .object_id = rec->u.root.object_id,
	    .kind_string_id = rec->u.root.kind_string_id,
	    .name_string_id = rec->u.root.name_string_id,
	};
	return 0;
}

/* Give b->raw_names b->raw_cap entries; the first time, the b->raw_len
 * references before it get GRAPH_NAME_NONE (add_refs names the others:
 * the capacity beyond is not touched). */
static int grow_raw_names(struct build *b)
{
	uint32_t *p = realloc(b->raw_names, (b->raw_cap ? b->raw_cap : 1) *
						sizeof(*p));

	if (!p)
		return VMHEAP_ENOMEM;
	if (!b->raw_names)
		memset(p, 0, b->raw_len * sizeof(*p));
	b->raw_names = p;
	return 0;
}

static int add_refs(struct build *b, const uint64_t *refs,
		    const int64_t *names, size_t nrefs)
{
	if (b->raw_len + nrefs > UINT32_MAX)
		return graph_fail(b->g, VMHEAP_ELIMIT,
				  "more than %u references",
				  (unsigned)UINT32_MAX);
	while (b->raw_len + nrefs > b->raw_cap) {
		void *p = vmheap_array_grow(b->raw, &b->raw_cap,
					    sizeof(*b->raw), 1024);
		if (!p)
			return VMHEAP_ENOMEM;
		b->raw = p;
		if (b->raw_names && grow_raw_names(b) < 0)
			return VMHEAP_ENOMEM;
	}
	if (names && nrefs && !b->raw_names && grow_raw_names(b) < 0)
		return VMHEAP_ENOMEM; /* the first names of the dump */
	if (nrefs) /* refs and raw may be NULL then */
		memcpy(b->raw + b->raw_len, refs, nrefs * sizeof(*refs));
	if (b->raw_names && !names && nrefs)
		memset(b->raw_names + b->raw_len, 0,
		       nrefs * sizeof(*b->raw_names));
	for (size_t k = 0; names && k < nrefs; k++) {
		int64_t v = names[k];
		uint32_t *code = &b->raw_names[b->raw_len + k];
		int rc;
		/* graph_name_code's two commonest answers, without a call */
		if (v < 0 && vmheap_edge_name_index_of(v) < GRAPH_NAME_INDEX)
			*code = GRAPH_NAME_INDEX |
				(uint32_t)vmheap_edge_name_index_of(v);
		else if (v && v == b->codes.last_value && b->codes.last_code)
			*code = b->codes.last_code;
		else if ((rc = graph_name_code(b->g, &b->codes, v, code)) < 0)
			return rc;
	}
	b->raw_len += nrefs;
	return 0;
}

static int grow_objects(struct build *b)
{
	vmheap_graph *g = b->g;
	size_t cap = b->objects_cap ? b->objects_cap * 2 : 1024;
	void *p;

	if (cap > VMHEAP_GRAPH_MAX_OBJECTS)
		cap = VMHEAP_GRAPH_MAX_OBJECTS;
	if (!(p = realloc(g->ids, cap * sizeof(*g->ids))))
		return VMHEAP_ENOMEM;
	g->ids = p;
	if (!(p = realloc(g->class_of, cap * sizeof(*g->class_of))))
		return VMHEAP_ENOMEM;
	g->class_of = p;
	if (!(p = realloc(g->bytes32, cap * sizeof(*g->bytes32))))
		return VMHEAP_ENOMEM;
	g->bytes32 = p;
	if (!(p = realloc(g->fwd_off, (cap + 1) * sizeof(*g->fwd_off))))
		return VMHEAP_ENOMEM;
	g->fwd_off = p;
	b->objects_cap = cap;
	return 0;
}

static int add_object(struct build *b, const struct vmheap_record *rec)
{
	vmheap_graph *g = b->g;
	uint32_t i = g->n;
	uint64_t bytes = rec->u.object.bytes;
	int rc;

	if (i == VMHEAP_GRAPH_MAX_OBJECTS)
		return graph_fail(g, VMHEAP_ELIMIT, "more than %u objects",
				  (unsigned)VMHEAP_GRAPH_MAX_OBJECTS);
	if (i == b->objects_cap && (rc = grow_objects(b)) < 0)
		return rc;
	if (i > 0 && rec->u.object.id < g->ids[i - 1])
		b->ids_sorted = 0;
	uint64_t cid = rec->u.object.class_id;
	size_t slot = (size_t)((cid * 0x9e3779b97f4a7c15ULL) >> 56);
	if (!b->cache_class[slot] || b->cache_id[slot] != cid) {
		uint32_t c = graph_class_intern(g, cid);
		if (c == UINT32_MAX)
			return VMHEAP_ENOMEM;
		b->cache_id[slot] = cid;
		b->cache_class[slot] = c + 1;
	}
	g->ids[i] = rec->u.object.id;
	g->class_of[i] = b->cache_class[slot] - 1;
	g->has_sites |= rec->u.object.site != 0;
	graph_add_bytes(g, &g->total_bytes, bytes);
	if (bytes >= GRAPH_BYTES_BIG) {
		size_t cap = g->nbig;
		/* exact growth: big objects are rare */
		void *p = realloc(g->big, (cap + 1) * sizeof(*g->big));
		if (!p)
			return VMHEAP_ENOMEM;
		g->big = p;
		g->big[g->nbig++] = (struct graph_big_bytes){i, bytes};
		g->bytes32[i] = GRAPH_BYTES_BIG;
	} else {
		g->bytes32[i] = (uint32_t)bytes;
	}
	g->fwd_off[i] = (uint32_t)b->raw_len;
	if ((rc = add_refs(b, rec->u.object.refs, rec->u.object.names,
			   rec->u.object.nrefs)) < 0)
		return rc;
	g->n = i + 1;
	g->fwd_off[i + 1] = (uint32_t)b->raw_len;
	return 0;
}

static int add_more_refs(struct build *b, const struct vmheap_record *rec)
{
	vmheap_graph *g = b->g;
	int rc;

	if (g->n > 0 && g->ids[g->n - 1] == rec->u.object.id) {
		if ((rc = add_refs(b, rec->u.object.refs, rec->u.object.names,
				   rec->u.object.nrefs)) < 0)
			return rc;
		g->fwd_off[g->n] = (uint32_t)b->raw_len;
		return 0;
	}
	/* Not after its object: kept aside, merged in at the end. */
	for (size_t k = 0; k < rec->u.object.nrefs; k++) {
		if (b->nside == b->side_cap) {
			void *p = vmheap_array_grow(b->side, &b->side_cap,
						    sizeof(*b->side), 64);
			if (!p)
				return VMHEAP_ENOMEM;
			b->side = p;
		}
		b->side[b->nside] = (struct build_side_ref){
		    rec->u.object.id, rec->u.object.refs[k], GRAPH_NAME_NONE};
		if (rec->u.object.names &&
		    (rc = graph_name_code(g, &b->codes,
					  rec->u.object.names[k],
					  &b->side[b->nside].name)) < 0)
			return rc;
		b->nside++;
	}
	return 0;
}

/* Resolve the raw reference ids to indices in place: first every id to
 * its index or VMHEAP_GRAPH_NONE (graph_find_many: the lookups are random
 * reads, prefetched ahead, on two threads), then the missing ones dropped
 * while the indices are packed to 4 bytes each (index k is read from
 * bytes 8k before anything is written at or past them: it goes to 4w,
 * w <= k). */
static int resolve_refs(struct build *b)
{
	vmheap_graph *g = b->g;
	unsigned char *buf = (unsigned char *)b->raw;
	uint32_t w = 0, start = 0;

	graph_find_many(g, b->raw, b->raw_len);
	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t end = g->fwd_off[i + 1];
		g->fwd_off[i] = w;
		for (uint32_t k = start; k < end; k++) {
			uint64_t
			    index; /* read as bytes: 4-byte writes overlap */
			memcpy(&index, buf + (size_t)k * 8, 8);
			uint32_t t = (uint32_t)index;
			if (t == VMHEAP_GRAPH_NONE) {
				g->missing_refs++;
				continue;
			}
			memcpy(buf + (size_t)w * 4, &t, 4);
			if (b->raw_names)
				b->raw_names[w] = b->raw_names[k];
			w++;
		}
		start = end;
	}
	g->fwd_off[g->n] = w;
	b->raw = NULL;
	b->raw_cap = 0;
	{
		/* never NULL, so that g->fwd + offset is always defined */
		unsigned char *p = realloc(buf, (size_t)(w ? w : 1) * 4);
		if (p)
			buf = p;
		else if (!buf)
			return VMHEAP_ENOMEM;
	}
	g->fwd = (uint32_t *)(void *)buf;
	if (b->raw_names) {
		uint32_t *p = realloc(b->raw_names,
				      (size_t)(w ? w : 1) * sizeof(*p));
		g->edge_name = p ? p : b->raw_names;
		b->raw_names = NULL;
	}
	return 0;
}

/* Merge the more-references records that did not follow their object. */
static int merge_side_refs(struct build *b)
{
	vmheap_graph *g = b->g;
	uint32_t *src = malloc(b->nside * sizeof(*src));
	uint32_t *tgt = malloc(b->nside * sizeof(*tgt));
	uint32_t *nam = malloc(b->nside * sizeof(*nam));
	uint32_t *off = NULL, *fwd = NULL, *names = NULL;
	int named = g->edge_name != NULL;
	uint64_t total;
	size_t kept = 0;
	int rc = VMHEAP_ENOMEM;

	if (!src || !tgt || !nam)
		goto out;
	for (size_t k = 0; k < b->nside; k++) {
		uint32_t s = vmheap_graph_find(g, b->side[k].source);
		uint32_t t = vmheap_graph_find(g, b->side[k].target);
		if (s == VMHEAP_GRAPH_NONE || t == VMHEAP_GRAPH_NONE) {
			/* no object to hang them on, or a missing target */
			g->missing_refs++;
			continue;
		}
		src[kept] = s;
		nam[kept] = b->side[k].name;
		named |= nam[kept] != GRAPH_NAME_NONE;
		tgt[kept++] = t;
	}
	total = (uint64_t)g->fwd_off[g->n] + kept;
	if (total > UINT32_MAX) {
		rc = graph_fail(g, VMHEAP_ELIMIT, "more than %u references",
				(unsigned)UINT32_MAX);
		goto out;
	}
	off = calloc((size_t)g->n + 1, sizeof(*off));
	fwd = malloc((total ? total : 1) * sizeof(*fwd));
	if (named)
		names = calloc(total ? total : 1, sizeof(*names));
	if (!off || !fwd || (named && !names))
		goto out;
	for (size_t k = 0; k < kept; k++)
		off[src[k] + 1]++;
	for (uint32_t i = 0; i < g->n; i++)
		off[i + 1] += off[i] + (g->fwd_off[i + 1] - g->fwd_off[i]);
	/* each object: its own references first, then the side ones in file
	 * order; off[i] is used as the fill cursor, then restored */
	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t d = g->fwd_off[i + 1] - g->fwd_off[i];
		if (d)
			memcpy(fwd + off[i], g->fwd + g->fwd_off[i],
			       (size_t)d * sizeof(*fwd));
		if (d && g->edge_name)
			memcpy(names + off[i], g->edge_name + g->fwd_off[i],
			       (size_t)d * sizeof(*names));
		off[i] += d;
	}
	for (size_t k = 0; k < kept; k++) {
		if (names)
			names[off[src[k]]] = nam[k];
		fwd[off[src[k]]++] = tgt[k];
	}
	/* off[i] now ends object i: shift back by one */
	memmove(off + 1, off, (size_t)g->n * sizeof(*off));
	off[0] = 0;
	free(g->fwd_off);
	free(g->fwd);
	free(g->edge_name);
	g->fwd_off = off;
	g->fwd = fwd;
	g->edge_name = names;
	off = NULL;
	fwd = NULL;
	names = NULL;
	rc = 0;
out:
	free(src);
	free(tgt);
	free(nam);
	free(names);
	free(off);
	free(fwd);
	return rc;
}

static int compare_strings(const void *a, const void *b)
{
	const struct graph_string *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Point each root at its object and at its kind's text (the first string
 * record of that id), give named roots their name codes, and resolve the
 * names' texts. */
static int resolve_roots(struct build *b)
{
	vmheap_graph *g = b->g;
	int rc;

	if (b->nstrings)
		qsort(b->strings, b->nstrings, sizeof(*b->strings),
		      compare_strings);
	for (size_t k = 0; k < g->nroots; k++) {
		struct vmheap_graph_root *root = &g->roots[k];
		size_t lo = 0, hi = b->nstrings;

		root->object = vmheap_graph_find(g, root->object_id);
		if (root->object == VMHEAP_GRAPH_NONE)
			g->missing_roots++;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (b->strings[mid].id < root->kind_string_id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < b->nstrings &&
		    b->strings[lo].id == root->kind_string_id)
			root->kind = g->names + b->strings[lo].off;
		if (root->name_string_id && !g->root_name &&
		    !(g->root_name = calloc(g->nroots, sizeof(*g->root_name))))
			return VMHEAP_ENOMEM; /* the first named root */
		if (root->name_string_id &&
		    (rc = graph_name_code(g, &b->codes,
					  (int64_t)root->name_string_id,
					  &g->root_name[k])) < 0)
			return rc;
	}
	return graph_names_resolve(g, &b->codes, b->strings, b->nstrings);
}

static int read_records(struct build *b, vmheap_reader *r)
{
	struct vmheap_record rec;
	int rc;

	while ((rc = vmheap_reader_next(r, &rec)) > 0) {
		switch (rec.type) {
		case VMHEAP_RECORD_STRING:
			rc = add_string(b, &rec);
			break;
		case VMHEAP_RECORD_CLASS:
			rc = add_class(b, &rec);
			break;
		case VMHEAP_RECORD_OBJECT:
			rc = add_object(b, &rec);
			break;
		case VMHEAP_RECORD_ROOT:
			rc = add_root(b, &rec);
			break;
		case VMHEAP_RECORD_MORE_REFS:
			rc = add_more_refs(b, &rec);
			break;
		case VMHEAP_RECORD_SITE: /* not part of the graph */
			break;
		}
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return graph_fail(b->g, rc, "%s", vmheap_reader_error(r));
	return 0;
}

int graph_build(vmheap_graph **out, vmheap_reader *r)
{
	struct build b = {.ids_sorted = 1};
	int rc;

	*out = NULL;
	if (!(b.g = calloc(1, sizeof(*b.g)))) {
		rc = VMHEAP_ENOMEM;
		goto fail;
	}
	if (!(b.g->fwd_off = calloc(1, sizeof(*b.g->fwd_off)))) {
		rc = VMHEAP_ENOMEM;
		goto fail;
	}
	if ((rc = read_records(&b, r)) < 0)
		goto fail;
	if ((rc = graph_index_ids(b.g, b.ids_sorted)) < 0)
		goto fail;
	if ((rc = resolve_refs(&b)) < 0)
		goto fail;
	if (b.nside && (rc = merge_side_refs(&b)) < 0)
		goto fail;
	if ((rc = resolve_roots(&b)) < 0)
		goto fail;
	if ((rc = graph_index_class_objects(b.g)) < 0)
		goto fail;
	free(b.side);
	free(b.strings);
	*out = b.g;
	return 0;
fail:
	free(b.raw);
	free(b.raw_names);
	free(b.codes.table);
	free(b.side);
	free(b.strings);
	/* A failed graph that holds only the reason (vmheap_graph.h, "Failed
	 * constructors"); NULL only when not even the graph was allocated. */
	if (b.g) {
		char msg[sizeof(b.g->error)];

		snprintf(msg, sizeof(msg), "%s",
			 b.g->error[0] ? b.g->error : vmheap_strerror(rc));
		graph_release(b.g);
		memset(b.g, 0, sizeof(*b.g));
		memcpy(b.g->error, msg, sizeof(msg));
		*out = b.g;
	}
	return rc;
}
