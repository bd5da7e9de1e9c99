/*
 * hprof_names.c - the names an HPROF import gives references and roots
 * (part of libvmheap-import; hprof.c says how the converter works).
 *
 * Edge names follow FORMAT.md's text conventions: an instance field or a
 * static field is ".name" (the static fields are the class object's
 * references); HotSpot's pseudo-statics keep their own "<name>"; the
 * other references of a class object are "superclass", "class loader",
 * "signers" and "protection domain"; an array element is its index (the
 * writer's negative-int form, written by hprof_objects.c).  Each distinct
 * name is one string record, written before the first object that uses
 * it.
 *
 * Root names: a root on a thread's stack (java_frame, jni_local) is named
 * by the thread's serial number and the frame HotSpot's TRACE record of
 * that thread has at its depth, as Java prints a stack frame:
 * "thread 1 frame 6: ImportSpecLeak.main(ImportSpecLeak.java:35)".  The
 * other roots of a thread (thread_object, native_stack, thread_block)
 * are "thread N".  HPROF has no thread names (they are in the Thread
 * objects' strings, whose bytes come after the roots).  A sticky_class
 * root, a class object, is named by its class ("java.lang.System"), so
 * that a path from it says which class's static holds what follows.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hprof-internal.h"

/* The longest root name written (a frame's class, method and file are
 * cut to fit). */
#define ROOT_NAME_MAX 1024

int64_t hp_field_name(struct hp *hp, uint64_t sid)
{
	struct hstring *s = imp_table_get(&hp->strings, sid);
	char *text;
	size_t len;
	int rc;

	if (!s || !s->len)
		return 0;
	if (s->edge_name)
		return (int64_t)s->edge_name;
	if (s->text[0] == '<') /* "<resolved_references>", "<init_lock>" */
		return hp_add_string(hp, s->text, s->len, &s->edge_name)
			   ? 0
			   : (int64_t)s->edge_name;
	len = s->len + 1;
	text = malloc(len);
	if (!text) {
		hp_nomem(hp);
		return 0;
	}
	text[0] = '.';
	memcpy(text + 1, s->text, s->len);
	rc = hp_add_string(hp, text, len, &s->edge_name);
	free(text);
	return rc ? 0 : (int64_t)s->edge_name;
}

int64_t hp_class_ref_name(struct hp *hp, unsigned k)
{
	static const char *const names[4] = {"superclass", "class loader",
					     "signers", "protection domain"};

	if (!hp->class_ref_names[k] &&
	    hp_add_string(hp, names[k], strlen(names[k]),
			  &hp->class_ref_names[k]))
		return 0;
	return (int64_t)hp->class_ref_names[k];
}

/* The descriptor letter of primitive type `name` (Java's keyword, `len`
 * bytes), or 0. */
static char primitive_letter(const char *name, size_t len)
{
	static const struct {
		const char *name;
		char letter;
	} prims[] = {{"boolean", 'Z'}, {"byte", 'B'},	{"char", 'C'},
		     {"short", 'S'},   {"int", 'I'},	{"long", 'J'},
		     {"float", 'F'},   {"double", 'D'}};
	size_t i;

	for (i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (strlen(prims[i].name) == len &&
		    memcmp(prims[i].name, name, len) == 0)
			return prims[i].letter;
	return 0;
}

/* Copy `len` bytes of a class name to out[*n..size) as Java names it:
 * '/' -> '.', a hidden class's "+0x" -> "/0x". */
static void put_name(const char *text, size_t len, char *out, size_t size,
		     size_t *n)
{
	size_t i;

	for (i = 0; i < len && *n < size; i++) {
		char ch = text[i];

		if (ch == '/')
			ch = '.';
		else if (ch == '+' && i + 2 < len && text[i + 1] == '0' &&
			 text[i + 2] == 'x')
			ch = '/';
		out[(*n)++] = ch;
	}
}

/*
 * One convention for every JVM's names, Class.getName()'s, as jmap -histo
 * prints them: HotSpot's "java/lang/String" -> "java.lang.String" and
 * "[Ljava/lang/Object;" -> "[Ljava.lang.Object;"; a hidden class's
 * "Foo+0x0800" -> "Foo/0x0800"; the old hprof agent's (JDK 6) dotted
 * names stay, and its array names "java.lang.Object[]", "int[][]" become
 * "[Ljava.lang.Object;", "[[I".
 */
size_t hp_java_name(const struct hstring *s, char *out, size_t size)
{
	size_t n = 0, len = s->len, dims = 0;
	char letter;

	while (len >= 2 + 2 * dims && s->text[len - 2 * dims - 2] == '[' &&
	       s->text[len - 2 * dims - 1] == ']')
		dims++;
	if (!dims || len == 2 * dims) {
		put_name(s->text, len, out, size, &n);
		return n;
	}
	len -= 2 * dims;
	for (; dims && n < size; dims--)
		out[n++] = '[';
	letter = primitive_letter(s->text, len);
	if (letter) {
		if (n < size)
			out[n++] = letter;
		return n;
	}
	if (n < size)
		out[n++] = 'L';
	put_name(s->text, len, out, size, &n);
	if (n < size)
		out[n++] = ';';
	return n;
}

/* ------------------------------------------------------------ stacks */

int hp_frame_record(struct hp *hp, uint64_t at, uint32_t len)
{
	unsigned ids = hp->h.id_size;
	const unsigned char *p;
	struct hframe *f;
	int created;

	p = hprof_get_record(&hp->h, at, len, 4 * ids + 8, "a FRAME record");
	if (!p)
		return hp->h.status;
	f = imp_table_put(&hp->frames, hp_id(hp, p), &created);
	if (!f) /* a frame id 0 has no name */
		return hp_id(hp, p) ? hp_nomem(hp) : 0;
	f->method = hp_id(hp, p + ids);
	f->file = hp_id(hp, p + 3 * ids);
	f->class_serial = (uint32_t)hprof_u(p + 4 * ids, 4);
	f->line = (int32_t)(uint32_t)hprof_u(p + 4 * ids + 4, 4);
	return 0;
}

int hp_trace_record(struct hp *hp, uint64_t at, uint32_t len)
{
	unsigned ids = hp->h.id_size;
	const unsigned char *p = hprof_get(&hp->h, 12, "a TRACE record");
	uint32_t serial, n, i;
	struct htrace *t;
	int created;

	if (!p)
		return hp->h.status;
	serial = (uint32_t)hprof_u(p + 4, 4);
	n = (uint32_t)hprof_u(p + 8, 4);
	if (len < 12 || (len - 12) / ids != n || (len - 12) % ids)
		return hprof_bad(&hp->h, at,
				 "a TRACE record of %" PRIu32
				 " bytes for %" PRIu32 " frames",
				 len, n);
	p = hprof_get(&hp->h, (size_t)n * ids, "a TRACE record");
	if (!p)
		return hp->h.status;
	t = imp_table_put(&hp->traces, (uint64_t)serial + 1, &created);
	if (!t)
		return hp_nomem(hp);
	if (!created)
		return 0; /* the first trace of a thread wins */
	t->frames = malloc(((size_t)n + 1) * sizeof(uint64_t));
	if (!t->frames)
		return hp_nomem(hp);
	for (i = 0; i < n; i++)
		t->frames[i] = hp_id(hp, p + (size_t)i * ids);
	t->nframes = n;
	return 0;
}

/* Append "Class.method(File.java:12)" for frame `f` to out[0..*n). */
static void frame_text(struct hp *hp, const struct hframe *f, char *out,
		       size_t size, size_t *n)
{
	const uint64_t *cls = imp_table_get(&hp->serials,
					    (uint64_t)f->class_serial + 1);
	const struct hstring *c = cls ? imp_table_get(&hp->strings, *cls) : NULL;
	const struct hstring *m = imp_table_get(&hp->strings, f->method);
	const struct hstring *file = imp_table_get(&hp->strings, f->file);
	int k;

	if (c && *n < size)
		*n += hp_java_name(c, out + *n, (size - *n) / 2);
	k = snprintf(out + *n, size - *n, ".%.200s(", m ? m->text : "?");
	if (k > 0)
		*n += (size_t)k < size - *n ? (size_t)k : size - *n - 1;
	if (f->line == -3)
		k = snprintf(out + *n, size - *n, "Native Method)");
	else if (!file || !file->len)
		k = snprintf(out + *n, size - *n, "Unknown Source)");
	else if (f->line > 0)
		k = snprintf(out + *n, size - *n, "%.200s:%" PRId32 ")",
			     file->text, f->line);
	else
		k = snprintf(out + *n, size - *n, "%.200s)", file->text);
	if (k > 0)
		*n += (size_t)k < size - *n ? (size_t)k : size - *n - 1;
}

uint64_t hp_root_name(struct hp *hp, uint32_t serial, int64_t depth)
{
	uint32_t d = depth < 0 ? UINT32_MAX : (uint32_t)depth;
	uint64_t key = ((uint64_t)serial << 32 | d) + 1, *sid;
	const struct htrace *t;
	const struct hframe *f;
	char text[ROOT_NAME_MAX];
	size_t n;
	int created, k;

	if (!key) /* serial and depth all ones: no name */
		return 0;
	sid = imp_table_put(&hp->root_names, key, &created);
	if (!sid) {
		hp_nomem(hp);
		return 0;
	}
	if (!created)
		return *sid;
	k = d == UINT32_MAX
		? snprintf(text, sizeof(text), "thread %" PRIu32, serial)
		: snprintf(text, sizeof(text), "thread %" PRIu32
					       " frame %" PRIu32,
			   serial, d);
	n = k > 0 ? (size_t)k : 0;
	t = imp_table_get(&hp->traces, (uint64_t)serial + 1);
	f = t && d < t->nframes ? imp_table_get(&hp->frames, t->frames[d])
				: NULL;
	if (f) {
		n += (size_t)snprintf(text + n, sizeof(text) - n, ": ");
		frame_text(hp, f, text, sizeof(text), &n);
	}
	if (hp_add_string(hp, text, n, sid))
		return 0;
	return *sid;
}

uint64_t hp_class_root_name(struct hp *hp, uint64_t class_object)
{
	static char text[VMHEAP_MAX_STRING_BYTES];
	const struct hclass *c = imp_table_get(&hp->classes, class_object);
	const struct hstring *s =
	    c ? imp_table_get(&hp->strings, c->name_sid) : NULL;
	uint64_t sid;

	if (!s || !s->len ||
	    hp_add_string(hp, text, hp_java_name(s, text, sizeof(text)), &sid))
		return 0;
	return sid;
}

void hp_names_free(struct hp *hp)
{
	size_t i;

	IMP_TABLE_FOR(&hp->traces, i)
	free(((struct htrace *)imp_table_value(&hp->traces, i))->frames);
	imp_table_free(&hp->traces);
	imp_table_free(&hp->frames);
	imp_table_free(&hp->serials);
	imp_table_free(&hp->root_names);
}
