/*
 * native_format_test.c - the native section of the dump format (FORMAT.md
 * section 15): the worked example is what the writer writes, byte for
 * byte, and what the reader reads back; the writer's rules; the
 * decoder's errors.  Part of the native suite.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmheap.h"
#include "format-internal.h" /* vmheap_native_decode */
#include "lib/vmheap_spec.h"

struct buf {
	uint8_t *p;
	size_t len;
};

/* The hex between FORMAT.md's native-example markers. */
static struct buf example_from_format_md(void)
{
	struct buf b;

	b.p = spec_md_hex(spec_src("format/FORMAT.md"), "native-example",
			  &b.len);
	return b;
}

static const uint8_t example_id[4] = {0xde, 0xad, 0xbe, 0xef};

/* Write FORMAT.md's example into a memfd; returns it, rewound. */
static int write_example(int native, int *add_rc)
{
	struct vmheap_writer_options o = VMHEAP_WRITER_OPTIONS_INIT;
	struct vmheap_dump_module m = {"/bin/app", 8, example_id, 4,
				       0x555555554000ull};
	struct vmheap_dump_frame f[2] = {{0, 0x1139},
					 {VMHEAP_NO_MODULE, 0x7f0000001000ull}};
	struct vmheap_dump_stack s = {2048, 2, 3, 1, f, 2, NULL, 0, 0};
	vmheap_writer *w;
	int fd = memfd_create("native", 0);

	o.vm_name = "app";
	o.vm_version = "1";
	o.pid = 1234;
	o.time = 1700000000;
	o.pointer_size = 8;
	o.native = native;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &o), 0);
	*add_rc = vmheap_writer_add_native(w, &m, 1, &s, 1);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

START_TEST(native_example_in_format_md_is_what_the_writer_writes)
{
	struct buf doc = example_from_format_md();
	uint8_t mine[4096];
	int rc, fd = write_example(1, &rc);

	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(doc.len, 290);
	ck_assert_int_eq(read(fd, mine, sizeof mine), 290);
	for (size_t i = 0; i < doc.len; i++)
		ck_assert_msg(mine[i] == doc.p[i],
			      "byte 0x%zx: writer 0x%02x, FORMAT.md 0x%02x", i,
			      mine[i], doc.p[i]);

	/* Read back: a complete 1.1 dump with one site. */
	lseek(fd, 0, SEEK_SET);
	vmheap_reader *r;
	struct vmheap_record rec;
	struct vmheap_native *n;
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "native.vmheap"), 0);
	ck_assert_uint_eq(vmheap_reader_header(r)->minor, 1);
	ck_assert_int_eq(vmheap_reader_native(r, &n), VMHEAP_ESTATE);
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 0);
	ck_assert_int_eq(vmheap_reader_native(r, &n), 0);
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->offset, 0x65);
	ck_assert_uint_eq(n->nmodules, 1);
	ck_assert_uint_eq(n->modules[0].path_len, 8);
	ck_assert(memcmp(n->modules[0].path, "/bin/app", 8) == 0);
	ck_assert_uint_eq(n->modules[0].build_id_len, 4);
	ck_assert(memcmp(n->modules[0].build_id, example_id, 4) == 0);
	ck_assert_uint_eq(n->modules[0].base, 0x555555554000ull);
	ck_assert_uint_eq(n->nstacks, 1);
	ck_assert_uint_eq(n->stacks[0].live_bytes, 2048);
	ck_assert_uint_eq(n->stacks[0].live_count, 2);
	ck_assert_uint_eq(n->stacks[0].allocs, 3);
	ck_assert_uint_eq(n->stacks[0].frees, 1);
	ck_assert_uint_eq(n->stacks[0].depth, 2);
	ck_assert_uint_eq(n->stacks[0].frames[0].module, 0);
	ck_assert_uint_eq(n->stacks[0].frames[0].offset, 0x1139);
	ck_assert_uint_eq(n->stacks[0].frames[1].module, VMHEAP_NO_MODULE);
	ck_assert_uint_eq(n->stacks[0].frames[1].offset, 0x7f0000001000ull);
	vmheap_native_free(n);
	vmheap_reader_free(r);
	close(fd);
	free(doc.p);
}
END_TEST

/* FORMAT.md's site with the VM's location (a Ruby file and line) is what
 * the writer writes for such a site, and the reader reads it back; the
 * site without one in the same section stays an array of 5. */
START_TEST(native_site_with_vm_location_in_format_md)
{
	size_t len;
	uint8_t *doc = spec_md_hex(spec_src("format/FORMAT.md"),
				   "native-vm-site", &len);
	struct vmheap_writer_options o = VMHEAP_WRITER_OPTIONS_INIT;
	struct vmheap_dump_module m = {"/bin/app", 8, example_id, 4,
				       0x555555554000ull};
	struct vmheap_dump_frame f[1] = {{0, 0x1139}};
	struct vmheap_dump_stack s[2] = {
	    {1024, 1, 1, 0, f, 1, "a.rb", 4, 12},
	    {512, 1, 1, 0, f, 1, NULL, 0, 0},
	};
	vmheap_writer *w;
	int fd = memfd_create("native", 0);
	uint8_t mine[4096];

	ck_assert_uint_eq(len, 18);
	o.vm_name = "app";
	o.vm_version = "1";
	o.pointer_size = 8;
	o.native = 1;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &o), 0);
	ck_assert_int_eq(vmheap_writer_add_native(w, &m, 1, s, 2), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	ssize_t got = pread(fd, mine, sizeof mine, 0);
	ck_assert_int_gt(got, 0);
	uint8_t *at = memmem(mine, (size_t)got, doc, len);
	ck_assert_msg(at != NULL, "the writer's section lacks FORMAT.md's site");
	/* The next site: an array of 5, its frames, no location. */
	static const uint8_t plain[] = {0x95, 0xcd, 0x02, 0x00, 0x01, 0x01,
					0x00, 0x92, 0x00, 0xcd, 0x11, 0x39};
	ck_assert(memcmp(at + len, plain, sizeof plain) == 0);

	vmheap_reader *r;
	struct vmheap_record rec;
	struct vmheap_native *n;
	lseek(fd, 0, SEEK_SET);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "vm-site.vmheap"), 0);
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 0);
	ck_assert_int_eq(vmheap_reader_native(r, &n), 0);
	ck_assert_ptr_nonnull(n);
	ck_assert_uint_eq(n->nstacks, 2);
	ck_assert_uint_eq(n->stacks[0].vm_file_len, 4);
	ck_assert(memcmp(n->stacks[0].vm_file, "a.rb", 4) == 0);
	ck_assert_uint_eq(n->stacks[0].vm_line, 12);
	ck_assert_uint_eq(n->stacks[0].live_bytes, 1024);
	ck_assert_uint_eq(n->stacks[0].frames[0].offset, 0x1139);
	ck_assert_ptr_null(n->stacks[1].vm_file);
	ck_assert_uint_eq(n->stacks[1].live_bytes, 512);
	vmheap_native_free(n);
	vmheap_reader_free(r);
	close(fd);
	free(doc);
}
END_TEST

/* The leaks key of FORMAT.md, written byte for byte at the payload's end
 * and read back; a count of leak elements that is not the sites' is
 * refused with its offset. */
START_TEST(native_leaks_in_format_md)
{
	size_t len;
	uint8_t *doc = spec_md_hex(spec_src("format/FORMAT.md"), "native-leaks",
				   &len);
	struct vmheap_writer_options o = VMHEAP_WRITER_OPTIONS_INIT;
	struct vmheap_dump_module m = {"/bin/app", 8, example_id, 4,
				       0x555555554000ull};
	struct vmheap_dump_frame f[1] = {{0, 0x1139}};
	struct vmheap_dump_stack s[1] = {{176, 3, 3, 0, f, 1, NULL, 0, 0}};
	struct vmheap_dump_leaks l[1] = {{1, 48, 0, 0, 0, 0, 2, 128}};
	struct vmheap_dump_leak_scan scan = {l, 3, 4096, 1, 8192, 1000, 65536};
	vmheap_writer *w;
	int fd = memfd_create("native", 0);
	uint8_t mine[4096];

	ck_assert_uint_eq(len, 110);
	o.vm_name = "app";
	o.vm_version = "1";
	o.pointer_size = 8;
	o.native = 1;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &o), 0);
	ck_assert_int_eq(vmheap_writer_add_native_leaks(w, &m, 1, s, 1, &scan), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	ssize_t got = pread(fd, mine, sizeof mine, 0);
	ck_assert_int_gt(got, 0);
	uint8_t *at = memmem(mine, (size_t)got, doc, len);
	ck_assert_msg(at != NULL, "the writer's section lacks FORMAT.md's leaks");
	/* at the payload's end: the footer's tag follows (sections are
	 * followed by the next block's or the footer's header) */
	ck_assert(memcmp(at + len, "FOOT", 4) == 0);
	/* the map has 3 keys: 83 then "modules" */
	static const uint8_t map3[] = {0x83, 0xa7, 'm', 'o', 'd', 'u', 'l', 'e', 's'};
	ck_assert_ptr_nonnull(memmem(mine, (size_t)got, map3, sizeof map3));

	vmheap_reader *r;
	struct vmheap_record rec;
	struct vmheap_native *n;
	lseek(fd, 0, SEEK_SET);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "leaks.vmheap"), 0);
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 0);
	ck_assert_int_eq(vmheap_reader_native(r, &n), 0);
	ck_assert_ptr_nonnull(n);
	ck_assert_ptr_nonnull(n->leaks);
	ck_assert_uint_eq(n->leaks->blocks, 3);
	ck_assert_uint_eq(n->leaks->root_bytes, 4096);
	ck_assert_uint_eq(n->leaks->skipped_mappings, 1);
	ck_assert_uint_eq(n->leaks->skipped_bytes, 8192);
	ck_assert_uint_eq(n->leaks->scan_ns, 1000);
	ck_assert_uint_eq(n->leaks->memory_bytes, 65536);
	ck_assert(memcmp(&n->leaks->stacks[0], &l[0], sizeof l[0]) == 0);
	vmheap_native_free(n);
	vmheap_reader_free(r);

	/* Two sites, one leak element: malformed, at the section. */
	static const uint8_t bad[] = {
	    0x83, 0xa7, 'm', 'o', 'd', 'u', 'l', 'e', 's', 0x90,
	    0xa5, 's', 'i', 't', 'e', 's', 0x92,
	    0x95, 0, 0, 0, 0, 0x90, 0x95, 0, 0, 0, 0, 0x90,
	    0xa5, 'l', 'e', 'a', 'k', 's', 0x81, 0xa5, 's', 'i', 't', 'e', 's',
	    0x91, 0x98, 0, 0, 0, 0, 0, 0, 0, 0};
	char err[256];
	ck_assert_int_eq(vmheap_native_decode(bad, sizeof bad, 1000, &n, err,
					      sizeof err),
			 VMHEAP_EFORMAT);
	ck_assert_ptr_null(n);
	ck_assert_msg(strstr(err, "1 leak counts for 2 sites") != NULL, "%s",
		      err);
	/* A leak element that is not an array of 8. */
	uint8_t short7[sizeof bad];
	memcpy(short7, bad, sizeof bad);
	short7[sizeof bad - 9] = 0x97;
	ck_assert_int_eq(vmheap_native_decode(short7, sizeof bad - 1, 1000, &n,
					      err, sizeof err),
			 VMHEAP_EFORMAT);
	ck_assert_msg(strstr(err, "leak counts 0 are not an array of 8") != NULL,
		      "%s", err);
	close(fd);
	free(doc);
}
END_TEST

/* A writer not opened for it refuses the section; it says 1.0 and its
 * dump is a 1.0 dump without one. */
START_TEST(writer_needs_the_native_option)
{
	int rc, fd = write_example(0, &rc);
	vmheap_reader *r;
	struct vmheap_record rec;
	struct vmheap_native *n = (void *)1;

	ck_assert_int_eq(rc, VMHEAP_ESTATE);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "plain"), 0);
	ck_assert_uint_eq(vmheap_reader_header(r)->minor, 0);
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 0);
	ck_assert_int_eq(vmheap_reader_native(r, &n), 0);
	ck_assert_ptr_null(n);
	vmheap_reader_free(r);
	close(fd);
}
END_TEST

/* Bad arguments add nothing and the dump goes on. */
START_TEST(writer_refuses_bad_frames)
{
	struct vmheap_writer_options o = VMHEAP_WRITER_OPTIONS_INIT;
	struct vmheap_dump_frame f = {1, 0x10}; /* module 1 of 1 */
	struct vmheap_dump_stack s = {1, 1, 1, 0, &f, 1, NULL, 0, 0};
	struct vmheap_dump_module m = {"/x", 2, NULL, 0, 0};
	vmheap_writer *w;
	int fd = memfd_create("bad", 0);

	o.native = 1;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &o), 0);
	ck_assert_int_eq(vmheap_writer_add_native(w, &m, 1, &s, 1), VMHEAP_EINVAL);
	ck_assert_str_eq(vmheap_writer_error(w), "site 0 frame 0: module 1 of 1");
	f.module = 0;
	ck_assert_int_eq(vmheap_writer_add_native(w, &m, 1, &s, 1), 0);
	ck_assert_int_eq(vmheap_writer_add_native(w, &m, 1, &s, 1), VMHEAP_ESTATE);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	close(fd);
}
END_TEST

/* The decoder's errors name what is wrong and the byte offset. */
START_TEST(decoder_errors_name_the_offset)
{
	struct buf doc = example_from_format_md();
	const uint8_t *payload = doc.p + 0x75;
	size_t len = 64;
	struct vmheap_native *n;
	char err[512];
	uint8_t bad[64];

	ck_assert_int_eq(vmheap_native_decode(payload, len, 0x65, &n, err,
					      sizeof err), 0);
	vmheap_native_free(n);
	/* frame 0 names module 1 of 1 */
	memcpy(bad, payload, len);
	bad[0xa7 - 0x75] = 0x01;
	ck_assert_int_eq(vmheap_native_decode(bad, len, 0x65, &n, err,
					      sizeof err), VMHEAP_EFORMAT);
	ck_assert_ptr_null(n);
	ck_assert_str_eq(err, "malformed native section at byte offset 117: "
			      "site 0 frame 0 names module 1 of 1");
	/* cut short inside the key "sites" */
	ck_assert_int_eq(vmheap_native_decode(payload, 40, 0x65, &n, err,
					      sizeof err), VMHEAP_EFORMAT);
	ck_assert_str_eq(err, "malformed native section at byte offset 152: "
			      "a key is not a str");
	/* a live count that is a str */
	memcpy(bad, payload, len);
	bad[0xa3 - 0x75] = 0xa0;
	ck_assert_int_eq(vmheap_native_decode(bad, len, 0x65, &n, err,
					      sizeof err), VMHEAP_EFORMAT);
	ck_assert_str_eq(err, "malformed native section at byte offset 163: "
			      "site 0: a count is not a uint");
	free(doc.p);
}
END_TEST

/* The header's memory figures go through writer and reader; a header
 * without them reads as has_memory 0. */
START_TEST(header_memory_figures_round_trip)
{
	struct vmheap_process_memory pm = {123456789, 1000, 2000, 3000};
	struct vmheap_writer_options o = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	vmheap_reader *r;
	struct vmheap_record rec;
	int fd = memfd_create("mem", 0);

	o.memory = &pm;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &o), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "mem"), 0);
	const struct vmheap_header *h = vmheap_reader_header(r);
	ck_assert_int_eq(h->has_memory, 1);
	ck_assert_uint_eq(h->memory.rss, 123456789);
	ck_assert_uint_eq(h->memory.malloc_in_use, 1000);
	ck_assert_uint_eq(h->memory.malloc_free, 2000);
	ck_assert_uint_eq(h->memory.malloc_mmap, 3000);
	ck_assert_int_eq(vmheap_reader_next(r, &rec), 0);
	vmheap_reader_free(r);
	close(fd);

	int rc;
	fd = write_example(1, &rc);
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "plain"), 0);
	ck_assert_int_eq(vmheap_reader_header(r)->has_memory, 0);
	vmheap_reader_free(r);
	close(fd);
}
END_TEST

/*
 * A dump with one object and a native section whose one module is
 * `module` (a path), written to `path`.
 */
static void write_native_dump(const char *path, const char *module)
{
	struct vmheap_writer_options o = VMHEAP_WRITER_OPTIONS_INIT;
	struct vmheap_dump_module m = {module, strlen(module), example_id, 4,
				       0x555555554000ull};
	struct vmheap_dump_frame f[1] = {{0, 0x1139}};
	struct vmheap_dump_stack s = {2048, 2, 3, 1, f, 1, NULL, 0, 0};
	vmheap_writer *w;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	ck_assert_int_ge(fd, 0);
	o.vm_name = "app";
	o.pid = 1234;
	o.time = 1700000000;
	o.native = 1;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &o), 0);
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "Thing", 5, 0, 0), 0);
	ck_assert_int_eq(
	    vmheap_writer_add_object(w, 0x1000, 1, 40, 0, NULL, 0), 0);
	ck_assert_int_eq(vmheap_writer_add_native(w, &m, 1, &s, 1), 0);
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	close(fd);
}

/* The dump at `path` with its footer's `objects` (1) made 2 and the
 * FOOT section's CRC made right again: a footer that lies. */
static void lie_in_the_footer(const char *path)
{
	size_t len;
	uint8_t *d = (uint8_t *)spec_read_file(path, &len), *foot = NULL, *v;
	uint32_t plen, crc;

	ck_assert_ptr_nonnull(d);
	for (uint8_t *p = d; (p = memmem(p, len - (size_t)(p - d), "FOOT",
					 4)) != NULL;
	     p++)
		foot = p;
	ck_assert_ptr_nonnull(foot);
	plen = (uint32_t)foot[4] << 24 | foot[5] << 16 | foot[6] << 8 | foot[7];
	v = memmem(foot + 16, plen, "\xa7objects", 8);
	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(v[8], 1);
	v[8] = 2;
	crc = vmheap_crc32c(0, foot, 12);
	crc = vmheap_crc32c(crc, foot + 16, plen);
	for (int i = 0; i < 4; i++)
		foot[12 + i] = (uint8_t)(crc >> (24 - 8 * i));
	unlink(path);
	spec_write_file(path, d, len);
	free(d);
}

/*
 * --native reads what every other mode reads: a footer that lies is an
 * error (exit 2) in vmheap-histo --native and vmheap-diff --native as in
 * plain vmheap-histo.  A module path that is a FIFO (a file named inside
 * the dump) does not block them: it is "not a regular file".
 */
START_TEST(native_modes_check_the_footer_and_skip_fifos)
{
	const char *dir = spec_mkdtemp("natv");
	char good[PATH_MAX], lie[PATH_MAX], fifo[PATH_MAX];
	struct spec_run r;

	snprintf(good, sizeof(good), "%s/good.vmheap", dir);
	snprintf(lie, sizeof(lie), "%s/lie.vmheap", dir);
	snprintf(fifo, sizeof(fifo), "%s/libfifo.so", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	write_native_dump(good, fifo);
	write_native_dump(lie, fifo);
	lie_in_the_footer(lie);

	const char *histo[] = {spec_bin("vmheap-histo"), "--native", "--bytes",
			       good, NULL};
	ck_assert_int_eq(spec_run(histo, NULL, NULL, 20000, &r), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, "libfifo.so+0x1139 (not a regular file)"),
		      "%s", r.out);
	spec_run_free(&r);
	/* the DUMP argument itself still reads a pipe */
	{
		char cmd[3 * PATH_MAX];
		const char *sh[] = {"sh", "-c", cmd, NULL};

		snprintf(cmd, sizeof(cmd), "cat '%s' | '%s' --native --bytes -",
			 good, spec_bin("vmheap-histo"));
		ck_assert_int_eq(spec_run(sh, NULL, NULL, 20000, &r), 0);
		ck_assert_msg(r.status == 0 &&
				  strstr(r.out, "(not a regular file)"),
			      "exit %d: %s%s", r.status, r.out, r.err);
		spec_run_free(&r);
	}
	const char *diff[] = {spec_bin("vmheap-diff"), "--native", good, good,
			      NULL};
	ck_assert_int_eq(spec_run(diff, NULL, NULL, 20000, &r), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	spec_run_free(&r);

	histo[3] = lie;
	ck_assert_int_eq(spec_run(histo, NULL, NULL, 20000, &r), 0);
	ck_assert_msg(r.status == 2 && strstr(r.err, "footer totals disagree "
						     "with the records"),
		      "exit %d: %s%s", r.status, r.out, r.err);
	ck_assert_str_eq(r.out, "");
	spec_run_free(&r);
	diff[2] = lie;
	ck_assert_int_eq(spec_run(diff, NULL, NULL, 20000, &r), 0);
	ck_assert_msg(r.status == 2 && strstr(r.err, "footer totals disagree"),
		      "exit %d: %s%s", r.status, r.out, r.err);
	spec_run_free(&r);
	/* as the plain histogram says */
	const char *plain[] = {spec_bin("vmheap-histo"), lie, NULL};
	ck_assert_int_eq(spec_run(plain, NULL, NULL, 20000, &r), 0);
	ck_assert_msg(r.status == 2 && strstr(r.err, "footer totals disagree"),
		      "exit %d: %s", r.status, r.err);
	spec_run_free(&r);
	spec_rmrf(dir);
}
END_TEST

void native_format_tests(Suite *s);
void native_format_tests(Suite *s)
{
	TCase *t = spec_tcase(s, "format", 30);
	tcase_add_test(t, native_example_in_format_md_is_what_the_writer_writes);
	tcase_add_test(t, native_site_with_vm_location_in_format_md);
	tcase_add_test(t, native_leaks_in_format_md);
	tcase_add_test(t, writer_needs_the_native_option);
	tcase_add_test(t, writer_refuses_bad_frames);
	tcase_add_test(t, decoder_errors_name_the_offset);
	tcase_add_test(t, header_memory_figures_round_trip);
	tcase_add_test(t, native_modes_check_the_footer_and_skip_fifos);
}
