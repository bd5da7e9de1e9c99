/*
 * fuzz-internal.h - what the fuzz targets share.
 *
 * Each target (reader_fuzz.c, protocol_fuzz.c, discovery_fuzz.c,
 * client_fuzz.c, histogram_fuzz.c, ...) defines
 * LLVMFuzzerTestOneInput.  They are built twice: with clang and libFuzzer
 * (make fuzz), and with the project's compiler into the reliability suite,
 * which replays spec/regress/ through the very same entry points.
 */
#ifndef VMHEAP_FUZZ_INTERNAL_H
#define VMHEAP_FUZZ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* The dump reader: records loop, raw blocks with a block cursor, and the
 * census the tools use. */
int fuzz_reader_one(const uint8_t *data, size_t size);

/* The protocol: frame check/decode, then the bytes sent to a live agent
 * (in this process) after a real handshake. */
int fuzz_protocol_one(const uint8_t *data, size_t size);

/* The discovery-file parser: vmheap_discovery_read on a 0600 file. */
int fuzz_discovery_one(const uint8_t *data, size_t size);

/* The fork guard's cgroup reader (agent/cgroup.c) on these bytes as
 * /proc/self/cgroup, mountinfo and the memory files. */
int fuzz_cgroup_one(const uint8_t *data, size_t size);

/* The client API against a peer that sends these bytes. */
int fuzz_client_one(const uint8_t *data, size_t size);

/* vmheap_import() on these bytes as dump_all JSON (hprof 0) or HPROF
 * (hprof 1): import_fuzz.c. */
int fuzz_import_one(const uint8_t *data, size_t size, int hprof);

/* The console's reader and printer of a live histogram reply on these
 * bytes as one MessagePack value (histogram_fuzz.c). */
int fuzz_histogram_one(const uint8_t *data, size_t size);

/* The console's naming of the live native sites on these bytes as one
 * MessagePack value (native_sites_fuzz.c). */
int fuzz_native_sites_one(const uint8_t *data, size_t size);

/* The malloc tracker's unwind-table reader (native/cfa.c) on these
 * bytes as a code offset and an .eh_frame section (cfa_fuzz.c). */
int fuzz_cfa_one(const uint8_t *data, size_t size);

/* The leak scan's readers of what the process holds (scan_fuzz.c): the
 * first byte picks glibc's chunk walk (native/chunks.c) over the rest
 * as heap memory, or the parser of a thread's syscall file
 * (native/threads.c). */
int fuzz_scan_one(const uint8_t *data, size_t size);

/* The malloc trace reader on these bytes as a trace file
 * (trace_fuzz.c). */
int fuzz_trace_one(const uint8_t *data, size_t size);

/* vmheap-replay's program builder and engine on these bytes as events
 * (replay_fuzz.c). */
int fuzz_replay_one(const uint8_t *data, size_t size);

/* Stop the protocol target's agent (the suite calls it when done). */
void fuzz_protocol_shutdown(void);

#endif
