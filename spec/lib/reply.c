/*
 * reply.c - the client API's replies decoded for the checks: see
 * spec_reply.h.
 */
#include <stdio.h>
#include <string.h>

#include "spec_reply.h"

static int take(int rc, vmheap_reply *reply, struct spec_reply *r)
{
	const void *data;
	size_t len, off = 0;

	memset(r, 0, sizeof(*r));
	msgpack_unpacked_init(&r->storage_);
	r->reply = reply;
	snprintf(r->code, sizeof(r->code), "%s", vmheap_reply_code(reply));
	snprintf(r->message, sizeof(r->message), "%s",
		 vmheap_reply_message(reply));
	if (!vmheap_reply_ok(reply))
		return rc;
	/* no ck_assert here: load tests call it from threads */
	if (vmheap_reply_msgpack(reply, &data, &len) < 0 ||
	    msgpack_unpack_next(&r->storage_, data, len, &off) !=
		MSGPACK_UNPACK_SUCCESS ||
	    off != len) {
		snprintf(r->code, sizeof(r->code), "spec");
		snprintf(r->message, sizeof(r->message),
			 "the reply's value cannot be decoded");
		return rc < 0 ? rc : VMHEAP_ENOMEM;
	}
	r->ok = 1;
	r->value = r->storage_.data;
	return rc;
}

int spec_client_call(vmheap_client *c, const char *verb, const char *path,
		     const msgpack_object *value, struct spec_reply *r)
{
	vmheap_reply *reply = NULL;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	int rc;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	if (value && msgpack_pack_object(&pk, *value) != 0) {
		msgpack_sbuffer_destroy(&sb);
		return take(VMHEAP_ENOMEM, NULL, r);
	}
	rc = vmheap_client_call(c, verb, path, value ? sb.data : NULL, sb.size,
				&reply);
	msgpack_sbuffer_destroy(&sb);
	return take(rc, reply, r);
}

int spec_client_call_str(vmheap_client *c, const char *verb, const char *path,
			 const char *value, struct spec_reply *r)
{
	vmheap_reply *reply = NULL;
	int rc = vmheap_client_call_str(c, verb, path, value, &reply);

	return take(rc, reply, r);
}

void spec_reply_release(struct spec_reply *r)
{
	msgpack_unpacked_destroy(&r->storage_);
	vmheap_reply_free(r->reply);
	memset(r, 0, sizeof(*r));
}
