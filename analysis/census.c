/*
 * census.c - objects and bytes per class (or kind) of one dump (part of
 * libvmheap-analysis).
 *
 * Each feeding thread owns a "part": a map from class id (or kind) to
 * (count, bytes), the class records it saw, and running totals.  Nothing
 * is shared while the dump is read.  vmheap_census_finish() merges the
 * parts: class records give names (the earliest record of an id wins),
 * names are interned in one pool, and the rows are merged by name.
 *
 * Grouped by site (VMHEAP_GROUP_SITE), a part counts per (class id, site
 * id) pair and keeps the site records it saw; finish names the sites
 * ("file:line in method") and merges the rows by (class name, site text).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis-internal.h"
#include "vmheap_analysis.h"

struct class_rec {
	uint64_t id;
	uint64_t offset;
	char *name; /* NUL-terminated copy; for a site, its display text */
};

/* Keys (class ids, kinds) below this are counted in a plain array: dense
 * small class ids are the common case and need no hashing. */
#define DIRECT_KEYS 65536u

struct direct_count {
	uint64_t count, bytes;
};

/*
 * Sums of sizes saturate: `*sum += b`, held at UINT64_MAX (and *flag set)
 * when it would pass it.  Once there, it stays (UINT64_MAX + b wraps to
 * b - 1, less than b).
 */
static inline void add_bytes(uint64_t *sum, uint64_t b, int *flag)
{
	*sum += b;
	if (__builtin_expect(*sum < b, 0)) {
		*sum = UINT64_MAX;
		*flag = 1;
	}
}

struct part {
	int saturated; /* a sum of sizes was held at UINT64_MAX */
	struct direct_count *direct; /* DIRECT_KEYS entries, or NULL */
	struct vmheap_map counts;    /* other keys -> a: objects, b: bytes */
	uint64_t last_key;
	struct vmheap_map_slot *last_slot;
	struct class_rec *classes;
	size_t nclasses, classes_cap;
	struct class_rec *sites; /* VMHEAP_GROUP_SITE: the site records */
	size_t nsites, sites_cap;
	struct vmheap_totals totals;
	vmheap_block_cursor *cur; /* reused block after block */
	int nomem;
	char pad[64]; /* keep parts of different threads apart */
};

struct vmheap_census {
	enum vmheap_census_group group;
	unsigned threads;
	struct part *parts;
	int finished;

	struct vmheap_namemap pool; /* every display name -> pool index */
	uint64_t *pool_count, *pool_bytes;
	size_t pool_cap;
	struct vmheap_map class_pool; /* class id -> a: pool index */
	const char **pool_names;      /* pool index -> name */

	/* VMHEAP_GROUP_SITE */
	struct vmheap_namemap site_pool; /* site text -> index */
	const char **site_names;	 /* index -> text */
	size_t site_names_cap;
	struct vmheap_map site_ids; /* site id -> a: site_pool index + 1 */

	struct vmheap_census_row *rows;
	size_t nrows;
	struct vmheap_totals totals;
	int saturated;
	char err[512];
};

int vmheap_census_new(vmheap_census **out, enum vmheap_census_group group,
		      unsigned threads)
{
	*out = NULL;
	if (!threads)
		threads = 1;
	vmheap_census *c = calloc(1, sizeof(*c));
	if (!c)
		return VMHEAP_ENOMEM;
	c->parts = calloc(threads, sizeof(*c->parts));
	if (!c->parts) {
		free(c);
		return VMHEAP_ENOMEM;
	}
	c->group = group;
	c->threads = threads;
	*out = c;
	return 0;
}

/* Append a record (id, offset, name) to a part's list. */
static int add_rec(struct class_rec **list, size_t *n, size_t *cap,
		   uint64_t id, uint64_t offset, char *name)
{
	if (!name)
		return VMHEAP_ENOMEM;
	if (*n == *cap) {
		struct class_rec *g =
		    vmheap_array_grow(*list, cap, sizeof(*g), 64);
		if (!g) {
			free(name);
			return VMHEAP_ENOMEM;
		}
		*list = g;
	}
	struct class_rec *cr = &(*list)[(*n)++];
	cr->id = id;
	cr->offset = offset;
	cr->name = name;
	return 0;
}

static int add_class(struct part *p, const struct vmheap_record *rec)
{
	char *name = malloc(rec->u.klass.name_len + 1);
	if (name) {
		memcpy(name, rec->u.klass.name, rec->u.klass.name_len);
		name[rec->u.klass.name_len] = '\0';
	}
	return add_rec(&p->classes, &p->nclasses, &p->classes_cap,
		       rec->u.klass.id, rec->offset, name);
}

char *vmheap_site_text(const struct vmheap_record *rec)
{
	const size_t fl = rec->u.site.file_len, ml = rec->u.site.method_len;
	char *text = malloc(fl + ml + 32);
	if (!text)
		return NULL;
	memcpy(text, rec->u.site.file, fl);
	int n = sprintf(text + fl, ":%" PRIu64, rec->u.site.line);
	if (ml) {
		memcpy(text + fl + n, " in ", 4);
		memcpy(text + fl + n + 4, rec->u.site.method, ml);
		n += 4 + (int)ml;
	}
	text[fl + n] = '\0';
	return text;
}

/* A site record, kept as its display text. */
static int add_site(struct part *p, const struct vmheap_record *rec)
{
	return add_rec(&p->sites, &p->nsites, &p->sites_cap, rec->u.site.id,
		       rec->offset, vmheap_site_text(rec));
}

/* Count an object under a key too large for the direct array, or under
 * (class id, site id) when grouping by site (key2). */
static int count_sparse(struct part *p, uint64_t key, uint64_t key2,
			uint64_t count, uint64_t bytes)
{
	struct vmheap_map_slot *s;
	if (p->last_slot && p->last_key == key && p->last_slot->key2 == key2) {
		s = p->last_slot;
	} else {
		s = vmheap_map_upsert(&p->counts, key, key2, 0);
		if (!s)
			return VMHEAP_ENOMEM;
		p->last_slot = s;
		p->last_key = key;
	}
	s->a += count;
	add_bytes(&s->b, bytes, &p->saturated);
	return 0;
}

static inline int count_record(vmheap_census *c, struct part *p,
			       const struct vmheap_record *rec)
{
	vmheap_totals_add_record(&p->totals, rec);
	switch (rec->type) {
	case VMHEAP_RECORD_OBJECT: {
		uint64_t key = c->group != VMHEAP_GROUP_KIND
				   ? rec->u.object.class_id
				   : rec->u.object.kind;
		if (c->group == VMHEAP_GROUP_SITE)
			return count_sparse(p, key, rec->u.object.site, 1,
					    rec->u.object.bytes);
		if (key < DIRECT_KEYS) {
			if (!p->direct) {
				p->direct =
				    calloc(DIRECT_KEYS, sizeof(*p->direct));
				if (!p->direct)
					return VMHEAP_ENOMEM;
			}
			p->direct[key].count++;
			add_bytes(&p->direct[key].bytes, rec->u.object.bytes,
				  &p->saturated);
			return 0;
		}
		return count_sparse(p, key, 0, 1, rec->u.object.bytes);
	}
	case VMHEAP_RECORD_CLASS:
		return add_class(p, rec);
	case VMHEAP_RECORD_SITE:
		return c->group == VMHEAP_GROUP_SITE ? add_site(p, rec) : 0;
	default:
		return 0;
	}
}

int vmheap_census_add_record(vmheap_census *c, unsigned thread,
			     const struct vmheap_record *rec)
{
	struct part *p = &c->parts[thread < c->threads ? thread : 0];
	int rc = count_record(c, p, rec);
	if (rc < 0)
		p->nomem = 1;
	return rc;
}

/* Records decoded per call to the block cursor. */
#define BATCH 64

/*
 * Count a batch of records.  Objects, nearly all of them, are counted here
 * with the sums kept in locals (a census needs no graph: references are
 * only counted); the rest go through count_record().  Returns 0 or
 * VMHEAP_ENOMEM.
 */
static int count_batch(vmheap_census *c, struct part *p,
		       const struct vmheap_record *recs, int n)
{
	struct direct_count *direct = p->direct;
	uint64_t objects = 0, bytes = 0, refs = 0;
	int by_class = c->group == VMHEAP_GROUP_CLASS, rc = 0;

	for (int i = 0; i < n && rc >= 0; i++) {
		const struct vmheap_record *rec = &recs[i];
		if (rec->type != VMHEAP_RECORD_OBJECT ||
		    c->group == VMHEAP_GROUP_SITE) {
			/* count_record also adds it to the totals */
			rc = count_record(c, p, rec);
			continue;
		}
		uint64_t key =
		    by_class ? rec->u.object.class_id : rec->u.object.kind;
		objects++;
		bytes += rec->u.object.bytes;
		refs += rec->u.object.nrefs;
		if (key < DIRECT_KEYS) {
			direct[key].count++;
			add_bytes(&direct[key].bytes, rec->u.object.bytes,
				  &p->saturated);
		} else {
			rc = count_sparse(p, key, 0, 1, rec->u.object.bytes);
		}
	}
	p->totals.objects += objects;
	p->totals.bytes += bytes;
	p->totals.references += refs;
	return rc;
}

/* The census of a block read through its summary (format/block_summary.c). */
struct summary_visit {
	vmheap_census *c;
	struct part *p;
};

static int summary_row(void *arg, uint64_t class_id, uint32_t kind,
		       uint64_t count, uint64_t bytes)
{
	struct summary_visit *v = arg;
	struct part *p = v->p;
	uint64_t key = v->c->group == VMHEAP_GROUP_KIND ? kind : class_id;

	if (key >= DIRECT_KEYS)
		return count_sparse(p, key, 0, count, bytes);
	p->direct[key].count += count;
	add_bytes(&p->direct[key].bytes, bytes, &p->saturated);
	return 0;
}

static int summary_record(void *arg, const struct vmheap_record *rec)
{
	struct summary_visit *v = arg;
	return count_record(v->c, v->p, rec);
}

/* A block with a summary, counted by class or kind: 1 when it was read
 * that way, 0 to decode it, or a negative code. */
static int add_summarized(vmheap_census *c, struct part *p)
{
	struct vmheap_block_summary sum;
	struct summary_visit v = {c, p};
	int rc;

	if (c->group == VMHEAP_GROUP_SITE)
		return 0;
	rc = vmheap_block_cursor_summary(p->cur, &sum, summary_row,
					 summary_record, &v);
	if (rc <= 0)
		return rc;
	/* As count_batch: the totals wrap as the footer's do. */
	p->totals.objects += sum.objects;
	p->totals.bytes += sum.bytes;
	p->totals.references += sum.references;
	return 1;
}

/* The scan's hint: a block with a summary costs less to read than to
 * copy to another thread (except by site, which decodes every object). */
static int summarized(void *census, const struct vmheap_block *blk)
{
	const vmheap_census *c = census;
	return c->group != VMHEAP_GROUP_SITE && vmheap_block_has_summary(blk);
}

int vmheap_census_add_block(void *census, unsigned thread,
			    const struct vmheap_block *blk, char *err,
			    size_t errlen)
{
	vmheap_census *c = census;
	struct part *p = &c->parts[thread < c->threads ? thread : 0];
	vmheap_block_cursor *cur;
	struct vmheap_record recs[BATCH];
	int rc;

	if (errlen)
		err[0] = '\0';
	if (p->cur) {
		vmheap_block_cursor_reset(p->cur, blk);
	} else if ((rc = vmheap_block_cursor_open(&p->cur, blk)) < 0) {
		p->nomem = 1;
		snprintf(err, errlen, "%s", vmheap_block_cursor_error(p->cur));
		return rc;
	}
	cur = p->cur;
	if (!p->direct) {
		p->direct = calloc(DIRECT_KEYS, sizeof(*p->direct));
		if (!p->direct) {
			p->nomem = 1;
			snprintf(err, errlen, "out of memory");
			return VMHEAP_ENOMEM;
		}
	}
	rc = add_summarized(c, p);
	if (rc == VMHEAP_ENOMEM) {
		p->nomem = 1;
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	if (rc != 0)
		goto done;
	while ((rc = vmheap_block_cursor_next_shallow_batch(cur, recs, BATCH)) >
	       0) {
		if (count_batch(c, p, recs, rc) < 0) {
			p->nomem = 1;
			snprintf(err, errlen, "out of memory");
			return VMHEAP_ENOMEM;
		}
	}
done:
	if (rc < 0)
		snprintf(err, errlen, "%s", vmheap_block_cursor_error(cur));
	p->totals.blocks++;
	return rc < 0 ? rc : 0;
}

/* Pool index of `name`, growing the per-name counters; (size_t)-1 when
 * out of memory. */
static size_t pool_intern(vmheap_census *c, const char *name)
{
	int added;
	const char *stored;
	size_t idx =
	    vmheap_namemap_intern(&c->pool, name, c->pool.len, &added, &stored);
	if (idx == (size_t)-1 || !added)
		return idx;
	if (idx >= c->pool_cap) {
		size_t ncap = c->pool_cap ? c->pool_cap * 2 : 64;
		uint64_t *nc = realloc(c->pool_count, ncap * sizeof(*nc));
		if (nc)
			c->pool_count = nc;
		uint64_t *nb = realloc(c->pool_bytes, ncap * sizeof(*nb));
		if (nb)
			c->pool_bytes = nb;
		const char **nn = realloc(c->pool_names, ncap * sizeof(*nn));
		if (nn)
			c->pool_names = nn;
		if (!nc || !nb || !nn)
			return (size_t)-1;
		c->pool_cap = ncap;
	}
	c->pool_count[idx] = 0;
	c->pool_bytes[idx] = 0;
	c->pool_names[idx] = stored;
	return idx;
}

static size_t class_placeholder(vmheap_census *c, uint64_t id)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "<unknown class 0x%" PRIx64 ">", id);
	return pool_intern(c, buf);
}

/* Merge every part's class records into class_pool. */
static int merge_classes(vmheap_census *c)
{
	struct vmheap_map first = {0}; /* id -> a: offset+1, b: rec ptr */
	int rc = 0;

	for (unsigned t = 0; t < c->threads; t++) {
		struct part *p = &c->parts[t];
		for (size_t i = 0; i < p->nclasses; i++) {
			struct class_rec *cr = &p->classes[i];
			struct vmheap_map_slot *s =
			    vmheap_map_upsert(&first, cr->id, 0, 0);
			if (!s) {
				rc = VMHEAP_ENOMEM;
				goto out;
			}
			if (!s->a || cr->offset + 1 < s->a) {
				s->a = cr->offset + 1;
				s->b = (uint64_t)(uintptr_t)cr;
			}
		}
	}
	for (size_t i = 0; i < first.cap; i++) {
		struct vmheap_map_slot *s = &first.slots[i];
		if (!s->used)
			continue;
		struct class_rec *cr = (struct class_rec *)(uintptr_t)s->b;
		size_t idx =
		    pool_intern(c, *cr->name ? cr->name : "<anonymous class>");
		struct vmheap_map_slot *d =
		    vmheap_map_upsert(&c->class_pool, cr->id, 0, 0);
		if (idx == (size_t)-1 || !d) {
			rc = VMHEAP_ENOMEM;
			goto out;
		}
		d->a = idx;
	}
out:
	vmheap_map_release(&first);
	return rc;
}

static size_t class_pool_index(vmheap_census *c, uint64_t id);

/* Site text -> site_pool index; (size_t)-1 when out of memory. */
static size_t site_intern(vmheap_census *c, const char *text)
{
	int added;
	const char *stored;
	size_t idx = vmheap_namemap_intern(&c->site_pool, text,
					   c->site_pool.len, &added, &stored);
	if (idx == (size_t)-1 || !added)
		return idx;
	if (idx >= c->site_names_cap) {
		size_t ncap = c->site_names_cap ? c->site_names_cap * 2 : 64;
		const char **nn =
		    realloc(c->site_names, ncap * sizeof(*nn));
		if (!nn)
			return (size_t)-1;
		c->site_names = nn;
		c->site_names_cap = ncap;
	}
	c->site_names[idx] = stored;
	return idx;
}

/* Merge every part's site records into site_ids (the earliest record of
 * an id wins, as for classes). */
static int merge_sites(vmheap_census *c)
{
	for (unsigned t = 0; t < c->threads; t++) {
		struct part *p = &c->parts[t];
		for (size_t i = 0; i < p->nsites; i++) {
			struct class_rec *sr = &p->sites[i];
			struct vmheap_map_slot *s =
			    vmheap_map_upsert(&c->site_ids, sr->id, 0, 0);
			if (!s)
				return VMHEAP_ENOMEM;
			if (!s->a || sr->offset + 1 < s->b) {
				size_t idx = site_intern(c, sr->name);
				if (idx == (size_t)-1)
					return VMHEAP_ENOMEM;
				s->a = idx + 1;
				s->b = sr->offset + 1;
			}
		}
	}
	return 0;
}

/*
 * The rows of a census by site: every part's (class id, site id) counts
 * merged by (class name, site text).  A site id without a record reads
 * "<unknown site N>"; objects without a site have a NULL site.
 */
static int finish_by_site(vmheap_census *c)
{
	struct vmheap_map pairs = VMHEAP_MAP_INIT; /* (class, site+1) -> n */
	int rc = VMHEAP_ENOMEM;

	if (merge_sites(c) < 0)
		goto out;
	for (unsigned t = 0; t < c->threads; t++) {
		struct vmheap_map *m = &c->parts[t].counts;
		for (size_t i = 0; i < m->cap; i++) {
			struct vmheap_map_slot *s = &m->slots[i];
			if (!s->used)
				continue;
			size_t cls = class_pool_index(c, s->key), site = 0;
			if (cls == (size_t)-1)
				goto out;
			if (s->key2) {
				struct vmheap_map_slot *id = vmheap_map_find(
				    &c->site_ids, s->key2, 0, 0);
				char buf[48];
				snprintf(buf, sizeof(buf),
					 "<unknown site %" PRIu64 ">",
					 s->key2);
				site = id ? (size_t)id->a
					  : site_intern(c, buf) + 1;
				if (site == 0)
					goto out;
			}
			struct vmheap_map_slot *d =
			    vmheap_map_upsert(&pairs, cls, site, 0);
			if (!d)
				goto out;
			d->a += s->a;
			add_bytes(&d->b, s->b, &c->saturated);
		}
	}
	c->rows = calloc(pairs.len ? pairs.len : 1, sizeof(*c->rows));
	if (!c->rows)
		goto out;
	c->nrows = 0;
	for (size_t i = 0; i < pairs.cap; i++) {
		struct vmheap_map_slot *s = &pairs.slots[i];
		if (!s->used)
			continue;
		struct vmheap_census_row *row = &c->rows[c->nrows++];
		row->name = c->pool_names[s->key];
		row->site = s->key2 ? c->site_names[s->key2 - 1] : NULL;
		row->count = s->a;
		row->bytes = s->b;
	}
	rc = 0;
out:
	vmheap_map_release(&pairs);
	return rc;
}

static size_t kind_pool_index(vmheap_census *c, const struct vmheap_header *h,
			      uint64_t kind)
{
	if (h && kind < h->kind_count && h->kind_names[kind] &&
	    *h->kind_names[kind])
		return pool_intern(c, h->kind_names[kind]);
	char buf[48];
	snprintf(buf, sizeof(buf), "<unknown kind %" PRIu64 ">", kind);
	return pool_intern(c, buf);
}

static size_t class_pool_index(vmheap_census *c, uint64_t id)
{
	struct vmheap_map_slot *s = vmheap_map_find(&c->class_pool, id, 0, 0);
	return s ? (size_t)s->a : class_placeholder(c, id);
}

static int check_total(vmheap_census *c, vmheap_reader *r, const char *what,
		       uint64_t footer, uint64_t counted)
{
	if (footer == counted)
		return 0;
	snprintf(c->err, sizeof(c->err),
		 "%s: footer totals disagree with the records: the footer "
		 "says %" PRIu64 " %s, the blocks hold %" PRIu64
		 " (footer at byte offset %" PRIu64 ")",
		 vmheap_reader_name(r), footer, what, counted,
		 vmheap_reader_footer_offset(r));
	return VMHEAP_ETOTALS;
}

static int check_totals(vmheap_census *c, vmheap_reader *r)
{
	const struct vmheap_totals *f = vmheap_reader_totals(r);
	const struct vmheap_totals *t = &c->totals;
	if (!f)
		return 0;
	int rc = check_total(c, r, "objects", f->objects, t->objects);
	if (!rc)
		rc = check_total(c, r, "bytes of objects", f->bytes, t->bytes);
	if (!rc)
		rc = check_total(c, r, "classes", f->classes, t->classes);
	if (!rc)
		rc = check_total(c, r, "roots", f->roots, t->roots);
	if (!rc)
		rc = check_total(c, r, "references", f->references,
				 t->references);
	if (!rc)
		rc = check_total(c, r, "strings", f->strings, t->strings);
	if (!rc)
		rc = check_total(c, r, "sites", f->sites, t->sites);
	return rc;
}

/* The bytes of the totals as the rows' sum, held at UINT64_MAX if it
 * would pass it (the footer's, checked before, is modulo 2^64). */
static void sum_rows(vmheap_census *c)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < c->nrows; i++)
		add_bytes(&sum, c->rows[i].bytes, &c->saturated);
	c->totals.bytes = sum;
}

int vmheap_census_saturated(const vmheap_census *c)
{
	return c->saturated;
}

static int oom(vmheap_census *c, vmheap_reader *r)
{
	snprintf(c->err, sizeof(c->err), "%s: out of memory",
		 r ? vmheap_reader_name(r) : "census");
	return VMHEAP_ENOMEM;
}

int vmheap_census_finish(vmheap_census *c, vmheap_reader *r)
{
	const struct vmheap_header *h = vmheap_reader_header(r);

	memset(&c->totals, 0, sizeof(c->totals));
	for (unsigned t = 0; t < c->threads; t++) {
		struct part *p = &c->parts[t];
		if (p->nomem)
			return oom(c, r);
		c->totals.objects += p->totals.objects;
		c->totals.bytes += p->totals.bytes;
		c->totals.classes += p->totals.classes;
		c->totals.roots += p->totals.roots;
		c->totals.references += p->totals.references;
		c->totals.strings += p->totals.strings;
		c->totals.blocks += p->totals.blocks;
		c->totals.sites += p->totals.sites;
	}
	int rc = check_totals(c, r);
	if (rc < 0)
		return rc;
	for (unsigned t = 0; t < c->threads; t++)
		c->saturated |= c->parts[t].saturated;
	if (merge_classes(c) < 0)
		return oom(c, r);
	if (c->group == VMHEAP_GROUP_SITE) {
		if (finish_by_site(c) < 0)
			return oom(c, r);
		sum_rows(c);
		c->finished = 1;
		return 0;
	}

	for (unsigned t = 0; t < c->threads; t++) {
		struct part *p = &c->parts[t];
		for (uint64_t k = 0; p->direct && k < DIRECT_KEYS; k++) {
			if (!p->direct[k].count)
				continue;
			size_t idx = c->group == VMHEAP_GROUP_CLASS
					 ? class_pool_index(c, k)
					 : kind_pool_index(c, h, k);
			if (idx == (size_t)-1)
				return oom(c, r);
			c->pool_count[idx] += p->direct[k].count;
			add_bytes(&c->pool_bytes[idx], p->direct[k].bytes,
				  &c->saturated);
		}
		struct vmheap_map *m = &p->counts;
		for (size_t i = 0; i < m->cap; i++) {
			struct vmheap_map_slot *s = &m->slots[i];
			if (!s->used)
				continue;
			size_t idx = c->group == VMHEAP_GROUP_CLASS
					 ? class_pool_index(c, s->key)
					 : kind_pool_index(c, h, s->key);
			if (idx == (size_t)-1)
				return oom(c, r);
			c->pool_count[idx] += s->a;
			add_bytes(&c->pool_bytes[idx], s->b, &c->saturated);
		}
	}

	c->rows = calloc(c->pool.len ? c->pool.len : 1, sizeof(*c->rows));
	if (!c->rows)
		return oom(c, r);
	c->nrows = 0;
	for (size_t i = 0; i < c->pool.len; i++) {
		if (!c->pool_count[i] && !c->pool_bytes[i])
			continue;
		c->rows[c->nrows].name = c->pool_names[i];
		c->rows[c->nrows].count = c->pool_count[i];
		c->rows[c->nrows].bytes = c->pool_bytes[i];
		c->nrows++;
	}
	sum_rows(c);
	c->finished = 1;
	return 0;
}

int vmheap_census_read(vmheap_census *c, vmheap_reader *r,
		       const struct vmheap_scan_options *opt)
{
	struct vmheap_scan_options one = VMHEAP_SCAN_OPTIONS_INIT;
	one.threads = 1;
	if (!opt)
		opt = &one;
	if (vmheap_scan_threads(opt) > c->threads) {
		snprintf(c->err, sizeof(c->err),
			 "census made for %u threads, scan asks for %u",
			 c->threads, vmheap_scan_threads(opt));
		return VMHEAP_EINVAL;
	}
	int rc = vmheap_scan_blocks_cheap(r, vmheap_census_add_block,
					  summarized, c, opt, c->err,
					  sizeof(c->err));
	if (rc < 0)
		return rc;
	return vmheap_census_finish(c, r);
}

const char *vmheap_census_error(const vmheap_census *c)
{
	return c ? c->err : "out of memory";
}

struct vmheap_census_row *vmheap_census_rows(vmheap_census *c, size_t *n)
{
	*n = c->finished ? c->nrows : 0;
	return c->rows;
}

const char *vmheap_census_class_name(vmheap_census *c, uint64_t class_id)
{
	size_t idx = class_pool_index(c, class_id);
	return idx == (size_t)-1 ? NULL : c->pool_names[idx];
}

const struct vmheap_totals *vmheap_census_totals(const vmheap_census *c)
{
	return &c->totals;
}

void vmheap_census_free(vmheap_census *c)
{
	if (!c)
		return;
	for (unsigned t = 0; t < c->threads; t++) {
		struct part *p = &c->parts[t];
		vmheap_map_release(&p->counts);
		free(p->direct);
		vmheap_block_cursor_free(p->cur);
		for (size_t i = 0; i < p->nclasses; i++)
			free(p->classes[i].name);
		free(p->classes);
		for (size_t i = 0; i < p->nsites; i++)
			free(p->sites[i].name);
		free(p->sites);
	}
	vmheap_namemap_release(&c->site_pool);
	free(c->site_names);
	vmheap_map_release(&c->site_ids);
	free(c->parts);
	vmheap_namemap_release(&c->pool);
	vmheap_map_release(&c->class_pool);
	free(c->pool_count);
	free(c->pool_bytes);
	free(c->pool_names);
	free(c->rows);
	free(c);
}
