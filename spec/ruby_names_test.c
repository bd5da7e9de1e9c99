/*
 * ruby_names_test.c - what the tools call things in a real Ruby VM's
 * dump (Debian's MRI 3.1 with the agent loaded): a local variable by its
 * name and its frame, a class or module object by its name (an anonymous
 * class as Ruby prints it), a thread by its number and Thread#name, the
 * symbol table by a label, and names read in an in-process dump allocate
 * no Ruby object.
 *
 * Each test runs one Ruby program (spec_ruby_start) that prints the facts
 * it knows (Ruby's own inspect of its anonymous class, each thread's place
 * in Thread.list), dumps it through the agent and reads the tools' text
 * output as a user would.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/vmheap_spec.h"
#include "vmheap_graph.h"
#include "vmheap_graph_query.h"

#define LEFT "\xe2\x86\x90" /* ← */

/*
 * Kept objects in a local of the main script; Messages in a local of a
 * method that the lambda it returned keeps alive ($grow adds 300 each
 * call; no thread's stack holds that Array once the call is over, so its
 * shortest path is the named one); Pending objects likewise; a class with
 * a big constant, an anonymous class with a big ivar, a named thread (its
 * name holds an ESC byte) and an unnamed one.  It prints "anon TEXT" (the
 * anonymous class as Ruby inspects it), "threads N M" (1 + each thread's
 * index in Thread.list) and "ready"; "grow" calls $grow and answers
 * "grown"; EOF ends it.
 */
static const char program[] =
    "STDOUT.sync = true\n"
    "class Message; def initialize(i); @i = i; end; end\n"
    "class Kept; end\n"
    "class Pending; end\n"
    "class Service\n"
    "  TABLE = Array.new(3000) { |i| \"entry #{i}\" * 8 }\n"
    "end\n"
    "module Billing; end\n"
    "$anon = Class.new { @rows = Array.new(2000) { |i| \"row #{i}\" * 8 } }\n"
    "def make_grower\n"
    "  messages = []\n"
    "  -> { 300.times { |i| messages << Message.new(i) } }\n"
    "end\n"
    "def make_keeper\n"
    "  pending = Array.new(40) { Pending.new }\n"
    "  -> { pending.size }\n"
    "end\n"
    "$grow = make_grower\n"
    "$grow.call\n"
    "$keeper = make_keeper\n"
    "kept = Array.new(400) { Kept.new }\n"
    "q = Queue.new\n"
    "worker = Thread.new { q.pop }\n"
    "worker.name = \"worker\\e[31m\"\n"
    "quiet = Thread.new { q.pop }\n"
    "Thread.pass until worker.status == 'sleep' && quiet.status == 'sleep'\n"
    "puts \"anon #{$anon.inspect}\"\n"
    "puts \"threads #{Thread.list.index(worker) + 1} "
    "#{Thread.list.index(quiet) + 1}\"\n"
    "puts 'ready'\n"
    "while (line = STDIN.gets)\n"
    "  if line.chomp == 'grow'\n"
    "    $grow.call\n"
    "    puts 'grown'\n"
    "  end\n"
    "end\n"
    "2.times { q << 1 }\n"
    "[worker, quiet].each(&:join)\n"
    "p kept.size\n";

struct names_vm {
	struct spec_ruby vm;
	char anon[128];	  /* Ruby's inspect of the anonymous class */
	int worker, quiet; /* 1 + their index in Thread.list */
	char script[PATH_MAX];
};

/* The value after `key ` on a line of the program's output so far. */
static void after_key(const struct spec_ruby *vm, const char *key, char *out,
		      size_t size)
{
	const char *p = strstr(vm->p.buf, key);
	size_t n;

	ck_assert_msg(p, "no \"%s\" line from the program: %.*s", key,
		      (int)vm->p.len, vm->p.buf);
	p += strlen(key);
	n = strcspn(p, "\n");
	ck_assert_uint_lt(n, size);
	memcpy(out, p, n);
	out[n] = '\0';
}

static void start(struct names_vm *v)
{
	char threads[64];

	spec_ruby_start_with(&v->vm, program,
			     &(struct spec_ruby_opts){.ready = "ready\n"});
	after_key(&v->vm, "anon ", v->anon, sizeof(v->anon));
	after_key(&v->vm, "threads ", threads, sizeof(threads));
	ck_assert_int_eq(sscanf(threads, "%d %d", &v->worker, &v->quiet), 2);
	snprintf(v->script, sizeof(v->script), "%s", v->vm.script);
}

static void stop(struct names_vm *v)
{
	ck_assert_int_eq(spec_proc_wait_exit(&v->vm.p, 30000), 0);
	spec_rmrf(v->vm.dir);
}

/* `set system.memory.dump DIR/name` through vmheap-console; the path in
 * dump. */
static void dump(struct names_vm *v, const char *name, char *path,
		 size_t size)
{
	char pid[32], cmd[PATH_MAX + 64];
	const char *const argv[] = {spec_bin("vmheap-console"), "-p", pid,
				    "-e", cmd, NULL};
	char *out;

	snprintf(path, size, "%s/%s", v->vm.dir, name);
	snprintf(pid, sizeof(pid), "%d", (int)v->vm.p.pid);
	snprintf(cmd, sizeof(cmd), "set system.memory.dump %s", path);
	out = spec_run_stdout(argv, v->vm.env, 120000);
	free(out);
}

/* "Class" or "Module", spaces, then "0x": a class object by address. */
static const char *class_by_address(const char *out)
{
	static const char *const words[] = {"Class ", "Module "};

	for (size_t w = 0; w < 2; w++)
		for (const char *p = strstr(out, words[w]); p;
		     p = strstr(p + 1, words[w])) {
			const char *q = p + strlen(words[w]);
			while (*q == ' ')
				q++;
			if (!strncmp(q, "0x", 2))
				return p;
		}
	return NULL;
}

/*
 * The references named `text` from objects of class `holder` to objects of
 * class `target`, through the graph (whatever path the tools would
 * rank first; `target` NULL: any class): how many, and in *held the
 * most references to `leaf` objects that one such target has.
 */
static int named_edges(const char *dump, const char *holder, const char *text,
		       const char *target, const char *leaf, uint32_t *held)
{
	vmheap_graph *g = NULL;
	int found = 0;

	ck_assert_msg(vmheap_graph_open_path(&g, dump) == 0, "%s",
		      vmheap_graph_error(g));
	*held = 0;
	for (uint32_t i = 0; i < vmheap_graph_object_count(g); i++) {
		char *c = vmheap_graph_class_label(g,
						   vmheap_graph_object_class(g, i));
		const uint32_t *to;
		uint32_t n;

		ck_assert_ptr_nonnull(c);
		if (strcmp(c, holder)) {
			free(c);
			continue;
		}
		free(c);
		n = vmheap_graph_references(g, i, &to);
		for (uint32_t k = 0; k < n; k++) {
			struct vmheap_graph_name name;
			const uint32_t *lt;
			uint32_t ln, leaves = 0;
			char *tc;

			if (vmheap_graph_reference_name(g, i, k, &name) !=
				VMHEAP_GRAPH_NAME_TEXT ||
			    strcmp(name.text, text))
				continue;
			found++;
			if (!target)
				continue;
			tc = vmheap_graph_class_label(
			    g, vmheap_graph_object_class(g, to[k]));
			ck_assert_msg(!strcmp(tc, target),
				      "%s names a %s, not a %s", text, tc,
				      target);
			free(tc);
			ln = vmheap_graph_references(g, to[k], &lt);
			for (uint32_t l = 0; l < ln; l++) {
				char *x = vmheap_graph_class_label(
				    g, vmheap_graph_object_class(g, lt[l]));
				leaves += !strcmp(x, leaf);
				free(x);
			}
			if (leaves > *held)
				*held = leaves;
		}
	}
	vmheap_graph_free(g);
	return found;
}

START_TEST(a_local_variable_is_named_with_its_frame_on_the_path)
{
	struct names_vm v;
	char path[PATH_MAX + 64], want[PATH_MAX + 128];
	uint32_t held;
	char *out;

	start(&v);
	dump(&v, "locals.vmheap", path, sizeof(path));

	/* the main script's local: its environment names the Array that
	 * holds the 400 Kept objects (a thread's stack may hold it too, so
	 * this reads the reference itself, not the first path) */
	snprintf(want, sizeof(want), "local kept of <main> (%s)", v.script);
	ck_assert_int_eq(named_edges(path, "<imemo:env>", want, "Array",
				     "Kept", &held),
			 1);
	ck_assert_uint_eq(held, 400);

	/* a method's local, kept by the lambda it returned: on the path */
	out = spec_tool_stdout(
	    "vmheap-path",
	    (const char *[]){"--top", "1", path, "Message", NULL}, 120000);
	snprintf(want, sizeof(want),
		 " " LEFT " local messages of make_grower (%s) " LEFT,
		 v.script);
	ck_assert_msg(strstr(out, "Message " LEFT " Array["), "%s", out);
	ck_assert_msg(strstr(out, want), "no \"%s\" in:\n%s", want, out);
	free(out);
	out = spec_tool_stdout(
	    "vmheap-path",
	    (const char *[]){"--top", "1", path, "Pending", NULL}, 120000);
	snprintf(want, sizeof(want),
		 " " LEFT " local pending of make_keeper (%s) " LEFT, v.script);
	ck_assert_msg(strstr(out, want), "no \"%s\" in:\n%s", want, out);
	free(out);
	stop(&v);
}
END_TEST

START_TEST(the_suspect_line_names_the_local_that_grows)
{
	struct names_vm v;
	char old[PATH_MAX + 64], new[PATH_MAX + 64], want[PATH_MAX + 128];
	char *out, *line, *end;

	start(&v);
	dump(&v, "old.vmheap", old, sizeof(old));
	spec_proc_write(&v.vm.p, "grow\n");
	ck_assert(spec_proc_wait_for(&v.vm.p, "grown\n", 60000));
	dump(&v, "new.vmheap", new, sizeof(new));

	out = spec_tool_stdout("vmheap-diff", (const char *[]){old, new, NULL},
			       120000);
	line = strstr(out, "#1  Message: 300 new");
	ck_assert_msg(line, "Message is not the top suspect:\n%s", out);
	end = strchr(line, '\n');
	if (end)
		*end = '\0';
	snprintf(want, sizeof(want),
		 ", held by root global_tbl $grow > Proc > local messages of "
		 "make_grower (%s) > Array",
		 v.script);
	ck_assert_msg(strstr(line, want), "no \"%s\" in: %s", want, line);
	free(out);
	stop(&v);
}
END_TEST

START_TEST(class_objects_are_named_in_dominators_and_paths)
{
	struct names_vm v;
	char path[PATH_MAX + 64];
	char *out;
	const char *bad;

	start(&v);
	dump(&v, "classes.vmheap", path, sizeof(path));

	out = spec_tool_stdout("vmheap-dominators",
			       (const char *[]){"--top", "60", path, NULL},
			       120000);
	/* the class that holds 3000 strings, by its name */
	ck_assert_msg(strstr(out, "  Class Service  "), "%s", out);
	/* the anonymous class exactly as Ruby inspects it */
	ck_assert_msg(!strncmp(v.anon, "#<Class:0x", 10), "%s", v.anon);
	ck_assert_msg(strstr(out, v.anon), "no %s in:\n%s", v.anon, out);
	/* no class or module object anywhere by its address alone */
	bad = class_by_address(out);
	ck_assert_msg(!bad, "a class object by address: %.60s\nin:\n%s", bad,
		      out);
	free(out);

	/* the HTML report's dominator tree too */
	{
		char html[PATH_MAX + 64];
		FILE *f;
		char *page;
		long n;

		snprintf(html, sizeof(html), "%s/classes.html", v.vm.dir);
		free(spec_tool_stdout("vmheap-report",
				      (const char *[]){"-o", html, path, NULL},
				      120000));
		f = fopen(html, "rb");
		ck_assert_ptr_nonnull(f);
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		page = malloc((size_t)n + 1);
		ck_assert_ptr_nonnull(page);
		ck_assert_uint_eq(fread(page, 1, (size_t)n, f), (size_t)n);
		page[n] = '\0';
		fclose(f);
		ck_assert_msg(strstr(page, "\"Class Service\""),
			      "no \"Class Service\" label in the report");
		free(page);
	}

	/* a path through a class object names it: TABLE's strings */
	out = spec_tool_stdout(
	    "vmheap-path", (const char *[]){"--top", "1", path, "String", NULL},
	    120000);
	ck_assert_msg(!class_by_address(out), "%s", out);
	free(out);
	out = spec_tool_stdout(
	    "vmheap-path",
	    (const char *[]){"--top", "1", path, "Pending", NULL}, 120000);
	ck_assert_msg(!class_by_address(out), "%s", out);
	free(out);
	stop(&v);
}
END_TEST

START_TEST(threads_are_named_by_number_and_thread_name_escaped)
{
	struct names_vm v;
	char path[PATH_MAX + 64], named[128], quiet[128];
	char *out;

	start(&v);
	dump(&v, "threads.vmheap", path, sizeof(path));
	out = spec_tool_stdout(
	    "vmheap-path",
	    (const char *[]){"--top", "10", path, "Thread", NULL}, 120000);
	/* Thread#name quoted as Ruby's inspect quotes it: ESC as \e */
	snprintf(named, sizeof(named),
		 "Thread " LEFT " thread %d \"worker\\e[31m\" of Ractor",
		 v.worker);
	snprintf(quiet, sizeof(quiet), "Thread " LEFT " thread %d of Ractor",
		 v.quiet);
	ck_assert_msg(strstr(out, named), "no '%s' in:\n%s", named, out);
	ck_assert_msg(strstr(out, quiet), "no '%s' in:\n%s", quiet, out);
	ck_assert_msg(!strchr(out, 0x1b), "a raw ESC byte in:\n%s", out);
	ck_assert_msg(strstr(out, "Thread " LEFT " thread 1 main of Ractor"),
		      "%s", out);
	free(out);
	/* a Thread's own references (its stacks) carry the same name */
	{
		char text[128];
		uint32_t held;

		snprintf(text, sizeof(text),
			 "stack of thread %d \"worker\\e[31m\"", v.worker);
		ck_assert_int_gt(named_edges(path, "Thread", text, NULL,
					     "Thread", &held),
				 0);
		snprintf(text, sizeof(text), "stack of thread %d", v.quiet);
		ck_assert_int_gt(named_edges(path, "Thread", text, NULL,
					     "Thread", &held),
				 0);
	}
	stop(&v);
}
END_TEST

/* Ruby's symbol table: the hidden Arrays of symbol.c's table read as
 * "<symbol table>", in the dominators (held by the VM) and on paths. */
START_TEST(the_symbol_table_reads_as_such)
{
	struct names_vm v;
	char path[PATH_MAX + 64];
	char *out, *line;
	int seen = 0;

	start(&v);
	dump(&v, "symbols.vmheap", path, sizeof(path));
	out = spec_tool_stdout("vmheap-dominators",
			       (const char *[]){"--top", "60", path, NULL},
			       120000);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		if (strstr(line, "  <symbol table>  ") &&
		    strstr(line, "  root vm"))
			seen = 1;
	ck_assert_msg(seen, "no <symbol table> held by root vm");
	free(out);
	/* the Strings of Symbols: held by the table's chunks */
	out = spec_tool_stdout(
	    "vmheap-path",
	    (const char *[]){"--top", "20", path, "String", NULL}, 120000);
	ck_assert_msg(strstr(out, "String " LEFT " <symbol table>["), "%s",
		      out);
	free(out);
	stop(&v);
}
END_TEST

/* GC.stat(:total_allocated_objects) through vmheap-console. */
static long long allocated(struct names_vm *v)
{
	char pid[32];
	const char *const argv[] = {spec_bin("vmheap-console"), "-p", pid,
				    "-e",
				    "get system.gc.total_allocated_objects",
				    NULL};
	char *out;
	long long n;

	snprintf(pid, sizeof(pid), "%d", (int)v->vm.p.pid);
	out = spec_run_stdout(argv, v->vm.env, 60000);
	ck_assert_msg(sscanf(out, "%lld", &n) == 1, "%s", out);
	free(out);
	return n;
}

START_TEST(in_process_names_of_locals_threads_classes_allocate_nothing)
{
	struct names_vm v;
	char path[PATH_MAX + 64], pid[32], want[PATH_MAX + 128];
	const char *const set[] = {spec_bin("vmheap-console"), "-p", pid, "-e",
				   "set config.dump.fork false", NULL};
	long long before, after;
	struct spec_wait w;
	char *out;

	start(&v);
	snprintf(pid, sizeof(pid), "%d", (int)v.vm.p.pid);
	free(spec_run_stdout(set, v.vm.env, 60000));
	/* at rest: the count stays put between two reads (a read itself
	 * allocates nothing in the VM: the agent reads GC.stat in C) */
	before = allocated(&v);
	spec_wait_begin(&w, 30000);
	w.interval_ms = 50;
	for (;;) {
		long long again;
		spec_wait_or_fail(&w, "the VM to be at rest (allocated: %lld)",
				  before);
		again = allocated(&v);
		if (again == before)
			break;
		before = again;
	}
	dump(&v, "inproc.vmheap", path, sizeof(path));
	after = allocated(&v);
	ck_assert_int_eq(after, before);

	out = spec_tool_stdout(
	    "vmheap-path",
	    (const char *[]){"--top", "1", path, "Message", NULL}, 120000);
	snprintf(want, sizeof(want), "local messages of make_grower (%s)",
		 v.script);
	ck_assert_msg(strstr(out, want), "%s", out);
	free(out);
	out = spec_tool_stdout(
	    "vmheap-path",
	    (const char *[]){"--top", "10", path, "Thread", NULL}, 120000);
	ck_assert_msg(strstr(out, "\"worker\\e[31m\""), "%s", out);
	free(out);
	stop(&v);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("ruby_names");
	TCase *t = spec_tcase(s, "names", 240);

	tcase_add_test(t, a_local_variable_is_named_with_its_frame_on_the_path);
	tcase_add_test(t, the_suspect_line_names_the_local_that_grows);
	tcase_add_test(t, class_objects_are_named_in_dominators_and_paths);
	tcase_add_test(t, threads_are_named_by_number_and_thread_name_escaped);
	tcase_add_test(t, the_symbol_table_reads_as_such);
	tcase_add_test(
	    t, in_process_names_of_locals_threads_classes_allocate_nothing);
	return s;
}
