/*
 * ruby_dump_sites.c - the site of each object a dump writes.
 *
 *  - an instruction sequence (<imemo:iseq>) has its own: its file and
 *    first line (ruby_imemo.c).  Code compiled by eval without a file
 *    name is "(eval)" in Ruby 3.1; for it the allocation site, when the
 *    tracer recorded one, is better: the line of the eval.
 *  - any other object has the site the allocation tracer recorded
 *    (ruby_alloc_sites.c), if it was made while tracing was on.
 *
 * A dump numbers its sites afresh (1, 2, ... in the order of first use)
 * and writes each site record just before the first object that uses it.
 * Sites are interned by content, so an iseq at app.rb:3 and an object
 * traced at app.rb:3 with no method share one record.  The tracer's ids
 * are translated through an array, so each traced object costs one
 * lookup in the object table and one array read.
 */
#include <stdlib.h>
#include <string.h>

#include "ruby-internal.h"

void ruby_dump_sites_init(struct ruby_dump_sites *ds, vmheap_writer *w)
{
	memset(ds, 0, sizeof(*ds));
	ds->w = w;
	ruby_site_table_init(&ds->table);
}

void ruby_dump_sites_free(struct ruby_dump_sites *ds)
{
	ruby_site_table_free(&ds->table);
	free(ds->traced);
	memset(ds, 0, sizeof(*ds));
}

/* The dump's id of a site, writing its record the first time. */
static int dump_id(struct ruby_dump_sites *ds, const char *file,
		   size_t file_len, uint64_t line, const char *method,
		   size_t method_len, uint64_t *id)
{
	int added, rc;
	uint32_t n;

	if (file_len > VMHEAP_MAX_STRING_BYTES)
		file_len = VMHEAP_MAX_STRING_BYTES;
	if (method_len > VMHEAP_MAX_STRING_BYTES)
		method_len = VMHEAP_MAX_STRING_BYTES;
	n = ruby_site_table_intern(&ds->table, file, file_len, line, method,
				   method_len, &added);
	if (!n)
		return VMHEAP_ENOMEM;
	if (added) {
		rc = vmheap_writer_add_site(ds->w, n, file, file_len, line,
					    method, method_len);
		if (rc < 0)
			return rc;
	}
	*id = n;
	return 0;
}

/* The dump's id of the tracer's site `t`. */
static int traced_id(struct ruby_dump_sites *ds, uint32_t t, uint64_t *id)
{
	const struct ruby_site *s;
	int rc;

	if (t >= ds->ntraced) {
		size_t n = (size_t)ruby_alloc_site_count() + 1;
		uint64_t *map;

		if (n <= t)
			n = (size_t)t + 1;
		map = realloc(ds->traced, n * sizeof(*map));
		if (!map)
			return VMHEAP_ENOMEM;
		memset(map + ds->ntraced, 0,
		       (n - ds->ntraced) * sizeof(*map));
		ds->traced = map;
		ds->ntraced = n;
	}
	if (ds->traced[t]) {
		*id = ds->traced[t];
		return 0;
	}
	s = ruby_alloc_site(t);
	if (!s) {
		*id = 0;
		return 0;
	}
	rc = dump_id(ds, s->file, s->file_len, s->line, s->method,
		     s->method_len, id);
	if (rc == 0)
		ds->traced[t] = *id;
	return rc;
}

int ruby_dump_site_of(struct ruby_dump_sites *ds, VALUE obj, int type,
		      uint64_t *site)
{
	uint32_t traced = ruby_alloc_site_of(obj);
	const char *file;
	size_t file_len;
	uint64_t line;

	*site = 0;
	if (type == T_IMEMO &&
	    ruby_iseq_location(obj, &file, &file_len, &line) &&
	    !(traced && ruby_iseq_from_eval(file, file_len)))
		return dump_id(ds, file, file_len, line, "", 0, site);
	return traced ? traced_id(ds, traced, site) : 0;
}
