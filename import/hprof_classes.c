/*
 * hprof_classes.c - the classes of an HPROF import: their names, their
 * instance layouts and HotSpot's size model, CLASS DUMP records, and the
 * class objects (java.lang.Class) written at the end (part of
 * libvmheap-import; hprof.c says how the converter works).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hprof-internal.h"

/*
 * What HotSpot 17 adds to the fields an HPROF lists, per class (and so to
 * its subclasses): the fields the VM injects (a pointer is 8 bytes, an
 * int 4, a reference 4), and java.lang.Thread's @Contended padding (128
 * bytes before and after its group of fields), which a Thread with a
 * field "holder" (JDK 19 and later) does not have.
 *
 * A CLASS DUMP's "instance size" does not help: HotSpot (17 and 25) writes
 * the bytes of the class's fields in the dump (references id-size), not
 * in the heap.
 */
static const struct {
	const char *name;
	uint32_t bytes;
	int padding; /* @Contended padding: aligned after it */
} hidden_fields[] = {
    {"java.lang.Class", 36, 0},		   /* klass, array_klass, oop_size,
					   static_oop_field_count, protection_domain,
					   signers, source_file */
    {"java.lang.ClassLoader", 8, 0},	   /* loader_data */
    {"java.lang.Module", 8, 0},		   /* module_entry */
    {"java.lang.invoke.MemberName", 8, 0}, /* vmindex */
    {"java.lang.invoke.ResolvedMethodName", 8, 0}, /* vmtarget */
    {"java.lang.invoke.MethodHandleNatives$CallSiteContext", 16, 0},
    {"java.lang.Thread", 256, 1}, /* @Contended("tlr") */
};

/* ------------------------------------------------------------ classes */

struct hclass *hp_class_entry(struct hp *hp, uint64_t id)
{
	int created;
	struct hclass *c = imp_table_put(&hp->classes, id, &created);

	if (!c)
		hp_nomem(hp);
	return c;
}

/* The class's vmheap id, assigned on first use. */
uint32_t hp_class_id(struct hp *hp, struct hclass *c)
{
	if (!c->id)
		c->id = ++hp->next_class_id;
	return c->id;
}

int hp_write_class(struct hp *hp, uint64_t address, struct hclass *c)
{
	static char name[VMHEAP_MAX_STRING_BYTES];
	const struct hstring *s = imp_table_get(&hp->strings, c->name_sid);
	struct hclass *super = c->super ? hp_class_entry(hp, c->super) : NULL;
	size_t len = 0;
	int rc;

	(void)address;
	if (c->super && !super)
		return hp->h.status;
	if (s)
		len = hp_java_name(s, name, sizeof(name));
	rc = vmheap_writer_add_class(hp->w, hp_class_id(hp, c), name, len,
				     super ? hp_class_id(hp, super) : 0, 0);
	if (rc < 0)
		return hp_write_failed(hp, rc);
	c->written = 1;
	hp->h.res->classes++;
	return 0;
}

uint32_t hp_prim_class_id(struct hp *hp, unsigned type)
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
		hp_write_failed(hp, rc);
		return 0;
	}
	hp->h.res->classes++;
	return hp->prim_class[type];
}

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
	char name[64];
	size_t i, len = s ? hp_java_name(s, name, sizeof(name)) : 0;
	uint32_t added;

	/* by Java's name: an old JVM's dotted names get the rules too */
	for (i = 0; s && i < sizeof(hidden_fields) / sizeof(hidden_fields[0]);
	     i++)
		if (strlen(hidden_fields[i].name) == len &&
		    memcmp(hidden_fields[i].name, name, len) == 0)
			break;
	if (!s || i == sizeof(hidden_fields) / sizeof(hidden_fields[0]))
		return 0;
	if (!hidden_fields[i].padding)
		return hidden_fields[i].bytes;
	/* JDK 19 moved Thread's fields into a FieldHolder (its field
	 * "holder") and its ThreadLocalRandom fields lost @Contended: no
	 * padding, but injected fields (a pointer, jvmti_thread_state, and
	 * smaller ones that fill gaps): JDK 25's jmap, 112 bytes, and its
	 * subclasses' fields after that */
	added = c->field_holder ? 8 : hidden_fields[i].bytes;
	/* a subclass's fields come after the padding, which ends the
	 * layout aligned (the class's superclass is Object) */
	return (uint32_t)(HEAP_ALIGN(HEAP_INSTANCE_HEADER + c->heap_bytes +
				     added) -
			  HEAP_INSTANCE_HEADER - c->heap_bytes);
}

int hp_class_dump(struct hp *hp, uint64_t at)
{
	unsigned ids = hp->h.id_size, i, n, size, type;
	const unsigned char *p = hprof_get(&hp->h, 7 * ids + 8, "a CLASS DUMP");
	uint64_t id, name, refs[4];
	int64_t names[4];
	struct hclass *c;
	size_t nrefs = 0, nref_fields = 0, k;

	if (!p)
		return hp->h.status;
	id = hp_id(hp, p);
	c = hp_class_entry(hp, id);
	if (!c)
		return hp->h.status;
	if (c->dumped)
		return hprof_bad(&hp->h, at,
				 "a second CLASS DUMP of class 0x%" PRIx64, id);
	c->dumped = 1;
	c->super = hp_id(hp, p + ids + 4);
	c->recorded_size = (uint32_t)hprof_u(p + 7 * ids + 4, 4);
	for (k = 0; k < 4; k++) /* super, loader, signers, domain */
		if ((refs[nrefs] = hp_id(hp, p + (k + 1) * ids + 4)))
			names[nrefs++] = hp_class_ref_name(hp, (unsigned)k);
	if (hp->h.status)
		return hp->h.status;
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
	if (hp_refs_room(hp, nrefs + n + 1))
		return hp->h.status;
	memcpy(hp->refs, refs, nrefs * sizeof(*refs));
	memcpy(hp->names, names, nrefs * sizeof(*names));
	for (i = 0; i < n; i++) {
		p = hprof_get(&hp->h, ids + 1, "a static field");
		if (!p)
			return hp->h.status;
		type = p[ids];
		name = hp_id(hp, p);
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
		if (type == HPROF_OBJECT && (hp->refs[nrefs] = hp_id(hp, p))) {
			hp->names[nrefs++] = hp_field_name(hp, name);
			if (hp->h.status)
				return hp->h.status;
		}
	}
	c->static_refs = malloc((nrefs + 1) * sizeof(uint64_t));
	c->static_names = malloc((nrefs + 1) * sizeof(int64_t));
	if (!c->static_refs || !c->static_names)
		return hp_nomem(hp);
	memcpy(c->static_refs, hp->refs, nrefs * sizeof(uint64_t));
	memcpy(c->static_names, hp->names, nrefs * sizeof(int64_t));
	c->nstatic_refs = (uint32_t)nrefs;
	/* instance fields */
	p = hprof_get(&hp->h, 2, "a CLASS DUMP");
	if (!p)
		return hp->h.status;
	n = (unsigned)hprof_u(p, 2);
	c->ftypes = malloc(n + 1);
	c->ref_names = malloc((n + 1) * sizeof(int64_t));
	if (!c->ftypes || !c->ref_names)
		return hp_nomem(hp);
	for (i = 0; i < n; i++) {
		p = hprof_get(&hp->h, ids + 1, "an instance field");
		if (!p)
			return hp->h.status;
		type = p[ids];
		{
			const struct hstring *fs =
			    imp_table_get(&hp->strings, hp_id(hp, p));

			if (fs && fs->len == 6 && !memcmp(fs->text, "holder", 6))
				c->field_holder = 1;
		}
		if (type == HPROF_OBJECT) {
			c->ref_names[nref_fields++] =
			    hp_field_name(hp, hp_id(hp, p));
			if (hp->h.status)
				return hp->h.status;
		}
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
	/* a name that comes later (HPROF does not order the records) is
	 * written with the class records at the end */
	if (!c->written && c->name_sid &&
	    imp_table_get(&hp->strings, c->name_sid))
		return hp_write_class(hp, id, c);
	return 0;
}

/*
 * A class record of each class object's own address, with the class's
 * name: no object uses it, but a tool that shows a static field of a
 * class object (".LEAK") names the class by it ("ImportSpecLeak.LEAK"),
 * as FORMAT.md's names say.  The objects' class ids stay small (an
 * address in every object record would make the dump much larger).  An
 * address that could be one of the small ids (a crafted input) gets
 * none.
 */
static int own_names(struct hp *hp)
{
	static char name[VMHEAP_MAX_STRING_BYTES];
	size_t i, len;
	int rc;

	IMP_TABLE_FOR(&hp->classes, i)
	{
		struct hclass *c = imp_table_value(&hp->classes, i);
		const struct hstring *s =
		    imp_table_get(&hp->strings, c->name_sid);

		if (!c->dumped || !s || hp->classes.keys[i] <= hp->next_class_id)
			continue;
		len = hp_java_name(s, name, sizeof(name));
		rc = vmheap_writer_add_class(hp->w, hp->classes.keys[i], name,
					     len, 0, 0);
		if (rc < 0)
			return hp_write_failed(hp, rc);
	}
	return 0;
}

/* The class objects (java.lang.Class), then the class records not yet
 * written. */
int hp_class_objects(struct hp *hp)
{
	struct hclass *cc = hp->class_class
				? imp_table_get(&hp->classes, hp->class_class)
				: NULL;
	uint64_t base = HEAP_INSTANCE_HEADER, cls;
	uint32_t cid, depth;
	size_t i;
	int rc;

	/* java.lang.Class's LOAD CLASS came before its name's UTF8 record */
	IMP_TABLE_FOR(&hp->classes, i)
	{
		const struct hclass *c = imp_table_value(&hp->classes, i);
		const struct hstring *s =
		    cc ? NULL : imp_table_get(&hp->strings, c->name_sid);
		char name[16];

		if (s && s->len == 15 &&
		    hp_java_name(s, name, sizeof(name)) == 15 &&
		    memcmp(name, "java.lang.Class", 15) == 0) {
			hp->class_class = hp->classes.keys[i];
			cc = imp_table_value(&hp->classes, i);
		}
	}

	/* java.lang.Class's own instance size (a superclass cycle in a
	 * corrupt input ends the walk) */
	for (cls = hp->class_class, depth = 0; cls && depth < 65536; depth++) {
		struct hclass *c = imp_table_get(&hp->classes, cls);

		if (!c || !c->dumped)
			break;
		base += c->heap_bytes;
		cls = c->super;
	}
	cid = cc ? hp_class_id(hp, cc) : ++hp->next_class_id;
	IMP_TABLE_FOR(&hp->classes, i)
	{
		struct hclass *c = imp_table_value(&hp->classes, i);

		if (!c->dumped)
			continue;
		rc = vmheap_writer_add_object_named(
		    hp->w, hp->classes.keys[i], cid,
		    HEAP_ALIGN(HEAP_ALIGN(base) + c->static_heap_bytes),
		    KIND_CLASS, c->static_refs,
		    c->nstatic_refs ? c->static_names : NULL, c->nstatic_refs,
		    0);
		if (rc < 0)
			return hp_write_failed(hp, rc);
		hp->h.res->references += c->nstatic_refs;
	}
	IMP_TABLE_FOR(&hp->classes, i)
	{
		struct hclass *c = imp_table_value(&hp->classes, i);

		if (c->id && !c->written &&
		    hp_write_class(hp, hp->classes.keys[i], c))
			return hp->h.status;
	}
	if (!cc) {
		rc = vmheap_writer_add_class(hp->w, cid, "java.lang.Class", 15,
					     0, 0);
		if (rc < 0)
			return hp_write_failed(hp, rc);
		hp->h.res->classes++;
	}
	return own_names(hp);
}
