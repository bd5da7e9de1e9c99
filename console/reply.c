/*
 * reply.c - the agent's reply as the console's renderers read it: its
 * value decoded by msgpack-c from the MessagePack bytes the client API
 * gives (vmheap_reply_msgpack), its code and message copied.
 */
#include <stdio.h>
#include <string.h>

#include "console-internal.h"

int console_reply_take(struct console_reply *out, vmheap_reply *r)
{
	const void *data;
	size_t len, off = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	msgpack_unpacked_init(&out->storage_);
	out->reply_ = r; /* msgpack-c's strings point into its bytes */
	snprintf(out->code, sizeof(out->code), "%s", vmheap_reply_code(r));
	snprintf(out->message, sizeof(out->message), "%s",
		 vmheap_reply_message(r));
	if (vmheap_reply_ok(r)) {
		if (vmheap_reply_msgpack(r, &data, &len) == 0 &&
		    msgpack_unpack_next(&out->storage_, data, len, &off) ==
			MSGPACK_UNPACK_SUCCESS) {
			out->ok = 1;
			out->value = out->storage_.data;
		} else {
			snprintf(out->code, sizeof(out->code), "nomem");
			snprintf(out->message, sizeof(out->message),
				 "out of memory reading the reply");
			rc = -1;
		}
	}
	return rc;
}

void console_reply_release(struct console_reply *reply)
{
	msgpack_unpacked_destroy(&reply->storage_);
	vmheap_reply_free(reply->reply_);
	memset(reply, 0, sizeof(*reply));
}
