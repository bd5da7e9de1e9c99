/*
 * native_leaks.c - `get system.native.leaks`: the malloc tracker's leak
 * scan now, without a dump (PROTOCOL.md).  A long job: a child forked as
 * a dump's is (agent_walk_with, after prepare_child) runs the scan
 * (vmheap_native_scan) and passes back through a memfd the scan's figures
 * and the top native stacks (the protocol's "sites"), most leaked bytes
 * first:
 *
 *   {"scan": {"blocks", "root_bytes", "skipped_mappings", "skipped_bytes",
 *             "scan_ns", "memory_bytes"},
 *    "sites": [{"leaked_count", "leaked_bytes", "indirect_count",
 *               "indirect_bytes", "possible_count", "possible_bytes",
 *               "reachable_count", "reachable_bytes", "site", "frames",
 *               "vm"}, ...],
 *    "total": {"sites", the eight counts and bytes}, "seconds"}
 *
 * vmheap's own stacks are left out, as in system.native.sites.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "agent-internal.h"
#include "vmheap_native.h"

#define TOP_STACKS 20

static const char *const keys[8] = {
    "leaked_count",   "leaked_bytes",	"indirect_count",  "indirect_bytes",
    "possible_count", "possible_bytes", "reachable_count", "reachable_bytes"};

struct leak_stack {
	vmheap_native_stack stack;
	vmheap_native_leaks leaks;
};

static const uint64_t *fields(const vmheap_native_leaks *l)
{
	return &l->leaked_count;
}

/* Leaked bytes first, then indirect, possible, reachable bytes. */
static int most_leaked(const void *x, const void *y)
{
	const uint64_t *a = fields(&((const struct leak_stack *)x)->leaks);
	const uint64_t *b = fields(&((const struct leak_stack *)y)->leaks);

	for (int i = 1; i < 8; i += 2)
		if (a[i] != b[i])
			return a[i] < b[i] ? 1 : -1;
	return 0;
}

static void pack_counts(msgpack_packer *pk, const uint64_t *f)
{
	for (int i = 0; i < 8; i++) {
		frame_pack_str(pk, keys[i]);
		msgpack_pack_uint64(pk, f[i]);
	}
}

static int write_full(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len > 0) {
		ssize_t n = write(fd, c, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* In the forked child: scan, sort, pack, write [length][map] into fd. */
static int leaks_body(struct vmheap_agent *a, int fd, void *arg, char *err,
		      size_t errlen)
{
	vmheap_native_scan_fn scan =
	    (vmheap_native_scan_fn)agent_native_api("vmheap_native_scan");
	vmheap_native_stacks_fn count =
	    (vmheap_native_stacks_fn)agent_native_api("vmheap_native_stacks");
	vmheap_native_scan_info info;
	size_t cap, n = 0, bytes;
	int rc = 0;

	(void)a, (void)arg;
	if (!scan || !count)
		return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
				  "the malloc tracker is not loaded");
	/* mmap'd, as a dump's snapshot: not a block the scan classifies */
	cap = count(NULL, 0) + 256;
	bytes =
	    cap * (sizeof(vmheap_native_stack) + sizeof(vmheap_native_leaks));
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return agent_fail(err, errlen, VMHEAP_ENOMEM, "out of memory");
	vmheap_native_stack *stacks = mem;
	vmheap_native_leaks *leaks = (vmheap_native_leaks *)(stacks + cap);
	if (scan(stacks, leaks, cap, &n, &info) != 0) {
		munmap(mem, bytes);
		return agent_fail(err, errlen, VMHEAP_AGENT_EDUMP,
				  "the leak scan failed (tracking off, or no "
				  "memory for the scan)");
	}
	if (n > cap)
		n = cap;
	n = agent_native_charge(stacks, leaks, n);
	struct leak_stack *v = malloc((n ? n : 1) * sizeof(*v));
	msgpack_sbuffer sb;
	msgpack_packer pk;
	uint64_t total[8] = {0};
	size_t m = 0;

	msgpack_sbuffer_init(&sb);
	if (!v) {
		munmap(mem, bytes);
		return agent_fail(err, errlen, VMHEAP_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		if (stacks[i].vm_file &&
		    !strcmp(stacks[i].vm_file, VMHEAP_NATIVE_OWN))
			continue; /* vmheap's own: no stack of the VM's */
		if (stacks[i].live_count == 0)
			continue;
		v[m++] = (struct leak_stack){stacks[i], leaks[i]};
		for (int k = 0; k < 8; k++)
			total[k] += fields(&leaks[i])[k];
	}
	qsort(v, m, sizeof(*v), most_leaked);
	size_t shown = m < TOP_STACKS ? m : TOP_STACKS;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 3);
	frame_pack_str(&pk, "scan");
	msgpack_pack_map(&pk, 6);
	frame_pack_str(&pk, "blocks");
	msgpack_pack_uint64(&pk, info.blocks);
	frame_pack_str(&pk, "root_bytes");
	msgpack_pack_uint64(&pk, info.root_bytes);
	frame_pack_str(&pk, "skipped_mappings");
	msgpack_pack_uint64(&pk, info.skipped_mappings);
	frame_pack_str(&pk, "skipped_bytes");
	msgpack_pack_uint64(&pk, info.skipped_bytes);
	frame_pack_str(&pk, "scan_ns");
	msgpack_pack_uint64(&pk, info.scan_ns);
	frame_pack_str(&pk, "memory_bytes");
	msgpack_pack_uint64(&pk, info.memory_bytes);
	frame_pack_str(&pk, "sites");
	msgpack_pack_array(&pk, shown);
	for (size_t i = 0; i < shown; i++) {
		msgpack_pack_map(&pk, 8 + 3);
		pack_counts(&pk, fields(&v[i].leaks));
		agent_native_pack_stack(&pk, &v[i].stack);
	}
	frame_pack_str(&pk, "total");
	msgpack_pack_map(&pk, 1 + 8);
	frame_pack_str(&pk, "sites");
	msgpack_pack_uint64(&pk, m);
	pack_counts(&pk, total);
	uint64_t len = sb.size;
	if (write_full(fd, &len, sizeof(len)) < 0 ||
	    write_full(fd, sb.data, sb.size) < 0)
		rc = agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				"cannot pass the leak scan on: %s",
				strerror(errno));
	msgpack_sbuffer_destroy(&sb);
	free(v);
	munmap(mem, bytes);
	return rc;
}

/* The job's body, on its own thread. */
static int leaks_job_run(void *arg, msgpack_packer *value, char *err,
			 size_t errlen)
{
	struct vmheap_agent *a = *(struct vmheap_agent **)arg;
	struct timespec t0;
	char *packed = NULL;
	uint64_t len = 0;
	int fd, rc, gc;

	if (!atomic_load(&a->dump_fork) || !a->host->fork_stopped)
		return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
				  "the leak scan runs in a forked child: this "
				  "VM dumps in process (config.dump.fork is "
				  "false, or its host cannot fork)");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = memfd_create("vmheap-leaks", MFD_CLOEXEC);
	if (fd < 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "memfd_create: %s", strerror(errno));
	gc = atomic_load(&a->dump_gc) && a->host->prepare_child;
	rc = agent_walk_with(a, fd, 1, gc, leaks_body, NULL, err, errlen);
	if (rc < 0)
		goto out;
	if (lseek(fd, 0, SEEK_SET) < 0 ||
	    agent_read_full(fd, &len, sizeof(len)) != (ssize_t)sizeof(len) ||
	    len > VMHEAP_MAX_FRAME_BYTES || !(packed = malloc(len ? len : 1)) ||
	    agent_read_full(fd, packed, len) != (ssize_t)len || len < 1) {
		rc = agent_fail(err, errlen, VMHEAP_AGENT_EDUMP,
				"the leak scan's child sent no result");
		goto out;
	}
	/* the child's map of 3, and "seconds": a map of 4 */
	msgpack_pack_map(value, 4);
	value->callback(value->data, packed + 1, len - 1);
	frame_pack_str(value, "seconds");
	msgpack_pack_double(value, agent_seconds_since(&t0));
out:
	free(packed);
	close(fd);
	return rc;
}

int agent_native_leaks_start(struct vmheap_agent *a, uint64_t *job, char *err,
			     size_t errlen)
{
	vmheap_native_tracking_fn on =
	    (vmheap_native_tracking_fn)agent_native_api(
		"vmheap_native_tracking");

	if (!on)
		return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
				  "the malloc tracker is not loaded in this "
				  "VM; start the VM with vmheap-run");
	if (!on())
		return agent_fail(err, errlen, VMHEAP_AGENT_EUNSUPPORTED,
				  "native tracking is off; start it with: "
				  "set config.native.track true");
	return agent_job_start_for_reply(
	    a->jobs, "leak scan", leaks_job_run, &a, sizeof(a), job,
	    "a leak scan is already running; try again when it ends", err,
	    errlen);
}
