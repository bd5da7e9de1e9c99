/*
 * frame.c - the wire framing: a 4-byte big-endian length, then one
 * MessagePack array of that many bytes (at most VMHEAP_MAX_FRAME_BYTES).
 *
 * Shared by the agent and the client.  Before a payload is handed to
 * msgpack-c it is checked here: msgpack-c allocates an array's element
 * table as soon as it reads the header, so a 20-byte frame that claims
 * 2^32 elements would otherwise ask for 96 GB.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "agent-internal.h"

static uint64_t be(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/* frame_check, with at most max_objects objects in all (0: no limit). */
static int check_shape(const char *data, size_t len, uint64_t max_objects,
		       char *err, size_t errlen)
{
	const unsigned char *p = (const unsigned char *)data;
	size_t pos = 0;
	uint64_t pending = 1; /* objects still to read */
	uint64_t objects = 1; /* objects met so far, announced or read */

	while (pending > 0) {
		uint64_t skip = 0, children = 0;
		size_t at = pos;
		unsigned char t;

		if (pos >= len)
			return agent_fail(
			    err, errlen, -1,
			    "message ends early at byte %zu of %zu", pos, len);
		t = p[pos++];
		pending--;
		if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 ||
		    t == 0xc3) {
			/* single byte */
		} else if (t >= 0x80 && t <= 0x8f) {
			children = 2u * (t & 0x0f);
		} else if (t >= 0x90 && t <= 0x9f) {
			children = t & 0x0f;
		} else if (t >= 0xa0 && t <= 0xbf) {
			skip = t & 0x1f;
		} else {
			static const signed char lenbytes[] = {
			    /* c4 */ 1,
			    2,
			    4,
			    /* c7 ext */ 1,
			    2,
			    4,
			    /* ca */ -4,
			    -8,
			    /* cc */ -1,
			    -2,
			    -4,
			    -8,
			    /* d0 */ -1,
			    -2,
			    -4,
			    -8,
			    /* d4 fixext */ -2,
			    -3,
			    -5,
			    -9,
			    -17,
			    /* d9 str */ 1,
			    2,
			    4,
			    /* dc array */ 2,
			    4,
			    /* de map */ 2,
			    4};
			int lb;

			if (t == 0xc1)
				return agent_fail(
				    err, errlen, -1,
				    "invalid MessagePack byte 0xc1 at byte %zu",
				    at);
			lb = lenbytes[t - 0xc4];
			if (lb < 0) {
				skip = (uint64_t)-lb;
			} else {
				uint64_t n;

				if (len - pos < (size_t)lb)
					return agent_fail(err, errlen, -1,
							  "message ends early "
							  "at byte %zu of %zu",
							  len, len);
				n = be(p + pos, lb);
				pos += (size_t)lb;
				if (t >= 0xc7 && t <= 0xc9)
					skip = n + 1; /* ext type byte */
				else if (t == 0xdc || t == 0xdd)
					children = n;
				else if (t == 0xde || t == 0xdf)
					children = 2 * n;
				else
					skip = n;
			}
		}
		if (skip > len - pos)
			return agent_fail(err, errlen, -1,
					  "value at byte %zu runs past the end "
					  "of the %zu-byte message",
					  at, len);
		pos += (size_t)skip;
		if (children > len - pos ||
		    pending + children > (uint64_t)(len - pos))
			return agent_fail(
			    err, errlen, -1,
			    "container at byte %zu claims %llu elements, more "
			    "than the message holds",
			    at, (unsigned long long)children);
		pending += children;
		objects += children;
		if (max_objects && objects > max_objects)
			return agent_fail(
			    err, errlen, -1,
			    "message holds more than %llu objects (the "
			    "container at byte %zu); a request is small",
			    (unsigned long long)max_objects, at);
	}
	if (pos != len)
		return agent_fail(
		    err, errlen, -1,
		    "%zu extra bytes after the message at byte %zu", len - pos,
		    pos);
	return 0;
}

int frame_check(const char *data, size_t len, char *err, size_t errlen)
{
	return check_shape(data, len, 0, err, errlen);
}

int frame_decode(const char *data, size_t len, msgpack_unpacked *out, char *err,
		 size_t errlen)
{
	return frame_decode_limited(data, len, 0, out, err, errlen);
}

int frame_decode_limited(const char *data, size_t len, uint64_t max_objects,
			 msgpack_unpacked *out, char *err, size_t errlen)
{
	msgpack_unpack_return rc;
	msgpack_zone *zone;
	size_t off = 0;
	char *copy;

	msgpack_unpacked_destroy(out);
	if (len == 0)
		return agent_fail(err, errlen, -1, "empty frame");
	if (check_shape(data, len, max_objects, err, errlen) < 0)
		return -1;
	/* The payload lives in the zone, so the decoded strings (which
	 * point into it) live exactly as long as the result. */
	zone = msgpack_zone_new(len + 4096);
	if (!zone)
		return agent_fail(err, errlen, -1, "out of memory");
	copy = msgpack_zone_malloc(zone, len);
	if (!copy) {
		msgpack_zone_free(zone);
		return agent_fail(err, errlen, -1, "out of memory");
	}
	memcpy(copy, data, len);
	rc = msgpack_unpack(copy, len, &off, zone, &out->data);
	out->zone = zone;
	if (rc != MSGPACK_UNPACK_SUCCESS || off != len) {
		msgpack_unpacked_destroy(out);
		return agent_fail(
		    err, errlen, -1,
		    "malformed MessagePack (nested more than 32 deep?)");
	}
	if (out->data.type != MSGPACK_OBJECT_ARRAY) {
		msgpack_unpacked_destroy(out);
		return agent_fail(err, errlen, -1,
				  "message is not a MessagePack array");
	}
	return 0;
}

void frame_begin(msgpack_sbuffer *sb)
{
	static const char zero[4];

	msgpack_sbuffer_write(sb, zero, 4);
}

int frame_end(msgpack_sbuffer *sb, size_t start)
{
	size_t n = sb->size - start - 4;
	unsigned char *h = (unsigned char *)sb->data + start;

	if (n > VMHEAP_MAX_FRAME_BYTES)
		return -1;
	h[0] = (unsigned char)(n >> 24);
	h[1] = (unsigned char)(n >> 16);
	h[2] = (unsigned char)(n >> 8);
	h[3] = (unsigned char)n;
	return 0;
}

uint32_t frame_length(const unsigned char hdr[4])
{
	return (uint32_t)be(hdr, 4);
}

void frame_pack_str(msgpack_packer *pk, const char *s)
{
	size_t n = strlen(s);

	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

int frame_copy_str(const msgpack_object *o, char *buf, size_t buflen)
{
	if (o->type != MSGPACK_OBJECT_STR || o->via.str.size >= buflen)
		return -1;
	if (o->via.str.size == 0) {
		buf[0] = '\0';
		return 0;
	}
	if (memchr(o->via.str.ptr, '\0', o->via.str.size))
		return -1;
	memcpy(buf, o->via.str.ptr, o->via.str.size);
	buf[o->via.str.size] = '\0';
	return 0;
}

/* A bool from true/false, 0/1, or the strings a person types. */
int agent_want_bool(const msgpack_object *o, int *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};
	char s[8];

	if (o->type == MSGPACK_OBJECT_BOOLEAN) {
		*out = o->via.boolean;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= 1) {
		*out = (int)o->via.u64;
		return 0;
	}
	if (frame_copy_str(o, s, sizeof(s)) == 0) {
		for (int i = 0; i < 4; i++) {
			if (!strcasecmp(s, yes[i])) {
				*out = 1;
				return 0;
			}
			if (!strcasecmp(s, no[i])) {
				*out = 0;
				return 0;
			}
		}
	}
	return -1;
}
