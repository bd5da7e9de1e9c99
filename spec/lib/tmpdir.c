/*
 * tmpdir.c - the suite's root directory and fresh directories under it
 * (see vmheap_spec.h).
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmheap_spec.h"

static char root[256];

const char *spec_root(void)
{
	return root;
}

void spec_root_make(const char *tag)
{
	const char *base = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%.150s/vmheap-%.40s.XXXXXX",
		 base && *base ? base : "/tmp", tag);
	if (!mkdtemp(root)) {
		fprintf(stderr, "mkdtemp %s: %s\n", root, strerror(errno));
		exit(2);
	}
	/* tmux sockets go here, so that spec_root_remove finds every
	 * server; and no test talks to the tmux of whoever runs make */
	setenv("TMUX_TMPDIR", root, 1);
	unsetenv("TMUX");
}

void spec_root_remove(void)
{
	char dir[512];
	DIR *d;
	struct dirent *de;

	if (!root[0])
		return;
	snprintf(dir, sizeof(dir), "%s/tmux-%ld", root, (long)getuid());
	d = opendir(dir);
	while (d && (de = readdir(d)) != NULL) {
		struct spec_tmux t;

		if (de->d_name[0] == '.' ||
		    strlen(de->d_name) >= sizeof(t.socket))
			continue;
		snprintf(t.socket, sizeof(t.socket), "%.63s", de->d_name);
		spec_tmux_kill(&t);
	}
	if (d)
		closedir(d);
	spec_rmrf(root);
	root[0] = '\0';
}

const char *spec_mkdtemp(const char *tag)
{
	static char dirs[16][256];
	static unsigned next;
	char *b = dirs[next++ % 16];

	snprintf(b, 256, "%.180s/%.40s.XXXXXX", root[0] ? root : "/tmp", tag);
	ck_assert_msg(mkdtemp(b) != NULL, "mkdtemp %s: %s", b,
		      strerror(errno));
	return b;
}

static char test_dir[256];

void spec_test_dir_setup(void)
{
	snprintf(test_dir, sizeof(test_dir), "%s", spec_mkdtemp("test"));
}

const char *spec_test_dir(void)
{
	ck_assert_msg(test_dir[0], "spec_test_dir: no spec_test_dir_setup "
				   "fixture in this TCase");
	return test_dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void spec_rmrf(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
