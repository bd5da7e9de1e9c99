/*
 * vmheap-path - why is it alive: the shortest path from a GC root to an
 * object, or to every instance of a class merged by path shape.
 *
 * The whole dump is read and verified into a heap graph before anything
 * is printed: a damaged dump gives one message and exit status 2; a
 * target that is not in the dump, exit status 1.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path-internal.h"

#define PROG "vmheap-path"

static const char usage_line[] =
    "usage: vmheap-path [--top N] [--format text|json] [--bytes] "
    "[--shortest]\n"
    "                   [--exclude stack,internal] [--retainers] DUMP "
    "CLASS|0xADDRESS";

static _Noreturn void help(void)
{
	printf("%s\n\n"
	       "Print the shortest path from a GC root to the object at "
	       "0xADDRESS, or to\nevery instance of CLASS, merged by path "
	       "shape (the root kind and the classes\nfrom the root down, "
	       "and the names of the references when the dump has them):\n"
	       "the groups with the most instances first, each with its "
	       "count, bytes and one\nexample path with addresses (DUMP may "
	       "be - for stdin).  A dump with names\n(format 1.1) shows "
	       "each path first as one line, e.g.\n"
	       "  Entry \xe2\x86\x90 Hash[\"k17\"] \xe2\x86\x90 @store of "
	       "Registry \xe2\x86\x90 root globals $registry\n"
	       "(man vmheap-path: NAMES).\n\n"
	       "Of an object's paths the one shown has the fewest steps "
	       "through a thread's\nstack or a VM-internal object, then the "
	       "fewest references (man vmheap-path:\nWHICH PATH).\n\n"
	       "  --top N        print only the first N path shapes (default "
	       "%d)\n"
	       "  --shortest     the shortest paths, whatever they pass "
	       "through\n"
	       "  --exclude KINDS  leave out references of these kinds: "
	       "stack (from a\n"
	       "                 thread's stack), internal (held by "
	       "VM-internal objects)\n"
	       "  --retainers    every reference to the target, grouped by "
	       "holder class\n"
	       "                 and reference name, with counts\n"
	       "  --format FMT   text (default) or json\n"
	       "  --bytes        sizes as exact byte counts, not KiB/MiB/GiB\n"
	       "  --help         this text\n"
	       "  --version      the version\n\n"
	       "Exit status: 0 success, 1 no such class or address in the "
	       "dump (the nearest\nclass names are suggested), 2 bad usage or "
	       "an unreadable, truncated or\ncorrupt dump.\n",
	       usage_line, PATH_DEFAULT_TOP);
	exit(0);
}

static void parse_args(int argc, char **argv, struct path_options *o)
{
	static const struct option longopts[] = {
	    {"top", required_argument, NULL, 'R'},
	    {"format", required_argument, NULL, 'R'},
	    {"bytes", no_argument, NULL, 'R'},
	    {"shortest", no_argument, NULL, 's'},
	    {"exclude", required_argument, NULL, 'x'},
	    {"retainers", no_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct vmheap_report_options init = VMHEAP_REPORT_OPTIONS_INIT;
	char msg[200];
	int ch;

	memset(o, 0, sizeof(*o));
	o->report = init;
	while ((ch = vmheap_report_getopt(argc, argv, longopts, &o->report, msg,
					  sizeof(msg))) != -1) {
		if (ch == 'h')
			help();
		if (ch == 'V') {
			exit(vmheap_tool_version(PROG));
		}
		if (ch == 's') {
			o->shortest = 1;
			continue;
		}
		if (ch == 'r') {
			o->retainers = 1;
			continue;
		}
		if (ch == 'x') {
			if (vmheap_graph_parse_exclude(optarg, &o->exclude) < 0)
				vmheap_tool_usage_error(
				    PROG, usage_line,
				    "bad --exclude '%s' (a list of: "
				    "stack, internal)",
				    optarg);
			continue;
		}
		vmheap_tool_usage_error(PROG, usage_line, "%s", msg);
	}
	if (o->report.format == VMHEAP_OUTPUT_CSV)
		vmheap_tool_usage_error(
		    PROG, usage_line, "%s",
		    "unknown format 'csv' (use text or json)");
	if (argc - optind != 2)
		vmheap_tool_usage_error(
		    PROG, usage_line, "%s",
		    argc - optind < 2 ? "a dump and a target needed: DUMP "
					"CLASS|0xADDRESS"
				      : "too many arguments (DUMP and one "
					"target)");
	o->dump = argv[optind];
	o->target = argv[optind + 1];
	if (!*o->target)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					"the target is empty (a class name or "
					"0xADDRESS)");
}

int main(int argc, char **argv)
{
	struct path_options o;
	struct path_result res;
	struct vmheap_strbuf out = VMHEAP_STRBUF_INIT;
	char err[2048];
	int rc;

	parse_args(argc, argv, &o);
	rc = path_find(&o, &res, err, sizeof(err));
	if (rc == 0 && o.retainers)
		path_render_retainers(&o, &res, &out);
	else if (rc == 0)
		path_render(&o, &res, &out);
	path_result_release(&res);
	return vmheap_tool_finish("vmheap-path", rc, err, &out);
}
