/*
 * format_test.c - Check suite for libvmheap: the dump writer, the reader,
 * the block cursor and CRC32C.
 *
 * Dumps are written by the real writer into memory files (memfd), pipes,
 * /dev/full and size-limited files.  Files the writer cannot produce
 * (unknown tags, newer versions, wrong totals) are built byte by byte by
 * a small builder below, which uses msgpack-c and the CRC32C function
 * only, so that the reader is checked against FORMAT.md and not merely
 * against the writer.
 */
#include <check.h>
#include <malloc.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <msgpack.h>

#include "vmheap.h"
#include "crc32c-internal.h"
#include "mpwriter-internal.h"
#include "lib/vmheap_spec.h"

/* ------------------------------------------------------------ helpers */

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static void bytes_add(struct bytes *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		ck_assert_ptr_nonnull(b->p);
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static int memfd_with(const void *data, size_t len)
{
	int fd = memfd_create("vmheap-test", 0);
	const uint8_t *p = data;

	ck_assert_int_ge(fd, 0);
	while (len) {
		ssize_t k = write(fd, p, len);
		ck_assert_int_gt(k, 0);
		p += k;
		len -= (size_t)k;
	}
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* Point *c at blk: a new cursor the first time, the same one after. */
static void open_cursor(vmheap_block_cursor **c, const struct vmheap_block *blk)
{
	if (*c)
		vmheap_block_cursor_reset(*c, blk);
	else
		ck_assert_int_eq(vmheap_block_cursor_open(c, blk), 0);
}

static struct bytes slurp(int fd)
{
	struct bytes b = {0};
	uint8_t chunk[65536];
	ssize_t k;

	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	while ((k = read(fd, chunk, sizeof(chunk))) > 0)
		bytes_add(&b, chunk, (size_t)k);
	ck_assert_int_eq(k, 0);
	return b;
}

/* The outcome of reading a whole dump. */
struct outcome {
	int rc; /* last return of open/next: 0 = complete dump */
	uint64_t records;
	struct vmheap_totals totals; /* counted from the records */
	char error[800];
};

static struct outcome read_fd_named(int fd, const char *name)
{
	struct outcome o = {0};
	struct vmheap_record rec;
	vmheap_reader *r;

	o.rc = vmheap_reader_open_fd(&r, fd, name);
	if (o.rc == 0) {
		while ((o.rc = vmheap_reader_next(r, &rec)) > 0) {
			o.records++;
			vmheap_totals_add_record(&o.totals, &rec);
		}
	}
	ck_assert_ptr_nonnull(r);
	snprintf(o.error, sizeof(o.error), "%s", vmheap_reader_error(r));
	/* Errors are sticky: asking again gives the same answer. */
	if (o.rc < 0)
		ck_assert_int_eq(vmheap_reader_next(r, &rec), o.rc);
	vmheap_reader_free(r);
	return o;
}

static struct outcome read_fd(int fd)
{
	return read_fd_named(fd, "test.vmheap");
}

static struct outcome read_bytes(const void *data, size_t len)
{
	int fd = memfd_with(data, len);
	struct outcome o = read_fd(fd);

	close(fd);
	return o;
}

/* A writer on a fresh memory file. */
static vmheap_writer *new_writer(int *fd, uint32_t block_bytes)
{
	static const char *const kinds[] = {"object", "string", "array"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;

	*fd = memfd_create("vmheap-test", 0);
	ck_assert_int_ge(*fd, 0);
	opt.vm_name = "testvm";
	opt.vm_version = "9.9.9";
	opt.pid = 4242;
	opt.time = 1700000000;
	opt.pointer_size = 8;
	opt.flags = VMHEAP_FLAG_LIVE_ONLY;
	opt.kind_names = kinds;
	opt.kind_count = 3;
	opt.block_bytes = block_bytes;
	ck_assert_int_eq(vmheap_writer_open(&w, *fd, &opt), 0);
	return w;
}

static struct bytes finish_to_bytes(vmheap_writer *w, int fd)
{
	struct bytes b;

	ck_assert_msg(vmheap_writer_finish(w) == 0, "finish: %s",
		      vmheap_writer_error(w));
	b = slurp(fd);
	ck_assert_uint_eq(b.len, vmheap_writer_bytes_written(w));
	vmheap_writer_free(w);
	close(fd);
	return b;
}

/* A small complete dump with several blocks: strings, classes, objects
 * and roots. */
static struct bytes small_dump(void)
{
	int fd;
	vmheap_writer *w = new_writer(&fd, 48);
	uint64_t refs[3] = {0x1000, 0x1028, 0x7fff0000};

	ck_assert_int_eq(vmheap_writer_add_string(w, 1, "vm", 2), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Object", 6, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 2, "Array", 5, 1, 0), 0);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(vmheap_writer_add_object(w, 0x1000 + 40 * i,
							  1 + i % 2, 40, 0,
							  refs, i % 4),
				 0);
	ck_assert_int_eq(vmheap_writer_add_root(w, 1, 0x1000), 0);
	return finish_to_bytes(w, fd);
}

/* ----------------------------------------------- hand-built dumps */

#define MAGIC "\x89VMH\r\n\x1a\n"
#define END_MAGIC "VMHEND\r\n"

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Append a section as FORMAT.md describes it; returns its offset. */
static uint64_t add_section(struct bytes *f, const char *tag, uint32_t records,
			    const void *payload, size_t len)
{
	uint8_t h[16];
	uint64_t at = f->len;
	uint32_t crc;

	memcpy(h, tag, 4);
	put_be32(h + 4, (uint32_t)len);
	put_be32(h + 8, records);
	crc = vmheap_crc32c(0, h, 12);
	crc = vmheap_crc32c(crc, payload, len);
	put_be32(h + 12, crc);
	bytes_add(f, h, 16);
	bytes_add(f, payload, len);
	return at;
}

static void add_trailer(struct bytes *f, uint64_t foot_offset)
{
	uint8_t t[16];

	put_be32(t, (uint32_t)(foot_offset >> 32));
	put_be32(t + 4, (uint32_t)foot_offset);
	memcpy(t + 8, END_MAGIC, 8);
	bytes_add(f, t, 16);
}

static void pk_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

/* A header map of the given version; `extra` adds a key a newer minor
 * version might have. */
static void add_head(struct bytes *f, unsigned major, unsigned minor, int extra)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, extra ? 4 : 3);
	if (extra) { /* unknown keys may come first, with any value */
		pk_str(&pk, "compression");
		msgpack_pack_map(&pk, 1);
		pk_str(&pk, "algo");
		msgpack_pack_array(&pk, 2);
		msgpack_pack_double(&pk, 1.5);
		msgpack_pack_nil(&pk);
	}
	pk_str(&pk, "version");
	msgpack_pack_array(&pk, 2);
	msgpack_pack_unsigned_int(&pk, major);
	msgpack_pack_unsigned_int(&pk, minor);
	pk_str(&pk, "vm");
	pk_str(&pk, "handmade");
	pk_str(&pk, "kinds");
	msgpack_pack_array(&pk, 1);
	pk_str(&pk, "object");
	bytes_add(f, MAGIC, 8);
	add_section(f, "HEAD", 0, sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
}

/* Footer with the given totals and block offsets, then the trailer. */
static void add_foot(struct bytes *f, const struct vmheap_totals *t,
		     const uint64_t *offsets, size_t n)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	uint64_t at;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 8);
	pk_str(&pk, "objects");
	msgpack_pack_uint64(&pk, t->objects);
	pk_str(&pk, "bytes");
	msgpack_pack_uint64(&pk, t->bytes);
	pk_str(&pk, "classes");
	msgpack_pack_uint64(&pk, t->classes);
	pk_str(&pk, "roots");
	msgpack_pack_uint64(&pk, t->roots);
	pk_str(&pk, "references");
	msgpack_pack_uint64(&pk, t->references);
	pk_str(&pk, "strings");
	msgpack_pack_uint64(&pk, t->strings);
	pk_str(&pk, "blocks");
	msgpack_pack_uint64(&pk, t->blocks);
	pk_str(&pk, "block_offsets");
	msgpack_pack_array(&pk, n);
	for (size_t i = 0; i < n; i++)
		msgpack_pack_uint64(&pk, offsets[i]);
	at = add_section(f, "FOOT", 0, sb.data, sb.size);
	add_trailer(f, at);
	msgpack_sbuffer_destroy(&sb);
}

/* One block holding: class 1 "Thing", object 0x500 (class 1, 24 bytes, one
 * reference to itself) and root (string 0, 0x500).  `unknown` inserts
 * records of tags 99 and 6 and an extra trailing field in the root
 * record, as a newer minor version might write. */
static uint64_t add_thing_block(struct bytes *f, int unknown)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	uint64_t at;
	uint32_t n = 3;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 5);
	msgpack_pack_uint8(&pk, 2);
	msgpack_pack_uint8(&pk, 1);
	pk_str(&pk, "Thing");
	msgpack_pack_uint8(&pk, 0);
	msgpack_pack_uint8(&pk, 0);
	if (unknown) {
		msgpack_pack_array(&pk, 4);
		msgpack_pack_uint8(&pk, 99);
		pk_str(&pk, "future");
		msgpack_pack_array(&pk, 2);
		msgpack_pack_int64(&pk, -5);
		msgpack_pack_bin(&pk, 3);
		msgpack_pack_bin_body(&pk, "\x00\x01\x02", 3);
		msgpack_pack_map(&pk, 1);
		msgpack_pack_true(&pk);
		msgpack_pack_float(&pk, 2.5f);
		msgpack_pack_array(&pk, 1);
		msgpack_pack_uint8(&pk, 77);
		n += 2;
	}
	/* With `unknown`, the 1.1 elements (no names, no site) and then one
	 * of a newer minor version. */
	msgpack_pack_array(&pk, unknown ? 9 : 6);
	msgpack_pack_uint8(&pk, 3);
	msgpack_pack_int64(&pk, 0x500);
	msgpack_pack_uint8(&pk, 1);
	msgpack_pack_uint8(&pk, 24);
	msgpack_pack_uint8(&pk, 0);
	msgpack_pack_array(&pk, 1);
	msgpack_pack_int64(&pk, 0);
	if (unknown) {
		msgpack_pack_nil(&pk);
		msgpack_pack_uint8(&pk, 0);
		pk_str(&pk, "a newer field");
	}
	msgpack_pack_array(&pk, unknown ? 5 : 3);
	msgpack_pack_uint8(&pk, 4);
	msgpack_pack_uint8(&pk, 0);
	msgpack_pack_uint64(&pk, 0x500);
	if (unknown) {
		msgpack_pack_uint8(&pk, 0); /* no name (1.1) */
		pk_str(&pk, "a newer field");
	}
	at = add_section(f, "BLCK", n, sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
	return at;
}

static const struct vmheap_totals thing_totals = {.objects = 1,
						  .bytes = 24,
						  .classes = 1,
						  .roots = 1,
						  .references = 1,
						  .strings = 0,
						  .blocks = 1};

/* ------------------------------------------------------------ crc */

START_TEST(crc32c_of_123456789_is_the_castagnoli_check_value)
{
	ck_assert_uint_eq(vmheap_crc32c(0, "123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(vmheap_crc32c_sw(0, "123456789", 9), 0xE3069283u);
	if (vmheap_crc32c_hw_available())
		ck_assert_uint_eq(vmheap_crc32c_hw(0, "123456789", 9),
				  0xE3069283u);
	/* Chaining equals one pass. */
	ck_assert_uint_eq(
	    vmheap_crc32c(vmheap_crc32c(0, "1234", 4), "56789", 5),
	    0xE3069283u);
	ck_assert_uint_eq(vmheap_crc32c(0, "", 0), 0);
}
END_TEST

START_TEST(crc32c_instruction_and_table_agree_on_every_length_and_alignment)
{
	uint8_t data[1100];
	unsigned seed = 7;

	if (!vmheap_crc32c_hw_available()) {
		fprintf(stderr, "note: no SSE4.2 on this CPU; only the table "
				"implementation was checked\n");
		return;
	}
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)rand_r(&seed);
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len + off <= sizeof(data);
		     len += 1 + len / 16)
			ck_assert_uint_eq(
			    vmheap_crc32c_hw(0x12345678u, data + off, len),
			    vmheap_crc32c_sw(0x12345678u, data + off, len));
}
END_TEST

START_TEST(crc32c_instruction_and_table_agree_on_long_inputs)
{
	/* Long inputs take the three-lane path of the instruction version. */
	enum { MAX = 3 * 65536 + 77 };
	uint8_t *data = malloc(MAX);
	unsigned seed = 11;
	static const size_t lens[] = {12287, 12288,	 12289,	 24576,
				      36863, 65536 + 16, 100000, MAX - 3};

	if (!vmheap_crc32c_hw_available())
		return;
	for (size_t i = 0; i < MAX; i++)
		data[i] = (uint8_t)rand_r(&seed);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (size_t off = 0; off < 3; off++)
			ck_assert_msg(
			    vmheap_crc32c_hw(0, data + off, lens[i]) ==
				vmheap_crc32c_sw(0, data + off, lens[i]),
			    "length %zu offset %zu", lens[i], off);
	free(data);
}
END_TEST

/* ------------------------------------------------------- round trips */

struct expected {
	enum vmheap_record_type type;
	uint64_t id, a, b;
	uint32_t c;
	const char *text;
	size_t len;
	const uint64_t *refs;
	size_t nrefs;
};

static void check_record(const struct vmheap_record *rec,
			 const struct expected *e, size_t i)
{
	ck_assert_msg(rec->type == e->type, "record %zu: type %d, want %d", i,
		      rec->type, e->type);
	switch (e->type) {
	case VMHEAP_RECORD_STRING:
		ck_assert_uint_eq(rec->u.string.id, e->id);
		ck_assert_uint_eq(rec->u.string.len, e->len);
		ck_assert(!memcmp(rec->u.string.text, e->text, e->len));
		break;
	case VMHEAP_RECORD_CLASS:
		ck_assert_uint_eq(rec->u.klass.id, e->id);
		ck_assert_uint_eq(rec->u.klass.name_len, e->len);
		ck_assert(!memcmp(rec->u.klass.name, e->text, e->len));
		ck_assert_uint_eq(rec->u.klass.super_id, e->a);
		ck_assert_uint_eq(rec->u.klass.flags, e->c);
		/* element 5, the class's own object (1.1): b, 0 for none */
		ck_assert_uint_eq(rec->u.klass.object_id, e->b);
		break;
	case VMHEAP_RECORD_OBJECT:
		ck_assert_msg(rec->u.object.id == e->id,
			      "record %zu: id %#llx, want %#llx", i,
			      (unsigned long long)rec->u.object.id,
			      (unsigned long long)e->id);
		ck_assert_uint_eq(rec->u.object.class_id, e->a);
		ck_assert_uint_eq(rec->u.object.bytes, e->b);
		ck_assert_uint_eq(rec->u.object.kind, e->c);
		ck_assert_uint_eq(rec->u.object.nrefs, e->nrefs);
		for (size_t k = 0; k < e->nrefs; k++)
			ck_assert_msg(rec->u.object.refs[k] == e->refs[k],
				      "record %zu ref %zu: %#llx, want %#llx",
				      i, k,
				      (unsigned long long)rec->u.object.refs[k],
				      (unsigned long long)e->refs[k]);
		break;
	case VMHEAP_RECORD_ROOT:
		ck_assert_uint_eq(rec->u.root.kind_string_id, e->id);
		ck_assert_uint_eq(rec->u.root.object_id, e->a);
		break;
	default:
		ck_abort_msg("unexpected record type %d", e->type);
	}
}

static void add_expected(vmheap_writer *w, const struct expected *e)
{
	int rc = -100;

	switch (e->type) {
	case VMHEAP_RECORD_STRING:
		rc = vmheap_writer_add_string(w, e->id, e->text, e->len);
		break;
	case VMHEAP_RECORD_CLASS:
		rc = e->b ? vmheap_writer_add_class_object(w, e->id, e->text,
							   e->len, e->a, e->c,
							   e->b)
			  : vmheap_writer_add_class(w, e->id, e->text, e->len,
						    e->a, e->c);
		break;
	case VMHEAP_RECORD_OBJECT:
		rc = vmheap_writer_add_object(w, e->id, e->a, e->b, e->c,
					      e->refs, e->nrefs);
		break;
	case VMHEAP_RECORD_ROOT:
		rc = vmheap_writer_add_root(w, e->id, e->a);
		break;
	default:
		break;
	}
	ck_assert_msg(rc == 0, "add: %d %s", rc, vmheap_writer_error(w));
}

static const uint64_t refs_wrap[] = {
    0, UINT64_MAX, 1, UINT64_MAX - 39, 0x8000000000000000ull, 40};
static const uint64_t refs_self[] = {UINT64_MAX};
static const char utf8_name[] = "Ünïcødé::Класс::名前";

static const struct expected edge_records[] = {
    {VMHEAP_RECORD_STRING, 0, 0, 0, 0, "", 0, NULL, 0},
    {VMHEAP_RECORD_STRING, UINT64_MAX, 0, 0, 0, "machine_context", 15, NULL, 0},
    {VMHEAP_RECORD_STRING, 7, 0, 0, 0, "a\0b", 3, NULL, 0},
    {VMHEAP_RECORD_CLASS, 1, 0, 0, 0, "", 0, NULL, 0},
    {VMHEAP_RECORD_CLASS, 2, 1, 0, UINT32_MAX, utf8_name, sizeof(utf8_name) - 1,
     NULL, 0},
    {VMHEAP_RECORD_CLASS, UINT64_MAX, UINT64_MAX, 0, 0, "Object", 6, NULL, 0},
    /* classes that name their own object (element 5) */
    {VMHEAP_RECORD_CLASS, 3, 0, UINT64_MAX, 0, "Class", 5, NULL, 0},
    {VMHEAP_RECORD_CLASS, 4, 3, 1, 1, "#<Class:0x0000000000000001>", 27,
     NULL, 0},
    {VMHEAP_RECORD_OBJECT, 0, 1, 0, 0, NULL, 0, NULL, 0},
    {VMHEAP_RECORD_OBJECT, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX, NULL,
     0, refs_wrap, 6},
    {VMHEAP_RECORD_OBJECT, 1, 2, 40, 1, NULL, 0, refs_self, 1},
    {VMHEAP_RECORD_OBJECT, UINT64_MAX - 39, 2, 40, 2, NULL, 0, refs_wrap, 6},
    {VMHEAP_RECORD_OBJECT, 0x7fffffffffffffffull, 1, 1, 0, NULL, 0, refs_wrap,
     6},
    {VMHEAP_RECORD_OBJECT, 0x8000000000000000ull, 1, 1, 0, NULL, 0, refs_wrap,
     3},
    {VMHEAP_RECORD_OBJECT, 0x8000000000000000ull, 1, 1, 0, NULL, 0, NULL,
     0}, /* the same id twice: delta 0 */
    {VMHEAP_RECORD_ROOT, 0, 0, 0, 0, NULL, 0, NULL, 0},
    {VMHEAP_RECORD_ROOT, UINT64_MAX, UINT64_MAX, 0, 0, NULL, 0, NULL, 0},
};

static void round_trip_edges(uint32_t block_bytes)
{
	size_t n = sizeof(edge_records) / sizeof(edge_records[0]), i = 0;
	struct vmheap_record rec;
	const struct vmheap_header *h;
	vmheap_reader *r;
	struct bytes b;
	int fd, rc;
	vmheap_writer *w = new_writer(&fd, block_bytes);

	for (size_t k = 0; k < n; k++)
		add_expected(w, &edge_records[k]);
	b = finish_to_bytes(w, fd);

	fd = memfd_with(b.p, b.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "edges.vmheap"), 0);
	h = vmheap_reader_header(r);
	ck_assert_uint_eq(h->major, VMHEAP_FORMAT_MAJOR);
	ck_assert_uint_eq(h->minor, VMHEAP_FORMAT_MINOR);
	ck_assert_str_eq(h->vm_name, "testvm");
	ck_assert_str_eq(h->vm_version, "9.9.9");
	ck_assert_uint_eq(h->pid, 4242);
	ck_assert_int_eq(h->time, 1700000000);
	ck_assert_uint_eq(h->pointer_size, 8);
	ck_assert_uint_eq(h->flags, VMHEAP_FLAG_LIVE_ONLY);
	ck_assert_uint_eq(h->kind_count, 3);
	ck_assert_str_eq(h->kind_names[0], "object");
	ck_assert_str_eq(h->kind_names[2], "array");
	while ((rc = vmheap_reader_next(r, &rec)) > 0) {
		ck_assert_uint_lt(i, n);
		check_record(&rec, &edge_records[i], i);
		ck_assert_uint_lt(rec.offset, b.len);
		i++;
	}
	ck_assert_msg(rc == 0, "read: %s", vmheap_reader_error(r));
	ck_assert_uint_eq(i, n);
	ck_assert_uint_eq(vmheap_reader_totals(r)->objects, 7);
	ck_assert_uint_eq(vmheap_reader_totals(r)->references, 22);
	ck_assert_uint_eq(vmheap_reader_totals(r)->bytes,
			  UINT64_MAX + 40 + 40 + 1 + 1 + 1);
	if (block_bytes == 1)
		ck_assert_uint_eq(vmheap_reader_totals(r)->blocks, n);
	ck_assert_uint_eq(vmheap_reader_offset(r), b.len);
	/* After the end, next keeps saying "end". */
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 0);
	vmheap_reader_free(r);
	close(fd);
	free(b.p);
}

/* The sums a next_block() caller compares with the footer: every record
 * type lands in its own total, and blocks are the caller's to count. */
START_TEST(totals_add_record_counts_each_record_type_like_the_footer)
{
	static const uint64_t refs[3] = {1, 2, 3};
	struct vmheap_totals t = {0};
	struct vmheap_record rec;

	t.blocks = 7;
	memset(&rec, 0, sizeof(rec));
	rec.type = VMHEAP_RECORD_OBJECT;
	rec.u.object.bytes = 40;
	rec.u.object.refs = refs;
	rec.u.object.nrefs = 3;
	vmheap_totals_add_record(&t, &rec);
	vmheap_totals_add_record(&t, &rec);
	rec.type = VMHEAP_RECORD_MORE_REFS;
	rec.u.object.bytes = 0;
	rec.u.object.nrefs = 2;
	vmheap_totals_add_record(&t, &rec);
	rec.type = VMHEAP_RECORD_CLASS;
	vmheap_totals_add_record(&t, &rec);
	rec.type = VMHEAP_RECORD_ROOT;
	vmheap_totals_add_record(&t, &rec);
	vmheap_totals_add_record(&t, &rec);
	rec.type = VMHEAP_RECORD_STRING;
	vmheap_totals_add_record(&t, &rec);
	ck_assert_uint_eq(t.objects, 2);
	ck_assert_uint_eq(t.bytes, 80);
	ck_assert_uint_eq(t.references, 8);
	ck_assert_uint_eq(t.classes, 1);
	ck_assert_uint_eq(t.roots, 2);
	ck_assert_uint_eq(t.strings, 1);
	ck_assert_uint_eq(t.blocks, 7);
}
END_TEST

/* The arrays appended to one at a time: first size, then doubling, the
 * contents kept; an impossible size fails and leaves the array alone. */
START_TEST(array_grow_doubles_and_keeps_the_contents)
{
	size_t cap = 0, n = 0;
	uint32_t *a = NULL, *g;

	for (uint32_t i = 0; i < 1000; i++) {
		if (n == cap) {
			size_t before = cap;
			g = vmheap_array_grow(a, &cap, sizeof(*g), 16);
			ck_assert_ptr_nonnull(g);
			ck_assert_uint_eq(cap, before ? before * 2 : 16);
			a = g;
		}
		a[n++] = i * 3;
	}
	for (uint32_t i = 0; i < 1000; i++)
		ck_assert_uint_eq(a[i], i * 3);
	ck_assert_uint_eq(cap, 1024);
	ck_assert_ptr_null(vmheap_array_grow(a, &cap, SIZE_MAX / 1024, 16));
	ck_assert_uint_eq(cap, 1024);
	ck_assert_uint_eq(a[999], 2997);
	free(a);
}
END_TEST

START_TEST(every_record_type_round_trips_with_edge_values)
{
	round_trip_edges(0);
}
END_TEST

START_TEST(edge_values_round_trip_with_one_record_per_block)
{
	/* Delta state restarts in every block. */
	round_trip_edges(1);
}
END_TEST

START_TEST(object_with_100000_references_round_trips)
{
	enum { N = 100000 };
	uint64_t *refs = malloc(N * sizeof(*refs));
	uint64_t id = 0x7f0000001000ull, got = 0, more = 0;
	struct vmheap_record rec;
	vmheap_reader *r;
	struct bytes b;
	int fd, rc;
	vmheap_writer *w = new_writer(&fd, 0);

	for (uint64_t i = 0; i < N; i++)
		refs[i] = (i % 3 == 0) ? id - 40 * i : id + (i * i * 977);
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Array", 5, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_object(w, 0x10, 1, 8, 0, NULL, 0),
			 0);
	ck_assert_int_eq(vmheap_writer_add_object(w, id, 1, 800000, 2, refs, N),
			 0);
	ck_assert_int_eq(
	    vmheap_writer_add_object(w, id + 40, 1, 40, 0, refs, 1), 0);
	b = finish_to_bytes(w, fd);

	fd = memfd_with(b.p, b.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "big.vmheap"), 0);
	while ((rc = vmheap_reader_next(r, &rec)) > 0) {
		if (rec.type == VMHEAP_RECORD_OBJECT && rec.u.object.id == id) {
			ck_assert_uint_eq(rec.u.object.bytes, 800000);
			ck_assert_uint_eq(rec.u.object.kind, 2);
			ck_assert_uint_le(rec.u.object.nrefs, N);
		} else if (rec.type == VMHEAP_RECORD_MORE_REFS) {
			ck_assert_uint_eq(rec.u.object.id, id);
			more++;
		} else {
			continue;
		}
		for (size_t k = 0; k < rec.u.object.nrefs; k++)
			ck_assert_uint_eq(rec.u.object.refs[k], refs[got + k]);
		got += rec.u.object.nrefs;
	}
	ck_assert_msg(rc == 0, "read: %s", vmheap_reader_error(r));
	ck_assert_uint_eq(got, N);
	ck_assert_uint_ge(more, 1);
	ck_assert_uint_eq(vmheap_reader_totals(r)->references, N + 1);
	ck_assert_uint_eq(vmheap_reader_totals(r)->objects, 3);
	vmheap_reader_free(r);
	close(fd);
	free(b.p);
	free(refs);
}
END_TEST

START_TEST(dump_without_records_is_complete)
{
	int fd;
	vmheap_writer *w = new_writer(&fd, 0);
	struct bytes b = finish_to_bytes(w, fd);
	struct outcome o = read_bytes(b.p, b.len);

	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.records, 0);
	free(b.p);
}
END_TEST

START_TEST(header_defaults_fill_pid_time_and_pointer_size)
{
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	vmheap_reader *r;
	struct vmheap_record rec;
	int fd = memfd_create("t", 0);
	time_t before = time(NULL);

	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "d"), 0);
	ck_assert_uint_eq(vmheap_reader_header(r)->pid, (uint64_t)getpid());
	ck_assert_int_ge(vmheap_reader_header(r)->time, before);
	ck_assert_uint_eq(vmheap_reader_header(r)->pointer_size,
			  sizeof(void *));
	ck_assert_str_eq(vmheap_reader_header(r)->vm_name, "");
	ck_assert_uint_eq(vmheap_reader_header(r)->kind_count, 0);
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 0);
	vmheap_reader_free(r);
	close(fd);
}
END_TEST

/* --------------------------------------------------- forward compat */

START_TEST(unknown_record_tags_and_extra_fields_are_skipped)
{
	struct bytes f = {0};
	uint64_t blk;
	struct outcome o;

	add_head(&f, 1, 0, 0);
	blk = add_thing_block(&f, 1);
	add_foot(&f, &thing_totals, &blk, 1);
	o = read_bytes(f.p, f.len);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.records, 3); /* class, object, root */
	ck_assert_uint_eq(o.totals.objects, 1);
	ck_assert_uint_eq(o.totals.roots, 1);
	free(f.p);
}
END_TEST

START_TEST(unknown_section_is_skipped_but_its_checksum_is_checked)
{
	struct bytes f = {0};
	uint64_t blk, xtra;
	struct outcome o;

	add_head(&f, 1, 0, 0);
	xtra = add_section(&f, "XTRA", 2, "\x01\x02\x03 whatever", 13);
	blk = add_thing_block(&f, 0);
	add_section(&f, "IDX0", 0, "", 0);
	add_foot(&f, &thing_totals, &blk, 1);
	o = read_bytes(f.p, f.len);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.records, 3);

	f.p[xtra + 17] ^= 0x40; /* damage the unknown section's payload */
	o = read_bytes(f.p, f.len);
	ck_assert_int_eq(o.rc, VMHEAP_ECHECKSUM);
	ck_assert_msg(strstr(o.error, "XTRA"), "%s", o.error);
	free(f.p);
}
END_TEST

START_TEST(newer_minor_version_is_read)
{
	struct bytes f = {0};
	uint64_t blk;
	struct outcome o;
	vmheap_reader *r;
	int fd;

	add_head(&f, 1, 7, 1);
	add_section(&f, "NEW!", 0, "\xc0", 1);
	blk = add_thing_block(&f, 1);
	add_foot(&f, &thing_totals, &blk, 1);
	o = read_bytes(f.p, f.len);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.records, 3);
	fd = memfd_with(f.p, f.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "x"), 0);
	ck_assert_uint_eq(vmheap_reader_header(r)->minor, 7);
	ck_assert_str_eq(vmheap_reader_header(r)->vm_name, "handmade");
	vmheap_reader_free(r);
	close(fd);
	free(f.p);
}
END_TEST

START_TEST(newer_major_version_is_refused)
{
	struct bytes f = {0};
	uint64_t blk;
	struct outcome o;

	add_head(&f, 2, 0, 1);
	blk = add_thing_block(&f, 0);
	add_foot(&f, &thing_totals, &blk, 1);
	o = read_bytes(f.p, f.len);
	ck_assert_int_eq(o.rc, VMHEAP_EVERSION);
	ck_assert_msg(strstr(o.error, "version 2.0"), "%s", o.error);
	ck_assert_msg(strstr(o.error, "test.vmheap"), "%s", o.error);
	free(f.p);
}
END_TEST

/* ------------------------------------------------------- damage */

START_TEST(every_truncation_of_a_small_dump_is_reported_with_its_offset)
{
	struct bytes b = small_dump();
	char want[64];
	struct outcome o = read_bytes(b.p, b.len);

	ck_assert_msg(o.rc == 0, "%s", o.error); /* the whole file is fine */
	ck_assert_uint_ge(o.totals.objects, 6);
	for (size_t len = 0; len < b.len; len++) {
		o = read_bytes(b.p, len);
		ck_assert_msg(o.rc == VMHEAP_ETRUNCATED,
			      "length %zu of %zu: rc %d (%s)", len, b.len, o.rc,
			      o.error);
		snprintf(want, sizeof(want), "at byte offset %zu:", len);
		ck_assert_msg(strstr(o.error, want), "length %zu: %s", len,
			      o.error);
		ck_assert_msg(strstr(o.error, "truncated"), "%s", o.error);
	}
	free(b.p);
}
END_TEST

START_TEST(every_single_bit_flip_anywhere_in_a_dump_is_detected)
{
	struct bytes b = small_dump();
	size_t checksum_errors = 0;

	for (size_t i = 0; i < b.len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			struct outcome o;
			b.p[i] ^= (uint8_t)(1u << bit);
			o = read_bytes(b.p, b.len);
			b.p[i] ^= (uint8_t)(1u << bit);
			ck_assert_msg(o.rc < 0,
				      "flip of bit %d at byte %zu went "
				      "unnoticed",
				      bit, i);
			ck_assert_msg(strstr(o.error, "byte offset"),
				      "byte %zu bit %d: %s", i, bit, o.error);
			checksum_errors += o.rc == VMHEAP_ECHECKSUM;
		}
	}
	/* Flips inside section payloads are checksum errors. */
	ck_assert_uint_gt(checksum_errors, b.len * 8 / 2);
	free(b.p);
}
END_TEST

START_TEST(bit_flip_in_a_block_payload_is_a_checksum_error_naming_the_block)
{
	struct bytes b = small_dump();
	/* The first block follows the magic and the HEAD section. */
	uint32_t head_len = ((uint32_t)b.p[12] << 24) |
			    ((uint32_t)b.p[13] << 16) |
			    ((uint32_t)b.p[14] << 8) | b.p[15];
	size_t blk = 8 + 16 + head_len;
	char want[96];
	struct outcome o;

	ck_assert(!memcmp(b.p + blk, "BLCK", 4));
	b.p[blk + 16 + 2] ^= 0x08;
	o = read_bytes(b.p, b.len);
	ck_assert_int_eq(o.rc, VMHEAP_ECHECKSUM);
	snprintf(want, sizeof(want),
		 "block checksum mismatch at byte offset %zu (section 'BLCK' "
		 "at %zu)",
		 blk + 16, blk);
	ck_assert_msg(strstr(o.error, want), "%s", o.error);
	ck_assert_msg(!strncmp(o.error, "test.vmheap: ", 13), "%s", o.error);
	free(b.p);
}
END_TEST

START_TEST(reader_fed_random_bytes_fails_cleanly)
{
	uint8_t buf[4096];

	for (unsigned seed = 1; seed <= 300; seed++) {
		unsigned s = seed;
		size_t len = (size_t)rand_r(&s) % sizeof(buf);
		struct outcome o;
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rand_r(&s);
		if (seed % 3 == 0 && len >= 8)
			memcpy(buf, MAGIC, 8); /* get past the magic */
		o = read_bytes(buf, len);
		ck_assert_msg(o.rc < 0, "seed %u: random bytes read as a dump",
			      seed);
		ck_assert_msg(o.error[0], "seed %u: no message", seed);
	}
}
END_TEST

START_TEST(random_block_payloads_with_valid_checksums_fail_cleanly)
{
	/* Garbage that passes the CRC reaches the record decoder. */
	for (unsigned seed = 1; seed <= 500; seed++) {
		unsigned s = seed;
		uint8_t payload[512];
		size_t len = 1 + (size_t)rand_r(&s) % sizeof(payload);
		struct bytes f = {0};
		struct vmheap_totals t = {0};
		uint64_t blk;
		struct outcome o;

		for (size_t i = 0; i < len; i++)
			payload[i] = (uint8_t)rand_r(&s);
		if (seed % 2) /* start like an object record */
			payload[0] = 0x96, payload[1 % len] = 0x03;
		add_head(&f, 1, 0, 0);
		blk = add_section(&f, "BLCK", 1 + (uint32_t)rand_r(&s) % 8,
				  payload, len);
		t.blocks = 1;
		add_foot(&f, &t, &blk, 1);
		o = read_bytes(f.p, f.len);
		ck_assert_msg(o.rc < 0, "seed %u: garbage block accepted",
			      seed);
		ck_assert_msg(strstr(o.error, "byte offset"), "seed %u: %s",
			      seed, o.error);
		free(f.p);
	}
}
END_TEST

static uint32_t get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | p[3];
}

/* Recompute the CRC of the section at `at`, as a damaging writer would. */
static void reseal(uint8_t *f, size_t at)
{
	uint32_t len = get_be32(f + at + 4);
	uint32_t crc = vmheap_crc32c(0, f + at, 12);

	put_be32(f + at + 12, vmheap_crc32c(crc, f + at + 16, len));
}

/* A census or an id table needs every field of an object but its
 * references: the shallow cursor gives exactly those, in the same records
 * at the same offsets, with the reference counts. */
START_TEST(shallow_cursor_gives_every_field_but_the_references)
{
	size_t n = sizeof(edge_records) / sizeof(edge_records[0]);
	vmheap_block_cursor *full = NULL, *shallow = NULL;
	struct vmheap_record a, b;
	struct vmheap_block blk;
	uint64_t *many = malloc(100000 * sizeof(*many)), objects = 0;
	vmheap_reader *r;
	struct bytes d;
	int fd, rc;
	vmheap_writer *w = new_writer(&fd, 0);

	ck_assert_ptr_nonnull(many);
	for (size_t k = 0; k < 100000; k++)
		many[k] = k * 7919;
	for (size_t k = 0; k < n; k++)
		add_expected(w, &edge_records[k]);
	/* past the per-record limit: continued in more-references records */
	ck_assert_int_eq(
	    vmheap_writer_add_object(w, 0x5000, 1, 8, 0, many, 100000), 0);
	d = finish_to_bytes(w, fd);
	free(many);

	fd = memfd_with(d.p, d.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "shallow.vmheap"), 0);
	while ((rc = vmheap_reader_next_block(r, &blk)) > 0) {
		open_cursor(&full, &blk);
		open_cursor(&shallow, &blk);
		while ((rc = vmheap_block_cursor_next(full, &a)) > 0) {
			ck_assert_int_eq(
			    vmheap_block_cursor_next_shallow(shallow, &b), 1);
			ck_assert_int_eq(b.type, a.type);
			ck_assert_uint_eq(b.offset, a.offset);
			if (a.type != VMHEAP_RECORD_OBJECT &&
			    a.type != VMHEAP_RECORD_MORE_REFS)
				continue;
			objects += a.type == VMHEAP_RECORD_OBJECT;
			ck_assert_uint_eq(b.u.object.id, a.u.object.id);
			ck_assert_uint_eq(b.u.object.class_id,
					  a.u.object.class_id);
			ck_assert_uint_eq(b.u.object.bytes, a.u.object.bytes);
			ck_assert_uint_eq(b.u.object.kind, a.u.object.kind);
			ck_assert_uint_eq(b.u.object.nrefs, a.u.object.nrefs);
			ck_assert_ptr_null(b.u.object.refs);
		}
		ck_assert_int_eq(rc, 0);
		ck_assert_int_eq(vmheap_block_cursor_next_shallow(shallow, &b),
				 0);
		vmheap_block_cursor_free(full);
		full = NULL;
		vmheap_block_cursor_free(shallow);
		shallow = NULL;
	}
	ck_assert_msg(rc == 0, "%s", vmheap_reader_error(r));
	ck_assert_uint_eq(objects, 8);
	vmheap_reader_free(r);
	close(fd);
	free(d.p);
}
END_TEST

/* How decode_blocks() takes the records out of a block cursor. */
enum decode_mode { DECODE_FULL, DECODE_SHALLOW, DECODE_SHALLOW_BATCH };

/* The next records of `c` the way `mode` says (3 at a time in batches):
 * the count of records in recs[], 0 at the end, or an error code. */
static int next_records(vmheap_block_cursor *c, enum decode_mode mode,
			struct vmheap_record recs[3])
{
	switch (mode) {
	case DECODE_FULL:
		return vmheap_block_cursor_next(c, recs);
	case DECODE_SHALLOW:
		return vmheap_block_cursor_next_shallow(c, recs);
	default:
		return vmheap_block_cursor_next_shallow_batch(c, recs, 3);
	}
}

/*
 * Decode every block of the dump in `b` with block cursors, fully,
 * shallow, or shallow in batches.  Returns the first error (its message
 * in err) or 0, and the records' totals in *t.
 */
static int decode_blocks(const struct bytes *b, enum decode_mode mode,
			 struct vmheap_totals *t, char *err, size_t errsz)
{
	int fd = memfd_with(b->p, b->len), rc;
	vmheap_block_cursor *c = NULL;
	struct vmheap_record recs[3];
	struct vmheap_block blk;
	vmheap_reader *r;

	memset(t, 0, sizeof(*t));
	err[0] = '\0';
	rc = vmheap_reader_open_fd(&r, fd, "blocks.vmheap");
	while (rc == 0 && (rc = vmheap_reader_next_block(r, &blk)) > 0) {
		open_cursor(&c, &blk);
		while ((rc = next_records(c, mode, recs)) > 0)
			for (int i = 0; i < rc; i++)
				vmheap_totals_add_record(t, &recs[i]);
		if (rc < 0)
			snprintf(err, errsz, "%s",
				 vmheap_block_cursor_error(c));
		else
			rc = 0;
	}
	if (rc < 0 && !err[0])
		snprintf(err, errsz, "%s", vmheap_reader_error(r));
	vmheap_block_cursor_free(c);
	c = NULL;
	vmheap_reader_free(r);
	close(fd);
	return rc;
}

START_TEST(damaged_records_behind_valid_checksums_fail_cleanly)
{
	/* Bytes changed inside blocks, CRCs fixed up: the record decoder and
	 * the totals check are all that stand between the damage and the
	 * user.  Under the sanitizers this also proves the decoder never
	 * reads out of bounds. */
	struct bytes b = small_dump();
	size_t blocks[64], nb = 0, errors = 0, at = 8;
	unsigned seed = 3;
	struct vmheap_totals t_full, t_shallow, t_batch;
	char err_full[300], err_shallow[300], err_batch[300];
	int rc_full, rc_shallow, rc_batch;

	while (at + 16 <= b.len && memcmp(b.p + at, "FOOT", 4)) {
		if (!memcmp(b.p + at, "BLCK", 4) && nb < 64)
			blocks[nb++] = at;
		at += 16 + get_be32(b.p + at + 4);
	}
	ck_assert_uint_ge(nb, 2);
	for (int round = 0; round < 3000; round++) {
		size_t blk = blocks[(size_t)rand_r(&seed) % nb];
		uint32_t len = get_be32(b.p + blk + 4);
		size_t i = blk + 16 + (size_t)rand_r(&seed) % len;
		uint8_t old = b.p[i];
		struct outcome o;

		b.p[i] = (uint8_t)rand_r(&seed);
		if (b.p[i] == old)
			b.p[i] ^= 0x80;
		reseal(b.p, blk);
		o = read_bytes(b.p, b.len);
		/* Skipping references finds the same faults in the blocks. */
		rc_full = decode_blocks(&b, DECODE_FULL, &t_full, err_full,
					sizeof(err_full));
		rc_shallow = decode_blocks(&b, DECODE_SHALLOW, &t_shallow,
					   err_shallow, sizeof(err_shallow));
		ck_assert_int_eq(rc_shallow, rc_full);
		ck_assert_str_eq(err_shallow, err_full);
		ck_assert(!memcmp(&t_shallow, &t_full, sizeof(t_full)));
		/* So do batches, with the records before the fault first. */
		rc_batch = decode_blocks(&b, DECODE_SHALLOW_BATCH, &t_batch,
					 err_batch, sizeof(err_batch));
		ck_assert_int_eq(rc_batch, rc_full);
		ck_assert_str_eq(err_batch, err_full);
		ck_assert(!memcmp(&t_batch, &t_full, sizeof(t_full)));
		b.p[i] = old;
		reseal(b.p, blk);
		if (o.rc < 0) {
			errors++;
			ck_assert_msg(strstr(o.error, "byte offset"), "%s",
				      o.error);
		} else {
			/* The change made another consistent dump (a
			 * different class id, say): nothing to catch. */
			ck_assert_int_eq(o.rc, 0);
		}
	}
	/* Most changes hit lengths, tags or counted values. */
	ck_assert_uint_gt(errors, 3000 / 2);
	ck_assert_int_eq(read_bytes(b.p, b.len).rc, 0);
	free(b.p);
}
END_TEST

/* Batches of the shallow cursor are the records it gives one at a time:
 * same types, offsets and fields, split wherever the batch fills. */
START_TEST(shallow_batch_gives_the_records_of_one_at_a_time)
{
	vmheap_block_cursor *one = NULL, *many = NULL;
	struct vmheap_record a, b[5];
	struct vmheap_block blk;
	uint64_t records = 0;
	vmheap_reader *r;
	struct bytes d;
	int fd, rc, n;
	vmheap_writer *w = new_writer(&fd, 4096);

	for (uint64_t k = 0; k < 3000; k++) {
		if (k % 97 == 0)
			ck_assert_int_eq(vmheap_writer_add_class(
					     w, 1000 + k, "Batch", 5, 0, 0),
					 0);
		ck_assert_int_eq(vmheap_writer_add_object(w, 0x1000 + k * 40,
							  k % 300, 40 + k % 7,
							  k % 3, &k, k % 2),
				 0);
	}
	d = finish_to_bytes(w, fd);
	fd = memfd_with(d.p, d.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "batch.vmheap"), 0);
	while ((rc = vmheap_reader_next_block(r, &blk)) > 0) {
		open_cursor(&one, &blk);
		open_cursor(&many, &blk);
		while ((n = vmheap_block_cursor_next_shallow_batch(many, b,
								   5)) > 0) {
			ck_assert_int_le(n, 5);
			for (int i = 0; i < n; i++, records++) {
				ck_assert_int_eq(
				    vmheap_block_cursor_next_shallow(one, &a),
				    1);
				ck_assert_int_eq(b[i].type, a.type);
				ck_assert_uint_eq(b[i].offset, a.offset);
				if (a.type != VMHEAP_RECORD_OBJECT)
					continue;
				ck_assert_uint_eq(b[i].u.object.id,
						  a.u.object.id);
				ck_assert_uint_eq(b[i].u.object.class_id,
						  a.u.object.class_id);
				ck_assert_uint_eq(b[i].u.object.bytes,
						  a.u.object.bytes);
				ck_assert_uint_eq(b[i].u.object.kind,
						  a.u.object.kind);
				ck_assert_uint_eq(b[i].u.object.nrefs,
						  a.u.object.nrefs);
			}
		}
		ck_assert_int_eq(n, 0);
		ck_assert_int_eq(vmheap_block_cursor_next_shallow(one, &a), 0);
		vmheap_block_cursor_free(one);
		one = NULL;
		vmheap_block_cursor_free(many);
		many = NULL;
	}
	ck_assert_msg(rc == 0, "%s", vmheap_reader_error(r));
	ck_assert_uint_eq(records, 3000 + 31);
	vmheap_reader_free(r);
	close(fd);
	free(d.p);
}
END_TEST

START_TEST(footer_totals_that_disagree_with_the_records_are_reported)
{
	struct vmheap_totals t = thing_totals;
	struct bytes f = {0};
	uint64_t blk;
	struct outcome o;

	t.objects = 2;
	add_head(&f, 1, 0, 0);
	blk = add_thing_block(&f, 0);
	add_foot(&f, &t, &blk, 1);
	o = read_bytes(f.p, f.len);
	ck_assert_int_eq(o.rc, VMHEAP_ETOTALS);
	ck_assert_msg(strstr(o.error, "footer says 2 objects, the records "
				      "hold 1"),
		      "%s", o.error);
	free(f.p);

	/* A wrong block index is caught too. */
	memset(&f, 0, sizeof(f));
	add_head(&f, 1, 0, 0);
	blk = add_thing_block(&f, 0) + 1;
	add_foot(&f, &thing_totals, &blk, 1);
	o = read_bytes(f.p, f.len);
	ck_assert_int_eq(o.rc, VMHEAP_ETOTALS);
	free(f.p);
}
END_TEST

START_TEST(a_dropped_block_is_detected_by_the_footer)
{
	struct bytes f = {0};
	uint64_t offs[2];
	struct vmheap_totals t = thing_totals;
	struct outcome o;

	/* The footer lists two blocks; only one is in the file. */
	t.blocks = 2;
	add_head(&f, 1, 0, 0);
	offs[0] = add_thing_block(&f, 0);
	offs[1] = f.len;
	add_foot(&f, &t, offs, 2);
	o = read_bytes(f.p, f.len);
	ck_assert_int_eq(o.rc, VMHEAP_ETOTALS);
	ck_assert_msg(strstr(o.error, "2 blocks"), "%s", o.error);
	free(f.p);
}
END_TEST

START_TEST(data_after_the_end_magic_is_an_error)
{
	struct bytes b = small_dump();
	struct outcome o;

	bytes_add(&b, "x", 1);
	o = read_bytes(b.p, b.len);
	ck_assert_int_eq(o.rc, VMHEAP_EFORMAT);
	ck_assert_msg(strstr(o.error, "after the end magic"), "%s", o.error);
	free(b.p);
}
END_TEST

START_TEST(text_files_and_text_mode_copies_are_not_dumps)
{
	struct bytes b = small_dump();
	struct outcome o = read_bytes("hello, world\n", 13);

	ck_assert_int_eq(o.rc, VMHEAP_EMAGIC);
	ck_assert_msg(strstr(o.error, "not a vmheap dump"), "%s", o.error);
	/* CR LF -> LF, as a text-mode transfer does. */
	memmove(b.p + 4, b.p + 5, b.len - 5);
	b.len--;
	o = read_bytes(b.p, b.len);
	ck_assert_int_eq(o.rc, VMHEAP_EMAGIC);
	ck_assert_msg(strstr(o.error, "text mode"), "%s", o.error);
	free(b.p);
}
END_TEST

START_TEST(missing_file_is_an_error_naming_the_path)
{
	vmheap_reader *r;

	ck_assert_int_eq(vmheap_reader_open_path(&r, "/nonexistent/x.vmheap"),
			 VMHEAP_EIO);
	ck_assert_ptr_nonnull(r);
	ck_assert_msg(strstr(vmheap_reader_error(r), "/nonexistent/x.vmheap: "
						     "cannot open"),
		      "%s", vmheap_reader_error(r));
	vmheap_reader_free(r);
}
END_TEST

/* ------------------------------------------------------- I/O */

static void write_many(vmheap_writer *w, uint64_t n)
{
	uint64_t refs[2];

	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Node", 4, 0, 0), 0);
	for (uint64_t i = 0; i < n; i++) {
		int rc;
		refs[0] = 0x10000 + 40 * (i + 1);
		refs[1] = 0x10000 + 40 * (i / 2);
		rc = vmheap_writer_add_object(w, 0x10000 + 40 * i, 1, 40, 0,
					      refs, 2);
		if (rc)
			return; /* the caller checks finish */
	}
}

START_TEST(writer_streams_through_a_pipe)
{
	enum { N = 50000 }; /* ~700 KB, far more than a pipe buffer */
	int p[2], status;
	pid_t pid;
	struct outcome o;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
		vmheap_writer *w;
		close(p[0]);
		if (vmheap_writer_open(&w, p[1], &opt))
			_exit(2);
		write_many(w, N);
		_exit(vmheap_writer_finish(w) ? 1 : 0);
	}
	close(p[1]);
	o = read_fd(p[0]);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.totals.objects, N);
	ck_assert_uint_eq(o.totals.references, 2 * N);
}
END_TEST

START_TEST(full_disk_is_reported_by_finish_and_is_sticky)
{
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	int fd = open("/dev/full", O_WRONLY);

	ck_assert_int_ge(fd, 0);
	/* A small dump: everything goes out at finish. */
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	write_many(w, 10);
	ck_assert_int_eq(vmheap_writer_finish(w), VMHEAP_ENOSPC);
	ck_assert_msg(strstr(vmheap_writer_error(w), "No space left on device"),
		      "%s", vmheap_writer_error(w));
	ck_assert_msg(strstr(vmheap_writer_error(w), "byte offset 0"), "%s",
		      vmheap_writer_error(w));
	vmheap_writer_free(w);

	/* A larger one: the first block fails; later calls keep failing. */
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	write_many(w, 20000);
	ck_assert_int_eq(vmheap_writer_add_root(w, 0, 0), VMHEAP_ENOSPC);
	ck_assert_int_eq(vmheap_writer_finish(w), VMHEAP_ENOSPC);
	ck_assert_int_eq(vmheap_writer_finish(w), VMHEAP_ENOSPC);
	vmheap_writer_free(w);
	close(fd);
}
END_TEST

START_TEST(file_size_limit_fails_the_dump_and_leaves_a_truncated_file)
{
	char path[] = "/tmp/vmheap-fsize-XXXXXX";
	int fd = mkstemp(path), status;
	pid_t pid;
	vmheap_reader *r;
	struct vmheap_record rec;
	int rc;

	ck_assert_int_ge(fd, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit rl = {100000, 100000};
		struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
		vmheap_writer *w;
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl))
			_exit(3);
		if (vmheap_writer_open(&w, fd, &opt))
			_exit(2);
		write_many(w, 50000);
		rc = vmheap_writer_finish(w);
		if (rc == VMHEAP_ENOSPC &&
		    strstr(vmheap_writer_error(w), "File too large"))
			_exit(0);
		_exit(1);
	}
	close(fd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child status %d", status);
	ck_assert_int_eq(vmheap_reader_open_path(&r, path), 0);
	while ((rc = vmheap_reader_next(r, &rec)) > 0)
		;
	ck_assert_int_eq(rc, VMHEAP_ETRUNCATED);
	ck_assert_msg(strstr(vmheap_reader_error(r), "no footer"), "%s",
		      vmheap_reader_error(r));
	vmheap_reader_free(r);
	unlink(path);
}
END_TEST

START_TEST(unfinished_writer_leaves_a_dump_that_reads_as_truncated)
{
	int fd;
	vmheap_writer *w = new_writer(&fd, 256);
	struct bytes b;
	struct outcome o;

	write_many(w, 1000);
	vmheap_writer_free(w); /* no finish: the VM died, say */
	b = slurp(fd);
	close(fd);
	ck_assert_uint_gt(b.len, 1000);
	o = read_bytes(b.p, b.len);
	ck_assert_int_eq(o.rc, VMHEAP_ETRUNCATED);
	free(b.p);
}
END_TEST

START_TEST(writer_waits_on_a_non_blocking_pipe)
{
	enum { N = 40000 };
	int p[2], status;
	pid_t pid;
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct outcome o;
		struct spec_wait w;
		int queued = 0, size = fcntl(p[0], F_GETPIPE_SZ);

		close(p[1]);
		/* let the pipe fill up first: the writer meets EAGAIN */
		spec_wait_begin(&w, 30000);
		while (size > 0 && ioctl(p[0], FIONREAD, &queued) == 0 &&
		       queued < size)
			if (!spec_wait_next(&w))
				_exit(2);
		o = read_fd(p[0]);
		_exit(o.rc == 0 && o.totals.objects == N ? 0 : 1);
	}
	close(p[0]);
	ck_assert_int_eq(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(vmheap_writer_open(&w, p[1], &opt), 0);
	write_many(w, N);
	ck_assert_msg(vmheap_writer_finish(w) == 0, "%s",
		      vmheap_writer_error(w));
	vmheap_writer_free(w);
	close(p[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the reader: status %d (exit 2: the pipe never filled, "
		      "1: the records differ)",
		      status);
}
END_TEST

START_TEST(closed_pipe_is_an_io_error_naming_the_offset)
{
	int p[2];
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;

	signal(SIGPIPE, SIG_IGN); /* this test runs in its own process */
	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	ck_assert_int_eq(vmheap_writer_open(&w, p[1], &opt), 0);
	write_many(w, 10);
	ck_assert_int_eq(vmheap_writer_finish(w), VMHEAP_EIO);
	ck_assert_msg(strstr(vmheap_writer_error(w),
			     "write failed at byte offset 0: Broken pipe"),
		      "%s", vmheap_writer_error(w));
	vmheap_writer_free(w);
	close(p[1]);
}
END_TEST

/* Bytes the C heap has handed out (small and mmapped chunks). */
static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

START_TEST(writer_memory_does_not_grow_with_the_object_count)
{
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	size_t base, probe, small_use, big_use;
	vmheap_writer *w;
	void *blob;
	int fd = open("/dev/null", O_WRONLY);

	/* Calibrate: does this allocator report through mallinfo2 (ASan's
	 * does not)? */
	probe = heap_in_use();
	blob = malloc(1 << 20);
	ck_assert_ptr_nonnull(blob);
	memset(blob, 1, 1 << 20);
	if (heap_in_use() < probe + (1 << 20)) {
		free(blob);
		close(fd);
		fprintf(stderr, "note: mallinfo2 does not see this allocator; "
				"writer memory not measured\n");
		return;
	}
	free(blob);

	base = heap_in_use();
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	write_many(w, 20000);
	small_use = heap_in_use() - base;
	write_many(w, 400000); /* 20 times more, about 6 MB of dump */
	big_use = heap_in_use() - base;
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	close(fd);
	/* One 64 KiB block buffer (rounded up) plus 8 bytes per block. */
	ck_assert_msg(big_use < 512 * 1024, "writer holds %zu bytes", big_use);
	ck_assert_msg(big_use < small_use + 16 * 1024,
		      "writer grew from %zu to %zu bytes", small_use, big_use);
}
END_TEST

/* --------------------------------------------------- writer rules */

START_TEST(too_long_string_is_refused_and_the_writer_goes_on)
{
	int fd;
	vmheap_writer *w = new_writer(&fd, 0);
	char *big = calloc(1, VMHEAP_MAX_STRING_BYTES + 1);
	struct bytes b;
	struct outcome o;

	ck_assert_int_eq(vmheap_writer_add_class(
			     w, 1, big, VMHEAP_MAX_STRING_BYTES + 1, 0, 0),
			 VMHEAP_ELIMIT);
	ck_assert_int_eq(vmheap_writer_add_object(w, 1, 1, 1, 0, NULL, 3),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(
	    vmheap_writer_add_class(w, 1, big, VMHEAP_MAX_STRING_BYTES, 0, 0),
	    0);
	b = finish_to_bytes(w, fd);
	o = read_bytes(b.p, b.len);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.totals.classes, 1);
	free(b.p);
	free(big);
}
END_TEST

START_TEST(header_over_the_section_limit_is_refused_at_open)
{
	/* 300 kind names of 60,000 bytes: 18 MB of header. */
	enum { KINDS = 300, LEN = 60000 };
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	const char **kinds = calloc(KINDS, sizeof(*kinds));
	char *name = malloc(LEN + 1);
	vmheap_writer *w = (vmheap_writer *)1;
	int fd = open("/dev/null", O_WRONLY);

	memset(name, 'k', LEN);
	name[LEN] = '\0';
	for (int i = 0; i < KINDS; i++)
		kinds[i] = name;
	opt.kind_names = kinds;
	opt.kind_count = KINDS;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), VMHEAP_ELIMIT);
	/* a failed writer that says why */
	ck_assert_ptr_nonnull(w);
	ck_assert_msg(strstr(vmheap_writer_error(w), "header"), "%s",
		      vmheap_writer_error(w));
	vmheap_writer_free(w);
	opt.kind_count = 200; /* 12 MB: fits */
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	close(fd);
	free(name);
	free(kinds);
}
END_TEST

START_TEST(adding_after_finish_is_refused)
{
	int fd;
	vmheap_writer *w = new_writer(&fd, 0);

	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	ck_assert_int_eq(vmheap_writer_add_root(w, 1, 2), VMHEAP_ESTATE);
	ck_assert_int_eq(vmheap_writer_finish(w), VMHEAP_ESTATE);
	vmheap_writer_free(w);
	close(fd);
}
END_TEST

START_TEST(blocks_of_several_megabytes_round_trip)
{
	/* Larger than any buffer the reader starts with. */
	int fd;
	vmheap_writer *w = new_writer(&fd, 6u << 20);
	struct bytes b;
	struct outcome o;

	write_many(w, 500000);
	b = finish_to_bytes(w, fd);
	o = read_bytes(b.p, b.len);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.totals.objects, 500000);
	ck_assert_uint_eq(o.totals.references, 1000000);
	free(b.p);
}
END_TEST

START_TEST(ruby_like_objects_take_few_bytes_each)
{
	enum { N = 20000 };
	int fd;
	vmheap_writer *w = new_writer(&fd, 0);
	struct bytes b;

	write_many(w, N);
	b = finish_to_bytes(w, fd);
	/* Delta coding: 40-byte-apart ids with nearby references. */
	ck_assert_msg(b.len < (size_t)N * 16, "%zu bytes for %d objects", b.len,
		      N);
	free(b.p);
}
END_TEST

/* ----------------------------------------------- blocks on threads */

struct decode_job {
	struct vmheap_block blk;
	struct vmheap_totals t;
	uint64_t id_sum;
	int rc;
};

static void *decode_block(void *arg)
{
	struct decode_job *j = arg;
	vmheap_block_cursor *c = NULL;
	struct vmheap_record rec;

	open_cursor(&c, &j->blk);
	while ((j->rc = vmheap_block_cursor_next(c, &rec)) > 0) {
		vmheap_totals_add_record(&j->t, &rec);
		if (rec.type == VMHEAP_RECORD_OBJECT)
			j->id_sum += rec.u.object.id;
	}
	vmheap_block_cursor_free(c);
	c = NULL;
	return NULL;
}

START_TEST(blocks_decode_independently_on_other_threads)
{
	int fd;
	vmheap_writer *w = new_writer(&fd, 1024);
	struct decode_job *jobs = NULL;
	size_t njobs = 0;
	struct vmheap_block blk;
	struct vmheap_totals sum = {0};
	uint64_t id_sum = 0, want_sum = 0;
	pthread_t *th;
	vmheap_reader *r;
	struct bytes b;
	int rc;

	write_many(w, 5000);
	for (uint64_t i = 0; i < 5000; i++)
		want_sum += 0x10000 + 40 * i;
	b = finish_to_bytes(w, fd);
	fd = memfd_with(b.p, b.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "par.vmheap"), 0);
	while ((rc = vmheap_reader_next_block(r, &blk)) > 0) {
		uint8_t *copy = malloc(blk.length);
		memcpy(copy, blk.data, blk.length);
		jobs = realloc(jobs, (njobs + 1) * sizeof(*jobs));
		memset(&jobs[njobs], 0, sizeof(*jobs));
		jobs[njobs].blk = blk;
		jobs[njobs].blk.data = copy;
		njobs++;
	}
	ck_assert_msg(rc == 0, "%s", vmheap_reader_error(r));
	ck_assert_uint_gt(njobs, 10);
	ck_assert_uint_eq(vmheap_reader_totals(r)->blocks, njobs);
	/* Decode in reverse order, each on its own thread. */
	th = calloc(njobs, sizeof(*th));
	for (size_t i = njobs; i-- > 0;)
		ck_assert_int_eq(
		    pthread_create(&th[i], NULL, decode_block, &jobs[i]), 0);
	for (size_t i = 0; i < njobs; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(jobs[i].rc, 0);
		sum.objects += jobs[i].t.objects;
		sum.references += jobs[i].t.references;
		id_sum += jobs[i].id_sum;
		free((void *)jobs[i].blk.data);
	}
	ck_assert_uint_eq(sum.objects, vmheap_reader_totals(r)->objects);
	ck_assert_uint_eq(sum.references, vmheap_reader_totals(r)->references);
	ck_assert_uint_eq(id_sum, want_sum);
	vmheap_reader_free(r);
	close(fd);
	/* Mixing the two reading modes on one reader is refused. */
	fd = memfd_with(b.p, b.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "mix.vmheap"), 0);
	ck_assert_int_eq(vmheap_reader_next_block(r, &blk), 1);
	{
		struct vmheap_record rec;
		ck_assert_int_eq(vmheap_reader_next(r, &rec), VMHEAP_ESTATE);
	}
	vmheap_reader_free(r);
	close(fd);
	free(th);
	free(jobs);
	free(b.p);
}
END_TEST

START_TEST(block_cursor_reports_a_wrong_record_count)
{
	static const uint8_t rec[] = {0x93, 0x04, 0x01, 0x02}; /* a root */
	struct vmheap_block blk = {
	    .offset = 100, .records = 2, .length = 4, .data = rec};
	vmheap_block_cursor *c = NULL;
	struct vmheap_record r;

	open_cursor(&c, &blk);
	ck_assert_int_eq(vmheap_block_cursor_next(c, &r), 1);
	ck_assert_int_eq(r.type, VMHEAP_RECORD_ROOT);
	ck_assert_uint_eq(r.offset, 116);
	ck_assert_int_eq(vmheap_block_cursor_next(c, &r), VMHEAP_EFORMAT);
	ck_assert_msg(strstr(vmheap_block_cursor_error(c),
			     "at byte offset 120 (block at 100)"),
		      "%s", vmheap_block_cursor_error(c));
	ck_assert_int_eq(vmheap_block_cursor_next(c, &r), VMHEAP_EFORMAT);
	blk.records = 0;
	vmheap_block_cursor_reset(c, &blk);
	ck_assert_int_eq(vmheap_block_cursor_next(c, &r), VMHEAP_EFORMAT);
	ck_assert_msg(strstr(vmheap_block_cursor_error(c),
			     "after its last counted record"),
		      "%s", vmheap_block_cursor_error(c));
	vmheap_block_cursor_free(c);
	c = NULL;
}
END_TEST

/* The hex of FORMAT.md's worked example, between its markers. */
static struct bytes worked_example_from_format_md(void)
{
	struct bytes b = {0};

	b.p = spec_md_hex(spec_src("format/FORMAT.md"), "worked-example",
			  &b.len);
	b.cap = b.len;
	return b;
}

/* ------------------------------------------- typed encoder vs msgpack-c */

/* Integers at every MessagePack encoding boundary, both sides of it. */
static const uint64_t enc_unsigned[] = {
    0,		 1,	      0x7f,	       0x80,	      0xff,
    0x100,	 0xffff,      0x10000,	       0xffffffffu,   0x100000000u,
    UINT64_MAX / 2, UINT64_MAX / 2 + 1, UINT64_MAX - 1, UINT64_MAX,
};
static const int64_t enc_signed[] = {
    0,		     1,		       -1,		  -32,
    -33,	     0x7f,	       0x80,		  -128,
    -129,	     0xff,	       0x100,		  32767,
    32768,	     -32768,	       -32769,		  0xffff,
    0x10000,	     INT32_MAX,	       (int64_t)INT32_MAX + 1, INT32_MIN,
    (int64_t)INT32_MIN - 1, 0xffffffffLL, 0x100000000LL, INT64_MAX,
    INT64_MIN + 1,   INT64_MIN,
};
#define N_UNSIGNED (sizeof(enc_unsigned) / sizeof(enc_unsigned[0]))
#define N_SIGNED (sizeof(enc_signed) / sizeof(enc_signed[0]))

static void assert_same_bytes(const msgpack_sbuffer *ref, const uint8_t *mine,
			      size_t len, const char *what, long long v)
{
	ck_assert_msg(len == ref->size, "%s %lld: %zu bytes, msgpack-c %zu",
		      what, v, len, ref->size);
	ck_assert_msg(!memcmp(mine, ref->data, len),
		      "%s %lld: bytes differ from msgpack-c's", what, v);
}

START_TEST(typed_encoder_stores_each_value_as_msgpack_c_does)
{
	static const uint32_t counts[] = {0, 1, 15, 16, 0xffff, 0x10000,
					  UINT32_MAX};
	msgpack_sbuffer sb;
	msgpack_packer pk;
	uint8_t buf[16];

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	for (size_t i = 0; i < N_UNSIGNED; i++) {
		msgpack_sbuffer_clear(&sb);
		msgpack_pack_uint64(&pk, enc_unsigned[i]);
		assert_same_bytes(&sb, buf,
				  (size_t)(mpw_uint(buf, enc_unsigned[i]) - buf),
				  "uint", (long long)enc_unsigned[i]);
		if (enc_unsigned[i] <= UINT32_MAX) {
			msgpack_sbuffer_clear(&sb);
			msgpack_pack_uint32(&pk, (uint32_t)enc_unsigned[i]);
			assert_same_bytes(
			    &sb, buf,
			    (size_t)(mpw_uint(buf, enc_unsigned[i]) - buf),
			    "uint32", (long long)enc_unsigned[i]);
		}
	}
	for (size_t i = 0; i < N_SIGNED; i++) {
		msgpack_sbuffer_clear(&sb);
		msgpack_pack_int64(&pk, enc_signed[i]);
		assert_same_bytes(&sb, buf,
				  (size_t)(mpw_int(buf, enc_signed[i]) - buf),
				  "int", (long long)enc_signed[i]);
	}
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		msgpack_sbuffer_clear(&sb);
		msgpack_pack_array(&pk, counts[i]);
		assert_same_bytes(&sb, buf,
				  (size_t)(mpw_array(buf, counts[i]) - buf),
				  "array of", (long long)counts[i]);
	}
	msgpack_sbuffer_destroy(&sb);
}
END_TEST

/* An object record as the writer packed it with msgpack-c's packer before
 * the typed encoder replaced it (FORMAT.md's object and more-references
 * records). */
static void pack_object_like_msgpack_c(msgpack_packer *pk, uint64_t *prev,
				       uint64_t id, uint64_t class_id,
				       uint64_t bytes, uint32_t kind,
				       const uint64_t *refs, size_t nrefs)
{
	size_t done = 0;

	do {
		size_t n = nrefs - done;
		if (n > VMHEAP_MAX_REFS_PER_RECORD)
			n = VMHEAP_MAX_REFS_PER_RECORD;
		if (!done) {
			msgpack_pack_array(pk, 6);
			msgpack_pack_uint8(pk, VMHEAP_RECORD_OBJECT);
			msgpack_pack_int64(pk, (int64_t)(id - *prev));
			msgpack_pack_uint64(pk, class_id);
			msgpack_pack_uint64(pk, bytes);
			msgpack_pack_uint32(pk, kind);
		} else {
			msgpack_pack_array(pk, 3);
			msgpack_pack_uint8(pk, VMHEAP_RECORD_MORE_REFS);
			msgpack_pack_int64(pk, (int64_t)(id - *prev));
		}
		msgpack_pack_array(pk, n);
		for (size_t i = 0; i < n; i++)
			msgpack_pack_int64(pk, (int64_t)(refs[done + i] - id));
		*prev = id;
		done += n;
	} while (done < nrefs);
}

START_TEST(writer_object_records_are_the_bytes_msgpack_c_packs)
{
	static const size_t ref_counts[] = {0,	     1,	      15,     16,
					    0xffff, 0x10000, 0x10001,
					    2 * 0x10000 + 5};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	size_t maxrefs = 2 * 0x10000 + 5, records = 0, at;
	uint64_t *refs = malloc(maxrefs * sizeof(*refs));
	uint64_t id = 0, prev = 0;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	vmheap_writer *w;
	struct bytes out;
	int fd = memfd_create("t", 0);

	ck_assert_ptr_nonnull(refs);
	ck_assert_int_ge(fd, 0);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	opt.block_bytes = 8u * 1024 * 1024; /* all records in one block */
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);

	/* Id deltas, reference deltas, classes, sizes and kinds at every
	 * encoding boundary; ids wrap around 2^64 both ways. */
	for (size_t i = 0; i < N_SIGNED * 2; i++) {
		uint64_t cls = enc_unsigned[i % N_UNSIGNED];
		uint64_t size = enc_unsigned[(i + 5) % N_UNSIGNED];
		uint32_t kind = (uint32_t)enc_unsigned[(i + 3) % N_UNSIGNED];
		size_t n = N_SIGNED;

		if (i == N_SIGNED)
			id = UINT64_MAX - 40; /* ids near 2^64 */
		else
			id += (uint64_t)enc_signed[i % N_SIGNED];
		for (size_t j = 0; j < n; j++)
			refs[j] = id + (uint64_t)enc_signed[(i + j) % N_SIGNED];
		ck_assert_int_eq(
		    vmheap_writer_add_object(w, id, cls, size, kind, refs, n),
		    0);
		pack_object_like_msgpack_c(&pk, &prev, id, cls, size, kind,
					   refs, n);
		records++;
	}
	/* Reference counts at the array header boundaries and past the
	 * record's limit (more-references records follow). */
	for (size_t i = 0; i < sizeof(ref_counts) / sizeof(ref_counts[0]);
	     i++) {
		size_t n = ref_counts[i];
		id -= 40; /* a negative delta */
		for (size_t j = 0; j < n; j++)
			refs[j] = id + (uint64_t)enc_signed[j % N_SIGNED] +
				  (uint64_t)j;
		ck_assert_int_eq(vmheap_writer_add_object(w, id, 1, 40, 0,
							  n ? refs : NULL, n),
				 0);
		pack_object_like_msgpack_c(&pk, &prev, id, 1, 40, 0, refs, n);
		records += n > VMHEAP_MAX_REFS_PER_RECORD
			       ? (n + VMHEAP_MAX_REFS_PER_RECORD - 1) /
				     VMHEAP_MAX_REFS_PER_RECORD
			       : 1;
	}
	out = finish_to_bytes(w, fd);

	/* magic, HEAD, then the one block */
	at = 8 + 16 + get_be32(out.p + 8 + 4);
	ck_assert_uint_lt(at + 16, out.len);
	ck_assert(!memcmp(out.p + at, "BLCK", 4));
	ck_assert_uint_eq(get_be32(out.p + at + 8), records);
	ck_assert_uint_eq(get_be32(out.p + at + 4), sb.size);
	for (size_t i = 0; i < sb.size; i++)
		ck_assert_msg(out.p[at + 16 + i] == (uint8_t)sb.data[i],
			      "payload byte %zu: writer 0x%02x, msgpack-c 0x%02x",
			      i, out.p[at + 16 + i], (uint8_t)sb.data[i]);
	ck_assert(!memcmp(out.p + at + 16 + sb.size, "FOOT", 4));
	msgpack_sbuffer_destroy(&sb);
	free(out.p);
	free(refs);
}
END_TEST

START_TEST(worked_example_in_format_md_is_what_the_writer_writes)
{
	static const char *const kinds[] = {"object"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	struct bytes doc = worked_example_from_format_md(), mine, cut;
	uint64_t r1[] = {0x1028}, r2[] = {0x1000, 0x1028};
	vmheap_writer *w;
	struct outcome o;
	int fd = memfd_create("t", 0);

	ck_assert_uint_eq(doc.len, 281);
	opt.vm_name = "sample";
	opt.vm_version = "1.0";
	opt.kind_names = kinds;
	opt.kind_count = 1;
	opt.pid = 1234;
	opt.time = 1700000000;
	opt.pointer_size = 8;
	opt.flags = VMHEAP_FLAG_LIVE_ONLY;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, 1, "vm", 2), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Node", 4, 0, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_object(w, 0x1000, 1, 40, 0, r1, 1),
			 0);
	ck_assert_int_eq(vmheap_writer_add_object(w, 0x1028, 1, 40, 0, r2, 2),
			 0);
	ck_assert_int_eq(vmheap_writer_add_root(w, 1, 0x1000), 0);
	mine = finish_to_bytes(w, fd);
	ck_assert_uint_eq(mine.len, doc.len);
	for (size_t i = 0; i < doc.len; i++)
		ck_assert_msg(mine.p[i] == doc.p[i],
			      "byte 0x%zx: writer 0x%02x, FORMAT.md 0x%02x", i,
			      mine.p[i], doc.p[i]);

	/* The error messages FORMAT.md quotes for it are the real ones. */
	fd = memfd_with(doc.p, 150);
	o = read_fd_named(fd, "heap.vmheap");
	close(fd);
	ck_assert_str_eq(o.error,
			 "heap.vmheap: dump is truncated at byte offset 150: "
			 "part of the 42-byte section 'BLCK' at 113 is "
			 "missing; no footer (the writer did not finish)");
	cut = doc;
	cut.p[0x9c] ^= 0x02;
	fd = memfd_with(cut.p, cut.len);
	o = read_fd_named(fd, "heap.vmheap");
	close(fd);
	ck_assert_str_eq(o.error,
			 "heap.vmheap: block checksum mismatch at byte offset "
			 "129 (section 'BLCK' at 113): stored 0x4da5f59d, "
			 "computed 0x82b80f9f");
	free(doc.p);
	free(mine.p);
}
END_TEST

START_TEST(integers_in_any_msgpack_encoding_decode_the_same)
{
	/* Another writer may not pick the shortest forms; the reader's fast
	 * path must fall back, not misread. */
	struct vmheap_totals t = {
	    .objects = 2, .bytes = 80, .references = 3, .blocks = 1};
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct bytes f = {0};
	uint64_t blk;
	struct vmheap_record rec;
	vmheap_reader *r;
	int fd, rc, n = 0;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	/* [3, +0x1000, 1, 40, 0, [+40]] with every int in 8-byte form, padded
	 * so that the fast path (>= 48 bytes left) sees it. */
	msgpack_pack_array(&pk, 6);
	msgpack_pack_fix_int64(&pk, 3);
	msgpack_pack_fix_int64(&pk, 0x1000);
	msgpack_pack_fix_int64(&pk, 1);
	msgpack_pack_fix_uint64(&pk, 40);
	msgpack_pack_fix_int8(&pk, 0);
	msgpack_pack_array(&pk, 1);
	msgpack_pack_fix_int64(&pk, 40);
	/* [3, +40, 1, 40, 0, [-40, 0]] with int 16 / uint 8 forms. */
	msgpack_pack_array(&pk, 6);
	msgpack_pack_uint8(&pk, 3);
	msgpack_pack_fix_int16(&pk, 40);
	msgpack_pack_fix_uint8(&pk, 1);
	msgpack_pack_fix_int32(&pk, 40);
	msgpack_pack_fix_uint16(&pk, 0);
	msgpack_pack_array(&pk, 2);
	msgpack_pack_fix_int32(&pk, -40);
	msgpack_pack_fix_uint32(&pk, 0);
	for (int i = 0; i < 60;
	     i++) /* unknown records: room for the fast path */
		msgpack_pack_array(&pk, 1), msgpack_pack_uint8(&pk, 77);
	add_head(&f, 1, 0, 0);
	blk = add_section(&f, "BLCK", 62, sb.data, sb.size);
	add_foot(&f, &t, &blk, 1);
	msgpack_sbuffer_destroy(&sb);

	fd = memfd_with(f.p, f.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "ints"), 0);
	while ((rc = vmheap_reader_next(r, &rec)) > 0) {
		uint64_t id = n ? 0x1028 : 0x1000;
		ck_assert_int_eq(rec.type, VMHEAP_RECORD_OBJECT);
		ck_assert_uint_eq(rec.u.object.id, id);
		ck_assert_uint_eq(rec.u.object.class_id, 1);
		ck_assert_uint_eq(rec.u.object.bytes, 40);
		ck_assert_uint_eq(rec.u.object.kind, 0);
		ck_assert_uint_eq(rec.u.object.nrefs, n ? 2 : 1);
		ck_assert_uint_eq(rec.u.object.refs[0], n ? 0x1000 : 0x1028);
		if (n)
			ck_assert_uint_eq(rec.u.object.refs[1], 0x1028);
		n++;
	}
	ck_assert_msg(rc == 0, "%s", vmheap_reader_error(r));
	ck_assert_int_eq(n, 2);
	vmheap_reader_free(r);
	close(fd);
	free(f.p);
}
END_TEST

START_TEST(negative_class_id_is_a_malformed_record)
{
	struct vmheap_totals t = {.objects = 1, .bytes = 40, .blocks = 1};
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct bytes f = {0};
	uint64_t blk;
	struct outcome o;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 6);
	msgpack_pack_uint8(&pk, 3);
	msgpack_pack_int64(&pk, 0x1000);
	msgpack_pack_int64(&pk, -1);
	msgpack_pack_uint8(&pk, 40);
	msgpack_pack_uint8(&pk, 0);
	msgpack_pack_array(&pk, 0);
	for (int i = 0; i < 60; i++) /* room for the fast path */
		msgpack_pack_array(&pk, 1), msgpack_pack_uint8(&pk, 77);
	add_head(&f, 1, 0, 0);
	blk = add_section(&f, "BLCK", 61, sb.data, sb.size);
	add_foot(&f, &t, &blk, 1);
	msgpack_sbuffer_destroy(&sb);
	o = read_bytes(f.p, f.len);
	ck_assert_int_eq(o.rc, VMHEAP_EFORMAT);
	ck_assert_msg(strstr(o.error, "malformed object record: class id"),
		      "%s", o.error);
	free(f.p);
}
END_TEST

START_TEST(strerror_names_every_code)
{
	for (int code = VMHEAP_ESTATE; code <= 0; code++)
		ck_assert_str_ne(vmheap_strerror(code), "unknown error");
	ck_assert_str_eq(vmheap_strerror(1), "unknown error");
	ck_assert_str_eq(vmheap_strerror(VMHEAP_ETRUNCATED),
			 "dump is truncated");
}
END_TEST

/* ----------------------------------- FORMAT.md rules of issue 12 */

/*
 * Each test below builds the bytes of one case that FORMAT.md decides
 * (sections 4 to 7, 12 and 14) and checks that the reader does what the
 * rule says: the error code, what the message names, and the byte offset.
 */

/* A block under construction: its records and their count. */
struct rule_block {
	msgpack_sbuffer sb;
	msgpack_packer pk;
	uint32_t records;
};

static void rule_block_init(struct rule_block *b)
{
	msgpack_sbuffer_init(&b->sb);
	msgpack_packer_init(&b->pk, &b->sb, msgpack_sbuffer_write);
	b->records = 0;
}

/* An object record whose references are all to itself (delta 0). */
static void rule_object(struct rule_block *b, int64_t id_delta,
			uint64_t class_id, uint32_t kind, size_t nrefs)
{
	msgpack_pack_array(&b->pk, 6);
	msgpack_pack_uint8(&b->pk, 3);
	msgpack_pack_int64(&b->pk, id_delta);
	msgpack_pack_uint64(&b->pk, class_id);
	msgpack_pack_uint8(&b->pk, 24);
	msgpack_pack_uint32(&b->pk, kind);
	msgpack_pack_array(&b->pk, nrefs);
	for (size_t i = 0; i < nrefs; i++)
		msgpack_pack_int64(&b->pk, 0);
	b->records++;
}

static void rule_more_refs(struct rule_block *b, int64_t id_delta,
			   size_t nrefs)
{
	msgpack_pack_array(&b->pk, 3);
	msgpack_pack_uint8(&b->pk, 5);
	msgpack_pack_int64(&b->pk, id_delta);
	msgpack_pack_array(&b->pk, nrefs);
	for (size_t i = 0; i < nrefs; i++)
		msgpack_pack_int64(&b->pk, 0);
	b->records++;
}

static void rule_class(struct rule_block *b, uint64_t id, const char *name)
{
	msgpack_pack_array(&b->pk, 5);
	msgpack_pack_uint8(&b->pk, 2);
	msgpack_pack_uint64(&b->pk, id);
	pk_str(&b->pk, name);
	msgpack_pack_uint8(&b->pk, 0);
	msgpack_pack_uint8(&b->pk, 0);
	b->records++;
}

static void rule_string(struct rule_block *b, uint64_t id, const char *text)
{
	msgpack_pack_array(&b->pk, 3);
	msgpack_pack_uint8(&b->pk, 1);
	msgpack_pack_uint64(&b->pk, id);
	pk_str(&b->pk, text);
	b->records++;
}

static void rule_root(struct rule_block *b, uint64_t kind_string_id,
		      uint64_t object_id)
{
	msgpack_pack_array(&b->pk, 3);
	msgpack_pack_uint8(&b->pk, 4);
	msgpack_pack_uint64(&b->pk, kind_string_id);
	msgpack_pack_uint64(&b->pk, object_id);
	b->records++;
}

/* A record of a tag this reader does not know (a newer minor version). */
static void rule_unknown(struct rule_block *b)
{
	msgpack_pack_array(&b->pk, 2);
	msgpack_pack_uint8(&b->pk, 9);
	pk_str(&b->pk, "future");
	b->records++;
}

/* The same with 64 more bytes: room for the fast path before it. */
static void rule_unknown_long(struct rule_block *b)
{
	msgpack_pack_array(&b->pk, 2);
	msgpack_pack_uint8(&b->pk, 9);
	pk_str(&b->pk, "a record of a newer minor version, 64 bytes long"
		       " and a bit more");
	b->records++;
}

/* Magic, the usual hand-built header, the blocks (freed here), a footer
 * with totals `t` (blocks filled in) and the trailer.  blk_at[i] gets the
 * offset of block i. */
static struct bytes rule_dump(struct rule_block *blocks, size_t n,
			      struct vmheap_totals t, uint64_t *blk_at)
{
	struct bytes f = {0};

	ck_assert_uint_le(n, 4);
	add_head(&f, 1, 0, 0);
	for (size_t i = 0; i < n; i++) {
		blk_at[i] = add_section(&f, "BLCK", blocks[i].records,
					blocks[i].sb.data, blocks[i].sb.size);
		msgpack_sbuffer_destroy(&blocks[i].sb);
	}
	t.blocks = n;
	add_foot(&f, &t, blk_at, n);
	return f;
}

/* What a caller sees of one record. */
struct rule_seen {
	enum vmheap_record_type type;
	uint64_t id, offset;
	uint32_t kind;
	char text[32];
};

/* Read the dump with vmheap_reader_next; keep the first `max` records. */
static struct outcome rule_read(const struct bytes *f, struct rule_seen *seen,
				size_t max)
{
	struct outcome o = {0};
	struct vmheap_record rec;
	vmheap_reader *r;
	int fd = memfd_with(f->p, f->len);

	o.rc = vmheap_reader_open_fd(&r, fd, "rule.vmheap");
	while (o.rc >= 0 && (o.rc = vmheap_reader_next(r, &rec)) > 0) {
		if (o.records < max) {
			struct rule_seen *s = &seen[o.records];
			memset(s, 0, sizeof(*s));
			s->type = rec.type;
			s->offset = rec.offset;
			switch (rec.type) {
			case VMHEAP_RECORD_STRING:
				s->id = rec.u.string.id;
				snprintf(s->text, sizeof(s->text), "%.*s",
					 (int)rec.u.string.len,
					 rec.u.string.text);
				break;
			case VMHEAP_RECORD_CLASS:
				s->id = rec.u.klass.id;
				snprintf(s->text, sizeof(s->text), "%.*s",
					 (int)rec.u.klass.name_len,
					 rec.u.klass.name);
				break;
			case VMHEAP_RECORD_ROOT:
				s->id = rec.u.root.kind_string_id;
				break;
			default:
				s->id = rec.u.object.id;
				s->kind = rec.u.object.kind;
				break;
			}
		}
		o.records++;
		vmheap_totals_add_record(&o.totals, &rec);
	}
	snprintf(o.error, sizeof(o.error), "%s", vmheap_reader_error(r));
	if (o.rc < 0) /* sticky */
		ck_assert_int_eq(vmheap_reader_next(r, &rec), o.rc);
	vmheap_reader_free(r);
	close(fd);
	return o;
}

/* The error must contain `want`. */
static void rule_expect_error(const struct outcome *o, int code,
			      const char *want)
{
	ck_assert_msg(o->rc == code, "rc %d (want %d): %s", o->rc, code,
		      o->error);
	ck_assert_msg(strstr(o->error, want), "'%s' lacks '%s'", o->error,
		      want);
	ck_assert_msg(!strncmp(o->error, "rule.vmheap: ", 13) ||
			  !strncmp(o->error, "test.vmheap: ", 13),
		      "the file is not named first: %s", o->error);
}

/* Insert `n` bytes after the payload of the section at `at`; fix its
 * length and CRC (so that only the inserted bytes are wrong). */
static void grow_section(struct bytes *f, size_t at, const void *extra,
			 size_t n)
{
	uint32_t len = get_be32(f->p + at + 4);
	size_t end = at + 16 + len;

	bytes_add(f, extra, n);
	memmove(f->p + end + n, f->p + end, f->len - n - end);
	memcpy(f->p + end, extra, n);
	put_be32(f->p + at + 4, len + (uint32_t)n);
	reseal(f->p, at);
}

START_TEST(header_with_bytes_after_its_map_is_refused_at_their_offset)
{
	struct bytes f = worked_example_from_format_md();
	struct outcome o;

	ck_assert_uint_eq(f.len, 281);
	o = read_bytes(f.p, f.len);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	/* HEAD at 8: its 89-byte map ends at 8 + 16 + 89 = 113. */
	grow_section(&f, 8, "\xc0\xc0", 2);
	o = read_bytes(f.p, f.len);
	rule_expect_error(&o, VMHEAP_EFORMAT,
			  "malformed header at byte offset 113: 2 bytes "
			  "follow its map (section 'HEAD' at 8)");
	free(f.p);
}
END_TEST

START_TEST(footer_with_bytes_after_its_map_is_refused_at_their_offset)
{
	struct bytes f = worked_example_from_format_md();
	struct outcome o;

	/* FOOT at 171: its 78-byte map ends at 171 + 16 + 78 = 265; the
	 * trailer still points to 171. */
	grow_section(&f, 171, "\x00", 1);
	o = read_bytes(f.p, f.len);
	rule_expect_error(&o, VMHEAP_EFORMAT,
			  "malformed footer at byte offset 265: 1 byte "
			  "follows its map (section 'FOOT' at 171)");
	free(f.p);
}
END_TEST

START_TEST(footer_totals_errors_name_the_footers_offset_not_the_end)
{
	struct vmheap_totals t = thing_totals, sums = {0};
	vmheap_block_cursor *c = NULL;
	struct vmheap_record rec;
	struct vmheap_block blk;
	struct bytes f = {0};
	struct outcome o;
	vmheap_reader *r;
	uint64_t at, foot_at;
	char want[128];
	int fd, rc;

	t.objects = 2;
	add_head(&f, 1, 0, 0);
	at = add_thing_block(&f, 0);
	foot_at = f.len;
	add_foot(&f, &t, &at, 1);
	ck_assert_uint_ne(foot_at, f.len); /* the footer is not the end */

	/* Record mode: the reader compares and names the footer. */
	o = read_bytes(f.p, f.len);
	snprintf(want, sizeof(want),
		 "footer says 2 objects, the records hold 1 (footer at byte "
		 "offset %llu)",
		 (unsigned long long)foot_at);
	rule_expect_error(&o, VMHEAP_ETOTALS, want);

	/* Block mode: the caller compares, and the reader tells it where
	 * the footer is (0 until it has been read). */
	fd = memfd_with(f.p, f.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "rule.vmheap"), 0);
	while ((rc = vmheap_reader_next_block(r, &blk)) > 0) {
		ck_assert_uint_eq(vmheap_reader_footer_offset(r), 0);
		open_cursor(&c, &blk);
		while ((rc = vmheap_block_cursor_next(c, &rec)) > 0)
			vmheap_totals_add_record(&sums, &rec);
		ck_assert_int_eq(rc, 0);
	}
	ck_assert_msg(rc == 0, "%s", vmheap_reader_error(r));
	ck_assert_uint_eq(vmheap_reader_totals(r)->objects, 2);
	ck_assert_uint_eq(sums.objects, 1);
	ck_assert_uint_eq(vmheap_reader_footer_offset(r), foot_at);
	ck_assert_uint_eq(vmheap_reader_offset(r), f.len);
	vmheap_block_cursor_free(c);
	c = NULL;
	vmheap_reader_free(r);
	close(fd);
	free(f.p);
}
END_TEST

START_TEST(first_definition_of_a_class_or_string_id_wins_and_repeats_are_read)
{
	struct vmheap_totals t = {.objects = 1,
				  .bytes = 24,
				  .classes = 2,
				  .strings = 2};
	struct rule_block b;
	struct rule_seen seen[8];
	struct bytes f;
	uint64_t at;
	struct outcome o;

	rule_block_init(&b);
	rule_string(&b, 1, "vm");
	rule_string(&b, 1, "again");
	rule_class(&b, 1, "First");
	rule_class(&b, 1, "Second");
	rule_object(&b, 0x500, 1, 0, 0);
	f = rule_dump(&b, 1, t, &at);
	o = rule_read(&f, seen, 8);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	/* Every record reaches the caller in file order, so the caller
	 * keeps the first of each id; the footer counts both. */
	ck_assert_uint_eq(o.records, 5);
	ck_assert_int_eq(seen[0].type, VMHEAP_RECORD_STRING);
	ck_assert_str_eq(seen[0].text, "vm");
	ck_assert_str_eq(seen[1].text, "again");
	ck_assert_uint_lt(seen[0].offset, seen[1].offset);
	ck_assert_int_eq(seen[2].type, VMHEAP_RECORD_CLASS);
	ck_assert_str_eq(seen[2].text, "First");
	ck_assert_str_eq(seen[3].text, "Second");
	ck_assert_uint_eq(seen[2].id, seen[3].id);
	ck_assert_uint_lt(seen[2].offset, seen[3].offset);
	ck_assert_uint_eq(o.totals.classes, 2);
	ck_assert_uint_eq(o.totals.strings, 2);
	free(f.p);
}
END_TEST

START_TEST(class_record_after_objects_of_its_class_is_read)
{
	struct vmheap_totals t = {.objects = 2, .bytes = 48, .classes = 1};
	struct rule_block b[2];
	struct rule_seen seen[4];
	struct bytes f;
	uint64_t at[2];
	struct outcome o;

	rule_block_init(&b[0]);
	rule_object(&b[0], 0x500, 7, 0, 0);
	rule_block_init(&b[1]);
	rule_object(&b[1], 0x600, 7, 0, 0);
	rule_class(&b[1], 7, "Late");
	f = rule_dump(b, 2, t, at);
	o = rule_read(&f, seen, 4);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.records, 3);
	ck_assert_int_eq(seen[0].type, VMHEAP_RECORD_OBJECT);
	ck_assert_int_eq(seen[2].type, VMHEAP_RECORD_CLASS);
	ck_assert_str_eq(seen[2].text, "Late");
	free(f.p);
}
END_TEST

START_TEST(root_whose_kind_string_is_undefined_or_later_is_read)
{
	struct vmheap_totals t = {
	    .objects = 1, .bytes = 24, .roots = 2, .strings = 1};
	struct rule_block b;
	struct rule_seen seen[8];
	struct bytes f;
	uint64_t at;
	struct outcome o;

	rule_block_init(&b);
	rule_object(&b, 0x500, 1, 0, 0);
	rule_root(&b, 42, 0x500); /* no string 42 anywhere */
	rule_root(&b, 3, 0x500);  /* string 3 comes after it */
	rule_string(&b, 3, "late");
	f = rule_dump(&b, 1, t, &at);
	o = rule_read(&f, seen, 8);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.records, 4);
	ck_assert_int_eq(seen[1].type, VMHEAP_RECORD_ROOT);
	ck_assert_uint_eq(seen[1].id, 42);
	ck_assert_uint_eq(o.totals.roots, 2);
	free(f.p);
}
END_TEST

START_TEST(kind_past_the_headers_kinds_is_read_as_that_index)
{
	struct vmheap_totals t = {.objects = 1, .bytes = 24, .classes = 1};
	struct rule_block b;
	struct rule_seen seen[4];
	struct bytes f;
	uint64_t at;
	struct outcome o;
	vmheap_reader *r;
	int fd;

	rule_block_init(&b);
	rule_class(&b, 1, "Thing");
	rule_object(&b, 0x500, 1, 5, 0); /* the header names kind 0 only */
	f = rule_dump(&b, 1, t, &at);
	fd = memfd_with(f.p, f.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "rule.vmheap"), 0);
	ck_assert_uint_eq(vmheap_reader_header(r)->kind_count, 1);
	vmheap_reader_free(r);
	close(fd);
	o = rule_read(&f, seen, 4);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.records, 2);
	ck_assert_uint_eq(seen[1].kind, 5);
	free(f.p);
}
END_TEST

/* A more-references record and what may come between it and its object. */
START_TEST(more_references_must_continue_the_object_right_before_them)
{
	struct vmheap_totals t = {
	    .objects = 2, .bytes = 48, .classes = 1, .references = 61};
	struct rule_block b[3];
	struct rule_seen seen[8];
	struct bytes f;
	uint64_t at[3], rec_at;
	char want[160];
	size_t before;
	struct outcome o;

	/* Allowed: object 0x500 (the reader's fast path: not first in its
	 * block, 48 bytes and more after it) and its more-references; object
	 * 0x600 last in block 0, continued in block 1 after a record of an
	 * unknown tag. */
	rule_block_init(&b[0]);
	rule_class(&b[0], 1, "Thing");
	rule_object(&b[0], 0x500, 1, 0, 0);
	rule_more_refs(&b[0], 0, 60);
	rule_object(&b[0], 0x100, 1, 0, 0);
	rule_block_init(&b[1]);
	rule_unknown(&b[1]);
	rule_more_refs(&b[1], 0x600, 1);
	f = rule_dump(b, 2, t, at);
	o = rule_read(&f, seen, 8);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.records, 5);
	ck_assert_int_eq(seen[4].type, VMHEAP_RECORD_MORE_REFS);
	ck_assert_uint_eq(seen[4].id, 0x600);
	ck_assert_uint_eq(o.totals.references, 61);
	free(f.p);

	/* Allowed: object 0x500, the last known record of block 0, taken
	 * by the fast path, continued two blocks later. */
	t.objects = 1;
	t.bytes = 24;
	t.references = 1;
	rule_block_init(&b[0]);
	rule_class(&b[0], 1, "Thing");
	rule_object(&b[0], 0x500, 1, 0, 0);
	rule_unknown_long(&b[0]);
	rule_block_init(&b[1]);
	rule_unknown(&b[1]);
	rule_block_init(&b[2]);
	rule_more_refs(&b[2], 0x500, 1);
	f = rule_dump(b, 3, t, at);
	o = rule_read(&f, seen, 8);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.records, 3);
	ck_assert_uint_eq(seen[2].id, 0x500);
	free(f.p);

	/* Refused: the wrong object (0x600 after object 0x500, which came
	 * by the fast path). */
	rule_block_init(&b[0]);
	rule_class(&b[0], 1, "Thing");
	rule_object(&b[0], 0x500, 1, 0, 0);
	before = b[0].sb.size;
	rule_more_refs(&b[0], 0x100, 60);
	f = rule_dump(b, 1, t, at);
	rec_at = at[0] + 16 + before;
	snprintf(want, sizeof(want),
		 "more-references record at byte offset %llu continues "
		 "object 0x600, but object 0x500 comes right before it",
		 (unsigned long long)rec_at);
	o = rule_read(&f, seen, 8);
	rule_expect_error(&o, VMHEAP_EFORMAT, want);
	free(f.p);

	/* Refused: a root between the object and its more-references. */
	rule_block_init(&b[0]);
	rule_object(&b[0], 0x500, 1, 0, 0);
	rule_root(&b[0], 1, 0x500);
	before = b[0].sb.size;
	rule_more_refs(&b[0], 0, 1);
	f = rule_dump(b, 1, t, at);
	snprintf(want, sizeof(want),
		 "more-references record at byte offset %llu continues "
		 "object 0x500, but a root record comes right before it",
		 (unsigned long long)(at[0] + 16 + before));
	o = rule_read(&f, seen, 8);
	rule_expect_error(&o, VMHEAP_EFORMAT, want);
	free(f.p);

	/* Refused: no object at all before it. */
	rule_block_init(&b[0]);
	rule_more_refs(&b[0], 0x500, 1);
	f = rule_dump(b, 1, t, at);
	snprintf(want, sizeof(want),
		 "more-references record at byte offset %llu continues "
		 "object 0x500, but no record comes right before it",
		 (unsigned long long)(at[0] + 16));
	o = rule_read(&f, seen, 8);
	rule_expect_error(&o, VMHEAP_EFORMAT, want);
	free(f.p);

	/* Refused across a block boundary: block 1 continues 0x700, block
	 * 0 ended with object 0x500. */
	rule_block_init(&b[0]);
	rule_object(&b[0], 0x500, 1, 0, 0);
	rule_block_init(&b[1]);
	rule_more_refs(&b[1], 0x700, 1);
	f = rule_dump(b, 2, t, at);
	snprintf(want, sizeof(want),
		 "more-references record at byte offset %llu continues "
		 "object 0x700, but object 0x500 comes right before it",
		 (unsigned long long)(at[1] + 16));
	o = rule_read(&f, seen, 8);
	rule_expect_error(&o, VMHEAP_EFORMAT, want);
	free(f.p);
}
END_TEST

START_TEST(count_of_an_unknown_section_is_ignored)
{
	struct bytes f = {0};
	uint64_t blk;
	struct outcome o;

	add_head(&f, 1, 0, 0);
	/* A count no payload could hold, over bytes that are no records. */
	add_section(&f, "XTRA", 0xffffffffu, "\xc1\xc1 not records", 15);
	add_section(&f, "XTR2", 7, "", 0);
	blk = add_thing_block(&f, 0);
	add_foot(&f, &thing_totals, &blk, 1);
	o = read_bytes(f.p, f.len);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	ck_assert_uint_eq(o.records, 3);
	free(f.p);
}
END_TEST

/* `levels` arrays, one inside the other, around a 0. */
static void pack_nested(msgpack_packer *pk, int levels)
{
	for (int i = 0; i < levels; i++)
		msgpack_pack_array(pk, 1);
	msgpack_pack_uint8(pk, 0);
}

START_TEST(skipped_values_may_nest_32_levels_and_no_more)
{
	struct vmheap_totals t = {0};
	struct rule_block b;
	struct bytes f;
	uint64_t at;
	char want[160];
	struct outcome o;

	/* In a record of unknown tag: [9, <levels>]; the record's own array
	 * does not count. */
	for (int levels = 32; levels <= 33; levels++) {
		rule_block_init(&b);
		msgpack_pack_array(&b.pk, 2);
		msgpack_pack_uint8(&b.pk, 9);
		pack_nested(&b.pk, levels);
		b.records = 1;
		f = rule_dump(&b, 1, t, &at);
		o = read_bytes(f.p, f.len);
		if (levels == 32) {
			ck_assert_msg(o.rc == 0, "%s", o.error);
		} else {
			/* the skipped value starts after 0x92 0x09 */
			snprintf(want, sizeof(want),
				 "malformed record of unknown tag 9: values "
				 "nest too deeply at byte offset %llu",
				 (unsigned long long)(at + 16 + 2));
			rule_expect_error(&o, VMHEAP_EFORMAT, want);
		}
		free(f.p);
	}

	/* As the value of an unknown header key: the map does not count. */
	for (int levels = 32; levels <= 33; levels++) {
		msgpack_sbuffer sb;
		msgpack_packer pk;
		size_t value_at;

		memset(&f, 0, sizeof(f));
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		msgpack_pack_map(&pk, 2);
		pk_str(&pk, "version");
		msgpack_pack_array(&pk, 2);
		msgpack_pack_uint8(&pk, 1);
		msgpack_pack_uint8(&pk, 0);
		pk_str(&pk, "deep");
		value_at = sb.size;
		pack_nested(&pk, levels);
		bytes_add(&f, MAGIC, 8);
		add_section(&f, "HEAD", 0, sb.data, sb.size);
		msgpack_sbuffer_destroy(&sb);
		add_foot(&f, &t, NULL, 0);
		o = read_bytes(f.p, f.len);
		if (levels == 32) {
			ck_assert_msg(o.rc == 0, "%s", o.error);
		} else {
			snprintf(want, sizeof(want),
				 "malformed header value at byte offset %llu: "
				 "values nest too deeply",
				 (unsigned long long)(8 + 16 + value_at));
			rule_expect_error(&o, VMHEAP_EFORMAT, want);
		}
		free(f.p);
	}
}
END_TEST

/* FORMAT.md section 14: a damaged tag or count is a checksum mismatch; a
 * damaged length is a checksum mismatch, truncation or a limit error,
 * each naming the section. */
static const struct damaged_length {
	size_t at;	  /* the byte of the worked example flipped */
	uint8_t flip;	  /* the bits flipped */
	int code;	  /* what the reader returns */
	const char *want; /* and its message */
} damaged_lengths[] = {
    /* BLCK at 113: tag 113..116, length 117..120 (42), count
     * 121..124 (5). */
    {113, 0x20, VMHEAP_ECHECKSUM,
     "section checksum mismatch at byte offset 129 (section 'bLCK' "
     "at 113)"},
    {124, 0x01, VMHEAP_ECHECKSUM,
     "block checksum mismatch at byte offset 129 (section 'BLCK' at "
     "113)"},
    /* length 106: still inside the file */
    {120, 0x40, VMHEAP_ECHECKSUM,
     "block checksum mismatch at byte offset 129 (section 'BLCK' at "
     "113)"},
    /* length 298: past the end of the 281-byte file */
    {119, 0x01, VMHEAP_ETRUNCATED,
     "dump is truncated at byte offset 281: part of the 298-byte "
     "section 'BLCK' at 113 is missing"},
    /* length 33554474: above the 16 MiB limit */
    {117, 0x02, VMHEAP_ELIMIT,
     "section 'BLCK' at byte offset 113 declares 33554474 payload "
     "bytes"},
};

/* One row of damaged_lengths per run (tcase_add_loop_test): the flipped
 * byte gives its error; flipped back, the example reads again. */
START_TEST(damaged_section_length_reads_as_checksum_truncation_or_limit)
{
	const struct damaged_length *d = &damaged_lengths[_i];
	struct bytes f = worked_example_from_format_md();
	struct outcome o;

	f.p[d->at] ^= d->flip;
	o = read_bytes(f.p, f.len);
	rule_expect_error(&o, d->code, d->want);
	f.p[d->at] ^= d->flip;
	o = read_bytes(f.p, f.len);
	ck_assert_msg(o.rc == 0, "%s", o.error);
	free(f.p);
}
END_TEST

/* The rules FORMAT.md gained in issue 12, one test each. */
static void add_format_rule_tests(Suite *s)
{
	TCase *tc = tcase_create("format rules");

	tcase_set_timeout(tc, 60);
	tcase_add_test(
	    tc, header_with_bytes_after_its_map_is_refused_at_their_offset);
	tcase_add_test(
	    tc, footer_with_bytes_after_its_map_is_refused_at_their_offset);
	tcase_add_test(
	    tc, footer_totals_errors_name_the_footers_offset_not_the_end);
	tcase_add_test(
	    tc,
	    first_definition_of_a_class_or_string_id_wins_and_repeats_are_read);
	tcase_add_test(tc, class_record_after_objects_of_its_class_is_read);
	tcase_add_test(tc, root_whose_kind_string_is_undefined_or_later_is_read);
	tcase_add_test(tc, kind_past_the_headers_kinds_is_read_as_that_index);
	tcase_add_test(
	    tc, more_references_must_continue_the_object_right_before_them);
	tcase_add_test(tc, count_of_an_unknown_section_is_ignored);
	tcase_add_test(tc, skipped_values_may_nest_32_levels_and_no_more);
	tcase_add_loop_test(
	    tc, damaged_section_length_reads_as_checksum_truncation_or_limit, 0,
	    (int)(sizeof(damaged_lengths) / sizeof(*damaged_lengths)));
	suite_add_tcase(s, tc);
}

/* ------------------------------------------- names and sites (1.1) */

/* FORMAT.md section 16's example, written with the public calls. */
static struct bytes write_names_example(void)
{
	static const char *const kinds[] = {"object"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	uint64_t r1[] = {0x1028}, r2[] = {0x1000, 0x1028};
	int64_t n1[] = {2}, n2[] = {vmheap_edge_name_index(0),
				    vmheap_edge_name_index(1)};
	vmheap_writer *w;
	int fd = memfd_create("t", 0);

	opt.vm_name = "sample";
	opt.vm_version = "1.0";
	opt.kind_names = kinds;
	opt.kind_count = 1;
	opt.pid = 1234;
	opt.time_ms = 1700000000250;
	opt.pointer_size = 8;
	opt.flags = VMHEAP_FLAG_LIVE_ONLY;
	opt.edge_names = 1;
	opt.sites = 1;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, 1, "vm", 2), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, 2, "@next", 5), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, 3, "$head", 5), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Node", 4, 0, 0), 0);
	ck_assert_int_eq(
	    vmheap_writer_add_site(w, 1, "app.rb", 6, 7, "build", 5), 0);
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x1000, 1, 40, 0,
							r1, n1, 1, 1),
			 0);
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x1028, 1, 40, 0,
							r2, n2, 2, 0),
			 0);
	ck_assert_int_eq(vmheap_writer_add_root_named(w, 1, 0x1000, 3), 0);
	return finish_to_bytes(w, fd);
}

START_TEST(names_example_in_format_md_is_what_the_writer_writes)
{
	struct bytes doc, mine = write_names_example();
	struct vmheap_record rec;
	vmheap_reader *r;
	int fd;

	doc.p = spec_md_hex(spec_src("format/FORMAT.md"), "names-example",
			    &doc.len);
	ck_assert_uint_eq(doc.len, 348);
	ck_assert_uint_eq(mine.len, doc.len);
	for (size_t i = 0; i < doc.len; i++)
		ck_assert_msg(mine.p[i] == doc.p[i],
			      "byte 0x%zx: writer 0x%02x, FORMAT.md 0x%02x", i,
			      mine.p[i], doc.p[i]);

	/* What a reader gets back. */
	fd = memfd_with(mine.p, mine.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "names.vmheap"), 0);
	ck_assert_uint_eq(vmheap_reader_header(r)->minor, 1);
	ck_assert_int_eq(vmheap_reader_header(r)->time, 1700000000);
	ck_assert_int_eq(vmheap_reader_header(r)->time_ms, 1700000000250);
	for (int i = 0; i < 5; i++) /* 3 strings, a class, the site */
		ck_assert_int_eq(vmheap_reader_next(r, &rec), 1);
	ck_assert_int_eq(rec.type, VMHEAP_RECORD_SITE);
	ck_assert_uint_eq(rec.u.site.id, 1);
	ck_assert_int_eq(rec.u.site.file_len, 6);
	ck_assert(!memcmp(rec.u.site.file, "app.rb", 6));
	ck_assert_uint_eq(rec.u.site.line, 7);
	ck_assert(!memcmp(rec.u.site.method, "build", 5));
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.u.object.id, 0x1000);
	ck_assert_uint_eq(rec.u.object.site, 1);
	ck_assert_ptr_nonnull(rec.u.object.names);
	ck_assert_int_eq(rec.u.object.names[0], 2);
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.u.object.id, 0x1028);
	ck_assert_uint_eq(rec.u.object.site, 0);
	ck_assert(vmheap_edge_name_is_index(rec.u.object.names[0]));
	ck_assert_uint_eq(vmheap_edge_name_index_of(rec.u.object.names[0]), 0);
	ck_assert_uint_eq(vmheap_edge_name_index_of(rec.u.object.names[1]), 1);
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 1);
	ck_assert_int_eq(rec.type, VMHEAP_RECORD_ROOT);
	ck_assert_uint_eq(rec.u.root.name_string_id, 3);
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 0);
	ck_assert_uint_eq(vmheap_reader_totals(r)->sites, 1);
	vmheap_reader_free(r);
	close(fd);
	free(mine.p);
	free(doc.p);
}
END_TEST

START_TEST(names_and_sites_need_their_writer_options)
{
	uint64_t ref = 0x1000;
	int64_t name = 2;
	int fd;
	vmheap_writer *w = new_writer(&fd, 0);
	struct bytes b;
	vmheap_reader *r;

	/* Each is refused, and the writer goes on. */
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x1000, 1, 8, 0,
							&ref, &name, 1, 0),
			 VMHEAP_EINVAL);
	ck_assert_msg(strstr(vmheap_writer_error(w), "edge_names"), "%s",
		      vmheap_writer_error(w));
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x1000, 1, 8, 0,
							&ref, NULL, 1, 4),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(vmheap_writer_add_root_named(w, 1, 0x1000, 2),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(vmheap_writer_add_site(w, 1, "a.rb", 4, 1, "", 0),
			 VMHEAP_EINVAL);
	/* All-zero names are no names: a plain object record. */
	name = 0;
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x1000, 1, 8, 0,
							&ref, NULL, 1, 0),
			 0);
	b = finish_to_bytes(w, fd);
	fd = memfd_with(b.p, b.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "d"), 0);
	/* Without names or sites the dump is a 1.0 dump. */
	ck_assert_uint_eq(vmheap_reader_header(r)->minor, 0);
	vmheap_reader_free(r);
	close(fd);
	free(b.p);
}
END_TEST

START_TEST(names_continue_across_more_references_records)
{
	enum { N = 70000 };
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	uint64_t *refs = malloc(N * sizeof(*refs));
	int64_t *names = calloc(N, sizeof(*names));
	struct vmheap_record rec;
	vmheap_writer *w;
	vmheap_reader *r;
	struct bytes b;
	size_t got = 0, named = 0;
	int fd = memfd_create("t", 0), rc;

	/* Element indices in the first record, string names past it. */
	for (size_t i = 0; i < N; i++) {
		refs[i] = 0x100000 + 8 * i;
		if (i < 100)
			names[i] = vmheap_edge_name_index(i);
		else if (i >= 65536 && i % 3 == 0)
			names[i] = 1;
	}
	opt.edge_names = 1;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	ck_assert_int_eq(vmheap_writer_add_string(w, 1, "@x", 2), 0);
	ck_assert_int_eq(vmheap_writer_add_object_named(w, 0x1000, 1, 8, 0,
							refs, names, N, 0),
			 0);
	b = finish_to_bytes(w, fd);
	fd = memfd_with(b.p, b.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "d"), 0);
	ck_assert_uint_eq(vmheap_reader_header(r)->minor, 1);
	while ((rc = vmheap_reader_next(r, &rec)) > 0) {
		if (rec.type != VMHEAP_RECORD_OBJECT &&
		    rec.type != VMHEAP_RECORD_MORE_REFS)
			continue;
		ck_assert_ptr_nonnull(rec.u.object.names);
		for (size_t i = 0; i < rec.u.object.nrefs; i++, got++) {
			ck_assert_uint_eq(rec.u.object.refs[i], refs[got]);
			ck_assert_int_eq(rec.u.object.names[i], names[got]);
			named += rec.u.object.names[i] != 0;
		}
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(got, N);
	ck_assert_uint_eq(named, 100 + (N - 65536 + 2) / 3);
	vmheap_reader_free(r);
	close(fd);
	free(b.p);
	free(refs);
	free(names);
}
END_TEST

/* Patch byte `at` of a names-example copy, reseal its block, read it. */
static struct outcome names_example_with(size_t at, uint8_t v)
{
	struct bytes b = write_names_example();
	struct outcome o;

	b.p[at] = v;
	reseal(b.p, 0x82);
	o = read_bytes(b.p, b.len);
	free(b.p);
	return o;
}

START_TEST(bad_names_are_refused_with_their_offset)
{
	/* The second object's names array (at 0xdc, FORMAT.md section 16)
	 * says 1 element for its 2 references. */
	struct outcome o = names_example_with(0xdc, 0x91);

	ck_assert_int_eq(o.rc, VMHEAP_EFORMAT);
	ck_assert_msg(strstr(o.error, "1 names for 2 references at byte "
				      "offset 220"),
		      "%s", o.error);
	/* A name that is neither an integer nor nil. */
	o = names_example_with(0xdd, 0xa0);
	ck_assert_int_eq(o.rc, VMHEAP_EFORMAT);
	ck_assert_msg(strstr(o.error, "name: ") &&
			  strstr(o.error, "byte offset"),
		      "%s", o.error);
	/* The root's name is not a uint. */
	o = names_example_with(0xe5, 0xff);
	ck_assert_int_eq(o.rc, VMHEAP_EFORMAT);
	ck_assert_msg(strstr(o.error, "root record: name string id"), "%s",
		      o.error);
}
END_TEST

START_TEST(time_ms_is_written_only_when_it_is_not_whole_seconds)
{
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	vmheap_reader *r;
	struct bytes b;
	int fd = memfd_create("t", 0);
	struct timespec before;

	/* No time given: the clock, with its milliseconds. */
	clock_gettime(CLOCK_REALTIME, &before);
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	b = finish_to_bytes(w, fd);
	fd = memfd_with(b.p, b.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "d"), 0);
	ck_assert_int_ge(vmheap_reader_header(r)->time_ms,
			 (int64_t)before.tv_sec * 1000 +
			     before.tv_nsec / 1000000);
	ck_assert_int_eq(vmheap_reader_header(r)->time,
			 vmheap_reader_header(r)->time_ms / 1000);
	vmheap_reader_free(r);
	close(fd);
	free(b.p);

	/* Whole seconds: no key, and the reader gives time * 1000. */
	fd = memfd_create("t", 0);
	opt.time = 1700000000;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	b = finish_to_bytes(w, fd);
	ck_assert_ptr_null(memmem(b.p, b.len, "time_ms", 7));
	fd = memfd_with(b.p, b.len);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "d"), 0);
	ck_assert_int_eq(vmheap_reader_header(r)->time_ms, 1700000000000);
	vmheap_reader_free(r);
	close(fd);
	free(b.p);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("format");
	TCase *tc;

	tc = spec_tcase(s, "crc32c", 120);
	tcase_add_test(tc, crc32c_of_123456789_is_the_castagnoli_check_value);
	tcase_add_test(tc, crc32c_instruction_and_table_agree_on_every_length_and_alignment);
	tcase_add_test(tc, crc32c_instruction_and_table_agree_on_long_inputs);

	tc = spec_tcase(s, "round trips", 120);
	tcase_add_test(tc, every_record_type_round_trips_with_edge_values);
	tcase_add_test(tc, array_grow_doubles_and_keeps_the_contents);
	tcase_add_test(tc, totals_add_record_counts_each_record_type_like_the_footer);
	tcase_add_test(tc, edge_values_round_trip_with_one_record_per_block);
	tcase_add_test(tc, object_with_100000_references_round_trips);
	tcase_add_test(tc, dump_without_records_is_complete);
	tcase_add_test(tc, header_defaults_fill_pid_time_and_pointer_size);

	tc = spec_tcase(s, "names and sites", 120);
	tcase_add_test(tc, names_example_in_format_md_is_what_the_writer_writes);
	tcase_add_test(tc, names_and_sites_need_their_writer_options);
	tcase_add_test(tc, names_continue_across_more_references_records);
	tcase_add_test(tc, bad_names_are_refused_with_their_offset);
	tcase_add_test(tc, time_ms_is_written_only_when_it_is_not_whole_seconds);

	tc = spec_tcase(s, "forward compatibility", 120);
	tcase_add_test(tc, unknown_record_tags_and_extra_fields_are_skipped);
	tcase_add_test(tc, unknown_section_is_skipped_but_its_checksum_is_checked);
	tcase_add_test(tc, newer_minor_version_is_read);
	tcase_add_test(tc, newer_major_version_is_refused);

	tc = spec_tcase(s, "damage", 120);
	tcase_add_test(tc, every_truncation_of_a_small_dump_is_reported_with_its_offset);
	tcase_add_test(tc, every_single_bit_flip_anywhere_in_a_dump_is_detected);
	tcase_add_test(tc, bit_flip_in_a_block_payload_is_a_checksum_error_naming_the_block);
	tcase_add_test(tc, reader_fed_random_bytes_fails_cleanly);
	tcase_add_test(tc, random_block_payloads_with_valid_checksums_fail_cleanly);
	tcase_add_test(tc, damaged_records_behind_valid_checksums_fail_cleanly);
	tcase_add_test(tc, shallow_cursor_gives_every_field_but_the_references);
	tcase_add_test(tc, footer_totals_that_disagree_with_the_records_are_reported);
	tcase_add_test(tc, a_dropped_block_is_detected_by_the_footer);
	tcase_add_test(tc, data_after_the_end_magic_is_an_error);
	tcase_add_test(tc, text_files_and_text_mode_copies_are_not_dumps);
	tcase_add_test(tc, missing_file_is_an_error_naming_the_path);

	tc = spec_tcase(s, "I/O", 120);
	tcase_add_test(tc, writer_streams_through_a_pipe);
	tcase_add_test(tc, full_disk_is_reported_by_finish_and_is_sticky);
	tcase_add_test(tc, file_size_limit_fails_the_dump_and_leaves_a_truncated_file);
	tcase_add_test(tc, unfinished_writer_leaves_a_dump_that_reads_as_truncated);
	tcase_add_test(tc, writer_waits_on_a_non_blocking_pipe);
	tcase_add_test(tc, closed_pipe_is_an_io_error_naming_the_offset);
	tcase_add_test(tc, writer_memory_does_not_grow_with_the_object_count);

	tc = spec_tcase(s, "writer rules", 120);
	tcase_add_test(tc, too_long_string_is_refused_and_the_writer_goes_on);
	tcase_add_test(tc, header_over_the_section_limit_is_refused_at_open);
	tcase_add_test(tc, adding_after_finish_is_refused);
	tcase_add_test(tc, blocks_of_several_megabytes_round_trip);
	tcase_add_test(tc, ruby_like_objects_take_few_bytes_each);

	tc = spec_tcase(s, "blocks on threads", 120);
	tcase_add_test(tc, blocks_decode_independently_on_other_threads);
	tcase_add_test(tc, block_cursor_reports_a_wrong_record_count);
	tcase_add_test(tc, shallow_batch_gives_the_records_of_one_at_a_time);

	tc = spec_tcase(s, "encoding", 120);
	tcase_add_test(tc, worked_example_in_format_md_is_what_the_writer_writes);
	tcase_add_test(tc, integers_in_any_msgpack_encoding_decode_the_same);
	tcase_add_test(tc, typed_encoder_stores_each_value_as_msgpack_c_does);
	tcase_add_test(tc, writer_object_records_are_the_bytes_msgpack_c_packs);
	tcase_add_test(tc, negative_class_id_is_a_malformed_record);

	tc = spec_tcase(s, "errors", 120);
	tcase_add_test(tc, strerror_names_every_code);
	add_format_rule_tests(s);
	return s;
}
