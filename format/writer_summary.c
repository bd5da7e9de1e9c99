/*
 * writer_summary.c - the block summary record (FORMAT.md section 6, tag 7)
 * that the writer puts first in a block of many objects: per (class,
 * kind) the objects' count and bytes, the block's object and reference
 * counts, and where its other records are, so that a census reads a block
 * without decoding its objects.
 *
 * The rows live in a small open-addressing table that is emptied at each
 * block; a block whose objects have more distinct (class, kind) pairs
 * than the table holds, or whose byte sums overflow, gets no summary (a
 * reader then decodes it as before).
 */
#include <stdlib.h>
#include <string.h>

#include "vmheap.h"
#include "format-internal.h"
#include "mpwriter-internal.h"
#include "writer-internal.h"

void vmheap_summary_reset(struct vmheap_writer_summary *s)
{
	for (uint32_t i = 0; i < s->nrows; i++)
		s->slots[s->used[i]].count = 0;
	s->nrows = 0;
	s->nothers = 0;
	s->objects = 0;
	s->references = 0;
	s->abandoned = 0;
	s->more_refs = 0;
}

void vmheap_summary_object(struct vmheap_writer_summary *s, uint64_t class_id,
			   uint32_t kind, uint64_t bytes, uint64_t nrefs)
{
	struct vmheap_summary_slot *e;
	size_t i;

	if (s->abandoned)
		return;
	if (!s->slots) {
		s->slots = calloc(VMHEAP_SUMMARY_SLOTS, sizeof(*s->slots));
		s->used = calloc(VMHEAP_SUMMARY_SLOTS / 2, sizeof(*s->used));
		if (!s->slots || !s->used) {
			s->abandoned = 1; /* no summary; the dump goes on */
			return;
		}
	}
	/* vmheap_summary_count looked at the home slot; probe on from it */
	for (i = vmheap_summary_slot_of(class_id, kind);;
	     i = (i + 1) & (VMHEAP_SUMMARY_SLOTS - 1)) {
		e = &s->slots[i];
		if (!e->count) {
			if (s->nrows == VMHEAP_SUMMARY_SLOTS / 2) {
				s->abandoned = 1;
				return;
			}
			e->class_id = class_id;
			e->kind = kind;
			e->bytes = 0;
			s->used[s->nrows++] = (uint16_t)i;
			break;
		}
		if (e->class_id == class_id && e->kind == kind)
			break;
	}
	if (e->bytes + bytes < e->bytes) {
		s->abandoned = 1;
		return;
	}
	e->count++;
	e->bytes += bytes;
	s->objects++;
	s->references += nrefs;
}

int vmheap_summary_other(struct vmheap_writer_summary *s, uint32_t offset)
{
	if (s->abandoned)
		return 0;
	if (s->nothers == s->others_cap) {
		size_t ncap = s->others_cap ? s->others_cap * 2 : 256;
		uint32_t *n = realloc(s->others, ncap * sizeof(*n));
		if (!n) {
			s->abandoned = 1; /* no summary; the dump goes on */
			return 0;
		}
		s->others = n;
		s->others_cap = ncap;
	}
	s->others[s->nothers++] = offset;
	return 0;
}

int vmheap_summary_wanted(const struct vmheap_writer_summary *s)
{
	return !s->abandoned &&
	       (s->objects >= VMHEAP_SUMMARY_MIN_OBJECTS || s->more_refs);
}

size_t vmheap_summary_max_bytes(const struct vmheap_writer_summary *s)
{
	return 2 + 2 * MPW_INT_MAX + 2 * MPW_ARRAY_MAX +
	       (size_t)s->nrows * 4 * MPW_INT_MAX +
	       (size_t)s->nothers * MPW_INT_MAX;
}

size_t vmheap_summary_encode(const struct vmheap_writer_summary *s,
			     uint8_t *out)
{
	uint8_t *p = out;

	p = mpw_array(p, 5);
	p = mpw_uint(p, VMHEAP_RECORD_SUMMARY);
	p = mpw_uint(p, s->objects);
	p = mpw_uint(p, s->references);
	p = mpw_array(p, s->nrows * 4);
	for (uint32_t i = 0; i < s->nrows; i++) {
		const struct vmheap_summary_slot *e = &s->slots[s->used[i]];
		p = mpw_uint(p, e->class_id);
		p = mpw_uint(p, e->kind);
		p = mpw_uint(p, e->count);
		p = mpw_uint(p, e->bytes);
	}
	p = mpw_array(p, s->nothers);
	for (uint32_t i = 0; i < s->nothers; i++)
		p = mpw_uint(p, s->others[i]);
	return (size_t)(p - out);
}

void vmheap_summary_release(struct vmheap_writer_summary *s)
{
	free(s->others);
	free(s->slots);
	free(s->used);
	memset(s, 0, sizeof(*s));
}
