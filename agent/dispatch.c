/*
 * dispatch.c - one decoded request: check its shape, enforce auth, and
 * route get / set / list to the variable tree.
 */
#include <stdio.h>
#include <string.h>

#include "agent-internal.h"

#define MAX_PATH_BYTES 256

static int is_str(const msgpack_object *o, const char *s)
{
	size_t n = strlen(s);

	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n &&
	       memcmp(o->via.str.ptr, s, n) == 0;
}

static void value_init(struct agent_value *v)
{
	msgpack_sbuffer_init(&v->sb);
	msgpack_packer_init(&v->pk, &v->sb, msgpack_sbuffer_write);
}

static void handle_auth(struct vmheap_agent *a, struct agent_conn *c,
			const uint64_t *id, const msgpack_object *e, uint32_t n)
{
	static const char yes[] = {(char)0xc3}; /* true */

	if (n != 3 || e[2].type != MSGPACK_OBJECT_STR) {
		agent_conn_send_error(c, id, VMHEAP_AGENT_EAUTH,
				      "auth takes [id, \"auth\", token]", 1);
		return;
	}
	if (!agent_token_equal(a->token, e[2].via.str.ptr, e[2].via.str.size)) {
		agent_conn_send_error(c, id, VMHEAP_AGENT_EAUTH,
				      "token refused", 1);
		return;
	}
	c->authed = 1;
	agent_conn_send_ok(c, id, yes, 1);
}

void agent_dispatch(struct vmheap_agent *a, struct agent_conn *c,
		    const msgpack_object *msg)
{
	const msgpack_object *e = msg->via.array.ptr;
	uint32_t n = msg->via.array.size;
	char path[MAX_PATH_BYTES + 1], err[600], verb[16];
	struct agent_value v;
	uint64_t idv;
	const uint64_t *id = NULL;
	int rc;

	if (n >= 1 && e[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		idv = e[0].via.u64;
		id = &idv;
	}
	if (!id || n < 2 || e[1].type != MSGPACK_OBJECT_STR) {
		agent_conn_send_error(
		    c, id, VMHEAP_AGENT_EPROTO,
		    "a request is [id, command, path, value?] with a "
		    "non-negative integer id and a string command",
		    1);
		return;
	}
	if (!c->authed) {
		if (is_str(&e[1], "auth"))
			handle_auth(a, c, id, e, n);
		else
			agent_conn_send_error(
			    c, id, VMHEAP_AGENT_EAUTH,
			    "authenticate first: send [id, \"auth\", token]",
			    1);
		return;
	}
	if (is_str(&e[1], "auth")) {
		handle_auth(a, c, id, e, n);
		return;
	}
	if (!is_str(&e[1], "get") && !is_str(&e[1], "set") &&
	    !is_str(&e[1], "list")) {
		size_t l = e[1].via.str.size < sizeof(verb) - 1
			       ? e[1].via.str.size
			       : sizeof(verb) - 1;
		memcpy(verb, e[1].via.str.ptr, l);
		verb[l] = '\0';
		for (size_t i = 0; i < l; i++)
			if ((unsigned char)verb[i] < 0x20 ||
			    (unsigned char)verb[i] >= 0x7f)
				verb[i] = '?';
		snprintf(err, sizeof(err),
			 "unknown command \"%s\" (expected get, set or list)",
			 verb);
		agent_conn_send_error(c, id, VMHEAP_AGENT_ECOMMAND, err, 1);
		return;
	}
	if (is_str(&e[1], "get")   ? n != 3
	    : is_str(&e[1], "set") ? n != 4
				   : (n != 2 && n != 3)) {
		agent_conn_send_error(
		    c, id, VMHEAP_AGENT_EPROTO,
		    is_str(&e[1], "get") ? "get takes [id, \"get\", path]"
		    : is_str(&e[1], "set")
			? "set takes [id, \"set\", path, value]"
			: "list takes [id, \"list\"] or [id, \"list\", prefix]",
		    1);
		return;
	}
	path[0] = '\0';
	if (n >= 3 && frame_copy_str(&e[2], path, sizeof(path)) < 0) {
		agent_conn_send_error(c, id, VMHEAP_AGENT_EPROTO,
				      e[2].type == MSGPACK_OBJECT_STR
					  ? "the path is longer than 256 bytes "
					    "or holds a NUL byte"
					  : "the path must be a string",
				      1);
		return;
	}

	value_init(&v);
	err[0] = '\0';
	if (is_str(&e[1], "get"))
		rc = agent_var_get(a, path, &v, err, sizeof(err));
	else if (is_str(&e[1], "set"))
		rc =
		    agent_var_set(a, c, *id, path, &e[3], &v, err, sizeof(err));
	else
		rc = agent_var_list(a, path, &v, err, sizeof(err));
	if (rc == 0 && v.sb.size == 0)
		msgpack_pack_nil(&v.pk); /* a host that packed nothing */
	if (rc == 0)
		agent_conn_send_ok(c, id, v.sb.data, v.sb.size);
	else if (rc < 0)
		agent_conn_send_error(
		    c, id, rc, err[0] ? err : vmheap_agent_strerror(rc), 0);
	/* rc == 1: a dump was queued; its reply comes later */
	msgpack_sbuffer_destroy(&v.sb);
}
