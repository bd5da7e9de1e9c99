/*
 * vmheap-replay - replay a malloc trace (vmheap-run --record) under
 * several allocators and compare their time and memory.
 *
 * The trace is read whole and checked before anything is replayed
 * (program.c: a damaged trace is refused with its byte offset); then for
 * each allocator a child with it preloaded replays the program
 * (child.c, engine.c).  The truth check: each replay's live bytes at the
 * end equal the recorded process's live bytes at exit, which the trace's
 * trailer holds.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay-tool-internal.h"
#include "replay-trace-internal.h"
#include "vmheap_tool.h"

#define PROG "vmheap-replay"
#define MAX_ALLOCATORS 16

static const char usage_line[] =
    "usage: vmheap-replay [--allocator glibc|jemalloc|tcmalloc|mimalloc|"
    "PATH.so]... [--threads recorded|1] [--touch first|pages]\n"
    "       [--format text|json|csv] TRACE";

static void help(void)
{
	printf("%s\n\n"
	       "Replay a malloc trace (vmheap-run --record TRACE) under each "
	       "allocator, in a\nchild process of its own with the "
	       "allocator preloaded, and compare them.\n\n"
	       "  --allocator A   glibc, jemalloc, tcmalloc, mimalloc (Debian's "
	       "libjemalloc2,\n"
	       "                  libtcmalloc-minimal4, libmimalloc2.0) or "
	       "the path of a\n"
	       "                  shared library; repeatable (default: all "
	       "four; a missing one\n"
	       "                  is skipped with a message)\n"
	       "  --threads T     recorded (default): each recorded thread on "
	       "a thread of its\n"
	       "                  own; 1: every event on one thread\n"
	       "  --touch W       first (default): write each block's first "
	       "byte; pages: a\n"
	       "                  byte of each of its 4 KiB pages, as a "
	       "program that fills it\n"
	       "  --format FMT    text (default), json or csv\n"
	       "  --help          this text\n"
	       "  --version       the version\n\n"
	       "Exit status: 0 success, 1 a replay failed or its live bytes "
	       "at the end differ\nfrom the trace's, 2 bad usage or an "
	       "unreadable, truncated or damaged trace.\n",
	       usage_line);
	exit(0);
}

struct options {
	const char *allocators[MAX_ALLOCATORS];
	int nalloc, serial, pages;
	enum vmheap_output_format format;
	const char *trace;
};

static void parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
	    {"allocator", required_argument, NULL, 'a'},
	    {"threads", required_argument, NULL, 't'},
	    {"touch", required_argument, NULL, 'T'},
	    {"format", required_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	memset(o, 0, sizeof *o);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			if (o->nalloc == MAX_ALLOCATORS)
				vmheap_tool_usage_error(
				    PROG, usage_line,
				    "at most %d --allocator options",
				    MAX_ALLOCATORS);
			o->allocators[o->nalloc++] = optarg;
			break;
		case 't':
			if (!strcmp(optarg, "1"))
				o->serial = 1;
			else if (strcmp(optarg, "recorded"))
				vmheap_tool_usage_error(
				    PROG, usage_line,
				    "--threads takes recorded or 1, not '%s'",
				    optarg);
			break;
		case 'T':
			if (!strcmp(optarg, "pages"))
				o->pages = 1;
			else if (strcmp(optarg, "first"))
				vmheap_tool_usage_error(
				    PROG, usage_line,
				    "--touch takes first or pages, not '%s'",
				    optarg);
			break;
		case 'f':
			if (vmheap_output_format_parse(optarg, &o->format) < 0)
				vmheap_tool_usage_error(
				    PROG, usage_line,
				    "--format takes text, json or csv, not "
				    "'%s'",
				    optarg);
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
	if (argc - optind != 1)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					argc == optind ? "no TRACE given"
						       : "one TRACE only");
	o->trace = argv[optind];
	if (o->nalloc == 0) {
		static const char *const all[] = {"glibc", "jemalloc",
						  "tcmalloc", "mimalloc"};

		for (; o->nalloc < 4; o->nalloc++)
			o->allocators[o->nalloc] = all[o->nalloc];
	}
}

/* $VMHEAP_REPLAY_ENGINE, else ../libexec/vmheap/vmheap-replay-engine
 * beside this program. */
static int engine_path(char *out, size_t size)
{
	const char *env = getenv("VMHEAP_REPLAY_ENGINE");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && env[0]) {
		snprintf(out, size, "%s", env);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n <= 0)
			return -1;
		exe[n] = 0;
		snprintf(out, size, "%s/../libexec/vmheap/vmheap-replay-engine",
			 dirname(exe));
	}
	if (access(out, X_OK) != 0) {
		fprintf(stderr,
			"%s: the replay engine %s is missing (%s); build it "
			"with make, or set VMHEAP_REPLAY_ENGINE\n",
			PROG, out, strerror(errno));
		return -1;
	}
	return 0;
}

/* The truth check and the replay's own failures: 0, or 1 with a line on
 * stderr. */
static int check_row(const struct rp_row *w, uint64_t recorded,
		     const char *trace)
{
	const struct rp_result *r = &w->r;

	if (r->status < 0) {
		fprintf(stderr, "%s: %s: the replay failed: %s\n", PROG,
			w->name, r->message);
		return 1;
	}
	if (w->lib[0] ? !strstr(r->malloc_from, w->lib)
		      : !strstr(r->malloc_from, "/libc.so")) {
		fprintf(stderr,
			"%s: %s: malloc in the replay came from %s, not from "
			"the preloaded %s\n",
			PROG, w->name, r->malloc_from[0] ? r->malloc_from : "?",
			w->lib[0] ? w->lib : "C library");
		return 1;
	}
	if (r->live_end != recorded || r->live_deltas != r->live_end) {
		fprintf(stderr,
			"%s: %s: the replay ends with %llu live bytes (its "
			"threads counted %llu), but %s records %llu live "
			"bytes at exit\n",
			PROG, w->name, (unsigned long long)r->live_end,
			(unsigned long long)r->live_deltas, trace,
			(unsigned long long)recorded);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct rp_row rows[MAX_ALLOCATORS];
	struct vmheap_strbuf sb = VMHEAP_STRBUF_INIT;
	struct rp_trace_source ts;
	struct rp_program prog;
	struct options o;
	char err[512], engine[PATH_MAX + 64];
	int i, n = 0, shown, fd = -1, bad = 0, rc;

	parse_args(argc, argv, &o);
	for (i = 0; i < o.nalloc; i++) {
		char why[PATH_MAX + 128];
		int found = rp_allocator_resolve(o.allocators[i], &rows[n],
						 why, sizeof why);

		if (found < 0)
			vmheap_tool_usage_error(PROG, usage_line, "%s", why);
		if (found == 0)
			fprintf(stderr, "%s: skipping %s: %s\n", PROG,
				rows[n].name, why);
		else
			n++;
	}
	if (engine_path(engine, sizeof engine) < 0)
		return 2;
	rc = rp_trace_source_open(&ts, o.trace, err, sizeof err);
	if (rc == 0)
		rc = rp_build(&ts.src, &fd, &prog, err, sizeof err);
	if (rc == 0 && prog.live_end != ts.info.live_bytes) {
		snprintf(err, sizeof err,
			 "%s: its events leave %llu live bytes at the end, but "
			 "its trailer records %llu",
			 o.trace, (unsigned long long)prog.live_end,
			 (unsigned long long)ts.info.live_bytes);
		rc = RP_EFORMAT;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", PROG, err);
		rp_trace_source_close(&ts);
		return 2;
	}
	rp_trace_source_close(&ts);
	if (n == 0) {
		fprintf(stderr, "%s: no allocator to replay under\n", PROG);
		return 1;
	}
	for (i = 0; i < n; i++) {
		rows[i].live_peak = prog.live_peak;
		if (rp_child_replay(engine, fd, o.serial, o.pages, &rows[i],
				    err, sizeof err) < 0) {
			fprintf(stderr, "%s: %s\n", PROG, err);
			rows[i].r.status = RP_EIO;
			snprintf(rows[i].r.message, sizeof rows[i].r.message,
				 "no answer");
			bad = 1;
			continue;
		}
		bad |= check_row(&rows[i], ts.info.live_bytes, o.trace);
	}
	close(fd);
	/* a replay that did not run to its end has no figures to show: its
	 * error is on stderr; the others keep their order */
	for (i = shown = 0; i < n; i++)
		if (rows[i].r.status == 0)
			rows[shown++] = rows[i];
	if (o.format == VMHEAP_OUTPUT_TEXT) {
		char live[64];

		vmheap_format_bytes(live, sizeof live, ts.info.live_bytes);
		vmheap_strbuf_addf(
		    &sb,
		    "%s: %llu events of %u thread%s (%llu replayed: %llu that "
		    "made and freed nothing left out), %u slots; live at "
		    "exit %s\nreplayed on %s, writing %s\n\n",
		    o.trace, (unsigned long long)ts.info.events,
		    ts.info.threads, ts.info.threads == 1 ? "" : "s",
		    (unsigned long long)prog.nevents,
		    (unsigned long long)ts.skipped, ts.info.slots, live,
		    o.serial || prog.nthreads <= 1 ? "one thread"
						   : "the recorded threads",
		    o.pages ? "a byte of each page of each block"
			    : "the first byte of each block");
		if (ts.info.untracked_frees || ts.info.stalls ||
		    (ts.info.flags & VMHEAP_TRACE_FLAG_FORKED))
			vmheap_strbuf_addf(
			    &sb,
			    "the recording: %llu frees or reallocs of blocks "
			    "made before it began (left out), %llu waits of "
			    "the program for its writer%s\n\n",
			    (unsigned long long)ts.info.untracked_frees,
			    (unsigned long long)ts.info.stalls,
			    ts.info.flags & VMHEAP_TRACE_FLAG_FORKED
				? "; a forked child's trace (the blocks it "
				  "inherited are not in it)"
				: "");
	}
	rp_render(&sb, o.format, rows, shown);
	if (sb.failed || vmheap_strbuf_write(&sb, 1) < 0) {
		fprintf(stderr, "%s: cannot write the results\n", PROG);
		bad = 1;
	}
	vmheap_strbuf_release(&sb);
	return bad;
}
