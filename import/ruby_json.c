/*
 * ruby_json.c - MRI's ObjectSpace.dump_all JSON into a vmheap dump (part
 * of libvmheap-import).
 *
 * dump_all writes one JSON object per line: ROOT lines first
 * ({"type":"ROOT", "root":"vm", "references":[...]}), then every heap
 * slot in address order ({"address":"0x...", "type":"STRING",
 * "class":"0x...", "memsize":40, "references":[...], ...}).  Each line is
 * parsed (ruby_line.c) and written at once, so memory holds one line, the
 * class table and the root kinds.
 *
 * Naming follows hosts/ruby, so that an import and a vmheap dump of the
 * same heap have the same classes:
 *  - an object's class is its "class" address; singleton classes and
 *    ICLASSes are skipped up their "superclass" chain to the real class
 *    (rb_obj_class), named by that class's "name", or "#<Class:0x...>"
 *    when it has none (anonymous);
 *  - IMEMO slots are named by their imemo_type as dump_all writes it,
 *    "<imemo:iseq>", "<imemo:ment>", ... ("<imemo>" for a type this
 *    converter does not know); NODE and ICLASS slots are "<node>" and
 *    "<iclass>"; objects without a class (hidden) are "<hidden-TYPE>";
 *  - the kind is the T_ type; an imemo's kind names its imemo_type.
 * A class record may come after the objects of its class in dump_all's
 * order, so object records carry a class id per "class" address at once,
 * and the class records are written at the end, when every class line has
 * been read (FORMAT.md allows a class record after its objects).
 *
 * NONE, ZOMBIE and MOVED slots are skipped, as hosts/ruby skips them.
 *
 * Objects allocated while ObjectSpace.trace_object_allocations was on
 * carry "file", "line" and "method" (the method may be missing): each
 * distinct three is a site record (format 1.1), written before the first
 * object of that site, and the object records its site's id.  dump_all
 * gives no names to references, so none are written.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ruby_json-internal.h"

#define MAX_CHAIN 4096 /* superclass steps followed to a real class */
#define PSEUDO_KINDS 64 /* more than the kinds (ruby_kinds.c) */

struct rj {
	struct imp_input *in;
	struct vmheap_import_result *res;
	const char *name;
	vmheap_writer *w;
	struct ruby_kinds kinds;
	struct rj_line line;	  /* the line being converted */
	struct imp_table classes; /* address -> struct ruby_class */
	uint32_t next_class_id;
	uint32_t pseudo[2][PSEUDO_KINDS]; /* [hidden][kind] -> class id */
	struct imp_table sites;		  /* hash -> struct ruby_site */
	uint64_t next_site_id;
	char **root_kinds;
	size_t *root_kind_len, nroot_kinds;
	uint64_t line_no, offset; /* of the line being converted */
};

static int bad(struct rj *rj, const char *fmt, const char *what)
{
	char msg[300];

	snprintf(msg, sizeof(msg), fmt, what);
	return imp_fail(rj->res, rj->name, VMHEAP_EFORMAT,
			"%s at line %" PRIu64 " (byte offset %" PRIu64 ")", msg,
			rj->line_no, rj->offset);
}

static int write_failed(struct rj *rj, int rc)
{
	return imp_writer_fail(rj->res, rj->name, rj->w, rc);
}

/* ------------------------------------------------------------ roots */

static int root_kind_id(struct rj *rj, const char *kind, size_t len,
			uint64_t *id)
{
	size_t i, *lens;
	char **kinds;
	int rc;

	for (i = 0; i < rj->nroot_kinds; i++)
		if (rj->root_kind_len[i] == len &&
		    memcmp(rj->root_kinds[i], kind, len) == 0) {
			*id = i + 1;
			return 0;
		}
	kinds = realloc(rj->root_kinds, (i + 1) * sizeof(*kinds));
	if (!kinds)
		return VMHEAP_ENOMEM;
	rj->root_kinds = kinds;
	lens = realloc(rj->root_kind_len, (i + 1) * sizeof(*lens));
	if (!lens)
		return VMHEAP_ENOMEM;
	rj->root_kind_len = lens;
	kinds[i] = malloc(len + 1);
	if (!kinds[i])
		return VMHEAP_ENOMEM;
	memcpy(kinds[i], kind, len);
	kinds[i][len] = '\0';
	lens[i] = len;
	rj->nroot_kinds++;
	*id = i + 1;
	if (len > VMHEAP_MAX_STRING_BYTES)
		len = VMHEAP_MAX_STRING_BYTES;
	rc = vmheap_writer_add_string(rj->w, *id, kind, len);
	return rc < 0 ? write_failed(rj, rc) : 0;
}

static int convert_root(struct rj *rj)
{
	const struct rj_line *l = &rj->line;
	uint64_t kind;
	size_t i;
	int rc;

	if (!l->root.set)
		return bad(rj, "a ROOT line without a %s string", "\"root\"");
	rc = root_kind_id(rj, rj_str_bytes(l, l->root), l->root.len, &kind);
	if (rc == VMHEAP_ENOMEM)
		return imp_fail(rj->res, rj->name, rc, "out of memory");
	if (rc < 0)
		return rc;
	for (i = 0; i < l->nrefs; i++) {
		rc = vmheap_writer_add_root(rj->w, kind, l->refs[i]);
		if (rc < 0)
			return write_failed(rj, rc);
		rj->res->roots++;
	}
	return 0;
}

/* ------------------------------------------------------------ classes */

static int add_class(struct rj *rj, uint32_t *id, const char *name, size_t len,
		     uint64_t super_id, uint32_t flags)
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

/* "<imemo:iseq>", "<hidden-string>", ... (the name of the object's
 * kind): written at their first object. */
static int pseudo_class(struct rj *rj, unsigned kind, int hidden,
			uint32_t *id)
{
	unsigned k = kind < rj->kinds.count && kind < PSEUDO_KINDS
			 ? kind
			 : ruby_kind_unknown(&rj->kinds);
	char name[64];
	int len, rc;

	if (rj->pseudo[hidden][k]) {
		*id = rj->pseudo[hidden][k];
		return 0;
	}
	len = snprintf(name, sizeof(name), hidden ? "<hidden-%s>" : "<%s>",
		       rj->kinds.names[k]);
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

/* A copy of a decoded string, or NULL if absent; -1 when out of memory. */
static int dup_str(const struct rj_line *l, struct rj_str s, char **out)
{
	if (!s.set)
		return 0;
	*out = malloc(s.len + 1);
	if (!*out)
		return -1;
	memcpy(*out, rj_str_bytes(l, s), s.len);
	(*out)[s.len] = '\0';
	return 0;
}

/* Keep what a CLASS, MODULE or ICLASS line says of its address. */
static int note_class(struct rj *rj, int t)
{
	const struct rj_line *l = &rj->line;
	struct ruby_class *c = class_entry(rj, l->address);

	if (!c)
		return VMHEAP_ENOMEM;
	if (c->seen)
		return 0; /* the first line of an address wins */
	c->seen = 1;
	c->skip = t == (int)RUBY_T_ICLASS || l->singleton;
	c->super = l->has_super ? l->super : 0;
	if (dup_str(l, l->name, &c->name) < 0 ||
	    dup_str(l, l->real_name, &c->real_name) < 0)
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
			snprintf(anon, sizeof(anon),
				 "#<Class:0x%016" PRIx64 ">", address);
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

static int object_class(struct rj *rj, int t, unsigned kind, uint32_t *id)
{
	const struct rj_line *l = &rj->line;
	struct ruby_class *c;

	if (t == (int)RUBY_T_IMEMO || t == (int)RUBY_T_NODE ||
	    t == (int)RUBY_T_ICLASS || t < 0)
		return pseudo_class(rj, kind, 0, id);
	if (!l->has_class || !l->klass)
		return pseudo_class(rj, kind, 1, id);
	c = class_entry(rj, l->klass);
	if (!c)
		return VMHEAP_ENOMEM;
	if (!c->id)
		c->id = ++rj->next_class_id;
	*id = c->id;
	return 0;
}

/* The id of the line's allocation site, 0 for none; its site record is
 * written when new. */
static int object_site(struct rj *rj, uint64_t *id)
{
	const struct rj_line *l = &rj->line;
	struct ruby_site *s;
	int created, rc;

	*id = 0;
	if (!l->file.set)
		return 0;
	s = ruby_site_get(&rj->sites, rj_str_bytes(l, l->file), l->file.len,
			  l->line, rj_str_bytes(l, l->method), l->method.len,
			  &created);
	if (!s)
		return imp_fail(rj->res, rj->name, VMHEAP_ENOMEM,
				"out of memory (site table)");
	if (created) {
		rc = vmheap_writer_add_site(rj->w, rj->next_site_id + 1,
					    s->file, s->file_len, s->line,
					    s->method, s->method_len);
		if (rc < 0)
			return write_failed(rj, rc);
		s->id = ++rj->next_site_id;
		rj->res->sites++;
	}
	*id = s->id;
	return 0;
}

static int convert_object(struct rj *rj)
{
	const struct rj_line *l = &rj->line;
	int t = ruby_kind_of_type(rj_str_bytes(l, l->type), l->type.len);
	unsigned kind;
	uint32_t cid;
	uint64_t site;
	int rc;

	if (t == 0x00 || t == 0x1d || t == 0x1e)
		return 0; /* NONE, ZOMBIE, MOVED: no object */
	if (!l->has_address)
		return bad(rj, "an object line without an %s (\"0x...\")",
			   "\"address\"");
	if (t == 0x02 || t == 0x03 || t == (int)RUBY_T_ICLASS) {
		rc = note_class(rj, t);
		if (rc < 0)
			return rc;
	}
	if (t < 0)
		kind = ruby_kind_unknown(&rj->kinds);
	else if (t == (int)RUBY_T_IMEMO)
		kind = ruby_kind_of_imemo(rj_str_bytes(l, l->imemo_type),
					  l->imemo_type.len);
	else
		kind = (unsigned)t;
	rc = object_class(rj, t, kind, &cid);
	if (rc < 0)
		return rc;
	rc = object_site(rj, &site);
	if (rc < 0)
		return rc;
	rc = vmheap_writer_add_object_named(rj->w, l->address, cid, l->memsize,
					    kind, l->refs, NULL, l->nrefs,
					    site);
	if (rc < 0)
		return write_failed(rj, rc);
	rj->res->references += l->nrefs;
	return 0;
}

static int convert_line(struct rj *rj, const char *text, size_t len)
{
	const char *error;
	size_t column;

	if (rj_line_parse(&rj->line, text, len, &column, &error) < 0) {
		if (strcmp(error, "out of memory") == 0)
			return imp_fail(rj->res, rj->name, VMHEAP_ENOMEM,
					"out of memory at line %" PRIu64,
					rj->line_no);
		rj->offset += column;
		/* well-formed, but a number that cannot be true */
		if (strncmp(error, "implausible ", 12) == 0)
			return bad(rj, "%s", error);
		return bad(rj, "malformed JSON: %s", error);
	}
	if (!rj->line.type.set)
		return bad(rj, "a line without a %s string", "\"type\"");
	if (rj_str_is(&rj->line, rj->line.type, "ROOT"))
		return convert_root(rj);
	return convert_object(rj);
}

static int open_writer(struct rj *rj)
{
	struct vmheap_writer_options wo = VMHEAP_WRITER_OPTIONS_INIT;
	int rc;

	wo.vm_name = "ruby";
	wo.vm_version = "";
	wo.pid = rj->in->opt->pid;
	wo.pointer_size = 8;
	wo.sites = 1; /* when allocation tracing was on */
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
	ruby_sites_free(&rj->sites);
	for (i = 0; i < rj->nroot_kinds; i++)
		free(rj->root_kinds[i]);
	free(rj->root_kinds);
	free(rj->root_kind_len);
	rj_line_free(&rj->line);
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
	imp_table_init(&rj.sites, sizeof(struct ruby_site));
	rc = ruby_kinds_init(&rj.kinds);
	if (rc < 0) {
		rc = imp_fail(res, rj.name, rc, "out of memory");
		goto out;
	}
	rc = open_writer(&rj);
	if (rc < 0)
		goto out;
	while ((rc = imp_input_line(in, &line, &len, &rj.offset)) > 0) {
		rj.line_no = in->line;
		if (len == 0 || (len == 1 && line[0] == '\r'))
			continue;
		rc = convert_line(&rj, line, len);
		if (rc < 0)
			goto out;
	}
	if (rc == VMHEAP_ETRUNCATED) {
		rj.line_no = in->line + 1;
		rc = imp_fail(
		    res, rj.name, rc,
		    "truncated: the last line (%" PRIu64
		    ") ends at byte offset %" PRIu64 " without a newline",
		    rj.line_no, imp_input_offset(in) + (in->end - in->pos));
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
