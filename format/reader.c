/*
 * reader.c - the sequential dump reader.
 *
 * The reader reads its input front to back with read(2) (a pipe works),
 * one section at a time into a buffer that grows to the largest section
 * (at most VMHEAP_MAX_SECTION_BYTES plus its header).  Every section's
 * CRC32C is checked before its payload is looked at.  The reader reports
 * the end (0) only after the footer, its block index, its totals and the
 * trailer all checked out: a truncated or damaged dump is always an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmheap.h"
#include "block_cursor-internal.h"
#include "crc32c-internal.h"
#include "format-internal.h"
#include "mpcursor-internal.h"
#include "reader-internal.h"

#define READ_CHUNK (128u * 1024u)

int vmheap_reader_fail(vmheap_reader *r, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->errmsg, sizeof(r->errmsg), "%s: ", r->name);
	if (n < 0 || (size_t)n >= sizeof(r->errmsg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->errmsg + n, sizeof(r->errmsg) - (size_t)n, fmt, ap);
	va_end(ap);
	r->err = code;
	return code;
}

static uint64_t here(const vmheap_reader *r)
{
	return r->buf_offset + r->pos;
}

/*
 * Make `need` unconsumed bytes available.  Returns 1 when they are, 0 when
 * the input ends first (end of file), or a negative error.
 *
 * Reads ask for exactly what is missing plus the next section's header,
 * so each section costs one read(2), nothing is moved but that header,
 * and the bytes are decoded while they are still in the CPU's cache.
 */
static int ensure(vmheap_reader *r, size_t need)
{
	size_t want;

	if (r->len - r->pos >= need)
		return 1;
	if (r->pos) {
		/* Move what is left (a header, usually) to the front. */
		size_t keep = r->len - r->pos;
		if (keep)
			memmove(r->buf, r->buf + r->pos, keep);
		r->buf_offset += r->pos;
		r->pos = 0;
		r->len = keep;
	}
	want = need + VMHEAP_SECTION_HEADER_LEN;
	if (r->cap < want) {
		size_t ncap = r->cap ? r->cap : READ_CHUNK;
		uint8_t *nbuf;
		while (ncap < want)
			ncap *= 2;
		nbuf = realloc(r->buf, ncap);
		if (!nbuf)
			return vmheap_reader_fail(
			    r, VMHEAP_ENOMEM,
			    "out of memory for a %zu-byte section at byte "
			    "offset %llu",
			    need, (unsigned long long)here(r));
		r->buf = nbuf;
		r->cap = ncap;
	}
	while (r->len < need) {
		ssize_t k = read(r->fd, r->buf + r->len, want - r->len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return vmheap_reader_fail(
			    r, VMHEAP_EIO,
			    "read failed at byte offset %llu: %s",
			    (unsigned long long)(r->buf_offset + r->len),
			    strerror(errno));
		}
		if (k == 0)
			return 0;
		r->len += (size_t)k;
	}
	return 1;
}

/* The input ended while `what` was expected. */
static int truncated(vmheap_reader *r, const char *what)
{
	return vmheap_reader_fail(
	    r, VMHEAP_ETRUNCATED,
	    "dump is truncated at byte offset %llu: %s is missing; "
	    "no footer (the writer did not finish)",
	    (unsigned long long)(r->buf_offset + r->len), what);
}

static void tag_text(const char tag[4], char out[20])
{
	char *o = out;

	for (int i = 0; i < 4; i++) {
		unsigned char ch = (unsigned char)tag[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			*o++ = (char)ch;
		else
			o += sprintf(o, "\\x%02x", ch);
	}
	*o = '\0';
}

/* Read one section (header and payload) and check its CRC. */
static int read_section(vmheap_reader *r, struct vmheap_section *s)
{
	const uint8_t *h;
	uint32_t stored, computed;
	char what[96], tag[20];
	int rc;

	s->offset = here(r);
	rc = ensure(r, VMHEAP_SECTION_HEADER_LEN);
	if (rc <= 0) {
		if (rc < 0)
			return rc;
		snprintf(what, sizeof(what), "the section header at %llu",
			 (unsigned long long)s->offset);
		return truncated(r, what);
	}
	h = r->buf + r->pos;
	memcpy(s->tag, h, 4);
	s->length = vmheap_get_be32(h + 4);
	s->records = vmheap_get_be32(h + 8);
	stored = vmheap_get_be32(h + 12);
	tag_text(s->tag, tag);
	if (s->length > VMHEAP_MAX_SECTION_BYTES)
		return vmheap_reader_fail(
		    r, VMHEAP_ELIMIT,
		    "section '%s' at byte offset %llu declares %u "
		    "payload bytes, more than the limit of %u (damaged "
		    "header?)",
		    tag, (unsigned long long)s->offset, s->length,
		    VMHEAP_MAX_SECTION_BYTES);
	rc = ensure(r, VMHEAP_SECTION_HEADER_LEN + (size_t)s->length);
	if (rc <= 0) {
		if (rc < 0)
			return rc;
		snprintf(what, sizeof(what),
			 "part of the %u-byte section '%s' at %llu", s->length,
			 tag, (unsigned long long)s->offset);
		return truncated(r, what);
	}
	h = r->buf + r->pos;
	s->payload = h + VMHEAP_SECTION_HEADER_LEN;
	computed = vmheap_crc32c(0, h, 12);
	computed = vmheap_crc32c(computed, s->payload, s->length);
	if (computed != stored)
		return vmheap_reader_fail(
		    r, VMHEAP_ECHECKSUM,
		    "%s checksum mismatch at byte offset %llu (section "
		    "'%s' at %llu): stored 0x%08x, computed 0x%08x",
		    memcmp(s->tag, VMHEAP_TAG_BLCK, 4) ? "section" : "block",
		    (unsigned long long)(s->offset + VMHEAP_SECTION_HEADER_LEN),
		    tag, (unsigned long long)s->offset, stored, computed);
	r->pos += VMHEAP_SECTION_HEADER_LEN + s->length;
	return 0;
}

static int read_magic(vmheap_reader *r)
{
	int rc = ensure(r, VMHEAP_MAGIC_LEN);
	size_t have = r->len - r->pos;

	if (rc < 0)
		return rc;
	if (have > VMHEAP_MAGIC_LEN)
		have = VMHEAP_MAGIC_LEN;
	if (memcmp(r->buf + r->pos, VMHEAP_MAGIC, have)) {
		if (have >= 4 && !memcmp(r->buf + r->pos, VMHEAP_MAGIC, 4))
			return vmheap_reader_fail(
			    r, VMHEAP_EMAGIC,
			    "not a vmheap dump: the magic at byte "
			    "offset 0 is damaged (was the file copied "
			    "in text mode?)");
		return vmheap_reader_fail(
		    r, VMHEAP_EMAGIC,
		    "not a vmheap dump: wrong magic at byte offset 0");
	}
	if (!rc)
		return truncated(r, "the file magic");
	r->pos += VMHEAP_MAGIC_LEN;
	return 0;
}

static int read_head(vmheap_reader *r)
{
	struct vmheap_section s;
	char tag[20];
	int rc;

	if ((rc = read_magic(r)) || (rc = read_section(r, &s)))
		return rc;
	if (memcmp(s.tag, VMHEAP_TAG_HEAD, 4)) {
		tag_text(s.tag, tag);
		return vmheap_reader_fail(
		    r, VMHEAP_EFORMAT,
		    "expected the HEAD section at byte offset %llu, "
		    "found '%s'",
		    (unsigned long long)s.offset, tag);
	}
	return vmheap_reader_parse_header(r, &s);
}

static int read_trailer(vmheap_reader *r, uint64_t foot_offset)
{
	const uint8_t *t;
	uint64_t at = here(r);
	int rc = ensure(r, VMHEAP_TRAILER_LEN);

	if (rc < 0)
		return rc;
	if (!rc)
		return truncated(r, "the trailer after the footer");
	t = r->buf + r->pos;
	if (memcmp(t + 8, VMHEAP_END_MAGIC, VMHEAP_END_MAGIC_LEN))
		return vmheap_reader_fail(r, VMHEAP_EFORMAT,
					  "bad end magic at byte offset %llu",
					  (unsigned long long)(at + 8));
	if (vmheap_get_be64(t) != foot_offset)
		return vmheap_reader_fail(
		    r, VMHEAP_EFORMAT,
		    "trailer at byte offset %llu points to a footer at "
		    "%llu, but the footer is at %llu",
		    (unsigned long long)at,
		    (unsigned long long)vmheap_get_be64(t),
		    (unsigned long long)foot_offset);
	r->pos += VMHEAP_TRAILER_LEN;
	rc = ensure(r, 1);
	if (rc < 0)
		return rc;
	if (rc)
		return vmheap_reader_fail(
		    r, VMHEAP_EFORMAT,
		    "unexpected data after the end magic at byte "
		    "offset %llu",
		    (unsigned long long)here(r));
	return 0;
}

static int check_totals(vmheap_reader *r, uint64_t foot_offset)
{
	static const char *const names[] = {"objects", "bytes",	"classes",
					    "roots",   "references", "strings",
					    "sites"};
	const uint64_t f[] = {r->foot.objects,	  r->foot.bytes,
			      r->foot.classes,	  r->foot.roots,
			      r->foot.references, r->foot.strings,
			      r->foot.sites};
	const uint64_t s[] = {r->seen.objects,	  r->seen.bytes,
			      r->seen.classes,	  r->seen.roots,
			      r->seen.references, r->seen.strings,
			      r->seen.sites};

	/* `sites` is a 1.1 key, written only when non-zero: checked when
	 * present, and a dump whose footer lacks it must hold no sites. */
	int n = r->foot_has_sites || r->seen.sites ? 7 : 6;

	for (int i = 0; i < n; i++)
		if (f[i] != s[i])
			return vmheap_reader_fail(
			    r, VMHEAP_ETOTALS,
			    "footer totals disagree with the records: "
			    "footer says %llu %s, the records hold %llu "
			    "(footer at byte offset %llu)",
			    (unsigned long long)f[i], names[i],
			    (unsigned long long)s[i],
			    (unsigned long long)foot_offset);
	return 0;
}

/*
 * Move to the next block: returns 1 with *blk filled, 0 after the footer
 * and trailer were read and checked, or an error.
 */
static int next_section(vmheap_reader *r, struct vmheap_block *blk,
			uint64_t *foot_offset)
{
	struct vmheap_section s;
	int rc;

	for (;;) {
		if ((rc = read_section(r, &s)))
			return rc;
		if (!memcmp(s.tag, VMHEAP_TAG_BLCK, 4)) {
			if (r->seen.blocks == r->blk_cap) {
				uint64_t *g = vmheap_array_grow(r->blk_offsets,
								&r->blk_cap,
								sizeof(*g), 64);
				if (!g)
					return vmheap_reader_fail(
					    r, VMHEAP_ENOMEM,
					    "out of memory for the "
					    "block index");
				r->blk_offsets = g;
			}
			r->blk_offsets[r->seen.blocks++] = s.offset;
			blk->offset = s.offset;
			blk->records = s.records;
			blk->length = s.length;
			blk->data = s.payload;
			return 1;
		}
		if (!memcmp(s.tag, VMHEAP_TAG_FOOT, 4)) {
			if ((rc = vmheap_reader_parse_footer(r, &s)) ||
			    (rc = read_trailer(r, s.offset)))
				return rc;
			*foot_offset = r->foot_offset = s.offset;
			return 0;
		}
		if (!memcmp(s.tag, VMHEAP_TAG_HEAD, 4))
			return vmheap_reader_fail(
			    r, VMHEAP_EFORMAT,
			    "second HEAD section at byte offset %llu",
			    (unsigned long long)s.offset);
		/* The native section (1.1): kept for vmheap_reader_native;
		 * a second one is skipped like any other section. */
		if (!memcmp(s.tag, VMHEAP_TAG_NATV, 4) && !r->native_offset) {
			r->native = malloc(s.length ? s.length : 1);
			if (!r->native)
				return vmheap_reader_fail(
				    r, VMHEAP_ENOMEM,
				    "out of memory for the native section");
			memcpy(r->native, s.payload, s.length);
			r->native_len = s.length;
			r->native_offset = s.offset;
		}
		/* A section of a newer minor version: skipped (its CRC was
		 * checked). */
	}
}

static int reader_new(vmheap_reader **out, int fd, const char *name)
{
	vmheap_reader *r = calloc(1, sizeof(*r));

	*out = r;
	if (!r)
		return VMHEAP_ENOMEM;
	r->fd = fd;
	r->name = strdup(name ? name : "<input>");
	if (!r->name) {
		free(r);
		*out = NULL;
		return VMHEAP_ENOMEM;
	}
	return 0;
}

int vmheap_reader_open_fd(vmheap_reader **out, int fd, const char *name)
{
	int rc;

	if (!out)
		return VMHEAP_EINVAL;
	if ((rc = reader_new(out, fd, name)))
		return rc;
	if (fd < 0)
		return vmheap_reader_fail(*out, VMHEAP_EINVAL,
					  "bad file descriptor %d", fd);
	return read_head(*out);
}

int vmheap_reader_open_path(vmheap_reader **out, const char *path)
{
	int fd, rc;

	if (!out)
		return VMHEAP_EINVAL;
	if (!path) {
		if ((rc = reader_new(out, -1, "<no path>")))
			return rc;
		return vmheap_reader_fail(*out, VMHEAP_EINVAL, "no path given");
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if ((rc = reader_new(out, fd, path))) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (fd < 0)
		return vmheap_reader_fail(*out, VMHEAP_EIO, "cannot open: %s",
					  strerror(errno));
	(*out)->own_fd = 1;
	return read_head(*out);
}

const struct vmheap_header *vmheap_reader_header(const vmheap_reader *r)
{
	return &r->hdr;
}

/*
 * Check that a more-references record continues the object right before
 * it (FORMAT.md, "More-references record"): only records of unknown tags,
 * unknown sections and block boundaries may come between.  Then note
 * what the next one may continue.  Returns 1, or the error.
 */
static int follow_chain(vmheap_reader *r, const struct vmheap_record *rec)
{
	int is_object = rec->type == VMHEAP_RECORD_OBJECT;

	r->chain_mark = r->seen.objects;
	if (rec->type == VMHEAP_RECORD_MORE_REFS &&
	    (!r->chain_ok || r->chain_id != rec->u.object.id)) {
		static const char *const names[] = {
		    [VMHEAP_RECORD_STRING] = "a string record",
		    [VMHEAP_RECORD_CLASS] = "a class record",
		    [VMHEAP_RECORD_ROOT] = "a root record",
		    [VMHEAP_RECORD_SITE] = "a site record",
		};
		char before[64];

		if (r->chain_ok)
			snprintf(before, sizeof(before), "object 0x%llx",
				 (unsigned long long)r->chain_id);
		else
			snprintf(before, sizeof(before), "%s",
				 r->chain_type ? names[r->chain_type]
					       : "no record");
		r->in_block = 0; /* the fast path must not go on */
		return vmheap_reader_fail(
		    r, VMHEAP_EFORMAT,
		    "more-references record at byte offset %llu continues "
		    "object 0x%llx, but %s comes right before it",
		    (unsigned long long)rec->offset,
		    (unsigned long long)rec->u.object.id, before);
	}
	r->chain_ok = is_object || rec->type == VMHEAP_RECORD_MORE_REFS;
	r->chain_type = rec->type;
	r->chain_id = rec->u.object.id;
	return 1;
}

/* Everything but the common case: other records, block ends, errors. */
static __attribute__((noinline)) int next_slow(vmheap_reader *r,
					       struct vmheap_record *rec)
{
	struct vmheap_block blk;
	uint64_t foot_offset;
	int rc;

	if (!r || !rec)
		return VMHEAP_EINVAL;
	if (r->err)
		return r->err;
	if (r->done)
		return 0;
	if (r->mode == MODE_BLOCKS)
		return VMHEAP_ESTATE;
	r->mode = MODE_RECORDS;
	for (;;) {
		if (r->in_block) {
			if (r->seen.objects != r->chain_mark) {
				/* objects of the fast path came last */
				r->chain_ok = 1;
				r->chain_type = VMHEAP_RECORD_OBJECT;
				r->chain_id = r->cur.prev_id;
				r->chain_mark = r->seen.objects;
			}
			rc = vmheap_block_cursor_next(&r->cur, rec);
			if (rc > 0) {
				vmheap_totals_add_record(&r->seen, rec);
				return follow_chain(r, rec);
			}
			if (rc < 0)
				return vmheap_reader_fail(r, rc, "%s",
							  r->cur.error);
			r->in_block = 0;
		}
		rc = next_section(r, &blk, &foot_offset);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			if ((rc = check_totals(r, foot_offset)))
				return rc;
			r->done = 1;
			return 0;
		}
		if (r->cur.data)
			vmheap_block_cursor_reset(&r->cur, &blk);
		else
			block_cursor_init(&r->cur, &blk);
		r->in_block = 1;
	}
}

int vmheap_reader_next(vmheap_reader *r, struct vmheap_record *rec)
{
	/* in_block is only ever set in record mode; after an error the
	 * cursor is exhausted, so the fast path declines and next_slow()
	 * returns the sticky error. */
	if (__builtin_expect(r && rec && r->in_block, 1) &&
	    vmheap_block_cursor_fast_object(&r->cur, rec)) {
		r->seen.objects++;
		r->seen.bytes += rec->u.object.bytes;
		r->seen.references += rec->u.object.nrefs;
		return 1;
	}
	return next_slow(r, rec);
}

int vmheap_reader_next_block(vmheap_reader *r, struct vmheap_block *blk)
{
	uint64_t foot_offset;
	int rc;

	if (!r || !blk)
		return VMHEAP_EINVAL;
	if (r->err)
		return r->err;
	if (r->done)
		return 0;
	if (r->mode == MODE_RECORDS)
		return VMHEAP_ESTATE;
	r->mode = MODE_BLOCKS;
	rc = next_section(r, blk, &foot_offset);
	if (rc == 0)
		r->done = 1;
	return rc;
}

const struct vmheap_totals *vmheap_reader_totals(const vmheap_reader *r)
{
	return r->done ? &r->foot : &r->seen;
}

uint64_t vmheap_reader_footer_offset(const vmheap_reader *r)
{
	return r ? r->foot_offset : 0;
}

uint64_t vmheap_reader_offset(const vmheap_reader *r)
{
	return here(r);
}

const char *vmheap_reader_error(const vmheap_reader *r)
{
	return r ? r->errmsg : "out of memory";
}

const char *vmheap_reader_name(const vmheap_reader *r)
{
	return r ? r->name : "";
}

void vmheap_reader_free(vmheap_reader *r)
{
	if (!r)
		return;
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	block_cursor_release(&r->cur);
	free(r->buf);
	free(r->name);
	free(r->vm_name);
	free(r->vm_version);
	if (r->kinds)
		for (size_t i = 0; i < r->hdr.kind_count; i++)
			free(r->kinds[i]);
	free(r->kinds);
	free(r->blk_offsets);
	free(r->native);
	free(r);
}

int vmheap_reader_native(vmheap_reader *r, struct vmheap_native **out)
{
	char err[512];
	int rc;

	if (!r || !out)
		return VMHEAP_EINVAL;
	*out = NULL;
	if (r->err)
		return r->err;
	if (!r->done)
		return VMHEAP_ESTATE;
	if (!r->native_offset)
		return 0;
	rc = vmheap_native_decode(r->native, r->native_len, r->native_offset,
				  out, err, sizeof(err));
	if (rc)
		return vmheap_reader_fail(r, rc, "%s", err);
	return 0;
}
