/*
 * allocators.c - which shared library an --allocator of vmheap-replay
 * names, and whether it is there.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay-tool-internal.h"

static const struct {
	const char *name, *file, *package;
} named[] = {
    {"jemalloc", "libjemalloc.so.2", "libjemalloc2"},
    {"tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"},
    {"mimalloc", "libmimalloc.so.2", "libmimalloc2.0"},
};

/* The directory of the C library this program runs with ("" if unknown). */
static void libc_dir(char *out, size_t size)
{
	Dl_info info;
	char copy[PATH_MAX];

	out[0] = 0;
	if (dladdr((void *)(uintptr_t)&fclose, &info) && info.dli_fname &&
	    strchr(info.dli_fname, '/')) {
		snprintf(copy, sizeof copy, "%s", info.dli_fname);
		snprintf(out, size, "%s", dirname(copy));
	}
}

static int try_dir(const char *dir, const char *file, struct rp_row *row)
{
	if (!dir[0])
		return 0;
	if ((size_t)snprintf(row->lib, sizeof row->lib, "%s/%s", dir, file) >=
	    sizeof row->lib)
		return 0;
	return access(row->lib, R_OK) == 0;
}

int rp_allocator_resolve(const char *arg, struct rp_row *row, char *why,
			 size_t whysz)
{
	const char *env = getenv("VMHEAP_REPLAY_LIBDIR");
	char dir[PATH_MAX], usr[PATH_MAX + 8];
	size_t i;

	memset(row, 0, sizeof *row);
	why[0] = 0;
	if (!strcmp(arg, "glibc")) {
		snprintf(row->name, sizeof row->name, "glibc");
		return 1;
	}
	if (strchr(arg, '/')) {
		const char *base = strrchr(arg, '/') + 1;

		snprintf(row->name, sizeof row->name, "%s", *base ? base : arg);
		if (strpbrk(arg, ": ")) {
			snprintf(why, whysz, "%s: LD_PRELOAD cannot hold a "
					     "path with a colon or a space", arg);
			return -1;
		}
		if (!realpath(arg, row->lib) || access(row->lib, R_OK)) {
			snprintf(why, whysz, "%s is missing or unreadable",
				 arg);
			return 0;
		}
		return 1;
	}
	for (i = 0; i < sizeof named / sizeof named[0]; i++)
		if (!strcmp(arg, named[i].name))
			break;
	if (i == sizeof named / sizeof named[0]) {
		snprintf(why, whysz,
			 "--allocator takes glibc, jemalloc, tcmalloc, "
			 "mimalloc or the path of a shared library, not '%s'",
			 arg);
		return -1;
	}
	snprintf(row->name, sizeof row->name, "%s", named[i].name);
	if (env) {
		if (try_dir(env, named[i].file, row))
			return 1;
		snprintf(why, whysz, "%s is not in VMHEAP_REPLAY_LIBDIR (%s)",
			 named[i].file, env);
		row->lib[0] = 0;
		return 0;
	}
	libc_dir(dir, sizeof dir);
	snprintf(usr, sizeof usr, "/usr%s", dir);
	if (try_dir(dir, named[i].file, row) ||
	    (!strncmp(dir, "/lib", 4) && try_dir(usr, named[i].file, row)) ||
	    try_dir("/usr/lib", named[i].file, row) ||
	    try_dir("/usr/local/lib", named[i].file, row))
		return 1;
	row->lib[0] = 0;
	snprintf(why, whysz, "%s is not installed (Debian package %s)",
		 named[i].file, named[i].package);
	return 0;
}
