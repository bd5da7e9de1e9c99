/*
 * block_summary.c - read a block through its summary record (FORMAT.md
 * section 6, "Block summary record"): the objects counted by (class,
 * kind) without decoding them, and the block's other records decoded
 * where the summary says they are.
 *
 * What is checked: the summary's own encoding, its counts against the
 * block's record count, its offsets (increasing, inside the block, each
 * on a record that is no object, records not overlapping).  What cannot
 * be: that the object records between them say what the rows say; the
 * block's CRC covers both, and the census compares its sums with the
 * footer's totals at the end.
 */
#include <stdio.h>
#include <string.h>

#include "vmheap.h"
#include "block_cursor-internal.h"
#include "format-internal.h"
#include "mpcursor-internal.h"

static int bad(struct vmheap_block_cursor *c, const uint8_t *at,
	       const char *what)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "malformed block summary: %s", what);
	return vmheap_block_cursor_fail(c, VMHEAP_EFORMAT, at, msg);
}

/* The summary's header at c->pos: 1 with the counts and the rows and
 * others arrays' lengths, m past the rows' array header; 0 when the
 * block does not start with a summary. */
static int read_head(struct vmheap_block_cursor *c, struct mpc *m,
		     uint32_t *elems, struct vmheap_block_summary *sum,
		     uint32_t *nrows)
{
	uint64_t tag;

	if (c->pos == c->end || (c->pos[0] & 0xf0) != 0x90 ||
	    c->pos + 1 == c->end || c->pos[1] != VMHEAP_RECORD_SUMMARY)
		return 0;
	if (mpc_array(m, elems) || *elems < 5 || mpc_uint(m, &tag))
		return bad(c, c->pos, "fewer than 5 elements");
	if (mpc_uint(m, &sum->objects) || mpc_uint(m, &sum->references))
		return bad(c, m->p, "object or reference count is no uint");
	if (mpc_array(m, nrows) || *nrows % 4)
		return bad(c, m->p, "rows are not an array of 4-tuples");
	return 1;
}

/*
 * A more-references record at p, counted from its references array's
 * header and not read further (a census needs the count alone; the
 * record may hold 65,536 references and as many names): 1 with *rec
 * filled (refs and names NULL) and the record taken from the count, 0 to
 * decode it as any record.  The next offset must come after p.
 */
static int count_more_refs(struct vmheap_block_cursor *c, const uint8_t *p,
			   struct vmheap_record *rec)
{
	struct mpc m = {p, c->end};
	uint32_t n, k;
	uint64_t tag, delta;

	if (mpc_array(&m, &n) || n < 3 || mpc_uint(&m, &tag) ||
	    tag != VMHEAP_RECORD_MORE_REFS || mpc_int_wrap(&m, &delta) ||
	    mpc_array(&m, &k) || k > VMHEAP_MAX_REFS_PER_RECORD ||
	    k > (size_t)(c->end - m.p))
		return 0;
	memset(rec, 0, sizeof(*rec));
	rec->type = VMHEAP_RECORD_MORE_REFS;
	rec->u.object.nrefs = k;
	rec->offset = c->base_offset + (uint64_t)(p - c->data);
	c->records_left--;
	c->pos = p + 1;
	return 1;
}

int vmheap_block_cursor_summary(struct vmheap_block_cursor *c,
				struct vmheap_block_summary *sum,
				vmheap_summary_row_fn row_fn,
				vmheap_summary_record_fn record_fn, void *arg)
{
	const uint8_t *start = c->pos, *first, *after;
	struct mpc m = {c->pos, c->end};
	uint32_t elems = 0, nrows = 0, nothers = 0;
	uint64_t counted = 0;
	struct vmheap_record rec;
	int rc;

	memset(sum, 0, sizeof(*sum));
	if (c->status)
		return c->status;
	if (start != c->data || !c->records_left)
		return 0;
	if ((rc = read_head(c, &m, &elems, sum, &nrows)) <= 0)
		return rc;
	for (uint32_t i = 0; i < nrows; i += 4) {
		uint64_t class_id, kind, count, bytes;
		const uint8_t *p = m.p;
		/* Far from the end, the unchecked decoders (no bounds check
		 * per value); anything they refuse goes the checked way. */
		if (c->end - p < 4 * MPC_MAX_INT_BYTES ||
		    mpc_uint_unchecked(&p, &class_id) ||
		    mpc_uint_unchecked(&p, &kind) ||
		    mpc_uint_unchecked(&p, &count) ||
		    mpc_uint_unchecked(&p, &bytes)) {
			if (mpc_uint(&m, &class_id) || mpc_uint(&m, &kind) ||
			    mpc_uint(&m, &count) || mpc_uint(&m, &bytes))
				return bad(c, m.p, "a row value is no uint");
		} else {
			m.p = p;
		}
		if (kind > UINT32_MAX || count == 0 ||
		    count > sum->objects - counted)
			return bad(c, m.p, "a row's kind or count is out "
					   "of range");
		counted += count;
		sum->bytes += bytes;
		if ((rc = row_fn(arg, class_id, (uint32_t)kind, count, bytes)))
			return rc;
	}
	if (counted != sum->objects)
		return bad(c, m.p, "rows count other than its objects");
	if (mpc_array(&m, &nothers))
		return bad(c, m.p, "others is not an array");
	/* The offsets count from the first record after the summary, which
	 * is known only past the summary's end: skip them here (later
	 * elements are a newer minor version's: skipped too), read them
	 * below, rather than keep up to 2^32 of them in memory. */
	after = m.p;
	for (uint32_t i = 0; i < nothers; i++)
		if (mpc_skip(&m))
			return bad(c, after, "an offset is no uint");
	for (uint32_t i = 5; i < elems; i++)
		if (mpc_skip(&m))
			return bad(c, m.p, "an extra element is malformed");
	first = m.p;
	if ((uint64_t)c->records_left != 1 + sum->objects + nothers)
		return bad(c, start, "the block's record count is not 1 + "
				     "objects + others");
	c->records_left--;
	c->pos = first;
	m.p = after;
	for (uint32_t i = 0; i < nothers; i++) {
		uint64_t off;
		if (mpc_uint(&m, &off))
			return bad(c, m.p, "an offset is no uint");
		if (off >= (uint64_t)(c->end - first) || first + off < c->pos)
			return bad(c, m.p, "an offset is out of order, past "
					   "the block or inside a record");
		c->pos = first + off;
		rc = count_more_refs(c, c->pos, &rec);
		if (rc == 0)
			rc = vmheap_block_cursor_decode_one(c, &rec, 1);
		if (rc < 0)
			return rc;
		if (rc == 1 && rec.type == VMHEAP_RECORD_OBJECT)
			return vmheap_block_cursor_fail(
			    c, VMHEAP_EFORMAT, first + off,
			    "malformed block summary: it lists an object "
			    "record among the others");
		if (rc == 1 && (rc = record_fn(arg, &rec)))
			return rc;
	}
	c->pos = c->end;
	c->records_left = 0;
	return 1;
}

int vmheap_block_has_summary(const struct vmheap_block *blk)
{
	/* fixarray (5 elements or more, under 16), tag 7 */
	return blk->length > 2 && (blk->data[0] & 0xf0) == 0x90 &&
	       blk->data[1] == VMHEAP_RECORD_SUMMARY;
}
