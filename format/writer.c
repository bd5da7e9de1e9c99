/*
 * writer.c - the streaming dump writer.
 *
 * Records are packed into one buffer that holds the current block (and,
 * before the first block goes out, the magic and the HEAD section):
 * object and more-references records, the bulk of a dump, with the typed
 * encoder in mpwriter-internal.h, everything else with msgpack-c's packer.
 * When a block's payload passes the target size its section header is
 * filled in and the whole buffer goes out with write(2).
 * The writer never seeks, so a pipe works, and its memory is one block
 * buffer plus 8 bytes per block for the footer's block index.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>

#include "vmheap.h"
#include "crc32c-internal.h"
#include "format-internal.h"
#include "mpwriter-internal.h"
#include "writer-internal.h"

void vmheap_writer_set_error(vmheap_writer *w, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	w->err = code;
}

static int reserve(vmheap_writer *w, size_t more)
{
	size_t want = w->len + more, ncap;
	uint8_t *nbuf;

	if (want <= w->cap)
		return 0;
	ncap = w->cap ? w->cap : 4096;
	while (ncap < want)
		ncap *= 2;
	nbuf = realloc(w->buf, ncap);
	if (!nbuf)
		return -1;
	w->buf = nbuf;
	w->cap = ncap;
	return 0;
}

/* msgpack-c's write callback: append to the pending buffer. */
static int append_cb(void *data, const char *bytes, size_t len)
{
	vmheap_writer *w = data;

	if (!len)
		return 0;
	if (w->len + len > w->cap && reserve(w, len) < 0) {
		w->nomem = 1;
		return -1;
	}
	memcpy(w->buf + w->len, bytes, len);
	w->len += len;
	return 0;
}

static int append(vmheap_writer *w, const void *bytes, size_t len)
{
	return append_cb(w, bytes, len);
}

static int write_all(vmheap_writer *w, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(w->fd, p, n);
		if (k < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			if (e == EAGAIN || e == EWOULDBLOCK) {
				struct pollfd pfd = {.fd = w->fd,
						     .events = POLLOUT};
				poll(&pfd, 1, -1);
				continue;
			}
			if (e == ENOSPC || e == EFBIG || e == EDQUOT)
				vmheap_writer_set_error(
				    w, VMHEAP_ENOSPC,
				    "no room for the dump at byte offset "
				    "%llu: %s",
				    (unsigned long long)w->written,
				    strerror(e));
			else
				vmheap_writer_set_error(
				    w, VMHEAP_EIO,
				    "write failed at byte offset %llu: %s",
				    (unsigned long long)w->written,
				    strerror(e));
			return w->err;
		}
		p += k;
		n -= (size_t)k;
		w->written += (uint64_t)k;
	}
	return 0;
}

/* Fill in a section header at buf[at] for the payload that follows it. */
void vmheap_writer_seal_section(vmheap_writer *w, size_t at, const char *tag,
				uint32_t records)
{
	uint8_t *h = w->buf + at;
	uint32_t plen = (uint32_t)(w->len - at - VMHEAP_SECTION_HEADER_LEN);
	uint32_t crc;

	memcpy(h, tag, 4);
	vmheap_put_be32(h + 4, plen);
	vmheap_put_be32(h + 8, records);
	crc = vmheap_crc32c(0, h, 12);
	crc = vmheap_crc32c(crc, h + VMHEAP_SECTION_HEADER_LEN, plen);
	vmheap_put_be32(h + 12, crc);
}

/* Open a section: reserve its header slot; returns the slot's index. */
int vmheap_writer_begin_section(vmheap_writer *w, size_t *at)
{
	if (reserve(w, VMHEAP_SECTION_HEADER_LEN) < 0)
		return -1;
	*at = w->len;
	w->len += VMHEAP_SECTION_HEADER_LEN;
	return 0;
}

int vmheap_writer_out_of_memory(vmheap_writer *w)
{
	vmheap_writer_set_error(
	    w, VMHEAP_ENOMEM,
	    "out of memory while buffering the dump at byte offset %llu",
	    (unsigned long long)(w->written + w->len));
	return w->err;
}

/*
 * Put the summary record (writer_summary.c) in front of the current
 * block's records when the block has one.  The payload moves up by the
 * summary's length (a block is 64 KiB by default: a memmove is cheap
 * next to encoding it); without room, the block simply has no summary.
 */
static void add_summary(vmheap_writer *w)
{
	size_t first = w->blk_start + VMHEAP_SECTION_HEADER_LEN;
	size_t plen = w->len - first, max, n;

	if (!vmheap_summary_wanted(&w->summary))
		return;
	max = vmheap_summary_max_bytes(&w->summary);
	if (reserve(w, 2 * max) < 0)
		return;
	n = vmheap_summary_encode(&w->summary, w->buf + w->len + max);
	memmove(w->buf + first + n, w->buf + first, plen);
	memcpy(w->buf + first, w->buf + w->len + max, n);
	w->len += n;
	w->blk_records++;
}

/* Write out everything pending, sealing the current block if it holds
 * records, and start a new block. */
int vmheap_writer_flush_block(vmheap_writer *w)
{
	int rc;

	if (w->blk_records) {
		add_summary(w);
		if (w->totals.blocks == w->blk_cap) {
			uint64_t *g = vmheap_array_grow(
			    w->blk_offsets, &w->blk_cap, sizeof(*g), 64);
			if (!g)
				return vmheap_writer_out_of_memory(w);
			w->blk_offsets = g;
		}
		w->blk_offsets[w->totals.blocks++] = w->written + w->blk_start;
		vmheap_writer_seal_section(w, w->blk_start, VMHEAP_TAG_BLCK,
					   w->blk_records);
	} else {
		w->len = w->blk_start; /* drop the empty block's header slot */
	}
	rc = write_all(w, w->buf, w->len);
	w->len = 0;
	w->blk_start = 0;
	w->blk_records = 0;
	w->prev_id = 0;
	vmheap_summary_reset(&w->summary);
	if (rc)
		return rc;
	if (vmheap_writer_begin_section(w, &w->blk_start) < 0)
		return vmheap_writer_out_of_memory(w);
	w->rec_start = w->len;
	return 0;
}

/* Common entry check of every add_* call. */
int vmheap_writer_usable(vmheap_writer *w)
{
	if (!w)
		return VMHEAP_EINVAL;
	if (w->err)
		return w->err;
	if (w->finished)
		return VMHEAP_ESTATE;
	return 0;
}

/* After a record was packed: count it and close the block if full.  An
 * object record was counted in the block's summary already; any other
 * record is noted there by its offset. */
static int end_any_record(vmheap_writer *w, int object)
{
	if (w->nomem)
		return vmheap_writer_out_of_memory(w);
	if (!object)
		vmheap_summary_other(&w->summary,
				     (uint32_t)(w->rec_start - w->blk_start -
						VMHEAP_SECTION_HEADER_LEN));
	w->rec_start = w->len;
	w->blk_records++;
	if (w->len - w->blk_start - VMHEAP_SECTION_HEADER_LEN >= w->block_bytes)
		return vmheap_writer_flush_block(w);
	return 0;
}

static int end_record(vmheap_writer *w)
{
	return end_any_record(w, 0);
}

void vmheap_writer_pack_str(msgpack_packer *pk, const char *s, size_t len)
{
	msgpack_pack_str(pk, len);
	msgpack_pack_str_body(pk, s, len);
}

static int check_string(vmheap_writer *w, const char *what, const char *s,
			size_t len)
{
	if (len && !s) {
		snprintf(w->errmsg, sizeof(w->errmsg), "%s is NULL", what);
		return VMHEAP_EINVAL;
	}
	if (len > VMHEAP_MAX_STRING_BYTES) {
		snprintf(w->errmsg, sizeof(w->errmsg),
			 "%s is %zu bytes, more than the format's limit of %u",
			 what, len, VMHEAP_MAX_STRING_BYTES);
		return VMHEAP_ELIMIT;
	}
	return 0;
}

/* Seconds of a millisecond time, rounded down (also before 1970). */
static int64_t floor_div_1000(int64_t ms)
{
	int64_t q = ms / 1000;

	return ms % 1000 < 0 ? q - 1 : q;
}

/* When the dump starts, in milliseconds: the caller's time_ms, else its
 * time in seconds (saturated where seconds * 1000 do not fit), else the
 * clock. */
static int64_t start_time_ms(const struct vmheap_writer_options *o)
{
	struct timespec ts;

	if (o->time_ms)
		return o->time_ms;
	if (o->time)
		return vmheap_seconds_to_ms(o->time);
	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		return (int64_t)time(NULL) * 1000;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int pack_header(vmheap_writer *w, const struct vmheap_writer_options *o)
{
	msgpack_packer *pk = &w->pk;
	const char *vm = o->vm_name ? o->vm_name : "";
	const char *ver = o->vm_version ? o->vm_version : "";
	int64_t time_ms, time_s;
	size_t at, i;
	int rc, with_ms;

	if ((rc = check_string(w, "vm name", vm, strlen(vm))) ||
	    (rc = check_string(w, "vm version", ver, strlen(ver))))
		return rc;
	if (o->kind_count && !o->kind_names) {
		snprintf(w->errmsg, sizeof(w->errmsg), "kind_names is NULL");
		return VMHEAP_EINVAL;
	}
	for (i = 0; i < o->kind_count; i++) {
		const char *k = o->kind_names[i] ? o->kind_names[i] : "";
		if ((rc = check_string(w, "kind name", k, strlen(k))))
			return rc;
	}
	if (o->kind_count > 65536) {
		snprintf(w->errmsg, sizeof(w->errmsg),
			 "%zu kind names, more than the limit of 65536",
			 o->kind_count);
		return VMHEAP_ELIMIT;
	}

	if (append(w, VMHEAP_MAGIC, VMHEAP_MAGIC_LEN) < 0 ||
	    vmheap_writer_begin_section(w, &at) < 0)
		return VMHEAP_ENOMEM;
	time_ms = start_time_ms(o);
	time_s = o->time ? o->time : floor_div_1000(time_ms);
	with_ms = time_ms != vmheap_seconds_to_ms(time_s);
	msgpack_pack_map(pk, (o->memory ? 12 : 8) + with_ms);
	vmheap_writer_pack_str(pk, "version", 7);
	msgpack_pack_array(pk, 2);
	msgpack_pack_uint32(pk, VMHEAP_FORMAT_MAJOR);
	msgpack_pack_uint32(pk, o->native || o->edge_names || o->sites
				    ? VMHEAP_FORMAT_MINOR_1_1
				    : VMHEAP_FORMAT_MINOR);
	vmheap_writer_pack_str(pk, "vm", 2);
	vmheap_writer_pack_str(pk, vm, strlen(vm));
	vmheap_writer_pack_str(pk, "vm_version", 10);
	vmheap_writer_pack_str(pk, ver, strlen(ver));
	vmheap_writer_pack_str(pk, "pid", 3);
	msgpack_pack_uint64(pk, o->pid ? o->pid : (uint64_t)getpid());
	vmheap_writer_pack_str(pk, "time", 4);
	msgpack_pack_int64(pk, time_s);
	if (with_ms) {
		vmheap_writer_pack_str(pk, "time_ms", 7);
		msgpack_pack_int64(pk, time_ms);
	}
	vmheap_writer_pack_str(pk, "pointer_size", 12);
	msgpack_pack_uint32(pk, o->pointer_size ? o->pointer_size
						: (uint32_t)sizeof(void *));
	vmheap_writer_pack_str(pk, "flags", 5);
	msgpack_pack_uint32(pk, o->flags);
	vmheap_writer_pack_str(pk, "kinds", 5);
	msgpack_pack_array(pk, o->kind_count);
	for (i = 0; i < o->kind_count; i++) {
		const char *k = o->kind_names[i] ? o->kind_names[i] : "";
		vmheap_writer_pack_str(pk, k, strlen(k));
	}
	if (o->memory) {
		vmheap_writer_pack_str(pk, "rss", 3);
		msgpack_pack_uint64(pk, o->memory->rss);
		vmheap_writer_pack_str(pk, "malloc_in_use", 13);
		msgpack_pack_uint64(pk, o->memory->malloc_in_use);
		vmheap_writer_pack_str(pk, "malloc_free", 11);
		msgpack_pack_uint64(pk, o->memory->malloc_free);
		vmheap_writer_pack_str(pk, "malloc_mmap", 11);
		msgpack_pack_uint64(pk, o->memory->malloc_mmap);
	}
	if (w->nomem)
		return VMHEAP_ENOMEM;
	if (w->len - at - VMHEAP_SECTION_HEADER_LEN >
	    VMHEAP_MAX_SECTION_BYTES) {
		snprintf(w->errmsg, sizeof(w->errmsg),
			 "the header takes %zu bytes, more than a section's "
			 "limit of %u (the kind names are too long in total)",
			 w->len - at - VMHEAP_SECTION_HEADER_LEN,
			 VMHEAP_MAX_SECTION_BYTES);
		return VMHEAP_ELIMIT;
	}
	vmheap_writer_seal_section(w, at, VMHEAP_TAG_HEAD, 0);
	return 0;
}

int vmheap_writer_open(vmheap_writer **out, int fd,
		       const struct vmheap_writer_options *opt)
{
	struct vmheap_writer_options none = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	int rc;

	if (!out)
		return VMHEAP_EINVAL;
	*out = NULL;
	if (!opt)
		opt = &none;
	w = calloc(1, sizeof(*w));
	if (!w)
		return VMHEAP_ENOMEM;
	/* From here a failure gives a failed writer that holds the reason
	 * (the header's "Failed constructors"). */
	*out = w;
	w->fd = fd;
	if (fd < 0) {
		vmheap_writer_set_error(w, VMHEAP_EINVAL,
					"file descriptor %d is negative", fd);
		w->finished = 1;
		return VMHEAP_EINVAL;
	}
	w->block_bytes =
	    opt->block_bytes ? opt->block_bytes : VMHEAP_DEFAULT_BLOCK_BYTES;
	if (w->block_bytes > VMHEAP_MAX_BLOCK_TARGET)
		w->block_bytes = VMHEAP_MAX_BLOCK_TARGET;
	w->native = opt->native != 0;
	w->edge_names = opt->edge_names != 0;
	w->sites = opt->sites != 0;
	msgpack_packer_init(&w->pk, w, append_cb);
	/* The magic and header wait in the buffer and go out with the first
	 * block (or with the footer), so open itself does no I/O. */
	rc = pack_header(w, opt);
	if (!rc && vmheap_writer_begin_section(w, &w->blk_start) < 0)
		rc = VMHEAP_ENOMEM;
	w->rec_start = w->len;
	if (rc) {
		if (rc == VMHEAP_ENOMEM) {
			vmheap_writer_free(w);
			*out = NULL;
			return rc;
		}
		/* Nothing was written: the failed writer only answers _error
		 * and _free (its add calls and finish return the code), and
		 * keeps no buffer. */
		free(w->buf);
		w->buf = NULL;
		w->len = w->cap = 0;
		if (!w->err)
			w->err = rc;
		w->finished = 1;
		return rc;
	}
	return 0;
}

int vmheap_writer_add_string(vmheap_writer *w, uint64_t id, const char *text,
			     size_t len)
{
	int rc = vmheap_writer_usable(w);

	if (rc)
		return rc;
	if ((rc = check_string(w, "string", text, len)))
		return rc;
	msgpack_pack_array(&w->pk, 3);
	msgpack_pack_uint8(&w->pk, VMHEAP_RECORD_STRING);
	msgpack_pack_uint64(&w->pk, id);
	vmheap_writer_pack_str(&w->pk, text, len);
	w->totals.strings++;
	return end_record(w);
}

int vmheap_writer_add_class(vmheap_writer *w, uint64_t id, const char *name,
			    size_t name_len, uint64_t super_id, uint32_t flags)
{
	return vmheap_writer_add_class_object(w, id, name, name_len, super_id,
					      flags, 0);
}

int vmheap_writer_add_class_object(vmheap_writer *w, uint64_t id,
				   const char *name, size_t name_len,
				   uint64_t super_id, uint32_t flags,
				   uint64_t object_id)
{
	int rc = vmheap_writer_usable(w);

	if (rc)
		return rc;
	if ((rc = check_string(w, "class name", name, name_len)))
		return rc;
	msgpack_pack_array(&w->pk, object_id ? 6 : 5);
	msgpack_pack_uint8(&w->pk, VMHEAP_RECORD_CLASS);
	msgpack_pack_uint64(&w->pk, id);
	vmheap_writer_pack_str(&w->pk, name, name_len);
	msgpack_pack_uint64(&w->pk, super_id);
	msgpack_pack_uint32(&w->pk, flags);
	if (object_id)
		msgpack_pack_uint64(&w->pk, object_id);
	w->totals.classes++;
	return end_record(w);
}

/* Worst-case encoded size of an object or more-references record's
 * fixed fields (array header, type, four integers, refs array header). */
#define OBJECT_RECORD_FIXED_MAX (1 + 1 + 4 * MPW_INT_MAX + MPW_ARRAY_MAX)

/* Store the refs array (each reference as a delta from id) at p. */
static uint8_t *encode_refs(uint8_t *p, uint64_t id, const uint64_t *refs,
			    size_t n)
{
	p = mpw_array(p, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		p = mpw_int(p, (int64_t)(refs[i] - id));
	return p;
}

/* NULL when names[0..n) are all VMHEAP_EDGE_NAME_NONE, else names. */
static const int64_t *some_names(const int64_t *names, size_t n)
{
	if (names)
		for (size_t i = 0; i < n; i++)
			if (names[i] != VMHEAP_EDGE_NAME_NONE)
				return names;
	return NULL;
}

/* Store the names element (an array of name values) at p. */
static uint8_t *encode_names(uint8_t *p, const int64_t *names, size_t n)
{
	p = mpw_array(p, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		p = mpw_int(p, names[i]);
	return p;
}

/* Object records are encoded straight into the block buffer with the typed
 * encoder (mpwriter-internal.h), the same bytes msgpack-c's packer would
 * produce: room for the worst case is reserved once per record (twice
 * MPW_INT_MAX per reference: its delta and its name). */
static int add_more_refs(vmheap_writer *w, uint64_t id, const uint64_t *refs,
			 const int64_t *names, size_t n)
{
	uint8_t *p;

	names = some_names(names, n);
	if (reserve(w, OBJECT_RECORD_FIXED_MAX + MPW_ARRAY_MAX +
			   n * 2 * MPW_INT_MAX) < 0)
		return vmheap_writer_out_of_memory(w);
	p = w->buf + w->len;
	p = mpw_array(p, names ? 4 : 3);
	p = mpw_uint(p, VMHEAP_RECORD_MORE_REFS);
	p = mpw_int(p, (int64_t)(id - w->prev_id));
	p = encode_refs(p, id, refs, n);
	if (names)
		p = encode_names(p, names, n);
	w->len = (size_t)(p - w->buf);
	w->prev_id = id;
	w->summary.more_refs = 1;
	return end_record(w);
}

/* The checks of add_object_named that leave the writer usable. */
static int check_object(vmheap_writer *w, const uint64_t *refs,
			const int64_t *names, size_t nrefs, uint64_t site_id)
{
	if (nrefs && !refs) {
		snprintf(w->errmsg, sizeof(w->errmsg),
			 "object has %zu references but refs is NULL", nrefs);
		return VMHEAP_EINVAL;
	}
	if (names && !w->edge_names) {
		snprintf(w->errmsg, sizeof(w->errmsg),
			 "object has edge names, but the writer was opened "
			 "without the edge_names option");
		return VMHEAP_EINVAL;
	}
	if (site_id && !w->sites) {
		snprintf(w->errmsg, sizeof(w->errmsg),
			 "object has a site, but the writer was opened "
			 "without the sites option");
		return VMHEAP_EINVAL;
	}
	return 0;
}

int vmheap_writer_add_object_named(vmheap_writer *w, uint64_t id,
				   uint64_t class_id, uint64_t bytes,
				   uint32_t kind, const uint64_t *refs,
				   const int64_t *names, size_t nrefs,
				   uint64_t site_id)
{
	size_t first = nrefs < VMHEAP_MAX_REFS_PER_RECORD
			   ? nrefs
			   : VMHEAP_MAX_REFS_PER_RECORD;
	const int64_t *first_names;
	size_t done;
	uint8_t *p;
	int rc = vmheap_writer_usable(w);

	if (rc)
		return rc;
	if ((rc = check_object(w, refs, names, nrefs, site_id)))
		return rc;
	first_names = some_names(names, first);
	if (reserve(w, OBJECT_RECORD_FIXED_MAX + MPW_ARRAY_MAX + MPW_INT_MAX +
			   first * 2 * MPW_INT_MAX) < 0)
		return vmheap_writer_out_of_memory(w);
	p = w->buf + w->len;
	p = mpw_array(p, site_id ? 8 : first_names ? 7 : 6);
	p = mpw_uint(p, VMHEAP_RECORD_OBJECT);
	p = mpw_int(p, (int64_t)(id - w->prev_id));
	p = mpw_uint(p, class_id);
	p = mpw_uint(p, bytes);
	p = mpw_uint(p, kind);
	p = encode_refs(p, id, refs, first);
	if (first_names)
		p = encode_names(p, first_names, first);
	else if (site_id)
		*p++ = 0xc0; /* nil: no names */
	if (site_id)
		p = mpw_uint(p, site_id);
	w->len = (size_t)(p - w->buf);
	w->prev_id = id;
	w->totals.objects++;
	w->totals.bytes += bytes;
	w->totals.references += nrefs;
	vmheap_summary_count(&w->summary, class_id, kind, bytes, first);
	if ((rc = end_any_record(w, 1)))
		return rc;
	/* The rest continue in more-references records; a block may close
	 * between them, so each carries the object's id. */
	for (done = first; done < nrefs;) {
		size_t n = nrefs - done;
		if (n > VMHEAP_MAX_REFS_PER_RECORD)
			n = VMHEAP_MAX_REFS_PER_RECORD;
		if ((rc = add_more_refs(w, id, refs + done,
					names ? names + done : NULL, n)))
			return rc;
		done += n;
	}
	return 0;
}

int vmheap_writer_add_object(vmheap_writer *w, uint64_t id, uint64_t class_id,
			     uint64_t bytes, uint32_t kind,
			     const uint64_t *refs, size_t nrefs)
{
	return vmheap_writer_add_object_named(w, id, class_id, bytes, kind,
					      refs, NULL, nrefs, 0);
}

int vmheap_writer_add_root_named(vmheap_writer *w, uint64_t kind_string_id,
				 uint64_t object_id, uint64_t name_string_id)
{
	int rc = vmheap_writer_usable(w);

	if (rc)
		return rc;
	if (name_string_id && !w->edge_names) {
		snprintf(w->errmsg, sizeof(w->errmsg),
			 "root has a name, but the writer was opened without "
			 "the edge_names option");
		return VMHEAP_EINVAL;
	}
	msgpack_pack_array(&w->pk, name_string_id ? 4 : 3);
	msgpack_pack_uint8(&w->pk, VMHEAP_RECORD_ROOT);
	msgpack_pack_uint64(&w->pk, kind_string_id);
	msgpack_pack_uint64(&w->pk, object_id);
	if (name_string_id)
		msgpack_pack_uint64(&w->pk, name_string_id);
	w->totals.roots++;
	return end_record(w);
}

int vmheap_writer_add_root(vmheap_writer *w, uint64_t kind_string_id,
			   uint64_t object_id)
{
	return vmheap_writer_add_root_named(w, kind_string_id, object_id, 0);
}

int vmheap_writer_add_site(vmheap_writer *w, uint64_t site_id,
			   const char *file, size_t file_len, uint64_t line,
			   const char *method, size_t method_len)
{
	int rc = vmheap_writer_usable(w);

	if (rc)
		return rc;
	if (!w->sites || !site_id) {
		snprintf(w->errmsg, sizeof(w->errmsg), "%s",
			 site_id ? "site record, but the writer was opened "
				   "without the sites option"
				 : "site id 0 (site ids start at 1)");
		return VMHEAP_EINVAL;
	}
	if ((rc = check_string(w, "site file", file, file_len)) ||
	    (rc = check_string(w, "site method", method, method_len)))
		return rc;
	msgpack_pack_array(&w->pk, 5);
	msgpack_pack_uint8(&w->pk, VMHEAP_RECORD_SITE);
	msgpack_pack_uint64(&w->pk, site_id);
	vmheap_writer_pack_str(&w->pk, file, file_len);
	msgpack_pack_uint64(&w->pk, line);
	vmheap_writer_pack_str(&w->pk, method, method_len);
	w->totals.sites++;
	return end_record(w);
}

static void pack_total(msgpack_packer *pk, const char *key, uint64_t v)
{
	vmheap_writer_pack_str(pk, key, strlen(key));
	msgpack_pack_uint64(pk, v);
}

int vmheap_writer_finish(vmheap_writer *w)
{
	const struct vmheap_totals *t;
	uint64_t foot_offset;
	uint8_t trailer[VMHEAP_TRAILER_LEN];
	size_t at;
	int rc = vmheap_writer_usable(w);

	if (rc)
		return rc;
	w->finished = 1;
	/* Seal the last block (if it holds records) in place, then add the
	 * footer behind it and write both at once. */
	if (w->blk_records) {
		if ((rc = vmheap_writer_flush_block(w)))
			return rc;
	}
	w->len = w->blk_start; /* drop the (empty) block slot */
	t = &w->totals;
	foot_offset = w->written + w->len;
	if (vmheap_writer_begin_section(w, &at) < 0)
		return vmheap_writer_out_of_memory(w);
	msgpack_pack_map(&w->pk, t->sites ? 9 : 8);
	pack_total(&w->pk, "objects", t->objects);
	pack_total(&w->pk, "bytes", t->bytes);
	pack_total(&w->pk, "classes", t->classes);
	pack_total(&w->pk, "roots", t->roots);
	pack_total(&w->pk, "references", t->references);
	pack_total(&w->pk, "strings", t->strings);
	pack_total(&w->pk, "blocks", t->blocks);
	if (t->sites) /* 1.1: only when the dump has sites */
		pack_total(&w->pk, "sites", t->sites);
	vmheap_writer_pack_str(&w->pk, "block_offsets", 13);
	msgpack_pack_array(&w->pk, t->blocks);
	for (uint64_t i = 0; i < t->blocks; i++)
		msgpack_pack_uint64(&w->pk, w->blk_offsets[i]);
	if (w->nomem)
		return vmheap_writer_out_of_memory(w);
	if (w->len - at - VMHEAP_SECTION_HEADER_LEN >
	    VMHEAP_MAX_SECTION_BYTES) {
		vmheap_writer_set_error(
		    w, VMHEAP_ELIMIT,
		    "footer would be %zu bytes (%llu blocks), more than "
		    "the format's section limit of %u bytes; use larger "
		    "blocks",
		    w->len - at - VMHEAP_SECTION_HEADER_LEN,
		    (unsigned long long)t->blocks, VMHEAP_MAX_SECTION_BYTES);
		return w->err;
	}
	vmheap_writer_seal_section(w, at, VMHEAP_TAG_FOOT, 0);
	vmheap_put_be64(trailer, foot_offset);
	memcpy(trailer + 8, VMHEAP_END_MAGIC, VMHEAP_END_MAGIC_LEN);
	if (append(w, trailer, sizeof(trailer)) < 0)
		return vmheap_writer_out_of_memory(w);
	rc = write_all(w, w->buf, w->len);
	w->len = 0;
	return rc;
}

uint64_t vmheap_writer_bytes_written(const vmheap_writer *w)
{
	return w ? w->written : 0;
}

uint64_t vmheap_writer_objects(const vmheap_writer *w)
{
	return w ? w->totals.objects : 0;
}

uint64_t vmheap_writer_object_bytes(const vmheap_writer *w)
{
	return w ? w->totals.bytes : 0;
}

const char *vmheap_writer_error(const vmheap_writer *w)
{
	return w ? w->errmsg : "out of memory";
}

void vmheap_writer_free(vmheap_writer *w)
{
	if (!w)
		return;
	free(w->buf);
	free(w->blk_offsets);
	vmheap_summary_release(&w->summary);
	free(w);
}
