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

struct vmheap_writer {
	int fd;
	int err;      /* sticky error code, 0 if none */
	int finished; /* finish() ran (successfully or not) */
	int nomem;    /* the packer's append callback ran out of memory */
	int native;   /* opened for a native section; 2 once it is written */
	int edge_names; /* opened for edge and root names (1.1) */
	int sites;	/* opened for allocation sites (1.1) */
	char errmsg[512];

	/* Pending output: buf[0..blk_start) is ready to be written, then the
	 * current block: a 16-byte header slot and its payload so far. */
	uint8_t *buf;
	size_t len, cap;
	size_t blk_start;
	uint32_t blk_records;
	uint64_t prev_id; /* object id delta state; 0 at each block start */
	uint32_t block_bytes;

	uint64_t written; /* bytes written to fd */
	uint64_t *blk_offsets;
	size_t blk_cap;
	struct vmheap_totals totals;
	msgpack_packer pk;
};

static void set_error(vmheap_writer *w, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_error(vmheap_writer *w, int code, const char *fmt, ...)
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
				set_error(w, VMHEAP_ENOSPC,
					  "no room for the dump at byte offset "
					  "%llu: %s",
					  (unsigned long long)w->written,
					  strerror(e));
			else
				set_error(
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
static void seal_section(vmheap_writer *w, size_t at, const char *tag,
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
static int begin_section(vmheap_writer *w, size_t *at)
{
	if (reserve(w, VMHEAP_SECTION_HEADER_LEN) < 0)
		return -1;
	*at = w->len;
	w->len += VMHEAP_SECTION_HEADER_LEN;
	return 0;
}

static int out_of_memory(vmheap_writer *w)
{
	set_error(w, VMHEAP_ENOMEM,
		  "out of memory while buffering the dump at byte offset %llu",
		  (unsigned long long)(w->written + w->len));
	return w->err;
}

/* Write out everything pending, sealing the current block if it holds
 * records, and start a new block. */
static int flush_block(vmheap_writer *w)
{
	int rc;

	if (w->blk_records) {
		if (w->totals.blocks == w->blk_cap) {
			uint64_t *g = vmheap_array_grow(
			    w->blk_offsets, &w->blk_cap, sizeof(*g), 64);
			if (!g)
				return out_of_memory(w);
			w->blk_offsets = g;
		}
		w->blk_offsets[w->totals.blocks++] = w->written + w->blk_start;
		seal_section(w, w->blk_start, VMHEAP_TAG_BLCK, w->blk_records);
	} else {
		w->len = w->blk_start; /* drop the empty block's header slot */
	}
	rc = write_all(w, w->buf, w->len);
	w->len = 0;
	w->blk_start = 0;
	w->blk_records = 0;
	w->prev_id = 0;
	if (rc)
		return rc;
	if (begin_section(w, &w->blk_start) < 0)
		return out_of_memory(w);
	return 0;
}

/* Common entry check of every add_* call. */
static int usable(vmheap_writer *w)
{
	if (!w)
		return VMHEAP_EINVAL;
	if (w->err)
		return w->err;
	if (w->finished)
		return VMHEAP_ESTATE;
	return 0;
}

/* After a record was packed: count it and close the block if full. */
static int end_record(vmheap_writer *w)
{
	if (w->nomem)
		return out_of_memory(w);
	w->blk_records++;
	if (w->len - w->blk_start - VMHEAP_SECTION_HEADER_LEN >= w->block_bytes)
		return flush_block(w);
	return 0;
}

static void pack_str(msgpack_packer *pk, const char *s, size_t len)
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
	    begin_section(w, &at) < 0)
		return VMHEAP_ENOMEM;
	time_ms = start_time_ms(o);
	time_s = o->time ? o->time : floor_div_1000(time_ms);
	with_ms = time_ms != vmheap_seconds_to_ms(time_s);
	msgpack_pack_map(pk, (o->memory ? 12 : 8) + with_ms);
	pack_str(pk, "version", 7);
	msgpack_pack_array(pk, 2);
	msgpack_pack_uint32(pk, VMHEAP_FORMAT_MAJOR);
	msgpack_pack_uint32(pk, o->native || o->edge_names || o->sites
				    ? VMHEAP_FORMAT_MINOR_1_1
				    : VMHEAP_FORMAT_MINOR);
	pack_str(pk, "vm", 2);
	pack_str(pk, vm, strlen(vm));
	pack_str(pk, "vm_version", 10);
	pack_str(pk, ver, strlen(ver));
	pack_str(pk, "pid", 3);
	msgpack_pack_uint64(pk, o->pid ? o->pid : (uint64_t)getpid());
	pack_str(pk, "time", 4);
	msgpack_pack_int64(pk, time_s);
	if (with_ms) {
		pack_str(pk, "time_ms", 7);
		msgpack_pack_int64(pk, time_ms);
	}
	pack_str(pk, "pointer_size", 12);
	msgpack_pack_uint32(pk, o->pointer_size ? o->pointer_size
						: (uint32_t)sizeof(void *));
	pack_str(pk, "flags", 5);
	msgpack_pack_uint32(pk, o->flags);
	pack_str(pk, "kinds", 5);
	msgpack_pack_array(pk, o->kind_count);
	for (i = 0; i < o->kind_count; i++) {
		const char *k = o->kind_names[i] ? o->kind_names[i] : "";
		pack_str(pk, k, strlen(k));
	}
	if (o->memory) {
		pack_str(pk, "rss", 3);
		msgpack_pack_uint64(pk, o->memory->rss);
		pack_str(pk, "malloc_in_use", 13);
		msgpack_pack_uint64(pk, o->memory->malloc_in_use);
		pack_str(pk, "malloc_free", 11);
		msgpack_pack_uint64(pk, o->memory->malloc_free);
		pack_str(pk, "malloc_mmap", 11);
		msgpack_pack_uint64(pk, o->memory->malloc_mmap);
	}
	if (w->nomem)
		return VMHEAP_ENOMEM;
	if (w->len - at - VMHEAP_SECTION_HEADER_LEN > VMHEAP_MAX_SECTION_BYTES)
		return VMHEAP_ELIMIT; /* kind names too long in total */
	seal_section(w, at, VMHEAP_TAG_HEAD, 0);
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
	if (fd < 0)
		return VMHEAP_EINVAL;
	if (!opt)
		opt = &none;
	w = calloc(1, sizeof(*w));
	if (!w)
		return VMHEAP_ENOMEM;
	w->fd = fd;
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
	if (!rc && begin_section(w, &w->blk_start) < 0)
		rc = VMHEAP_ENOMEM;
	if (rc) {
		vmheap_writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int vmheap_writer_add_string(vmheap_writer *w, uint64_t id, const char *text,
			     size_t len)
{
	int rc = usable(w);

	if (rc)
		return rc;
	if ((rc = check_string(w, "string", text, len)))
		return rc;
	msgpack_pack_array(&w->pk, 3);
	msgpack_pack_uint8(&w->pk, VMHEAP_RECORD_STRING);
	msgpack_pack_uint64(&w->pk, id);
	pack_str(&w->pk, text, len);
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
	int rc = usable(w);

	if (rc)
		return rc;
	if ((rc = check_string(w, "class name", name, name_len)))
		return rc;
	msgpack_pack_array(&w->pk, object_id ? 6 : 5);
	msgpack_pack_uint8(&w->pk, VMHEAP_RECORD_CLASS);
	msgpack_pack_uint64(&w->pk, id);
	pack_str(&w->pk, name, name_len);
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
		return out_of_memory(w);
	p = w->buf + w->len;
	p = mpw_array(p, names ? 4 : 3);
	p = mpw_uint(p, VMHEAP_RECORD_MORE_REFS);
	p = mpw_int(p, (int64_t)(id - w->prev_id));
	p = encode_refs(p, id, refs, n);
	if (names)
		p = encode_names(p, names, n);
	w->len = (size_t)(p - w->buf);
	w->prev_id = id;
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
	int rc = usable(w);

	if (rc)
		return rc;
	if ((rc = check_object(w, refs, names, nrefs, site_id)))
		return rc;
	first_names = some_names(names, first);
	if (reserve(w, OBJECT_RECORD_FIXED_MAX + MPW_ARRAY_MAX + MPW_INT_MAX +
			   first * 2 * MPW_INT_MAX) < 0)
		return out_of_memory(w);
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
	if ((rc = end_record(w)))
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
	int rc = usable(w);

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
	int rc = usable(w);

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
	pack_str(&w->pk, file, file_len);
	msgpack_pack_uint64(&w->pk, line);
	pack_str(&w->pk, method, method_len);
	w->totals.sites++;
	return end_record(w);
}

/* The arguments of add_native, checked before anything is packed. */
static int check_native(vmheap_writer *w, const struct vmheap_dump_module *m,
			size_t nm, const struct vmheap_dump_site *s, size_t ns)
{
	if ((nm && !m) || (ns && !s)) {
		set_error(w, 0, "NULL modules or sites with a non-zero count");
		return VMHEAP_EINVAL;
	}
	for (size_t i = 0; i < nm; i++) {
		if (m[i].path_len > VMHEAP_MAX_STRING_BYTES ||
		    m[i].build_id_len > VMHEAP_MAX_BUILD_ID_BYTES) {
			set_error(w, 0, "module %zu: path or build id too long",
				  i);
			return VMHEAP_ELIMIT;
		}
		if ((m[i].path_len && !m[i].path) ||
		    (m[i].build_id_len && !m[i].build_id)) {
			set_error(w, 0, "module %zu: NULL path or build id", i);
			return VMHEAP_EINVAL;
		}
	}
	for (size_t i = 0; i < ns; i++) {
		if (s[i].depth > VMHEAP_MAX_SITE_FRAMES) {
			set_error(w, 0, "site %zu: %zu frames, more than %u", i,
				  s[i].depth, VMHEAP_MAX_SITE_FRAMES);
			return VMHEAP_ELIMIT;
		}
		if (s[i].depth && !s[i].frames) {
			set_error(w, 0, "site %zu: NULL frames", i);
			return VMHEAP_EINVAL;
		}
		if (s[i].vm_file_len > VMHEAP_MAX_STRING_BYTES) {
			set_error(w, 0, "site %zu: VM file name too long", i);
			return VMHEAP_ELIMIT;
		}
		for (size_t k = 0; k < s[i].depth; k++)
			if (s[i].frames[k].module != VMHEAP_NO_MODULE &&
			    s[i].frames[k].module >= nm) {
				set_error(w, 0,
					  "site %zu frame %zu: module %u of %zu",
					  i, k, s[i].frames[k].module, nm);
				return VMHEAP_EINVAL;
			}
	}
	return 0;
}

int vmheap_writer_add_native(vmheap_writer *w,
			     const struct vmheap_dump_module *modules,
			     size_t nmodules,
			     const struct vmheap_dump_site *sites,
			     size_t nsites)
{
	msgpack_packer *pk;
	size_t at;
	int rc = usable(w);

	if (rc)
		return rc;
	if (w->native != 1) {
		set_error(w, 0, "%s",
			  w->native ? "the dump has its native section already"
				    : "the writer was not opened for a native "
				      "section (options.native)");
		return VMHEAP_ESTATE;
	}
	if (nsites > UINT32_MAX) {
		set_error(w, 0, "%zu sites, more than a section counts",
			  nsites);
		return VMHEAP_ELIMIT;
	}
	if ((rc = check_native(w, modules, nmodules, sites, nsites)))
		return rc;
	/* Close the block that holds records; the section goes where the
	 * next block's header slot was. */
	if (w->blk_records && (rc = flush_block(w)))
		return rc;
	w->len = w->blk_start;
	if (begin_section(w, &at) < 0)
		return out_of_memory(w);
	pk = &w->pk;
	msgpack_pack_map(pk, 2);
	pack_str(pk, "modules", 7);
	msgpack_pack_array(pk, nmodules);
	for (size_t i = 0; i < nmodules; i++) {
		msgpack_pack_array(pk, 3);
		pack_str(pk, modules[i].path ? modules[i].path : "",
			 modules[i].path_len);
		msgpack_pack_bin(pk, modules[i].build_id_len);
		msgpack_pack_bin_body(pk, modules[i].build_id,
				      modules[i].build_id_len);
		msgpack_pack_uint64(pk, modules[i].base);
	}
	pack_str(pk, "sites", 5);
	msgpack_pack_array(pk, nsites);
	for (size_t i = 0; i < nsites; i++) {
		const struct vmheap_dump_site *s = &sites[i];
		/* 7 with the VM's location (FORMAT.md section 15). */
		msgpack_pack_array(pk, s->vm_file ? 7 : 5);
		msgpack_pack_uint64(pk, s->live_bytes);
		msgpack_pack_uint64(pk, s->live_count);
		msgpack_pack_uint64(pk, s->allocs);
		msgpack_pack_uint64(pk, s->frees);
		msgpack_pack_array(pk, 2 * s->depth);
		for (size_t k = 0; k < s->depth; k++) {
			if (s->frames[k].module == VMHEAP_NO_MODULE)
				msgpack_pack_nil(pk);
			else
				msgpack_pack_uint32(pk, s->frames[k].module);
			msgpack_pack_uint64(pk, s->frames[k].offset);
		}
		if (s->vm_file) {
			pack_str(pk, s->vm_file, s->vm_file_len);
			msgpack_pack_uint64(pk, s->vm_line);
		}
	}
	if (w->nomem)
		return out_of_memory(w);
	if (w->len - at - VMHEAP_SECTION_HEADER_LEN >
	    VMHEAP_MAX_SECTION_BYTES) {
		size_t big = w->len - at - VMHEAP_SECTION_HEADER_LEN;
		w->len = at; /* take it back; the dump goes on */
		if (begin_section(w, &w->blk_start) < 0)
			return out_of_memory(w);
		set_error(w, 0,
			  "native section would be %zu bytes, more than the "
			  "format's section limit of %u bytes; pass fewer "
			  "sites",
			  big, VMHEAP_MAX_SECTION_BYTES);
		return VMHEAP_ELIMIT;
	}
	seal_section(w, at, VMHEAP_TAG_NATV, (uint32_t)nsites);
	w->native = 2;
	if (begin_section(w, &w->blk_start) < 0)
		return out_of_memory(w);
	return 0;
}

static void pack_total(msgpack_packer *pk, const char *key, uint64_t v)
{
	pack_str(pk, key, strlen(key));
	msgpack_pack_uint64(pk, v);
}

int vmheap_writer_finish(vmheap_writer *w)
{
	const struct vmheap_totals *t;
	uint64_t foot_offset;
	uint8_t trailer[VMHEAP_TRAILER_LEN];
	size_t at;
	int rc = usable(w);

	if (rc)
		return rc;
	w->finished = 1;
	/* Seal the last block (if it holds records) in place, then add the
	 * footer behind it and write both at once. */
	if (w->blk_records) {
		if ((rc = flush_block(w)))
			return rc;
	}
	w->len = w->blk_start; /* drop the (empty) block slot */
	t = &w->totals;
	foot_offset = w->written + w->len;
	if (begin_section(w, &at) < 0)
		return out_of_memory(w);
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
	pack_str(&w->pk, "block_offsets", 13);
	msgpack_pack_array(&w->pk, t->blocks);
	for (uint64_t i = 0; i < t->blocks; i++)
		msgpack_pack_uint64(&w->pk, w->blk_offsets[i]);
	if (w->nomem)
		return out_of_memory(w);
	if (w->len - at - VMHEAP_SECTION_HEADER_LEN >
	    VMHEAP_MAX_SECTION_BYTES) {
		set_error(w, VMHEAP_ELIMIT,
			  "footer would be %zu bytes (%llu blocks), more than "
			  "the format's section limit of %u bytes; use larger "
			  "blocks",
			  w->len - at - VMHEAP_SECTION_HEADER_LEN,
			  (unsigned long long)t->blocks,
			  VMHEAP_MAX_SECTION_BYTES);
		return w->err;
	}
	seal_section(w, at, VMHEAP_TAG_FOOT, 0);
	vmheap_put_be64(trailer, foot_offset);
	memcpy(trailer + 8, VMHEAP_END_MAGIC, VMHEAP_END_MAGIC_LEN);
	if (append(w, trailer, sizeof(trailer)) < 0)
		return out_of_memory(w);
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
	return w ? w->errmsg : "";
}

void vmheap_writer_free(vmheap_writer *w)
{
	if (!w)
		return;
	free(w->buf);
	free(w->blk_offsets);
	free(w);
}
