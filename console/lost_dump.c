/*
 * lost_dump.c - the connection dropped while a dump was pending: the VM
 * exited (SIGTERM, the OOM killer, exit!) before its reply arrived.  The
 * dump may still be whole on disk: the agent names a dump only after it
 * is complete (fsync, then rename), so look for the file in the agent's
 * dump directory (the discovery file's dump_dir) and read it to the end
 * with libvmheap, which checks every block and the footer.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "console-internal.h"
#include "vmheap.h"

/* Read the dump at `path` to its verified footer: 0 with the object
 * count, or -1 with the reason in why. */
static int check_whole(const char *path, uint64_t *objects, char *why,
		       size_t len)
{
	vmheap_reader *r = NULL;
	struct vmheap_block blk;
	int rc = vmheap_reader_open_path(&r, path);

	while (rc == 0 && (rc = vmheap_reader_next_block(r, &blk)) == 1)
		rc = 0;
	if (rc < 0)
		snprintf(why, len, "%s",
			 r ? vmheap_reader_error(r) : vmheap_strerror(rc));
	else
		*objects = vmheap_reader_totals(r)->objects;
	vmheap_reader_free(r);
	return rc < 0 ? -1 : 0;
}

int console_lost_dump(const struct console_session *s, const char *name)
{
	char path[PATH_MAX + 1024], why[600];
	long pid = (long)s->info.pid;
	uint64_t objects = 0;

	if (name[0] == '/')
		snprintf(path, sizeof(path), "%s", name);
	else if (s->info.dump_dir[0])
		snprintf(path, sizeof(path), "%s/%s", s->info.dump_dir, name);
	else {
		fprintf(stderr,
			"vmheap-console: the VM (pid %ld) exited during the "
			"dump; its agent did not say where it writes dumps, so "
			"look for %s in its dump directory.\n",
			pid, name);
		return 0;
	}
	if (check_whole(path, &objects, why, sizeof(why)) < 0) {
		fprintf(stderr,
			"vmheap-console: the VM (pid %ld) exited during the "
			"dump; the dump was lost (%s).\n",
			pid, why);
		return 0;
	}
	printf("the VM (pid %ld) exited during the dump; the dump was "
	       "completed: %s (%llu objects)\n",
	       pid, path, (unsigned long long)objects);
	fflush(stdout);
	return 1;
}
