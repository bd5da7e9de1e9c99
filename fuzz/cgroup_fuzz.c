/*
 * cgroup_fuzz.c - fuzz target of the fork guard's cgroup reader
 * (agent/cgroup.c): /proc/self/cgroup, /proc/self/mountinfo and the
 * memory files of each level are input the agent parses.
 *
 * The input is split at its first two NUL bytes into the cgroup file, the
 * mountinfo file and the text of every memory file (memory.max,
 * memory.current, memory.limit_in_bytes, memory.usage_in_bytes,
 * memory.stat).  They are written into a private directory that
 * VMHEAP_AGENT_TEST_CGROUP_PROC names; mountinfo gets, after the
 * input's own lines, a cgroup2 and a cgroup v1 memory mount of that
 * directory, which holds the levels /, /a and /a/b.  Whatever the bytes:
 * no crash, and a result that holds together (a limit that applied is at
 * least what it leaves, the cgroup's name is a terminated string).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-internal.h"
#include "fuzz-internal.h"

static char dir[512];

static void put(const char *sub, const char *name, const uint8_t *data,
		size_t len)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s/%s", dir, sub, name);
	f = fopen(path, "w");
	if (!f)
		abort();
	if (len && fwrite(data, 1, len, f) != len)
		abort();
	fclose(f);
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	char p[700];

	snprintf(dir, sizeof(dir), "%s/vmheap-fuzz-cg-XXXXXX",
		 t && strlen(t) < 400 ? t : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(p, sizeof(p), "%s/fs", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/fs/a", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/fs/a/b", dir);
	mkdir(p, 0700);
	setenv("VMHEAP_AGENT_TEST_CGROUP_PROC", dir, 1);
}

int fuzz_cgroup_one(const uint8_t *data, size_t size)
{
	static const char *const files[] = {
	    "memory.max", "memory.current", "memory.limit_in_bytes",
	    "memory.usage_in_bytes", "memory.stat"};
	static const char *const levels[] = {"/fs", "/fs/a", "/fs/a/b"};
	const uint8_t *cg = data, *mi, *mem, *end = data + size;
	struct agent_mem_limit m;
	char mounts[1500];
	int n;

	if (!dir[0])
		setup();
	mi = memchr(cg, 0, size);
	mi = mi ? mi + 1 : end;
	mem = mi < end ? memchr(mi, 0, (size_t)(end - mi)) : NULL;
	mem = mem ? mem + 1 : end;
	put("", "cgroup", cg, (size_t)((mi > cg ? mi - 1 : cg) - cg));
	n = snprintf(mounts, sizeof(mounts),
		     "%.*s\n"
		     "98 1 0:98 / %s/fs rw - cgroup2 cgroup2 rw\n"
		     "99 1 0:99 / %s/fs rw - cgroup cgroup rw,memory\n",
		     (int)(mem > mi ? (mem - 1) - mi : 0), (const char *)mi,
		     dir, dir);
	if (n < 0 || (size_t)n >= sizeof(mounts))
		n = (int)sizeof(mounts) - 1;
	put("", "mountinfo", (const uint8_t *)mounts, (size_t)n);
	for (size_t l = 0; l < sizeof(levels) / sizeof(*levels); l++)
		for (size_t f = 0; f < sizeof(files) / sizeof(*files); f++)
			put(levels[l], files[f], mem, (size_t)(end - mem));
	agent_mem_limit(&m);
	if (!memchr(m.cgroup, '\0', sizeof(m.cgroup)) ||
	    !memchr(m.source, '\0', sizeof(m.source)))
		abort();
	if (m.cg_limit >= 0 &&
	    (m.available < 0 || m.available > m.cg_limit || m.cg_usage < 0 ||
	     m.cg_inactive_file < 0 || m.cg_inactive_file > m.cg_usage))
		abort();
	return 0;
}

#ifdef VMHEAP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_cgroup_one(data, size);
}
#endif
