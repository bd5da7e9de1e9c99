/*
 * vmheap_files.h - create a file safely and publish it atomically.
 *
 * libvmheap-files (files/, static, not installed) is the one place where
 * vmheap creates files: the agent's dumps, their temporaries, the
 * discovery file and the dump-directory probe, and the tools' outputs
 * (vmheap-report's page, vmheap-import's dump).  The rules it keeps:
 *
 *   - every file is created with O_EXCL and O_NOFOLLOW: a name another
 *     user planted (a file or a symbolic link) makes the creation fail
 *     with EEXIST or ELOOP, it is never opened or followed;
 *   - files are created in a directory opened once (O_DIRECTORY) and
 *     used through its fd (openat, renameat2, linkat): a directory
 *     swapped for a symbolic link after it was opened is not followed;
 *   - a finished temporary file is published under its name with one
 *     rename, never over an existing file unless the caller asks for a
 *     replacement (a rename replaces a name, it never writes through a
 *     link).
 *
 * It sits under both the agent and the tools (HACKING.md, files/): format/
 * is the codec alone, and this is no part of the codec.
 *
 * Errors: like the system calls they wrap, these return -1 with errno
 * set (EEXIST, ELOOP, ENOTDIR, ENOSPC, ...), so that each caller words
 * its own message with strerror(); they never print or exit.
 */
#ifndef VMHEAP_FILES_H
#define VMHEAP_FILES_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Open the directory `path` (symbolic links in it are followed: the path
 * is the user's) with O_DIRECTORY|O_CLOEXEC.  Returns the fd (the caller
 * closes it) or -1 with errno (ENOTDIR when `path` is not a directory).
 */
int vmheap_dir_open(const char *path);

/*
 * Open the directory that holds `path` (its dirname, "." when it has no
 * slash) as vmheap_dir_open does, and point *base at its last component
 * inside `path`.  Returns the fd or -1 with errno (EISDIR when `path`
 * ends in a slash or names "." or "..", ENAMETOOLONG).
 */
int vmheap_dir_open_parent(const char *path, const char **base);

/*
 * Create `name` in the directory `dfd` (AT_FDCWD for the working
 * directory) with O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC and
 * `mode` (less the umask).  Returns the fd or -1 with errno: EEXIST when
 * anything, a symbolic link too, has that name.  `name` must be one
 * component (no slash: EINVAL).
 */
int vmheap_file_create(int dfd, const char *name, mode_t mode);

/*
 * Create a fresh temporary file in `dfd` named `prefix` followed by 16
 * random hex digits and `suffix` (either may be ""), as
 * vmheap_file_create does; a name that exists is never used (a new one
 * is drawn, up to 100 times).  The name goes to name[namelen].  Returns
 * the fd or -1 with errno (ENAMETOOLONG when the name does not fit).
 */
int vmheap_file_create_temp(int dfd, const char *prefix, const char *suffix,
			    mode_t mode, char *name, size_t namelen);

/* How vmheap_file_publish treats a file that already has the name. */
enum vmheap_publish {
	VMHEAP_PUBLISH_NOREPLACE, /* fail with EEXIST (dumps, imports) */
	VMHEAP_PUBLISH_REPLACE    /* replace the name (a report's page) */
};

/*
 * Give the finished file `tmp` in `dfd` the name `name` (in the same
 * directory) with one rename: renameat2(RENAME_NOREPLACE), or on a file
 * system without it linkat and unlinkat (link fails on an existing
 * name).  With VMHEAP_PUBLISH_REPLACE a file of that name is replaced (a
 * symbolic link of that name too: it is replaced, not followed).
 * Returns 0, or -1 with errno (EEXIST; `tmp` is left for the caller to
 * remove).
 */
int vmheap_file_publish(int dfd, const char *tmp, const char *name,
			enum vmheap_publish how);

#endif
