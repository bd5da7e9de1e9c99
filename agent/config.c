/*
 * config.c - the agent's settings from the environment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent-internal.h"

/* A positive int from the environment variable `name`, if set. */
static int env_int(const char *name, int max, int *out, char *err,
		   size_t errlen)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 1 || n > max)
		return agent_fail(err, errlen, VMHEAP_EINVAL,
				  "%s=%s is not a number from 1 to %d", name, v,
				  max);
	*out = (int)n;
	return 0;
}

int vmheap_agent_config_from_env(struct vmheap_agent_config *cfg, char *err,
				 size_t errlen)
{
	const char *v;

	if (err && errlen)
		err[0] = '\0';
	if (!cfg)
		return agent_fail(err, errlen, VMHEAP_EINVAL, "no config given");
	memset(cfg, 0, sizeof(*cfg));
	cfg->dump_fork = -1;
	cfg->dump_gc = -1;
	v = getenv("VMHEAP_AGENT_REQUIRED");
	cfg->required = v && *v && strcmp(v, "0") && strcasecmp(v, "false") &&
			strcasecmp(v, "no") && strcasecmp(v, "off");
	v = getenv("VMHEAP_AGENT_BIND");
	if (v && *v)
		cfg->bind = v;
	v = getenv("VMHEAP_AGENT_PORT");
	if (v && *v) {
		char *end;
		long p;

		errno = 0;
		p = strtol(v, &end, 10);
		if (errno || *end || p < 0 || p > 65535)
			return agent_fail(err, errlen, VMHEAP_EINVAL,
					  "VMHEAP_AGENT_PORT=%s is not a port "
					  "number (0-65535)",
					  v);
		cfg->port = (uint16_t)p;
	}
	v = getenv("VMHEAP_AGENT_DIR");
	if (v && *v)
		cfg->dump_dir = v;
	v = getenv("VMHEAP_AGENT_TMPDIR");
	if (v && *v)
		cfg->tmpdir = v;
	if (env_int("VMHEAP_AGENT_MAX_CLIENTS", AGENT_MAX_MAX_CLIENTS,
		    &cfg->max_clients, err, errlen) < 0 ||
	    env_int("VMHEAP_AGENT_IDLE_TIMEOUT_MS", 86400000,
		    &cfg->idle_timeout_ms, err, errlen) < 0)
		return VMHEAP_EINVAL;
	return 0;
}
