/*
 * reply.c - a client's reply (vmheap_agent.h, "client"): what client.c
 * read, given out through accessors so that msgpack-c's types stay out of
 * the public header.  The value is walked with value.c's readers.
 */
#include <stdlib.h>
#include <string.h>

#include "agent-internal.h"

vmheap_reply *agent_reply_new(void)
{
	vmheap_reply *r = calloc(1, sizeof(*r));

	if (r)
		msgpack_unpacked_init(&r->storage);
	return r;
}

void agent_reply_clear(vmheap_reply *r)
{
	msgpack_unpacked_destroy(&r->storage);
	msgpack_unpacked_init(&r->storage);
	if (r->encoded)
		msgpack_sbuffer_free(r->encoded);
	r->encoded = NULL;
	r->ok = 0;
	r->code[0] = r->message[0] = '\0';
	memset(&r->value, 0, sizeof(r->value));
}

int vmheap_reply_ok(const vmheap_reply *r)
{
	return r && r->ok;
}

const vmheap_value *vmheap_reply_value(const vmheap_reply *r)
{
	if (!r || !r->ok)
		return NULL;
	return (const vmheap_value *)(const void *)&r->value;
}

const char *vmheap_reply_code(const vmheap_reply *r)
{
	return r && !r->ok ? r->code : "";
}

const char *vmheap_reply_message(const vmheap_reply *r)
{
	return r && !r->ok ? r->message : "";
}

int vmheap_reply_msgpack(vmheap_reply *r, const void **data, size_t *len)
{
	if (!r || !r->ok)
		return VMHEAP_EINVAL;
	if (!r->encoded) {
		msgpack_packer pk;

		r->encoded = msgpack_sbuffer_new();
		if (!r->encoded)
			return VMHEAP_ENOMEM;
		msgpack_packer_init(&pk, r->encoded, msgpack_sbuffer_write);
		if (msgpack_pack_object(&pk, r->value) != 0) {
			msgpack_sbuffer_free(r->encoded);
			r->encoded = NULL;
			return VMHEAP_ENOMEM;
		}
	}
	*data = r->encoded->data;
	*len = r->encoded->size;
	return 0;
}

void vmheap_reply_free(vmheap_reply *r)
{
	if (!r)
		return;
	agent_reply_clear(r);
	free(r);
}
