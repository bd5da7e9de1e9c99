/*
 * dump_now.c - a dump with no agent running (vmheap_agent_dump_file):
 * what a host writes when its program exits (vmheap-run --output), also
 * in a forked child where the agent's threads are gone.
 *
 * It is a console's dump (agent_dump_run) on a bare agent that has no
 * thread, socket or discovery file, whose dump directory is the file's
 * own: the same check that the name is free, temporary file (O_EXCL,
 * 0600), fork guard, forked walk (where the malloc tracker's leak scan
 * runs) and publishing without replacing a file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-internal.h"
#include "vmheap_files.h"

VMHEAP_EXPORT int vmheap_agent_dump_file(const struct vmheap_agent_host *host,
					 const char *path, char *err,
					 size_t errlen)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base;
	struct vmheap_agent *a;
	struct agent_dump_result *res;
	int dfd, rc;

	if (err && errlen)
		err[0] = '\0';
	if (!host || !host->run_stopped || !host->walk_heap)
		return agent_fail(
		    err, errlen, VMHEAP_EINVAL,
		    "the host must provide run_stopped and walk_heap");
	if (!path || !*path || strlen(path) >= sizeof(dir))
		return agent_fail(err, errlen, VMHEAP_EINVAL,
				  "no dump file named (or a name too long)");
	dfd = vmheap_dir_open_parent(path, &base);
	if (dfd < 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_EPATH,
				  "cannot write the dump %s: its directory: %s",
				  path, strerror(errno));
	/* the directory's name, for the messages and the result's path */
	snprintf(dir, sizeof(dir), "%.*s", (int)(base - path), path);
	if (!realpath(dir[0] ? dir : ".", real))
		snprintf(real, sizeof(real), "%s", dir[0] ? dir : ".");
	a = calloc(1, sizeof(*a));
	res = calloc(1, sizeof(*res));
	if (!a || !res) {
		free(a);
		free(res);
		close(dfd);
		return agent_fail(err, errlen, VMHEAP_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&a->lock, NULL);
	atomic_init(&a->listen_fd, -1);
	a->tmp_dfd = -1;
	a->dump_dfd = -1;
	a->pid = getpid();
	a->host = host;
	atomic_init(&a->dump_fork, host->fork_stopped != NULL);
	atomic_init(&a->dump_gc, 1);
	atomic_init(&a->dump_timeout_s, AGENT_DEFAULT_DUMP_TIMEOUT_S);
	atomic_init(&a->fork_min_free, -1);
	agent_dump_dir_set(a, dfd, real);
	agent_dump_run(a, base, res);
	rc = res->code;
	if (rc < 0)
		snprintf(err, errlen, "%s", res->message);
	close(a->dump_dfd);
	pthread_mutex_destroy(&a->lock);
	free(a);
	free(res);
	return rc < 0 ? rc : 0;
}
