/*
 * agent_reply_test.c - a reply through the client API's own readers
 * (vmheap_agent.h: vmheap_reply_*, vmheap_value_*), with no msgpack-c
 * type in the public header, checked against msgpack-c's decoding of the
 * very frame the agent sent on a raw socket (stable replies: `list`,
 * system.argv), of vmheap_reply_msgpack's bytes (a live histogram: maps,
 * arrays, strings, integers, a float, booleans), and against the sample
 * VM's own leak (its class count is three per tick).
 */
#include <string.h>
#include <unistd.h>

#include "agent_helpers.h"
#include "lib/vmheap_spec.h"

/* How many values of each msgpack-c type same_value compared. */
static unsigned seen[32];

/* Fail unless the readers see in v exactly the value o. */
static void same_value(const vmheap_value *v, const msgpack_object *o)
{
	const char *s;
	const void *p;
	size_t len, n;
	int64_t i;
	uint64_t u;
	double f;
	int b;

	ck_assert_ptr_nonnull(v);
	if ((unsigned)o->type < 32)
		seen[o->type]++;
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		ck_assert_int_eq(vmheap_value_type(v), VMHEAP_VALUE_NIL);
		ck_assert_int_eq(vmheap_value_bool(v, &b), VMHEAP_AGENT_ETYPE);
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		ck_assert_int_eq(vmheap_value_type(v), VMHEAP_VALUE_BOOL);
		ck_assert_int_eq(vmheap_value_bool(v, &b), 0);
		ck_assert_int_eq(b, o->via.boolean);
		ck_assert_int_eq(vmheap_value_int(v, &i), VMHEAP_AGENT_ETYPE);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		ck_assert_int_eq(vmheap_value_type(v), VMHEAP_VALUE_INT);
		ck_assert_int_eq(vmheap_value_uint(v, &u), 0);
		ck_assert_uint_eq(u, o->via.u64);
		if (o->via.u64 <= INT64_MAX) {
			ck_assert_int_eq(vmheap_value_int(v, &i), 0);
			ck_assert_int_eq(i, (int64_t)o->via.u64);
		}
		ck_assert_int_eq(vmheap_value_float(v, &f), VMHEAP_AGENT_ETYPE);
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		ck_assert_int_eq(vmheap_value_type(v), VMHEAP_VALUE_INT);
		ck_assert_int_eq(vmheap_value_int(v, &i), 0);
		ck_assert_int_eq(i, o->via.i64);
		ck_assert_int_eq(vmheap_value_uint(v, &u), VMHEAP_AGENT_ETYPE);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		ck_assert_int_eq(vmheap_value_type(v), VMHEAP_VALUE_FLOAT);
		ck_assert_int_eq(vmheap_value_float(v, &f), 0);
		ck_assert(f == o->via.f64);
		ck_assert_int_eq(vmheap_value_int(v, &i), VMHEAP_AGENT_ETYPE);
		break;
	case MSGPACK_OBJECT_STR:
		ck_assert_int_eq(vmheap_value_type(v), VMHEAP_VALUE_STR);
		ck_assert_int_eq(vmheap_value_str(v, &s, &len), 0);
		ck_assert_uint_eq(len, o->via.str.size);
		ck_assert(len == 0 || !memcmp(s, o->via.str.ptr, len));
		ck_assert_int_eq(vmheap_value_count(v, &n), VMHEAP_AGENT_ETYPE);
		break;
	case MSGPACK_OBJECT_BIN:
		ck_assert_int_eq(vmheap_value_type(v), VMHEAP_VALUE_BIN);
		ck_assert_int_eq(vmheap_value_bin(v, &p, &len), 0);
		ck_assert_uint_eq(len, o->via.bin.size);
		ck_assert(len == 0 || !memcmp(p, o->via.bin.ptr, len));
		break;
	case MSGPACK_OBJECT_ARRAY:
		ck_assert_int_eq(vmheap_value_type(v), VMHEAP_VALUE_ARRAY);
		ck_assert_int_eq(vmheap_value_count(v, &n), 0);
		ck_assert_uint_eq(n, o->via.array.size);
		ck_assert_ptr_null(vmheap_value_at(v, n));
		ck_assert_ptr_null(vmheap_value_key(v, 0));
		ck_assert_ptr_null(vmheap_value_get(v, "classes"));
		for (uint32_t k = 0; k < o->via.array.size; k++)
			same_value(vmheap_value_at(v, k), &o->via.array.ptr[k]);
		break;
	case MSGPACK_OBJECT_MAP:
		ck_assert_int_eq(vmheap_value_type(v), VMHEAP_VALUE_MAP);
		ck_assert_int_eq(vmheap_value_count(v, &n), 0);
		ck_assert_uint_eq(n, o->via.map.size);
		ck_assert_ptr_null(vmheap_value_key(v, n));
		ck_assert_ptr_null(vmheap_value_val(v, n));
		ck_assert_ptr_null(vmheap_value_at(v, 0));
		for (uint32_t k = 0; k < o->via.map.size; k++) {
			const msgpack_object *key = &o->via.map.ptr[k].key;
			char name[256];

			same_value(vmheap_value_key(v, k), key);
			same_value(vmheap_value_val(v, k),
				   &o->via.map.ptr[k].val);
			if (key->type != MSGPACK_OBJECT_STR ||
			    key->via.str.size >= sizeof(name))
				continue;
			/* the agent's keys are unique: get finds this pair */
			snprintf(name, sizeof(name), "%.*s",
				 (int)key->via.str.size, key->via.str.ptr);
			ck_assert_ptr_eq(vmheap_value_get(v, name),
					 vmheap_value_val(v, k));
		}
		ck_assert_ptr_null(vmheap_value_get(v, "no such key"));
		break;
	default:
		ck_assert_int_eq(vmheap_value_type(v), VMHEAP_VALUE_OTHER);
		break;
	}
}

/* A sample VM in a directory of its own (its discovery file and dumps),
 * and a client of it. */
static vmheap_client *start_vm(struct spec_vm *vm, const char *const *args)
{
	const char *dir = spec_mkdtemp("reply");
	struct spec_vm_opts o = {.args = args};
	vmheap_client *c;

	spec_vm_start(vm, dir, dir, &o);
	c = spec_connect(vm, 30000);
	ck_assert_msg(c != NULL, "cannot connect to the sample VM");
	return c;
}

/* The request [2, verb, path] (path NULL: none): the value the client's
 * readers give equals the one of the agent's frame on a raw socket. */
static void same_as_raw(const struct spec_vm *vm, vmheap_client *c,
			const char *verb, const char *path)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_unpacked m;
	vmheap_reply *r = NULL;
	int fd;

	ck_assert_int_eq(vmheap_client_call(c, verb, path, NULL, 0, &r), 0);
	ck_assert_msg(vmheap_reply_ok(r), "%s %s: %s: %s", verb,
		      path ? path : "", vmheap_reply_code(r),
		      vmheap_reply_message(r));
	ck_assert_str_eq(vmheap_reply_code(r), "");

	fd = spec_tcp_connect(vm->info.port);
	ck_assert_msg(fd >= 0, "cannot connect to port %u", vm->info.port);
	msgpack_unpacked_init(&m);
	ck_assert_int_eq(raw_read(fd, &m, 30000), 1); /* the hello */
	msgpack_unpacked_destroy(&m);
	raw_auth(fd, vm->info.token);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, path ? 3 : 2);
	msgpack_pack_uint64(&pk, 2);
	msgpack_pack_str_with_body(&pk, verb, strlen(verb));
	if (path)
		msgpack_pack_str_with_body(&pk, path, strlen(path));
	raw_send_frame(fd, sb.data, (uint32_t)sb.size);
	msgpack_sbuffer_destroy(&sb);
	msgpack_unpacked_init(&m);
	ck_assert_int_eq(raw_read(fd, &m, 30000), 1);
	ck_assert_uint_eq(m.data.via.array.size, 3);
	ck_assert(obj_str_is(&m.data.via.array.ptr[1], "ok"));
	same_value(vmheap_reply_value(r), &m.data.via.array.ptr[2]);
	msgpack_unpacked_destroy(&m);
	close(fd);
	vmheap_reply_free(r);
}

START_TEST(reply_readers_give_what_the_agent_sent)
{
	static const char *const args[] = {"--leak", "Reply:3", NULL};
	struct spec_vm vm;
	vmheap_client *c;
	vmheap_reply *r = NULL;
	const vmheap_value *h, *classes, *row, *name;
	const void *bytes;
	msgpack_unpacked m;
	size_t len, off = 0, n, rows;
	const char *str;
	uint64_t count = 0;
	int found = 0;

	memset(seen, 0, sizeof(seen));
	c = start_vm(&vm, args);
	same_as_raw(&vm, c, "list", NULL);
	same_as_raw(&vm, c, "get", "system.argv");
	same_as_raw(&vm, c, "get", "system.pid");
	same_as_raw(&vm, c, "get", "config.dump.gc");

	/* a live histogram: its bytes as msgpack-c reads them, then the
	 * leak's class found with the readers alone, as a C user would */
	spec_wait_uint(c, "sample.ticks", 1, 30000);
	vmheap_client_set_timeout(c, 120000);
	ck_assert_int_eq(vmheap_client_call(c, "get", "system.memory.histogram",
					    NULL, 0, &r),
			 0);
	ck_assert_msg(vmheap_reply_ok(r), "%s", vmheap_reply_message(r));
	ck_assert_int_eq(vmheap_reply_msgpack(r, &bytes, &len), 0);
	msgpack_unpacked_init(&m);
	ck_assert_int_eq(msgpack_unpack_next(&m, bytes, len, &off),
			 MSGPACK_UNPACK_SUCCESS);
	ck_assert_uint_eq(off, len);
	h = vmheap_reply_value(r);
	same_value(h, &m.data);
	msgpack_unpacked_destroy(&m);
	classes = vmheap_value_get(h, "classes");
	ck_assert_ptr_nonnull(classes);
	ck_assert_int_eq(vmheap_value_count(classes, &rows), 0);
	for (size_t k = 0; k < rows; k++) {
		row = vmheap_value_at(classes, k);
		ck_assert_int_eq(vmheap_value_count(row, &n), 0);
		ck_assert_uint_ge(n, 3);
		name = vmheap_value_at(row, 0);
		ck_assert_int_eq(vmheap_value_str(name, &str, &len), 0);
		if (len == 5 && !memcmp(str, "Reply", 5)) {
			ck_assert_int_eq(
			    vmheap_value_uint(vmheap_value_at(row, 1), &count),
			    0);
			found++;
		}
	}
	ck_assert_int_eq(found, 1);
	/* the VM keeps three per tick, counted with its mutator stopped */
	ck_assert_msg(count >= 3 && count % 3 == 0, "%llu Reply objects",
		      (unsigned long long)count);
	vmheap_reply_free(r);
	/* every kind of value the agent sends was compared */
	ck_assert_uint_gt(seen[MSGPACK_OBJECT_MAP], 0);
	ck_assert_uint_gt(seen[MSGPACK_OBJECT_ARRAY], 0);
	ck_assert_uint_gt(seen[MSGPACK_OBJECT_STR], 0);
	ck_assert_uint_gt(seen[MSGPACK_OBJECT_POSITIVE_INTEGER], 0);
	ck_assert_uint_gt(seen[MSGPACK_OBJECT_BOOLEAN], 0);
	ck_assert_uint_gt(
	    seen[MSGPACK_OBJECT_FLOAT64] + seen[MSGPACK_OBJECT_FLOAT32], 0);
	vmheap_client_close(c);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
}
END_TEST

START_TEST(an_error_reply_and_a_bad_value_through_the_readers)
{
	static const unsigned char two_values[] = {0xc0, 0xc0};
	static const unsigned char cut_str[] = {0xa5, 'a', 'b'};
	static const unsigned char seven[] = {0x07};
	struct spec_vm vm;
	vmheap_client *c;
	vmheap_reply *r = NULL;
	const void *bytes;
	size_t len;
	int64_t v;

	c = start_vm(&vm, NULL);

	ck_assert_int_eq(
	    vmheap_client_call(c, "get", "no.such.variable", NULL, 0, &r), 0);
	ck_assert_int_eq(vmheap_reply_ok(r), 0);
	ck_assert_str_eq(vmheap_reply_code(r), "notfound");
	ck_assert_msg(strstr(vmheap_reply_message(r), "no.such.variable"),
		      "message: %s", vmheap_reply_message(r));
	ck_assert_ptr_null(vmheap_reply_value(r));
	ck_assert_int_eq(vmheap_reply_msgpack(r, &bytes, &len), VMHEAP_EINVAL);
	vmheap_reply_free(r);

	/* a value that is not one MessagePack value is refused before
	 * anything is sent: the connection goes on */
	ck_assert_int_eq(vmheap_client_call(c, "set", "sample.tick_ms",
					    two_values, sizeof(two_values), &r),
			 VMHEAP_EINVAL);
	ck_assert_msg(strstr(vmheap_client_error(c), "not one MessagePack"),
		      "%s", vmheap_client_error(c));
	ck_assert_int_eq(vmheap_reply_ok(r), 0);
	ck_assert_str_eq(vmheap_reply_code(r), "");
	vmheap_reply_free(r);
	ck_assert_int_eq(vmheap_client_call(c, "set", "sample.tick_ms", cut_str,
					    sizeof(cut_str), &r),
			 VMHEAP_EINVAL);
	vmheap_reply_free(r);
	ck_assert_int_eq(vmheap_client_call(c, "get", "x", NULL, 0, NULL),
			 VMHEAP_EINVAL);

	/* a typed value, as MessagePack bytes */
	ck_assert_int_eq(vmheap_client_call(c, "set", "sample.tick_ms", seven,
					    sizeof(seven), &r),
			 0);
	ck_assert_msg(vmheap_reply_ok(r), "%s", vmheap_reply_message(r));
	ck_assert_int_eq(vmheap_value_int(vmheap_reply_value(r), &v), 0);
	ck_assert_int_eq(v, 7);
	vmheap_reply_free(r);
	ck_assert_int_eq(get_int(c, "sample.tick_ms"), 7);

	/* NULL is no reply */
	ck_assert_int_eq(vmheap_reply_ok(NULL), 0);
	ck_assert_ptr_null(vmheap_reply_value(NULL));
	ck_assert_str_eq(vmheap_reply_code(NULL), "");
	ck_assert_str_eq(vmheap_reply_message(NULL), "");
	vmheap_reply_free(NULL);
	vmheap_client_close(c);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
}
END_TEST

void agent_reply_tcases(Suite *s)
{
	TCase *t = spec_tcase(s, "reply", 120);

	tcase_add_test(t, reply_readers_give_what_the_agent_sent);
	tcase_add_test(t, an_error_reply_and_a_bad_value_through_the_readers);
}
