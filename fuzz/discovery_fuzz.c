/*
 * discovery_fuzz.c - fuzz target of the discovery-file parser.
 *
 * The input is the body of a discovery file.  It is written with mode
 * 0600 into a private directory and read back with vmheap_discovery_read
 * (the console's way), then listed with vmheap_discovery_list.  A file
 * that is accepted must give a usable address: a host, a port from 1 to
 * 65535 and a 32-digit hex token, all NUL-terminated.  The input's first
 * line also goes, as a file name, to the parser of temporary dump file
 * names (agent_tmp_writer_gone): names in a dump directory are input too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-internal.h"
#include "fuzz-internal.h"
#include "vmheap_agent.h"

static char dir[512];
static char path[600];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/vmheap-fuzz-XXXXXX",
		 t && strlen(t) < 400 ? t : "/tmp");
	if (!mkdtemp(dir))
		abort();
	/* the pid in the name is ours, so that a list keeps the file */
	snprintf(path, sizeof(path), "%s/vmheap-agent.%d", dir, (int)getpid());
	atexit(cleanup);
}

static void must_terminate(const char *s, size_t n)
{
	if (!memchr(s, '\0', n))
		abort();
}

static void found(void *arg, const struct vmheap_agent_info *info)
{
	(*(int *)arg)++;
	must_terminate(info->address, sizeof(info->address));
}

static void bad(void *arg, const char *p, const char *why)
{
	(void)arg;
	if (!p || !why || !*why)
		abort();
}

int fuzz_discovery_one(const uint8_t *data, size_t size)
{
	struct vmheap_agent_info info;
	char err[512];
	int fd, rc, n = 0;

	if (!dir[0])
		setup();
	{
		char name[256];
		const uint8_t *nl = memchr(data, '\n', size);
		size_t l = nl ? (size_t)(nl - data) : size;

		l = l < sizeof(name) - 1 ? l : sizeof(name) - 1;
		memcpy(name, data, l);
		name[l] = '\0';
		rc = agent_tmp_writer_gone(name);
		if (rc != 0 && rc != 1)
			abort();
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
	err[0] = '\0';
	rc = vmheap_discovery_read(path, &info, err, sizeof(err));
	if (rc < 0) {
		if (!err[0])
			abort();
	} else {
		must_terminate(info.address, sizeof(info.address));
		must_terminate(info.host, sizeof(info.host));
		must_terminate(info.vm, sizeof(info.vm));
		must_terminate(info.argv, sizeof(info.argv));
		must_terminate(info.exe, sizeof(info.exe));
		must_terminate(info.token, sizeof(info.token));
		if (info.port == 0 || strlen(info.token) != 32 || info.pid <= 0)
			abort();
	}
	/* list: the name says our pid, so only a file naming our pid is
	 * kept; any other is "bad" (never removed: it is ours, but alive) */
	rc = vmheap_discovery_list(dir, found, bad, &n);
	if (rc < 0 || rc != n)
		abort();
	if (access(path, F_OK) != 0) {
		/* listing removed it: only allowed for a dead pid */
		if (rc != 0)
			abort();
	}
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_discovery_one(data, size);
}
#endif
