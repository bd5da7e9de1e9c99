/*
 * agent_helpers.c - see agent_helpers.h.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_helpers.h"
#include "lib/vmheap_spec.h"

void call_ok(vmheap_client *c, const char *verb, const char *path,
	     const char *value, struct spec_reply *r)
{
	int rc = value ? spec_client_call_str(c, verb, path, value, r)
		       : spec_client_call(c, verb, path, NULL, r);

	ck_assert_msg(rc == 0, "%s %s: %s", verb, path ? path : "",
		      vmheap_client_error(c));
	ck_assert_msg(r->ok, "%s %s %s: error %s: %s", verb, path ? path : "",
		      value ? value : "", r->code, r->message);
}

void call_error(vmheap_client *c, const char *verb, const char *path,
		const char *value, const char *code)
{
	struct spec_reply r;
	int rc = value ? spec_client_call_str(c, verb, path, value, &r)
		       : spec_client_call(c, verb, path, NULL, &r);

	ck_assert_msg(rc == 0, "%s %s: %s", verb, path, vmheap_client_error(c));
	ck_assert_msg(!r.ok, "%s %s %s succeeded; expected error %s", verb,
		      path, value ? value : "", code);
	ck_assert_msg(!strcmp(r.code, code),
		      "%s %s: error %s (%s), expected %s", verb, path, r.code,
		      r.message, code);
	ck_assert_msg(r.message[0], "error %s has no message", code);
	spec_reply_release(&r);
}

int64_t get_int(vmheap_client *c, const char *var)
{
	struct spec_reply r;
	int64_t v;

	call_ok(c, "get", var, NULL, &r);
	ck_assert_msg(r.value.type == MSGPACK_OBJECT_POSITIVE_INTEGER ||
			  r.value.type == MSGPACK_OBJECT_NEGATIVE_INTEGER,
		      "%s is not an integer (type %d)", var, r.value.type);
	v = r.value.via.i64;
	spec_reply_release(&r);
	return v;
}

int obj_str_is(const msgpack_object *o, const char *s)
{
	return o && o->type == MSGPACK_OBJECT_STR &&
	       o->via.str.size == strlen(s) &&
	       !memcmp(o->via.str.ptr, s, o->via.str.size);
}

const msgpack_object *map_get(const msgpack_object *map, const char *key)
{
	if (map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (uint32_t i = 0; i < map->via.map.size; i++)
		if (obj_str_is(&map->via.map.ptr[i].key, key))
			return &map->via.map.ptr[i].val;
	return NULL;
}

int raw_connect(const struct spec_vm *s)
{
	msgpack_unpacked m;
	int fd = spec_tcp_connect(s->info.port);

	ck_assert_msg(fd >= 0, "connect: %s", strerror(errno));
	msgpack_unpacked_init(&m);
	ck_assert_msg(raw_read(fd, &m, 10000) == 1, "no hello");
	ck_assert(obj_str_is(&m.data.via.array.ptr[0], "hello"));
	msgpack_unpacked_destroy(&m);
	return fd;
}

void raw_send(int fd, const void *buf, size_t len)
{
	ck_assert_msg(send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len,
		      "send: %s", strerror(errno));
}

void raw_send_frame(int fd, const void *payload, uint32_t len)
{
	unsigned char hdr[4] = {len >> 24, len >> 16, len >> 8, len};

	raw_send(fd, hdr, 4);
	raw_send(fd, payload, len);
}

void raw_auth(int fd, const char *token)
{
	msgpack_unpacked m;

	raw_auth_no_reply(fd, token, 1);
	msgpack_unpacked_init(&m);
	ck_assert_msg(raw_read(fd, &m, 10000) == 1, "no auth reply");
	ck_assert(obj_str_is(&m.data.via.array.ptr[1], "ok"));
	msgpack_unpacked_destroy(&m);
}

void raw_auth_no_reply(int fd, const char *token, uint64_t id)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_array(&pk, 3);
	msgpack_pack_uint64(&pk, id);
	msgpack_pack_str(&pk, 4);
	msgpack_pack_str_body(&pk, "auth", 4);
	msgpack_pack_str(&pk, strlen(token));
	msgpack_pack_str_body(&pk, token, strlen(token));
	raw_send_frame(fd, sb.data, (uint32_t)sb.size);
	msgpack_sbuffer_destroy(&sb);
}

/* Read exactly len bytes: 1, 0 on EOF/reset, -1 on timeout. */
static int read_exact(int fd, char *buf, size_t len, int64_t deadline)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - spec_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return -1;
		n = recv(fd, buf + got, len - got, 0);
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	return 1;
}

int raw_read(int fd, msgpack_unpacked *out, int timeout_ms)
{
	int64_t deadline = spec_now_ms() + timeout_ms;
	unsigned char hdr[4];
	uint32_t len;
	char *buf;
	size_t off = 0;
	int rc = read_exact(fd, (char *)hdr, 4, deadline);

	if (rc != 1)
		return rc;
	len = (uint32_t)hdr[0] << 24 | hdr[1] << 16 | hdr[2] << 8 | hdr[3];
	ck_assert_msg(len > 0 && len <= VMHEAP_MAX_FRAME_BYTES,
		      "agent sent a frame of %u bytes", len);
	msgpack_unpacked_destroy(out);
	out->zone = msgpack_zone_new(len + 4096);
	ck_assert(out->zone);
	/* the payload lives in the zone, as long as the decoded strings */
	buf = msgpack_zone_malloc(out->zone, len);
	rc = read_exact(fd, buf, len, deadline);
	if (rc == 1) {
		ck_assert(msgpack_unpack(buf, len, &off, out->zone,
					 &out->data) == MSGPACK_UNPACK_SUCCESS);
		ck_assert(out->data.type == MSGPACK_OBJECT_ARRAY);
	}
	return rc;
}

int raw_closed(int fd, int timeout_ms)
{
	int64_t deadline = spec_now_ms() + timeout_ms;
	char buf[256];

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - spec_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return 0;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return 1;
	}
}

int dump_census(const char *path, struct census_row *rows, int max,
		uint64_t *objects, uint32_t *flags)
{
	struct {
		uint64_t id;
		int row;
	} ids[256];
	int nids = 0, nrows = 0, rc;
	vmheap_reader *r = NULL;
	struct vmheap_record rec;

	*objects = 0;
	rc = vmheap_reader_open_path(&r, path);
	ck_assert_msg(rc == 0, "open %s: %s", path,
		      r ? vmheap_reader_error(r) : "?");
	*flags = vmheap_reader_header(r)->flags;
	while ((rc = vmheap_reader_next(r, &rec)) > 0) {
		if (rec.type == VMHEAP_RECORD_CLASS) {
			ck_assert(nids < 256 && nrows < max);
			ids[nids].id = rec.u.klass.id;
			ids[nids].row = nrows;
			snprintf(rows[nrows].name, sizeof(rows[nrows].name),
				 "%.*s", (int)rec.u.klass.name_len,
				 rec.u.klass.name);
			rows[nrows++].count = 0;
			nids++;
		} else if (rec.type == VMHEAP_RECORD_OBJECT) {
			int found = 0;
			for (int i = 0; i < nids; i++)
				if (ids[i].id == rec.u.object.class_id) {
					rows[ids[i].row].count++;
					found = 1;
					break;
				}
			ck_assert_msg(
			    found, "object of unknown class %llu",
			    (unsigned long long)rec.u.object.class_id);
			(*objects)++;
		}
	}
	ck_assert_msg(rc == 0, "reading %s: %s", path, vmheap_reader_error(r));
	vmheap_reader_free(r);
	return nrows;
}

void dir_listing(const char *dir, char *buf, size_t len)
{
	char *names = spec_ls(dir, ' ');
	size_t n = strlen(names);

	/* no space after the last name */
	if (n)
		names[n - 1] = '\0';
	snprintf(buf, len, "%s", names);
	free(names);
}
