/*
 * reader_maps.c - the reader's parsing of the HEAD and FOOT maps (see
 * FORMAT.md sections 5 and 7).  Unknown keys are skipped; "version" is
 * read before anything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmheap.h"
#include "format-internal.h"
#include "mpcursor-internal.h"
#include "reader-internal.h"

static int map_error(vmheap_reader *r, const struct vmheap_section *s,
		     const struct mpc *m, const char *what, int rc)
{
	return vmheap_reader_fail(
	    r, VMHEAP_EFORMAT, "malformed %s at byte offset %llu: %s", what,
	    (unsigned long long)(s->offset + VMHEAP_SECTION_HEADER_LEN +
				 (uint64_t)(m->p - s->payload)),
	    rc ? mpc_strerror(rc) : "unexpected value");
}

/* The map must fill the payload: bytes after it are damage (a writer
 * writes exactly one map), not an extension (FORMAT.md sections 5, 7). */
static int check_map_end(vmheap_reader *r, const struct vmheap_section *s,
			 const struct mpc *m, const char *what)
{
	if (m->p == m->end)
		return 0;
	return vmheap_reader_fail(
	    r, VMHEAP_EFORMAT,
	    "malformed %s at byte offset %llu: %zu %s its map "
	    "(section '%.4s' at %llu)",
	    what,
	    (unsigned long long)(s->offset + VMHEAP_SECTION_HEADER_LEN +
				 (uint64_t)(m->p - s->payload)),
	    (size_t)(m->end - m->p),
	    m->end - m->p == 1 ? "byte follows" : "bytes follow", s->tag,
	    (unsigned long long)s->offset);
}

static int key_is(const char *k, uint32_t klen, const char *want)
{
	return strlen(want) == klen && !memcmp(k, want, klen);
}

static char *dup_text(const char *s, uint32_t len)
{
	char *d = malloc((size_t)len + 1);

	if (d) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

/* Find "version" in the header map (the last one, if repeated); it is
 * read before anything else so that a newer major version is refused
 * whatever else changed. */
static int read_version(vmheap_reader *r, const struct vmheap_section *s)
{
	struct mpc m = {s->payload, s->payload + s->length};
	uint32_t n, klen, vn;
	const char *k;
	uint64_t major = 0, minor = 0;
	int rc, found = 0;

	if ((rc = mpc_map(&m, &n)))
		return map_error(r, s, &m, "header (not a map)", rc);
	while (n--) {
		if ((rc = mpc_str(&m, &k, &klen)))
			return map_error(r, s, &m, "header key", rc);
		if (!key_is(k, klen, "version")) {
			if ((rc = mpc_skip(&m)))
				return map_error(r, s, &m, "header value", rc);
			continue;
		}
		if ((rc = mpc_array(&m, &vn)) || vn < 2 ||
		    (rc = mpc_uint(&m, &major)) || (rc = mpc_uint(&m, &minor)))
			return map_error(r, s, &m,
					 "header version (want [major, minor])",
					 rc);
		for (vn -= 2; vn; vn--)
			if ((rc = mpc_skip(&m)))
				return map_error(r, s, &m, "header version",
						 rc);
		found = 1;
	}
	if (!found)
		return vmheap_reader_fail(
		    r, VMHEAP_EFORMAT,
		    "header at byte offset %llu has no \"version\" key",
		    (unsigned long long)s->offset);
	if (major != VMHEAP_FORMAT_MAJOR)
		return vmheap_reader_fail(
		    r, VMHEAP_EVERSION,
		    "dump has format version %llu.%llu, this reader "
		    "reads major version %u only (header at byte offset "
		    "%llu)",
		    (unsigned long long)major, (unsigned long long)minor,
		    VMHEAP_FORMAT_MAJOR, (unsigned long long)s->offset);
	if (minor > UINT32_MAX)
		return map_error(r, s, &m, "header minor version", 0);
	r->hdr.major = (uint32_t)major;
	r->hdr.minor = (uint32_t)minor;
	return 0;
}

static int read_header_uint(vmheap_reader *r, const struct vmheap_section *s,
			    struct mpc *m, const char *key, uint64_t max,
			    uint64_t *v)
{
	int rc = mpc_uint(m, v);
	char what[64];

	if (rc || *v > max) {
		snprintf(what, sizeof(what), "header value of \"%s\"", key);
		return map_error(r, s, m, what, rc);
	}
	return 0;
}

static int read_header_text(vmheap_reader *r, const struct vmheap_section *s,
			    struct mpc *m, const char *key, char **out)
{
	const char *t;
	uint32_t len;
	char what[64];
	int rc = mpc_str(m, &t, &len);

	if (rc || len > VMHEAP_MAX_STRING_BYTES) {
		snprintf(what, sizeof(what), "header value of \"%s\"", key);
		return map_error(r, s, m, what, rc);
	}
	free(*out);
	*out = dup_text(t, len);
	if (!*out)
		return vmheap_reader_fail(r, VMHEAP_ENOMEM,
					  "out of memory for the header");
	return 0;
}

static int read_kinds(vmheap_reader *r, const struct vmheap_section *s,
		      struct mpc *m)
{
	uint32_t n;
	int rc;

	if ((rc = mpc_array(m, &n)) || n > 65536 || n > (size_t)(m->end - m->p))
		return map_error(r, s, m, "header kinds", rc);
	if (r->kinds) /* a repeated key: the last one wins */
		for (size_t i = 0; i < r->hdr.kind_count; i++)
			free(r->kinds[i]);
	free(r->kinds);
	r->hdr.kind_count = 0;
	r->kinds = calloc((size_t)n + 1, sizeof(*r->kinds));
	if (!r->kinds)
		return vmheap_reader_fail(r, VMHEAP_ENOMEM,
					  "out of memory for the header");
	for (uint32_t i = 0; i < n; i++) {
		if ((rc = read_header_text(r, s, m, "kinds", &r->kinds[i])))
			return rc;
		r->hdr.kind_count = i + 1;
	}
	return 0;
}

int vmheap_reader_parse_header(vmheap_reader *r, const struct vmheap_section *s)
{
	struct mpc m = {s->payload, s->payload + s->length};
	uint32_t n, klen;
	const char *k;
	uint64_t v;
	int rc, have_time_ms = 0;

	if ((rc = read_version(r, s)))
		return rc;
	if ((rc = mpc_map(&m, &n)))
		return map_error(r, s, &m, "header (not a map)", rc);
	while (n--) {
		if ((rc = mpc_str(&m, &k, &klen)))
			return map_error(r, s, &m, "header key", rc);
		if (key_is(k, klen, "vm")) {
			rc = read_header_text(r, s, &m, "vm", &r->vm_name);
		} else if (key_is(k, klen, "vm_version")) {
			rc = read_header_text(r, s, &m, "vm_version",
					      &r->vm_version);
		} else if (key_is(k, klen, "pid")) {
			rc = read_header_uint(r, s, &m, "pid", UINT64_MAX,
					      &r->hdr.pid);
		} else if (key_is(k, klen, "time")) {
			if ((rc = mpc_int_wrap(&m, &v)))
				return map_error(r, s, &m, "header time", rc);
			r->hdr.time = (int64_t)v;
		} else if (key_is(k, klen, "time_ms")) {
			if ((rc = mpc_int_wrap(&m, &v)))
				return map_error(r, s, &m, "header time_ms",
						 rc);
			r->hdr.time_ms = (int64_t)v;
			have_time_ms = 1;
		} else if (key_is(k, klen, "pointer_size")) {
			rc = read_header_uint(r, s, &m, "pointer_size", 64, &v);
			r->hdr.pointer_size = (uint32_t)v;
		} else if (key_is(k, klen, "flags")) {
			rc =
			    read_header_uint(r, s, &m, "flags", UINT32_MAX, &v);
			r->hdr.flags = (uint32_t)v;
		} else if (key_is(k, klen, "kinds")) {
			rc = read_kinds(r, s, &m);
		} else if (key_is(k, klen, "rss") ||
			   key_is(k, klen, "malloc_in_use") ||
			   key_is(k, klen, "malloc_free") ||
			   key_is(k, klen, "malloc_mmap")) {
			struct vmheap_process_memory *pm = &r->hdr.memory;
			uint64_t *at = key_is(k, klen, "rss")		? &pm->rss
				       : key_is(k, klen, "malloc_in_use") ? &pm->malloc_in_use
				       : key_is(k, klen, "malloc_free")	? &pm->malloc_free
									: &pm->malloc_mmap;
			rc = read_header_uint(r, s, &m, "memory figure",
					      UINT64_MAX, at);
			r->hdr.has_memory = 1;
		} else {
			/* "version" (already read) or a newer key. */
			if ((rc = mpc_skip(&m)))
				return map_error(r, s, &m, "header value", rc);
		}
		if (rc)
			return rc;
	}
	if ((rc = check_map_end(r, s, &m, "header")))
		return rc;
	if (!have_time_ms)
		r->hdr.time_ms = vmheap_seconds_to_ms(r->hdr.time);
	if (!r->vm_name)
		r->vm_name = dup_text("", 0);
	if (!r->vm_version)
		r->vm_version = dup_text("", 0);
	if (!r->kinds)
		r->kinds = calloc(1, sizeof(*r->kinds));
	if (!r->vm_name || !r->vm_version || !r->kinds)
		return vmheap_reader_fail(r, VMHEAP_ENOMEM,
					  "out of memory for the header");
	r->hdr.vm_name = r->vm_name;
	r->hdr.vm_version = r->vm_version;
	r->hdr.kind_names = (const char *const *)r->kinds;
	return 0;
}

int vmheap_reader_parse_footer(vmheap_reader *r, const struct vmheap_section *s)
{
	static const char *const keys[] = {"objects", "bytes",	    "classes",
					   "roots",   "references", "strings",
					   "blocks"};
	uint64_t *dst[] = {&r->foot.objects,	&r->foot.bytes,
			   &r->foot.classes,	&r->foot.roots,
			   &r->foot.references, &r->foot.strings,
			   &r->foot.blocks};
	unsigned have = 0, have_index = 0;
	struct mpc m = {s->payload, s->payload + s->length};
	uint32_t n, klen, nb;
	const char *k;
	int rc;

	if ((rc = mpc_map(&m, &n)))
		return map_error(r, s, &m, "footer (not a map)", rc);
	while (n--) {
		unsigned i;
		if ((rc = mpc_str(&m, &k, &klen)))
			return map_error(r, s, &m, "footer key", rc);
		for (i = 0; i < 7; i++)
			if (key_is(k, klen, keys[i]))
				break;
		if (i < 7) {
			if ((rc = mpc_uint(&m, dst[i])))
				return map_error(r, s, &m, "footer total", rc);
			have |= 1u << i;
			continue;
		}
		if (key_is(k, klen, "sites")) { /* 1.1, only when non-zero */
			if ((rc = mpc_uint(&m, &r->foot.sites)))
				return map_error(r, s, &m, "footer total", rc);
			r->foot_has_sites = 1;
			continue;
		}
		if (!key_is(k, klen, "block_offsets")) {
			if ((rc = mpc_skip(&m)))
				return map_error(r, s, &m, "footer value", rc);
			continue;
		}
		if ((rc = mpc_array(&m, &nb)))
			return map_error(r, s, &m, "footer block_offsets", rc);
		if (nb != r->seen.blocks)
			return vmheap_reader_fail(
			    r, VMHEAP_ETOTALS,
			    "footer at byte offset %llu lists %u "
			    "blocks, but the dump holds %llu",
			    (unsigned long long)s->offset, nb,
			    (unsigned long long)r->seen.blocks);
		for (uint32_t b = 0; b < nb; b++) {
			uint64_t off;
			if ((rc = mpc_uint(&m, &off)))
				return map_error(r, s, &m,
						 "footer block offset", rc);
			if (off != r->blk_offsets[b])
				return vmheap_reader_fail(
				    r, VMHEAP_ETOTALS,
				    "footer at byte offset %llu puts "
				    "block %u at %llu, but it is at "
				    "%llu",
				    (unsigned long long)s->offset, b,
				    (unsigned long long)off,
				    (unsigned long long)r->blk_offsets[b]);
		}
		have_index = 1;
	}
	if ((rc = check_map_end(r, s, &m, "footer")))
		return rc;
	for (unsigned i = 0; i < 7; i++)
		if (!(have & (1u << i)))
			return vmheap_reader_fail(
			    r, VMHEAP_EFORMAT,
			    "footer at byte offset %llu has no \"%s\"",
			    (unsigned long long)s->offset, keys[i]);
	if (!have_index)
		return vmheap_reader_fail(r, VMHEAP_EFORMAT,
					  "footer at byte offset %llu has no "
					  "\"block_offsets\"",
					  (unsigned long long)s->offset);
	if (r->foot.blocks != r->seen.blocks)
		return vmheap_reader_fail(
		    r, VMHEAP_ETOTALS,
		    "footer totals disagree with the dump: footer says "
		    "%llu blocks, the dump holds %llu (footer at byte "
		    "offset %llu)",
		    (unsigned long long)r->foot.blocks,
		    (unsigned long long)r->seen.blocks,
		    (unsigned long long)s->offset);
	return 0;
}
