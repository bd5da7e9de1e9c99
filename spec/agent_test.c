/*
 * agent_test.c - the agent, end to end: the real vmheap-sample, real
 * sockets, real dump files read back with libvmheap.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent-internal.h" /* the job registry, for its unit test */
#include "agent_helpers.h"
#include "lib/vmheap_spec.h"

static int list_has(const msgpack_object *map, const char *name)
{
	return map_get(map, name) != NULL;
}

/* Wait until the sample's mutator has run all its --ticks. */
static void wait_ticks(vmheap_client *c, int64_t ticks)
{
	struct spec_wait w;

	spec_wait_begin(&w, 20000);
	while (get_int(c, "sample.ticks") < ticks)
		spec_wait_or_fail(&w, "the mutator to run %lld ticks",
				  (long long)ticks);
}

static void wait_dump_idle(vmheap_client *c)
{
	struct spec_wait w;
	struct spec_reply r;
	int busy;

	spec_wait_begin(&w, 30000);
	do {
		spec_wait_or_fail(&w, "the dump to end");
		call_ok(c, "get", "system.memory.dumping", NULL, &r);
		busy = r.value.type == MSGPACK_OBJECT_BOOLEAN &&
		       r.value.via.boolean;
		spec_reply_release(&r);
	} while (busy);
}

/* ------------------------------------------------------------ session */

struct found {
	int n;
	struct vmheap_agent_info info;
};

static void on_found(void *arg, const struct vmheap_agent_info *info)
{
	struct found *f = arg;

	f->n++;
	f->info = *info;
}

START_TEST(session_found_by_discovery_answers_get_set_and_list)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--leak", "Session:2", NULL}};
	struct spec_vm s;
	struct found f = {0};
	vmheap_client *c = NULL;
	struct spec_reply r;
	int rc;

	spec_vm_start(&s, NULL, NULL, &o);
	rc = vmheap_discovery_list(s.tmpdir, on_found, NULL, &f);
	ck_assert_int_eq(rc, 1);
	ck_assert_int_eq(f.n, 1);
	ck_assert_int_eq(f.info.pid, s.pid);
	ck_assert_str_eq(f.info.vm, "sample 1.0");
	ck_assert_msg(strstr(f.info.argv, "--leak Session:2"), "argv: %s",
		      f.info.argv);

	rc = vmheap_client_connect(&c, &f.info, 10000);
	ck_assert_msg(rc == 0, "connect: %s", vmheap_client_error(c));
	ck_assert_int_eq(vmheap_client_pid(c), s.pid);
	ck_assert_str_eq(vmheap_client_vm(c), "sample 1.0");

	ck_assert_int_eq(get_int(c, "system.pid"), s.pid);
	ck_assert_int_gt(get_int(c, "system.memory.rss"), 100000);
	ck_assert_int_gt(get_int(c, "system.memory.count"), 0);

	call_ok(c, "get", "system.vm", NULL, &r);
	ck_assert(obj_str_is(&r.value, "sample 1.0"));
	spec_reply_release(&r);

	call_ok(c, "get", "system.argv", NULL, &r);
	ck_assert_int_eq(r.value.type, MSGPACK_OBJECT_ARRAY);
	ck_assert_int_eq(r.value.via.array.size, 3);
	ck_assert(obj_str_is(&r.value.via.array.ptr[1], "--leak"));
	spec_reply_release(&r);

	call_ok(c, "get", "system.uptime", NULL, &r);
	ck_assert_int_eq(r.value.type, MSGPACK_OBJECT_FLOAT64);
	ck_assert(r.value.via.f64 >= 0 && r.value.via.f64 < 600);
	spec_reply_release(&r);

	call_ok(c, "get", "config.dump.dir", NULL, &r);
	ck_assert(obj_str_is(&r.value, s.dumpdir));
	spec_reply_release(&r);

	/* list: everything, then a prefix; host variables appear */
	call_ok(c, "list", NULL, NULL, &r);
	ck_assert(list_has(&r.value, "system.memory.dump"));
	ck_assert(list_has(&r.value, "config.dump.fork"));
	ck_assert(list_has(&r.value, "sample.census"));
	ck_assert(obj_str_is(map_get(&r.value, "system.pid"), "int"));
	spec_reply_release(&r);
	call_ok(c, "list", "system.memory", NULL, &r);
	ck_assert(list_has(&r.value, "system.memory.rss"));
	ck_assert(!list_has(&r.value, "system.pid"));
	ck_assert(!list_has(&r.value, "sample.census"));
	spec_reply_release(&r);

	/* set: typed values from strings, as a person types them */
	call_ok(c, "set", "sample.tick_ms", "5", &r);
	ck_assert_int_eq(r.value.via.i64, 5);
	spec_reply_release(&r);
	ck_assert_int_eq(get_int(c, "sample.tick_ms"), 5);
	/* a host's set_var reads typed values through vmheap_value: an
	 * integer as one, a negative one and a map refused as no int */
	{
		msgpack_object v = {.type = MSGPACK_OBJECT_POSITIVE_INTEGER};
		msgpack_object refused[2] = {
		    {.type = MSGPACK_OBJECT_NEGATIVE_INTEGER},
		    {.type = MSGPACK_OBJECT_MAP}};

		v.via.u64 = 7;
		ck_assert_int_eq(
		    spec_client_call(c, "set", "sample.tick_ms", &v, &r), 0);
		ck_assert_msg(r.ok, "%s", r.message);
		ck_assert_int_eq(r.value.via.i64, 7);
		spec_reply_release(&r);
		refused[0].via.i64 = -3;
		for (int k = 0; k < 2; k++) {
			ck_assert_int_eq(spec_client_call(c, "set",
							  "sample.tick_ms",
							  &refused[k], &r),
					 0);
			ck_assert_msg(!r.ok, "value %d was taken", k);
			ck_assert_str_eq(r.code, "type");
			spec_reply_release(&r);
		}
		ck_assert_int_eq(get_int(c, "sample.tick_ms"), 7);
	}
	call_ok(c, "set", "config.dump.gc", "false", &r);
	ck_assert(r.value.type == MSGPACK_OBJECT_BOOLEAN &&
		  !r.value.via.boolean);
	spec_reply_release(&r);
	call_ok(c, "get", "config.dump.gc", NULL, &r);
	ck_assert(r.value.type == MSGPACK_OBJECT_BOOLEAN &&
		  !r.value.via.boolean);
	spec_reply_release(&r);

	/* errors that keep the session open */
	call_error(c, "set", "system.pid", "1", "readonly");
	call_error(c, "set", "config.dump.gc", "maybe", "type");
	call_error(c, "set", "sample.tick_ms", "soon", "type");
	call_error(c, "get", "no.such.variable", NULL, "notfound");
	call_error(c, "get", "system.mem", NULL, "notfound"); /* not a group */
	call_error(c, "list", "nothing.here", NULL, "notfound");
	call_error(c, "get", "system.threads.backtrace", NULL, "unsupported");
	ck_assert_int_eq(get_int(c, "system.pid"), s.pid);

	vmheap_client_close(c);
	ck_assert_int_eq(spec_vm_stop(&s), 0);
	spec_vm_cleanup(&s);
}
END_TEST

/* ---------------------------------------------------------------- dump */

static void check_dump_matches_census(int fork_mode)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--leak", "Session:7", "--leak",
					  "Widget:3", "--ticks", "25",
					  "--tick-ms", "1", NULL}};
	struct census_row rows[64];
	struct spec_reply r, census;
	const msgpack_object *v;
	struct spec_vm s;
	vmheap_client *c;
	uint64_t objects, census_total = 0;
	uint32_t flags;
	struct stat st;
	char path[PATH_MAX];
	int n, matched = 0;

	spec_vm_start(&s, NULL, NULL, &o);
	c = spec_vm_client(&s);
	wait_ticks(c, 25);
	call_ok(c, "set", "config.dump.fork", fork_mode ? "true" : "false", &r);
	spec_reply_release(&r);

	call_ok(c, "get", "sample.census", NULL, &census);
	ck_assert_int_eq(census.value.type, MSGPACK_OBJECT_MAP);
	call_ok(c, "set", "system.memory.dump", "heap.vmheap", &r);

	snprintf(path, sizeof(path), "%s/heap.vmheap", s.dumpdir);
	ck_assert(obj_str_is(map_get(&r.value, "path"), path));
	v = map_get(&r.value, "objects");
	ck_assert(v && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER);
	ck_assert(map_get(&r.value, "bytes")->via.u64 > 0);
	ck_assert(map_get(&r.value, "seconds")->type == MSGPACK_OBJECT_FLOAT64);
	ck_assert(map_get(&r.value, "forked")->via.boolean == fork_mode);

	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq((uint64_t)st.st_size,
			 map_get(&r.value, "file_bytes")->via.u64);

	n = dump_census(path, rows, 64, &objects, &flags);
	ck_assert_int_eq(objects, v->via.u64);
	ck_assert_int_eq(!!(flags & VMHEAP_FLAG_FORKED), fork_mode);
	/* every class the VM counts is in the dump with the same count,
	 * and every class in the dump with objects is in the VM's census */
	for (uint32_t i = 0; i < census.value.via.map.size; i++) {
		const msgpack_object_kv *kv = &census.value.via.map.ptr[i];
		int found = 0;
		census_total += kv->val.via.u64;
		for (int k = 0; k < n; k++)
			if (obj_str_is(&kv->key, rows[k].name)) {
				ck_assert_msg(
				    rows[k].count == kv->val.via.u64,
				    "class %s: dump has %llu, VM has %llu",
				    rows[k].name,
				    (unsigned long long)rows[k].count,
				    (unsigned long long)kv->val.via.u64);
				found = 1;
				matched++;
			}
		ck_assert_msg(found, "class %.*s missing from the dump",
			      (int)kv->key.via.str.size, kv->key.via.str.ptr);
	}
	for (int k = 0; k < n; k++)
		if (rows[k].count)
			ck_assert_msg(map_get(&census.value, rows[k].name),
				      "dump has %llu %s the VM does not",
				      (unsigned long long)rows[k].count,
				      rows[k].name);
	ck_assert_int_eq(census_total, objects);
	/* 25 ticks x 3 Widgets, created by --leak */
	for (int k = 0; k < n; k++)
		if (!strcmp(rows[k].name, "Widget"))
			ck_assert_int_eq(rows[k].count, 75);
	ck_assert_int_ge(matched, 5);
	ck_assert_int_eq(get_int(c, "system.memory.count"), (int64_t)objects);
	ck_assert_int_eq(get_int(c, "system.memory.bytes"),
			 (int64_t)map_get(&r.value, "bytes")->via.u64);

	spec_reply_release(&r);
	spec_reply_release(&census);
	vmheap_client_close(c);
	spec_vm_cleanup(&s);
}

START_TEST(dump_in_process_has_exactly_the_vms_per_class_counts)
{
	check_dump_matches_census(0);
}
END_TEST

START_TEST(dump_in_forked_child_has_exactly_the_vms_per_class_counts)
{
	check_dump_matches_census(1);
}
END_TEST

/* ---------------------------------------------------------------- auth */

START_TEST(wrong_or_missing_token_is_refused)
{
	struct spec_vm *s = spec_fixture_vm();
	vmheap_client *c = NULL;
	struct vmheap_agent_info bad;
	msgpack_unpacked m;
	static const unsigned char get_pid[] = {0x93, 0x01, 0xa3, 'g', 'e', 't',
						0xaa, 's',  'y',  's', 't', 'e',
						'm',  '.',  'p',  'i', 'd'};
	int fd;

	bad = s->info;
	memcpy(bad.token, "00000000000000000000000000000000", 32);
	ck_assert_int_eq(vmheap_client_connect(&c, &bad, 10000),
			 VMHEAP_AGENT_EAUTH);
	ck_assert_msg(strstr(vmheap_client_error(c), "token refused"), "%s",
		      vmheap_client_error(c));
	vmheap_client_close(c);

	/* a short token, and an empty one */
	strcpy(bad.token, "abc");
	ck_assert_int_eq(vmheap_client_connect(&c, &bad, 10000),
			 VMHEAP_AGENT_EAUTH);
	vmheap_client_close(c);
	bad.token[0] = '\0';
	ck_assert_int_eq(vmheap_client_connect(&c, &bad, 10000),
			 VMHEAP_AGENT_EAUTH);
	vmheap_client_close(c);

	/* no auth at all: a request is refused and the connection closed */
	fd = raw_connect(s);
	raw_send_frame(fd, get_pid, sizeof(get_pid));
	msgpack_unpacked_init(&m);
	ck_assert_int_eq(raw_read(fd, &m, 10000), 1);
	ck_assert(obj_str_is(&m.data.via.array.ptr[1], "error"));
	ck_assert(obj_str_is(&m.data.via.array.ptr[2], "auth"));
	msgpack_unpacked_destroy(&m);
	ck_assert(raw_closed(fd, 10000));
	close(fd);

	/* the right token still works */
	c = spec_vm_client(s);
	ck_assert_int_eq(get_int(c, "system.pid"), s->pid);
	vmheap_client_close(c);
}
END_TEST

/* ----------------------------------------------------------- bad input */

struct bad_case {
	const char *what;
	const unsigned char *bytes;
	size_t len;
	const char *code; /* expected error word, NULL: a close is enough */
	int closes;
	int shut; /* shutdown(SHUT_WR) after sending */
};

static void expect_bad(const struct spec_vm *s, const struct bad_case *bc)
{
	msgpack_unpacked m;
	vmheap_client *c;
	int fd = raw_connect(s), rc;

	raw_auth(fd, s->info.token);
	raw_send(fd, bc->bytes, bc->len);
	if (bc->shut)
		shutdown(fd, SHUT_WR);
	msgpack_unpacked_init(&m);
	rc = raw_read(fd, &m, 10000);
	if (bc->code) {
		ck_assert_msg(rc == 1, "%s: no error reply", bc->what);
		ck_assert_msg(obj_str_is(&m.data.via.array.ptr[1], "error"),
			      "%s: not an error reply", bc->what);
		ck_assert_msg(obj_str_is(&m.data.via.array.ptr[2], bc->code),
			      "%s: error %.*s, expected %s", bc->what,
			      (int)m.data.via.array.ptr[2].via.str.size,
			      m.data.via.array.ptr[2].via.str.ptr, bc->code);
	} else {
		ck_assert_msg(rc == 0, "%s: expected a close", bc->what);
	}
	msgpack_unpacked_destroy(&m);
	if (bc->closes)
		ck_assert_msg(raw_closed(fd, 10000),
			      "%s: the connection stayed open", bc->what);
	close(fd);

	/* the VM answers the next client normally */
	c = spec_vm_client(s);
	ck_assert_int_eq(get_int(c, "system.pid"), s->pid);
	vmheap_client_close(c);
}

START_TEST(bad_input_gets_an_error_or_a_close_and_the_next_client_is_served)
{
	static const unsigned char garbage[] =
	    "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	static const unsigned char huge[] = {0xff, 0xff, 0xff, 0xff, 1, 2, 3};
	static const unsigned char truncated[] = {0, 0, 0, 100, 0x93, 0x01};
	static const unsigned char half_header[] = {0, 0};
	static const unsigned char not_array[] = {0, 0, 0, 2, 0x81, 0xc0, 0xc0};
	static const unsigned char bad_msgpack[] = {0, 0, 0, 2, 0x92, 0xc1};
	static const unsigned char claims_many[] = {0,	  0,	0,    5,   0xdd,
						    0x7f, 0xff, 0xff, 0xff};
	static const unsigned char empty[] = {0, 0, 0, 0};
	static const unsigned char path_not_str[] = {
	    0, 0, 0, 7, 0x93, 0x02, 0xa3, 'g', 'e', 't', 0x2a};
	static const unsigned char id_not_int[] = {
	    0, 0, 0, 7, 0x93, 0xa1, 'x', 0xa3, 'g', 'e', 't'};
	static const unsigned char unknown_cmd[] = {
	    0, 0, 0, 9, 0x93, 0x02, 0xa4, 'f', 'r', 'o', 'b', 0xa1, 'x'};
	static const unsigned char unknown_var[] = {
	    0, 0, 0, 9, 0x93, 0x02, 0xa3, 'g', 'e', 't', 0xa2, 'n', 'o'};
	static const unsigned char set_no_value[] = {
	    0, 0, 0, 9, 0x93, 0x02, 0xa3, 's', 'e', 't', 0xa2, 'n', 'o'};
	static const unsigned char dump_not_str[] = {
	    0,	  0,   0,   26,	 0x94, 0x02, 0xa3, 's', 'e', 't',
	    0xb2, 's', 'y', 's', 't',  'e',  'm',  '.', 'm', 'e',
	    'm',  'o', 'r', 'y', '.',  'd',  'u',  'm', 'p', 0x07};
	const struct bad_case cases[] = {
	    {"garbage bytes", garbage, sizeof(garbage) - 1, "limit", 1, 0},
	    {"length 0xFFFFFFFF", huge, sizeof(huge), "limit", 1, 0},
	    {"truncated frame", truncated, sizeof(truncated), "protocol", 1, 1},
	    {"truncated header", half_header, sizeof(half_header), "protocol",
	     1, 1},
	    {"a map, not an array", not_array, sizeof(not_array), "protocol", 1,
	     0},
	    {"invalid MessagePack", bad_msgpack, sizeof(bad_msgpack),
	     "protocol", 1, 0},
	    {"an array claiming 2^31 elements", claims_many,
	     sizeof(claims_many), "protocol", 1, 0},
	    {"an empty frame", empty, sizeof(empty), "protocol", 1, 0},
	    {"a path that is not a string", path_not_str, sizeof(path_not_str),
	     "protocol", 1, 0},
	    {"an id that is not an integer", id_not_int, sizeof(id_not_int),
	     "protocol", 1, 0},
	    {"an unknown command", unknown_cmd, sizeof(unknown_cmd), "command",
	     1, 0},
	    {"set without a value", set_no_value, sizeof(set_no_value),
	     "protocol", 1, 0},
	    {"an unknown variable", unknown_var, sizeof(unknown_var),
	     "notfound", 0, 0},
	    {"a dump path that is not a string", dump_not_str,
	     sizeof(dump_not_str), "type", 0, 0},
	};
	struct spec_vm s;

	spec_vm_start(&s, NULL, NULL, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		expect_bad(&s, &cases[i]);
	/* the VM never stopped */
	ck_assert_int_eq(kill(s.pid, 0), 0);
	ck_assert_int_eq(spec_vm_stop(&s), 0);
	spec_vm_cleanup(&s);
}
END_TEST

START_TEST(a_silent_or_slow_client_is_timed_out)
{
	struct spec_vm_opts o = {.env = (const char *const[]){
				     "VMHEAP_AGENT_IDLE_TIMEOUT_MS=400", NULL}};
	static const unsigned char half[] = {0, 0, 0, 50, 0x93, 0x01};
	msgpack_unpacked m;
	struct spec_vm s;
	int fd;

	spec_vm_start(&s, NULL, NULL, &o);
	/* silent before auth */
	fd = raw_connect(&s);
	msgpack_unpacked_init(&m);
	ck_assert_int_eq(raw_read(fd, &m, 10000), 1);
	ck_assert(obj_str_is(&m.data.via.array.ptr[2], "timeout"));
	/* the configured timeout, not the default of 10 s */
	ck_assert(obj_str_is(&m.data.via.array.ptr[3], "no auth within 400 ms"));
	ck_assert(raw_closed(fd, 10000));
	close(fd);
	/* half a frame after auth */
	fd = raw_connect(&s);
	raw_auth(fd, s.info.token);
	raw_send(fd, half, sizeof(half));
	ck_assert_int_eq(raw_read(fd, &m, 10000), 1);
	ck_assert(obj_str_is(&m.data.via.array.ptr[2], "timeout"));
	ck_assert(raw_closed(fd, 10000));
	close(fd);
	/* idle after auth */
	fd = raw_connect(&s);
	raw_auth(fd, s.info.token);
	ck_assert_int_eq(raw_read(fd, &m, 10000), 1);
	ck_assert(obj_str_is(&m.data.via.array.ptr[2], "timeout"));
	ck_assert(raw_closed(fd, 10000));
	close(fd);
	msgpack_unpacked_destroy(&m);
	spec_vm_cleanup(&s);
}
END_TEST

START_TEST(a_dump_longer_than_the_idle_timeout_still_gets_its_reply)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--walk-delay-ms", "1200", NULL},
	    .env = (const char *const[]){"VMHEAP_AGENT_IDLE_TIMEOUT_MS=300",
					 NULL}};
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;

	spec_vm_start(&s, NULL, NULL, &o);
	c = spec_vm_client(&s);
	call_ok(c, "set", "system.memory.dump", "slow.vmheap", &r);
	ck_assert(map_get(&r.value, "seconds")->via.f64 >= 1.0);
	spec_reply_release(&r);
	/* and the idle timeout applies again afterwards: the agent closes
	 * the connection (ours is then in CLOSE_WAIT) */
	SPEC_WAIT_UNTIL(spec_tcp_count(s.info.port, 0, SPEC_TCP_CLOSE_WAIT) > 0,
			30000, "the agent to close the idle connection");
	/* the agent's nil-id "timeout" notice is not the reply to this
	 * request: the client reports the closed connection, keeping the
	 * agent's words */
	ck_assert_int_eq(spec_client_call(c, "get", "system.pid", NULL, &r),
			 VMHEAP_AGENT_ECLOSED);
	ck_assert(!r.ok && !strcmp(r.code, "timeout"));
	ck_assert(strstr(vmheap_client_error(c), "closed") != NULL);
	spec_reply_release(&r);
	vmheap_client_close(c);
	spec_vm_cleanup(&s);
}
END_TEST

START_TEST(too_many_clients_get_a_clear_refusal)
{
	struct spec_vm_opts o = {
	    .env = (const char *const[]){"VMHEAP_AGENT_MAX_CLIENTS=2", NULL}};
	vmheap_client *a, *b, *c = NULL;
	struct spec_vm s;
	struct spec_wait w;
	int rc;

	spec_vm_start(&s, NULL, NULL, &o);
	a = spec_vm_client(&s);
	b = spec_vm_client(&s);
	rc = vmheap_client_connect(&c, &s.info, 10000);
	ck_assert_int_eq(rc, VMHEAP_AGENT_ELIMIT);
	ck_assert_msg(strstr(vmheap_client_error(c), "too many clients"), "%s",
		      vmheap_client_error(c));
	vmheap_client_close(c);
	vmheap_client_close(b);
	/* a slot is free again once a client leaves */
	spec_wait_begin(&w, 10000);
	for (;;) {
		rc = vmheap_client_connect(&c, &s.info, 10000);
		if (rc == 0)
			break;
		vmheap_client_close(c);
		c = NULL;
		spec_wait_or_fail(&w, "a free client slot");
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(get_int(a, "system.pid"), s.pid);
	vmheap_client_close(c);
	vmheap_client_close(a);
	spec_vm_cleanup(&s);
}
END_TEST

/* ---------------------------------------------------------------- load */

#define LOAD_CLIENTS 100
#define LOAD_REQUESTS 100

struct load_arg {
	const struct spec_vm *s;
	int answered;
	char error[256];
};

static void *load_client(void *p)
{
	struct load_arg *la = p;
	vmheap_client *c = NULL;
	struct spec_reply r;

	if (vmheap_client_connect(&c, &la->s->info, 30000) < 0) {
		snprintf(la->error, sizeof(la->error), "connect: %s",
			 vmheap_client_error(c));
		vmheap_client_close(c);
		return NULL;
	}
	vmheap_client_set_timeout(c, 30000);
	for (int i = 0; i < LOAD_REQUESTS; i++) {
		const char *var = i % 2 ? "system.pid" : "sample.ticks";
		if (spec_client_call(c, "get", var, NULL, &r) < 0) {
			snprintf(la->error, sizeof(la->error), "request %d: %s",
				 i, vmheap_client_error(c));
			break;
		}
		if (r.ok && (i % 2 == 0 || r.value.via.i64 == la->s->pid))
			la->answered++;
		spec_reply_release(&r);
	}
	vmheap_client_close(c);
	return NULL;
}

START_TEST(hundred_concurrent_clients_get_every_answer)
{
	static struct load_arg args[LOAD_CLIENTS];
	pthread_t th[LOAD_CLIENTS];
	struct spec_vm s;
	int total = 0;

	spec_vm_start(&s, NULL, NULL, NULL);
	for (int i = 0; i < LOAD_CLIENTS; i++) {
		args[i].s = &s;
		ck_assert_int_eq(
		    pthread_create(&th[i], NULL, load_client, &args[i]), 0);
	}
	for (int i = 0; i < LOAD_CLIENTS; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(!args[i].error[0], "client %d: %s", i,
			      args[i].error);
		total += args[i].answered;
	}
	ck_assert_int_eq(total, LOAD_CLIENTS * LOAD_REQUESTS);
	spec_vm_cleanup(&s);
}
END_TEST

/* --------------------------------------------------------------- paths */

static void read_file(const char *path, char *buf, size_t len, ssize_t *n)
{
	int fd = open(path, O_RDONLY);

	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	*n = read(fd, buf, len);
	close(fd);
}

START_TEST(dump_to_existing_file_or_outside_the_dir_is_refused)
{
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	char path[PATH_MAX], before[4096], after[4096], list[1024],
	    abs[PATH_MAX];
	ssize_t nb, na;
	int fd;

	spec_vm_start(&s, NULL, NULL, NULL);
	c = spec_vm_client(&s);

	/* an existing file, not a dump: refused and untouched */
	snprintf(path, sizeof(path), "%s/old.vmheap", s.dumpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert(fd >= 0);
	ck_assert(write(fd, "precious data\n", 14) == 14);
	close(fd);
	read_file(path, before, sizeof(before), &nb);
	call_error(c, "set", "system.memory.dump", "old.vmheap", "exists");
	snprintf(abs, sizeof(abs), "%s/old.vmheap", s.dumpdir);
	call_error(c, "set", "system.memory.dump", abs, "exists");
	read_file(path, after, sizeof(after), &na);
	ck_assert_int_eq(na, nb);
	ck_assert(!memcmp(before, after, (size_t)na));

	/* a dump, then the same name again */
	call_ok(c, "set", "system.memory.dump", "one.vmheap", &r);
	spec_reply_release(&r);
	snprintf(path, sizeof(path), "%s/one.vmheap", s.dumpdir);
	read_file(path, before, sizeof(before), &nb);
	call_error(c, "set", "system.memory.dump", "one.vmheap", "exists");
	read_file(path, after, sizeof(after), &na);
	ck_assert(na == nb && !memcmp(before, after, (size_t)na));

	/* leaving the dump directory */
	call_error(c, "set", "system.memory.dump", "../escape.vmheap", "path");
	call_error(c, "set", "system.memory.dump", "a/../../escape.vmheap",
		   "path");
	call_error(c, "set", "system.memory.dump", "..", "path");
	snprintf(abs, sizeof(abs), "%s/escape.vmheap", s.tmpdir);
	call_error(c, "set", "system.memory.dump", abs, "path");
	call_error(c, "set", "system.memory.dump", "/etc/escape.vmheap",
		   "path");
	/* a symlink to a directory outside is not followed */
	snprintf(path, sizeof(path), "%s/link", s.dumpdir);
	ck_assert(symlink(s.tmpdir, path) == 0);
	call_error(c, "set", "system.memory.dump", "link/escape.vmheap",
		   "path");
	call_error(c, "set", "system.memory.dump", "nodir/x.vmheap", "path");
	call_error(c, "set", "system.memory.dump", "", "type");

	dir_listing(s.tmpdir, list, sizeof(list));
	ck_assert_msg(!strstr(list, "escape"), "%s", list);
	ck_assert_int_eq(access("/etc/escape.vmheap", F_OK), -1);
	dir_listing(s.dumpdir, list, sizeof(list));
	ck_assert_str_eq(list, "link old.vmheap one.vmheap");

	/* a subdirectory inside is fine, and an absolute path inside */
	snprintf(path, sizeof(path), "%s/sub", s.dumpdir);
	ck_assert(mkdir(path, 0700) == 0);
	call_ok(c, "set", "system.memory.dump", "sub/.//two.vmheap", &r);
	snprintf(abs, sizeof(abs), "%s/sub/two.vmheap", s.dumpdir);
	ck_assert(obj_str_is(map_get(&r.value, "path"), abs));
	spec_reply_release(&r);
	snprintf(abs, sizeof(abs), "%s/sub/three.vmheap", s.dumpdir);
	call_ok(c, "set", "system.memory.dump", abs, &r);
	ck_assert(obj_str_is(map_get(&r.value, "path"), abs));
	spec_reply_release(&r);
	dir_listing(path, list, sizeof(list));
	ck_assert_str_eq(list, "three.vmheap two.vmheap");

	vmheap_client_close(c);
	spec_vm_cleanup(&s);
}
END_TEST

/* -------------------------------------------------------------- faults */

static void full_disk(int fork_mode)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--leak", "Blob:400", "--ticks", "10",
					  "--tick-ms", "1", NULL},
	    .fsize_limit = 16384};
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	char list[1024];

	spec_vm_start(&s, NULL, NULL, &o);
	c = spec_vm_client(&s);
	wait_ticks(c, 10);
	call_ok(c, "set", "config.dump.fork", fork_mode ? "on" : "off", &r);
	spec_reply_release(&r);
	call_error(c, "set", "system.memory.dump", "full.vmheap", "nospace");
	dir_listing(s.dumpdir, list, sizeof(list));
	ck_assert_msg(list[0] == '\0', "files left behind: %s", list);
	/* the VM is fine and serves the next request */
	ck_assert_int_eq(get_int(c, "system.pid"), s.pid);
	ck_assert_int_eq(get_int(c, "sample.ticks"), 10);
	vmheap_client_close(c);
	ck_assert_int_eq(spec_vm_stop(&s), 0);
	spec_vm_cleanup(&s);
}

START_TEST(dump_onto_a_full_disk_fails_cleanly_in_process)
{
	full_disk(0);
}
END_TEST

START_TEST(dump_onto_a_full_disk_fails_cleanly_in_a_forked_child)
{
	full_disk(1);
}
END_TEST

static void disconnect_mid_dump(int fork_mode)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--walk-delay-ms", "1500", "--leak",
					  "Session:5", NULL}};
	static const unsigned char req_head[] = {0x94, 0x07, 0xa3,
						 's',  'e',  't'};
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	char list[1024];
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct spec_wait w;
	int fd;

	spec_vm_start(&s, NULL, NULL, &o);
	c = spec_vm_client(&s);
	call_ok(c, "set", "config.dump.fork", fork_mode ? "true" : "false", &r);
	spec_reply_release(&r);

	/* a raw client asks for a dump and leaves at once */
	fd = raw_connect(&s);
	raw_auth(fd, s.info.token);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_sbuffer_write(&sb, (const char *)req_head, sizeof(req_head));
	msgpack_pack_str(&pk, 18);
	msgpack_pack_str_body(&pk, "system.memory.dump", 18);
	msgpack_pack_str(&pk, 11);
	msgpack_pack_str_body(&pk, "left.vmheap", 11);
	raw_send_frame(fd, sb.data, (uint32_t)sb.size);
	msgpack_sbuffer_destroy(&sb);

	/* the dump is running (the client leaves once it has begun); other
	 * requests are answered meanwhile, and a second dump is refused as
	 * busy: so those replies came while the dump ran */
	spec_wait_begin(&w, 10000);
	for (;;) {
		int dumping;

		call_ok(c, "get", "system.memory.dumping", NULL, &r);
		dumping = r.value.type == MSGPACK_OBJECT_BOOLEAN &&
			  r.value.via.boolean;
		spec_reply_release(&r);
		if (dumping)
			break;
		spec_wait_or_fail(&w, "the dump to begin");
	}
	close(fd);
	ck_assert_int_eq(get_int(c, "system.pid"), s.pid);
	call_ok(c, "get", "sample.census", NULL, &r);
	spec_reply_release(&r);
	call_error(c, "set", "system.memory.dump", "second.vmheap", "busy");

	wait_dump_idle(c);
	dir_listing(s.dumpdir, list, sizeof(list));
	ck_assert_msg(!strcmp(list, "left.vmheap"),
		      "expected only the finished dump, found: %s", list);
	/* and the VM still dumps */
	call_ok(c, "set", "system.memory.dump", "after.vmheap", &r);
	spec_reply_release(&r);
	dir_listing(s.dumpdir, list, sizeof(list));
	ck_assert_str_eq(list, "after.vmheap left.vmheap");
	vmheap_client_close(c);
	ck_assert_int_eq(spec_vm_stop(&s), 0);
	spec_vm_cleanup(&s);
}

START_TEST(a_forked_dump_that_hangs_is_killed_after_the_timeout)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--walk-delay-ms", "30000", NULL}};
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	char list[1024];

	spec_vm_start(&s, NULL, NULL, &o);
	c = spec_vm_client(&s);
	call_ok(c, "set", "config.dump.fork", "true", &r);
	spec_reply_release(&r);
	call_ok(c, "set", "config.dump.timeout", "1", &r);
	ck_assert_int_eq(r.value.via.i64, 1);
	spec_reply_release(&r);
	call_error(c, "set", "config.dump.timeout", "0", "type");
	/* ended by the timeout of 1 s, not by the walk's 30 s (killed by
	 * the agent, or by the child's own guard at the same deadline: the
	 * reply says the timeout either way) */
	ck_assert_int_eq(spec_client_call_str(c, "set", "system.memory.dump",
					      "stuck.vmheap", &r),
			 0);
	ck_assert_msg(!r.ok && !strcmp(r.code, "dump") &&
			  strstr(r.message, "config.dump.timeout (1 s) and was "
					    "killed"),
		      "%s: %s", r.code, r.message);
	spec_reply_release(&r);
	dir_listing(s.dumpdir, list, sizeof(list));
	ck_assert_msg(list[0] == '\0', "files left behind: %s", list);
	ck_assert_int_eq(get_int(c, "system.pid"), s.pid);
	vmheap_client_close(c);
	ck_assert_int_eq(spec_vm_stop(&s), 0);
	spec_vm_cleanup(&s);
}
END_TEST

START_TEST(client_leaving_mid_dump_leaves_no_temp_file_in_process)
{
	disconnect_mid_dump(0);
}
END_TEST

START_TEST(client_leaving_mid_dump_leaves_no_temp_file_in_a_forked_child)
{
	disconnect_mid_dump(1);
}
END_TEST

/* ------------------------------------------------------- lifecycle */

START_TEST(the_agent_refuses_to_listen_beyond_loopback)
{
	/* fatal only when required (else the VM warns and runs on: see
	 * agent_ops_test.c) */
	struct spec_vm_opts o = {
	    .env = (const char *const[]){"VMHEAP_AGENT_BIND=0.0.0.0",
					 "VMHEAP_AGENT_REQUIRED=1", NULL}};
	struct spec_vm_opts p = {
	    .env = (const char *const[]){"VMHEAP_AGENT_PORT=99999",
					 "VMHEAP_AGENT_REQUIRED=1", NULL}};
	char *err;
	int st;

	st = spec_vm_run_to_exit(&o, &err);
	ck_assert_msg(st == 1, "exit code %d", st);
	ck_assert_msg(strstr(err, "refusing to listen on 0.0.0.0"), "%s", err);
	free(err);
	st = spec_vm_run_to_exit(&p, &err);
	ck_assert_msg(st == 1, "exit code %d", st);
	ck_assert_msg(strstr(err, "VMHEAP_AGENT_PORT=99999"), "%s", err);
	free(err);
}
END_TEST

START_TEST(sigterm_removes_the_discovery_file)
{
	struct spec_vm *s = spec_fixture_vm();
	int status;

	ck_assert_int_eq(access(s->discovery, F_OK), 0);
	status = spec_vm_stop(s);
	ck_assert_msg(status == 0, "exit code %d", status);
	ck_assert_msg(access(s->discovery, F_OK) < 0 && errno == ENOENT,
		      "%s is still there", s->discovery);
}
END_TEST

START_TEST(fork_in_the_host_leaves_the_parent_agent_working)
{
	struct spec_vm *s = spec_fixture_vm();
	vmheap_client *a, *b;
	struct spec_reply r;
	int64_t child, st;

	a = spec_vm_client(s);
	call_ok(a, "set", "sample.fork", "300", &r);
	child = r.value.via.i64;
	spec_reply_release(&r);
	ck_assert_int_gt(child, 0);
	ck_assert_int_ne(child, s->pid);

	/* while the child lives, the parent answers new and old clients */
	b = spec_vm_client(s);
	ck_assert_int_eq(vmheap_client_pid(b), s->pid);
	ck_assert_int_eq(get_int(b, "system.pid"), s->pid);
	ck_assert_int_eq(get_int(a, "system.pid"), s->pid);
	vmheap_client_close(b);

	SPEC_WAIT_UNTIL((st = get_int(a, "sample.fork_status")) >= 0, 20000,
			"the forked child to exit");
	/* 0: the child saw its copy of the agent as stale */
	ck_assert_int_eq(st, 0);
	/* the child's exit did not remove the parent's discovery file */
	ck_assert_int_eq(access(s->discovery, F_OK), 0);
	b = spec_vm_client(s);
	ck_assert_int_eq(get_int(b, "system.pid"), s->pid);
	call_ok(b, "set", "system.memory.dump", "after-fork.vmheap", &r);
	spec_reply_release(&r);
	vmheap_client_close(b);
	ck_assert_int_eq(get_int(a, "system.pid"), s->pid);
	vmheap_client_close(a);
	ck_assert_int_eq(spec_vm_stop(s), 0);
	ck_assert_int_eq(access(s->discovery, F_OK), -1);
}
END_TEST

struct two {
	int n;
	struct vmheap_agent_info info[4];
};

static void on_found_two(void *arg, const struct vmheap_agent_info *info)
{
	struct two *t = arg;

	if (t->n < 4)
		t->info[t->n] = *info;
	t->n++;
}

START_TEST(fork_child_may_start_a_fresh_agent_of_its_own)
{
	struct spec_vm *s = spec_fixture_vm();
	vmheap_client *a, *b = NULL;
	struct spec_reply r;
	struct two t;
	int64_t child, st;
	char child_file[PATH_MAX];
	struct spec_wait w;
	int rc;

	a = spec_vm_client(s);
	/* The child's agent lives 4 s: long enough to be seen by a test
	 * that a loaded machine (two sanitized suites at once) starves. */
	call_ok(a, "set", "sample.fork_agent", "4000", &r);
	child = r.value.via.i64;
	spec_reply_release(&r);
	snprintf(child_file, sizeof(child_file), "%s/vmheap-agent.%d",
		 s->tmpdir, (int)child);

	/* the child's own agent appears beside the parent's */
	spec_wait_begin(&w, 30000);
	for (;;) {
		memset(&t, 0, sizeof(t));
		rc = vmheap_discovery_list(s->tmpdir, on_found_two, NULL, &t);
		if (rc >= 2)
			break;
		if (!spec_wait_next(&w)) {
			/* The child's exit status says which side failed:
			 * 4, its fresh agent did not start; -1, still
			 * running. */
			ck_abort_msg(
			    "gave up after %d polls waiting for the "
			    "child's agent (pid %d): %d agent files "
			    "listed; the child's status %lld",
			    w.polls, (int)child, rc,
			    (long long)get_int(a, "sample.fork_status"));
		}
	}
	ck_assert_int_eq(t.n, 2);
	ck_assert_int_eq(t.info[0].pid < t.info[1].pid ? t.info[0].pid
						       : t.info[1].pid,
			 s->pid < child ? s->pid : (pid_t)child);
	for (int i = 0; i < 2; i++)
		if (t.info[i].pid == child) {
			ck_assert_int_ne(t.info[i].port, s->info.port);
			ck_assert_str_ne(t.info[i].token, s->info.token);
			rc = vmheap_client_connect(&b, &t.info[i], 10000);
			ck_assert_msg(rc == 0, "%s", vmheap_client_error(b));
		}
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(get_int(b, "system.pid"), child);
	vmheap_client_close(b);
	ck_assert_int_eq(get_int(a, "system.pid"), s->pid);

	SPEC_WAIT_UNTIL((st = get_int(a, "sample.fork_status")) >= 0, 20000,
			"the forked child to exit");
	ck_assert_int_eq(st, 0);
	/* the child's agent removed its own file, and only its own */
	ck_assert_int_eq(access(child_file, F_OK), -1);
	ck_assert_int_eq(access(s->discovery, F_OK), 0);
	ck_assert_int_eq(get_int(a, "system.pid"), s->pid);
	vmheap_client_close(a);
}
END_TEST

/* ----------------------------------------------------------- discovery */

static void write_file(const char *path, const char *body, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert(fd >= 0);
	ck_assert(write(fd, body, strlen(body)) == (ssize_t)strlen(body));
	close(fd);
	chmod(path, mode);
}

struct bads {
	struct found f; /* first: on_found takes it */
	int n;
	char why[4][512];
};

static void on_bad(void *arg, const char *path, const char *why)
{
	struct bads *b = arg;

	(void)path;
	if (b->n < 4)
		snprintf(b->why[b->n], sizeof(b->why[0]), "%s", why);
	b->n++;
}

START_TEST(discovery_refuses_unsafe_files_and_removes_dead_agents)
{
	char dir[] = "/tmp/vmheap-disc-test.XXXXXX", path[PATH_MAX], err[512],
	     body[512];
	struct vmheap_agent_info info;
	struct bads b = {0};
	pid_t dead;
	int status;

	ck_assert(mkdtemp(dir));
	/* a dead pid */
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, &status, 0);
	snprintf(body, sizeof(body),
		 "pid=%d\naddress=tcp://127.0.0.1:1\n"
		 "token=0123456789abcdef0123456789abcdef\nstarted=1\n",
		 (int)dead);
	snprintf(path, sizeof(path), "%s/vmheap-agent.%d", dir, (int)dead);
	write_file(path, body, 0600);
	ck_assert_int_eq(vmheap_discovery_read(path, &info, err, sizeof(err)),
			 0);
	ck_assert_int_eq(info.port, 1);

	/* a symlink to a good file */
	snprintf(body, sizeof(body), "%s/vmheap-agent.%d", dir, (int)getpid());
	ck_assert(symlink(path, body) == 0);
	ck_assert_int_eq(vmheap_discovery_read(body, &info, err, sizeof(err)),
			 VMHEAP_AGENT_EDISCOVERY);
	ck_assert_msg(strstr(err, "symbolic link"), "%s", err);

	/* readable by others */
	snprintf(path, sizeof(path), "%s/vmheap-agent.1", dir);
	write_file(path, "pid=1\n", 0644);
	ck_assert_int_eq(vmheap_discovery_read(path, &info, err, sizeof(err)),
			 VMHEAP_AGENT_EDISCOVERY);
	ck_assert_msg(strstr(err, "0600"), "%s", err);

	/* malformed */
	snprintf(path, sizeof(path), "%s/vmheap-agent.2", dir);
	write_file(path, "pid=2\naddress=nowhere\ntoken=xyz\nstarted=1\n",
		   0600);
	ck_assert_int_eq(vmheap_discovery_read(path, &info, err, sizeof(err)),
			 VMHEAP_AGENT_EDISCOVERY);
	ck_assert_msg(strstr(err, "address"), "%s", err);

	ck_assert_int_eq(vmheap_discovery_list(dir, on_found, on_bad, &b), 0);
	ck_assert_int_eq(b.f.n, 0);
	/* the symlink, the 0644 file and the malformed one */
	ck_assert_msg(b.n == 3, "%d bad files: %s | %s", b.n, b.why[0],
		      b.why[1]);
	/* the dead agent's file is gone; the unusable ones are left */
	snprintf(path, sizeof(path), "%s/vmheap-agent.%d", dir, (int)dead);
	ck_assert_int_eq(access(path, F_OK), -1);

	snprintf(body, sizeof(body), "rm -rf %s", dir);
	ck_assert_int_eq(system(body), 0);
}
END_TEST

START_TEST(a_vm_that_dies_gives_closed_not_a_hang)
{
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	int status, rc;

	spec_vm_start(&s, NULL, NULL, NULL);
	c = spec_vm_client(&s);
	ck_assert_int_eq(get_int(c, "system.pid"), s.pid);
	kill(s.pid, SIGKILL);
	waitpid(s.pid, &status, 0);
	s.pid = 0;
	rc = spec_client_call(c, "get", "system.pid", NULL, &r);
	ck_assert_int_eq(rc, VMHEAP_AGENT_ECLOSED);
	ck_assert_msg(strstr(vmheap_client_error(c), "closed"), "%s",
		      vmheap_client_error(c));
	spec_reply_release(&r);
	/* and again: the client stays usable as an object */
	ck_assert_int_eq(spec_client_call(c, "get", "system.pid", NULL, &r),
			 VMHEAP_AGENT_ECLOSED);
	spec_reply_release(&r);
	vmheap_client_close(c);
	/* its discovery file is stale now: a listing removes it */
	ck_assert_int_eq(access(s.discovery, F_OK), 0);
	ck_assert_int_eq(vmheap_discovery_list(s.tmpdir, NULL, NULL, NULL), 0);
	ck_assert_int_eq(access(s.discovery, F_OK), -1);
	spec_vm_cleanup(&s);
}
END_TEST

START_TEST(a_reused_pid_does_not_revive_a_dead_agents_file)
{
	char dir[] = "/tmp/vmheap-disc-test.XXXXXX", path[PATH_MAX], body[512];

	ck_assert(mkdtemp(dir));
	/* our own pid is alive, but it started at another time */
	snprintf(body, sizeof(body),
		 "pid=%d\naddress=tcp://127.0.0.1:1\n"
		 "token=0123456789abcdef0123456789abcdef\nstarted=1\n"
		 "proc_start=1\n",
		 (int)getpid());
	snprintf(path, sizeof(path), "%s/vmheap-agent.%d", dir, (int)getpid());
	write_file(path, body, 0600);
	ck_assert_int_eq(vmheap_discovery_list(dir, NULL, NULL, NULL), 0);
	ck_assert_int_eq(access(path, F_OK), -1);
	snprintf(body, sizeof(body), "rm -rf %s", dir);
	ck_assert_int_eq(system(body), 0);
}
END_TEST

/* ------------------------------------------------------ PROTOCOL.md */

struct md_frame {
	int from_agent; /* A> */
	int eof;	/* "A> EOF" */
	unsigned char *bytes;
	size_t len;
};

static int parse_protocol_md(struct md_frame *f, int max)
{
	const char *src = getenv("VMHEAP_SRC");
	char path[PATH_MAX], line[8192];
	FILE *fp;
	int n = 0;

	ck_assert_msg(src, "VMHEAP_SRC is not set");
	snprintf(path, sizeof(path), "%s/agent/PROTOCOL.md", src);
	fp = fopen(path, "r");
	ck_assert_msg(fp, "cannot open %s", path);
	while (fgets(line, sizeof(line), fp)) {
		char *p = line + 2;
		if (strncmp(line, "C> ", 3) && strncmp(line, "A> ", 3))
			continue;
		ck_assert(n < max);
		memset(&f[n], 0, sizeof(f[n]));
		f[n].from_agent = line[0] == 'A';
		if (!strncmp(line, "A> EOF", 6)) {
			f[n++].eof = 1;
			continue;
		}
		f[n].bytes = malloc(strlen(line));
		for (;;) {
			char *end;
			unsigned long b = strtoul(p, &end, 16);
			if (end == p)
				break;
			ck_assert(b <= 255);
			f[n].bytes[f[n].len++] = (unsigned char)b;
			p = end;
		}
		n++;
	}
	fclose(fp);
	return n;
}

/* Decode a documented frame, checking its length prefix and that the
 * real encoder gives exactly these bytes back. */
static void decode_md_frame(const struct md_frame *f, msgpack_unpacked *m)
{
	uint32_t len;
	size_t off = 0;
	msgpack_sbuffer sb;
	msgpack_packer pk;

	ck_assert(f->len > 4);
	len = (uint32_t)f->bytes[0] << 24 | f->bytes[1] << 16 |
	      f->bytes[2] << 8 | f->bytes[3];
	ck_assert_msg(len == f->len - 4, "length prefix %u, payload %zu", len,
		      f->len - 4);
	ck_assert(msgpack_unpack_next(m, (const char *)f->bytes + 4, len,
				      &off) == MSGPACK_UNPACK_SUCCESS);
	ck_assert(off == len);
	ck_assert(m->data.type == MSGPACK_OBJECT_ARRAY);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_object(&pk, m->data);
	ck_assert_msg(sb.size == len && !memcmp(sb.data, f->bytes + 4, len),
		      "documented frame is not what msgpack-c encodes");
	msgpack_sbuffer_destroy(&sb);
}

static void same_shape(const msgpack_object *want, const msgpack_object *got,
		       int frame)
{
	const msgpack_object *w = want->via.array.ptr, *g = got->via.array.ptr;

	ck_assert_msg(want->via.array.size == got->via.array.size,
		      "frame %d: %u elements, documented %u", frame,
		      got->via.array.size, want->via.array.size);
	if (obj_str_is(&w[0], "hello")) {
		ck_assert(obj_str_is(&g[0], "hello"));
		ck_assert(g[1].via.u64 == w[1].via.u64);
		ck_assert(g[2].type == w[2].type && g[3].type == w[3].type);
		return;
	}
	ck_assert_msg(msgpack_object_equal(w[0], g[0]) &&
			  msgpack_object_equal(w[1], g[1]),
		      "frame %d: different id or status", frame);
	if (obj_str_is(&w[1], "error")) {
		ck_assert_msg(msgpack_object_equal(w[2], g[2]),
			      "frame %d: different error code", frame);
		return;
	}
	ck_assert_msg(w[2].type == g[2].type,
		      "frame %d: value type %d, documented %d", frame,
		      g[2].type, w[2].type);
	if (w[2].type == MSGPACK_OBJECT_MAP) {
		ck_assert(w[2].via.map.size == g[2].via.map.size);
		for (uint32_t i = 0; i < w[2].via.map.size; i++) {
			const msgpack_object *k = &w[2].via.map.ptr[i].key;
			char key[128];

			ck_assert(k->type == MSGPACK_OBJECT_STR &&
				  k->via.str.size < sizeof(key));
			memcpy(key, k->via.str.ptr, k->via.str.size);
			key[k->via.str.size] = '\0';
			ck_assert_msg(map_get(&g[2], key),
				      "frame %d: no key %s in the reply", frame,
				      key);
		}
	}
}

START_TEST(protocol_md_example_is_real_encoder_output_and_replays)
{
	struct md_frame f[64];
	struct spec_vm s;
	int n = parse_protocol_md(f, 64), fd = -1, replies = 0;

	ck_assert_int_ge(n, 10);
	spec_vm_start(&s, NULL, NULL, NULL);
	fd = spec_tcp_connect(s.info.port);
	ck_assert(fd >= 0);
	for (int i = 0; i < n; i++) {
		msgpack_unpacked want, got;

		if (f[i].eof) {
			ck_assert_msg(raw_closed(fd, 10000),
				      "frame %d: expected a close", i);
			continue;
		}
		msgpack_unpacked_init(&want);
		msgpack_unpacked_init(&got);
		decode_md_frame(&f[i], &want);
		if (f[i].from_agent) {
			ck_assert_msg(raw_read(fd, &got, 10000) == 1,
				      "frame %d: no frame from the agent", i);
			same_shape(&want.data, &got.data, i);
			replies++;
		} else if (obj_str_is(&want.data.via.array.ptr[1], "auth")) {
			raw_auth_no_reply(fd, s.info.token,
					  want.data.via.array.ptr[0].via.u64);
		} else {
			raw_send(fd, f[i].bytes, f[i].len);
		}
		msgpack_unpacked_destroy(&want);
		msgpack_unpacked_destroy(&got);
		free(f[i].bytes);
	}
	ck_assert_int_ge(replies, 8);
	close(fd);
	spec_vm_cleanup(&s);
}
END_TEST

/* ------------------------------------------------------------ long jobs */

/* Whether dumps/ holds a dump's temporary file (the dump has begun). */
static int dump_tmp_present(const char *dumps)
{
	char list[1024];

	dir_listing(dumps, list, sizeof(list));
	return strstr(list, ".vmheap-dump.") != NULL;
}

/* A dump's per-class counts, read back whole (a damaged or cut-short
 * file fails the test). */
struct dump_counts {
	struct census_row rows[64];
	int n;
	uint64_t objects;
};

static void read_dump_counts(const char *dir, const char *name,
			     struct dump_counts *d)
{
	char path[PATH_MAX];
	uint32_t flags;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	d->n = dump_census(path, d->rows, 64, &d->objects, &flags);
}

static void client_vanishes_while_its_dump_runs(int fork_mode)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--walk-delay-ms", "2500", "--leak",
					  "Widget:5", "--ticks", "4",
					  "--tick-ms", "1", NULL}};
	struct spec_vm s;
	vmheap_client *c;
	struct spec_reply r;
	char list[1024], path[PATH_MAX];
	struct dump_counts left, next;
	uint64_t widgets = 0;

	spec_vm_start(&s, NULL, NULL, &o);
	c = spec_vm_client(&s);
	wait_ticks(c, 4);
	call_ok(c, "set", "config.dump.fork", fork_mode ? "true" : "false", &r);
	spec_reply_release(&r);
	vmheap_client_close(c);

	/* a client asks for a dump, gives up waiting, and leaves while the
	 * dump runs */
	c = spec_vm_client(&s);
	vmheap_client_set_timeout(c, 300);
	ck_assert_int_eq(spec_client_call_str(c, "set", "system.memory.dump",
					      "left.vmheap", &r),
			 VMHEAP_AGENT_ETIMEOUT);
	spec_reply_release(&r);
	vmheap_client_close(c);
	SPEC_WAIT_UNTIL(dump_tmp_present(s.dumpdir), 10000,
			"the orphaned dump's temporary file");

	/* the next client is served while the orphaned dump runs */
	c = spec_vm_client(&s);
	vmheap_client_set_timeout(c, 30000);
	ck_assert_int_eq(get_int(c, "system.pid"), s.pid);
	/* ... and that reply came while the dump still ran */
	call_ok(c, "get", "system.memory.dumping", NULL, &r);
	ck_assert(r.value.type == MSGPACK_OBJECT_BOOLEAN &&
		  r.value.via.boolean);
	spec_reply_release(&r);

	/* the dump completes: a whole file under its name, nothing else */
	wait_dump_idle(c);
	dir_listing(s.dumpdir, list, sizeof(list));
	ck_assert_str_eq(list, "left.vmheap");
	read_dump_counts(s.dumpdir, "left.vmheap", &left);
	for (int k = 0; k < left.n; k++)
		if (!strcmp(left.rows[k].name, "Widget"))
			widgets = left.rows[k].count;
	ck_assert_int_eq(widgets, 20); /* 4 ticks x 5, by --leak */
	/* its result is the last dump's, as if the client had stayed */
	snprintf(path, sizeof(path), "%s/left.vmheap", s.dumpdir);
	call_ok(c, "get", "system.memory.dump", NULL, &r);
	ck_assert(obj_str_is(map_get(&r.value, "path"), path));
	ck_assert_int_eq(map_get(&r.value, "objects")->via.u64, left.objects);
	spec_reply_release(&r);

	/* and the next dump works, with its reply; the heap has not
	 * changed (the mutator stopped), so both files hold the same */
	call_ok(c, "set", "system.memory.dump", "next.vmheap", &r);
	snprintf(path, sizeof(path), "%s/next.vmheap", s.dumpdir);
	ck_assert(obj_str_is(map_get(&r.value, "path"), path));
	ck_assert(map_get(&r.value, "forked")->via.boolean == fork_mode);
	ck_assert_int_eq(map_get(&r.value, "objects")->via.u64, left.objects);
	spec_reply_release(&r);
	read_dump_counts(s.dumpdir, "next.vmheap", &next);
	ck_assert_int_eq(next.objects, left.objects);
	ck_assert_int_eq(next.n, left.n);
	for (int k = 0; k < left.n; k++) {
		int found = 0;

		for (int i = 0; i < next.n; i++)
			if (!strcmp(next.rows[i].name, left.rows[k].name)) {
				ck_assert_int_eq(next.rows[i].count,
						 left.rows[k].count);
				found = 1;
			}
		ck_assert_msg(found, "class %s only in the first dump",
			      left.rows[k].name);
	}
	vmheap_client_close(c);
	ck_assert_int_eq(spec_vm_stop(&s), 0);
	spec_vm_cleanup(&s);
}

START_TEST(a_client_gone_mid_dump_leaves_a_whole_file_in_process)
{
	client_vanishes_while_its_dump_runs(0);
}
END_TEST

START_TEST(a_client_gone_mid_dump_leaves_a_whole_file_in_a_forked_child)
{
	client_vanishes_while_its_dump_runs(1);
}
END_TEST

struct dumper {
	vmheap_client *c; /* connected on the test's thread */
	int rc;
	struct spec_reply r;
};

/* Client A: one dump, waited for in a thread of its own. */
static void *dump_in_thread(void *p)
{
	struct dumper *d = p;

	vmheap_client_set_timeout(d->c, 30000);
	d->rc = spec_client_call_str(d->c, "set", "system.memory.dump",
				     "a.vmheap", &d->r);
	return NULL;
}

START_TEST(a_second_client_gets_busy_while_a_dump_runs_then_dumps)
{
	struct spec_vm_opts o = {
	    .args = (const char *const[]){"--walk-delay-ms", "1000", NULL}};
	struct dumper d = {0};
	struct spec_vm s;
	vmheap_client *b;
	struct spec_reply r;
	char list[1024], want[PATH_MAX];
	pthread_t th;
	struct spec_wait w;
	int dumping = 0;

	spec_vm_start(&s, NULL, NULL, &o);
	d.c = spec_vm_client(&s);
	b = spec_vm_client(&s);
	vmheap_client_set_timeout(b, 30000);
	ck_assert_int_eq(pthread_create(&th, NULL, dump_in_thread, &d), 0);
	spec_wait_begin(&w, 10000);
	for (;;) {
		call_ok(b, "get", "system.memory.dumping", NULL, &r);
		dumping = r.value.type == MSGPACK_OBJECT_BOOLEAN &&
			  r.value.via.boolean;
		spec_reply_release(&r);
		if (dumping)
			break;
		spec_wait_or_fail(&w, "client A's dump to begin");
	}
	/* B is refused while A's dump runs, and keeps its connection */
	call_error(b, "set", "system.memory.dump", "b.vmheap", "busy");
	ck_assert_int_eq(get_int(b, "system.pid"), s.pid);
	pthread_join(th, NULL);
	ck_assert_int_eq(d.rc, 0);
	ck_assert_msg(d.r.ok, "client A: %s %s", d.r.code, d.r.message);
	snprintf(want, sizeof(want), "%s/a.vmheap", s.dumpdir);
	ck_assert(obj_str_is(map_get(&d.r.value, "path"), want));
	spec_reply_release(&d.r);
	vmheap_client_close(d.c);
	/* A has its reply: the agent is no longer busy, without a pause */
	call_ok(b, "set", "system.memory.dump", "b.vmheap", &r);
	snprintf(want, sizeof(want), "%s/b.vmheap", s.dumpdir);
	ck_assert(obj_str_is(map_get(&r.value, "path"), want));
	spec_reply_release(&r);
	dir_listing(s.dumpdir, list, sizeof(list));
	ck_assert_str_eq(list, "a.vmheap b.vmheap");
	vmheap_client_close(b);
	ck_assert_int_eq(spec_vm_stop(&s), 0);
	spec_vm_cleanup(&s);
}
END_TEST

/* The job registry (job.c) on its own, with jobs held at a gate. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open;
	int woken; /* wake calls */
};

struct gated_job {
	struct gate *gate;
	int value; /* packed as the reply value */
	int code;  /* or this error */
};

struct delivery {
	uint64_t handle;
	int code;
	char message[64];
	int64_t value;
};

struct registry_test {
	struct gate gate;
	struct delivery got[8];
	int ngot;
};

static int gated_job_run(void *arg, msgpack_packer *value, char *err,
			 size_t errlen)
{
	struct gated_job *job = arg;
	struct gate *g = job->gate;

	pthread_mutex_lock(&g->lock);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
	if (job->code < 0) {
		snprintf(err, errlen, "job %d failed", job->value);
		return job->code;
	}
	msgpack_pack_int(value, job->value);
	return 0;
}

static void registry_wake(void *arg)
{
	struct registry_test *t = arg;

	pthread_mutex_lock(&t->gate.lock);
	t->gate.woken++;
	pthread_cond_broadcast(&t->gate.cond);
	pthread_mutex_unlock(&t->gate.lock);
}

static void registry_done(void *arg, uint64_t handle,
			  const struct agent_job_result *res)
{
	struct registry_test *t = arg;
	struct delivery *d = &t->got[t->ngot++];
	msgpack_unpacked m;

	d->handle = handle;
	d->code = res->code;
	snprintf(d->message, sizeof(d->message), "%s",
		 res->code < 0 ? res->message : "");
	d->value = -1;
	if (res->code == 0) {
		msgpack_unpacked_init(&m);
		ck_assert(msgpack_unpack_next(&m, res->value, res->value_len,
					      NULL) == MSGPACK_UNPACK_SUCCESS);
		d->value = m.data.via.i64;
		msgpack_unpacked_destroy(&m);
	}
}

static void wait_woken(struct registry_test *t, int n)
{
	struct spec_wait w;
	int woken;

	spec_wait_begin(&w, 10000);
	w.interval_ms = 2;
	pthread_mutex_lock(&t->gate.lock);
	while ((woken = t->gate.woken) < n) {
		pthread_mutex_unlock(&t->gate.lock);
		spec_wait_or_fail(&w, "%d jobs to wake us (%d did)", n, woken);
		pthread_mutex_lock(&t->gate.lock);
	}
	pthread_mutex_unlock(&t->gate.lock);
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = 1;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

START_TEST(the_job_registry_refuses_a_second_job_of_a_kind_and_delivers)
{
	static struct registry_test t = {.gate = {PTHREAD_MUTEX_INITIALIZER,
						  PTHREAD_COND_INITIALIZER, 0,
						  0}};
	struct gated_job dump = {&t.gate, 42, 0}, histo = {&t.gate, 7, 0};
	struct agent_jobs *j;
	uint64_t h1, h2, h3, h4, h5;

	ck_assert_int_eq(agent_jobs_new(&j, registry_wake, registry_done, &t),
			 0);
	ck_assert_int_eq(
	    agent_job_start(j, "dump", gated_job_run, &dump, sizeof(dump), &h1),
	    0);
	ck_assert(h1 != 0);
	/* one dump at a time; another kind may run beside it */
	ck_assert_int_eq(
	    agent_job_start(j, "dump", gated_job_run, &dump, sizeof(dump), &h2),
	    VMHEAP_AGENT_EBUSY);
	ck_assert(agent_job_running(j, "dump"));
	ck_assert(!agent_job_running(j, "histogram"));
	histo.code = VMHEAP_AGENT_EDUMP;
	ck_assert_int_eq(agent_job_start(j, "histogram", gated_job_run, &histo,
					 sizeof(histo), &h2),
			 0);
	ck_assert(h2 != 0 && h2 != h1);
	/* the registry kept copies: the caller's structs may change */
	dump.value = 43;
	ck_assert_int_eq(agent_jobs_deliver(j), 0);
	ck_assert_int_eq(t.ngot, 0);

	gate_open(&t.gate);
	wait_woken(&t, 2);
	/* ended but not yet delivered: no longer busy */
	ck_assert(!agent_job_running(j, "dump"));
	ck_assert_int_eq(
	    agent_job_start(j, "dump", gated_job_run, &dump, sizeof(dump), &h3),
	    0);
	wait_woken(&t, 3);
	ck_assert_int_eq(agent_jobs_deliver(j), 3);
	ck_assert_int_eq(t.ngot, 3);
	for (int i = 0; i < 3; i++) {
		const struct delivery *d = &t.got[i];

		if (d->handle == h1) {
			ck_assert_int_eq(d->code, 0);
			ck_assert_int_eq(d->value, 42);
		} else if (d->handle == h2) {
			ck_assert_int_eq(d->code, VMHEAP_AGENT_EDUMP);
			ck_assert_str_eq(d->message, "job 7 failed");
		} else {
			ck_assert(d->handle == h3);
			ck_assert_int_eq(d->code, 0);
			ck_assert_int_eq(d->value, 43);
		}
	}
	ck_assert(t.got[0].handle != t.got[1].handle &&
		  t.got[1].handle != t.got[2].handle &&
		  t.got[0].handle != t.got[2].handle);
	ck_assert_int_eq(agent_jobs_deliver(j), 0);

	/* stopping: new jobs are refused; one left undelivered is dropped
	 * when the registry is freed, without a call */
	ck_assert_int_eq(
	    agent_job_start(j, "dump", gated_job_run, &dump, sizeof(dump), &h4),
	    0);
	agent_jobs_stop(j);
	ck_assert_int_eq(t.gate.woken, 4);
	ck_assert(!agent_job_running(j, "dump"));
	ck_assert_int_eq(agent_job_start(j, "histogram", gated_job_run, &histo,
					 sizeof(histo), &h5),
			 VMHEAP_AGENT_EBUSY);
	agent_jobs_free(j);
	ck_assert_int_eq(t.ngot, 3);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("agent");
	TCase *t;

	t = spec_tcase(s, "session", 60);
	tcase_add_test(t, session_found_by_discovery_answers_get_set_and_list);

	t = spec_tcase(s, "dump", 60);
	tcase_add_test(t, dump_in_process_has_exactly_the_vms_per_class_counts);
	tcase_add_test(
	    t, dump_in_forked_child_has_exactly_the_vms_per_class_counts);

	/* the tests of "auth" and "lifecycle" each get a vmheap-sample of
	 * their own (spec_fixture_vm) */
	t = spec_tcase(s, "auth", 60);
	tcase_add_checked_fixture(t, spec_vm_fixture_setup,
				  spec_vm_fixture_teardown);
	tcase_add_test(t, wrong_or_missing_token_is_refused);

	t = spec_tcase(s, "bad input", 60);
	tcase_add_test(
	    t,
	    bad_input_gets_an_error_or_a_close_and_the_next_client_is_served);
	tcase_add_test(t, a_silent_or_slow_client_is_timed_out);
	tcase_add_test(
	    t, a_dump_longer_than_the_idle_timeout_still_gets_its_reply);
	tcase_add_test(t, too_many_clients_get_a_clear_refusal);

	t = spec_tcase(s, "load", 60);
	tcase_add_test(t, hundred_concurrent_clients_get_every_answer);

	t = spec_tcase(s, "paths", 60);
	tcase_add_test(t, dump_to_existing_file_or_outside_the_dir_is_refused);

	t = spec_tcase(s, "faults", 60);
	tcase_add_test(t, dump_onto_a_full_disk_fails_cleanly_in_process);
	tcase_add_test(
	    t, dump_onto_a_full_disk_fails_cleanly_in_a_forked_child);
	tcase_add_test(t, a_forked_dump_that_hangs_is_killed_after_the_timeout);
	tcase_add_test(
	    t, client_leaving_mid_dump_leaves_no_temp_file_in_process);
	tcase_add_test(
	    t, client_leaving_mid_dump_leaves_no_temp_file_in_a_forked_child);

	t = spec_tcase(s, "listen", 60);
	tcase_add_test(t, the_agent_refuses_to_listen_beyond_loopback);

	t = spec_tcase(s, "lifecycle", 60);
	tcase_add_checked_fixture(t, spec_vm_fixture_setup,
				  spec_vm_fixture_teardown);
	tcase_add_test(t, sigterm_removes_the_discovery_file);
	tcase_add_test(t, fork_in_the_host_leaves_the_parent_agent_working);
	tcase_add_test(t, fork_child_may_start_a_fresh_agent_of_its_own);

	t = spec_tcase(s, "discovery", 60);
	tcase_add_test(
	    t, discovery_refuses_unsafe_files_and_removes_dead_agents);
	tcase_add_test(t, a_vm_that_dies_gives_closed_not_a_hang);
	tcase_add_test(t, a_reused_pid_does_not_revive_a_dead_agents_file);

	t = spec_tcase(s, "PROTOCOL.md", 60);
	tcase_add_test(
	    t, protocol_md_example_is_real_encoder_output_and_replays);

	t = spec_tcase(s, "jobs", 60);
	tcase_add_test(
	    t, the_job_registry_refuses_a_second_job_of_a_kind_and_delivers);
	tcase_add_test(t,
		       a_client_gone_mid_dump_leaves_a_whole_file_in_process);
	tcase_add_test(
	    t, a_client_gone_mid_dump_leaves_a_whole_file_in_a_forked_child);
	tcase_add_test(t,
		       a_second_client_gets_busy_while_a_dump_runs_then_dumps);
	agent_ops_tcases(s);
	agent_dump_file_tcases(s);
	agent_reply_tcases(s);
	return s;
}
