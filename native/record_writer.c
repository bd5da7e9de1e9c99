/*
 * record_writer.c - the recorder's buffers, its writer thread, its file
 * and its end (format/TRACE.md sections 7 and 8).
 *
 * A program thread never writes: its full buffer goes to a queue, and it
 * takes an empty one.  One writer thread (started at the first full
 * buffer, all signals blocked, its own allocations unrecorded) writes the
 * queue in order; the file is created then (O_EXCL, named by
 * native_output_name), so a process that never fills a buffer before it
 * execs or _exits leaves no file.  Memory stays bounded: when
 * REC_QUEUE_MAX buffers wait, the thread that fills the next one waits for
 * the writer (counted in the trailer's stalls).  A failed write stops the
 * recording with one message; the program runs on.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "native-internal.h"
#include "record-internal.h"

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qwork = PTHREAD_COND_INITIALIZER;
static pthread_cond_t qroom = PTHREAD_COND_INITIALIZER;
static struct rec_buf *qhead, *qtail, *spare;
static unsigned queued; /* in the queue or being written */
static int writer_started, writer_stop;
static pthread_t writer;
static int fd = -1;
static uint64_t written; /* bytes in the file */
static _Atomic int failed;
static char name[4096]; /* the file, once created */

static struct rec_buf *buf_new(void)
{
	uint8_t *mem = native_pages(REC_BUF_BYTES + sizeof(struct rec_buf));
	if (mem == NULL)
		return NULL;
	struct rec_buf *b = (struct rec_buf *)(mem + REC_BUF_BYTES);
	b->mem = mem;
	return b;
}

static void say(const char *a, const char *b, const char *c)
{
	char msg[8192];
	int n = snprintf(msg, sizeof msg, "vmheap: %s%s%s\n", a, b, c);
	if (n > 0) {
		ssize_t w = write(2, msg, (size_t)n < sizeof msg ? (size_t)n
								 : sizeof msg - 1);
		(void)w;
	}
}

void native_rec_stop(const char *why)
{
	atomic_store(&native_recording, 0);
	atomic_fetch_or(&native_rec_gate, REC_GATE_OFF);
	if (atomic_exchange(&failed, 1) != 0)
		return;
	char what[8192];
	snprintf(what, sizeof what, "recording the malloc trace %s stopped: ",
		 name[0] ? name : native_rec.path);
	say(what, why,
	    fd >= 0 ? "; the program runs on, and the trace has no end "
		      "record (readers refuse it)"
		    : "; the program runs on, and nothing is recorded");
	pthread_mutex_lock(&qlock);
	pthread_cond_broadcast(&qroom);
	pthread_mutex_unlock(&qlock);
}

static int write_all(const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : ENOSPC;
		p += w;
		n -= (size_t)w;
		written += (uint64_t)w;
	}
	return 0;
}

static void write_failed(int err)
{
	char why[512];
	snprintf(why, sizeof why, "write failed at byte offset %llu: %s",
		 (unsigned long long)written, strerror(err));
	native_rec_stop(why);
}

/* Create the file and write the header; 0 or -1 (recording stopped). */
static int open_file(void)
{
	if (fd >= 0)
		return 0;
	if (native_output_name(native_rec.path, getenv("VMHEAP_RUN_PID"),
			       (long)getpid(), name, sizeof name) != 0) {
		native_rec_stop("the file name is too long");
		return -1;
	}
	fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		char why[512];
		snprintf(why, sizeof why, "cannot create it: %s",
			 strerror(errno));
		native_rec_stop(why);
		return -1;
	}
	uint8_t h[VMHEAP_TRACE_HEADER_BYTES];
	vmheap_trace_put_header(h, REC_RING, REC_RING_MIN, REC_BATCH,
				(uint32_t)getpid(), native_rec.start_unix_us);
	vmheap_trace_put_u32(h + 44, vmheap_crc32c(0, h, 44));
	int err = write_all(h, sizeof h);
	if (err != 0) {
		write_failed(err);
		return -1;
	}
	return 0;
}

static void write_chunk(struct rec_buf *b)
{
	if (atomic_load(&failed) || open_file() != 0)
		return;
	size_t body = VMHEAP_TRACE_CHUNK_HEAD + b->len;
	vmheap_trace_put_chunk_head(b->mem, VMHEAP_TRACE_KIND_EVENTS, b->thread,
				    b->count, b->len);
	vmheap_trace_put_u32(b->mem + body, vmheap_crc32c(0, b->mem, body));
	int err = write_all(b->mem, body + VMHEAP_TRACE_CHUNK_CRC);
	if (err != 0)
		write_failed(err);
}

static void *writer_main(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* SIGXFSZ: EFBIG instead */
	native_thread_exclude();
	pthread_mutex_lock(&qlock);
	for (;;) {
		while (qhead == NULL && !writer_stop)
			pthread_cond_wait(&qwork, &qlock);
		if (qhead == NULL)
			break;
		struct rec_buf *b = qhead;
		qhead = b->next;
		if (qhead == NULL)
			qtail = NULL;
		pthread_mutex_unlock(&qlock);
		write_chunk(b);
		pthread_mutex_lock(&qlock);
		b->len = b->count = 0;
		b->next = spare;
		spare = b;
		queued--;
		pthread_cond_broadcast(&qroom);
	}
	pthread_mutex_unlock(&qlock);
	return NULL;
}

/* Under qlock. */
static void start_writer_locked(void)
{
	if (writer_started)
		return;
	/* pthread_create allocates: the caller's guard lets it through. */
	if (pthread_create(&writer, NULL, writer_main, NULL) == 0)
		writer_started = 1;
}

static void enqueue_locked(struct rec_buf *b, uint32_t thread)
{
	b->thread = thread;
	b->next = NULL;
	if (qtail != NULL)
		qtail->next = b;
	else
		qhead = b;
	qtail = b;
	queued++;
	pthread_cond_signal(&qwork);
}

struct rec_buf *native_rec_handoff(struct rec_buf *full, uint32_t thread)
{
	struct rec_buf *b = NULL;
	pthread_mutex_lock(&qlock);
	if (full != NULL && full->len == 0) {
		b = full; /* nothing to write: reuse it */
		b->len = 0;
	} else if (full != NULL) {
		start_writer_locked();
		if (queued >= REC_QUEUE_MAX && !atomic_load(&failed)) {
			atomic_fetch_add(&native_rec.stalls, 1);
			while (queued >= REC_QUEUE_MAX && !atomic_load(&failed))
				pthread_cond_wait(&qroom, &qlock);
		}
		if (!atomic_load(&failed)) {
			enqueue_locked(full, thread);
		} else {
			full->len = full->count = 0;
			full->next = spare;
			spare = full;
		}
	}
	if (b == NULL && spare != NULL) {
		b = spare;
		spare = b->next;
	}
	pthread_mutex_unlock(&qlock);
	if (b == NULL && (b = buf_new()) == NULL) {
		native_rec_stop("no memory for a buffer");
		return NULL;
	}
	b->len = b->count = 0;
	if (atomic_load(&failed))
		return NULL;
	return b;
}

static uint64_t unix_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void native_record_start(const char *path)
{
	if (path == NULL || path[0] == '\0' ||
	    strlen(path) >= sizeof native_rec.path)
		return;
	memcpy(native_rec.path, path, strlen(path) + 1);
	native_rec.start_unix_us = unix_us();
	native_rec.start_mono_us = mono_us();
	if (native_record_thread_key() != 0)
		return;
	native_record_fences();
	atomic_fetch_and(&native_rec_gate, ~REC_GATE_OFF);
	atomic_store(&native_recording, 1);
}

void native_record_finish(void)
{
	if (native_rec.path[0] == '\0')
		return;
	atomic_store(&native_recording, 0);
	atomic_fetch_or(&native_rec_gate, REC_GATE_OFF);
	native_record_fence_end();
	/* A call being recorded ends in microseconds (or when the writer
	 * makes room); a thread that never leaves (a signal handler that
	 * jumped out of malloc) must not hang the exit: after 2 s the trace
	 * is left without its end, and says so. */
	uint64_t deadline = mono_us() + 2000000;
	for (uint32_t i = 0; i < native_rec.nthreads; i++) {
		struct rec_thread *t = native_rec.threads[i];
		while (atomic_load(&t->in_use)) {
			if (mono_us() > deadline) {
				native_rec_stop("a thread did not leave a "
						"call's recording at exit");
				return;
			}
			sched_yield();
		}
	}
	if (atomic_load(&failed))
		return;
	pthread_mutex_lock(&qlock);
	for (uint32_t i = 0; i < native_rec.nthreads; i++) {
		struct rec_thread *t = native_rec.threads[i];
		native_record_sync(t);
		if (t->buf != NULL && t->buf->len > 0) {
			enqueue_locked(t->buf, t->index);
			t->buf = NULL;
		}
	}
	writer_stop = 1;
	pthread_cond_broadcast(&qwork);
	int started = writer_started;
	pthread_mutex_unlock(&qlock);
	if (started)
		pthread_join(writer, NULL);

	/* The writer is gone: what is left is written here, with SIGXFSZ
	 * blocked (a file size limit gives EFBIG, not the end). */
	sigset_t xfsz, old;
	sigemptyset(&xfsz);
	sigaddset(&xfsz, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &xfsz, &old);
	while (qhead != NULL) {
		struct rec_buf *b = qhead;
		qhead = b->next;
		write_chunk(b);
	}
	qtail = NULL;
	if (!atomic_load(&failed) && open_file() == 0) {
		struct vmheap_trace_info in;
		memset(&in, 0, sizeof in);
		uint32_t slots = 0;
		for (uint32_t i = 0; i < native_rec.nthreads; i++) {
			struct rec_thread *t = native_rec.threads[i];
			in.events += t->events;
			in.untracked_frees += t->untracked;
			if (t->slots_hi > slots)
				slots = t->slots_hi;
		}
		in.threads = native_rec.nthreads;
		in.slots = slots;
		native_rec_ids_sum(&in.live_blocks, &in.live_bytes);
		in.end_time_us = native_record_now_us();
		in.stalls = atomic_load(&native_rec.stalls);
		in.flags = native_rec.forked ? VMHEAP_TRACE_FLAG_FORKED : 0;
		uint8_t t[VMHEAP_TRACE_CHUNK_HEAD + VMHEAP_TRACE_TRAILER_PAYLOAD +
			  VMHEAP_TRACE_CHUNK_CRC + VMHEAP_TRACE_END_BYTES];
		size_t body = VMHEAP_TRACE_CHUNK_HEAD +
			      VMHEAP_TRACE_TRAILER_PAYLOAD;
		uint64_t at = written;
		vmheap_trace_put_chunk_head(t, VMHEAP_TRACE_KIND_TRAILER,
					    UINT32_MAX, 0,
					    VMHEAP_TRACE_TRAILER_PAYLOAD);
		vmheap_trace_put_trailer(t + VMHEAP_TRACE_CHUNK_HEAD, &in);
		vmheap_trace_put_u32(t + body, vmheap_crc32c(0, t, body));
		vmheap_trace_put_end(t + body + VMHEAP_TRACE_CHUNK_CRC, at);
		int err = write_all(t, sizeof t);
		if (err != 0)
			write_failed(err);
	}
	if (fd >= 0)
		close(fd);
	fd = -1;
	struct timespec zero = {0, 0};
	while (sigtimedwait(&xfsz, NULL, &zero) == SIGXFSZ)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void native_record_fork_prepare(void)
{
	pthread_mutex_lock(&qlock);
	native_rec_ids_lock();
}

void native_record_fork_parent(void)
{
	native_rec_ids_unlock();
	pthread_mutex_unlock(&qlock);
}

/* The child: a trace of its own, started now; the parent's queued
 * buffers are dropped (they are the parent's to write). */
void native_record_fork_child(void)
{
	native_rec_ids_unlock();
	pthread_mutex_init(&qlock, NULL);
	pthread_cond_init(&qwork, NULL);
	pthread_cond_init(&qroom, NULL);
	while (qhead != NULL) {
		struct rec_buf *b = qhead;
		qhead = b->next;
		b->next = spare;
		spare = b;
	}
	qtail = NULL;
	queued = 0;
	writer_started = writer_stop = 0;
	if (fd >= 0)
		close(fd);
	fd = -1;
	written = 0;
	name[0] = '\0';
	atomic_store(&native_rec.stalls, 0);
	native_rec.forked = 1;
	native_rec.start_unix_us = unix_us();
	native_rec.start_mono_us = mono_us();
	native_record_after_fork();
}
