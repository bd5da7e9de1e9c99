/*
 * dump.c - the dump driver and its job.
 *
 * A dump request is resolved against the dump directory, written to a
 * temporary file (O_EXCL, mode 0600) in the target's directory, fsync'd,
 * and then given its name with renameat2(RENAME_NOREPLACE) (or link(),
 * where the file system lacks it), so that an existing file is never
 * replaced (dump_file.c).  On any failure the temporary file is removed.
 * With config.dump.fork the heap is walked in a forked child of the VM,
 * past the fork guard (fork_guard.c; the file is opened before the fork);
 * otherwise inside host->run_stopped (walk.c).
 * A dump is a long job (job.c): it runs on a thread of its own, so the
 * loop keeps answering, and its result goes back through the job
 * registry; this file never sees a connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-internal.h"

void agent_dump_run(struct vmheap_agent *a, const char *path,
		    struct agent_dump_result *res)
{
	char rel[PATH_MAX], tmp[96], message[400];
	struct timespec t0;
	struct stat st;
	const char *name = NULL;
	int dfd, fd = -1, rc;

	memset(res, 0, sizeof(*res));
	tmp[0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	dfd = agent_dump_target(a, path, rel, sizeof(rel), &name, res);
	if (dfd < 0)
		return;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		res->code = VMHEAP_AGENT_EEXIST;
		agent_msgf(res->message, sizeof(res->message),
			   "%s already exists; a dump never overwrites a file",
			   res->path);
		goto out;
	}
	res->forked = atomic_load(&a->dump_fork) && a->host->fork_stopped;
	agent_native_route(NULL, 0); /* modules loaded past the tracker */
	if (res->forked &&
	    agent_fork_refused(
		a, atomic_load(&a->dump_gc) && a->host->prepare_child, res))
		goto out;
	fd = agent_dump_tmp_create(a, dfd, tmp, sizeof(tmp), res);
	if (fd < 0)
		goto out;
	res->gc =
	    res->forked && atomic_load(&a->dump_gc) && a->host->prepare_child;
	rc = agent_walk_dump(a, fd, res->forked, res->gc,
			     (res->forked ? VMHEAP_FLAG_FORKED : 0) |
				 (res->gc ? VMHEAP_FLAG_LIVE_ONLY : 0),
			     &res->objects, &res->bytes, &res->scan, message,
			     sizeof(message));
	if (rc == 0 && fsync(fd) < 0) {
		rc =
		    agent_is_nospace(errno) ? VMHEAP_ENOSPC : VMHEAP_AGENT_ESYS;
		snprintf(message, sizeof(message), "fsync: %s",
			 strerror(errno));
	}
	if (rc < 0) {
		res->objects = res->bytes = 0;
		res->code = rc;
		agent_msgf(res->message, sizeof(res->message),
			   "dump to %s failed, nothing was written: %s",
			   res->path, message);
		goto out;
	}
	if (fstat(fd, &st) == 0)
		res->file_bytes = (uint64_t)st.st_size;
	rc = agent_dump_publish(dfd, fd, tmp, name, res);
	fd = -1;
	if (rc < 0)
		goto out;
	tmp[0] = '\0'; /* published */
	res->seconds = agent_seconds_since(&t0);
	/* the reply tells of the stale files removed since the last one */
	pthread_mutex_lock(&a->lock);
	res->removed_tmp_files = a->swept_files;
	res->removed_tmp_bytes = a->swept_bytes;
	a->swept_files = a->swept_bytes = 0;
	pthread_mutex_unlock(&a->lock);
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0] && name && res->code < 0)
		unlinkat(dfd, tmp, 0);
	close(dfd);
}

/* ------------------------------------------------------------ the job */

void agent_pack_dump_result(msgpack_packer *pk,
			    const struct agent_dump_result *r)
{
	msgpack_pack_map(pk, 7 + (r->removed_tmp_files > 0) +
				 (r->scan.scanned != 0));
	frame_pack_str(pk, "path");
	frame_pack_str(pk, r->path);
	frame_pack_str(pk, "objects");
	msgpack_pack_uint64(pk, r->objects);
	frame_pack_str(pk, "bytes");
	msgpack_pack_uint64(pk, r->bytes);
	frame_pack_str(pk, "file_bytes");
	msgpack_pack_uint64(pk, r->file_bytes);
	frame_pack_str(pk, "seconds");
	msgpack_pack_double(pk, r->seconds);
	frame_pack_str(pk, "forked");
	if (r->forked)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	frame_pack_str(pk, "live_only");
	if (r->gc)
		msgpack_pack_true(pk);
	else
		msgpack_pack_false(pk);
	if (r->scan.scanned) {
		frame_pack_str(pk, "leak_scan");
		msgpack_pack_map(pk, 3);
		frame_pack_str(pk, "blocks");
		msgpack_pack_uint64(pk, r->scan.blocks);
		frame_pack_str(pk, "skipped_mappings");
		msgpack_pack_uint64(pk, r->scan.skipped_mappings);
		frame_pack_str(pk, "skipped_bytes");
		msgpack_pack_uint64(pk, r->scan.skipped_bytes);
	}
	if (r->removed_tmp_files > 0) {
		frame_pack_str(pk, "removed_tmp");
		msgpack_pack_map(pk, 2);
		frame_pack_str(pk, "files");
		msgpack_pack_uint64(pk, r->removed_tmp_files);
		frame_pack_str(pk, "bytes");
		msgpack_pack_uint64(pk, r->removed_tmp_bytes);
	}
}

/* What a dump job is given (copied by the registry). */
struct dump_job {
	struct vmheap_agent *a;
	char path[PATH_MAX];
};

/* The dump job's body, on the job's thread. */
static int dump_job_run(void *arg, msgpack_packer *value, char *err,
			size_t errlen)
{
	struct dump_job *job = arg;
	struct vmheap_agent *a = job->a;
	struct agent_dump_result res;

	agent_dump_run(a, job->path, &res);
	if (res.code < 0) {
		snprintf(err, errlen, "%s", res.message);
		return res.code;
	}
	/* before the job ends: a client told of the dump sees it */
	pthread_mutex_lock(&a->lock);
	a->last = res;
	a->has_last = 1;
	pthread_mutex_unlock(&a->lock);
	agent_pack_dump_result(value, &res);
	return 0;
}

int agent_dump_start(struct vmheap_agent *a, const char *path, uint64_t *job,
		     char *err, size_t errlen)
{
	struct dump_job *dj = calloc(1, sizeof(*dj));
	int rc;

	if (!dj)
		return agent_fail(err, errlen, VMHEAP_ENOMEM, "out of memory");
	dj->a = a;
	snprintf(dj->path, sizeof(dj->path), "%s", path);
	rc = agent_job_start(a->jobs, "dump", dump_job_run, dj, sizeof(*dj),
			     job);
	free(dj);
	if (rc == VMHEAP_AGENT_EBUSY)
		return agent_fail(
		    err, errlen, VMHEAP_AGENT_EBUSY,
		    "a dump is already running; try again when it ends");
	if (rc < 0)
		return agent_fail(err, errlen, rc, "cannot start the dump: %s",
				  vmheap_agent_strerror(rc));
	return AGENT_PENDING;
}

int agent_dump_running(struct vmheap_agent *a)
{
	return agent_job_running(a->jobs, "dump");
}

int agent_dump_last(struct vmheap_agent *a, struct agent_dump_result *out)
{
	int has;

	pthread_mutex_lock(&a->lock);
	has = a->has_last;
	if (has)
		*out = a->last;
	pthread_mutex_unlock(&a->lock);
	return has;
}
