/*
 * vmheap.h - libvmheap, the streaming writer and reader of vmheap dumps.
 *
 * The dump format is specified in format/FORMAT.md; this header is the C
 * interface to it.  A dump is:
 *
 *   magic, HEAD section, BLCK sections..., FOOT section, trailer
 *
 * and every BLCK section carries self-delimiting MessagePack records
 * (string, class, object, root, more-references).
 *
 * Errors: the one convention of every vmheap header
 * --------------------------------------------------
 * (vmheap_analysis.h, vmheap_graph.h, vmheap_graph_query.h,
 * vmheap_suspects.h, vmheap_agent.h and vmheap_native.h refer to this
 * text; HACKING.md "Conventions" says why it is this one.)
 *
 *  1. Codes.  A function that can fail returns 0 (or a count >= 0 where
 *     documented) on success and a negative code on failure: VMHEAP_E...
 *     below (-1 .. -99), or VMHEAP_AGENT_E... (vmheap_agent.h, -100 and
 *     below).  vmheap_strerror() and vmheap_agent_strerror() name them.
 *  2. Messages of objects.  Every object (writer, reader, block cursor,
 *     census, graph, agent, client) is opaque and keeps the message of
 *     its last error in a buffer of its own: its _error() accessor
 *     returns it ("" when there was none), always NUL-terminated, cut
 *     (never overrun) when long, valid until the next call on that object
 *     or its _free.  The message says what is wrong first and then where
 *     (file name, byte offset).  An object is used by one thread at a
 *     time; objects share nothing, so each thread may have its own (block
 *     cursors over the blocks of one reader decode on many threads).
 *  3. Failed constructors.  A function that creates an object (_open,
 *     _new, _start, _connect, _read) takes `T **out` and sets *out in
 *     every case; only a NULL `out` is refused (VMHEAP_EINVAL) without it.
 *     After a failure *out is a failed object that holds the reason and is
 *     good only for its _error and _free (_stop, _close) functions, or
 *     NULL when not even that could be allocated: then the code is
 *     VMHEAP_ENOMEM and the _error functions return "out of memory" for
 *     NULL.  The _free functions accept NULL.  So one pattern fits every
 *     constructor:
 *
 *	rc = vmheap_reader_open_path(&r, path);
 *	if (rc < 0)
 *		report(vmheap_strerror(rc), vmheap_reader_error(r));
 *	vmheap_reader_free(r);   // also after a failure
 *
 *  4. Functions without an object (vmheap_scan_blocks,
 *     vmheap_identity_diff, vmheap_agent_config_from_env,
 *     vmheap_discovery_read, and the callbacks a caller provides that
 *     take these parameters) take `char *err, size_t errlen`: they write
 *     into err[0 .. errlen-1] only and always leave a NUL-terminated
 *     string there, "" on success, the message on failure, cut to errlen
 *     - 1 bytes.  errlen 0 asks for no message (err may then be NULL).
 *     No function keeps a message anywhere else (no global, no
 *     thread-local state): every message is the caller's object's or the
 *     caller's buffer's, which is what makes them safe on many threads.
 *  5. The libraries never exit the process and never print.
 *     (vmheap_native.h's tracker, called from inside malloc, returns
 *     codes only and keeps no messages: see there.)
 *
 * Writing
 * -------
 *	vmheap_writer *w;
 *	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
 *	opt.vm_name = "sample";
 *	if (vmheap_writer_open(&w, fd, &opt) < 0) ...
 *	vmheap_writer_add_class(w, 1, "Object", 6, 0, 0);
 *	vmheap_writer_add_object(w, 0x1000, 1, 40, 0, refs, nrefs);
 *	rc = vmheap_writer_finish(w);   // writes the footer; sticky errors
 *	vmheap_writer_free(w);
 *
 * Reading
 * -------
 *	vmheap_reader *r;
 *	struct vmheap_record rec;
 *	if (vmheap_reader_open_path(&r, "heap.vmheap") < 0) ...
 *	while ((rc = vmheap_reader_next(r, &rec)) > 0) { ... }
 *	if (rc < 0) fprintf(stderr, "%s\n", vmheap_reader_error(r));
 *	vmheap_reader_free(r);
 *
 * vmheap_reader_next() returns 0 only after the footer has been read and
 * all of its totals matched what was decoded: a caller that sees 0 holds
 * the whole dump, never a truncated one.
 */
#ifndef VMHEAP_H
#define VMHEAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Marks the functions that the shared libraries export.  They are built
 * with -fvisibility=hidden: whatever a public header does not mark stays
 * inside the library.
 */
#ifndef VMHEAP_EXPORT
#define VMHEAP_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Format version written by this library. */
#define VMHEAP_FORMAT_MAJOR 1
#define VMHEAP_FORMAT_MINOR 0
/* The minor version of a dump that carries anything 1.0 does not know: a
 * native section, edge or root names, allocation sites (FORMAT.md
 * section 10). */
#define VMHEAP_FORMAT_MINOR_NATIVE 1
#define VMHEAP_FORMAT_MINOR_1_1 1

/* Error codes.  All are negative; 0 is success. */
enum vmheap_error {
	VMHEAP_OK = 0,
	VMHEAP_EIO = -1,      /* read or write failed (errno kept in message) */
	VMHEAP_ENOMEM = -2,   /* out of memory */
	VMHEAP_EINVAL = -3,   /* bad argument from the caller */
	VMHEAP_EMAGIC = -4,   /* not a vmheap dump (wrong magic) */
	VMHEAP_EVERSION = -5, /* newer major format version */
	VMHEAP_ETRUNCATED = -6, /* the file ends early (no footer) */
	VMHEAP_ECHECKSUM = -7,	/* a section's CRC32C does not match */
	VMHEAP_EFORMAT = -8,	/* malformed section or record */
	VMHEAP_ELIMIT = -9,	/* a limit of FORMAT.md is exceeded */
	VMHEAP_ETOTALS = -10,	/* footer totals disagree with the records */
	VMHEAP_ENOSPC = -11,	/* no space left on device / file too large */
	VMHEAP_ESTATE =
	    -12, /* call not valid in this state (e.g. after finish) */
};

/*
 * Return a short, static, human-readable name for an error code, e.g.
 * "dump is truncated".  Unknown codes give "unknown error".
 */
VMHEAP_EXPORT
const char *vmheap_strerror(int code);

/* ---------------------------------------------------------------- limits */

/* Largest section payload a reader accepts (and a writer produces). */
#define VMHEAP_MAX_SECTION_BYTES (16u * 1024u * 1024u)
/* References carried by one object or more-references record. */
#define VMHEAP_MAX_REFS_PER_RECORD 65536u
/* Longest string or class name, in bytes. */
#define VMHEAP_MAX_STRING_BYTES (64u * 1024u)
/* Target payload size of a block; a block is closed once it passes this. */
#define VMHEAP_DEFAULT_BLOCK_BYTES (64u * 1024u)

/* ---------------------------------------------------------------- header */

/* Header flags. */
#define VMHEAP_FLAG_LIVE_ONLY 0x1u /* a full GC ran before the walk */
#define VMHEAP_FLAG_FORKED 0x2u	   /* written by a forked child of the VM */

/*
 * The process's memory when it was dumped (header keys `rss`,
 * `malloc_in_use`, `malloc_free`, `malloc_mmap`, format 1.0: readers
 * that do not know them skip them): its resident set, and the C
 * allocator's own figures (glibc mallinfo2: arena bytes in use and free,
 * and bytes in mmapped chunks).
 */
struct vmheap_process_memory {
	uint64_t rss;
	uint64_t malloc_in_use;
	uint64_t malloc_free;
	uint64_t malloc_mmap;
};

/*
 * The dump header, as written and as read back.  Strings are NUL-terminated
 * UTF-8.  In a reader they stay valid until vmheap_reader_free().
 */
struct vmheap_header {
	uint32_t major, minor;	       /* format version */
	const char *vm_name;	       /* e.g. "ruby", "sample" */
	const char *vm_version;	       /* e.g. "3.1.2" */
	uint64_t pid;		       /* pid of the VM that was dumped */
	int64_t time;		       /* seconds since the Unix epoch */
	int64_t time_ms;	       /* milliseconds since the epoch: the
					  header's `time_ms`, else time * 1000 */
	uint32_t pointer_size;	       /* bytes in a VM pointer: 4 or 8 */
	uint32_t flags;		       /* VMHEAP_FLAG_* */
	const char *const *kind_names; /* kind_names[k] names object kind k */
	size_t kind_count;
	/* The process's memory; has_memory is 0 when the header has none of
	 * its keys (then memory is all zero). */
	struct vmheap_process_memory memory;
	int has_memory;
};

/* ---------------------------------------------------------------- writer */

typedef struct vmheap_writer vmheap_writer;

/* Options for vmheap_writer_open(); NULL strings are written as "". */
struct vmheap_writer_options {
	const char *vm_name;
	const char *vm_version;
	uint64_t pid;	       /* 0: getpid(), wrong in a forked child:
				  there, pass the VM's pid */
	int64_t time;	       /* 0: time(NULL), or time_ms / 1000 */
	/* Milliseconds since the epoch; 0: time * 1000 when `time` is
	 * given, else the clock (CLOCK_REALTIME).  The header carries the key
	 * `time_ms` only when it is not a whole second (FORMAT.md section 5);
	 * readers get time * 1000 otherwise, which is then exact. */
	int64_t time_ms;
	uint32_t pointer_size; /* 0: sizeof(void *) */
	uint32_t flags;
	const char *const *kind_names;
	size_t kind_count;
	uint32_t block_bytes; /* 0: VMHEAP_DEFAULT_BLOCK_BYTES; at most 8 MiB */
	/* Non-zero when the dump will carry a native section
	 * (vmheap_writer_add_native): the header then says format 1.1.
	 * Otherwise it says 1.0, which 1.0 readers know. */
	int native;
	/* The process's memory, written into the header; NULL: none. */
	const struct vmheap_process_memory *memory;
	/* Non-zero when objects and roots will carry names (edge names,
	 * root names: vmheap_writer_add_object_named, _add_root_named), and
	 * when objects will carry allocation sites (vmheap_writer_add_site).
	 * Either makes the header say 1.1; without it the writer refuses
	 * names and sites (VMHEAP_EINVAL). */
	int edge_names;
	int sites;
};
#define VMHEAP_WRITER_OPTIONS_INIT                                             \
	{                                                                      \
		0                                                              \
	}

/*
 * Start a dump on the file descriptor `fd`, which the writer does not own
 * and never seeks (a pipe works; the caller should ignore or block
 * SIGPIPE if the reading end may go away, an EPIPE is then VMHEAP_EIO).
 * The magic and header are buffered and go out with the first block, so
 * open does no I/O and every write error surfaces from an add call or
 * from finish.  On success *out is set; on failure *out is NULL and the
 * code is the whole story (VMHEAP_ENOMEM, or VMHEAP_EINVAL / VMHEAP_ELIMIT
 * for a negative fd or bad options).  The writer uses the C heap only
 * (malloc), never the VM's.  Memory stays bounded: one block buffer, plus
 * 8 bytes per block written for the footer's block index.
 */
VMHEAP_EXPORT
int vmheap_writer_open(vmheap_writer **out, int fd,
		       const struct vmheap_writer_options *opt);

/*
 * The add calls return 0, a sticky write error (VMHEAP_EIO, VMHEAP_ENOSPC,
 * VMHEAP_ENOMEM: the dump is lost, and finish will return it too), or a
 * non-sticky argument error (VMHEAP_EINVAL, VMHEAP_ELIMIT for a string
 * longer than VMHEAP_MAX_STRING_BYTES: nothing was added, and the writer
 * can go on).  After finish they return VMHEAP_ESTATE.
 */

/*
 * Add a string record: `id` names it for root records.  `text` need not be
 * NUL-terminated and is `len` bytes of UTF-8.
 */
VMHEAP_EXPORT
int vmheap_writer_add_string(vmheap_writer *w, uint64_t id, const char *text,
			     size_t len);

/*
 * Add a class record.  It must come before any object of that class (the
 * writer does not check this; readers may report such objects' class as
 * unknown).
 * `id` is the class id that objects use (small dense ids give smaller
 * dumps); `super_id` is the superclass's id, or 0 for none.  `name` is
 * `name_len` bytes of UTF-8 and may be empty.
 */
VMHEAP_EXPORT
int vmheap_writer_add_class(vmheap_writer *w, uint64_t id, const char *name,
			    size_t name_len, uint64_t super_id, uint32_t flags);

/*
 * Add a class record that also names the heap object that is the class
 * itself (format 1.1, FORMAT.md "Class objects"): `object_id` is the id of
 * that object record (a Ruby Class or Module, a java.lang.Class), so that
 * the tools can call the object by the class's name.  0 means none and
 * writes what vmheap_writer_add_class writes.  Errors as that function.
 */
VMHEAP_EXPORT
int vmheap_writer_add_class_object(vmheap_writer *w, uint64_t id,
				   const char *name, size_t name_len,
				   uint64_t super_id, uint32_t flags,
				   uint64_t object_id);

/*
 * Add an object: its 64-bit id (the VM address), its class id, its shallow
 * size in bytes, its kind (an index into the header's kind names) and the
 * ids of the objects it references.  Any number of references is accepted:
 * past VMHEAP_MAX_REFS_PER_RECORD the writer continues them in
 * more-references records.
 */
VMHEAP_EXPORT
int vmheap_writer_add_object(vmheap_writer *w, uint64_t id, uint64_t class_id,
			     uint64_t bytes, uint32_t kind,
			     const uint64_t *refs, size_t nrefs);

/*
 * Add a root: `kind_string_id` is the id of a string record naming the
 * root category (e.g. "vm", "machine_context"); `object_id` is the root.
 */
VMHEAP_EXPORT
int vmheap_writer_add_root(vmheap_writer *w, uint64_t kind_string_id,
			   uint64_t object_id);

/* ------------------------------------------------ names and sites (1.1) */

/*
 * Edge names (FORMAT.md section 16).  A reference may carry a name: the
 * id of a string record whose text names it (`@store`, `::STORE`,
 * `["k17"]`, `.next`: the text conventions are in FORMAT.md), or an
 * element index.  One int64_t per reference says which:
 *   0            no name (VMHEAP_EDGE_NAME_NONE)
 *   N > 0        the text of string record N
 *   v < 0        element index -1 - v (vmheap_edge_name_index())
 */
#define VMHEAP_EDGE_NAME_NONE 0

/* The name value of element index i (index 0 is -1). */
static inline int64_t vmheap_edge_name_index(uint64_t i)
{
	return -1 - (int64_t)i;
}

/* Non-zero when the name value n is an element index. */
static inline int vmheap_edge_name_is_index(int64_t n)
{
	return n < 0;
}

/* The element index of a name value for which vmheap_edge_name_is_index(). */
static inline uint64_t vmheap_edge_name_index_of(int64_t n)
{
	return (uint64_t)(-1 - n);
}

/*
 * Add an object as vmheap_writer_add_object() does, with a name for each
 * reference and an allocation site (format 1.1).  `names` is NULL (no
 * names) or holds nrefs name values as above; string ids used as names
 * are at most INT64_MAX.  `site_id` is the id of a site record
 * (vmheap_writer_add_site), 0 for none.  Names need the writer option
 * `edge_names`, a site the option `sites` (else VMHEAP_EINVAL, not
 * sticky).  A record whose names are all 0 is written without names.
 */
VMHEAP_EXPORT
int vmheap_writer_add_object_named(vmheap_writer *w, uint64_t id,
				   uint64_t class_id, uint64_t bytes,
				   uint32_t kind, const uint64_t *refs,
				   const int64_t *names, size_t nrefs,
				   uint64_t site_id);

/*
 * Add a root with a name: `name_string_id` is the id of a string record
 * (a global variable `$audit`, a thread), 0 for none.  A name needs the
 * writer option `edge_names`.
 */
VMHEAP_EXPORT
int vmheap_writer_add_root_named(vmheap_writer *w, uint64_t kind_string_id,
				 uint64_t object_id, uint64_t name_string_id);

/*
 * Add an allocation site record (format 1.1): `site_id` (at least 1) is
 * what objects name it by; `file` (`file_len` bytes) and `line` say where
 * the allocation happened, `method` (may be empty) in which method.  Needs
 * the writer option `sites`.  A site record should come before the first
 * object that uses it.
 */
VMHEAP_EXPORT
int vmheap_writer_add_site(vmheap_writer *w, uint64_t site_id,
			   const char *file, size_t file_len, uint64_t line,
			   const char *method, size_t method_len);

/*
 * Flush the last block and write the footer and trailer.  Returns 0 only
 * if every write since open succeeded: a write error is sticky, and once
 * one happened every later call returns it.  Does not close or fsync fd.
 */
VMHEAP_EXPORT
int vmheap_writer_finish(vmheap_writer *w);

/* Bytes written to fd so far (magic included). */
VMHEAP_EXPORT
uint64_t vmheap_writer_bytes_written(const vmheap_writer *w);

/* Objects added so far. */
VMHEAP_EXPORT
uint64_t vmheap_writer_objects(const vmheap_writer *w);

/* Sum of the shallow sizes of the objects added so far. */
VMHEAP_EXPORT
uint64_t vmheap_writer_object_bytes(const vmheap_writer *w);

/* Message of the last error, or "" if none. */
VMHEAP_EXPORT
const char *vmheap_writer_error(const vmheap_writer *w);

/* Free the writer.  Without a successful finish the output is incomplete
 * (it has no footer), and every reader reports it as truncated. */
VMHEAP_EXPORT
void vmheap_writer_free(vmheap_writer *w);

/* --------------------------------------------------------- native section */

/*
 * The native section (FORMAT.md section 15, format 1.1): the C allocator's
 * live memory by native stack, from the malloc tracker, and the modules the
 * stacks' frames point into.  A frame is (module, offset): the return
 * address minus the module's load address, so that a tool resolves it
 * offline against the module's file (same build id).
 *
 * Names: a "stack" (native stack) is the call stack, return addresses
 * innermost first, under which the tracker accounts C allocations; it is
 * never called a site here.  A "site" is only ever the allocation site of
 * managed objects (vmheap_writer_add_site: a VM file, line and method).
 * The VM source location a stack may carry (vm_file, vm_line: the Ruby
 * line that called into C) is its "VM location".  The file format keeps
 * its keys: the native section's `sites` array holds the stacks (FORMAT.md
 * section 15; doc/api-migration.md has the whole mapping).
 */

/* A frame's module when the address lies in no listed module (then
 * `offset` is the address itself). */
#define VMHEAP_NO_MODULE UINT32_MAX
/* Most frames in one stack, and longest module path and build id. */
#define VMHEAP_MAX_STACK_FRAMES 256u
#define VMHEAP_MAX_BUILD_ID_BYTES 64u

struct vmheap_dump_frame {
	uint32_t module; /* index into the modules, or VMHEAP_NO_MODULE */
	uint64_t offset; /* return address minus the module's base */
};

struct vmheap_dump_module {
	const char *path; /* not NUL-terminated; "" when unknown */
	size_t path_len;  /* at most VMHEAP_MAX_STRING_BYTES */
	const uint8_t *build_id; /* GNU build id, may be NULL */
	size_t build_id_len;     /* at most VMHEAP_MAX_BUILD_ID_BYTES */
	uint64_t base;		 /* load address */
};

/*
 * A stack's VM location may be a label instead of a file: "<...>" with
 * line 0 (FORMAT.md section 15).  This one says that the memory is
 * vmheap's own (the agent's, the allocation tracer's): tools report its
 * total apart and never list it as a stack.  Others name the VM's
 * housekeeping ("<ruby: gc>", "<ruby: postponed job>") and are stacks
 * like any.
 */
#define VMHEAP_NATIVE_OWN "<vmheap>"

/* One native stack and the allocations accounted to it (an element of
 * the native section's `sites` array). */
struct vmheap_dump_stack {
	uint64_t live_bytes, live_count; /* not yet freed */
	uint64_t allocs, frees; /* since tracking began */
	const struct vmheap_dump_frame *frames; /* innermost first */
	size_t depth; /* at most VMHEAP_MAX_STACK_FRAMES */
	/* The VM location of the allocations (a Ruby file and line), when
	 * the VM gave one: vm_file NULL (and vm_file_len 0) when none.  Not
	 * NUL-terminated; at most VMHEAP_MAX_STRING_BYTES. */
	const char *vm_file;
	size_t vm_file_len;
	uint64_t vm_line;
};

/*
 * Add the native section: `nmodules` modules and `nstacks` stacks, whose
 * frames name modules by index.  The writer must have been opened with
 * options.native set (else VMHEAP_ESTATE).  The section goes between
 * blocks (a block holding records is closed first).  Non-sticky errors,
 * nothing added: VMHEAP_EINVAL (a module index out of range, a NULL
 * array with a non-zero count), VMHEAP_ELIMIT (a path, build id or depth
 * past its limit, or a section past VMHEAP_MAX_SECTION_BYTES: pass fewer
 * stacks, the largest first).  At most one per dump.
 */
VMHEAP_EXPORT
int vmheap_writer_add_native(vmheap_writer *w,
			     const struct vmheap_dump_module *modules,
			     size_t nmodules,
			     const struct vmheap_dump_stack *stacks,
			     size_t nstacks);

/*
 * The leak classification of one stack's live blocks (FORMAT.md section
 * 15, key `leaks`): what the tracker's conservative scan found when the
 * dump was taken.  leaked: nothing points at the block; indirect: only
 * leaked blocks do; possible: only pointers into its interior do;
 * reachable: a root does, directly or through reachable blocks.
 */
struct vmheap_dump_leaks {
	uint64_t leaked_count, leaked_bytes;
	uint64_t indirect_count, indirect_bytes;
	uint64_t possible_count, possible_bytes;
	uint64_t reachable_count, reachable_bytes;
};

/* A leak scan: one vmheap_dump_leaks per stack, in the stacks' order, and
 * what the scan read. */
struct vmheap_dump_leak_scan {
	const struct vmheap_dump_leaks *stacks;
	uint64_t blocks;           /* tracked blocks classified */
	uint64_t root_bytes;       /* bytes read as roots */
	uint64_t skipped_mappings; /* writable mappings not (all) readable */
	uint64_t skipped_bytes;    /* bytes of them not read */
	uint64_t scan_ns;          /* the scan's time */
	uint64_t memory_bytes;     /* memory the scan mapped for itself */
};

/*
 * As vmheap_writer_add_native, with the leak scan's result (may be NULL:
 * then exactly vmheap_writer_add_native), whose `stacks` has one element
 * per stack (NULL with nstacks > 0: VMHEAP_EINVAL).
 */
VMHEAP_EXPORT
int vmheap_writer_add_native_leaks(vmheap_writer *w,
				   const struct vmheap_dump_module *modules,
				   size_t nmodules,
				   const struct vmheap_dump_stack *stacks,
				   size_t nstacks,
				   const struct vmheap_dump_leak_scan *leaks);

/*
 * A decoded native section, made by vmheap_reader_native() (never by the
 * caller: the library allocates it with more than these fields, so it is
 * neither copied nor embedded).  Arrays and strings owned by it.
 */
struct vmheap_native {
	uint64_t offset; /* of the section's header in the file */
	struct vmheap_dump_module *modules;
	size_t nmodules;
	struct vmheap_dump_stack *stacks;
	size_t nstacks;
	/* The leak scan (key `leaks`), NULL when the dump has none; its
	 * `stacks` has nstacks elements.  Owned by the section. */
	struct vmheap_dump_leak_scan *leaks;
};

/* Free a decoded native section (NULL is fine). */
VMHEAP_EXPORT
void vmheap_native_free(struct vmheap_native *n);

/* ---------------------------------------------------------------- records */

enum vmheap_record_type {
	VMHEAP_RECORD_STRING = 1,
	VMHEAP_RECORD_CLASS = 2,
	VMHEAP_RECORD_OBJECT = 3,
	VMHEAP_RECORD_ROOT = 4,
	VMHEAP_RECORD_MORE_REFS =
	    5, /* continues the references of `object.id` */
	VMHEAP_RECORD_SITE = 6, /* an allocation site (format 1.1) */
};

/*
 * One decoded record.  Pointers inside point into the reader's (or block
 * cursor's) buffers and stay valid until the next call on it.
 */
struct vmheap_record {
	enum vmheap_record_type type;
	uint64_t offset; /* byte offset of the record in the file */
	union {
		struct {
			uint64_t id;
			const char *text; /* not NUL-terminated */
			size_t len;
		} string;
		struct {
			uint64_t id;
			const char *name; /* not NUL-terminated */
			size_t name_len;
			uint64_t super_id;
			uint32_t flags;
			/* the object that is this class (1.1), 0: none */
			uint64_t object_id;
		} klass;
		struct {
			uint64_t id;
			uint64_t class_id; /* 0 in a MORE_REFS record */
			uint64_t bytes;	   /* 0 in a MORE_REFS record */
			uint32_t kind;	   /* 0 in a MORE_REFS record */
			const uint64_t *refs;
			size_t nrefs;
			/* NULL, or a name value per reference (see
			 * VMHEAP_EDGE_NAME_NONE); always NULL from the
			 * shallow decoders */
			const int64_t *names;
			uint64_t site; /* site id, 0 for none (and in a
					  MORE_REFS record) */
		} object; /* also used by VMHEAP_RECORD_MORE_REFS */
		struct {
			uint64_t kind_string_id;
			uint64_t object_id;
			uint64_t name_string_id; /* 0: no name */
		} root;
		struct {
			uint64_t id;
			const char *file; /* not NUL-terminated */
			size_t file_len;
			uint64_t line;
			const char *method; /* not NUL-terminated */
			size_t method_len;
		} site;
	} u;
};

/* Totals from the footer (and, while reading, as counted so far). */
struct vmheap_totals {
	uint64_t objects;
	uint64_t bytes; /* sum of shallow sizes */
	uint64_t classes;
	uint64_t roots;
	uint64_t references;
	uint64_t strings;
	uint64_t blocks;
	uint64_t sites; /* site records (format 1.1) */
};

/*
 * Count one decoded record into *t the way the footer counts records
 * (FORMAT.md section 7): an object adds 1 to objects, its size to bytes
 * and its references to references; a more-references record adds its
 * references; string, class, root and site records add 1 to strings,
 * classes, roots and sites.  `blocks` is left alone.  A caller that decodes the blocks
 * of vmheap_reader_next_block() itself sums its records with this and
 * compares the sums with vmheap_reader_totals() at the end.
 */
VMHEAP_EXPORT
void vmheap_totals_add_record(struct vmheap_totals *t,
			      const struct vmheap_record *rec);

/* ---------------------------------------------------------------- blocks */

/*
 * A block is a unit that decodes on its own: object id deltas restart at
 * each block.  A caller that wants several cores can take raw blocks from
 * vmheap_reader_next_block() (CRC already checked) and decode them on
 * other threads with a vmheap_block_cursor each.
 */
struct vmheap_block {
	uint64_t offset;     /* file offset of the section header */
	uint32_t records;    /* record count from the section header */
	uint32_t length;     /* payload bytes */
	const uint8_t *data; /* payload */
};

/* Cursor that decodes the records of one block (opaque).  Besides
 * itself, its only allocations are its reference and name buffers, grown
 * on demand and kept across vmheap_block_cursor_reset(). */
typedef struct vmheap_block_cursor vmheap_block_cursor;

/*
 * Create a cursor over `block`, whose data must outlive it (or until the
 * next reset).  0 with *out set; VMHEAP_ENOMEM with *out NULL; a NULL
 * block gives VMHEAP_EINVAL and a failed cursor (see "Failed
 * constructors").  Free it with vmheap_block_cursor_free().
 *
 * Migration from ABI 2 (doc/api-migration.md): a cursor was
 * a struct on the caller's stack, set up by vmheap_block_cursor_init(&c,
 * blk), its message in c.error, released with
 * vmheap_block_cursor_release(&c).  Now vmheap_block_cursor_open(&c,
 * blk), vmheap_block_cursor_error(c), vmheap_block_cursor_free(c).
 */
VMHEAP_EXPORT
int vmheap_block_cursor_open(vmheap_block_cursor **out,
			     const struct vmheap_block *block);

/*
 * A block's summary record (FORMAT.md section 6, tag 7): written first in
 * a block of many objects, it counts the objects by class and kind so
 * that a census need not decode them.
 */
struct vmheap_block_summary {
	uint64_t objects;    /* object records in the block */
	uint64_t references; /* their references (more-references records
				not included: they are among the others) */
	uint64_t bytes;	     /* the rows' bytes, summed modulo 2^64 */
};

/* One row of a summary: `count` objects of class `class_id` and kind
 * `kind`, `bytes` in all.  Return 0 to go on, or a negative code to stop
 * (vmheap_block_cursor_summary returns it). */
typedef int (*vmheap_summary_row_fn)(void *arg, uint64_t class_id,
				     uint32_t kind, uint64_t count,
				     uint64_t bytes);
/* One record of the block that is no object, decoded as by
 * vmheap_block_cursor_next_shallow(); 0 to go on or a negative code. */
typedef int (*vmheap_summary_record_fn)(void *arg,
					const struct vmheap_record *rec);

/*
 * Read a block through its summary.  On a cursor fresh at its block's
 * first record: when the block starts with a summary record, give each
 * of its rows to row_fn and each of the block's records that is no object
 * to record_fn, fill *sum, leave the cursor exhausted and return 1.
 * Returns 0 when the block has no summary (nothing consumed: decode it
 * with vmheap_block_cursor_next*() as usual), or a negative code: the
 * block is malformed (message in vmheap_block_cursor_error(c), as for
 * vmheap_block_cursor_next) or a callback's own code.  Object records are
 * not decoded, so nothing checks that they agree with the rows; a caller
 * that needs that decodes the block instead.
 */
/* 1 when `blk` begins with a summary record, which
 * vmheap_block_cursor_summary() can read; 0 otherwise.  Looks at two
 * bytes: the record is not checked. */
VMHEAP_EXPORT
int vmheap_block_has_summary(const struct vmheap_block *blk);

VMHEAP_EXPORT
int vmheap_block_cursor_summary(vmheap_block_cursor *c,
				struct vmheap_block_summary *sum,
				vmheap_summary_row_fn row_fn,
				vmheap_summary_record_fn record_fn, void *arg);

/* Point a cursor at another block, keeping its buffers (for a thread that
 * decodes many blocks in turn); this also clears its error. */
VMHEAP_EXPORT
void vmheap_block_cursor_reset(vmheap_block_cursor *c,
			       const struct vmheap_block *block);

/*
 * Decode the next record.  Returns 1 with *rec filled, 0 when the block is
 * exhausted (and its record count matched), or a negative code with the
 * message in vmheap_block_cursor_error(c) (the same code again on every later
 * call).  Records of unknown tags are skipped.  The error message does not name
 * the file; prefix it with vmheap_reader_name().
 */
VMHEAP_EXPORT
int vmheap_block_cursor_next(vmheap_block_cursor *c, struct vmheap_record *rec);

/*
 * The same, for callers that need no object graph (a census, a table of
 * object ids): object and more-references records come with their
 * references checked and counted (rec->u.object.nrefs) but not decoded,
 * and rec->u.object.refs is NULL.  Everything else, errors included, is
 * as with vmheap_block_cursor_next(); the two may be mixed on one cursor.
 * Skipping the references is most of the work of a full decode saved.
 */
VMHEAP_EXPORT
int vmheap_block_cursor_next_shallow(vmheap_block_cursor *c,
				     struct vmheap_record *rec);

/*
 * Decode up to `max` (at least 1) records as vmheap_block_cursor_next_shallow()
 * does, into recs[0..n), for callers that go through millions of records
 * and would rather not make a call per record.  Returns n >= 1, 0 when the
 * block is exhausted, or a negative code with the message in
 * vmheap_block_cursor_error(c); when a record fails after others were decoded,
 * those are returned first and the error on the next call.
 */
VMHEAP_EXPORT int
vmheap_block_cursor_next_shallow_batch(vmheap_block_cursor *c,
				       struct vmheap_record *recs, int max);

/* Message of the cursor's last error ("" if none; "out of memory" for
 * NULL).  It does not name the file: prefix it with
 * vmheap_reader_name(). */
VMHEAP_EXPORT
const char *vmheap_block_cursor_error(const vmheap_block_cursor *c);

/* Free the cursor and its buffers (NULL is fine). */
VMHEAP_EXPORT
void vmheap_block_cursor_free(vmheap_block_cursor *c);

/* ---------------------------------------------------------------- reader */

typedef struct vmheap_reader vmheap_reader;

/*
 * Open a dump on `fd` (not owned; read sequentially, so a pipe works).
 * `name` is used in error messages (e.g. the path, or "<stdin>").  The
 * magic and header are read and checked before this returns.  On failure
 * *out is a failed reader that holds the reason (vmheap_reader_error()),
 * or NULL when even that could not be allocated (VMHEAP_ENOMEM); free it
 * with vmheap_reader_free() in every case.
 */
VMHEAP_EXPORT
int vmheap_reader_open_fd(vmheap_reader **out, int fd, const char *name);

/* Open the file at `path` and read its header; see vmheap_reader_open_fd
 * (failures, a NULL path among them, give a failed reader in the same
 * way).  The reader owns (and closes) the file descriptor. */
VMHEAP_EXPORT
int vmheap_reader_open_path(vmheap_reader **out, const char *path);

/* The header read by open. */
VMHEAP_EXPORT
const struct vmheap_header *vmheap_reader_header(const vmheap_reader *r);

/*
 * Decode the next record into *rec.  Returns 1 for a record, 0 at the end
 * of a complete, verified dump, or a negative code (message via
 * vmheap_reader_error(), naming the file and byte offset).  After an
 * error every later call returns the same error.
 */
VMHEAP_EXPORT
int vmheap_reader_next(vmheap_reader *r, struct vmheap_record *rec);

/*
 * Read the next raw block, check its CRC, and return 1 with *blk filled
 * (data valid until the next call), 0 after the footer has been read and
 * verified, or a negative code.  Do not mix with vmheap_reader_next() on
 * the same reader.  The footer's record totals cannot be checked in this
 * mode (the reader did not decode the records); callers that decode
 * should compare their sums with vmheap_reader_totals().
 */
VMHEAP_EXPORT
int vmheap_reader_next_block(vmheap_reader *r, struct vmheap_block *blk);

/*
 * Once next()/next_block() returned 0: the footer's totals (which, in
 * record mode, matched the records).  Before that: what was counted so far
 * (records decoded by next(); only `blocks` in block mode).
 */
VMHEAP_EXPORT
const struct vmheap_totals *vmheap_reader_totals(const vmheap_reader *r);

/*
 * The byte offset of the FOOT section's header, once the footer and the
 * trailer were read and checked (next()/next_block() returned 0, or failed
 * only on the footer's totals); 0 before that (no footer is at offset 0).
 * A caller that checks the footer's totals itself (block mode) names this
 * offset in its error.
 */
VMHEAP_EXPORT
uint64_t vmheap_reader_footer_offset(const vmheap_reader *r);

/*
 * Once next()/next_block() returned 0 (the dump is complete): decode its
 * native section.  0 with *out set, 0 with *out NULL when the dump has
 * none, or a negative code (the message via vmheap_reader_error()).
 * VMHEAP_ESTATE before the end.
 */
VMHEAP_EXPORT
int vmheap_reader_native(vmheap_reader *r, struct vmheap_native **out);

/* Bytes consumed from the input so far (for progress displays). */
VMHEAP_EXPORT
uint64_t vmheap_reader_offset(const vmheap_reader *r);

/* Message of the last error, or "" if none. */
VMHEAP_EXPORT
const char *vmheap_reader_error(const vmheap_reader *r);

/* The name given at open (or the path). */
VMHEAP_EXPORT
const char *vmheap_reader_name(const vmheap_reader *r);

/* Free the reader (closing the fd if it opened it). */
VMHEAP_EXPORT
void vmheap_reader_free(vmheap_reader *r);

/* ---------------------------------------------------------------- arrays */

/*
 * Grow a malloc'ed array of `size`-byte elements whose capacity is *cap:
 * to `first` elements when *cap is 0, else to twice *cap.  Returns the
 * array (perhaps moved) with *cap updated, or NULL when out of memory, the
 * old array and *cap then unchanged.  For appending one at a time:
 *
 *	if (n == cap) {
 *		struct item *g = vmheap_array_grow(items, &cap, sizeof(*g), 64);
 *		if (!g)
 *			return VMHEAP_ENOMEM;
 *		items = g;
 *	}
 *	items[n++] = item;
 */
VMHEAP_EXPORT
void *vmheap_array_grow(void *items, size_t *cap, size_t size, size_t first);

/* ---------------------------------------------------------------- crc */

/* CRC32C (Castagnoli, reflected, init and final xor 0xFFFFFFFF) of
 * `len` bytes, continuing from `crc` (pass 0 to start). */
VMHEAP_EXPORT
uint32_t vmheap_crc32c(uint32_t crc, const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VMHEAP_H */
