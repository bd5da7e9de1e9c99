/*
 * spec_reply.h - the agent's replies as the tests read them: the client
 * API's opaque reply (vmheap_agent.h) with its value decoded by msgpack-c
 * from vmheap_reply_msgpack, so that a check compares msgpack_objects,
 * an independent decoding of what the library's readers give (the
 * agent suite compares the two).
 */
#ifndef VMHEAP_SPEC_REPLY_H
#define VMHEAP_SPEC_REPLY_H

#include <msgpack.h>

#include "vmheap_agent.h"

struct spec_reply {
	int ok;		      /* vmheap_reply_ok */
	msgpack_object value; /* when ok */
	char code[32];	      /* when !ok: vmheap_reply_code */
	char message[512];    /* when !ok: vmheap_reply_message */
	vmheap_reply *reply;  /* the library's reply: value points into it */
	msgpack_unpacked storage_;
};

/* vmheap_client_call (value packed from `value`, NULL for none) and
 * vmheap_client_call_str, the reply put into *r (which need not be
 * initialized); their return value (VMHEAP_ENOMEM when the value cannot
 * be decoded).  No ck_assert: threads may call them.  Release *r in every
 * case. */
int spec_client_call(vmheap_client *c, const char *verb, const char *path,
		     const msgpack_object *value, struct spec_reply *r);
int spec_client_call_str(vmheap_client *c, const char *verb, const char *path,
			 const char *value, struct spec_reply *r);
void spec_reply_release(struct spec_reply *r);

#endif
