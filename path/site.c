/*
 * site.c - where vmheap-path's target was allocated, when the dump
 * carries allocation sites (format 1.1): the site of an object, or the
 * sites of a class's instances, most instances first.
 *
 * The heap graph holds no sites, so the dump is read once more: for a
 * class, a census by site (its rows of that class); for an object, one
 * pass that finds its record and the site records.  A dump read from
 * standard input cannot be read again: it gets no site line.  A dump
 * whose objects name no site (the graph saw none) is not read again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path-internal.h"

/* The object pass: its site id, and every site record's text. */
struct object_site {
	uint64_t address, site;
	struct path_site *sites; /* .text, .count = site id */
	size_t nsites, cap;
};

static int scan_block(void *state, unsigned thread,
		      const struct vmheap_block *blk, char *err, size_t errsz)
{
	struct object_site *os = state;
	vmheap_block_cursor *cur;
	struct vmheap_record rec;
	int rc;

	(void)thread;
	if ((rc = vmheap_block_cursor_open(&cur, blk)) < 0) {
		snprintf(err, errsz, "%s", vmheap_block_cursor_error(cur));
		vmheap_block_cursor_free(cur);
		return rc;
	}
	while ((rc = vmheap_block_cursor_next_shallow_batch(cur, &rec, 1)) >
	       0) {
		if (rec.type == VMHEAP_RECORD_OBJECT &&
		    rec.u.object.id == os->address) {
			os->site = rec.u.object.site;
		} else if (rec.type == VMHEAP_RECORD_SITE) {
			if (os->nsites == os->cap) {
				struct path_site *g = vmheap_array_grow(
				    os->sites, &os->cap, sizeof(*g), 16);
				if (!g)
					break;
				os->sites = g;
			}
			os->sites[os->nsites].text = vmheap_site_text(&rec);
			if (!os->sites[os->nsites].text)
				break;
			os->sites[os->nsites].count = rec.u.site.id;
			os->nsites++;
		}
	}
	if (rc < 0)
		snprintf(err, errsz, "%s", vmheap_block_cursor_error(cur));
	else if (rc > 0)
		snprintf(err, errsz, "out of memory");
	vmheap_block_cursor_free(cur);
	return rc > 0 ? VMHEAP_ENOMEM : rc;
}

static int object_site(const struct path_options *o, vmheap_reader *r,
		       struct path_result *res, char *err, size_t errsz)
{
	struct vmheap_scan_options one = VMHEAP_SCAN_OPTIONS_INIT;
	struct object_site os = {0};
	int rc;

	one.threads = 1;
	os.address = res->address;
	rc = vmheap_scan_blocks(r, scan_block, &os, &one, err, errsz);
	for (size_t i = 0; i < os.nsites; i++) {
		if (rc == 0 && os.site && !res->sites &&
		    os.sites[i].count == os.site) {
			res->sites = calloc(1, sizeof(*res->sites));
			if (res->sites) {
				res->sites->text = os.sites[i].text;
				res->sites->count = 1;
				res->nsites = 1;
				continue;
			}
		}
		free(os.sites[i].text);
	}
	free(os.sites);
	(void)o;
	return rc;
}

static int by_count(const void *pa, const void *pb)
{
	const struct path_site *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return strcmp(a->text, b->text);
}

static int class_sites(const struct path_options *o, vmheap_reader *r,
		       struct path_result *res, char *err, size_t errsz)
{
	vmheap_census *c;
	struct vmheap_census_row *rows;
	size_t n;
	int rc = vmheap_census_new(&c, VMHEAP_GROUP_SITE, 1);

	if (rc < 0) {
		snprintf(err, errsz, "out of memory");
		return rc;
	}
	rc = vmheap_census_read(c, r, NULL);
	if (rc < 0) {
		snprintf(err, errsz, "%s", vmheap_census_error(c));
		vmheap_census_free(c);
		return rc;
	}
	rows = vmheap_census_rows(c, &n);
	res->sites = calloc(n ? n : 1, sizeof(*res->sites));
	for (size_t i = 0; res->sites && i < n; i++) {
		struct path_site *s = &res->sites[res->nsites];

		if (!rows[i].site || strcmp(rows[i].name, o->target) != 0)
			continue;
		s->text = strdup(rows[i].site);
		if (!s->text)
			break;
		s->count = rows[i].count;
		s->bytes = rows[i].bytes;
		res->nsites++;
	}
	vmheap_census_free(c);
	if (!res->sites) {
		snprintf(err, errsz, "out of memory");
		return VMHEAP_ENOMEM;
	}
	qsort(res->sites, res->nsites, sizeof(*res->sites), by_count);
	return 0;
}

int path_find_sites(const struct path_options *o, struct path_result *res,
		    char *err, size_t errsz)
{
	vmheap_reader *r = NULL;
	uint64_t size;
	int regular, rc;

	/* no object of the dump has a site: nothing to read again */
	if (strcmp(o->dump, "-") == 0 || !vmheap_graph_has_sites(res->g))
		return 0;
	rc = vmheap_dump_open(&r, o->dump, &size, &regular, err, errsz);
	if (rc == 0)
		rc = res->by_address ? object_site(o, r, res, err, errsz)
				     : class_sites(o, r, res, err, errsz);
	else if (r)
		snprintf(err, errsz, "%s", vmheap_reader_error(r));
	vmheap_reader_free(r);
	return rc;
}

void path_sites_release(struct path_result *res)
{
	for (size_t i = 0; i < res->nsites; i++)
		free(res->sites[i].text);
	free(res->sites);
	res->sites = NULL;
	res->nsites = 0;
}
