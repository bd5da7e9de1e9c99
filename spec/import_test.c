/*
 * import_test.c - vmheap-import against the real VMs' own dumps.
 *
 * MRI: a real `ruby` with the vmheap agent holds known objects; the test
 * takes a vmheap dump through the agent (in-process mode, which allocates
 * nothing in Ruby) and then has the program write ObjectSpace.dump_all of
 * the same heap (GC off, nothing allocated in between), imports it, and
 * compares: vmheap-histo's per-class counts and bytes must be equal, and
 * every object must have the same id, class, size and references, except
 * the reference to its own class, which dump_all leaves out.
 *
 * Bad input: truncated, corrupt and unknown inputs exit 2, say where, and
 * leave no OUT (nor a temporary file) behind.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmheap.h"
#include "hprof_shape.h"
#include "lib/vmheap_spec.h"

#define RUN_MS 60000
#define LEFT "\xe2\x86\x90" /* the arrow of vmheap-path's path line */

/* ------------------------------------------------------------ helpers */

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Run vmheap-import with `args` (NULL-terminated, at most 6). */
static void import_run(struct spec_run *r, const char *const *args,
		       const char *input)
{
	const char *argv[8] = {spec_bin("vmheap-import")};
	size_t i;

	for (i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	ck_assert_msg(spec_run(argv, NULL, input, RUN_MS, r) == 0,
		      "cannot start vmheap-import");
}

/* vmheap-histo --format csv --sort name of `dump` (malloc'd). */
static char *histo_csv(const char *dump, int by_kind)
{
	const char *argv[] = {spec_bin("vmheap-histo"),
			      "--format",
			      "csv",
			      "--sort",
			      "name",
			      by_kind ? "--kind" : dump,
			      by_kind ? dump : NULL,
			      NULL};
	struct spec_run r;
	char *out;

	ck_assert(spec_run(argv, NULL, NULL, RUN_MS, &r) == 0);
	ck_assert_msg(r.status == 0, "vmheap-histo %s: %s", dump, r.err);
	out = r.out;
	r.out = NULL;
	spec_run_free(&r);
	return out;
}

/* One object of a dump, its class resolved to a name; its references
 * sorted, each with its edge name (format 1.1; 0: none). */
struct obj {
	uint64_t id, class_id, bytes, site;
	const char *class_name;
	uint64_t *refs;
	int64_t *names;
	size_t nrefs;
};

struct root {
	uint64_t kind, name, object; /* string ids, the object */
};

struct site {
	uint64_t id, line;
	char *file, *method;
};

struct dump {
	struct obj *objs;
	size_t n, cap;
	uint64_t *class_ids;
	char **class_names;
	size_t nclasses;
	uint64_t *string_ids;
	char **strings;
	size_t nstrings;
	struct root *roots;
	size_t nroots;
	struct site *sites;
	size_t nsites;
	char *root_kinds; /* "kind kind ...", sorted, unique */
	int64_t time, time_ms; /* the header's */
};

static int by_id(const void *a, const void *b)
{
	const struct obj *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Grow *p (of *cap elements of `size` bytes) to hold n + 1. */
static void *grow(void *p, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	p = realloc(p, *cap * size);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* The text of string record `id`, or NULL. */
static const char *string_of(const struct dump *d, uint64_t id)
{
	size_t i;

	for (i = 0; id && i < d->nstrings; i++)
		if (d->string_ids[i] == id)
			return d->strings[i];
	return NULL;
}

/* Sort an object's references, their names with them. */
static void sort_refs(struct obj *o)
{
	size_t i, j;

	for (i = 1; i < o->nrefs; i++)
		for (j = i; j > 0 && o->refs[j - 1] > o->refs[j]; j--) {
			uint64_t r = o->refs[j];
			int64_t nm = o->names[j];

			o->refs[j] = o->refs[j - 1];
			o->names[j] = o->names[j - 1];
			o->refs[j - 1] = r;
			o->names[j - 1] = nm;
		}
}

static void read_dump(const char *path, struct dump *d)
{
	vmheap_reader *r = NULL;
	struct vmheap_record rec;
	char **kinds = NULL;
	size_t nkinds = 0, i, j, len = 1, ocap = 0, scap = 0, ccap = 0,
	       rcap = 0, tcap = 0, cap;
	int rc;

	memset(d, 0, sizeof(*d));
	rc = vmheap_reader_open_path(&r, path);
	ck_assert_msg(rc == 0, "open %s: %s", path, vmheap_reader_error(r));
	d->time = vmheap_reader_header(r)->time;
	d->time_ms = vmheap_reader_header(r)->time_ms;
	while ((rc = vmheap_reader_next(r, &rec)) > 0) {
		struct obj *o;
		struct site *t;

		switch (rec.type) {
		case VMHEAP_RECORD_STRING:
			cap = scap;
			d->string_ids =
			    grow(d->string_ids, d->nstrings, &cap, 8);
			d->strings = grow(d->strings, d->nstrings, &scap,
					  sizeof(char *));
			d->string_ids[d->nstrings] = rec.u.string.id;
			d->strings[d->nstrings++] =
			    strndup(rec.u.string.text, rec.u.string.len);
			break;
		case VMHEAP_RECORD_CLASS:
			cap = ccap;
			d->class_ids = grow(d->class_ids, d->nclasses, &cap, 8);
			d->class_names = grow(d->class_names, d->nclasses,
					      &ccap, sizeof(char *));
			d->class_ids[d->nclasses] = rec.u.klass.id;
			d->class_names[d->nclasses++] =
			    strndup(rec.u.klass.name, rec.u.klass.name_len);
			break;
		case VMHEAP_RECORD_OBJECT:
			d->objs = grow(d->objs, d->n, &ocap, sizeof(*d->objs));
			o = &d->objs[d->n++];
			o->id = rec.u.object.id;
			o->class_id = rec.u.object.class_id;
			o->bytes = rec.u.object.bytes;
			o->site = rec.u.object.site;
			o->nrefs = rec.u.object.nrefs;
			o->refs = malloc((o->nrefs + 1) * 8);
			o->names = calloc(o->nrefs + 1, 8);
			if (o->nrefs)
				memcpy(o->refs, rec.u.object.refs,
				       o->nrefs * 8);
			if (o->nrefs && rec.u.object.names)
				memcpy(o->names, rec.u.object.names,
				       o->nrefs * 8);
			sort_refs(o);
			break;
		case VMHEAP_RECORD_ROOT:
			d->roots =
			    grow(d->roots, d->nroots, &rcap, sizeof(*d->roots));
			d->roots[d->nroots].kind = rec.u.root.kind_string_id;
			d->roots[d->nroots].name = rec.u.root.name_string_id;
			d->roots[d->nroots++].object = rec.u.root.object_id;
			break;
		case VMHEAP_RECORD_SITE:
			d->sites =
			    grow(d->sites, d->nsites, &tcap, sizeof(*d->sites));
			t = &d->sites[d->nsites++];
			t->id = rec.u.site.id;
			t->line = rec.u.site.line;
			t->file = strndup(rec.u.site.file, rec.u.site.file_len);
			t->method =
			    strndup(rec.u.site.method, rec.u.site.method_len);
			break;
		default:
			ck_abort_msg("%s: a record of type %d", path, rec.type);
		}
	}
	ck_assert_msg(rc == 0, "read %s: %s", path, vmheap_reader_error(r));
	vmheap_reader_free(r);
	for (i = 0; i < d->n; i++) {
		d->objs[i].class_name = "?";
		for (j = 0; j < d->nclasses; j++)
			if (d->class_ids[j] == d->objs[i].class_id) {
				d->objs[i].class_name = d->class_names[j];
				break;
			}
	}
	qsort(d->objs, d->n, sizeof(*d->objs), by_id);
	kinds = calloc(d->nroots + 1, sizeof(char *));
	for (i = 0; i < d->nroots; i++) {
		const char *kind = string_of(d, d->roots[i].kind);

		ck_assert_msg(kind, "a root of no kind");
		for (j = 0; j < nkinds; j++)
			if (strcmp(kinds[j], kind) == 0)
				break;
		if (j == nkinds)
			kinds[nkinds++] = (char *)kind;
	}
	qsort(kinds, nkinds, sizeof(char *), by_str);
	for (i = 0; i < nkinds; i++)
		len += strlen(kinds[i]) + 1;
	d->root_kinds = calloc(1, len);
	for (i = 0; i < nkinds; i++) {
		strcat(d->root_kinds, kinds[i]);
		strcat(d->root_kinds, i + 1 < nkinds ? " " : "");
	}
	free(kinds);
}

static void dump_free(struct dump *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		free(d->objs[i].refs);
		free(d->objs[i].names);
	}
	for (i = 0; i < d->nclasses; i++)
		free(d->class_names[i]);
	for (i = 0; i < d->nstrings; i++)
		free(d->strings[i]);
	for (i = 0; i < d->nsites; i++) {
		free(d->sites[i].file);
		free(d->sites[i].method);
	}
	free(d->objs);
	free(d->class_ids);
	free(d->class_names);
	free(d->string_ids);
	free(d->strings);
	free(d->roots);
	free(d->sites);
	free(d->root_kinds);
}

/* The edge name of x's reference to `ref` as text: ".LEAK", "[3]" for
 * an element index; "" for none. */
static const char *edge_name(const struct dump *d, const struct obj *x,
			     uint64_t ref, char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < x->nrefs; i++)
		if (x->refs[i] == ref) {
			int64_t n = x->names[i];
			const char *t;

			if (vmheap_edge_name_is_index(n)) {
				snprintf(buf, size, "[%llu]",
					 (unsigned long long)
					     vmheap_edge_name_index_of(n));
				return buf;
			}
			t = string_of(d, (uint64_t)n);
			return t ? t : "";
		}
	return "";
}

/* The name of class record `id`, or NULL. */
static const char *class_name_of(const struct dump *d, uint64_t id)
{
	size_t i;

	for (i = 0; i < d->nclasses; i++)
		if (d->class_ids[i] == id)
			return d->class_names[i];
	return NULL;
}

static const struct obj *find(const struct dump *d, uint64_t id)
{
	struct obj key = {.id = id};

	return bsearch(&key, d->objs, d->n, sizeof(key), by_id);
}

/* 1 when y's references are x's less every occurrence of one address
 * (the object's class, which dump_all leaves out). */
static int same_but_class(const struct obj *x, const struct obj *y)
{
	size_t p = 0, q = 0;
	uint64_t left_out = 0;

	while (p < x->nrefs) {
		if (q < y->nrefs && x->refs[p] == y->refs[q]) {
			p++, q++;
			continue;
		}
		if (left_out && left_out != x->refs[p])
			return 0;
		left_out = x->refs[p++];
	}
	return q == y->nrefs;
}

/* ------------------------------------------------------------ ruby */

/* Holds known objects; on its first stdin byte writes dump_all of the
 * heap to all.json.  dump_all goes to a String (output: :string, which
 * dump_all leaves out of the dump) and the method is called once before,
 * so that the call itself allocates nothing: $stdin.getbyte returns a
 * Fixnum. */
static const char ruby_program[] =
    "require 'objspace'\n"
    "class ImportSpecThing; def initialize; @a = 'x' * 100; end; end\n"
    "class ImportSpecOther < ImportSpecThing; end\n"
    "$keep = Array.new(500) { ImportSpecThing.new } +\n"
    "        Array.new(70) { ImportSpecOther.new }\n"
    "o = Object.new; def o.single; end; $keep << o\n"
    "$keep << Class.new.new\n"
    "def dumpall() ObjectSpace.dump_all(output: :string) end\n"
    "dumpall\n"
    "GC.start\n"
    "GC.disable\n"
    "$stdout.puts 'ready'; $stdout.flush\n"
    "$stdin.getbyte\n"
    "s = dumpall\n"
    "File.write('all.json', s)\n"
    "$stdout.puts 'done'; $stdout.flush\n"
    "$stdin.read\n";

/* Run the program (spec_ruby_start_with) in a directory of its own,
 * copied to `dir`: own.vmheap (the agent's, in-process) and all.json
 * (dump_all) of the same heap there. */
static void ruby_dumps(char *dir, size_t len)
{
	const char *console[] = {spec_bin("vmheap-console"),	      "-e",
				 "set config.dump.fork false",	      "-e",
				 "set system.memory.dump own.vmheap", NULL};
	struct spec_ruby vm;
	struct vmheap_agent_info info;
	struct spec_run r;
	char err[700];

	spec_ruby_start_with(&vm, ruby_program,
			     &(struct spec_ruby_opts){.ready = "ready\n"});
	snprintf(dir, len, "%s", vm.dir);
	ck_assert_msg(spec_discovery_wait(vm.dir, vm.p.pid, &info, 30000, err,
					  sizeof(err)) == 0,
		      "discovery: %s", err);
	ck_assert(spec_run(console, vm.env, NULL, RUN_MS, &r) == 0);
	ck_assert_msg(r.status == 0, "vmheap-console: %s%s", r.out, r.err);
	spec_run_free(&r);
	spec_proc_write(&vm.p, "g");
	ck_assert_msg(spec_proc_wait_for(&vm.p, "done\n", 30000),
		      "no dump_all: %.*s", (int)vm.p.len, vm.p.buf);
	ck_assert_int_eq(spec_proc_wait_exit(&vm.p, 15000), 0);
}

/* The agent's Ruby host names two of MRI's hidden arrays by what they
 * are (<symbol table>, <registered objects>: hosts/ruby/README.md);
 * dump_all cannot tell them from any other hidden array.  A copy of a
 * `--sort name` CSV histogram with those rows folded back into the
 * <hidden-array> row, so that the agent's and the import's histograms
 * of one heap compare row for row.  Frees csv. */
static char *fold_vm_tables(char *csv)
{
	unsigned long long count = 0, bytes = 0, c, b;
	size_t cap = strlen(csv) + 64, used = 0;
	char *out = malloc(cap), *line = csv, name[64];
	char *hidden = NULL;

	ck_assert(out != NULL);
	for (char *p = csv; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
		if (sscanf(p, "%llu,%63[^,],%llu", &c, name, &b) == 3 &&
		    (!strcmp(name, "<symbol table>") ||
		     !strcmp(name, "<registered objects>") ||
		     !strcmp(name, "<hidden-array>")))
			count += c, bytes += b;
	while (*line) {
		char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) + 1 : strlen(line);

		if (sscanf(line, "%llu,%63[^,],%llu", &c, name, &b) == 3 &&
		    (!strcmp(name, "<symbol table>") ||
		     !strcmp(name, "<registered objects>"))) {
			line += len;
			continue;
		}
		if (sscanf(line, "%llu,%63[^,],%llu", &c, name, &b) == 3 &&
		    !strcmp(name, "<hidden-array>")) {
			used += (size_t)snprintf(out + used, cap - used,
						 "%llu,<hidden-array>,%llu\n",
						 count, bytes);
			hidden = line;
		} else {
			memcpy(out + used, line, len);
			used += len;
		}
		line += len;
	}
	out[used] = '\0';
	ck_assert_msg(hidden != NULL || count == 0,
		      "labelled VM tables but no <hidden-array> row");
	free(csv);
	return out;
}

START_TEST(ruby_dump_all_matches_the_agents_dump_of_the_same_heap)
{
	char dir[300];
	char json[PATH_MAX], own[PATH_MAX], imported[PATH_MAX];
	const char *args[] = {json, imported, NULL};
	struct dump a, b;
	struct spec_run r;
	char *ha, *hb;
	size_t i, things = 0, moved = 0;

	ruby_dumps(dir, sizeof(dir));
	snprintf(json, sizeof(json), "%s/all.json", dir);
	snprintf(own, sizeof(own), "%s/own.vmheap", dir);
	snprintf(imported, sizeof(imported), "%s/imported.vmheap", dir);
	import_run(&r, args, NULL);
	ck_assert_msg(r.status == 0, "vmheap-import: %s", r.err);
	ck_assert_msg(strstr(r.out, "(ruby-json, "), "%s", r.out);
	spec_run_free(&r);

	/* what a user compares: the histograms, by class and by name */
	ha = fold_vm_tables(histo_csv(own, 0));
	hb = histo_csv(imported, 0);
	ck_assert_msg(strstr(hb, "\n500,ImportSpecThing,20000\n") &&
			  strstr(hb, "\n70,ImportSpecOther,2800\n") &&
			  strstr(hb, ",<imemo:iseq>,") &&
			  strstr(hb, ",<imemo:ment>,") && !strstr(hb, "<imemo>"),
		      "%s", hb);
	ck_assert_str_eq(ha, hb);
	free(ha);
	free(hb);

	/* the import knows no Ruby version: vmheap-diff does not take the
	 * agent's "3.1.x" and the import's none for different VMs */
	{
		const char *diff[] = {spec_bin("vmheap-diff"), own, imported,
				      NULL};

		ck_assert(spec_run(diff, NULL, NULL, RUN_MS, &r) == 0);
		ck_assert_msg(r.status == 0, "vmheap-diff: %s", r.err);
		ck_assert_msg(!strstr(r.out, "different VMs") &&
				  !strstr(r.err, "different VMs"),
			      "%s%s", r.out, r.err);
		ck_assert_msg(strstr(r.out, "imported.vmheap (vm ruby, pid "),
			      "%s", r.out);
		spec_run_free(&r);
	}

	/* object by object: id, class, size, references */
	read_dump(own, &a);
	read_dump(imported, &b);
	ck_assert_uint_eq(a.n, b.n);
	for (i = 0; i < a.n; i++) {
		const struct obj *x = &a.objs[i], *y = find(&b, x->id);
		ck_assert_msg(y, "object 0x%llx (%s) is not in the import",
			      (unsigned long long)x->id, x->class_name);
		if (strcmp(x->class_name, "<symbol table>") &&
		    strcmp(x->class_name, "<registered objects>"))
			ck_assert_str_eq(x->class_name, y->class_name);
		else /* the VM tables the agent names (fold_vm_tables) */
			ck_assert_str_eq(y->class_name, "<hidden-array>");
		ck_assert_uint_eq(x->bytes, y->bytes);
		if (strncmp(x->class_name, "<imemo:", 7) == 0 ||
		    strcmp(x->class_name, "Thread") == 0 ||
		    strcmp(x->class_name, "Fiber") == 0) {
			/* running code fills inline caches of iseqs and
			 * call caches, and moves the main thread's (and
			 * fiber's) stack, between the two dumps: same objects,
			 * some references moved */
			moved += !same_but_class(x, y);
			continue;
		}
		ck_assert_msg(same_but_class(x, y),
			      "object 0x%llx (%s): its references in the "
			      "import are not the agent's less its class",
			      (unsigned long long)x->id, x->class_name);
		/* an ImportSpecThing holds its class and its @a */
		if (strcmp(x->class_name, "ImportSpecThing") == 0) {
			ck_assert_uint_eq(x->nrefs, 2);
			ck_assert_uint_eq(y->nrefs, 1);
			things++;
		}
	}
	ck_assert_uint_lt(moved, 20);
	/* dump_all's walk runs on the main thread, whose machine stack it
	 * marks; the agent's runs on its own thread, whose stack may hold
	 * a stale word that points at an object (the names probes run
	 * there at load): a conservative root, never a path's holder
	 * (machine_context steps rank last, FORMAT.md) */
	ck_assert_str_eq(b.root_kinds,
			 "global_list global_tbl machine_context vm");
	ck_assert_msg(!strcmp(a.root_kinds, "global_list global_tbl vm") ||
			  !strcmp(a.root_kinds, "global_list global_tbl "
						"machine_context vm"),
		      "%s", a.root_kinds);
	ck_assert_msg(strstr(b.root_kinds, "vm"), "%s", b.root_kinds);
	ck_assert_uint_eq(things, 500);
	dump_free(&a);
	dump_free(&b);
}
END_TEST

START_TEST(ruby_imemo_types_are_kinds)
{
	const char *dir = spec_mkdtemp("kinds");
	char json[PATH_MAX], out[PATH_MAX];
	const char *args[] = {"--from", "ruby-json", "-", out, NULL};
	const char *input =
	    "{\"type\":\"ROOT\", \"root\":\"vm\", "
	    "\"references\":[\"0x1000\"]}\n"
	    "{\"address\":\"0x1000\", \"type\":\"IMEMO\", "
	    "\"class\":\"0x3000\", "
	    "\"imemo_type\":\"ment\", \"memsize\":48}\n"
	    "{\"address\":\"0x1028\", \"type\":\"STRING\", "
	    "\"class\":\"0x2000\", "
	    "\"bytesize\":3, \"value\":\"abc\", \"file\":\"x.rb\", \"line\":3, "
	    "\"memsize\":40, \"references\":[\"0x1000\"]}\n"
	    "{\"address\":\"0x1050\", \"type\":\"ARRAY\", \"memsize\":40}\n"
	    "{\"address\":\"0x2000\", \"type\":\"CLASS\", "
	    "\"class\":\"0x2028\", "
	    "\"name\":\"String\", \"memsize\":600}\n"
	    "{\"address\":\"0x2028\", \"type\":\"CLASS\", "
	    "\"class\":\"0x2050\", "
	    "\"superclass\":\"0x2050\", \"singleton\":true, "
	    "\"memsize\":400}\n"
	    "{\"address\":\"0x2050\", \"type\":\"CLASS\", "
	    "\"class\":\"0x2050\", "
	    "\"name\":\"Class\", \"memsize\":500}\n"
	    /* MRI writes a Latin-1 name's bytes as they are */
	    "{\"address\":\"0x2078\", \"type\":\"OBJECT\", "
	    "\"class\":\"0x20a0\", "
	    "\"memsize\":40}\n"
	    "{\"address\":\"0x20a0\", \"type\":\"CLASS\", "
	    "\"class\":\"0x2050\", "
	    "\"name\":\"Caf\xe9\\u00e9\", \"memsize\":500}\n";
	struct spec_run r;
	char *h;

	snprintf(json, sizeof(json), "%s/in.json", dir);
	snprintf(out, sizeof(out), "%s/out.vmheap", dir);
	import_run(&r, args, input);
	ck_assert_msg(r.status == 0, "vmheap-import: %s", r.err);
	spec_run_free(&r);
	/* the class records come after their objects; the singleton class
	 * counts as Class, as rb_obj_class says */
	h = histo_csv(out, 0);
	ck_assert_str_eq(h, "count,class,bytes\n"
			    "1,<hidden-array>,40\n"
			    "1,<imemo:ment>,48\n"
			    "1,Caf\\xe9\xc3\xa9,40\n"
			    "4,Class,2000\n"
			    "1,String,40\n");
	free(h);
	h = histo_csv(out, 1);
	ck_assert_msg(strstr(h, "\n1,imemo:ment,48\n") &&
			  strstr(h, "\n4,class,2000\n"),
		      "%s", h);
	free(h);
}
END_TEST

/* With allocation tracing on, dump_all gives each object allocated since
 * its file, line and method: the import keeps them as allocation sites,
 * the same Ruby's own ObjectSpace.allocation_* methods give. */
static const char sites_program[] =
    "require 'objspace'\n"
    "class SiteWidget; def initialize; @tag = 'w' * 20; end; end\n"
    "def build_widgets(n)\n"
    "  Array.new(n) { SiteWidget.new }\n"
    "end\n"
    "ObjectSpace.trace_object_allocations_start\n"
    "$w = build_widgets(100)\n"
    "w = $w.first\n"
    "t = w.instance_variable_get(:@tag)\n"
    "puts [ObjectSpace.allocation_sourcefile(w),\n"
    "      ObjectSpace.allocation_sourceline(w),\n"
    "      ObjectSpace.allocation_method_id(w),\n"
    "      ObjectSpace.allocation_sourceline(t),\n"
    "      ObjectSpace.allocation_method_id(t)].join('|')\n"
    "File.write(ARGV[0], ObjectSpace.dump_all(output: :string))\n";

START_TEST(ruby_allocation_sites_are_kept)
{
	const char *dir = spec_mkdtemp("sites");
	char path[PATH_MAX], json[PATH_MAX], out[PATH_MAX], file[PATH_MAX],
	    method[64], tmethod[64], want[64];
	const char *ruby[] = {"ruby", path, json, NULL};
	const char *args[] = {json, out, NULL};
	unsigned line, tline;
	uint64_t site = 0;
	size_t i, j, widgets = 0, tags = 0, untraced = 0;
	struct spec_run r;
	struct dump d;

	snprintf(path, sizeof(path), "%s/program.rb", dir);
	snprintf(json, sizeof(json), "%s/all.json", dir);
	snprintf(out, sizeof(out), "%s/all.vmheap", dir);
	spec_write_text(path, sites_program);
	ck_assert(spec_run(ruby, NULL, NULL, RUN_MS, &r) == 0);
	ck_assert_msg(r.status == 0, "ruby: %s%s", r.out, r.err);
	ck_assert_msg(sscanf(r.out, "%4095[^|]|%u|%63[^|]|%u|%63[^\n]", file,
			     &line, method, &tline, tmethod) == 5,
		      "%s", r.out);
	spec_run_free(&r);
	import_run(&r, args, NULL);
	ck_assert_msg(r.status == 0, "vmheap-import: %s", r.err);
	read_dump(out, &d);
	snprintf(want, sizeof(want), " references, %zu allocation sites, ",
		 d.nsites);
	ck_assert_msg(strstr(r.out, want), "%s (want %s)", r.out, want);
	spec_run_free(&r);
	ck_assert_uint_ge(d.nsites, 3);
	for (i = 0; i < d.nsites; i++)
		for (j = 0; j < i; j++)
			ck_assert(d.sites[i].id != d.sites[j].id &&
				  (d.sites[i].line != d.sites[j].line ||
				   strcmp(d.sites[i].file, d.sites[j].file) ||
				   strcmp(d.sites[i].method,
					  d.sites[j].method)));
	for (i = 0; i < d.n; i++) {
		const struct obj *x = &d.objs[i];
		const struct site *t = NULL;

		for (j = 0; x->site && j < d.nsites; j++)
			if (d.sites[j].id == x->site)
				t = &d.sites[j];
		ck_assert_msg(!x->site || t, "object 0x%llx: no site %llu",
			      (unsigned long long)x->id,
			      (unsigned long long)x->site);
		if (strcmp(x->class_name, "SiteWidget") == 0) {
			/* Ruby's own answer for every widget */
			ck_assert_ptr_nonnull(t);
			ck_assert_str_eq(t->file, file);
			ck_assert_uint_eq(t->line, line);
			ck_assert_str_eq(t->method, method);
			ck_assert(!site || site == x->site);
			site = x->site;
			widgets++;
		} else if (t && t->line == tline &&
			   strcmp(t->method, tmethod) == 0 &&
			   strcmp(x->class_name, "String") == 0) {
			tags++;
		} else if (strcmp(x->class_name, "Class") == 0) {
			/* classes were made before tracing started */
			untraced += !x->site;
		}
	}
	ck_assert_uint_eq(widgets, 100);
	ck_assert_uint_eq(tags, 100);
	ck_assert_uint_gt(untraced, 100);
	ck_assert_uint_eq(line, 4);
	dump_free(&d);
	/* what a user sees: vmheap-histo --by site */
	{
		const char *histo[] = {spec_bin("vmheap-histo"),
				       "--by",
				       "site",
				       "--format",
				       "csv",
				       out,
				       NULL};
		char row[PATH_MAX + 128];

		ck_assert(spec_run(histo, NULL, NULL, RUN_MS, &r) == 0);
		ck_assert_msg(r.status == 0, "vmheap-histo: %s", r.err);
		snprintf(row, sizeof(row), "\n100,SiteWidget,%s:%u in %s,4000\n",
			 file, line, method);
		ck_assert_msg(strstr(r.out, row), "%s (want %s)", r.out, row);
		spec_run_free(&r);
	}
}
END_TEST

/* ------------------------------------------------------------ jvm */

/* A row of a class histogram. */
struct row {
	char name[512];
	unsigned long long count, bytes;
};

/* Rows of `jmap -histo` output ("   1:   8536   368416  [B (java.base@17)")
 * or of vmheap-histo --format csv ("8536,[B,368416"). */
static size_t parse_rows(const char *text, int csv, struct row *rows,
			 size_t max)
{
	size_t n = 0;
	const char *line;

	for (line = text; line && *line && n < max;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		struct row *r = &rows[n];
		char name[512];
		const char *comma;

		if (csv) {
			comma = strchr(line, ',');
			const char *last =
			    comma ? strchr(comma + 1, '\n') : NULL;
			const char *end = last ? last : line + strlen(line);

			while (end > line && end[-1] != ',')
				end--;
			if (!comma || end <= comma + 1 ||
			    sscanf(line, "%llu,", &r->count) != 1 ||
			    sscanf(end, "%llu", &r->bytes) != 1)
				continue;
			snprintf(r->name, sizeof(r->name), "%.*s",
				 (int)(end - 1 - (comma + 1)), comma + 1);
		} else if (sscanf(line, " %*u: %llu %llu %511s", &r->count,
				  &r->bytes, name) == 3) {
			snprintf(r->name, sizeof(r->name), "%s", name);
		} else {
			continue;
		}
		n++;
	}
	return n;
}

static const struct row *find_row(const struct row *rows, size_t n,
				  const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

/* Run a JDK tool to completion; its stdout (malloc'd). */
static char *jdk_tool(const char *const *argv)
{
	struct spec_run r;
	char *out;

	ck_assert_msg(spec_run(argv, NULL, NULL, RUN_MS, &r) == 0,
		      "cannot start %s", argv[0]);
	ck_assert_msg(r.status == 0, "%s %s: exit %d: %s%s", argv[0], argv[2],
		      r.status, r.out, r.err);
	out = r.out;
	r.out = NULL;
	spec_run_free(&r);
	return out;
}

#define MAX_ROWS 4096

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The object x refers to by the edge named `name`, or NULL. */
static const struct obj *by_edge(const struct dump *d, const struct obj *x,
				 const char *name)
{
	char buf[32];
	size_t i;

	for (i = 0; i < x->nrefs; i++)
		if (strcmp(edge_name(d, x, x->refs[i], buf, sizeof(buf)),
			   name) == 0)
			return find(d, x->refs[i]);
	return NULL;
}

/* The line of spec/java/ImportSpecLeak.java that holds `text`. */
static unsigned source_line(const char *text)
{
	size_t len;
	char *src = spec_read_file(spec_src("spec/java/ImportSpecLeak.java"),
				   &len),
	     *at, *p;
	unsigned line = 1;

	ck_assert_ptr_nonnull(src);
	at = strstr(src, text);
	ck_assert_ptr_nonnull(at);
	for (p = src; p < at; p++)
		line += *p == '\n';
	free(src);
	return line;
}

/*
 * The names of an HPROF import (format 1.1): the static field LEAK (a
 * field of class ImportSpecLeak) holds the ArrayList of 1234 sessions,
 * its elementData holds them by index, each session its .name; the
 * static array `buffers` holds 30 Buffers at [0] to [29], each its .data;
 * the main thread's stack frame in main() is a named root, at the line
 * where main() waits.
 */
static void hprof_names(const struct dump *d, const char *out,
			const char *pid)
{
	const struct obj *holder = NULL, *list, *arr, *buffers, *x;
	char buf[32], want[128], frame[256];
	const char *histo[] = {spec_bin("vmheap-histo"), "--top", "1", out,
			       NULL};
	struct spec_run r;
	size_t i, k, frames = 0, threads = 0, launcher = 0;
	uint64_t launcher_id = 0;
	int seen[1234] = {0};

	for (i = 0; i < d->n && !holder; i++)
		if (strcmp(d->objs[i].class_name, "java.lang.Class") == 0 &&
		    by_edge(d, &d->objs[i], ".LEAK"))
			holder = &d->objs[i];
	ck_assert_msg(holder, "no class object has a reference named .LEAK");
	list = by_edge(d, holder, ".LEAK");
	ck_assert_str_eq(list->class_name, "java.util.ArrayList");
	arr = by_edge(d, list, ".elementData");
	ck_assert_ptr_nonnull(arr);
	ck_assert_str_eq(arr->class_name, "[Ljava.lang.Object;");
	ck_assert_uint_eq(arr->nrefs, 1234);
	for (i = 0; i < arr->nrefs; i++) {
		x = find(d, arr->refs[i]);
		ck_assert_str_eq(x->class_name, "ImportSpecLeak$Session");
		ck_assert_str_eq(by_edge(d, x, ".name")->class_name,
				 "java.lang.String");
		/* each element's index, once (Sessions were added in
		 * order, but their addresses need not be) */
		ck_assert(sscanf(edge_name(d, arr, arr->refs[i], buf,
					   sizeof(buf)),
				 "[%zu]", &k) == 1);
		ck_assert_uint_lt(k, 1234);
		ck_assert_int_eq(seen[k]++, 0);
	}
	/* the same class object holds the other static, and the mirror's
	 * own references are named too */
	buffers = by_edge(d, holder, ".buffers");
	ck_assert_ptr_nonnull(buffers);
	ck_assert_str_eq(buffers->class_name, "[LImportSpecLeak$Buffer;");
	for (i = 0; i < 30; i++) {
		snprintf(want, sizeof(want), "[%zu]", i);
		x = by_edge(d, buffers, want);
		ck_assert_msg(x, "no element %s", want);
		ck_assert_str_eq(x->class_name, "ImportSpecLeak$Buffer");
		ck_assert_str_eq(by_edge(d, x, ".data")->class_name, "[B");
	}
	ck_assert_str_eq(by_edge(d, holder, "superclass")->class_name,
			 "java.lang.Class");
	for (i = 0; i < d->n && !launcher_id; i++)
		if (by_edge(d, &d->objs[i], ".appClass") == holder)
			launcher_id = d->objs[i].id;
	/* a tool names the holder of .LEAK by the class record of the
	 * class object's own address: ImportSpecLeak.LEAK */
	ck_assert_str_eq(class_name_of(d, holder->id), "ImportSpecLeak");
	ck_assert_str_eq(class_name_of(d, launcher_id),
			 "sun.launcher.LauncherHelper");
	ck_assert_str_eq(by_edge(d, holder, "class loader")->class_name,
			 "jdk.internal.loader.ClassLoaders$AppClassLoader");

	/* roots on a thread's stack name the thread and the frame, as
	 * Java prints a stack frame */
	snprintf(frame, sizeof(frame),
		 ": ImportSpecLeak.main(ImportSpecLeak.java:%u)",
		 source_line("System.in.read()"));
	for (i = 0; i < d->nroots; i++) {
		const char *kind = string_of(d, d->roots[i].kind),
			   *name = string_of(d, d->roots[i].name);

		if (strcmp(kind, "java_frame") == 0) {
			ck_assert_msg(name && strncmp(name, "thread ", 7) == 0 &&
					  strstr(name, " frame "),
				      "java_frame root named %s", name);
			frames += strstr(name, frame) != NULL;
		} else if (strcmp(kind, "thread_object") == 0) {
			ck_assert_msg(name && strncmp(name, "thread ", 7) == 0,
				      "thread_object root named %s", name);
			threads++;
		} else if (strcmp(kind, "sticky_class") == 0) {
			/* a class object, named by its class */
			ck_assert_msg(name && name[0], "a sticky class root "
						       "without a name");
			launcher += d->roots[i].object == launcher_id &&
				    strcmp(name, "sun.launcher.LauncherHelper") ==
					0;
		}
	}
	/* the JDK's launcher keeps the main class in its static appClass:
	 * the class object that holds .LEAK is held so, by a sticky root */
	ck_assert_msg(launcher == 1, "the class object holding the main "
				     "class is not the sticky root "
				     "sun.launcher.LauncherHelper");
	ck_assert_msg(frames >= 1, "no java_frame root in main() (%s)", frame);
	ck_assert_uint_ge(threads, 5);

	/* vmheap-path names the static field that holds the leak, and the
	 * class whose static holds that class */
	{
		const char *path[] = {spec_bin("vmheap-path"),
				      "--top",
				      "1",
				      out,
				      "ImportSpecLeak$Session",
				      NULL};

		ck_assert(spec_run(path, NULL, NULL, RUN_MS, &r) == 0);
		ck_assert_msg(r.status == 0, "vmheap-path: %s", r.err);
		ck_assert_msg(strstr(r.out, LEFT " java.util.ArrayList.elementData "
					    LEFT " ImportSpecLeak.LEAK " LEFT
					    " sun.launcher.LauncherHelper.appClass "
					    LEFT " root sticky_class "
					    "sun.launcher.LauncherHelper\n"),
			      "%s", r.out);
		spec_run_free(&r);
	}

	/* the header: no version (HPROF has none), no gap for it */
	ck_assert(spec_run(histo, NULL, NULL, RUN_MS, &r) == 0);
	snprintf(want, sizeof(want), "(vm java, pid %s)", pid);
	ck_assert_msg(strstr(r.out, want), "%s", r.out);
	spec_run_free(&r);
}

/*
 * The JVM's HPROF `hprof` in an older JVM's shape (JDK 6's hprof agent:
 * header 1.0.1, dotted names, arrays "java.lang.Object[]", every CLASS
 * DUMP after the instances that need it), with 4-byte and 8-byte ids:
 * vmheap-histo's CSV of each import equals `want` (the in-order
 * import's), in jmap's names.
 */
static void old_shapes_read_the_same(const char *hprof, const char *dir,
				     const char *want)
{
	size_t len, n;
	unsigned char *in = (unsigned char *)spec_read_file(hprof, &len);

	ck_assert_ptr_nonnull(in);
	for (unsigned ids = 4; ids <= 8; ids += 4) {
		unsigned char *old = hprof_old_shape(
		    in, len, ids == 4 ? "JAVA PROFILE 1.0.1" : "JAVA PROFILE 1.0.2",
		    ids, &n);
		char path[PATH_MAX], out[PATH_MAX], *h;
		const char *args[] = {path, out, NULL};
		struct spec_run r;

		/* the old names, not HotSpot's */
		ck_assert_ptr_nonnull(memmem(old, n, "java.lang.Object[]", 18));
		snprintf(path, sizeof(path), "%s/old%u.hprof", dir, ids);
		snprintf(out, sizeof(out), "%s/old%u.vmheap", dir, ids);
		spec_write_file(path, old, n);
		import_run(&r, args, NULL);
		ck_assert_msg(r.status == 0, "%u-byte ids: %s", ids, r.err);
		spec_run_free(&r);
		h = histo_csv(out, 0);
		ck_assert_msg(strcmp(h, want) == 0,
			      "%u-byte ids, old shape:\n%.2000s\nin order:\n"
			      "%.2000s",
			      ids, h, want);
		ck_assert_ptr_null(strstr(h, "[]"));
		ck_assert_ptr_nonnull(strstr(h, ",[Ljava.lang.Object;,"));
		free(h);
		free(old);
	}
	free(in);
}

START_TEST(hprof_histogram_equals_jmap_histo_live)
{
	const char *dir = spec_mkdtemp("jvm");
	char hprof[PATH_MAX], out[PATH_MAX], cp[PATH_MAX], pid[32];
	/* -Xshare:off: with CDS's archived heap, the heap holds the mirrors
	 * (java.lang.Class) of archived classes that were never loaded;
	 * jmap counts them, HPROF has no record of them */
	const char *java[] = {
	    "java",	      "-Xshare:off", "-XX:+UseSerialGC",
	    "-Xmx64m",	      "-cp",	     cp,
	    "ImportSpecLeak", NULL};
	const char *gc[] = {"jcmd", pid, "GC.run", NULL};
	const char *histo[] = {"jmap", "-histo:live", pid, NULL};
	const char *dump[] = {"jcmd", pid, "GC.heap_dump", hprof, NULL};
	const char *args[] = {"--pid", pid, hprof, out, NULL};
	struct row *jrows = calloc(MAX_ROWS, sizeof(struct row)),
		   *vrows = calloc(MAX_ROWS, sizeof(struct row));
	struct spec_spawn o = {0};
	struct spec_proc p;
	struct spec_run r;
	char *jtext, *vtext;
	size_t nj, nv, i;
	struct dump d;
	const struct row *v;
	int64_t t0, t1;

	snprintf(cp, sizeof(cp), "%s", spec_build("spec/java"));
	snprintf(hprof, sizeof(hprof), "%s/heap.hprof", dir);
	snprintf(out, sizeof(out), "%s/heap.vmheap", dir);
	o.argv = java;
	o.dir = dir;
	spec_proc_start(&p, &o, 1);
	ck_assert_msg(spec_proc_wait_for(&p, "ready\n", 30000),
		      "the JVM did not start: %.*s", (int)p.len, p.buf);
	snprintf(pid, sizeof(pid), "%d", (int)p.pid);
	/* the first attach starts the JVM's attach listener (a thread and
	 * its objects); a GC lets the cleaners settle */
	free(jdk_tool(gc));
	jtext = jdk_tool(histo);
	t0 = now_ms();
	free(jdk_tool(dump));
	t1 = now_ms();
	ck_assert_int_eq(spec_proc_wait_exit(&p, 15000), 0);

	import_run(&r, args, NULL);
	ck_assert_msg(r.status == 0, "vmheap-import: %s", r.err);
	ck_assert_msg(strstr(r.out, "(hprof, "), "%s", r.out);
	spec_run_free(&r);
	vtext = histo_csv(out, 0);
	nj = parse_rows(jtext, 0, jrows, MAX_ROWS);
	nv = parse_rows(vtext, 1, vrows, MAX_ROWS);
	ck_assert_uint_gt(nj, 100);
	ck_assert_uint_eq(nj, nv);
	for (i = 0; i < nj; i++) {
		const struct row *j = &jrows[i];

		v = find_row(vrows, nv, j->name);
		ck_assert_msg(v, "jmap's class %s is not in vmheap-histo's",
			      j->name);
		ck_assert_msg(v->count == j->count,
			      "%s: jmap counts %llu, vmheap-histo %llu",
			      j->name, j->count, v->count);
		if (strcmp(j->name, "java.lang.Class") == 0) {
			/* the man page's rule: within 1% */
			ck_assert_msg(v->bytes * 100 >= j->bytes * 99 &&
					  v->bytes * 100 <= j->bytes * 101,
				      "java.lang.Class: jmap %llu bytes, "
				      "vmheap-histo %llu",
				      j->bytes, v->bytes);
			continue;
		}
		ck_assert_msg(v->bytes == j->bytes,
			      "%s: jmap %llu bytes, vmheap-histo %llu", j->name,
			      j->bytes, v->bytes);
	}
	v = find_row(vrows, nv, "ImportSpecLeak$Session");
	ck_assert_msg(v && v->count == 1234, "%s", vtext);
	v = find_row(vrows, nv, "ImportSpecLeak$Buffer");
	ck_assert_msg(v && v->count == 30, "%s", vtext);

	/* references: the static array holds the 30 buffers, a class
	 * object holds the array, each buffer its byte[] */
	read_dump(out, &d);
	{
		const struct obj *arr = NULL, *holder = NULL;

		for (i = 0; i < d.n; i++)
			if (strcmp(d.objs[i].class_name,
				   "[LImportSpecLeak$Buffer;") == 0)
				arr = &d.objs[i];
		ck_assert_ptr_nonnull(arr);
		ck_assert_uint_eq(arr->nrefs, 30);
		for (i = 0; i < arr->nrefs; i++) {
			const struct obj *b = find(&d, arr->refs[i]);

			ck_assert_ptr_nonnull(b);
			ck_assert_str_eq(b->class_name,
					 "ImportSpecLeak$Buffer");
			ck_assert_uint_eq(b->nrefs, 1);
			ck_assert_str_eq(find(&d, b->refs[0])->class_name,
					 "[B");
		}
		for (i = 0; i < d.n && !holder; i++)
			if (strcmp(d.objs[i].class_name, "java.lang.Class") ==
				0 &&
			    bsearch(&arr->id, d.objs[i].refs, d.objs[i].nrefs,
				    8, by_u64))
				holder = &d.objs[i];
		ck_assert_msg(holder, "no class object holds the static array");
	}
	ck_assert_msg(strstr(d.root_kinds, "sticky_class") &&
			  strstr(d.root_kinds, "java_frame") &&
			  strstr(d.root_kinds, "thread_object") &&
			  strstr(d.root_kinds, "jni_global"),
		      "%s", d.root_kinds);
	hprof_names(&d, out, pid);
	old_shapes_read_the_same(hprof, dir, vtext);
	/* HPROF's header has the time in ms: the dump's header keeps it */
	ck_assert_msg(d.time_ms >= t0 && d.time_ms <= t1,
		      "time_ms %lld, the dump was taken between %lld and %lld",
		      (long long)d.time_ms, (long long)t0, (long long)t1);
	ck_assert_int_eq(d.time, d.time_ms / 1000);
	dump_free(&d);
	free(jtext);
	free(vtext);
	free(jrows);
	free(vrows);
}
END_TEST

/* ------------------------------------------------------------ bad input */

static const char good_json[] =
    "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\"]}\n"
    "{\"address\":\"0x1000\", \"type\":\"OBJECT\", \"class\":\"0x2000\", "
    "\"memsize\":40}\n"
    "{\"address\":\"0x2000\", \"type\":\"CLASS\", \"name\":\"Foo\", "
    "\"memsize\":40}\n";

/* Import `input`; it must fail (exit 2) with `want` in the message and
 * leave nothing in the directory. */
static void import_fails(const char *input, size_t len, const char *from,
			 const char *want)
{
	const char *dir = spec_mkdtemp("bad");
	char in[PATH_MAX], out[PATH_MAX];
	const char *args[] = {from ? "--from" : in, from ? from : out,
			      from ? in : NULL, out, NULL};
	struct spec_run r;
	char *ls;

	snprintf(in, sizeof(in), "%s/in", dir);
	snprintf(out, sizeof(out), "%s/out/x.vmheap", dir);
	spec_write_file(in, input, len);
	snprintf(out, sizeof(out), "%s/x.vmheap", dir);
	import_run(&r, args, NULL);
	ck_assert_msg(r.status == 2, "exit %d, stderr %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, want), "stderr: %s (want %s)", r.err, want);
	ck_assert_msg(strncmp(r.err, "vmheap-import: ", 15) == 0, "%s", r.err);
	ls = spec_ls(dir, ' ');
	ck_assert_str_eq(ls, "in ");
	free(ls);
	spec_run_free(&r);
}

START_TEST(bad_json_exits_2_names_the_line_and_leaves_no_out)
{
	size_t cut = sizeof(good_json) - 1 - 20;
	char corrupt[sizeof(good_json)];

	/* cut in the middle of the third line, or right after its '}' */
	import_fails(good_json, cut, NULL,
		     "truncated: the last line (3) ends at byte offset 169 "
		     "without a newline");
	import_fails(good_json, sizeof(good_json) - 2, NULL,
		     "truncated: the last line (3) ends at byte offset 188");
	memcpy(corrupt, good_json, sizeof(good_json));
	strstr(corrupt, "\"0x1000\", \"type\"")[2] = 'y'; /* "0y1000" */
	import_fails(
	    corrupt, sizeof(good_json) - 1, NULL,
	    "malformed JSON: an address (\"0x...\") expected at line 2 "
	    "(byte offset 65)");
	import_fails("{\"type\":\"ROOT\",\"root\":\"vm\"}\n{\"type\": nope}\n",
		     43, NULL,
		     "malformed JSON: a string expected at line 2 (byte "
		     "offset 37)");
	/* 2^64 - 616: a size no object has; String's total would wrap */
	{
		char big[sizeof(good_json) + 64];
		char *at;

		snprintf(big, sizeof(big), "%s", good_json);
		at = strstr(big, "\"memsize\":40}");
		snprintf(at, sizeof(big) - (size_t)(at - big),
			 "\"memsize\":18446744073709551000}\n%s",
			 strstr(good_json, "{\"address\":\"0x2000\""));
		import_fails(big, strlen(big), NULL,
			     "implausible \"memsize\": more than 2^48 bytes "
			     "(256 TiB), larger than any address space, at "
			     "line 2 (byte offset 120)");
	}
	import_fails("hello\n", 6, NULL, "not a dump vmheap-import reads");
	import_fails("", 0, NULL, "empty input");
	import_fails(good_json, sizeof(good_json) - 1, "hprof", "HPROF");
}
END_TEST

START_TEST(bad_hprof_exits_2_names_the_byte_offset_and_leaves_no_out)
{
	size_t len, cut;
	char *hprof = spec_read_file(
	    spec_src("fuzz/import-seeds/import_hprof/small.hprof"), &len);
	const char *dir = spec_mkdtemp("hprof");
	char in[PATH_MAX], out[PATH_MAX], *h, *ls;
	const char *args[] = {in, out, NULL};
	struct spec_run r;
	unsigned char *bad;

	ck_assert_ptr_nonnull(hprof);
	snprintf(in, sizeof(in), "%s/in.hprof", dir);
	snprintf(out, sizeof(out), "%s/out.vmheap", dir);
	spec_write_file(in, hprof, len);
	import_run(&r, args, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, ": 9 objects, 6 classes, 4 roots, 7 "
				    "references"),
		      "%s", r.out);
	spec_run_free(&r);
	h = histo_csv(out, 0);
	/* Holder: 12-byte header, a reference (4) and an int: 24 bytes */
	ck_assert_str_eq(h,
			 "count,class,bytes\n2,Holder,48\n1,[B,32\n1,[I,32\n"
			 "1,[Ljava.lang.Object;,32\n4,java.lang.Class,200\n");
	free(h);
	unlink(out);

	/* through a pipe, the format guessed from its first bytes */
	{
		char cmd[3 * PATH_MAX];
		const char *sh[] = {"sh", "-c", cmd, NULL};

		snprintf(cmd, sizeof(cmd), "cat %s | %s - %s", in,
			 spec_bin("vmheap-import"), out);
		ck_assert(spec_run(sh, NULL, NULL, RUN_MS, &r) == 0);
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert_msg(strstr(r.out, "<stdin> (hprof, 933 bytes)"), "%s",
			      r.out);
		spec_run_free(&r);
		unlink(out);
	}

	/* cut anywhere: exit 2, the offset named, no OUT */
	for (cut = 0; cut < len; cut += cut < len - 64 ? 7 : 1) {
		spec_write_file(in, hprof, cut);
		import_run(&r, args, NULL);
		ck_assert_msg(r.status == 2, "cut at %zu: exit %d, %s%s", cut,
			      r.status, r.out, r.err);
		ck_assert_msg(strstr(r.err, "byte offset") ||
				  strstr(r.err, "empty input"),
			      "cut at %zu: %s", cut, r.err);
		spec_run_free(&r);
		ls = spec_ls(dir, ' ');
		ck_assert_msg(strcmp(ls, "in.hprof ") == 0, "cut at %zu: %s",
			      cut, ls);
		free(ls);
	}
	/* a corrupt sub-record tag: the first INSTANCE DUMP's 0x21 */
	bad = memchr(hprof + 600, 0x21, len - 600);
	ck_assert_ptr_nonnull(bad);
	*bad = 0x77;
	spec_write_file(in, hprof, len);
	import_run(&r, args, NULL);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "unknown heap dump sub-record tag 0x77 at "
				    "byte offset"),
		      "%s", r.err);
	spec_run_free(&r);
	free(hprof);
}
END_TEST

/* The name of the root of `object` of kind `kind` ("" for none, NULL
 * when there is no such root). */
static const char *root_name(const struct dump *d, const char *kind,
			     uint64_t object)
{
	size_t i;

	for (i = 0; i < d->nroots; i++)
		if (d->roots[i].object == object &&
		    strcmp(string_of(d, d->roots[i].kind), kind) == 0)
			return d->roots[i].name ? string_of(d, d->roots[i].name)
						: "";
	return NULL;
}

/*
 * fuzz/import-seeds/import_hprof/names.hprof, made to hold each kind of
 * name: class Holder (fields next and count, statics INSTANCE and
 * HotSpot's <resolved_references>), Holder 0x1000 -> 0x1100, an array
 * 0x1200 of [0x1000, null, 0x1100], thread 1's trace of three frames
 * (native, with a line, without a source file), roots on its stack, a
 * frame root of thread 2 which has no trace, and header time
 * 1700000000123 ms.
 */
START_TEST(hprof_names_of_fields_elements_and_roots)
{
	const char *dir = spec_mkdtemp("names");
	char in[PATH_MAX], out[PATH_MAX], buf[32];
	const char *args[] = {in, out, NULL};
	struct spec_run r;
	struct dump d;

	snprintf(in, sizeof(in), "%s",
		 spec_src("fuzz/import-seeds/import_hprof/names.hprof"));
	snprintf(out, sizeof(out), "%s/names.vmheap", dir);
	import_run(&r, args, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	spec_run_free(&r);
	read_dump(out, &d);
	ck_assert_int_eq(d.time_ms, 1700000000123);
	ck_assert_int_eq(d.time, 1700000000);
	/* instance fields, element indices (the null one left out) */
	ck_assert_str_eq(edge_name(&d, find(&d, 0x1000), 0x1100, buf, 32),
			 ".next");
	ck_assert_uint_eq(find(&d, 0x1200)->nrefs, 2);
	ck_assert_str_eq(edge_name(&d, find(&d, 0x1200), 0x1000, buf, 32),
			 "[0]");
	ck_assert_str_eq(edge_name(&d, find(&d, 0x1200), 0x1100, buf, 32),
			 "[2]");
	/* the class object: statics, HotSpot's pseudo-static, superclass */
	ck_assert_str_eq(edge_name(&d, find(&d, 0x200), 0x1000, buf, 32),
			 ".INSTANCE");
	ck_assert_str_eq(edge_name(&d, find(&d, 0x200), 0x1300, buf, 32),
			 "<resolved_references>");
	ck_assert_str_eq(edge_name(&d, find(&d, 0x200), 0x100, buf, 32),
			 "superclass");
	/* the class object's own name: a class record of its address,
	 * which no object uses (Holder's objects have a small class id) */
	ck_assert_str_eq(class_name_of(&d, 0x200), "Holder");
	ck_assert_str_eq(class_name_of(&d, 0x100), "java.lang.Object");
	ck_assert_str_eq(find(&d, 0x1000)->class_name, "Holder");
	ck_assert_uint_lt(find(&d, 0x1000)->class_id, 0x100);
	/* roots: the frame as Java prints it, the thread, or none */
	ck_assert_str_eq(root_name(&d, "java_frame", 0x1200),
			 "thread 1 frame 1: Holder.main(Holder.java:12)");
	ck_assert_str_eq(root_name(&d, "java_frame", 0x1100),
			 "thread 1 frame 2: Holder.run(Unknown Source)");
	ck_assert_str_eq(root_name(&d, "jni_local", 0x1000),
			 "thread 1 frame 0: Holder.sleep(Native Method)");
	ck_assert_str_eq(root_name(&d, "java_frame", 0x1000),
			 "thread 2 frame 0");
	ck_assert_str_eq(root_name(&d, "thread_object", 0x1000), "thread 1");
	/* a sticky class root is a class object: named by its class */
	ck_assert_str_eq(root_name(&d, "sticky_class", 0x200), "Holder");
	ck_assert_str_eq(root_name(&d, "jni_global", 0x1300), "");
	ck_assert_str_eq(root_name(&d, "unknown", 0x1100), "");
	ck_assert_str_eq(d.root_kinds, "java_frame jni_global jni_local "
				       "sticky_class thread_object unknown");
	dump_free(&d);
}
END_TEST

/* A UTF8 record: id, then text. */
static void put_utf8(struct hprof_out *o, unsigned id, const char *text)
{
	struct hprof_out b = {0};

	hprof_put_u(&b, id, 4);
	hprof_put(&b, text, strlen(text));
	hprof_put_record(o, 0x01, &b);
	free(b.p);
}

static void put_load_class(struct hprof_out *o, unsigned serial,
			   unsigned id, unsigned name)
{
	struct hprof_out b = {0};

	hprof_put_u(&b, serial, 4);
	hprof_put_u(&b, id, 4);
	hprof_put_u(&b, 0, 4);
	hprof_put_u(&b, name, 4);
	hprof_put_record(o, 0x02, &b);
	free(b.p);
}

/* A CLASS DUMP (4-byte ids) of `nf` instance fields (name id, type). */
static void put_class_dump(struct hprof_out *o, unsigned id, unsigned super,
			   unsigned size, unsigned nf, const unsigned *fields)
{
	hprof_put_u(o, 0x20, 1);
	hprof_put_u(o, id, 4);
	hprof_put_u(o, 0, 4);
	hprof_put_u(o, super, 4);
	for (int i = 0; i < 5; i++)
		hprof_put_u(o, 0, 4);
	hprof_put_u(o, size, 4);
	hprof_put_u(o, 0, 2); /* constant pool */
	hprof_put_u(o, 0, 2); /* statics */
	hprof_put_u(o, nf, 2);
	for (unsigned i = 0; i < nf; i++) {
		hprof_put_u(o, fields[2 * i], 4);
		hprof_put_u(o, fields[2 * i + 1], 1);
	}
}

/*
 * An HPROF as Android's ART writes it ("JAVA PROFILE 1.0.3", 4-byte ids,
 * dotted names, java.lang.Object's header as the fields shadow$_klass_
 * and shadow$_monitor_, the CLASS DUMP's instance size the object's size
 * in the heap) with each of its extensions: HEAP DUMP INFO (0xfe), the
 * roots 0x89..0x8e, ROOT UNREACHABLE (0x90) and a PRIMITIVE ARRAY NODATA
 * (0xc3).
 */
START_TEST(android_hprof_extensions_are_read)
{
	const char *dir = spec_mkdtemp("android");
	char in[PATH_MAX], out[PATH_MAX], *h;
	const char *args[] = {in, out, NULL};
	const unsigned object_fields[] = {4, 2, 5, 10}, foo_fields[] = {3, 2};
	struct hprof_out o = {0}, seg = {0}, end = {0};
	struct spec_run r;
	struct dump d;

	hprof_put(&o, "JAVA PROFILE 1.0.3", 19);
	hprof_put_u(&o, 4, 4);
	hprof_put_u(&o, 1700000000000ull, 8);
	put_utf8(&o, 1, "java.lang.Object");
	put_utf8(&o, 2, "Foo");
	put_utf8(&o, 3, "next");
	put_utf8(&o, 4, "shadow$_klass_");
	put_utf8(&o, 5, "shadow$_monitor_");
	put_utf8(&o, 6, "app");
	put_utf8(&o, 7, "Foo[]");
	put_load_class(&o, 1, 0x100, 1);
	put_load_class(&o, 2, 0x200, 2);
	put_load_class(&o, 3, 0x300, 7);
	/* HEAP DUMP INFO: heap 'A', named "app" */
	hprof_put_u(&seg, 0xfe, 1);
	hprof_put_u(&seg, 0x41, 4);
	hprof_put_u(&seg, 6, 4);
	/* Object: 8 bytes (its two fields); Foo: 12 (and `next`) */
	put_class_dump(&seg, 0x100, 0, 8, 2, object_fields);
	put_class_dump(&seg, 0x200, 0x100, 12, 1, foo_fields);
	for (unsigned id = 0x1000; id <= 0x1100; id += 0x100) {
		hprof_put_u(&seg, 0x21, 1);
		hprof_put_u(&seg, id, 4);
		hprof_put_u(&seg, 0, 4);
		hprof_put_u(&seg, 0x200, 4);
		hprof_put_u(&seg, 12, 4);
		hprof_put_u(&seg, id == 0x1000 ? 0x1100 : 0, 4); /* next */
		hprof_put_u(&seg, 0x200, 4); /* shadow$_klass_ */
		hprof_put_u(&seg, 0, 4);     /* shadow$_monitor_ */
	}
	hprof_put_u(&seg, 0x22, 1); /* Foo[] {0x1000, 0x1100} */
	hprof_put_u(&seg, 0x1200, 4);
	hprof_put_u(&seg, 0, 4);
	hprof_put_u(&seg, 2, 4);
	hprof_put_u(&seg, 0x300, 4);
	hprof_put_u(&seg, 0x1000, 4);
	hprof_put_u(&seg, 0x1100, 4);
	hprof_put_u(&seg, 0xc3, 1); /* int[10], no data */
	hprof_put_u(&seg, 0x2000, 4);
	hprof_put_u(&seg, 0, 4);
	hprof_put_u(&seg, 10, 4);
	hprof_put_u(&seg, 10, 1);
	for (unsigned tag = 0x89; tag <= 0x8d; tag++) {
		hprof_put_u(&seg, tag, 1);
		hprof_put_u(&seg, 0x1200, 4);
	}
	hprof_put_u(&seg, 0x8e, 1); /* JNI MONITOR: thread 1, depth 0 */
	hprof_put_u(&seg, 0x1000, 4);
	hprof_put_u(&seg, 1, 4);
	hprof_put_u(&seg, 0, 4);
	hprof_put_u(&seg, 0x90, 1); /* UNREACHABLE: not a root */
	hprof_put_u(&seg, 0x1100, 4);
	hprof_put_record(&o, 0x1c, &seg);
	hprof_put_record(&o, 0x2c, &end);
	snprintf(in, sizeof(in), "%s/art.hprof", dir);
	snprintf(out, sizeof(out), "%s/art.vmheap", dir);
	spec_write_file(in, o.p, o.len);
	import_run(&r, args, NULL);
	ck_assert_msg(r.status == 0, "%s", r.err);
	spec_run_free(&r);
	h = histo_csv(out, 0);
	/* Foo: ART's 12 bytes, aligned to 16 (HotSpot's model: 24); the
	 * array named as jmap names it; the int[10] without its data */
	ck_assert_msg(strstr(h, "\n2,Foo,32\n") && strstr(h, "\n1,[LFoo;,24\n") &&
			  strstr(h, "\n1,[I,56\n"),
		      "%s", h);
	ck_assert_ptr_null(strstr(h, "[]"));
	free(h);
	read_dump(out, &d);
	ck_assert_str_eq(d.root_kinds, "debugger finalizing interned_string "
				       "jni_monitor reference_cleanup "
				       "vm_internal");
	ck_assert_uint_eq(d.nroots, 6);
	dump_free(&d);
	free(o.p);
	free(seg.p);
}
END_TEST

START_TEST(out_is_never_overwritten_and_stdin_works)
{
	const char *dir = spec_mkdtemp("out");
	char out[PATH_MAX];
	const char *args[] = {"--pid", "4242", "-", out, NULL};
	const char *histo[] = {spec_bin("vmheap-histo"), out, NULL};
	struct spec_run r;
	char *h;

	snprintf(out, sizeof(out), "%s/x.vmheap", dir);
	import_run(&r, args, good_json);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "<stdin> (ruby-json, 189 bytes) -> "), "%s",
		      r.out);
	ck_assert_msg(strstr(r.out, ": 2 objects, 2 classes, 1 roots"), "%s",
		      r.out);
	spec_run_free(&r);
	h = histo_csv(out, 0);
	ck_assert_str_eq(h, "count,class,bytes\n1,<hidden-class>,40\n"
			    "1,Foo,40\n");
	free(h);
	/* the header names the VM and the pid given */
	ck_assert(spec_run(histo, NULL, NULL, RUN_MS, &r) == 0);
	ck_assert_msg(strstr(r.out, "(vm ruby, pid 4242)"), "%s", r.out);
	spec_run_free(&r);
	import_run(&r, args, good_json);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "already exists"), "%s", r.err);
	spec_run_free(&r);
	ck_assert(exists(out));
}
END_TEST

/* ------------------------------------------------------------ terminal */

START_TEST(a_large_input_gets_a_progress_bar_on_a_terminal)
{
	const char *dir = spec_mkdtemp("progress");
	char in[PATH_MAX], cmd[3 * PATH_MAX], out[PATH_MAX];
	const char *argv[] = {"script", "-qec", cmd, "/dev/null", NULL};
	struct spec_run r;
	unsigned long i;
	FILE *f;

	/* just over VMHEAP_PROGRESS_MIN_BYTES (100 MiB) of dump_all lines */
	snprintf(in, sizeof(in), "%s/big.json", dir);
	f = fopen(in, "w");
	ck_assert_ptr_nonnull(f);
	for (i = 0; ftell(f) < 101L * 1024 * 1024; i++)
		fprintf(f,
			"{\"address\":\"0x%lx\", \"type\":\"STRING\", "
			"\"class\":\"0x10\", \"memsize\":40}\n",
			0x100000ul + i * 40);
	ck_assert_int_eq(fclose(f), 0);

	/* under script(1), standard error is a terminal */
	snprintf(out, sizeof(out), "%s/a.vmheap", dir);
	snprintf(cmd, sizeof(cmd), "%s %s %s", spec_bin("vmheap-import"), in,
		 out);
	ck_assert(spec_run(argv, NULL, NULL, RUN_MS, &r) == 0);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_msg(strstr(r.out, "big.json ") && strstr(r.out, "% [#") &&
			  strstr(r.out, "\r\033[K"),
		      "no progress bar: %.300s", r.out);
	spec_run_free(&r);

	snprintf(out, sizeof(out), "%s/b.vmheap", dir);
	snprintf(cmd, sizeof(cmd), "%s --no-progress %s %s",
		 spec_bin("vmheap-import"), in, out);
	ck_assert(spec_run(argv, NULL, NULL, RUN_MS, &r) == 0);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_msg(!strstr(r.out, "% ["), "a bar after --no-progress: %s",
		      r.out);
	spec_run_free(&r);
	unlink(in);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("import");
	TCase *tc;

	tc = spec_tcase(s, "ruby", 120);
	tcase_add_test(tc,
		       ruby_dump_all_matches_the_agents_dump_of_the_same_heap);
	tcase_add_test(tc, ruby_imemo_types_are_kinds);
	tcase_add_test(tc, ruby_allocation_sites_are_kept);
	tc = spec_tcase(s, "jvm", 120);
	tcase_add_test(tc, hprof_histogram_equals_jmap_histo_live);
	tc = spec_tcase(s, "terminal", 120);
	tcase_add_test(tc, a_large_input_gets_a_progress_bar_on_a_terminal);
	tc = spec_tcase(s, "errors", 60);
	tcase_add_test(tc, bad_json_exits_2_names_the_line_and_leaves_no_out);
	tcase_add_test(
	    tc, bad_hprof_exits_2_names_the_byte_offset_and_leaves_no_out);
	tcase_add_test(tc, out_is_never_overwritten_and_stdin_works);
	tc = spec_tcase(s, "names", 60);
	tcase_add_test(tc, hprof_names_of_fields_elements_and_roots);
	tcase_add_test(tc, android_hprof_extensions_are_read);
	return s;
}
