/*
 * value.c - a host variable's value through vmheap's own handles
 * (vmheap_agent.h, "values"): a vmheap_value_writer is the agent's
 * msgpack_packer of the reply and a vmheap_value a msgpack_object (of the
 * request a host reads, or of the reply a client reads), so that hosts and
 * clients need nothing of msgpack-c.
 */
#include <stdint.h>
#include <string.h>

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
	case MSGPACK_OBJECT_BIN:
		return VMHEAP_VALUE_BIN;
	case MSGPACK_OBJECT_ARRAY:
		return VMHEAP_VALUE_ARRAY;
	case MSGPACK_OBJECT_MAP:
		return VMHEAP_VALUE_MAP;
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

int vmheap_value_float(const vmheap_value *v, double *out)
{
	const msgpack_object *o = obj_of(v);

	if (o->type != MSGPACK_OBJECT_FLOAT32 &&
	    o->type != MSGPACK_OBJECT_FLOAT64)
		return VMHEAP_AGENT_ETYPE;
	*out = o->via.f64;
	return 0;
}

int vmheap_value_bin(const vmheap_value *v, const void **s, size_t *len)
{
	const msgpack_object *o = obj_of(v);

	if (o->type != MSGPACK_OBJECT_BIN)
		return VMHEAP_AGENT_ETYPE;
	*s = o->via.bin.ptr;
	*len = o->via.bin.size;
	return 0;
}

int vmheap_value_count(const vmheap_value *v, size_t *n)
{
	const msgpack_object *o = obj_of(v);

	if (o->type == MSGPACK_OBJECT_ARRAY)
		*n = o->via.array.size;
	else if (o->type == MSGPACK_OBJECT_MAP)
		*n = o->via.map.size;
	else
		return VMHEAP_AGENT_ETYPE;
	return 0;
}

static const vmheap_value *handle(const msgpack_object *o)
{
	return (const vmheap_value *)(const void *)o;
}

const vmheap_value *vmheap_value_at(const vmheap_value *v, size_t i)
{
	const msgpack_object *o = obj_of(v);

	if (o->type != MSGPACK_OBJECT_ARRAY || i >= o->via.array.size)
		return NULL;
	return handle(&o->via.array.ptr[i]);
}

const vmheap_value *vmheap_value_key(const vmheap_value *v, size_t i)
{
	const msgpack_object *o = obj_of(v);

	if (o->type != MSGPACK_OBJECT_MAP || i >= o->via.map.size)
		return NULL;
	return handle(&o->via.map.ptr[i].key);
}

const vmheap_value *vmheap_value_val(const vmheap_value *v, size_t i)
{
	const msgpack_object *o = obj_of(v);

	if (o->type != MSGPACK_OBJECT_MAP || i >= o->via.map.size)
		return NULL;
	return handle(&o->via.map.ptr[i].val);
}

const vmheap_value *vmheap_value_get(const vmheap_value *v, const char *key)
{
	const msgpack_object *o = obj_of(v);
	size_t n = key ? strlen(key) : 0;

	if (!key || o->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;

		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
		    (n == 0 || !memcmp(k->via.str.ptr, key, n)))
			return handle(&o->via.map.ptr[i].val);
	}
	return NULL;
}
