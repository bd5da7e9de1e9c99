/*
 * config.c - the agent's settings from the environment.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent-internal.h"

int vmheap_agent_config_from_env(struct vmheap_agent_config *cfg, char *err,
				 size_t errlen)
{
	const char *v;

	memset(cfg, 0, sizeof(*cfg));
	cfg->dump_fork = -1;
	cfg->dump_gc = -1;
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
					  "VMHEAP_AGENT_PORT=%s is not a port number (0-65535)",
					  v);
		cfg->port = (uint16_t)p;
	}
	v = getenv("VMHEAP_AGENT_DIR");
	if (v && *v)
		cfg->dump_dir = v;
	v = getenv("VMHEAP_AGENT_TMPDIR");
	if (v && *v)
		cfg->tmpdir = v;
	return 0;
}
