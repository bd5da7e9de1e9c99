/*
 * hprof_objects.c - the heap dump sub-records of an HPROF import: roots,
 * instances, object and primitive arrays, with the names of roots and
 * references (part of libvmheap-import; hprof.c says how the converter
 * works).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hprof-internal.h"

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
	case SUB_ROOT_INTERNED_STRING:
		return "interned_string";
	case SUB_ROOT_FINALIZING:
		return "finalizing";
	case SUB_ROOT_DEBUGGER:
		return "debugger";
	case SUB_ROOT_REFERENCE_CLEANUP:
		return "reference_cleanup";
	case SUB_ROOT_VM_INTERNAL:
		return "vm_internal";
	case SUB_ROOT_JNI_MONITOR:
		return "jni_monitor";
	default:
		return "unknown";
	}
}

/* A root of kind `tag`, named `name` (a string id, 0: none). */
static int add_root(struct hp *hp, unsigned tag, uint64_t object,
		    uint64_t name)
{
	int created, rc;
	uint64_t *sid = imp_table_put(&hp->root_kinds, tag + 1, &created);
	const char *kind = root_kind_name(tag);

	if (!sid)
		return hp_nomem(hp);
	if (created && hp_add_string(hp, kind, strlen(kind), sid))
		return hp->h.status;
	rc = vmheap_writer_add_root_named(hp->w, *sid, object, name);
	if (rc < 0)
		return hp_write_failed(hp, rc);
	hp->h.res->roots++;
	return 0;
}

/* What follows a root sub-record's id. */
enum root_extra {
	ROOT_NONE,	   /* nothing */
	ROOT_ID,	   /* an id (JNI GLOBAL's reference) */
	ROOT_THREAD,	   /* the thread's serial */
	ROOT_THREAD_FRAME, /* the thread's serial and the frame's depth */
	ROOT_THREAD_TRACE, /* the thread's serial and its trace's serial */
};

/* A root sub-record: an id, then what `extra` says. */
static int root_record(struct hp *hp, unsigned tag, enum root_extra extra)
{
	unsigned ids = hp->h.id_size;
	const unsigned char *p = hprof_get(
	    &hp->h,
	    ids + (extra == ROOT_NONE    ? 0
		   : extra == ROOT_ID	 ? ids
		   : extra == ROOT_THREAD ? 4
					 : 8),
	    "a root");
	uint64_t object, name = 0;
	int32_t depth = -1;

	if (!p)
		return hp->h.status;
	object = hp_id(hp, p);
	if (tag == SUB_ROOT_STICKY_CLASS) {
		name = hp_class_root_name(hp, object);
		if (hp->h.status)
			return hp->h.status;
	} else if (extra >= ROOT_THREAD) {
		if (extra == ROOT_THREAD_FRAME)
			depth = (int32_t)(uint32_t)hprof_u(p + ids + 4, 4);
		name = hp_root_name(hp, (uint32_t)hprof_u(p + ids, 4), depth);
		if (hp->h.status)
			return hp->h.status;
	}
	return add_root(hp, tag, object, name);
}

/* ------------------------------------------------------------ objects */

/* Whether class `cls` and all its superclasses have had their CLASS
 * DUMP (a superclass cycle, which instance_refs refuses, counts as
 * ready). */
static int chain_dumped(struct hp *hp, uint64_t cls)
{
	size_t depth = 0;

	for (; cls && depth <= 65536; depth++) {
		const struct hclass *c = imp_table_get(&hp->classes, cls);

		if (!c || !c->dumped)
			return 0;
		cls = c->super;
	}
	return 1;
}

/* The references in an instance's field values `v` of `len` bytes, class
 * `c` first, then its superclasses; *heap gets its size in the heap. */
static int instance_refs(struct hp *hp, uint64_t at, uint64_t cls,
			 const unsigned char *v, size_t len, size_t *nrefs,
			 uint64_t *heap)
{
	size_t off = 0, depth = 0;
	uint64_t fields = 0, packed = 0, recorded = 0;
	uint32_t i, k;

	*nrefs = 0;
	while (cls) {
		struct hclass *c = imp_table_get(&hp->classes, cls);

		if (!c || !c->dumped)
			return hprof_bad(&hp->h, at,
					 "an instance of class 0x%" PRIx64
					 ", which has no CLASS DUMP,",
					 cls);
		if (++depth > 65536)
			return hprof_bad(&hp->h, at,
					 "a superclass cycle at class "
					 "0x%" PRIx64,
					 cls);
		if (off + c->hprof_bytes > len)
			break;
		if (depth == 1) /* the object's own class */
			recorded = c->recorded_size;
		for (i = k = 0; i < c->nfields; i++) {
			unsigned size = hprof_type_size(&hp->h, c->ftypes[i]);

			if (c->ftypes[i] == HPROF_OBJECT) {
				uint64_t ref = hp_id(hp, v + off);

				if (ref) {
					hp->names[*nrefs] = c->ref_names[k];
					hp->refs[(*nrefs)++] = ref;
				}
				k++;
			}
			off += size;
			packed += c->ftypes[i] == HPROF_OBJECT ? HEAP_REF : size;
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
	/* ART records the object's size in the heap (its header is the
	 * fields shadow$_klass_ and shadow$_monitor_): taken when it holds
	 * the fields and is not more than 64 bytes larger than them */
	if (hp->h.android && recorded >= packed && recorded - packed <= 64)
		*heap = HEAP_ALIGN(recorded);
	return 0;
}

/*
 * An instance's fields, its class's and its superclasses', worked out
 * once per class (instance_refs() does it per instance): where the
 * reference fields are and their names, the fields' bytes and the
 * instance's size in the heap.
 */
struct hlayout {
	uint32_t bytes;	 /* the fields' bytes in an INSTANCE DUMP */
	uint32_t nrefs;	 /* reference fields */
	uint64_t heap;	 /* the instance's size in the heap */
	uint32_t *off;	 /* each reference field's offset */
	int64_t *names;	 /* and its edge name */
};

/* The layout of class `cls` (entry c), made when its chain is dumped;
 * NULL when it is not (yet), or is odd (instance_refs() reports it). */
static struct hlayout *layout_of(struct hp *hp, uint64_t cls,
				 struct hclass *c)
{
	uint32_t bytes = 0, nrefs = 0;
	size_t depth = 0;
	struct hlayout *l;
	uint64_t k;

	if (c->layout || !chain_dumped(hp, cls))
		return c->layout;
	for (k = cls; k; depth++) {
		const struct hclass *e = imp_table_get(&hp->classes, k);
		if (!e || depth > 65536 || e->hprof_bytes > UINT32_MAX - bytes)
			return NULL;
		bytes += e->hprof_bytes;
		for (uint32_t i = 0; i < e->nfields; i++)
			nrefs += e->ftypes[i] == HPROF_OBJECT;
		k = e->super;
	}
	l = malloc(sizeof(*l) + nrefs * (sizeof(uint32_t) + sizeof(int64_t)));
	if (!l)
		return NULL; /* the slow way still works */
	l->names = (int64_t *)(l + 1);
	l->off = (uint32_t *)(l->names + nrefs);
	/* instance_refs() on a record of exactly these bytes gives the
	 * heap size; the offsets come from the same walk */
	l->bytes = bytes;
	l->nrefs = 0;
	uint32_t off = 0;
	for (k = cls; k;) {
		const struct hclass *e = imp_table_get(&hp->classes, k);
		for (uint32_t i = 0, r = 0; i < e->nfields; i++) {
			if (e->ftypes[i] == HPROF_OBJECT) {
				l->off[l->nrefs] = off;
				l->names[l->nrefs++] = e->ref_names[r++];
			}
			off += hprof_type_size(&hp->h, e->ftypes[i]);
		}
		k = e->super;
	}
	l->heap = 0;
	c->layout = l;
	return l;
}

/* The references of an instance whose class has a layout, into hp->refs
 * and hp->names; returns how many. */
static size_t layout_refs(struct hp *hp, const struct hlayout *l,
			  const unsigned char *v)
{
	size_t n = 0;

	for (uint32_t i = 0; i < l->nrefs; i++) {
		uint64_t ref = hp_id(hp, v + l->off[i]);
		hp->refs[n] = ref;
		hp->names[n] = l->names[i];
		n += ref != 0;
	}
	return n;
}

/* Write instance `id` of class `cls` whose field values are v[0..len). */
static int write_instance(struct hp *hp, uint64_t at, uint64_t id,
			  uint64_t cls, const unsigned char *v, uint32_t len)
{
	uint64_t heap = 0;
	size_t nrefs;
	struct hclass *c = hp_class_entry(hp, cls);
	struct hlayout *l;
	int rc;

	if (!c)
		return hp->h.status;
	l = layout_of(hp, cls, c);
	if (l && l->heap && len == l->bytes) {
		if (hp_refs_room(hp, l->nrefs + 1))
			return hp->h.status;
		nrefs = layout_refs(hp, l, v);
		heap = l->heap;
	} else {
		if (hp_refs_room(hp, len / hp->h.id_size + 1) ||
		    instance_refs(hp, at, cls, v, len, &nrefs, &heap))
			return hp->h.status;
		/* the slow way's size, kept for the class's next instances */
		if (c->layout && len == c->layout->bytes)
			c->layout->heap = heap;
	}
	rc = vmheap_writer_add_object_named(
	    hp->w, id, hp_class_id(hp, c), heap, KIND_INSTANCE, hp->refs,
	    nrefs ? hp->names : NULL, nrefs, 0);
	if (rc < 0)
		return hp_write_failed(hp, rc);
	hp->h.res->references += nrefs;
	return 0;
}

/* Keep an instance whose class is not dumped yet for the end. */
static int defer_instance(struct hp *hp, uint64_t at, uint64_t id,
			  uint64_t cls, const unsigned char *v, uint32_t len)
{
	struct hdeferred d = {at, id, cls, len};
	size_t need = sizeof(d) + len;

	if (hp->deferred_cap - hp->deferred_len < need) {
		size_t cap = hp->deferred_cap ? hp->deferred_cap : 1u << 16;
		unsigned char *more;

		while (cap - hp->deferred_len < need)
			cap *= 2;
		more = realloc(hp->deferred, cap);
		if (!more)
			return hp_nomem(hp);
		hp->deferred = more;
		hp->deferred_cap = cap;
	}
	memcpy(hp->deferred + hp->deferred_len, &d, sizeof(d));
	memcpy(hp->deferred + hp->deferred_len + sizeof(d), v, len);
	hp->deferred_len += need;
	return 0;
}

int hp_deferred_instances(struct hp *hp)
{
	size_t off = 0;

	while (off < hp->deferred_len && !hp->h.status) {
		struct hdeferred d;

		memcpy(&d, hp->deferred + off, sizeof(d));
		off += sizeof(d);
		write_instance(hp, d.at, d.id, d.cls, hp->deferred + off,
			       d.len);
		off += d.len;
	}
	free(hp->deferred);
	hp->deferred = NULL;
	hp->deferred_len = hp->deferred_cap = 0;
	return hp->h.status;
}

static int instance_dump(struct hp *hp, uint64_t at)
{
	unsigned ids = hp->h.id_size;
	const unsigned char *p =
	    hprof_get(&hp->h, 2 * ids + 8, "an INSTANCE DUMP");
	uint64_t id, cls;
	uint32_t len;

	if (!p)
		return hp->h.status;
	id = hp_id(hp, p);
	cls = hp_id(hp, p + ids + 4);
	len = (uint32_t)hprof_u(p + 2 * ids + 4, 4);
	p = hprof_get(&hp->h, len, "an INSTANCE DUMP");
	if (!p)
		return hp->h.status;
	/* HPROF does not order the records: an older JVM writes instances
	 * before the CLASS DUMPs they need (a class with a layout has its
	 * chain dumped) */
	const struct hclass *c = imp_table_get(&hp->classes, cls);
	if (!(c && c->layout) && !chain_dumped(hp, cls))
		return defer_instance(hp, at, id, cls, p, len);
	return write_instance(hp, at, id, cls, p, len);
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
	id = hp_id(hp, p);
	n = (uint32_t)hprof_u(p + ids + 4, 4);
	cls = hp_id(hp, p + ids + 8);
	/* the buffer grows with the elements read, not with the count the
	 * record claims */
	for (i = 0; i < n; i += chunk) {
		chunk = n - i < REFS_CHUNK ? n - i : REFS_CHUNK;
		p = hprof_get(&hp->h, (size_t)chunk * ids,
			      "an OBJECT ARRAY DUMP");
		if (!p || hp_refs_room(hp, nrefs + chunk + 1))
			return hp->h.status;
		for (k = 0; k < chunk; k++)
			if ((hp->refs[nrefs] = hp_id(hp, p + k * ids)))
				hp->names[nrefs++] =
				    vmheap_edge_name_index((uint64_t)i + k);
	}
	c = hp_class_entry(hp, cls);
	if (!c)
		return hp->h.status;
	rc = vmheap_writer_add_object_named(
	    hp->w, id, hp_class_id(hp, c),
	    HEAP_ALIGN(HEAP_ARRAY_HEADER + (uint64_t)n * HEAP_REF),
	    KIND_OBJECT_ARRAY, hp->refs, nrefs ? hp->names : NULL, nrefs, 0);
	if (rc < 0)
		return hp_write_failed(hp, rc);
	hp->h.res->references += nrefs;
	return 0;
}

/* A PRIMITIVE ARRAY DUMP, or Android's NODATA one (`nodata`: no
 * elements follow, the array has the count's size all the same). */
static int prim_array_dump(struct hp *hp, uint64_t at, int nodata)
{
	unsigned ids = hp->h.id_size, type, size;
	const unsigned char *p =
	    hprof_get(&hp->h, ids + 9, "a PRIMITIVE ARRAY DUMP");
	uint64_t id;
	uint32_t n, cid;
	int rc;

	if (!p)
		return hp->h.status;
	id = hp_id(hp, p);
	n = (uint32_t)hprof_u(p + ids + 4, 4);
	type = p[ids + 8];
	size = hprof_type_size(&hp->h, type);
	if (!size || type == HPROF_OBJECT)
		return hprof_bad(&hp->h, at,
				 "a PRIMITIVE ARRAY DUMP of unknown element "
				 "type %u",
				 type);
	if (!nodata &&
	    hprof_skip(&hp->h, (uint64_t)n * size, "a PRIMITIVE ARRAY DUMP"))
		return hp->h.status;
	cid = hp_prim_class_id(hp, type);
	if (!cid)
		return hp->h.status;
	rc = vmheap_writer_add_object(
	    hp->w, id, cid, HEAP_ALIGN(HEAP_ARRAY_HEADER + (uint64_t)n * size),
	    KIND_PRIMITIVE_ARRAY, NULL, 0);
	return rc < 0 ? hp_write_failed(hp, rc) : 0;
}

/* One heap dump segment of `len` bytes. */
int hp_heap_dump(struct hp *hp, uint64_t len)
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
			rc = root_record(hp, tag, ROOT_NONE);
			break;
		case SUB_ROOT_JNI_GLOBAL:
			rc = root_record(hp, tag, ROOT_ID);
			break;
		case SUB_ROOT_JNI_LOCAL:
		case SUB_ROOT_JAVA_FRAME:
			rc = root_record(hp, tag, ROOT_THREAD_FRAME);
			break;
		case SUB_ROOT_THREAD_OBJECT:
			rc = root_record(hp, tag, ROOT_THREAD_TRACE);
			break;
		case SUB_ROOT_NATIVE_STACK:
		case SUB_ROOT_THREAD_BLOCK:
			rc = root_record(hp, tag, ROOT_THREAD);
			break;
		case SUB_CLASS_DUMP:
			rc = hp_class_dump(hp, at);
			break;
		case SUB_INSTANCE_DUMP:
			rc = instance_dump(hp, at);
			break;
		case SUB_OBJ_ARRAY_DUMP:
			rc = obj_array_dump(hp);
			break;
		case SUB_PRIM_ARRAY_DUMP:
			rc = prim_array_dump(hp, at, 0);
			break;
		/* Android's */
		case SUB_ROOT_INTERNED_STRING:
		case SUB_ROOT_FINALIZING:
		case SUB_ROOT_DEBUGGER:
		case SUB_ROOT_REFERENCE_CLEANUP:
		case SUB_ROOT_VM_INTERNAL:
			rc = root_record(hp, tag, ROOT_NONE);
			break;
		case SUB_ROOT_JNI_MONITOR:
			rc = root_record(hp, tag, ROOT_THREAD_FRAME);
			break;
		case SUB_ROOT_UNREACHABLE: /* says an object is garbage: not
					      a root, nothing to keep */
			rc = hprof_skip(&hp->h, hp->h.id_size,
					"a ROOT UNREACHABLE");
			break;
		case SUB_PRIM_ARRAY_NODATA:
			rc = prim_array_dump(hp, at, 1);
			break;
		case SUB_HEAP_DUMP_INFO: /* the heap's id and name */
			rc = hprof_skip(&hp->h, 4 + (uint64_t)hp->h.id_size,
					"a HEAP DUMP INFO");
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
