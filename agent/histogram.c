/*
 * histogram.c - system.memory.histogram: the live heap's count and bytes
 * per class, without a file.
 *
 * A long job (job.c) like a dump: the heap is walked by the host's own
 * walk_heap, in a forked child of the VM when config.dump.fork is on
 * (after a GC there per config.dump.gc; the VM pauses only for fork()),
 * else at the VM's safe point.  The walker writes a dump stream into a
 * pipe that a thread of its own reads back and counts (the format's
 * reader: the classes' names as any tool reads them), and sends the packed
 * histogram to the job through a memfd.  The job replies with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent-internal.h"

/* The packed classes stay below this, so that the reply fits a frame;
 * the classes with the fewest objects are left out (and counted). */
#define HISTOGRAM_MAX_PACKED (VMHEAP_MAX_FRAME_BYTES - 4096u)

/* One class id's figures. */
struct hclass {
	uint64_t id;
	uint64_t count, bytes;
	char *name; /* NULL until its class record (or a placeholder) */
	int used;
};

/* Class id -> figures: open addressing, linear probing. */
struct hmap {
	struct hclass *slot;
	size_t cap, len;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static struct hclass *hmap_get(struct hmap *m, uint64_t id)
{
	if (2 * (m->len + 1) > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 1024;
		struct hclass *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slot[i].used)
				continue;
			size_t j = mix(m->slot[i].id) & (nc - 1);
			while (ns[j].used)
				j = (j + 1) & (nc - 1);
			ns[j] = m->slot[i];
		}
		free(m->slot);
		m->slot = ns;
		m->cap = nc;
	}
	size_t j = mix(id) & (m->cap - 1);
	while (m->slot[j].used && m->slot[j].id != id)
		j = (j + 1) & (m->cap - 1);
	if (!m->slot[j].used) {
		m->slot[j].used = 1;
		m->slot[j].id = id;
		m->len++;
	}
	return &m->slot[j];
}

static void hmap_release(struct hmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slot[i].name);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

/* The reading side: a thread that decodes the walker's stream. */
struct counter {
	int fd;
	struct hmap map;
	uint64_t objects, bytes;
	int code;
	char message[300];
};

static void *count_main(void *arg)
{
	struct counter *c = arg;
	struct vmheap_record rec;
	vmheap_reader *r = NULL;
	char sink[4096];
	int rc;

	agent_native_own_thread();

	rc = vmheap_reader_open_fd(&r, c->fd, "the histogram's walk");
	while (rc >= 0 && (rc = vmheap_reader_next(r, &rec)) == 1) {
		struct hclass *h;

		if (rec.type != VMHEAP_RECORD_CLASS &&
		    rec.type != VMHEAP_RECORD_OBJECT)
			continue;
		h = hmap_get(&c->map, rec.type == VMHEAP_RECORD_CLASS
					  ? rec.u.klass.id
					  : rec.u.object.class_id);
		if (!h) {
			rc = VMHEAP_ENOMEM;
			break;
		}
		if (rec.type == VMHEAP_RECORD_OBJECT) {
			h->count++;
			h->bytes += rec.u.object.bytes;
			c->objects++;
			c->bytes += rec.u.object.bytes;
		} else if (!h->name) { /* the earliest record of an id wins */
			h->name = rec.u.klass.name_len
				      ? strndup(rec.u.klass.name,
						rec.u.klass.name_len)
				      : strdup("<anonymous class>");
			if (!h->name) {
				rc = VMHEAP_ENOMEM;
				break;
			}
		}
	}
	if (rc < 0) {
		c->code = rc;
		snprintf(c->message, sizeof(c->message), "%s",
			 r ? vmheap_reader_error(r) : vmheap_strerror(rc));
	}
	vmheap_reader_free(r);
	/* the walker may still be writing: take the rest, so that it never
	 * blocks (or gets EPIPE) */
	for (;;) {
		ssize_t n = read(c->fd, sink, sizeof(sink));
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	return NULL;
}

/* Write the whole heap into a pipe that `c` reads.  Returns 0 or a code
 * with a message. */
static int walk_counted(struct vmheap_agent *a, struct counter *c, char *err,
			size_t errlen)
{
	const struct vmheap_agent_host *h = a->host;
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *wr = NULL;
	pthread_t t;
	int p[2], rc;

	if (pipe2(p, O_CLOEXEC) < 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS, "pipe: %s",
				  strerror(errno));
	c->fd = p[0];
	if (pthread_create(&t, NULL, count_main, c) != 0) {
		close(p[0]);
		close(p[1]);
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot start the histogram's counter");
	}
	agent_writer_options(a, &opt);
	rc = vmheap_writer_open(&wr, p[1], &opt);
	if (rc == 0)
		rc = h->walk_heap(h->ctx, wr);
	if (rc == 0)
		rc = vmheap_writer_finish(wr);
	if (rc < 0)
		agent_fail(err, errlen, VMHEAP_AGENT_EDUMP,
			   "the heap walk failed: %s",
			   wr && vmheap_writer_error(wr)[0]
			       ? vmheap_writer_error(wr)
			       : vmheap_agent_strerror(rc));
	vmheap_writer_free(wr);
	close(p[1]); /* the counter sees the end */
	pthread_join(t, NULL);
	close(p[0]);
	if (rc == 0 && c->code < 0)
		rc = agent_fail(err, errlen, VMHEAP_AGENT_EDUMP,
				"counting the heap failed: %s", c->message);
	return rc < 0 ? VMHEAP_AGENT_EDUMP : 0;
}

/* One row after merging the ids of a name. */
struct hrow {
	const char *name;
	uint64_t count, bytes;
};

static int row_by_name(const void *x, const void *y)
{
	return strcmp(((const struct hrow *)x)->name,
		      ((const struct hrow *)y)->name);
}

static int row_by_count(const void *x, const void *y)
{
	const struct hrow *a = x, *b = y;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* What the walker sends the job, before the packed classes. */
struct histogram_head {
	uint64_t objects, bytes;
	uint64_t classes;   /* class names with objects */
	uint64_t left_out;  /* of them, not in the packed array */
	uint64_t packed_len;
};

static int write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* Rows sorted by count, packed as [[name, count, bytes], ...] into fd. */
static int send_rows(int fd, struct hrow *rows, size_t n,
		     const struct counter *c, char *err, size_t errlen)
{
	struct histogram_head head = {c->objects, c->bytes, n, 0, 0};
	msgpack_sbuffer body, out;
	msgpack_packer pk;
	size_t packed = 0;
	int rc = 0;

	msgpack_sbuffer_init(&body);
	msgpack_sbuffer_init(&out);
	msgpack_packer_init(&pk, &body, msgpack_sbuffer_write);
	for (size_t i = 0; i < n; i++) {
		size_t before = body.size;
		msgpack_pack_array(&pk, 3);
		frame_pack_str(&pk, rows[i].name);
		msgpack_pack_uint64(&pk, rows[i].count);
		msgpack_pack_uint64(&pk, rows[i].bytes);
		if (body.size > HISTOGRAM_MAX_PACKED) {
			body.size = before;
			break;
		}
		packed++;
	}
	head.left_out = n - packed;
	msgpack_packer_init(&pk, &out, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, packed);
	msgpack_sbuffer_write(&out, body.data, body.size);
	head.packed_len = out.size;
	if (write_full(fd, &head, sizeof(head)) < 0 ||
	    write_full(fd, out.data, out.size) < 0)
		rc = agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				"cannot pass the histogram on: %s",
				strerror(errno));
	msgpack_sbuffer_destroy(&body);
	msgpack_sbuffer_destroy(&out);
	return rc;
}

/* The walk's body (in the child, or at the safe point): count, merge by
 * name, send. */
static int histogram_body(struct vmheap_agent *a, int fd, void *arg, char *err,
			  size_t errlen)
{
	struct counter c;
	struct hrow *rows = NULL;
	size_t n = 0, m = 0;
	char placeholder[64];
	int rc;

	(void)arg;
	memset(&c, 0, sizeof(c));
	rc = walk_counted(a, &c, err, errlen);
	if (rc < 0)
		goto out;
	rows = calloc(c.map.len ? c.map.len : 1, sizeof(*rows));
	if (!rows) {
		rc = agent_fail(err, errlen, VMHEAP_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < c.map.cap; i++) {
		struct hclass *h = &c.map.slot[i];
		if (!h->used || !h->count)
			continue;
		if (!h->name) {
			snprintf(placeholder, sizeof(placeholder),
				 "<unknown class 0x%" PRIx64 ">", h->id);
			h->name = strdup(placeholder);
			if (!h->name) {
				rc = agent_fail(err, errlen, VMHEAP_ENOMEM,
						"out of memory");
				goto out;
			}
		}
		rows[n++] = (struct hrow){h->name, h->count, h->bytes};
	}
	/* classes of one name (a VM's reloaded class) are one row, as in
	 * every tool */
	if (n)
		qsort(rows, n, sizeof(*rows), row_by_name);
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(rows[m - 1].name, rows[i].name)) {
			rows[m - 1].count += rows[i].count;
			rows[m - 1].bytes += rows[i].bytes;
		} else {
			rows[m++] = rows[i];
		}
	}
	if (m)
		qsort(rows, m, sizeof(*rows), row_by_count);
	rc = send_rows(fd, rows, m, &c, err, errlen);
out:
	free(rows);
	hmap_release(&c.map);
	return rc;
}

/* The job's body, on its own thread. */
static int histogram_job_run(void *arg, msgpack_packer *value, char *err,
			     size_t errlen)
{
	struct vmheap_agent *a = *(struct vmheap_agent **)arg;
	struct histogram_head head;
	struct timespec t0;
	char *packed = NULL;
	int fd, rc, forked, gc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = memfd_create("vmheap-histogram", MFD_CLOEXEC);
	if (fd < 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "memfd_create: %s", strerror(errno));
	forked = atomic_load(&a->dump_fork) && a->host->fork_stopped;
	gc = forked && atomic_load(&a->dump_gc) && a->host->prepare_child;
	rc = agent_walk_with(a, fd, forked, gc, histogram_body, NULL, err,
			     errlen);
	if (rc < 0)
		goto out;
	if (lseek(fd, 0, SEEK_SET) < 0 ||
	    agent_read_full(fd, &head, sizeof(head)) !=
		(ssize_t)sizeof(head) ||
	    head.packed_len > VMHEAP_MAX_FRAME_BYTES ||
	    !(packed = malloc(head.packed_len ? head.packed_len : 1)) ||
	    agent_read_full(fd, packed, head.packed_len) !=
		(ssize_t)head.packed_len) {
		rc = agent_fail(err, errlen, VMHEAP_AGENT_EDUMP,
				"the histogram's walk sent no histogram");
		goto out;
	}
	msgpack_pack_map(value, 8);
	frame_pack_str(value, "objects");
	msgpack_pack_uint64(value, head.objects);
	frame_pack_str(value, "bytes");
	msgpack_pack_uint64(value, head.bytes);
	frame_pack_str(value, "class_count");
	msgpack_pack_uint64(value, head.classes);
	frame_pack_str(value, "left_out");
	msgpack_pack_uint64(value, head.left_out);
	frame_pack_str(value, "classes");
	value->callback(value->data, packed, head.packed_len);
	frame_pack_str(value, "forked");
	if (forked)
		msgpack_pack_true(value);
	else
		msgpack_pack_false(value);
	frame_pack_str(value, "live_only");
	if (gc)
		msgpack_pack_true(value);
	else
		msgpack_pack_false(value);
	frame_pack_str(value, "seconds");
	msgpack_pack_double(value, agent_seconds_since(&t0));
out:
	free(packed);
	close(fd);
	return rc;
}

int agent_histogram_start(struct vmheap_agent *a, uint64_t *job, char *err,
			  size_t errlen)
{
	return agent_job_start_for_reply(
	    a->jobs, "histogram", histogram_job_run, &a, sizeof(a), job,
	    "a histogram is already being taken; try again when it ends", err,
	    errlen);
}
