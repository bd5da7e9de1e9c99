/*
 * hprof.c - a JVM's HPROF heap dump ("JAVA PROFILE 1.0.2", as HotSpot
 * writes it with jcmd PID GC.heap_dump or jmap -dump) into a vmheap dump
 * (part of libvmheap-import).
 *
 * The input is read once.  UTF8 and LOAD CLASS records give class names;
 * CLASS DUMP records give each class's instance fields (so that the
 * references of its instances can be found), its superclass and statics;
 * INSTANCE, OBJECT ARRAY and PRIMITIVE ARRAY DUMP records become objects,
 * written at once; root records become roots.  A class object becomes an
 * object of java.lang.Class; those are written at the end, when
 * java.lang.Class's own fields are known.  Memory: the strings and the
 * class table, and the largest object array's references.
 *
 * Sizes (the man page states the model): HotSpot's layout on a 64-bit VM
 * with compressed oops and class pointers (its default below 32 GiB of
 * heap): an instance is a 12-byte header and its fields (references 4
 * bytes), an array a 16-byte header and its elements (references 4
 * bytes), each rounded up to 8 bytes.
 *
 * HotSpot writes every CLASS DUMP before the first instance; an instance
 * whose class (or a superclass) has not been dumped yet is refused.
 * Field names (as edge names) need format 1.1 and are not kept.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hprof-internal.h"

/* Record tags */
#define TAG_UTF8 0x01
#define TAG_LOAD_CLASS 0x02
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

/* Object kinds of an imported HPROF. */
enum { KIND_INSTANCE, KIND_OBJECT_ARRAY, KIND_PRIMITIVE_ARRAY, KIND_CLASS };
static const char *const kind_names[] = {"instance", "object-array",
					 "primitive-array", "class"};

/* Sizes of HotSpot's layout (see above). */
#define HEAP_REF 4u
#define HEAP_INSTANCE_HEADER 12u
#define HEAP_ARRAY_HEADER 16u
#define HEAP_ALIGN(n) (((n) + 7u) & ~(uint64_t)7u)

#define REFS_CHUNK 8192u

/*
 * What HotSpot 17 adds to the fields an HPROF lists, per class (and so to
 * its subclasses): the fields the VM injects (a pointer is 8 bytes, an
 * int 4, a reference 4), and java.lang.Thread's @Contended padding (128
 * bytes before and after its group of fields).
 */
static const struct {
	const char *name;
	uint32_t bytes;
	int padding; /* @Contended padding: aligned after it */
} hidden_fields[] = {
    {"java/lang/Class", 36, 0},		   /* klass, array_klass, oop_size,
					   static_oop_field_count, protection_domain,
					   signers, source_file */
    {"java/lang/ClassLoader", 8, 0},	   /* loader_data */
    {"java/lang/Module", 8, 0},		   /* module_entry */
    {"java/lang/invoke/MemberName", 8, 0}, /* vmindex */
    {"java/lang/invoke/ResolvedMethodName", 8, 0}, /* vmtarget */
    {"java/lang/invoke/MethodHandleNatives$CallSiteContext", 16, 0},
    {"java/lang/Thread", 256, 1}, /* @Contended("tlr") */
};

struct hstring {
	char *text;
	size_t len;
};

struct hclass {
	uint64_t name_sid;     /* LOAD CLASS: the UTF8 id of its name */
	uint64_t super;	       /* CLASS DUMP: the superclass, 0 for none */
	unsigned char *ftypes; /* its own instance fields' types */
	uint32_t nfields;
	uint32_t hprof_bytes;  /* its own fields' bytes in an INSTANCE DUMP */
	uint32_t heap_bytes;   /* its own fields' bytes in the heap */
	uint32_t id;	       /* vmheap class id, 0: none yet */
	uint64_t *static_refs; /* the class object's references */
	uint32_t nstatic_refs;
	uint32_t static_heap_bytes; /* its statics' bytes in the mirror */
	unsigned char dumped, written;
};

struct hp {
	struct hprof_in h;
	vmheap_writer *w;
	struct imp_table strings;    /* UTF8 id -> struct hstring */
	struct imp_table classes;    /* class object id -> struct hclass */
	struct imp_table root_kinds; /* (tag, thread serial) -> string id */
	uint64_t class_class;	     /* java.lang.Class's class object id */
	uint32_t next_class_id, next_string_id;
	uint32_t prim_class[12]; /* primitive array classes by type */
	uint64_t *refs;
	size_t refs_cap;
	uint64_t time_ms;
};

static int write_failed(struct hp *hp, int rc)
{
	if (!hp->h.status)
		hp->h.status =
		    imp_writer_fail(hp->h.res, hp->h.name, hp->w, rc);
	return hp->h.status;
}

static int nomem(struct hp *hp)
{
	if (!hp->h.status)
		hp->h.status = imp_fail(hp->h.res, hp->h.name, VMHEAP_ENOMEM,
					"out of memory at byte offset %" PRIu64,
					imp_input_offset(hp->h.in));
	return hp->h.status;
}

static uint64_t get_id(struct hp *hp, const unsigned char *p)
{
	return hprof_u(p, hp->h.id_size);
}

static int refs_room(struct hp *hp, size_t n)
{
	uint64_t *refs;

	if (n <= hp->refs_cap)
		return 0;
	refs = realloc(hp->refs, n * sizeof(*refs));
	if (!refs)
		return nomem(hp);
	hp->refs = refs;
	hp->refs_cap = n;
	return 0;
}

/* ------------------------------------------------------------ classes */

static struct hclass *class_entry(struct hp *hp, uint64_t id)
{
	int created;
	struct hclass *c = imp_table_put(&hp->classes, id, &created);

	if (!c)
		nomem(hp);
	return c;
}

/* The class's vmheap id, assigned on first use. */
static uint32_t class_id(struct hp *hp, struct hclass *c)
{
	if (!c->id)
		c->id = ++hp->next_class_id;
	return c->id;
}

/* "java/lang/String" -> "java.lang.String"; a hidden class's
 * "Foo+0x0800" -> "Foo/0x0800", as jmap and Class.getName() say. */
static size_t java_name(const struct hstring *s, char *out, size_t size)
{
	size_t i, n = s->len < size ? s->len : size;

	for (i = 0; i < n; i++) {
		char ch = s->text[i];

		if (ch == '/')
			ch = '.';
		else if (ch == '+' && i + 2 < s->len && s->text[i + 1] == '0' &&
			 s->text[i + 2] == 'x')
			ch = '/';
		out[i] = ch;
	}
	return n;
}

static int write_class(struct hp *hp, uint64_t address, struct hclass *c)
{
	static char name[VMHEAP_MAX_STRING_BYTES];
	const struct hstring *s = imp_table_get(&hp->strings, c->name_sid);
	struct hclass *super = c->super ? class_entry(hp, c->super) : NULL;
	size_t len = 0;
	int rc;

	(void)address;
	if (c->super && !super)
		return hp->h.status;
	if (s)
		len = java_name(s, name, sizeof(name));
	rc = vmheap_writer_add_class(hp->w, class_id(hp, c), name, len,
				     super ? class_id(hp, super) : 0, 0);
	if (rc < 0)
		return write_failed(hp, rc);
	c->written = 1;
	hp->h.res->classes++;
	return 0;
}

static uint32_t prim_class_id(struct hp *hp, unsigned type)
{
	static const char names[] = "??????????ZCFDBSIJ";
	char name[3] = {'[', names[type + 6], 0};
	int rc;

	if (hp->prim_class[type])
		return hp->prim_class[type];
	hp->prim_class[type] = ++hp->next_class_id;
	rc =
	    vmheap_writer_add_class(hp->w, hp->prim_class[type], name, 2, 0, 0);
	if (rc < 0) {
		write_failed(hp, rc);
		return 0;
	}
	hp->h.res->classes++;
	return hp->prim_class[type];
}

/* ------------------------------------------------------------ roots */

static const char *root_kind_name(unsigned tag)
{
	switch (tag) {
	case SUB_ROOT_JNI_GLOBAL:
		return "jni_global";
	case SUB_ROOT_JNI_LOCAL:
		return "jni_local";
	case SUB_ROOT_JAVA_FRAME:
		return "java_frame";
	case SUB_ROOT_NATIVE_STACK:
		return "native_stack";
	case SUB_ROOT_STICKY_CLASS:
		return "sticky_class";
	case SUB_ROOT_THREAD_BLOCK:
		return "thread_block";
	case SUB_ROOT_MONITOR_USED:
		return "monitor_used";
	case SUB_ROOT_THREAD_OBJECT:
		return "thread_object";
	default:
		return "unknown";
	}
}

/* A root of kind `tag`, of thread `serial` when with_thread. */
static int add_root(struct hp *hp, unsigned tag, uint64_t object,
		    int with_thread, uint32_t serial)
{
	uint64_t key =
	    ((uint64_t)tag << 33 | (uint64_t)with_thread << 32 | serial) + 1;
	int created, rc;
	uint64_t *sid = imp_table_put(&hp->root_kinds, key, &created);
	char text[64];
	int len;

	if (!sid)
		return nomem(hp);
	if (created) {
		*sid = ++hp->next_string_id;
		if (with_thread)
			len = snprintf(text, sizeof(text), "%s thread %" PRIu32,
				       root_kind_name(tag), serial);
		else
			len = snprintf(text, sizeof(text), "%s",
				       root_kind_name(tag));
		rc = vmheap_writer_add_string(hp->w, *sid, text, (size_t)len);
		if (rc < 0)
			return write_failed(hp, rc);
	}
	rc = vmheap_writer_add_root(hp->w, *sid, object);
	if (rc < 0)
		return write_failed(hp, rc);
	hp->h.res->roots++;
	return 0;
}

/* A root sub-record: an id, then `extra` bytes; the thread serial is the
 * first u4 of them when with_thread. */
static int root_record(struct hp *hp, unsigned tag, unsigned extra,
		       int with_thread)
{
	unsigned ids = hp->h.id_size;
	const unsigned char *p = hprof_get(&hp->h, ids + extra, "a root");

	if (!p)
		return hp->h.status;
	return add_root(hp, tag, get_id(hp, p), with_thread,
			with_thread ? (uint32_t)hprof_u(p + ids, 4) : 0);
}

/* ------------------------------------------------------------ objects */

/* HotSpot lists a class's constant pool references and its init lock as
 * static fields "<resolved_references>" and "<init_lock>", which are not
 * in the mirror. */
static int name_is_fake(struct hp *hp, uint64_t sid)
{
	const struct hstring *s = imp_table_get(&hp->strings, sid);

	return s && s->len && s->text[0] == '<';
}

static uint32_t hidden_bytes(struct hp *hp, const struct hclass *c)
{
	const struct hstring *s = imp_table_get(&hp->strings, c->name_sid);
	size_t i;

	for (i = 0; s && i < sizeof(hidden_fields) / sizeof(hidden_fields[0]);
	     i++)
		if (strlen(hidden_fields[i].name) == s->len &&
		    memcmp(hidden_fields[i].name, s->text, s->len) == 0)
			break;
	if (!s || i == sizeof(hidden_fields) / sizeof(hidden_fields[0]))
		return 0;
	if (!hidden_fields[i].padding)
		return hidden_fields[i].bytes;
	/* a subclass's fields come after the padding, which ends the
	 * layout aligned (the class's superclass is Object) */
	return (uint32_t)(HEAP_ALIGN(HEAP_INSTANCE_HEADER + c->heap_bytes +
				     hidden_fields[i].bytes) -
			  HEAP_INSTANCE_HEADER - c->heap_bytes);
}

static int class_dump(struct hp *hp, uint64_t at)
{
	unsigned ids = hp->h.id_size, i, n, size, type;
	const unsigned char *p = hprof_get(&hp->h, 7 * ids + 8, "a CLASS DUMP");
	uint64_t id, name, refs[4];
	struct hclass *c;
	size_t nrefs = 0, k;

	if (!p)
		return hp->h.status;
	id = get_id(hp, p);
	c = class_entry(hp, id);
	if (!c)
		return hp->h.status;
	if (c->dumped)
		return hprof_bad(&hp->h, at,
				 "a second CLASS DUMP of class 0x%" PRIx64, id);
	c->dumped = 1;
	c->super = get_id(hp, p + ids + 4);
	for (k = 0; k < 4; k++) /* super, loader, signers, domain */
		if ((refs[nrefs] = get_id(hp, p + (k + 1) * ids + 4)))
			nrefs++;
	/* constant pool */
	p = hprof_get(&hp->h, 2, "a CLASS DUMP");
	if (!p)
		return hp->h.status;
	n = (unsigned)hprof_u(p, 2);
	for (i = 0; i < n; i++) {
		p = hprof_get(&hp->h, 3, "a constant pool entry");
		if (!p)
			return hp->h.status;
		size = hprof_type_size(&hp->h, p[2]);
		if (!size)
			return hprof_bad(&hp->h, at,
					 "constant pool entry of unknown "
					 "type %u in CLASS DUMP",
					 p[2]);
		if (hprof_skip(&hp->h, size, "a constant pool entry"))
			return hp->h.status;
	}
	/* statics */
	p = hprof_get(&hp->h, 2, "a CLASS DUMP");
	if (!p)
		return hp->h.status;
	n = (unsigned)hprof_u(p, 2);
	if (refs_room(hp, nrefs + n + 1))
		return hp->h.status;
	memcpy(hp->refs, refs, nrefs * sizeof(*refs));
	for (i = 0; i < n; i++) {
		p = hprof_get(&hp->h, ids + 1, "a static field");
		if (!p)
			return hp->h.status;
		type = p[ids];
		name = get_id(hp, p);
		size = hprof_type_size(&hp->h, type);
		if (!size)
			return hprof_bad(&hp->h, at,
					 "static field of unknown type %u in "
					 "CLASS DUMP",
					 type);
		p = hprof_get(&hp->h, size, "a static field");
		if (!p)
			return hp->h.status;
		if (!name_is_fake(hp, name))
			c->static_heap_bytes +=
			    type == HPROF_OBJECT ? HEAP_REF : size;
		if (type == HPROF_OBJECT && (hp->refs[nrefs] = get_id(hp, p)))
			nrefs++;
	}
	c->static_refs = malloc((nrefs + 1) * sizeof(uint64_t));
	if (!c->static_refs)
		return nomem(hp);
	memcpy(c->static_refs, hp->refs, nrefs * sizeof(uint64_t));
	c->nstatic_refs = (uint32_t)nrefs;
	/* instance fields */
	p = hprof_get(&hp->h, 2, "a CLASS DUMP");
	if (!p)
		return hp->h.status;
	n = (unsigned)hprof_u(p, 2);
	c->ftypes = malloc(n + 1);
	if (!c->ftypes)
		return nomem(hp);
	for (i = 0; i < n; i++) {
		p = hprof_get(&hp->h, ids + 1, "an instance field");
		if (!p)
			return hp->h.status;
		type = p[ids];
		size = hprof_type_size(&hp->h, type);
		if (!size)
			return hprof_bad(&hp->h, at,
					 "instance field of unknown type %u "
					 "in CLASS DUMP",
					 type);
		c->ftypes[i] = (unsigned char)type;
		c->hprof_bytes += size;
		c->heap_bytes += type == HPROF_OBJECT ? HEAP_REF : size;
	}
	c->nfields = n;
	c->heap_bytes += hidden_bytes(hp, c);
	if (!c->written && c->name_sid)
		return write_class(hp, id, c);
	return 0;
}

/* The references in an instance's field values `v` of `len` bytes, class
 * `c` first, then its superclasses; *heap gets its size in the heap. */
static int instance_refs(struct hp *hp, uint64_t at, uint64_t cls,
			 const unsigned char *v, size_t len, size_t *nrefs,
			 uint64_t *heap)
{
	size_t off = 0, depth = 0;
	uint64_t fields = 0;
	uint32_t i;

	*nrefs = 0;
	while (cls) {
		struct hclass *c = imp_table_get(&hp->classes, cls);

		if (!c || !c->dumped)
			return hprof_bad(&hp->h, at,
					 "an instance of class 0x%" PRIx64
					 " before its CLASS DUMP",
					 cls);
		if (++depth > 65536)
			return hprof_bad(&hp->h, at,
					 "a superclass cycle at class "
					 "0x%" PRIx64,
					 cls);
		if (off + c->hprof_bytes > len)
			break;
		for (i = 0; i < c->nfields; i++) {
			unsigned size = hprof_type_size(&hp->h, c->ftypes[i]);

			if (c->ftypes[i] == HPROF_OBJECT) {
				uint64_t ref = get_id(hp, v + off);

				if (ref)
					hp->refs[(*nrefs)++] = ref;
			}
			off += size;
		}
		fields += c->heap_bytes;
		cls = c->super;
	}
	if (cls || off != len)
		return hprof_bad(&hp->h, at,
				 "an INSTANCE DUMP of %zu bytes of fields, "
				 "but its class's fields take %s",
				 len, cls ? "more" : "fewer");
	*heap = HEAP_ALIGN(HEAP_INSTANCE_HEADER + fields);
	return 0;
}

static int instance_dump(struct hp *hp, uint64_t at)
{
	unsigned ids = hp->h.id_size;
	const unsigned char *p =
	    hprof_get(&hp->h, 2 * ids + 8, "an INSTANCE DUMP");
	uint64_t id, cls, heap = 0;
	uint32_t len;
	size_t nrefs;
	struct hclass *c;
	int rc;

	if (!p)
		return hp->h.status;
	id = get_id(hp, p);
	cls = get_id(hp, p + ids + 4);
	len = (uint32_t)hprof_u(p + 2 * ids + 4, 4);
	p = hprof_get(&hp->h, len, "an INSTANCE DUMP");
	if (!p || refs_room(hp, len / ids + 1))
		return hp->h.status;
	if (instance_refs(hp, at, cls, p, len, &nrefs, &heap))
		return hp->h.status;
	c = class_entry(hp, cls);
	if (!c)
		return hp->h.status;
	rc = vmheap_writer_add_object(hp->w, id, class_id(hp, c), heap,
				      KIND_INSTANCE, hp->refs, nrefs);
	if (rc < 0)
		return write_failed(hp, rc);
	hp->h.res->references += nrefs;
	return 0;
}

static int obj_array_dump(struct hp *hp)
{
	unsigned ids = hp->h.id_size;
	const unsigned char *p =
	    hprof_get(&hp->h, 2 * ids + 8, "an OBJECT ARRAY DUMP");
	uint64_t id, cls;
	uint32_t n, i, k, chunk;
	size_t nrefs = 0;
	struct hclass *c;
	int rc;

	if (!p)
		return hp->h.status;
	id = get_id(hp, p);
	n = (uint32_t)hprof_u(p + ids + 4, 4);
	cls = get_id(hp, p + ids + 8);
	/* the buffer grows with the elements read, not with the count the
	 * record claims */
	for (i = 0; i < n; i += chunk) {
		chunk = n - i < REFS_CHUNK ? n - i : REFS_CHUNK;
		p = hprof_get(&hp->h, (size_t)chunk * ids,
			      "an OBJECT ARRAY DUMP");
		if (!p || refs_room(hp, nrefs + chunk + 1))
			return hp->h.status;
		for (k = 0; k < chunk; k++)
			if ((hp->refs[nrefs] = get_id(hp, p + k * ids)))
				nrefs++;
	}
	c = class_entry(hp, cls);
	if (!c)
		return hp->h.status;
	rc = vmheap_writer_add_object(
	    hp->w, id, class_id(hp, c),
	    HEAP_ALIGN(HEAP_ARRAY_HEADER + (uint64_t)n * HEAP_REF),
	    KIND_OBJECT_ARRAY, hp->refs, nrefs);
	if (rc < 0)
		return write_failed(hp, rc);
	hp->h.res->references += nrefs;
	return 0;
}

static int prim_array_dump(struct hp *hp, uint64_t at)
{
	unsigned ids = hp->h.id_size, type, size;
	const unsigned char *p =
	    hprof_get(&hp->h, ids + 9, "a PRIMITIVE ARRAY DUMP");
	uint64_t id;
	uint32_t n, cid;
	int rc;

	if (!p)
		return hp->h.status;
	id = get_id(hp, p);
	n = (uint32_t)hprof_u(p + ids + 4, 4);
	type = p[ids + 8];
	size = hprof_type_size(&hp->h, type);
	if (!size || type == HPROF_OBJECT)
		return hprof_bad(&hp->h, at,
				 "a PRIMITIVE ARRAY DUMP of unknown element "
				 "type %u",
				 type);
	if (hprof_skip(&hp->h, (uint64_t)n * size, "a PRIMITIVE ARRAY DUMP"))
		return hp->h.status;
	cid = prim_class_id(hp, type);
	if (!cid)
		return hp->h.status;
	rc = vmheap_writer_add_object(
	    hp->w, id, cid, HEAP_ALIGN(HEAP_ARRAY_HEADER + (uint64_t)n * size),
	    KIND_PRIMITIVE_ARRAY, NULL, 0);
	return rc < 0 ? write_failed(hp, rc) : 0;
}

/* One heap dump segment of `len` bytes. */
static int heap_dump(struct hp *hp, uint64_t len)
{
	uint64_t start = imp_input_offset(hp->h.in), at;
	const unsigned char *p;
	unsigned tag;
	int rc;

	while ((at = imp_input_offset(hp->h.in)) < start + len) {
		p = hprof_get(&hp->h, 1, "a heap dump sub-record");
		if (!p)
			return hp->h.status;
		tag = p[0];
		switch (tag) {
		case SUB_ROOT_UNKNOWN:
		case SUB_ROOT_STICKY_CLASS:
		case SUB_ROOT_MONITOR_USED:
			rc = root_record(hp, tag, 0, 0);
			break;
		case SUB_ROOT_JNI_GLOBAL:
			rc = root_record(hp, tag, hp->h.id_size, 0);
			break;
		case SUB_ROOT_JNI_LOCAL:
		case SUB_ROOT_JAVA_FRAME:
		case SUB_ROOT_THREAD_OBJECT:
			rc = root_record(hp, tag, 8, 1);
			break;
		case SUB_ROOT_NATIVE_STACK:
		case SUB_ROOT_THREAD_BLOCK:
			rc = root_record(hp, tag, 4, 1);
			break;
		case SUB_CLASS_DUMP:
			rc = class_dump(hp, at);
			break;
		case SUB_INSTANCE_DUMP:
			rc = instance_dump(hp, at);
			break;
		case SUB_OBJ_ARRAY_DUMP:
			rc = obj_array_dump(hp);
			break;
		case SUB_PRIM_ARRAY_DUMP:
			rc = prim_array_dump(hp, at);
			break;
		default:
			return hprof_bad(&hp->h, at,
					 "unknown heap dump sub-record tag "
					 "0x%02x",
					 tag);
		}
		if (rc)
			return rc;
	}
	if (at != start + len)
		return hprof_bad(&hp->h, at,
				 "a heap dump sub-record crosses the end of "
				 "its segment (at byte offset %" PRIu64 ")",
				 start + len);
	return 0;
}

/* ------------------------------------------------------------ records */

static int utf8_record(struct hp *hp, uint64_t at, uint32_t len)
{
	unsigned ids = hp->h.id_size;
	const unsigned char *p;
	struct hstring *s;
	uint64_t id;
	int created;

	if (len < ids)
		return hprof_bad(&hp->h, at,
				 "a UTF8 record of %" PRIu32
				 " bytes, shorter than an id",
				 len);
	p = hprof_get(&hp->h, len, "a UTF8 record");
	if (!p)
		return hp->h.status;
	id = get_id(hp, p);
	s = imp_table_put(&hp->strings, id ? id : UINT64_MAX, &created);
	if (!s)
		return nomem(hp);
	if (!created)
		return 0;
	s->len = len - ids;
	s->text = malloc(s->len + 1);
	if (!s->text)
		return nomem(hp);
	memcpy(s->text, p + ids, s->len);
	s->text[s->len] = '\0';
	return 0;
}

static int load_class_record(struct hp *hp, uint64_t at, uint32_t len)
{
	unsigned ids = hp->h.id_size;
	const unsigned char *p;
	const struct hstring *s;
	struct hclass *c;
	uint64_t id;

	if (len != 2 * ids + 8)
		return hprof_bad(&hp->h, at,
				 "a LOAD CLASS record of %" PRIu32
				 " bytes (expected %u)",
				 len, 2 * ids + 8);
	p = hprof_get(&hp->h, len, "a LOAD CLASS record");
	if (!p)
		return hp->h.status;
	id = get_id(hp, p + 4);
	c = class_entry(hp, id);
	if (!c)
		return hp->h.status;
	if (!c->name_sid)
		c->name_sid = get_id(hp, p + ids + 8);
	s = imp_table_get(&hp->strings, c->name_sid);
	if (s && s->len == 15 && memcmp(s->text, "java/lang/Class", 15) == 0)
		hp->class_class = id;
	return 0;
}

static int header(struct hp *hp)
{
	const unsigned char *p;
	long got = imp_input_fill(hp->h.in, 64);
	size_t n;

	if (got < 0)
		return hprof_get(&hp->h, 64, "the header") ? 0 : hp->h.status;
	p = hp->h.in->buf + hp->h.in->pos;
	for (n = 0; n < (size_t)got && p[n]; n++)
		;
	if (n == (size_t)got)
		return hprof_bad(&hp->h, 0,
				 "no HPROF header (\"JAVA PROFILE "
				 "1.0.2\" and a NUL)");
	if (strcmp((const char *)p, "JAVA PROFILE 1.0.2") != 0 &&
	    strcmp((const char *)p, "JAVA PROFILE 1.0.1") != 0)
		return hprof_bad(&hp->h, 0,
				 "HPROF version \"%.40s\", not "
				 "\"JAVA PROFILE 1.0.2\"",
				 (const char *)p);
	hp->h.in->pos += n + 1;
	p = hprof_get(&hp->h, 12, "the header");
	if (!p)
		return hp->h.status;
	hp->h.id_size = (unsigned)hprof_u(p, 4);
	if (hp->h.id_size != 4 && hp->h.id_size != 8)
		return hprof_bad(&hp->h, n + 1,
				 "identifier size %u (4 or 8 expected)",
				 hp->h.id_size);
	hp->time_ms = hprof_u(p + 4, 8);
	return 0;
}

static int open_writer(struct hp *hp)
{
	struct vmheap_writer_options wo = VMHEAP_WRITER_OPTIONS_INIT;
	int rc;

	wo.vm_name = "java";
	wo.vm_version = "";
	wo.pid = hp->h.in->opt->pid;
	wo.time = (int64_t)(hp->time_ms / 1000);
	wo.pointer_size = hp->h.id_size;
	wo.kind_names = kind_names;
	wo.kind_count = sizeof(kind_names) / sizeof(kind_names[0]);
	rc = vmheap_writer_open(&hp->w, hp->h.in->opt->out_fd, &wo);
	if (rc < 0)
		return hp->h.status = imp_fail(hp->h.res, hp->h.name, rc,
					       "cannot start the vmheap dump: "
					       "%s",
					       vmheap_strerror(rc));
	return 0;
}

/* The class objects (java.lang.Class), then the class records not yet
 * written. */
static int finish(struct hp *hp)
{
	struct hclass *cc = hp->class_class
				? imp_table_get(&hp->classes, hp->class_class)
				: NULL;
	uint64_t base = HEAP_INSTANCE_HEADER, cls;
	uint32_t cid, depth;
	size_t i;
	int rc;

	/* java.lang.Class's own instance size (a superclass cycle in a
	 * corrupt input ends the walk) */
	for (cls = hp->class_class, depth = 0; cls && depth < 65536; depth++) {
		struct hclass *c = imp_table_get(&hp->classes, cls);

		if (!c || !c->dumped)
			break;
		base += c->heap_bytes;
		cls = c->super;
	}
	cid = cc ? class_id(hp, cc) : ++hp->next_class_id;
	IMP_TABLE_FOR(&hp->classes, i)
	{
		struct hclass *c = imp_table_value(&hp->classes, i);

		if (!c->dumped)
			continue;
		rc = vmheap_writer_add_object(
		    hp->w, hp->classes.keys[i], cid,
		    HEAP_ALIGN(HEAP_ALIGN(base) + c->static_heap_bytes),
		    KIND_CLASS, c->static_refs, c->nstatic_refs);
		if (rc < 0)
			return write_failed(hp, rc);
		hp->h.res->references += c->nstatic_refs;
	}
	IMP_TABLE_FOR(&hp->classes, i)
	{
		struct hclass *c = imp_table_value(&hp->classes, i);

		if (c->id && !c->written &&
		    write_class(hp, hp->classes.keys[i], c))
			return hp->h.status;
	}
	if (!cc) {
		rc = vmheap_writer_add_class(hp->w, cid, "java.lang.Class", 15,
					     0, 0);
		if (rc < 0)
			return write_failed(hp, rc);
		hp->h.res->classes++;
	}
	return 0;
}

static void hp_free(struct hp *hp)
{
	size_t i;

	IMP_TABLE_FOR(&hp->strings, i)
	free(((struct hstring *)imp_table_value(&hp->strings, i))->text);
	IMP_TABLE_FOR(&hp->classes, i)
	{
		struct hclass *c = imp_table_value(&hp->classes, i);

		free(c->ftypes);
		free(c->static_refs);
	}
	imp_table_free(&hp->strings);
	imp_table_free(&hp->classes);
	imp_table_free(&hp->root_kinds);
	free(hp->refs);
	vmheap_writer_free(hp->w);
}

int imp_hprof(struct imp_input *in, struct vmheap_import_result *res)
{
	struct hp hp;
	const unsigned char *p;
	uint64_t at;
	uint32_t len;
	unsigned tag;
	int rc = 0, heap_dumps = 0, segment_open = 0;

	memset(&hp, 0, sizeof(hp));
	hp.h.in = in;
	hp.h.res = res;
	hp.h.name = in->opt->name ? in->opt->name : "<input>";
	imp_table_init(&hp.strings, sizeof(struct hstring));
	imp_table_init(&hp.classes, sizeof(struct hclass));
	imp_table_init(&hp.root_kinds, sizeof(uint64_t));
	if (header(&hp) || open_writer(&hp))
		goto out;
	for (;;) {
		long got = imp_input_fill(in, 1);

		if (got == 0) { /* the end, between records */
			if (!heap_dumps || segment_open) {
				hprof_bad(&hp.h, imp_input_offset(in),
					  "truncated: the input ends %s",
					  heap_dumps ? "after a HEAP DUMP "
						       "SEGMENT, without "
						       "HEAP DUMP END"
						     : "before any heap dump "
						       "record");
				hp.h.status = VMHEAP_ETRUNCATED;
				goto out;
			}
			break;
		}
		at = imp_input_offset(in);
		p = hprof_get(&hp.h, 9, "a record header");
		if (!p)
			goto out;
		tag = p[0];
		len = (uint32_t)hprof_u(p + 5, 4);
		switch (tag) {
		case TAG_UTF8:
			rc = utf8_record(&hp, at, len);
			break;
		case TAG_LOAD_CLASS:
			rc = load_class_record(&hp, at, len);
			break;
		case TAG_HEAP_DUMP:
		case TAG_HEAP_DUMP_SEGMENT:
			heap_dumps++;
			segment_open = tag == TAG_HEAP_DUMP_SEGMENT;
			rc = heap_dump(&hp, len);
			break;
		case TAG_HEAP_DUMP_END:
			segment_open = 0;
			rc = hprof_skip(&hp.h, len, "a record");
			break;
		default:
			rc = hprof_skip(&hp.h, len, "a record");
		}
		if (rc)
			goto out;
	}
	if (finish(&hp))
		goto out;
	rc = vmheap_writer_finish(hp.w);
	if (rc < 0) {
		write_failed(&hp, rc);
		goto out;
	}
	imp_count_output(res, hp.w);
out:
	rc = hp.h.status;
	hp_free(&hp);
	return rc;
}
