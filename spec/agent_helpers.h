/*
 * agent_helpers.h - what the agent's integration tests share beyond
 * spec/lib (which starts the real vmheap-sample: spec_vm_start): call the
 * agent with the client API or a raw socket, and read dumps back with
 * libvmheap.
 */
#ifndef VMHEAP_SPEC_AGENT_HELPERS_H
#define VMHEAP_SPEC_AGENT_HELPERS_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/spec_reply.h" /* and vmheap_agent.h */

/* The sample VM: spec_vm_start, spec_vm_client (spec/lib/vmheap_spec.h). */
#include "lib/vmheap_spec.h"

/* call and require an ok reply; returns the reply (release it). */
void call_ok(vmheap_client *c, const char *verb, const char *path,
	     const char *value, struct spec_reply *r);
/* call and require an error reply with `code`. */
void call_error(vmheap_client *c, const char *verb, const char *path,
		const char *value, const char *code);
/* get VAR as an int64 */
int64_t get_int(vmheap_client *c, const char *var);

/* Look up key in a msgpack map; NULL if missing. */
const msgpack_object *map_get(const msgpack_object *map, const char *key);
int obj_str_is(const msgpack_object *o, const char *s);

/* Raw sockets */
int raw_connect(const struct spec_vm *s); /* connected, hello read */
void raw_send(int fd, const void *buf, size_t len);
/* Pack and send a frame holding `obj` given as msgpack bytes. */
void raw_send_frame(int fd, const void *payload, uint32_t len);
void raw_auth(int fd, const char *token);
/* Send [id, "auth", token] without reading the reply. */
void raw_auth_no_reply(int fd, const char *token, uint64_t id);
/* Read one frame: 1 with *out set, 0 on EOF/reset, -1 on timeout. */
int raw_read(int fd, msgpack_unpacked *out, int timeout_ms);
/* After an error reply, the agent closes: 1 if EOF follows in time. */
int raw_closed(int fd, int timeout_ms);

/* Per-class object counts of a dump, as a msgpack-free table. */
struct census_row {
	char name[64];
	uint64_t count;
};
/* Read the whole dump; returns number of rows (fails the test on a
 * read error).  *flags gets the header flags. */
int dump_census(const char *path, struct census_row *rows, int max,
		uint64_t *objects, uint32_t *flags);

/* Names in a directory, sorted, space-separated (for messages). */
void dir_listing(const char *dir, char *buf, size_t len);

/* The TCases of agent_ops_test.c (operations: issues 16 and 19). */
#include <check.h>
void agent_ops_tcases(Suite *s);
/* agent_dump_file_test.c: vmheap_agent_dump_file. */
void agent_dump_file_tcases(Suite *s);
/* agent_reply_test.c: a reply through the client API's readers. */
void agent_reply_tcases(Suite *s);

#endif
