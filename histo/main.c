/*
 * vmheap-histo - print the per-class histogram of one heap dump.
 *
 * One streaming pass over the dump (blocks decoded on two threads), memory
 * proportional to the number of classes.  Nothing is printed until the
 * reader has verified the whole dump: a damaged dump gives one error
 * message and exit status 2, never a partial table.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "histo-internal.h"

#define PROG "vmheap-histo"

static const char usage_line[] =
    "usage: vmheap-histo [--sort count|bytes|name] [--top N] "
    "[--format text|json|csv|pprof] [--bytes] [--kind | --by site | --retained | "
    "--native [--leaks]] "
    "[--threads N] DUMP";

static void help(void)
{
	printf("%s\n\n"
	       "Print objects and bytes per class of a vmheap dump (DUMP may "
	       "be - for stdin).\n\n"
	       "  --sort KEY     count (default), bytes or name\n"
	       "  --top N        print only the first N rows\n"
	       "  --format FMT   text (default), json or csv; pprof (with "
	       "--native or --by site):\n"
	       "                 a gzipped profile.proto for go tool pprof\n"
	       "  --kind         group by object kind instead of class\n"
	       "  --by site      group by class and allocation site (file:line "
	       "in method;\n"
	       "                 dumps of 1.1 with sites: Ruby's "
	       "config.trace.allocations,\n"
	       "                 and the <imemo:iseq> of code)\n"
	       "  --retained     add each class's retained bytes (the heap "
	       "graph: sorted by\n"
	       "                 them unless --sort is given)\n"
	       "  --native       live malloc bytes by call site (the dump's "
	       "native section)\n"
	       "  --leaks        with --native: each site's blocks as the "
	       "dump's leak scan\n"
	       "                 found them: leaked, indirectly or possibly "
	       "leaked, reachable\n"
	       "  --threads N    decoding threads (default: 2 on a "
	       "multiprocessor)\n"
	       "  --bytes        sizes as exact byte counts, not KiB/MiB/GiB\n"
	       "  --no-progress  never draw a progress bar\n"
	       "  --help         this text\n"
	       "  --version      the version\n\n"
	       "Exit status: 0 success, 1 --native on a dump without a "
	       "native section\n(--leaks: without a leak scan), 2 bad usage or an unreadable, "
	       "truncated or corrupt dump.\n",
	       usage_line);
	exit(0);
}

static void parse_args(int argc, char **argv, struct histo_options *o)
{
	static const struct option longopts[] = {
	    VMHEAP_REPORT_LONGOPTS('R'),
	    {"kind", no_argument, NULL, 'k'},
	    {"by", required_argument, NULL, 'b'},
	    {"retained", no_argument, NULL, 'r'},
	    {"native", no_argument, NULL, 'n'},
	    {"leaks", no_argument, NULL, 'L'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct vmheap_report_options init = VMHEAP_REPORT_OPTIONS_INIT;
	char msg[200];
	int ch, i;

	memset(o, 0, sizeof(*o));
	o->report = init;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "hk", longopts, &i)) != -1) {
		switch (ch) {
		case 'R':
			if (!strcmp(longopts[i].name, "format")) {
				o->pprof = !strcmp(optarg, "pprof");
				if (o->pprof)
					break;
			}
			if (vmheap_report_option(&o->report, longopts[i].name,
						 optarg, msg, sizeof(msg)) < 0)
				vmheap_tool_usage_error(PROG, usage_line, "%s",
							msg);
			o->sort_given |= !strcmp(longopts[i].name, "sort");
			break;
		case 'k':
			o->by_kind = 1;
			break;
		case 'b':
			if (strcmp(optarg, "site") == 0)
				o->by_site = 1;
			else if (strcmp(optarg, "kind") == 0)
				o->by_kind = 1;
			else if (strcmp(optarg, "class") != 0)
				vmheap_tool_usage_error(
				    PROG, usage_line,
				    "--by takes class, kind or site, "
				    "not '%s'",
				    optarg);
			break;
		case 'r':
			o->retained = 1;
			break;
		case 'n':
			o->native = 1;
			break;
		case 'L':
			o->leaks = 1;
			break;
		case 'h':
			help();
			break;
		case 'V':
			exit(vmheap_tool_version(PROG));
		default:
			vmheap_tool_usage_error(
			    PROG, usage_line,
			    "unknown or incomplete option '%s'",
			    argv[optind - 1]);
		}
	}
	if (o->by_kind + o->by_site + o->retained + o->native > 1)
		vmheap_tool_usage_error(
		    PROG, usage_line, "%s",
		    "--kind, --by site, --retained and --native "
		    "exclude each other");
	if (o->leaks && !o->native)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					"--leaks needs --native");
	if (o->leaks && o->pprof)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					"--leaks has no pprof format (text, "
					"json or csv)");
	if (o->pprof && !o->native && !o->by_site)
		vmheap_tool_usage_error(
		    PROG, usage_line, "%s",
		    "--format pprof needs --native or --by site");
	if (argc - optind != 1)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					argc - optind < 1
					    ? "no dump given"
					    : "too many arguments (one dump)");
	o->path = argv[optind];
}

int main(int argc, char **argv)
{
	struct histo_options o;
	struct vmheap_strbuf out = VMHEAP_STRBUF_INIT;
	char err[1024];

	parse_args(argc, argv, &o);
	int rc = o.native ? histo_native(&o, &out, err, sizeof(err))
			  : histo_run(&o, &out, err, sizeof(err));
	if (rc == 1) {
		fprintf(stderr, "vmheap-histo: %s\n", err);
		vmheap_strbuf_release(&out);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "vmheap-histo: %s\n", err);
		vmheap_strbuf_release(&out);
		return 2;
	}
	if (vmheap_strbuf_write(&out, 1) < 0) {
		perror("vmheap-histo: writing the output");
		vmheap_strbuf_release(&out);
		return 2;
	}
	vmheap_strbuf_release(&out);
	return 0;
}
