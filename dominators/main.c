/*
 * vmheap-dominators - the objects that retain the most memory: for each,
 * its own and retained bytes and the chain of its dominators up to the
 * root (the dominator tree of the heap graph, from a virtual root that
 * points at every root record).
 *
 * The whole dump is read and verified before anything is printed: a
 * damaged dump gives one message and exit status 2; a --class that is not
 * in the dump, exit status 1.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dominators-internal.h"

#define PROG "vmheap-dominators"

static const char usage_line[] =
    "usage: vmheap-dominators [--top N] [--class CLASS] "
    "[--format text|json|csv] [--bytes]\n"
    "                         [--exclude stack,internal] DUMP";

static _Noreturn void help(void)
{
	printf(
	    "%s\n\n"
	    "Print the objects of a vmheap dump that retain the most "
	    "memory: address,\nclass, own bytes, retained bytes (what would "
	    "be freed without the object)\nand their share of the dump, "
	    "and the chain of dominators up to the root\n(DUMP may be - "
	    "for stdin).  The summary counts the objects no root reaches.\n\n"
	    "  --top N        print the first N objects (default %d)\n"
	    "  --class CLASS  only objects of this class\n"
	    "  --exclude KINDS  leave out references of these kinds: stack "
	    "(from a thread's\n"
	    "                 stack), internal (held by VM-internal "
	    "objects)\n"
	    "  --format FMT   text (default), json or csv\n"
	    "  --bytes        sizes as exact byte counts, not KiB/MiB/GiB\n"
	    "  --help         this text\n"
	    "  --version      the version\n\n"
	    "Exit status: 0 success, 1 no objects of CLASS in the dump "
	    "(the nearest class\nnames are suggested), 2 bad usage or an "
	    "unreadable, truncated or corrupt dump.\n",
	    usage_line, DOMINATORS_DEFAULT_TOP);
	exit(0);
}

static void parse_args(int argc, char **argv, struct dominators_options *o)
{
	static const struct option longopts[] = {
	    {"top", required_argument, NULL, 'R'},
	    {"format", required_argument, NULL, 'R'},
	    {"bytes", no_argument, NULL, 'R'},
	    {"class", required_argument, NULL, 'c'},
	    {"exclude", required_argument, NULL, 'x'},
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
		if (ch == 'x') {
			if (vmheap_graph_parse_exclude(optarg, &o->exclude) < 0)
				vmheap_tool_usage_error(
				    PROG, usage_line,
				    "bad --exclude '%s' (a list of: "
				    "stack, internal)",
				    optarg);
			continue;
		}
		if (ch != 'c')
			vmheap_tool_usage_error(PROG, usage_line, "%s", msg);
		if (!*optarg)
			vmheap_tool_usage_error(PROG, usage_line, "%s",
						"--class needs a class name");
		o->cls = optarg;
	}
	if (argc - optind != 1)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					argc - optind < 1
					    ? "no dump given"
					    : "too many arguments (one dump)");
	o->dump = argv[optind];
}

int main(int argc, char **argv)
{
	struct dominators_options o;
	struct dominators_result res;
	struct vmheap_strbuf out = VMHEAP_STRBUF_INIT;
	char err[2048];
	int rc;

	parse_args(argc, argv, &o);
	rc = dominators_find(&o, &res, err, sizeof(err));
	if (rc == 0)
		dominators_render(&o, &res, &out);
	dominators_result_release(&res);
	return vmheap_tool_finish("vmheap-dominators", rc, err, &out);
}
