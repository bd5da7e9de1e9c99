/*
 * fork_guard.c - the fork guard: a fork dump (or a forked walk) is refused
 * while the memory a fork may take (cgroup.c: the tightest of MemAvailable
 * and the memory cgroups' limits) is below what its child and the VM
 * would copy.  The estimate of that copy is fork_cost.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent-internal.h"

long long agent_fork_min_free(struct vmheap_agent *a)
{
	long long set = atomic_load(&a->fork_min_free), rss;

	if (set >= 0)
		return set;
	rss = agent_rss_bytes();
	return rss < 0 ? 0 : rss / 100 * AGENT_FORK_RSS_PERCENT;
}

static double mib(long long bytes)
{
	return (double)bytes / 1048576.0;
}

/*
 * The fork-mode memory guard: 1 (with res filled) when MemAvailable is
 * below what the dump would copy.  With config.dump.fork_min_free set,
 * that is its value.  In auto, it is at most the RSS: with MemAvailable
 * at or above the RSS the dump goes ahead; below, the estimate from the
 * VM's write rate decides (fork_cost.c).
 */
int agent_fork_refused(struct vmheap_agent *a, int gc,
		       struct agent_dump_result *res)
{
	long long set = atomic_load(&a->fork_min_free);
	long long need = agent_fork_min_free(a), avail;
	struct agent_fork_estimate e;
	struct agent_mem_limit m;
	char how[300], what[PATH_MAX + 300];

	if (need <= 0 || agent_mem_limit(&m) < 0 || m.available >= need)
		return 0;
	avail = m.available;
	if (set >= 0) {
		snprintf(how, sizeof(how), "as config.dump.fork_min_free says");
	} else if (agent_fork_estimate(a, gc, &e) < 0) {
		snprintf(how, sizeof(how),
			 "%d%% of the VM's RSS, what a forked child's "
			 "copy-on-write pages can reach (the write rate could "
			 "not be measured: %s)",
			 AGENT_FORK_RSS_PERCENT, strerror(errno));
	} else {
		if (avail >= e.need)
			return 0;
		need = e.need;
		snprintf(how, sizeof(how),
			 "what the dump is expected to copy: the VM writes "
			 "%.1f MiB/s, for %.2f s%s, plus the child's own "
			 "%.1f MiB%s; at most the RSS, %.1f MiB",
			 mib((long long)e.write_rate), e.seconds,
			 e.seconds_measured ? " (the last fork dump's time)"
					    : "",
			 mib(e.child_bytes),
			 e.child_measured ? " (measured in the last fork dump)"
					  : " (none measured yet: the RSS)",
			 mib(e.rss));
	}
	if (m.cg_limit >= 0)
		agent_msgf(
		    what, sizeof(what),
		    "the memory the %s %s leaves is %lld bytes (%.1f MiB: "
		    "limit %.1f MiB, usage %.1f MiB of which %.1f MiB "
		    "reclaimable page cache; MemAvailable %.1f MiB)",
		    m.source, m.cgroup, avail, mib(avail), mib(m.cg_limit),
		    mib(m.cg_usage), mib(m.cg_inactive_file),
		    mib(m.mem_available));
	else
		agent_msgf(what, sizeof(what),
			   "MemAvailable is %lld bytes (%.1f MiB)", avail,
			   mib(avail));
	res->code = VMHEAP_AGENT_EDUMP;
	agent_msgf(
	    res->message, sizeof(res->message),
	    "refusing a fork dump: %s, below the threshold of %lld bytes "
	    "(%.1f MiB, %s); free memory, set config.dump.fork false for an "
	    "in-process dump, or set config.dump.fork_min_free 0 to fork "
	    "anyway",
	    what, need, mib(need), how);
	return 1;
}
