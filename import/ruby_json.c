/*
 * ruby_json.c - MRI's ObjectSpace.dump_all JSON into a vmheap dump (part
 * of libvmheap-import).
 *
 * dump_all writes one JSON object per line: ROOT lines first
 * ({"type":"ROOT", "root":"vm", "references":[...]}), then every heap
 * slot in address order ({"address":"0x...", "type":"STRING",
 * "class":"0x...", "memsize":40, "references":[...], ...}).  Each line is
 * parsed with jansson and written at once, so memory holds one line, the
 * class table and the root kinds.
 *
 * Naming follows hosts/ruby, so that an import and a vmheap dump of the
 * same heap have the same classes:
 *  - an object's class is its "class" address; singleton classes and
 *    ICLASSes are skipped up their "superclass" chain to the real class
 *    (rb_obj_class), named by that class's "name", or "#<Class:0x...>"
 *    when it has none (anonymous);
 *  - IMEMO, NODE and ICLASS slots are "<imemo>", "<node>", "<iclass>";
 *    objects without a class (hidden) are "<hidden-TYPE>";
 *  - the kind is the T_ type; an imemo's kind names its imemo_type.
 * A class record may come after the objects of its class in dump_all's
 * order, so object records carry a class id per "class" address at once,
 * and the class records are written at the end, when every class line has
 * been read (FORMAT.md allows a class record after its objects).
 *
 * NONE, ZOMBIE and MOVED slots are skipped, as hosts/ruby skips them.
 * "file" and "line" (allocation tracing) have no place in format 1.0 and
 * are dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ruby_json-internal.h"

#define MAX_CHAIN 4096 /* superclass steps followed to a real class */

struct rj {
	struct imp_input *in;
	struct vmheap_import_result *res;
	const char *name;
	vmheap_writer *w;
	struct ruby_kinds kinds;
	struct imp_table classes; /* address -> struct ruby_class */
	uint32_t next_class_id;
	uint32_t pseudo[2][RUBY_T_COUNT + 1]; /* [hidden][T] -> class id */
	char **root_kinds;
	size_t nroot_kinds;
	uint64_t *refs;
	size_t refs_cap;
	uint64_t line, offset; /* of the line being converted */
};

static int bad(struct rj *rj, const char *fmt, const char *what)
{
	char msg[300];

	snprintf(msg, sizeof(msg), fmt, what);
	return imp_fail(rj->res, rj->name, VMHEAP_EFORMAT,
			"%s at line %" PRIu64 " (byte offset %" PRIu64 ")", msg,
			rj->line, rj->offset);
}

static int write_failed(struct rj *rj, int rc)
{
	return imp_writer_fail(rj->res, rj->name, rj->w, rc);
}

/* "0x1f" -> 0x1f; -1 unless a "0x" and 1 to 16 hex digits. */
static int parse_address(const json_t *v, uint64_t *out)
{
	const char *s;
	uint64_t x = 0;
	size_t i, len;

	if (!json_is_string(v))
		return -1;
	s = json_string_value(v);
	len = json_string_length(v);
	if (len < 3 || len > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	for (i = 2; i < len; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -1;
		x = x << 4 | d;
	}
	*out = x;
	return 0;
}

/* The "references" of a line into rj->refs; the count, or < 0. */
static long parse_refs(struct rj *rj, const json_t *obj)
{
	const json_t *arr = json_object_get(obj, "references"), *v;
	size_t i, n;

	if (!arr)
		return 0;
	if (!json_is_array(arr))
		return bad(rj, "%s is not an array", "\"references\"");
	n = json_array_size(arr);
	if (n > rj->refs_cap) {
		uint64_t *refs = realloc(rj->refs, n * sizeof(*refs));

		if (!refs)
			return imp_fail(rj->res, rj->name, VMHEAP_ENOMEM,
					"out of memory at line %" PRIu64,
					rj->line);
		rj->refs = refs;
		rj->refs_cap = n;
	}
	json_array_foreach(arr, i, v)
	{
		if (parse_address(v, &rj->refs[i]) < 0)
			return bad(rj, "%s holds something other than an "
				       "address (\"0x...\")",
				   "\"references\"");
	}
	return (long)n;
}

/* ------------------------------------------------------------ roots */

static int root_kind_id(struct rj *rj, const char *kind, uint64_t *id)
{
	size_t i;
	char **kinds;
	int rc;

	for (i = 0; i < rj->nroot_kinds; i++)
		if (strcmp(rj->root_kinds[i], kind) == 0) {
			*id = i + 1;
			return 0;
		}
	kinds = realloc(rj->root_kinds, (i + 1) * sizeof(*kinds));
	if (!kinds)
		return VMHEAP_ENOMEM;
	rj->root_kinds = kinds;
	kinds[i] = strdup(kind);
	if (!kinds[i])
		return VMHEAP_ENOMEM;
	rj->nroot_kinds++;
	*id = i + 1;
	rc = vmheap_writer_add_string(rj->w, *id, kind,
				      strnlen(kind, VMHEAP_MAX_STRING_BYTES));
	return rc < 0 ? write_failed(rj, rc) : 0;
}

static int convert_root(struct rj *rj, const json_t *obj)
{
	const json_t *root = json_object_get(obj, "root");
	uint64_t kind;
	long n, i;
	int rc;

	if (!json_is_string(root))
		return bad(rj, "a ROOT line without a %s string", "\"root\"");
	n = parse_refs(rj, obj);
	if (n < 0)
		return (int)n;
	rc = root_kind_id(rj, json_string_value(root), &kind);
	if (rc == VMHEAP_ENOMEM)
		return imp_fail(rj->res, rj->name, rc, "out of memory");
	if (rc < 0)
		return rc;
	for (i = 0; i < n; i++) {
		rc = vmheap_writer_add_root(rj->w, kind, rj->refs[i]);
		if (rc < 0)
			return write_failed(rj, rc);
		rj->res->roots++;
	}
	return 0;
}

/* ------------------------------------------------------------ classes */

static int add_class(struct rj *rj, uint32_t *id, const char *name,
		     size_t len, uint64_t super_id, uint32_t flags)
{
	int rc;

	*id = ++rj->next_class_id;
	if (len > VMHEAP_MAX_STRING_BYTES)
		len = VMHEAP_MAX_STRING_BYTES;
	rc = vmheap_writer_add_class(rj->w, *id, name, len, super_id, flags);
	if (rc < 0)
		return write_failed(rj, rc);
	rj->res->classes++;
	return 0;
}

/* "<imemo>", "<hidden-string>", ...: written at their first object. */
static int pseudo_class(struct rj *rj, int t, int hidden, uint32_t *id)
{
	unsigned k = t >= 0 && t < (int)RUBY_T_COUNT ? (unsigned)t
						      : RUBY_T_COUNT;
	char name[64];
	int len, rc;

	if (rj->pseudo[hidden][k]) {
		*id = rj->pseudo[hidden][k];
		return 0;
	}
	len = snprintf(name, sizeof(name), hidden ? "<hidden-%s>" : "<%s>",
		       k < RUBY_T_COUNT ? rj->kinds.names[k] : "unknown");
	rc = add_class(rj, id, name, (size_t)len, 0, RUBY_CLASS_INTERNAL);
	if (rc == 0)
		rj->pseudo[hidden][k] = *id;
	return rc;
}

static struct ruby_class *class_entry(struct rj *rj, uint64_t address)
{
	int created;
	struct ruby_class *c = imp_table_put(&rj->classes, address, &created);

	if (!c)
		imp_fail(rj->res, rj->name, VMHEAP_ENOMEM,
			 "out of memory (class table)");
	return c;
}

static int dup_string(const json_t *v, char **out)
{
	if (!v)
		return 0;
	if (!json_is_string(v))
		return -1;
	*out = strdup(json_string_value(v));
	return *out ? 0 : -2;
}

/* Keep what a CLASS, MODULE or ICLASS line says of its address. */
static int note_class(struct rj *rj, uint64_t address, const json_t *obj,
		      int t)
{
	struct ruby_class *c = class_entry(rj, address);
	const json_t *super = json_object_get(obj, "superclass");
	int rc;

	if (!c)
		return VMHEAP_ENOMEM;
	if (c->seen)
		return 0; /* the first line of an address wins */
	c->seen = 1;
	c->skip = t == (int)RUBY_T_ICLASS ||
		  json_is_true(json_object_get(obj, "singleton"));
	if (super && parse_address(super, &c->super) < 0)
		return bad(rj, "%s is not an address", "\"superclass\"");
	rc = dup_string(json_object_get(obj, "name"), &c->name);
	if (rc == 0)
		rc = dup_string(json_object_get(obj, "real_class_name"),
				&c->real_name);
	if (rc == -1)
		return bad(rj, "a class %s that is not a string", "name");
	if (rc == -2)
		return imp_fail(rj->res, rj->name, VMHEAP_ENOMEM,
				"out of memory (class names)");
	return 0;
}

/* The real class of `address` (rb_obj_class), or NULL when its lines
 * are missing. */
static struct ruby_class *real_class(struct rj *rj, uint64_t *address)
{
	struct ruby_class *c;
	int steps;

	for (steps = 0; steps < MAX_CHAIN; steps++) {
		c = imp_table_get(&rj->classes, *address);
		if (!c || !c->seen)
			return NULL;
		if (!c->skip)
			return c;
		*address = c->super;
	}
	return NULL;
}

/* Write a class record for every class address objects used. */
static int write_classes(struct rj *rj)
{
	size_t i;
	char anon[64];
	int rc;

	IMP_TABLE_FOR(&rj->classes, i)
	{
		struct ruby_class *c = imp_table_value(&rj->classes, i), *r;
		uint64_t address = rj->classes.keys[i], super_id = 0, s;
		const char *name = NULL;
		uint32_t flags = 0;
		size_t len;

		if (!c->id)
			continue;
		r = real_class(rj, &address);
		if (r) {
			name = r->name;
			s = r->super;
			r = real_class(rj, &s);
			if (r && r->id)
				super_id = r->id;
		}
		if (!name && c->real_name)
			name = c->real_name;
		if (!name) {
			snprintf(anon, sizeof(anon), "#<Class:0x%016" PRIx64 ">",
				 address);
			name = anon;
			flags = RUBY_CLASS_ANONYMOUS;
		}
		len = strlen(name);
		if (len > VMHEAP_MAX_STRING_BYTES)
			len = VMHEAP_MAX_STRING_BYTES;
		rc = vmheap_writer_add_class(rj->w, c->id, name, len, super_id,
					     flags);
		if (rc < 0)
			return write_failed(rj, rc);
		rj->res->classes++;
	}
	return 0;
}

/* ------------------------------------------------------------ objects */

static int object_class(struct rj *rj, const json_t *obj, int t,
			uint32_t *id)
{
	const json_t *klass = json_object_get(obj, "class");
	uint64_t address;
	struct ruby_class *c;

	if (t == (int)RUBY_T_IMEMO || t == (int)RUBY_T_NODE ||
	    t == (int)RUBY_T_ICLASS || t < 0)
		return pseudo_class(rj, t, 0, id);
	if (!klass)
		return pseudo_class(rj, t, 1, id);
	if (parse_address(klass, &address) < 0)
		return bad(rj, "%s is not an address", "\"class\"");
	if (!address)
		return pseudo_class(rj, t, 1, id);
	c = class_entry(rj, address);
	if (!c)
		return VMHEAP_ENOMEM;
	if (!c->id)
		c->id = ++rj->next_class_id;
	*id = c->id;
	return 0;
}

static int convert_object(struct rj *rj, const json_t *obj, const char *type,
			  size_t type_len)
{
	const json_t *memsize = json_object_get(obj, "memsize");
	int t = ruby_kind_of_type(type, type_len);
	uint64_t address, bytes = 0;
	unsigned kind;
	uint32_t cid;
	long n;
	int rc;

	if (t == 0x00 || t == 0x1d || t == 0x1e)
		return 0; /* NONE, ZOMBIE, MOVED: no object */
	if (parse_address(json_object_get(obj, "address"), &address) < 0)
		return bad(rj, "an object line without an %s (\"0x...\")",
			   "\"address\"");
	if (memsize) {
		if (!json_is_integer(memsize) || json_integer_value(memsize) < 0)
			return bad(rj, "%s is not a byte count", "\"memsize\"");
		bytes = (uint64_t)json_integer_value(memsize);
	}
	if (t == 0x02 || t == 0x03 || t == (int)RUBY_T_ICLASS) {
		rc = note_class(rj, address, obj, t);
		if (rc < 0)
			return rc;
	}
	rc = object_class(rj, obj, t, &cid);
	if (rc < 0)
		return rc;
	if (t < 0)
		kind = ruby_kind_unknown(&rj->kinds);
	else if (t == (int)RUBY_T_IMEMO)
		kind = ruby_kind_of_imemo(
		    &rj->kinds,
		    json_string_value(json_object_get(obj, "imemo_type")));
	else
		kind = (unsigned)t;
	n = parse_refs(rj, obj);
	if (n < 0)
		return (int)n;
	rc = vmheap_writer_add_object(rj->w, address, cid, bytes, kind,
				      rj->refs, (size_t)n);
	if (rc < 0)
		return write_failed(rj, rc);
	rj->res->references += (uint64_t)n;
	return 0;
}

static int convert_line(struct rj *rj, const char *line, size_t len)
{
	json_error_t err;
	json_t *obj;
	const json_t *type;
	int rc;

	obj = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
			 &err);
	if (!obj) {
		rj->offset += (uint64_t)(err.position > 0 ? err.position : 0);
		return bad(rj, "malformed JSON: %s", err.text);
	}
	type = json_object_get(obj, "type");
	if (!json_is_object(obj))
		rc = bad(rj, "a line that is not a JSON %s", "object");
	else if (!json_is_string(type))
		rc = bad(rj, "a line without a %s string", "\"type\"");
	else if (strcmp(json_string_value(type), "ROOT") == 0)
		rc = convert_root(rj, obj);
	else
		rc = convert_object(rj, obj, json_string_value(type),
				    json_string_length(type));
	json_decref(obj);
	return rc;
}

static int open_writer(struct rj *rj)
{
	struct vmheap_writer_options wo = VMHEAP_WRITER_OPTIONS_INIT;
	int rc;

	wo.vm_name = "ruby";
	wo.vm_version = "";
	wo.pid = 0;
	wo.pointer_size = 8;
	wo.kind_names = (const char *const *)rj->kinds.names;
	wo.kind_count = rj->kinds.count;
	rc = vmheap_writer_open(&rj->w, rj->in->opt->out_fd, &wo);
	if (rc < 0)
		return imp_fail(rj->res, rj->name, rc,
				"cannot start the vmheap dump: %s",
				vmheap_strerror(rc));
	return 0;
}

static void rj_free(struct rj *rj)
{
	size_t i;

	IMP_TABLE_FOR(&rj->classes, i)
	{
		struct ruby_class *c = imp_table_value(&rj->classes, i);

		free(c->name);
		free(c->real_name);
	}
	imp_table_free(&rj->classes);
	for (i = 0; i < rj->nroot_kinds; i++)
		free(rj->root_kinds[i]);
	free(rj->root_kinds);
	free(rj->refs);
	ruby_kinds_free(&rj->kinds);
	vmheap_writer_free(rj->w);
}

int imp_ruby_json(struct imp_input *in, struct vmheap_import_result *res)
{
	struct rj rj;
	const char *line;
	size_t len;
	int rc;

	memset(&rj, 0, sizeof(rj));
	rj.in = in;
	rj.res = res;
	rj.name = in->opt->name ? in->opt->name : "<input>";
	imp_table_init(&rj.classes, sizeof(struct ruby_class));
	rc = ruby_kinds_init(&rj.kinds);
	if (rc < 0) {
		rc = imp_fail(res, rj.name, rc, "out of memory");
		goto out;
	}
	rc = open_writer(&rj);
	if (rc < 0)
		goto out;
	json_object_seed(1); /* no /dev/urandom read per run */
	while ((rc = imp_input_line(in, &line, &len, &rj.offset)) > 0) {
		rj.line = in->line;
		if (len == 0 || (len == 1 && line[0] == '\r'))
			continue;
		rc = convert_line(&rj, line, len);
		if (rc < 0)
			goto out;
	}
	if (rc == VMHEAP_ETRUNCATED) {
		rj.line = in->line + 1;
		rc = imp_fail(res, rj.name, rc,
			      "truncated: the last line (%" PRIu64
			      ") ends at byte offset %" PRIu64
			      " without a newline",
			      rj.line, imp_input_offset(in) + (in->end - in->pos));
		goto out;
	}
	if (rc < 0) {
		rc = imp_fail(res, rj.name, rc, "cannot read: %s",
			      rc == VMHEAP_EIO ? strerror(in->error)
					       : "out of memory");
		goto out;
	}
	if (in->line == 0) {
		rc = imp_fail(res, rj.name, VMHEAP_EFORMAT,
			      "no dump_all line at byte offset 0");
		goto out;
	}
	rc = write_classes(&rj);
	if (rc < 0)
		goto out;
	rc = vmheap_writer_finish(rj.w);
	if (rc < 0) {
		rc = write_failed(&rj, rc);
		goto out;
	}
	imp_count_output(res, rj.w);
out:
	rj_free(&rj);
	return rc;
}
