/*
 * trace_source.c - the events of a malloc trace (format/vmheap_trace.h)
 * as the program builder takes them (struct rp_source): the trace's
 * operations mapped to the engine's, the calls that made or freed nothing
 * (free(NULL), a failed allocation, a realloc that failed and left its
 * block live) left out, and realloc(p, 0) that freed p given as a free.
 */
#include <stdio.h>
#include <string.h>

#include "replay-trace-internal.h"

static int map_op(unsigned op)
{
	switch (op) {
	case VMHEAP_TRACE_MALLOC:
		return RP_MALLOC;
	case VMHEAP_TRACE_CALLOC:
		return RP_CALLOC;
	case VMHEAP_TRACE_REALLOC:
		return RP_REALLOC;
	case VMHEAP_TRACE_REALLOCARRAY:
		return RP_REALLOCARRAY;
	case VMHEAP_TRACE_FREE:
		return RP_FREE;
	case VMHEAP_TRACE_POSIX_MEMALIGN:
		return RP_POSIX_MEMALIGN;
	case VMHEAP_TRACE_ALIGNED_ALLOC:
		return RP_ALIGNED_ALLOC;
	case VMHEAP_TRACE_MEMALIGN:
		return RP_MEMALIGN;
	case VMHEAP_TRACE_VALLOC:
		return RP_VALLOC;
	case VMHEAP_TRACE_PVALLOC:
		return RP_PVALLOC;
	}
	return -1;
}

/* The smallest power of two >= a (memalign rounds up as glibc does). */
static uint64_t pow2_up(uint64_t a)
{
	uint64_t p = 1;

	while (p < a && p < (1ull << 62))
		p <<= 1;
	return p;
}

static int fill(struct rp_trace_source *ts, const struct vmheap_trace_event *e,
		struct rp_input *out, char *err, size_t errsz)
{
	int op = map_op(e->op);
	int none = e->block.slot == VMHEAP_TRACE_NONE;
	int old_none = e->old_block.slot == VMHEAP_TRACE_NONE;

	if (op < 0) {
		snprintf(err, errsz, "%s: unknown operation %u (byte offset "
				     "%llu)",
			 ts->name, e->op, (unsigned long long)e->offset);
		return RP_EFORMAT;
	}
	memset(out, 0, sizeof *out);
	out->thread = e->thread;
	out->offset = e->offset;
	out->size = e->size;
	out->slot = e->block.slot;
	out->gen = e->block.gen;
	if (op == RP_REALLOC || op == RP_REALLOCARRAY) {
		if (old_none && none)
			return 0; /* realloc(NULL, n) that failed */
		if (old_none) {
			op = RP_MALLOC; /* realloc(NULL, n) */
		} else if (none) {
			if (e->size != 0) {
				ts->skipped++;
				return 0; /* failed: the block stays */
			}
			op = RP_FREE; /* realloc(p, 0) freed p */
			out->slot = e->old_block.slot;
			out->gen = e->old_block.gen;
		} else {
			out->old_slot = e->old_block.slot;
			out->old_gen = e->old_block.gen;
		}
	} else if (none) {
		ts->skipped++;
		return 0; /* free(NULL), or an allocation that failed */
	}
	out->op = (uint8_t)op;
	if (op == RP_FREE)
		out->size = 0;
	if (op == RP_POSIX_MEMALIGN || op == RP_ALIGNED_ALLOC ||
	    op == RP_MEMALIGN)
		out->align = pow2_up(e->align ? e->align : 1);
	return 1;
}

static int next(void *ctx, struct rp_input *out, char *err, size_t errsz)
{
	struct rp_trace_source *ts = ctx;
	struct vmheap_trace_event e;
	int rc;

	for (;;) {
		rc = vmheap_trace_next(ts->r, &e);
		if (rc < 0) {
			snprintf(err, errsz, "%s", vmheap_trace_error(ts->r));
			return rc;
		}
		if (rc == 0)
			return 0;
		rc = fill(ts, &e, out, err, errsz);
		if (rc != 0)
			return rc;
	}
}

static int open_trace(struct rp_trace_source *ts, char *err, size_t errsz)
{
	int rc = vmheap_trace_open_path(&ts->r, ts->path);

	if (rc < 0) {
		snprintf(err, errsz, "%s", vmheap_trace_error(ts->r));
		vmheap_trace_free(ts->r);
		ts->r = NULL;
		return rc;
	}
	ts->info = *vmheap_trace_info(ts->r);
	return 0;
}

static int rewind_trace(void *ctx, char *err, size_t errsz)
{
	struct rp_trace_source *ts = ctx;
	struct vmheap_trace_info before = ts->info;
	int rc;

	vmheap_trace_free(ts->r);
	ts->r = NULL;
	ts->skipped = 0;
	rc = open_trace(ts, err, errsz);
	if (rc == 0 && (before.events != ts->info.events ||
			before.file_size != ts->info.file_size)) {
		snprintf(err, errsz, "%s: the trace changed while it was read",
			 ts->name);
		return RP_EIO;
	}
	return rc;
}

int rp_trace_source_open(struct rp_trace_source *ts, const char *path,
			 char *err, size_t errsz)
{
	int rc;

	memset(ts, 0, sizeof *ts);
	ts->path = path;
	ts->name = path;
	rc = open_trace(ts, err, errsz);
	if (rc < 0)
		return rc;
	ts->src.next = next;
	ts->src.rewind = rewind_trace;
	ts->src.ctx = ts;
	ts->src.name = path;
	ts->src.first_gen = 0;
	ts->src.gen_mask = UINT32_MAX;
	return 0;
}

void rp_trace_source_close(struct rp_trace_source *ts)
{
	vmheap_trace_free(ts->r);
	ts->r = NULL;
}
