/*
 * hprof-internal.h - the parts of the HPROF converter: reading HPROF's
 * big-endian values from the input, and the class table.
 */
#ifndef VMHEAP_HPROF_INTERNAL_H
#define VMHEAP_HPROF_INTERNAL_H

#include <string.h>

#include "import-internal.h"

/* HPROF basic types (the `type` byte of fields and primitive arrays). */
enum hprof_type {
	HPROF_OBJECT = 2,
	HPROF_BOOLEAN = 4,
	HPROF_CHAR = 5,
	HPROF_FLOAT = 6,
	HPROF_DOUBLE = 7,
	HPROF_BYTE = 8,
	HPROF_SHORT = 9,
	HPROF_INT = 10,
	HPROF_LONG = 11,
};

/* The reader of one HPROF input. */
struct hprof_in {
	struct imp_input *in;
	struct vmheap_import_result *res;
	const char *name;
	unsigned id_size; /* 4 or 8 */
	int android;	  /* "JAVA PROFILE 1.0.3" */
	int status;	  /* sticky error, 0 if none */
};

/*
 * The next `n` bytes (at most 1 MiB), valid until the next call, or NULL
 * after an error (a truncated input: h->status and res->error set).
 * `what` names the thing being read for the message.
 */
const unsigned char *hprof_get(struct hprof_in *h, size_t n, const char *what);
/* The `len` bytes of a record that takes exactly `expected` bytes
 * (`what`: "a FRAME record"), or NULL after the error. */
const unsigned char *hprof_get_record(struct hprof_in *h, uint64_t at,
				      uint32_t len, uint32_t expected,
				      const char *what);
/* Skip `n` bytes; 0 or the error. */
int hprof_skip(struct hprof_in *h, uint64_t n, const char *what);
/* Values at p: big-endian (any size up to 8; 4 and 8, the ids and
 * lengths of every record, without a loop). */
static inline uint64_t hprof_u(const unsigned char *p, unsigned size)
{
	uint64_t x = 0;

	if (size == 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		return __builtin_bswap32(v);
	}
	if (size == 8) {
		memcpy(&x, p, 8);
		return __builtin_bswap64(x);
	}
	for (unsigned i = 0; i < size; i++)
		x = x << 8 | p[i];
	return x;
}
/* The bytes a value of `type` takes in HPROF (ids: id_size), 0 for a
 * type that is none of enum hprof_type. */
unsigned hprof_type_size(const struct hprof_in *h, unsigned type);
/* Fail with "MSG at byte offset N" (N: `offset`). Returns the code. */
int hprof_bad(struct hprof_in *h, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record tags */
#define TAG_UTF8 0x01
#define TAG_LOAD_CLASS 0x02
#define TAG_FRAME 0x04
#define TAG_TRACE 0x05
#define TAG_HEAP_DUMP 0x0c
#define TAG_HEAP_DUMP_SEGMENT 0x1c
#define TAG_HEAP_DUMP_END 0x2c

/* Heap dump sub-record tags */
#define SUB_ROOT_UNKNOWN 0xff
#define SUB_ROOT_JNI_GLOBAL 0x01
#define SUB_ROOT_JNI_LOCAL 0x02
#define SUB_ROOT_JAVA_FRAME 0x03
#define SUB_ROOT_NATIVE_STACK 0x04
#define SUB_ROOT_STICKY_CLASS 0x05
#define SUB_ROOT_THREAD_BLOCK 0x06
#define SUB_ROOT_MONITOR_USED 0x07
#define SUB_ROOT_THREAD_OBJECT 0x08
#define SUB_CLASS_DUMP 0x20
#define SUB_INSTANCE_DUMP 0x21
#define SUB_OBJ_ARRAY_DUMP 0x22
#define SUB_PRIM_ARRAY_DUMP 0x23
/* Android's (ART, "JAVA PROFILE 1.0.3") */
#define SUB_ROOT_INTERNED_STRING 0x89
#define SUB_ROOT_FINALIZING 0x8a
#define SUB_ROOT_DEBUGGER 0x8b
#define SUB_ROOT_REFERENCE_CLEANUP 0x8c
#define SUB_ROOT_VM_INTERNAL 0x8d
#define SUB_ROOT_JNI_MONITOR 0x8e
#define SUB_ROOT_UNREACHABLE 0x90
#define SUB_PRIM_ARRAY_NODATA 0xc3
#define SUB_HEAP_DUMP_INFO 0xfe

/* Object kinds of an imported HPROF. */
enum { KIND_INSTANCE, KIND_OBJECT_ARRAY, KIND_PRIMITIVE_ARRAY, KIND_CLASS };

/* Sizes of HotSpot's layout (the model: hprof.c, man/vmheap-import.1). */
#define HEAP_REF 4u
#define HEAP_INSTANCE_HEADER 12u
#define HEAP_ARRAY_HEADER 16u
#define HEAP_ALIGN(n) (((n) + 7u) & ~(uint64_t)7u)

/* Object array elements read at a time. */
#define REFS_CHUNK 8192u

/* A UTF8 record's text (NUL-terminated copy). */
struct hstring {
	char *text;
	size_t len;
	uint64_t edge_name; /* string id of its edge name, 0: none yet */
};

/* A FRAME record: one method of a stack trace. */
struct hframe {
	uint64_t method, file; /* UTF8 ids */
	uint32_t class_serial;
	int32_t line; /* > 0; -1 unknown, -2 compiled, -3 native */
};

/* A TRACE record: a thread's stack, its FRAME ids from the top. */
struct htrace {
	uint64_t *frames;
	uint32_t nframes;
};

/* What the converter knows of one class object id. */
struct hclass {
	uint64_t name_sid;     /* LOAD CLASS: the UTF8 id of its name */
	uint64_t super;	       /* CLASS DUMP: the superclass, 0 for none */
	unsigned char *ftypes; /* its own instance fields' types */
	int64_t *ref_names;    /* the edge name of each of its own
				  reference fields, in order */
	uint32_t nfields;
	uint32_t hprof_bytes;  /* its own fields' bytes in an INSTANCE DUMP */
	uint32_t heap_bytes;   /* its own fields' bytes in the heap */
	uint32_t id;	       /* vmheap class id, 0: none yet */
	uint64_t *static_refs; /* the class object's references */
	int64_t *static_names; /* and their edge names */
	uint32_t nstatic_refs;
	uint32_t static_heap_bytes; /* its statics' bytes in the mirror */
	unsigned char dumped, written;
	unsigned char field_holder; /* an instance field named "holder" */
	uint32_t recorded_size;	    /* CLASS DUMP's instance size */
	struct hlayout *layout;	    /* its instances' fields, with its
				       superclasses' (hprof_objects.c) */
};

/* One HPROF conversion. */
struct hp {
	struct hprof_in h;
	vmheap_writer *w;
	struct imp_table strings;    /* UTF8 id -> struct hstring */
	struct imp_table classes;    /* class object id -> struct hclass */
	struct imp_table root_kinds; /* tag -> string id */
	struct imp_table root_names; /* (thread serial, depth) -> string id */
	struct imp_table frames;     /* FRAME id -> struct hframe */
	struct imp_table traces;     /* thread serial + 1 -> struct htrace */
	struct imp_table serials;    /* class serial + 1 -> name's UTF8 id */
	uint64_t class_class;	     /* java.lang.Class's class object id */
	uint32_t next_class_id, next_string_id;
	uint32_t prim_class[12]; /* primitive array classes by type */
	uint64_t class_ref_names[4]; /* superclass, class loader, signers,
					protection domain: string ids */
	uint64_t *refs;
	int64_t *names; /* the edge name of each of refs */
	size_t refs_cap;
	uint64_t time_ms;
	/* INSTANCE DUMPs read before their class's (or a superclass's)
	 * CLASS DUMP, written at the end: records of struct hdeferred and
	 * the field bytes that follow each */
	unsigned char *deferred;
	size_t deferred_len, deferred_cap;
};

/* A deferred INSTANCE DUMP (hprof_objects.c): `len` bytes of field
 * values follow it in hp->deferred. */
struct hdeferred {
	uint64_t at, id, cls;
	uint32_t len;
};

/* hprof.c: errors (they set hp->h.status and return it), ids, the
 * reference buffer (room for n references and their names; 0 or the
 * error), and a string record of `len` bytes (*id gets its new id; 0 or
 * the error). */
int hp_write_failed(struct hp *hp, int rc);
int hp_nomem(struct hp *hp);
static inline uint64_t hp_id(struct hp *hp, const unsigned char *p)
{
	return hprof_u(p, hp->h.id_size);
}
int hp_refs_room(struct hp *hp, size_t n);
int hp_add_string(struct hp *hp, const char *text, size_t len, uint64_t *id);

/* hprof_names.c: the edge name of a field whose name is UTF8 record
 * `sid` (".name", or "<name>" as HotSpot writes it for a class's
 * pseudo-statics; 0: an unknown name, or the error in hp->h.status);
 * the names of a class object's other references (k: 0 superclass,
 * 1 class loader, 2 signers, 3 protection domain); Java's name of a
 * class ("java/lang/String" -> "java.lang.String"); FRAME and TRACE
 * records; the name of a root of thread `serial` at stack depth `depth`
 * (depth < 0: the thread), and of a root that is a class object, its
 * class's name (both: a string id, 0 when there is none, or the error). */
int64_t hp_field_name(struct hp *hp, uint64_t sid);
int64_t hp_class_ref_name(struct hp *hp, unsigned k);
size_t hp_java_name(const struct hstring *s, char *out, size_t size);
int hp_frame_record(struct hp *hp, uint64_t at, uint32_t len);
int hp_trace_record(struct hp *hp, uint64_t at, uint32_t len);
uint64_t hp_root_name(struct hp *hp, uint32_t serial, int64_t depth);
uint64_t hp_class_root_name(struct hp *hp, uint64_t class_object);
void hp_names_free(struct hp *hp);

/* hprof_classes.c: the class of an id (made if new; NULL when out of
 * memory), its vmheap class id (assigned on first use), its class record,
 * a primitive array type's class (0 on an error), a CLASS DUMP
 * sub-record (at byte offset `at`), and at the end the class objects and
 * the class records not yet written. */
struct hclass *hp_class_entry(struct hp *hp, uint64_t id);
uint32_t hp_class_id(struct hp *hp, struct hclass *c);
int hp_write_class(struct hp *hp, uint64_t address, struct hclass *c);
uint32_t hp_prim_class_id(struct hp *hp, unsigned type);
int hp_class_dump(struct hp *hp, uint64_t at);
int hp_class_objects(struct hp *hp);

/* hprof_objects.c: one HEAP DUMP (SEGMENT) record's `len` bytes of
 * sub-records; at the end of the input, the instances deferred until
 * their class's CLASS DUMP (0, or the error: an instance whose class was
 * never dumped). */
int hp_heap_dump(struct hp *hp, uint64_t len);
int hp_deferred_instances(struct hp *hp);

#endif /* VMHEAP_HPROF_INTERNAL_H */
