/*
 * replay_fuzz.c - fuzz target of vmheap-replay's program builder and
 * engine (replay/program.c, replay/engine.c).
 *
 * The input is a list of events, 8 bytes each (thread, op, slot,
 * generation, old slot, old generation, size, alignment; few threads and
 * slots, so that the ids meet), as the trace reader would give them.
 * Whatever the events, the builder accepts them or refuses them with a
 * message that names a byte offset, never a crash or a hang; and a
 * program it accepts replays, on one thread and on the recorded threads,
 * to the live bytes the builder computed, without one wait that never
 * ends (libFuzzer's timeout catches a deadlock).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../replay/replay-internal.h"
#include "fuzz-internal.h"

struct bytes_src {
	const uint8_t *data;
	size_t size, at;
};

static int next(void *ctx, struct rp_input *out, char *err, size_t errsz)
{
	struct bytes_src *b = ctx;
	const uint8_t *e;

	(void)err;
	(void)errsz;
	if (b->at + 8 > b->size)
		return 0;
	e = b->data + b->at;
	memset(out, 0, sizeof *out);
	out->thread = e[0] % 4;
	out->op = e[1] % (RP_OP_COUNT + 1); /* one past: refused */
	out->slot = e[2] % 16;
	out->gen = e[3] % 8;
	out->old_slot = e[4] % 16;
	out->old_gen = e[5] % 8;
	out->size = (uint64_t)e[6] * 24;
	/* valid alignments (a recorded call succeeded with it), or 24:
	 * refused */
	out->align = e[7] % 9 == 8 ? 24 : 16u << (e[7] % 5);
	if (out->op == RP_ALIGNED_ALLOC && out->align != 24)
		out->size = (out->size + out->align - 1) & ~(out->align - 1);
	out->offset = b->at;
	b->at += 8;
	return 1;
}

static int rewind_src(void *ctx, char *err, size_t errsz)
{
	(void)err;
	(void)errsz;
	((struct bytes_src *)ctx)->at = 0;
	return 0;
}

int fuzz_replay_one(const uint8_t *data, size_t size)
{
	struct bytes_src b = {data, size > 8 * 4096 ? 8 * 4096 : size, 0};
	struct rp_source src = {next, rewind_src, &b, "fuzz", 0, 7};
	struct rp_program hdr;
	const struct rp_program *p;
	struct rp_result r;
	char err[300];
	int fd, rc = rp_build(&src, &fd, &hdr, err, sizeof err);

	if (rc < 0) {
		if (!strstr(err, "byte offset") && rc != RP_ENOMEM)
			abort();
		return 0;
	}
	p = rp_program_map(fd, err, sizeof err);
	if (!p)
		abort();
	for (int serial = 1; serial >= 0; serial--) {
		if (rp_replay(p, serial, 0, 1, &r) != 0 ||
		    r.live_end != hdr.live_end || r.live_deltas != r.live_end ||
		    r.ops != hdr.nevents)
			abort();
	}
	rp_program_unmap(p);
	close(fd);
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_replay_one(data, size);
}
#endif
