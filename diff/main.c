/*
 * vmheap-diff - what grew between two heap dumps.
 *
 *   vmheap-diff OLD NEW              per class: count and bytes deltas,
 *                                    under a short suspects section
 *                                    (class_suspects.c)
 *   vmheap-diff --objects OLD NEW    objects in NEW not in OLD, by identity
 *   vmheap-diff --retainers OLD NEW  who references those new objects
 *   vmheap-diff --paths OLD NEW      their paths from the roots (paths.c)
 *   vmheap-diff --suspects OLD NEW   the classes that hold them (suspects.c)
 *
 * Nothing is printed until both dumps were read and verified whole; a
 * damaged dump gives one error message and exit status 2.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diff-internal.h"
#include "vmheap_graph.h"
#include "timeline-internal.h"

#define PROG "vmheap-diff"

static const char usage_line[] =
    "usage: vmheap-diff [--objects | --retainers | --paths | --suspects |\n"
    "                   --native [--leaks] | --by site] [--no-suspects]\n"
    "                   [--exclude stack,internal] [--shortest]\n"
    "                   [--sort count|bytes|name] [--top N]\n"
    "                   [--format text|json|csv|pprof] [--bytes] "
    "[--threads N] OLD NEW\n"
    "       vmheap-diff [options] DUMP1 DUMP2 DUMP3 ...   (a timeline)";

static void help(void)
{
	printf("%s\n\n"
	       "Compare two vmheap dumps of a VM (OLD or NEW may be - for "
	       "stdin).  Three or\nmore dumps, oldest first, give a "
	       "timeline: per class the count at each\ndump, the change, "
	       "and the growth per minute from the dumps' start times;\n"
	       "classes that grew at every step are marked *.\n\n"
	       "  (default)      per class: count delta, class, bytes delta; "
	       "above it the 3\n"
	       "                 top leak suspects (as --suspects) when "
	       "both dumps have\n"
	       "                 references and roots, are regular files "
	       "and NEW has at most\n"
	       "                 2000000 objects (text and JSON)\n"
	       "  --no-suspects  no suspects section in the default diff\n"
	       "  --by site      per class and allocation site (file:line in "
	       "method; dumps\n"
	       "                 with sites: Ruby's config.trace.allocations "
	       "and code's\n"
	       "                 <imemo:iseq>)\n"
	       "  --objects      objects of NEW absent from OLD (same id and "
	       "class), per class\n"
	       "  --retainers    for the top classes of --objects, which "
	       "classes reference\n"
	       "                 the new objects (NEW must be a regular "
	       "file: it is read 3 times)\n"
	       "  --paths        for the top classes of --objects, the "
	       "shortest paths from the\n"
	       "                 roots to the new objects, merged by shape "
	       "(--top N: N classes,\n"
	       "                 default 5)\n"
	       "  --native       growth of live malloc memory by call site "
	       "(the dumps'\n"
	       "                 native sections, symbolized; top 20 "
	       "unless --top); with three\n"
	       "                 or more dumps, each site's live blocks at "
	       "each dump and per minute\n"
	       "  --leaks        with --native and two dumps: per site, "
	       "NEW's blocks by leak\n"
	       "                 class (leaked, indirect, possible, "
	       "reachable: count and bytes)\n"
	       "                 and each figure's growth since OLD, "
	       "leaked first\n"
	       "  --suspects     leak suspects: the new objects grouped by "
	       "their owner (the\n"
	       "                 top-most new object that dominates them), "
	       "owners' classes\n"
	       "                 ranked by the new bytes they hold, with "
	       "their path (--top N:\n"
	       "                 N suspects, default 10)\n"
	       "  --exclude KINDS  with --paths and --suspects (and the "
	       "suspects section):\n"
	       "                 leave out references of these kinds in NEW: "
	       "stack (from a\n"
	       "                 thread's stack), internal (held by "
	       "VM-internal objects)\n"
	       "  --shortest     the paths shown are the shortest, whatever "
	       "they pass through\n"
	       "                 (default: fewest steps through stacks and "
	       "internal objects)\n"
	       "  --sort KEY     count (default), bytes or name\n"
	       "  --top N        print only the first N rows (--retainers: N "
	       "classes, default 10;\n"
	       "                 --suspects: N suspects, default 10)\n"
	       "  --format FMT   text (default), json or csv; pprof (with "
	       "--native or --by site):\n"
	       "                 a gzipped profile.proto of NEW minus OLD "
	       "for go tool pprof\n"
	       "  --threads N    decoding threads (default: 2 on a "
	       "multiprocessor)\n"
	       "  --bytes        sizes as exact byte counts, not KiB/MiB/GiB\n"
	       "  --no-progress  never draw a progress bar\n"
	       "  --help         this text\n"
	       "  --version      the version\n\n"
	       "Exit status: 0 success (whether or not anything changed), 1 "
	       "--native on a dump\nwithout a native section (--leaks: "
	       "without a leak scan), 2 "
	       "bad usage or an unreadable, truncated or corrupt dump.\n",
	       usage_line);
	exit(0);
}

static void parse_args(int argc, char **argv, struct diff_options *o)
{
	static const struct option longopts[] = {
	    VMHEAP_REPORT_LONGOPTS('R'),
	    {"objects", no_argument, NULL, 'o'},
	    {"retainers", no_argument, NULL, 'r'},
	    {"paths", no_argument, NULL, 'p'},
	    {"native", no_argument, NULL, 'n'},
	    {"leaks", no_argument, NULL, 'L'},
	    {"suspects", no_argument, NULL, 's'},
	    {"no-suspects", no_argument, NULL, 'S'},
	    {"by", required_argument, NULL, 'b'},
	    {"exclude", required_argument, NULL, 'x'},
	    {"shortest", no_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct vmheap_report_options init = VMHEAP_REPORT_OPTIONS_INIT;
	char msg[200];
	int ch, i, modes = 0;

	memset(o, 0, sizeof(*o));
	o->report = init;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", longopts, &i)) != -1) {
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
			break;
		case 'x':
			if (vmheap_graph_parse_exclude(optarg, &o->exclude) < 0)
				vmheap_tool_usage_error(
				    PROG, usage_line,
				    "bad --exclude '%s' (a list of: "
				    "stack, internal)",
				    optarg);
			break;
		case 'P':
			o->shortest = 1;
			break;
		case 'o':
			o->mode = DIFF_OBJECTS;
			modes++;
			break;
		case 'r':
			o->mode = DIFF_RETAINERS;
			modes++;
			break;
		case 'p':
			o->mode = DIFF_PATHS;
			modes++;
			break;
		case 'n':
			o->mode = DIFF_NATIVE;
			modes++;
			break;
		case 'L':
			o->leaks = 1;
			break;
		case 's':
			o->mode = DIFF_SUSPECTS;
			modes++;
			break;
		case 'S':
			o->no_suspects = 1;
			break;
		case 'b':
			if (strcmp(optarg, "site") && strcmp(optarg, "class"))
				vmheap_tool_usage_error(
				    PROG, usage_line,
				    "--by takes class or site, not '%s'",
				    optarg);
			o->by_site = !strcmp(optarg, "site");
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
	if (modes > 1)
		vmheap_tool_usage_error(
		    PROG, usage_line, "%s",
		    "--objects, --retainers, --paths, --suspects and "
		    "--native exclude each other");
	if (o->leaks && o->mode != DIFF_NATIVE)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					"--leaks needs --native");
	if (o->leaks && o->pprof)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					"--leaks has no pprof format (text, "
					"json or csv)");
	if (o->leaks && argc - optind > 2)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					"--native --leaks takes two dumps, "
					"OLD NEW");
	if (o->no_suspects && o->mode != DIFF_CLASSES)
		vmheap_tool_usage_error(
		    PROG, usage_line, "%s",
		    "--no-suspects goes with the class-by-class "
		    "diff (no mode option)");
	if (modes && o->by_site)
		vmheap_tool_usage_error(
		    PROG, usage_line, "%s",
		    "--by site is a class diff: it excludes "
		    "--objects, --retainers, --paths, --suspects "
		    "and --native");
	if (o->pprof && o->mode != DIFF_NATIVE && !o->by_site)
		vmheap_tool_usage_error(
		    PROG, usage_line, "%s",
		    "--format pprof needs --native or --by site");
	if (o->pprof && o->by_site && argc - optind > 2)
		vmheap_tool_usage_error(
		    PROG, usage_line, "%s",
		    "--by site --format pprof takes two dumps, "
		    "OLD NEW");
	if (argc - optind < 2)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					"two dumps needed: OLD NEW");
	if (argc - optind > 2 &&
	    ((o->mode != DIFF_CLASSES && o->mode != DIFF_NATIVE) || o->by_site))
		vmheap_tool_usage_error(
		    PROG, usage_line, "%s",
		    "--objects, --retainers, --paths, --suspects "
		    "and --by site take two dumps, OLD NEW (three "
		    "or more give the class timeline, or with "
		    "--native the native one)");
	o->old_path = argv[optind];
	o->new_path = argv[optind + 1];
	o->dumps = argv + optind;
	o->ndumps = argc - optind;
	for (int k = 1; k < o->ndumps; k++)
		for (int j = 0; j < k; j++)
			if (!strcmp(o->dumps[j], "-") &&
			    !strcmp(o->dumps[k], "-"))
				vmheap_tool_usage_error(
				    PROG, usage_line, "%s",
				    o->ndumps == 2 ? "only one of OLD and NEW "
						     "can be - (stdin)"
						   : "only one dump can be - "
						     "(stdin)");
	if (o->mode == DIFF_RETAINERS) {
		struct stat st;
		if (!strcmp(o->new_path, "-") ||
		    (!stat(o->new_path, &st) && !S_ISREG(st.st_mode)))
			vmheap_tool_usage_error(
			    PROG, usage_line,
			    "--retainers reads NEW three times, so NEW "
			    "must be a regular file, not a pipe or "
			    "stdin: '%s'",
			    o->new_path);
	}
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (!strcmp(a, b))
		return 1;
	if (stat(a, &sa) || stat(b, &sb))
		return 0;
	return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Equal totals of the two censuses: with the same vm, pid and time, the
 * mark of one dump given twice (two dumps taken within a second differ
 * in their totals, nearly always). */
static int same_totals(const struct diff_result *res)
{
	if (!res->old_d.census || !res->new_d.census) /* graph modes */
		return 0;
	const struct vmheap_totals *x = vmheap_census_totals(res->old_d.census);
	const struct vmheap_totals *y = vmheap_census_totals(res->new_d.census);
	return x->objects == y->objects && x->bytes == y->bytes &&
	       x->classes == y->classes && x->references == y->references &&
	       x->roots == y->roots;
}

/* Warnings about the pair of dumps (both read), collected in `w`. */
static void check_pair(const struct diff_options *o,
		       const struct diff_result *res, struct vmheap_strbuf *w)
{
	const struct vmheap_header *a = vmheap_reader_header(res->old_d.reader);
	const struct vmheap_header *b = vmheap_reader_header(res->new_d.reader);

	if (same_file(o->old_path, o->new_path))
		vmheap_strbuf_addf(w,
				   "vmheap-diff: warning: OLD and NEW are the "
				   "same dump (%s and %s are the same file)\n",
				   o->old_path, o->new_path);
	else if (a->pid == b->pid && a->time == b->time &&
		 !strcmp(a->vm_name, b->vm_name) && same_totals(res))
		vmheap_strbuf_addf(
		    w,
		    "vmheap-diff: warning: OLD and NEW are the "
		    "same dump (%s and %s have the same vm %s, "
		    "pid %" PRIu64 ", time %" PRId64 " and totals)\n",
		    o->old_path, o->new_path, a->vm_name, a->pid, a->time);
	/* an import's header may not know the version (empty): then only
	 * the VMs' names are compared */
	if (strcmp(a->vm_name, b->vm_name) ||
	    (a->vm_version[0] && b->vm_version[0] &&
	     strcmp(a->vm_version, b->vm_version)))
		vmheap_strbuf_addf(w,
				   "vmheap-diff: warning: the dumps are of "
				   "different VMs: %s is %s%s%s, %s is %s%s%s\n",
				   o->old_path, a->vm_name,
				   a->vm_version[0] ? " " : "", a->vm_version,
				   o->new_path, b->vm_name,
				   b->vm_version[0] ? " " : "", b->vm_version);
	if (res->old_d.census && res->new_d.census)
		vmheap_strbuf_add_memory_delta(
		    NULL, w, a, b,
		    vmheap_census_totals(res->old_d.census)->bytes,
		    vmheap_census_totals(res->new_d.census)->bytes);
	diff_warn_order(w, 1, o->old_path, 1, a, o->new_path, 2, b);
	if (o->mode != DIFF_CLASSES && a->pid != b->pid)
		vmheap_strbuf_addf(w,
				   "vmheap-diff: warning: the dumps come from "
				   "different processes (pid %" PRIu64
				   " and %" PRIu64
				   "): object ids are addresses, so matching "
				   "objects by identity means little\n",
				   a->pid, b->pid);
}

int diff_emit(int rc, const char *err, struct vmheap_strbuf *out,
	      struct vmheap_strbuf *warn)
{
	if (rc < 0) {
		fprintf(stderr, "vmheap-diff: %s\n", err);
		vmheap_strbuf_release(out);
		vmheap_strbuf_release(warn);
		return 2;
	}
	vmheap_strbuf_write(warn, 2);
	rc = vmheap_strbuf_write(out, 1);
	vmheap_strbuf_release(out);
	vmheap_strbuf_release(warn);
	if (rc < 0) {
		perror("vmheap-diff: writing the output");
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct diff_options o;
	struct diff_result res;
	struct vmheap_strbuf out = VMHEAP_STRBUF_INIT;
	struct vmheap_strbuf warn = VMHEAP_STRBUF_INIT;
	char err[1024];
	int rc;

	parse_args(argc, argv, &o);
	if (o.mode == DIFF_NATIVE)
		return diff_native_main(&o);
	if (o.ndumps > 2)
		return diff_timeline_main(&o);
	memset(&res, 0, sizeof(res));
	res.exclude = o.exclude;
	res.shortest = o.shortest;
	rc = diff_open(&o, &res, err, sizeof(err));
	if (!rc) {
		if (o.mode == DIFF_CLASSES) {
			rc = diff_classes(&o, &res, err, sizeof(err));
			if (!rc && !o.pprof)
				diff_class_suspects(&o, &res);
		}
		else if (o.mode == DIFF_PATHS)
			rc = diff_paths(&o, &res, err, sizeof(err));
		else if (o.mode == DIFF_SUSPECTS)
			rc = diff_suspects(&o, &res, err, sizeof(err));
		else
			rc = diff_identity(&o, &res, err, sizeof(err));
	}
	if (!rc) {
		check_pair(&o, &res, &warn);
		if (o.pprof)
			diff_render_pprof(&o, &res, &out);
		else
			diff_render(&o, &res, &out);
		if (out.failed || warn.failed) {
			snprintf(err, sizeof(err),
				 "out of memory for the report");
			rc = VMHEAP_ENOMEM;
		}
	}
	diff_result_release(&res);
	return diff_emit(rc, err, &out, &warn);
}
