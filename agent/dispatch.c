/*
 * dispatch.c - one decoded request: check its shape, enforce auth, and
 * route get / set / list to the variable tree.  It decides the answer
 * (an agent_outcome) and leaves sending it to conn.c.
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

/* The outcome [id, "error", word(code), message], closing if `close`. */
static void fail(struct agent_outcome *out, int code, const char *message,
		 int close)
{
	out->kind = AGENT_OUTCOME_ERROR;
	out->code = code;
	snprintf(out->message, sizeof(out->message), "%s", message);
	out->close = close;
}

static void handle_auth(struct vmheap_agent *a, int *authed,
			const msgpack_object *e, uint32_t n,
			struct agent_outcome *out)
{
	if (n != 3 || e[2].type != MSGPACK_OBJECT_STR) {
		fail(out, VMHEAP_AGENT_EAUTH,
		     "auth takes [id, \"auth\", token]", 1);
		return;
	}
	if (!agent_token_equal(a->token, e[2].via.str.ptr, e[2].via.str.size)) {
		fail(out, VMHEAP_AGENT_EAUTH, "token refused", 1);
		return;
	}
	*authed = 1;
	out->kind = AGENT_OUTCOME_OK;
	msgpack_pack_true(&out->value.pk);
}

void agent_outcome_release(struct agent_outcome *out)
{
	msgpack_sbuffer_destroy(&out->value.sb);
}

void agent_dispatch(struct vmheap_agent *a, int *authed,
		    const msgpack_object *msg, struct agent_outcome *out)
{
	const msgpack_object *e = msg->via.array.ptr;
	uint32_t n = msg->via.array.size;
	char path[MAX_PATH_BYTES + 1], err[600], verb[16];
	int rc;

	memset(out, 0, sizeof(*out));
	value_init(&out->value);
	if (n >= 1 && e[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		out->id = e[0].via.u64;
		out->has_id = 1;
	}
	if (!out->has_id || n < 2 || e[1].type != MSGPACK_OBJECT_STR) {
		fail(out, VMHEAP_AGENT_EPROTO,
		     "a request is [id, command, path, value?] with a "
		     "non-negative integer id and a string command",
		     1);
		return;
	}
	if (!*authed) {
		if (is_str(&e[1], "auth"))
			handle_auth(a, authed, e, n, out);
		else
			fail(out, VMHEAP_AGENT_EAUTH,
			     "authenticate first: send [id, \"auth\", token]",
			     1);
		return;
	}
	if (is_str(&e[1], "auth")) {
		handle_auth(a, authed, e, n, out);
		return;
	}
	if (!is_str(&e[1], "get") && !is_str(&e[1], "set") &&
	    !is_str(&e[1], "list")) {
		size_t l = e[1].via.str.size < sizeof(verb) - 1
			       ? e[1].via.str.size
			       : sizeof(verb) - 1;
		if (l) /* an empty string may have no buffer at all */
			memcpy(verb, e[1].via.str.ptr, l);
		verb[l] = '\0';
		for (size_t i = 0; i < l; i++)
			if ((unsigned char)verb[i] < 0x20 ||
			    (unsigned char)verb[i] >= 0x7f)
				verb[i] = '?';
		snprintf(err, sizeof(err),
			 "unknown command \"%s\" (expected get, set or list)",
			 verb);
		fail(out, VMHEAP_AGENT_ECOMMAND, err, 1);
		return;
	}
	if (is_str(&e[1], "get")   ? n != 3
	    : is_str(&e[1], "set") ? n != 4
				   : (n != 2 && n != 3)) {
		fail(
		    out, VMHEAP_AGENT_EPROTO,
		    is_str(&e[1], "get") ? "get takes [id, \"get\", path]"
		    : is_str(&e[1], "set")
			? "set takes [id, \"set\", path, value]"
			: "list takes [id, \"list\"] or [id, \"list\", prefix]",
		    1);
		return;
	}
	path[0] = '\0';
	if (n >= 3 && frame_copy_str(&e[2], path, sizeof(path)) < 0) {
		fail(out, VMHEAP_AGENT_EPROTO,
		     e[2].type == MSGPACK_OBJECT_STR
			 ? "the path is longer than 256 bytes or holds a NUL "
			   "byte"
			 : "the path must be a string",
		     1);
		return;
	}

	err[0] = '\0';
	if (is_str(&e[1], "get"))
		rc = agent_var_get(a, path, &out->value, &out->job, err,
				   sizeof(err));
	else if (is_str(&e[1], "set"))
		rc = agent_var_set(a, path, &e[3], &out->value, &out->job, err,
				   sizeof(err));
	else
		rc = agent_var_list(a, path, &out->value, err, sizeof(err));
	if (rc == AGENT_PENDING && !is_str(&e[1], "list")) {
		/* a long job started; its reply comes when it ends */
		out->kind = AGENT_OUTCOME_PENDING;
	} else if (rc < 0) {
		fail(out, rc, err[0] ? err : vmheap_agent_strerror(rc), 0);
	} else {
		out->kind = AGENT_OUTCOME_OK;
		if (out->value.sb.size == 0)
			msgpack_pack_nil(&out->value.pk); /* a host that
							     packed nothing */
	}
}
