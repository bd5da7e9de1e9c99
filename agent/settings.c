/*
 * settings.c - the agent's settings at its start: the defaults for what
 * the configuration leaves out (vmheap_agent_config, VMHEAP_AGENT_* read
 * by config.c) and what the host can do, their checks (loopback only, at
 * most AGENT_MAX_MAX_CLIENTS), the dump directory (checked by a real
 * probe when named, and held by fd), the discovery directory, the token,
 * and the first sweep of stale temporaries.  Nothing here listens or
 * starts a thread (server.c does).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-internal.h"
#include "vmheap_files.h"

static int is_loopback(const char *addr)
{
	struct in_addr v4;
	struct in6_addr v6;

	if (inet_pton(AF_INET, addr, &v4) == 1)
		return (ntohl(v4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &v6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&v6);
	return 0;
}

/* Resolve directory `in` into out; `var` names the variable that sets it. */
static int resolve_dir(const char *in, char *out, const char *what,
		       const char *var, char *err, size_t errlen)
{
	char buf[PATH_MAX];

	if (!realpath(in, buf))
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "%s %s: %s; set %s to an existing directory "
				  "this process can write",
				  what, in, strerror(errno), var);
	memcpy(out, buf, strlen(buf) + 1);
	return 0;
}

int agent_configure(struct vmheap_agent *a,
		    const struct vmheap_agent_config *cfg,
		    const struct vmheap_agent_host *host, char *err,
		    size_t errlen)
{
	const char *dir;
	char cwd[PATH_MAX];
	int rc;

	a->host = host;
	snprintf(a->bind, sizeof(a->bind), "%s",
		 cfg->bind && *cfg->bind ? cfg->bind : "127.0.0.1");
	a->port = cfg->port;
	a->max_clients =
	    cfg->max_clients > 0 ? cfg->max_clients : AGENT_DEFAULT_MAX_CLIENTS;
	a->idle_timeout_ms = cfg->idle_timeout_ms > 0
				 ? cfg->idle_timeout_ms
				 : AGENT_DEFAULT_IDLE_TIMEOUT_MS;
	a->frame_timeout_ms = AGENT_DEFAULT_FRAME_TIMEOUT_MS;
	if (a->frame_timeout_ms > a->idle_timeout_ms)
		a->frame_timeout_ms = a->idle_timeout_ms;
	atomic_init(&a->dump_fork,
		    cfg->dump_fork < 0
			? host->fork_stopped != NULL
			: (cfg->dump_fork && host->fork_stopped));
	atomic_init(&a->dump_gc, cfg->dump_gc != 0);
	atomic_init(&a->dump_timeout_s, AGENT_DEFAULT_DUMP_TIMEOUT_S);
	atomic_init(&a->fork_min_free, -1);
	snprintf(a->vm, sizeof(a->vm), "%s%s%s",
		 host->vm_name ? host->vm_name : "vm",
		 host->vm_version && *host->vm_version ? " " : "",
		 host->vm_version ? host->vm_version : "");
	clock_gettime(CLOCK_MONOTONIC, &a->start_mono);
	a->started = time(NULL);

	if (a->max_clients > AGENT_MAX_MAX_CLIENTS)
		return agent_fail(err, errlen, VMHEAP_EINVAL,
				  "max_clients %d is above %d", a->max_clients,
				  AGENT_MAX_MAX_CLIENTS);
	if (!is_loopback(a->bind))
		return agent_fail(err, errlen, VMHEAP_EINVAL,
				  "refusing to listen on %s: the agent binds "
				  "loopback addresses only",
				  a->bind);
	dir = cfg->dump_dir;
	if (!dir || !*dir)
		dir = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
	/* asked for by name, a directory that cannot take a dump is a
	 * mistake to report now, checked as `set config.dump.dir` checks
	 * it (the default, the working directory, is taken as it is: `set
	 * config.dump.dir` can change it later) */
	{
		char real[PATH_MAX];
		int dfd = agent_dump_dir_check(dir, "dump directory",
					       cfg->dump_dir && *cfg->dump_dir,
					       real, sizeof(real), err, errlen);

		if (dfd < 0) {
			if (errlen && strlen(err) + 60 < errlen)
				strcat(err, "; set VMHEAP_AGENT_DIR to a "
					    "directory this process can write");
			return dfd;
		}
		agent_dump_dir_set(a, dfd, real);
	}
	dir = cfg->tmpdir && *cfg->tmpdir ? cfg->tmpdir
					  : vmheap_discovery_default_dir();
	if ((rc = resolve_dir(dir, a->tmpdir, "discovery directory",
			      "VMHEAP_AGENT_TMPDIR", err, errlen)) < 0)
		return rc;
	a->tmp_dfd = vmheap_dir_open(a->tmpdir);
	if (a->tmp_dfd < 0)
		return agent_fail(
		    err, errlen, VMHEAP_AGENT_ESYS,
		    "discovery directory %s: %s; set "
		    "VMHEAP_AGENT_TMPDIR to an existing directory "
		    "this process can write",
		    a->tmpdir, strerror(errno));
	if ((rc = agent_token_new(a->token, err, errlen)) < 0)
		return rc;
	agent_dump_sweep(a, a->dump_dfd);
	return 0;
}
