/*
 * hprof.c - a JVM's HPROF heap dump ("JAVA PROFILE 1.0.2", as HotSpot
 * writes it with jcmd PID GC.heap_dump or jmap -dump, or "1.0.1" as older
 * JVMs' hprof agent did, or "1.0.3" as Android's ART does, with its
 * extensions; ids of 4 or 8 bytes) into a vmheap dump (part of
 * libvmheap-import).
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
 * HPROF does not order the records.  HotSpot writes every CLASS DUMP
 * before the instances; JDK 6's hprof agent wrote them after.  An
 * instance whose class (or a superclass) has no CLASS DUMP yet is kept
 * in memory (its field bytes) and written at the end of the input; one
 * whose class never gets one is refused then.  A class name that comes
 * after its CLASS DUMP is written with the class records at the end.
 *
 * Names (format 1.1): field names become edge names, array elements
 * their index, and roots on a thread's stack are named by the thread and
 * its frame (FRAME and TRACE records come before the heap dump);
 * hprof_names.c.  The header gets the dump's time in milliseconds from
 * HPROF's header; HPROF has no VM version, so the header has none.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hprof-internal.h"

static const char *const kind_names[] = {"instance", "object-array",
					 "primitive-array", "class"};

int hp_write_failed(struct hp *hp, int rc)
{
	if (!hp->h.status)
		hp->h.status =
		    imp_writer_fail(hp->h.res, hp->h.name, hp->w, rc);
	return hp->h.status;
}

int hp_nomem(struct hp *hp)
{
	if (!hp->h.status)
		hp->h.status = imp_fail(hp->h.res, hp->h.name, VMHEAP_ENOMEM,
					"out of memory at byte offset %" PRIu64,
					imp_input_offset(hp->h.in));
	return hp->h.status;
}

int hp_refs_room(struct hp *hp, size_t n)
{
	uint64_t *refs;
	int64_t *names;

	if (n <= hp->refs_cap)
		return 0;
	refs = realloc(hp->refs, n * sizeof(*refs));
	if (!refs)
		return hp_nomem(hp);
	hp->refs = refs;
	names = realloc(hp->names, n * sizeof(*names));
	if (!names)
		return hp_nomem(hp);
	hp->names = names;
	hp->refs_cap = n;
	return 0;
}

int hp_add_string(struct hp *hp, const char *text, size_t len, uint64_t *id)
{
	int rc;

	if (len > VMHEAP_MAX_STRING_BYTES)
		len = VMHEAP_MAX_STRING_BYTES;
	rc = vmheap_writer_add_string(hp->w, hp->next_string_id + 1, text, len);
	if (rc < 0)
		return hp_write_failed(hp, rc);
	*id = ++hp->next_string_id;
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
	id = hp_id(hp, p);
	s = imp_table_put(&hp->strings, id ? id : UINT64_MAX, &created);
	if (!s)
		return hp_nomem(hp);
	if (!created)
		return 0;
	s->len = len - ids;
	s->text = malloc(s->len + 1);
	if (!s->text)
		return hp_nomem(hp);
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
	uint64_t id, *serial;
	int created;

	p = hprof_get_record(&hp->h, at, len, 2 * ids + 8,
			     "a LOAD CLASS record");
	if (!p)
		return hp->h.status;
	id = hp_id(hp, p + 4);
	c = hp_class_entry(hp, id);
	if (!c)
		return hp->h.status;
	if (!c->name_sid)
		c->name_sid = hp_id(hp, p + ids + 8);
	/* FRAME records name their class by this serial */
	serial = imp_table_put(&hp->serials, hprof_u(p, 4) + 1, &created);
	if (!serial)
		return hp_nomem(hp);
	if (created)
		*serial = c->name_sid;
	s = imp_table_get(&hp->strings, c->name_sid);
	if (s && s->len == 15 &&
	    (memcmp(s->text, "java/lang/Class", 15) == 0 ||
	     memcmp(s->text, "java.lang.Class", 15) == 0))
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
	hp->h.android = strcmp((const char *)p, "JAVA PROFILE 1.0.3") == 0;
	if (strcmp((const char *)p, "JAVA PROFILE 1.0.2") != 0 &&
	    strcmp((const char *)p, "JAVA PROFILE 1.0.1") != 0 &&
	    !hp->h.android)
		return hprof_bad(&hp->h, 0,
				 "HPROF version \"%.40s\", not \"JAVA PROFILE "
				 "1.0.1\", \"1.0.2\" or \"1.0.3\"",
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
	/* HPROF's milliseconds as they are, at most INT64_MAX (a bogus
	 * header); 0: the writer's clock.  HPROF has no VM version. */
	wo.time_ms = hp->time_ms <= INT64_MAX ? (int64_t)hp->time_ms : INT64_MAX;
	wo.pointer_size = hp->h.id_size;
	wo.kind_names = kind_names;
	wo.kind_count = sizeof(kind_names) / sizeof(kind_names[0]);
	wo.edge_names = 1;
	rc = vmheap_writer_open(&hp->w, hp->h.in->opt->out_fd, &wo);
	if (rc < 0)
		return hp->h.status = imp_fail(hp->h.res, hp->h.name, rc,
					       "cannot start the vmheap dump: "
					       "%s",
					       vmheap_strerror(rc));
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
		free(c->ref_names);
		free(c->layout);
		free(c->static_refs);
		free(c->static_names);
	}
	imp_table_free(&hp->strings);
	imp_table_free(&hp->classes);
	imp_table_free(&hp->root_kinds);
	hp_names_free(hp);
	free(hp->refs);
	free(hp->names);
	free(hp->deferred);
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
	imp_table_init(&hp.root_names, sizeof(uint64_t));
	imp_table_init(&hp.frames, sizeof(struct hframe));
	imp_table_init(&hp.traces, sizeof(struct htrace));
	imp_table_init(&hp.serials, sizeof(uint64_t));
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
		case TAG_FRAME:
			rc = hp_frame_record(&hp, at, len);
			break;
		case TAG_TRACE:
			rc = hp_trace_record(&hp, at, len);
			break;
		case TAG_HEAP_DUMP:
		case TAG_HEAP_DUMP_SEGMENT:
			heap_dumps++;
			segment_open = tag == TAG_HEAP_DUMP_SEGMENT;
			rc = hp_heap_dump(&hp, len);
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
	if (hp_deferred_instances(&hp) || hp_class_objects(&hp))
		goto out;
	rc = vmheap_writer_finish(hp.w);
	if (rc < 0) {
		hp_write_failed(&hp, rc);
		goto out;
	}
	imp_count_output(res, hp.w);
out:
	rc = hp.h.status;
	hp_free(&hp);
	return rc;
}
