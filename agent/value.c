/*
 * value.c - a host variable's value through vmheap's own handles
 * (vmheap_agent.h, "host side"): a vmheap_value_writer is the agent's
 * msgpack_packer of the reply and a vmheap_value the msgpack_object of the
 * request, so that hosts need nothing of msgpack-c.
 */
#include <stdint.h>

#include "agent-internal.h"

static msgpack_packer *pk_of(vmheap_value_writer *w)
{
	return (msgpack_packer *)(void *)w;
}

static const msgpack_object *obj_of(const vmheap_value *v)
{
	return (const msgpack_object *)(const void *)v;
}

static int packed(int rc)
{
	return rc ? VMHEAP_ENOMEM : 0;
}

int vmheap_value_write_nil(vmheap_value_writer *w)
{
	return packed(msgpack_pack_nil(pk_of(w)));
}

int vmheap_value_write_bool(vmheap_value_writer *w, int b)
{
	return packed(b ? msgpack_pack_true(pk_of(w))
			: msgpack_pack_false(pk_of(w)));
}

int vmheap_value_write_int(vmheap_value_writer *w, int64_t v)
{
	return packed(msgpack_pack_int64(pk_of(w), v));
}

int vmheap_value_write_uint(vmheap_value_writer *w, uint64_t v)
{
	return packed(msgpack_pack_uint64(pk_of(w), v));
}

int vmheap_value_write_str(vmheap_value_writer *w, const char *s, size_t len)
{
	if (msgpack_pack_str(pk_of(w), len))
		return VMHEAP_ENOMEM;
	return packed(len ? msgpack_pack_str_body(pk_of(w), s, len) : 0);
}

int vmheap_value_write_array(vmheap_value_writer *w, uint32_t n)
{
	return packed(msgpack_pack_array(pk_of(w), n));
}

int vmheap_value_write_map(vmheap_value_writer *w, uint32_t n)
{
	return packed(msgpack_pack_map(pk_of(w), n));
}

enum vmheap_value_type vmheap_value_type(const vmheap_value *v)
{
	switch (obj_of(v)->type) {
	case MSGPACK_OBJECT_NIL:
		return VMHEAP_VALUE_NIL;
	case MSGPACK_OBJECT_BOOLEAN:
		return VMHEAP_VALUE_BOOL;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return VMHEAP_VALUE_INT;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		return VMHEAP_VALUE_FLOAT;
	case MSGPACK_OBJECT_STR:
		return VMHEAP_VALUE_STR;
	default:
		return VMHEAP_VALUE_OTHER;
	}
}

int vmheap_value_bool(const vmheap_value *v, int *out)
{
	const msgpack_object *o = obj_of(v);

	if (o->type != MSGPACK_OBJECT_BOOLEAN)
		return VMHEAP_AGENT_ETYPE;
	*out = o->via.boolean;
	return 0;
}

int vmheap_value_int(const vmheap_value *v, int64_t *out)
{
	const msgpack_object *o = obj_of(v);

	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*out = o->via.i64;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    o->via.u64 <= INT64_MAX) {
		*out = (int64_t)o->via.u64;
		return 0;
	}
	return VMHEAP_AGENT_ETYPE;
}

int vmheap_value_uint(const vmheap_value *v, uint64_t *out)
{
	const msgpack_object *o = obj_of(v);

	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return VMHEAP_AGENT_ETYPE;
	*out = o->via.u64;
	return 0;
}

int vmheap_value_str(const vmheap_value *v, const char **s, size_t *len)
{
	const msgpack_object *o = obj_of(v);

	if (o->type != MSGPACK_OBJECT_STR)
		return VMHEAP_AGENT_ETYPE;
	*s = o->via.str.ptr;
	*len = o->via.str.size;
	return 0;
}
