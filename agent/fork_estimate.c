/*
 * fork_estimate.c - `get system.fork_estimate` as a long job.
 *
 * The estimate forks a probe child and watches the VM for
 * AGENT_FORK_PROBE_MS (fork_cost.c): on the loop thread that stalled
 * every other client 100 ms per request (a client pipelining the get
 * held the others 12 s).  It runs on a job's thread instead; one at a
 * time, a second request meanwhile gets `busy`.
 */
#include <errno.h>
#include <string.h>

#include "agent-internal.h"

/* The job's body: measure and pack the map (PROTOCOL.md, variables). */
static int fork_estimate_run(void *arg, msgpack_packer *pk, char *err,
			     size_t errlen)
{
	struct vmheap_agent *a = *(struct vmheap_agent **)arg;
	struct agent_fork_estimate e;
	int gc = atomic_load(&a->dump_gc) && a->host->prepare_child;

	if (agent_fork_estimate(a, gc, &e) < 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot measure the write rate: %s",
				  strerror(errno));
	msgpack_pack_map(pk, 15);
	frame_pack_str(pk, "bytes");
	msgpack_pack_int64(pk, e.need);
	frame_pack_str(pk, "rss");
	msgpack_pack_int64(pk, e.rss);
	frame_pack_str(pk, "write_rate");
	msgpack_pack_int64(pk, (int64_t)e.write_rate);
	frame_pack_str(pk, "seconds");
	msgpack_pack_double(pk, e.seconds);
	frame_pack_str(pk, "seconds_measured");
	if (e.seconds_measured)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	frame_pack_str(pk, "child_bytes");
	msgpack_pack_int64(pk, e.child_bytes);
	frame_pack_str(pk, "child_measured");
	if (e.child_measured)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	frame_pack_str(pk, "mem_available");
	msgpack_pack_int64(pk, e.limit.mem_available);
	/* the tightest of MemAvailable and the cgroups' limits, which the
	 * guard compares with bytes, and which one it was */
	frame_pack_str(pk, "available");
	msgpack_pack_int64(pk, e.limit.available);
	frame_pack_str(pk, "limited_by");
	frame_pack_str(pk, e.limit.source);
	frame_pack_str(pk, "cgroup");
	if (e.limit.cg_limit >= 0)
		frame_pack_str(pk, e.limit.cgroup);
	else
		msgpack_pack_nil(pk);
	frame_pack_str(pk, "cgroup_limit");
	msgpack_pack_int64(pk, e.limit.cg_limit);
	frame_pack_str(pk, "cgroup_usage");
	msgpack_pack_int64(pk, e.limit.cg_usage);
	frame_pack_str(pk, "cgroup_inactive_file");
	msgpack_pack_int64(pk, e.limit.cg_inactive_file);
	frame_pack_str(pk, "probe_skipped");
	if (e.probe_skipped)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	return 0;
}

int agent_fork_estimate_start(struct vmheap_agent *a, uint64_t *job,
			      char *err, size_t errlen)
{
	int rc = agent_job_start(a->jobs, "fork_estimate", fork_estimate_run,
				 &a, sizeof(a), job);

	if (rc == VMHEAP_AGENT_EBUSY)
		return agent_fail(err, errlen, VMHEAP_AGENT_EBUSY,
				  "a fork estimate is already being measured; "
				  "try again when it ends");
	if (rc < 0)
		return agent_fail(err, errlen, rc,
				  "cannot start the fork estimate: %s",
				  vmheap_agent_strerror(rc));
	return AGENT_PENDING;
}
