/*
 * vmheap-import - convert another VM's heap dump (HPROF, MRI dump_all
 * JSON) into a vmheap dump.
 *
 * The conversion is libvmheap-import's (import/); this is the command
 * line: the options, the progress bar on a terminal (libvmheap-report),
 * and writing OUT atomically: the dump goes to a temporary file in OUT's
 * directory, which is renamed to OUT only once it is complete, so that on
 * any error (or Ctrl-C) no OUT is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmheap_files.h"
#include "vmheap_import.h"
#include "vmheap_report.h"

static const char usage_line[] =
    "usage: vmheap-import [--from hprof|ruby-json] [--pid PID] "
    "[--no-progress] IN OUT.vmheap";

/* The temporary file (tmp_name in the directory out_dfd), removed by the
 * signal handler too. */
static char tmp_name[NAME_MAX + 1];
static int out_dfd = -1;
static volatile sig_atomic_t tmp_live;

static void help(void)
{
	printf("%s\n\n"
	       "Convert a heap dump of another VM into a vmheap dump that "
	       "vmheap-histo,\nvmheap-diff and the other tools read (IN may "
	       "be - for stdin).\n\n"
	       "  --from FORMAT  hprof (a JVM's, \"JAVA PROFILE 1.0.1\", "
	       "\"1.0.2\" or\n"
	       "                 Android's \"1.0.3\"; 4- or 8-byte ids) or "
	       "ruby-json\n"
	       "                 (MRI's ObjectSpace.dump_all); guessed from "
	       "the content\n"
	       "                 when not given\n"
	       "  --pid PID      the pid of the VM that wrote IN, for the "
	       "dump's header\n"
	       "                 (neither format records it; without it the "
	       "header has\n"
	       "                 vmheap-import's own)\n"
	       "  --no-progress  never draw a progress bar\n"
	       "  --help         this text\n"
	       "  --version      the version\n\n"
	       "OUT is a format 1.1 dump: an HPROF's references are named "
	       "by field (.next)\nor index ([3]) and its thread roots by "
	       "thread and frame; dump_all's\nfile, line and method (with "
	       "allocation tracing) become allocation sites.\n"
	       "OUT is written atomically and never overwritten: on any error "
	       "no OUT is left.\n"
	       "Exit status: 0 success, 2 bad usage, an unreadable, "
	       "truncated or corrupt\ninput, or an OUT that cannot be "
	       "written.\n",
	       usage_line);
	exit(0);
}

static void on_signal(int sig)
{
	if (tmp_live)
		unlinkat(out_dfd, tmp_name, 0);
	signal(sig, SIG_DFL);
	raise(sig);
}

static long read_fd(void *ctx, void *buf, size_t len)
{
	return (long)read(*(int *)ctx, buf, len);
}

/* Open OUT's directory once (out_dfd, *base its last component) and
 * create the temporary file in it with O_EXCL|O_NOFOLLOW (libvmheap-files):
 * a name planted there is never followed.  The fd, or -1 (errno set). */
static int make_temp(const char *out, const char **base)
{
	int fd;

	out_dfd = vmheap_dir_open_parent(out, base);
	if (out_dfd < 0)
		return -1;
	fd = vmheap_file_create_temp(out_dfd, ".vmheap-import.", "", 0644,
				     tmp_name, sizeof(tmp_name));
	if (fd >= 0)
		tmp_live = 1;
	return fd;
}

/* The command line. */
struct args {
	enum vmheap_import_format from;
	uint64_t pid;
	int progress;
	const char *in, *out;
};

/* Parse the command line into *a: NULL, or what is wrong with it. */
static const char *parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
	    {"from", required_argument, NULL, 'f'},
	    {"no-progress", no_argument, NULL, 'P'},
	    {"pid", required_argument, NULL, 'p'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	static char why[300];
	char *end;
	int ch;

	memset(a, 0, sizeof(*a));
	a->progress = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (ch == 'h')
			help();
		else if (ch == 'V') {
			exit(vmheap_tool_version("vmheap-import"));
		} else if (ch == 'P')
			a->progress = 0;
		else if (ch == 'p') {
			errno = 0;
			a->pid = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || !a->pid ||
			    optarg[0] == '-') {
				snprintf(why, sizeof(why),
					 "--pid needs a positive number, not "
					 "'%s'",
					 optarg);
				return why;
			}
		} else if (ch != 'f') {
			snprintf(why, sizeof(why),
				 "unknown or incomplete option '%s'",
				 argv[optind - 1]);
			return why;
		} else if (vmheap_import_format_parse(optarg, &a->from) < 0) {
			snprintf(why, sizeof(why),
				 "--from takes hprof or ruby-json, not '%s'",
				 optarg);
			return why;
		}
	}
	if (optind + 2 > argc)
		return "IN and OUT are needed";
	if (optind + 2 < argc)
		return "too many arguments (IN and OUT)";
	a->in = argv[optind];
	a->out = argv[optind + 1];
	return NULL;
}

/* The progress bar on standard error, when it is a terminal and the
 * input a large enough file. */
static void want_progress(const struct args *a, int in_fd, const char *name,
			  struct vmheap_progress *bar,
			  struct vmheap_import_options *o)
{
	struct stat st;

	if (!a->progress || fstat(in_fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !vmheap_progress_wanted(2, (uint64_t)st.st_size))
		return;
	bar->fd = 2;
	bar->name = name;
	bar->total = (uint64_t)st.st_size;
	o->progress = vmheap_progress_update;
	o->progress_arg = bar;
}

static void print_summary(const char *in, const char *out,
			  const struct vmheap_import_result *res,
			  double seconds)
{
	char size[64], sites[64] = "";

	vmheap_format_bytes(size, sizeof(size),
			    (unsigned long long)res->bytes_out);
	if (res->sites)
		snprintf(sites, sizeof(sites), "%llu allocation sites, ",
			 (unsigned long long)res->sites);
	printf("%s (%s, %llu bytes) -> %s: %llu objects, %llu classes, %llu "
	       "roots, %llu references, %s%s, in %.3f s\n",
	       in, vmheap_import_format_name(res->from),
	       (unsigned long long)res->bytes_in, out,
	       (unsigned long long)res->objects,
	       (unsigned long long)res->classes, (unsigned long long)res->roots,
	       (unsigned long long)res->references, sites, size, seconds);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
	struct vmheap_import_options o = {0};
	struct vmheap_import_result res;
	struct vmheap_progress bar = {0};
	struct timespec t0;
	char msg[2 * PATH_MAX + 100] = "";
	const char *in, *why;
	struct args a;
	const char *out_base = NULL;
	int in_fd, out_fd, rc;

	why = parse_args(argc, argv, &a);
	if (why)
		vmheap_tool_usage_error("vmheap-import", usage_line, "%s", why);
	in = a.in;
	if (strcmp(in, "-") == 0) {
		in_fd = 0;
		in = "<stdin>";
	} else if ((in_fd = open(in, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "vmheap-import: cannot open %s: %s\n", in,
			strerror(errno));
		return 2;
	}
	if (access(a.out, F_OK) == 0 || errno != ENOENT) {
		fprintf(stderr,
			"vmheap-import: %s already exists; vmheap-import never "
			"overwrites a file\n",
			a.out);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	out_fd = make_temp(a.out, &out_base);
	if (out_fd < 0) {
		fprintf(stderr,
			"vmheap-import: cannot create a file next to %s: %s\n",
			a.out, strerror(errno));
		return 2;
	}
	o.from = a.from;
	o.pid = a.pid;
	o.name = in;
	o.read = read_fd;
	o.read_ctx = &in_fd;
	o.out_fd = out_fd;
	want_progress(&a, in_fd, in, &bar, &o);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = vmheap_import(&o, &res);
	vmheap_progress_clear(&bar);
	if (rc == 0 && (fsync(out_fd) < 0 || close(out_fd) < 0)) {
		snprintf(msg, sizeof(msg), "writing %s (as %s): %s", a.out,
			 tmp_name, strerror(errno));
		rc = VMHEAP_EIO;
	} else if (rc < 0) {
		close(out_fd);
	}
	if (rc == 0 && vmheap_file_publish(out_dfd, tmp_name, out_base,
					   VMHEAP_PUBLISH_NOREPLACE) < 0) {
		if (errno == EEXIST)
			snprintf(msg, sizeof(msg),
				 "%s appeared during the import; it was not "
				 "overwritten",
				 a.out);
		else
			snprintf(msg, sizeof(msg), "cannot create %s: %s",
				 a.out, strerror(errno));
		rc = VMHEAP_EIO;
	}
	if (rc < 0) {
		unlinkat(out_dfd, tmp_name, 0);
		tmp_live = 0;
		fprintf(stderr, "vmheap-import: %s\n",
			msg[0]	       ? msg
			: res.error[0] ? res.error
				       : vmheap_strerror(rc));
		return 2;
	}
	tmp_live = 0;
	print_summary(in, a.out, &res, seconds_since(&t0));
	return 0;
}
