/*
 * writer.c - the sample VM's page writer (`set sample.write_mb N`): a
 * thread that writes one byte into every page of the first N MiB of its
 * buffer, over and over (a pass, then 5 ms of sleep), like a busy server
 * dirtying its memory.  The buffer grows to the largest N set and is
 * never given back, so `set sample.write_mb 0` leaves the RSS as it was
 * and only stops the writing.  Tests of the fork guard's write rate use
 * it (spec/agent_ops_test.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sample-internal.h"

#define MIB (1024u * 1024u)

static void *writer_main(void *arg)
{
	struct sample_vm *vm = arg;
	struct timespec pause_ts = {0, 5 * 1000000L};
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	while (!atomic_load(&vm->stop_writer)) {
		size_t n = (size_t)atomic_load(&vm->write_mb) * MIB;
		for (size_t off = 0; off < n; off += page)
			vm->write_buf[off]++;
		nanosleep(&pause_ts, NULL);
	}
	return NULL;
}

int sample_writer_set(struct sample_vm *vm, long long mb, char *err,
		      size_t errlen)
{
	int rc;

	if (mb < 0 || mb > SAMPLE_WRITE_MAX_MB) {
		snprintf(err, errlen, "sample.write_mb takes MiB from 0 to %d",
			 SAMPLE_WRITE_MAX_MB);
		return -1;
	}
	pthread_mutex_lock(&vm->write_lock);
	if ((size_t)mb > vm->write_cap_mb) {
		/* the writer reads only the first write_mb MiB: stop it
		 * there while the buffer moves */
		atomic_store(&vm->write_mb, 0);
		if (vm->write_started) {
			atomic_store(&vm->stop_writer, 1);
			pthread_join(vm->writer, NULL);
			vm->write_started = 0;
		}
		char *buf = realloc(vm->write_buf, (size_t)mb * MIB);
		if (!buf) {
			pthread_mutex_unlock(&vm->write_lock);
			snprintf(err, errlen, "out of memory for %lld MiB", mb);
			return -1;
		}
		memset(buf + vm->write_cap_mb * MIB, 0,
		       ((size_t)mb - vm->write_cap_mb) * MIB);
		vm->write_buf = buf;
		vm->write_cap_mb = (size_t)mb;
	}
	atomic_store(&vm->write_mb, (int)mb);
	rc = 0;
	if (!vm->write_started && mb > 0) {
		atomic_store(&vm->stop_writer, 0);
		rc = pthread_create(&vm->writer, NULL, writer_main, vm);
		vm->write_started = rc == 0;
	}
	pthread_mutex_unlock(&vm->write_lock);
	if (rc) {
		snprintf(err, errlen, "cannot start the writer: %s",
			 strerror(rc));
		return -1;
	}
	return 0;
}

void sample_writer_stop(struct sample_vm *vm)
{
	pthread_mutex_lock(&vm->write_lock);
	if (vm->write_started) {
		atomic_store(&vm->stop_writer, 1);
		pthread_join(vm->writer, NULL);
		vm->write_started = 0;
	}
	free(vm->write_buf);
	vm->write_buf = NULL;
	vm->write_cap_mb = 0;
	pthread_mutex_unlock(&vm->write_lock);
}
