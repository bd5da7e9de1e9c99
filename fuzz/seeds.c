/*
 * seeds.c - fuzz-seeds: write the seed corpora of the fuzz targets with
 * the project's own code, so that nothing large is committed.
 *
 *   fuzz-seeds DIR    writes the files of DIR/reader, DIR/protocol,
 *                     DIR/discovery and DIR/client
 *
 * reader:    dumps from vmheap_writer (empty, small, many small blocks,
 *            kinds and roots, an object continued in more-references
 *            records, a dump cut short, edge and root names), and writer dumps altered behind
 *            valid checksums into what FORMAT.md tells readers to refuse
 *            (bytes after the HEAD or FOOT map, more-references records
 *            that continue no object);
 * protocol:  byte 0 (odd: skip auth) then frames made with the agent's
 *            frame encoder: the requests a console sends;
 * discovery: the file a real agent writes (one is started here), and
 *            variants of it;
 * client:    what an agent sends a client (hello, replies, refusals),
 *            and what another server on that port might say.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-internal.h"
#include "../spec/trace_example.h"

static const char *outdir;

static void die(const char *what)
{
	fprintf(stderr, "fuzz-seeds: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void mkdir_p(const char *sub)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", outdir, sub);
	if (mkdir(outdir, 0755) < 0 && errno != EEXIST)
		die(outdir);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		die(p);
}

static int create(const char *sub, const char *name)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/%s/%s", outdir, sub, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(p);
	return fd;
}

static void put(const char *sub, const char *name, const void *data, size_t len)
{
	int fd = create(sub, name);

	if (write(fd, data, len) != (ssize_t)len)
		die(name);
	close(fd);
}

/* ------------------------------------------------------------- dumps */

enum shape { EMPTY, SMALL, BLOCKS, KINDS, MORE_REFS, CUT, NAMED, SUMMARY };

static void dump(const char *name, enum shape shape)
{
	static const char *const kinds[] = {"object", "string", "array"};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	static uint64_t refs[70000];
	static int64_t names[70000];
	int fd = create("reader", name);
	int nobj = shape == BLOCKS	 ? 300
		   : shape == SUMMARY ? 200
		   : shape == EMPTY   ? 0
				      : 6;

	opt.vm_name = "seed";
	opt.vm_version = "1.0";
	opt.pid = 4242;
	opt.time = 1700000000;
	if (shape == KINDS) {
		opt.kind_names = kinds;
		opt.kind_count = 3;
		opt.flags = VMHEAP_FLAG_LIVE_ONLY;
	}
	if (shape == BLOCKS)
		opt.block_bytes = 256;
	opt.edge_names = shape == NAMED; /* format 1.1 names (FORMAT.md 16) */
	if (vmheap_writer_open(&w, fd, &opt) < 0)
		die("vmheap_writer_open");
	if (shape != EMPTY) {
		vmheap_writer_add_string(w, 1, "vm", 2);
		vmheap_writer_add_string(w, 2, "stack", 5);
		vmheap_writer_add_class(w, 1, "Object", 6, 0, 0);
		vmheap_writer_add_class(w, 2, "String", 6, 1, 0);
		vmheap_writer_add_class(w, 3, "", 0, 1, 0);
	}
	if (shape == NAMED) {
		vmheap_writer_add_string(w, 3, "@store", 6);
		vmheap_writer_add_string(w, 4, "$audit", 6);
	}
	for (int i = 0; i < nobj; i++) {
		uint64_t r[3] = {0x1000, 0x1000 + 16u * (uint64_t)i,
				 0xdeadbeef};
		/* names: an ivar, an index, a string the dump lacks */
		int64_t n[3] = {3, vmheap_edge_name_index(7), 99};
		/* a block summary (FORMAT.md 6) lists records among them */
		if (shape == SUMMARY && i % 50 == 25)
			vmheap_writer_add_root(w, 1, 0x1000 + 16u * (uint64_t)i);
		vmheap_writer_add_object_named(
		    w, 0x1000 + 16u * (uint64_t)i, 1 + (uint64_t)(i % 3),
		    24 + 8u * (uint64_t)i, (uint32_t)(i % 3), r,
		    shape == NAMED ? n : NULL, (size_t)(i % 4), 0);
	}
	if (shape == MORE_REFS || shape == NAMED) {
		for (size_t i = 0; i < sizeof(refs) / sizeof(*refs); i++) {
			refs[i] = 0x1000 + 16 * (i % 6);
			names[i] = vmheap_edge_name_index(i);
		}
		vmheap_writer_add_object_named(
		    w, 0x9000, 1, 64, 0, refs, shape == NAMED ? names : NULL,
		    VMHEAP_MAX_REFS_PER_RECORD + 3, 0);
	}
	if (shape != EMPTY) {
		vmheap_writer_add_root(w, 1, 0x1000);
		vmheap_writer_add_root_named(w, 2, 0x1010,
					     shape == NAMED ? 4 : 0);
	}
	if (vmheap_writer_finish(w) < 0)
		die(vmheap_writer_error(w));
	/* a dump cut in its last block, as by a full disk */
	if (shape == CUT &&
	    ftruncate(fd, (off_t)vmheap_writer_bytes_written(w) - 40) < 0)
		die("ftruncate");
	vmheap_writer_free(w);
	close(fd);
}

/* Sizes and a time that cannot be true (issue 29): three objects of 2^63
 * bytes in one class, whose sums saturate, and a header time of
 * INT64_MAX ms. */
static void huge_numbers(void)
{
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	int fd = create("reader", "huge-numbers");

	opt.vm_name = "seed";
	opt.time_ms = INT64_MAX;
	if (vmheap_writer_open(&w, fd, &opt) < 0)
		die("vmheap_writer_open");
	vmheap_writer_add_class(w, 1, "Big", 3, 0, 0);
	for (uint64_t i = 0; i < 3; i++)
		vmheap_writer_add_object(w, 0x1000 + 16 * i, 1, 1ull << 63, 0,
					 NULL, 0);
	vmheap_writer_add_object(w, 0x2000, 1, UINT64_MAX, 0, NULL, 0);
	if (vmheap_writer_finish(w) < 0)
		die(vmheap_writer_error(w));
	vmheap_writer_free(w);
	close(fd);
}

/* ------------------------------------------------------ damaged dumps */

static uint8_t *load(const char *name, size_t *len)
{
	char p[4096];
	struct stat st;
	uint8_t *b;
	int fd;

	snprintf(p, sizeof(p), "%s/reader/%s", outdir, name);
	fd = open(p, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		die(p);
	*len = (size_t)st.st_size;
	b = malloc(*len + 16);
	if (!b || read(fd, b, *len) != (ssize_t)*len)
		die(p);
	close(fd);
	return b;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Recompute the CRC of the section whose header is at `at`. */
static void reseal(uint8_t *f, size_t at)
{
	uint32_t crc = vmheap_crc32c(0, f + at, 12);

	put_be32(f + at + 12,
		 vmheap_crc32c(crc, f + at + 16, be32(f + at + 4)));
}

/* "small" with two nil bytes after the map of the HEAD section (at 8) or
 * of the FOOT section (found from the trailer), length and CRC fixed. */
static void bytes_after_map(const char *name, int foot)
{
	size_t len, at, end;
	uint8_t *f = load("small", &len);

	at = foot ? (size_t)be32(f + len - 12) : 8;
	end = at + 16 + be32(f + at + 4);
	memmove(f + end + 2, f + end, len - end);
	f[end] = f[end + 1] = 0xc0;
	put_be32(f + at + 4, be32(f + at + 4) + 2);
	reseal(f, at);
	put("reader", name, f, len + 2);
	free(f);
}

/* "more-refs" with the tag of the object record that its more-references
 * records continue changed to an unknown one (9): they then follow
 * another object. */
static void orphan_more_refs(void)
{
	vmheap_block_cursor *c = NULL;
	struct vmheap_record rec;
	struct vmheap_block blk;
	vmheap_reader *r;
	uint64_t rec_at = 0, blk_at = 0;
	size_t len;
	uint8_t *f = load("more-refs", &len);
	char p[4096];
	int rc;

	snprintf(p, sizeof(p), "%s/reader/more-refs", outdir);
	if (vmheap_reader_open_path(&r, p) < 0)
		die(p);
	while (!rec_at && vmheap_reader_next_block(r, &blk) > 0) {
		if (c)
			vmheap_block_cursor_reset(c, &blk);
		else if (vmheap_block_cursor_open(&c, &blk) < 0)
			die("block cursor");
		while (!rec_at &&
		       (rc = vmheap_block_cursor_next_shallow(c, &rec)) > 0)
			if (rec.type == VMHEAP_RECORD_OBJECT &&
			    rec.u.object.id == 0x9000) {
				rec_at = rec.offset;
				blk_at = blk.offset;
			}
	}
	vmheap_block_cursor_free(c);
	vmheap_reader_free(r);
	if (!rec_at || f[rec_at] != 0x96 || f[rec_at + 1] != 0x03)
		die("the more-refs seed has no object 0x9000 to orphan");
	f[rec_at + 1] = 0x09;
	reseal(f, (size_t)blk_at);
	put("reader", "more-refs-orphan", f, len);
	free(f);
}

/* ------------------------------------------------------------- frames */

static msgpack_sbuffer sb;
static msgpack_packer pk;

static void frame_req(uint64_t id, const char *verb, const char *path,
		      const char *value, int bool_value)
{
	size_t start = sb.size;

	frame_begin(&sb);
	msgpack_pack_array(&pk, path ? (value || bool_value >= 0 ? 4 : 3) : 2);
	msgpack_pack_uint64(&pk, id);
	frame_pack_str(&pk, verb);
	if (path)
		frame_pack_str(&pk, path);
	if (value)
		frame_pack_str(&pk, value);
	else if (bool_value > 0)
		msgpack_pack_true(&pk);
	else if (bool_value == 0)
		msgpack_pack_false(&pk);
	frame_end(&sb, start);
}

static void session(const char *name, int skip_auth, void (*body)(void))
{
	char first = (char)skip_auth;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_sbuffer_write(&sb, &first, 1);
	body();
	put("protocol", name, sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
}

static void gets(void)
{
	frame_req(1, "get", "system.pid", NULL, -1);
	frame_req(2, "get", "system.memory.rss", NULL, -1);
	frame_req(3, "get", "fuzz.n", NULL, -1);
	frame_req(4, "get", "system.uptime", NULL, -1);
	frame_req(5, "get", "no.such.var", NULL, -1);
}

static void lists(void)
{
	frame_req(1, "list", NULL, NULL, -1);
	frame_req(2, "list", "system.", NULL, -1);
	frame_req(3, "list", "config", NULL, -1);
}

static void sets(void)
{
	frame_req(1, "set", "config.dump.gc", NULL, 1);
	frame_req(2, "set", "config.dump.fork", "no", -1);
	frame_req(3, "set", "fuzz.n", "7", -1);
	frame_req(4, "set", "system.pid", "1", -1);
}

static void dumps(void)
{
	frame_req(1, "set", "system.memory.dump", "seed.vmheap", -1);
	frame_req(2, "set", "system.memory.dump", "../escape.vmheap", -1);
	frame_req(3, "get", "system.memory.dumping", NULL, -1);
	frame_req(4, "get", "system.memory.count", NULL, -1);
}

static void oddities(void)
{
	frame_req(1, "auth", "00000000000000000000000000000000", NULL, -1);
	frame_req(2, "frobnicate", "x", NULL, -1);
	frame_req(3, "get", "system.threads.backtrace", NULL, -1);
}

static void preauth(void)
{
	frame_req(1, "auth", "0123456789abcdef0123456789abcdef", NULL, -1);
}

/* ------------------------------------------------ what an agent sends */

static void hello(void)
{
	size_t start = sb.size;

	frame_begin(&sb);
	msgpack_pack_array(&pk, 4);
	frame_pack_str(&pk, "hello");
	msgpack_pack_uint64(&pk, VMHEAP_PROTOCOL_VERSION);
	frame_pack_str(&pk, "seed 1.0");
	msgpack_pack_uint64(&pk, 4242);
	frame_end(&sb, start);
}

static void reply_ok(uint64_t id, int kind)
{
	size_t start = sb.size;

	frame_begin(&sb);
	msgpack_pack_array(&pk, 3);
	msgpack_pack_uint64(&pk, id);
	frame_pack_str(&pk, "ok");
	if (kind == 0) {
		msgpack_pack_true(&pk);
	} else if (kind == 1) {
		msgpack_pack_uint64(&pk, 4242);
	} else {
		msgpack_pack_array(&pk, 2);
		frame_pack_str(&pk, "system.pid");
		frame_pack_str(&pk, "system.vm");
	}
	frame_end(&sb, start);
}

static void reply_error(int nil_id, uint64_t id, const char *code,
			const char *msg)
{
	size_t start = sb.size;

	frame_begin(&sb);
	msgpack_pack_array(&pk, 4);
	if (nil_id)
		msgpack_pack_nil(&pk);
	else
		msgpack_pack_uint64(&pk, id);
	frame_pack_str(&pk, "error");
	frame_pack_str(&pk, code);
	frame_pack_str(&pk, msg);
	frame_end(&sb, start);
}

static void agent_session(void)
{
	hello();
	reply_ok(1, 0);
	reply_ok(2, 1);
	reply_ok(3, 2);
	reply_error(0, 4, "readonly", "config.dump.gc cannot be set here");
}

static void agent_late_replies(void)
{
	hello();
	reply_ok(1, 0);
	reply_ok(7, 1); /* not ours: skipped */
	reply_ok(2, 1);
	reply_error(1, 0, "timeout", "idle for 300000 ms");
}

static void agent_refuses(void)
{
	reply_error(1, 0, "limit", "too many clients (the limit is 32)");
}

static void agent_bad_token(void)
{
	hello();
	reply_error(0, 1, "auth", "token refused");
}

static void peer(const char *name, void (*body)(void))
{
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	body();
	put("client", name, sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
}

/* ------------------------------------------------------------ discovery */

static int run_stopped(void *ctx, int (*fn)(void *arg), void *arg)
{
	(void)ctx;
	return fn(arg);
}

static int walk_heap(void *ctx, vmheap_writer *w)
{
	(void)ctx, (void)w;
	return 0;
}

static void discovery(void)
{
	static const struct vmheap_agent_host host = {.vm_name = "seed",
						      .vm_version = "1",
						      .run_stopped =
							  run_stopped,
						      .walk_heap = walk_heap};
	struct vmheap_agent_config cfg;
	vmheap_agent *a;
	char body[2048], tmp[4096], *p;
	ssize_t n;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/discovery-agent", outdir);
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		die(tmp);
	memset(&cfg, 0, sizeof(cfg));
	cfg.tmpdir = tmp;
	cfg.dump_dir = tmp;
	if (vmheap_agent_start(&a, &cfg, &host) < 0) {
		fprintf(stderr, "fuzz-seeds: cannot start an agent: %s\n",
			vmheap_agent_error(a));
		exit(1);
	}
	fd = open(vmheap_agent_discovery_path(a), O_RDONLY);
	if (fd < 0)
		die(vmheap_agent_discovery_path(a));
	n = read(fd, body, sizeof(body) - 1);
	close(fd);
	vmheap_agent_stop(a);
	rmdir(tmp);
	if (n <= 0)
		die("discovery read");
	body[n] = '\0';
	put("discovery", "agent", body, (size_t)n);
	/* without proc_start, as an older agent writes it */
	p = strstr(body, "proc_start=");
	if (p) {
		put("discovery", "no-proc-start", body, (size_t)(p - body));
		*p = '\0';
	}
	snprintf(tmp, sizeof(tmp), "%sunknown=key\naddress=tcp://[::1]:65535\n",
		 body);
	put("discovery", "ipv6-and-unknown-key", tmp, strlen(tmp));
	snprintf(tmp, sizeof(tmp),
		 "pid=1\naddress=tcp://127.0.0.1:1\nstarted=0\n");
	put("discovery", "missing-token", tmp, strlen(tmp));
}

/* The native section: a dump that carries one (a reader seed), and its
 * payload alone (the native target's seed). */
static void native_seeds(void)
{
	static const uint8_t id[4] = {0xde, 0xad, 0xbe, 0xef};
	struct vmheap_dump_module m[2] = {{"/bin/app", 8, id, 4, 0x400000},
					  {"/lib/libc.so.6", 14, NULL, 0, 0}};
	struct vmheap_dump_frame f[3] = {
	    {0, 0x1139}, {1, 0x2724a}, {VMHEAP_NO_MODULE, 0x7f0000001000}};
	struct vmheap_dump_stack s[2] = {
	    {2048, 2, 3, 1, f, 3, NULL, 0, 0},
	    {64, 1, 1, 0, f + 1, 1, "/app/a.rb", 9, 12}}; /* a VM line */
	/* with the leak scan's key (both targets read it) */
	struct vmheap_dump_leaks l[2] = {{1, 1024, 1, 1024, 0, 0, 0, 0},
					 {0, 0, 0, 0, 1, 64, 0, 0}};
	struct vmheap_dump_leak_scan scan = {l, 3, 1 << 20, 1, 4096, 12345,
					     1 << 16};
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	int fd = create("reader", "native");
	uint8_t buf[4096];
	ssize_t n;

	opt.native = 1;
	if (vmheap_writer_open(&w, fd, &opt) ||
	    vmheap_writer_add_native_leaks(w, m, 2, s, 2, &scan) ||
	    vmheap_writer_finish(w))
		die("native seed");
	vmheap_writer_free(w);
	close(fd);
	/* The payload: after magic, HEAD and the NATV section's header. */
	char path[4096];
	snprintf(path, sizeof(path), "%s/reader/native", outdir);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	for (ssize_t i = 8; i + 16 <= n; i++)
		if (!memcmp(buf + i, "NATV", 4)) {
			uint32_t len = (uint32_t)buf[i + 4] << 24 |
				       (uint32_t)buf[i + 5] << 16 |
				       (uint32_t)buf[i + 6] << 8 | buf[i + 7];
			if (i + 16 + (ssize_t)len <= n)
				put("native", "example", buf + i + 16, len);
			break;
		}
}

/* A live histogram reply's value (the histogram target's seed), as the
 * agent packs it (PROTOCOL.md section 7a). */
static void histogram_seed(void)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 8);
	frame_pack_str(&pk, "objects");
	msgpack_pack_uint64(&pk, 10);
	frame_pack_str(&pk, "bytes");
	msgpack_pack_uint64(&pk, 1000);
	frame_pack_str(&pk, "class_count");
	msgpack_pack_uint64(&pk, 2);
	frame_pack_str(&pk, "left_out");
	msgpack_pack_uint64(&pk, 0);
	frame_pack_str(&pk, "classes");
	msgpack_pack_array(&pk, 2);
	msgpack_pack_array(&pk, 3);
	frame_pack_str(&pk, "Session");
	msgpack_pack_uint64(&pk, 7);
	msgpack_pack_uint64(&pk, 700);
	msgpack_pack_array(&pk, 3);
	frame_pack_str(&pk, "<imemo:iseq>");
	msgpack_pack_uint64(&pk, 3);
	msgpack_pack_uint64(&pk, 300);
	frame_pack_str(&pk, "forked");
	msgpack_pack_true(&pk);
	frame_pack_str(&pk, "live_only");
	msgpack_pack_true(&pk);
	frame_pack_str(&pk, "seconds");
	msgpack_pack_double(&pk, 0.012);
	put("histogram", "reply", sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
}

/* A live native sites reply's value (the native_sites target's seed), as
 * the agent packs it (PROTOCOL.md, system.native.sites): one row whose
 * frames name a module that is not there and no module. */
static void native_sites_seed(void)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 7);
	frame_pack_str(&pk, "live_bytes");
	msgpack_pack_uint64(&pk, 4096);
	frame_pack_str(&pk, "live_count");
	msgpack_pack_uint64(&pk, 1);
	frame_pack_str(&pk, "allocs");
	msgpack_pack_uint64(&pk, 2);
	frame_pack_str(&pk, "frees");
	msgpack_pack_uint64(&pk, 1);
	frame_pack_str(&pk, "site");
	frame_pack_str(&pk, "0x11a8 (leaky.so) < 0x7f0000001000 < app.rb:9");
	frame_pack_str(&pk, "frames");
	msgpack_pack_array(&pk, 2);
	msgpack_pack_array(&pk, 2);
	frame_pack_str(&pk, "/nonexistent/leaky.so");
	msgpack_pack_uint64(&pk, 0x11a8);
	msgpack_pack_array(&pk, 2);
	frame_pack_str(&pk, "");
	msgpack_pack_uint64(&pk, 0x7f0000001000ull);
	frame_pack_str(&pk, "vm");
	frame_pack_str(&pk, "app.rb:9");
	put("native_sites", "reply", sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
}

/* An .eh_frame for fuzz_cfa: a CIE (version 1, "zR", absolute
 * pointers, CFA = rsp + 8, the return address at CFA - 8) and two FDEs
 * (a standard rbp frame: push, define CFA on rbp; and one with
 * remember/restore state and an undefined return address), after 4
 * bytes of code offset. */
static void cfa_seed(void)
{
	static const uint8_t seed[] = {
		0x05, 0x00, 0x00, 0x00, /* code offset 5 */
		/* CIE: length 20 */
		20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x00,
		0x0c, 7, 8, 0x90, 1, 0, 0,
		/* FDE 1: length 32, CIE 28 back */
		32, 0, 0, 0, 28, 0, 0, 0,
		0x00, 0x10, 0, 0, 0, 0, 0, 0, /* pc_begin 0x1000 */
		0x40, 0, 0, 0, 0, 0, 0, 0,    /* pc_range 64 */
		0,                            /* no augmentation data */
		0x41, 0x0e, 16, 0x86, 2,      /* advance 1; CFA = rsp+16; rbp at CFA-16 */
		0x44, 0x0d, 6,                /* advance 4; CFA on rbp */
		0, 0, 0,
		/* FDE 2: length 32, CIE 64 back */
		32, 0, 0, 0, 64, 0, 0, 0,
		0x00, 0x10, 0, 0, 0, 0, 0, 0,
		0x20, 0, 0, 0, 0, 0, 0, 0,
		0,
		0x0a, 0x42, 0x0e, 24, 0x0b,   /* remember; advance 2; offset; restore */
		0x07, 16, 0,                  /* the return address undefined */
		0, 0, 0,
	};
	put("cfa", "eh_frame", seed, sizeof seed);
}

/* fuzz_scan: a syscall file's text, and a heap of three chunks (an
 * in-use one of 32 bytes, a free one of 48, the top chunk) walked to its
 * end. */
static void scan_seeds(void)
{
	static const char text[] =
	    "\0"
	    "202 0x7f00 0x80 0x0 0x0 0x0 0x0 0x7ffd1234 0x7f001234\n";
	put("scan", "syscall", text, sizeof text - 1);
	uint8_t heap[1 + 8 + 4 + 128];
	memset(heap, 0, sizeof heap);
	heap[0] = 1;
	uint32_t to = 128;
	memcpy(heap + 9, &to, 4);
	uint64_t size[3] = {32 | 1, 48 | 1, 48 | 0};
	memcpy(heap + 13 + 8, &size[0], 8);  /* chunk 0: 32, in use */
	memcpy(heap + 13 + 40, &size[1], 8); /* chunk 1 at 32: 48 */
	memcpy(heap + 13 + 88, &size[2], 8); /* top at 80: 48, prev free */
	put("scan", "heap", heap, sizeof heap);
}

/* The malloc trace reader's seeds: TRACE.md's worked example, and the
 * same cut before its end record (refused). */
static void trace_seeds(void)
{
	size_t len;
	uint8_t *b = trace_example(&len);
	if (b == NULL)
		die("trace seed");
	put("trace", "example", b, len);
	put("trace", "cut", b, len - 20);
	free(b);
}

/* vmheap-replay's builder: events of 8 bytes (replay_fuzz.c): thread 0
 * makes slot 0 by malloc, thread 1 frees it, thread 0 makes it again
 * (generation 1) by memalign and reallocs it into slot 1. */
static void replay_seeds(void)
{
	static const uint8_t seed[] = {
	    0, 0, 0, 0, 0, 0, 10, 0, /* malloc 0#0 */
	    1, 4, 0, 0, 0, 0, 0,  0, /* free 0#0 */
	    0, 7, 0, 1, 0, 0, 3,  4, /* memalign 0#1, align 16 */
	    0, 2, 1, 0, 0, 1, 90, 0, /* realloc 0#1 -> 1#0 */
	};
	put("replay", "basic", seed, sizeof seed);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz-seeds DIR\n");
		return 2;
	}
	outdir = argv[1];
	mkdir_p("reader");
	mkdir_p("protocol");
	mkdir_p("discovery");
	mkdir_p("client");
	mkdir_p("native");
	mkdir_p("histogram");
	mkdir_p("native_sites");
	mkdir_p("cfa");
	mkdir_p("trace");
	mkdir_p("replay");
	cfa_seed();
	mkdir_p("scan");
	scan_seeds();
	replay_seeds();
	trace_seeds();
	native_seeds();
	histogram_seed();
	native_sites_seed();
	dump("empty", EMPTY);
	dump("small", SMALL);
	dump("blocks", BLOCKS);
	dump("kinds", KINDS);
	dump("more-refs", MORE_REFS);
	dump("cut", CUT);
	dump("named", NAMED);
	dump("summary", SUMMARY);
	huge_numbers();
	bytes_after_map("head-bytes-after-map", 0);
	bytes_after_map("foot-bytes-after-map", 1);
	orphan_more_refs();
	session("gets", 0, gets);
	session("lists", 0, lists);
	session("sets", 0, sets);
	session("dumps", 0, dumps);
	session("oddities", 0, oddities);
	session("preauth", 1, preauth);
	peer("session", agent_session);
	peer("late-replies", agent_late_replies);
	peer("refused", agent_refuses);
	peer("bad-token", agent_bad_token);
	put("client", "http", "HTTP/1.1 400 Bad Request\r\n\r\n", 28);
	discovery();
	return 0;
}
