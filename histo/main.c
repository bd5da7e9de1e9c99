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

static const char usage_line[] =
    "usage: vmheap-histo [--sort count|bytes|name] [--top N] "
    "[--format text|json|csv] [--kind] [--threads N] DUMP";

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "vmheap-histo: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s\n", usage_line);
	exit(2);
}

static void help(void)
{
	printf("%s\n\n"
	       "Print objects and bytes per class of a vmheap dump (DUMP may "
	       "be - for stdin).\n\n"
	       "  --sort KEY     count (default), bytes or name\n"
	       "  --top N        print only the first N rows\n"
	       "  --format FMT   text (default), json or csv\n"
	       "  --kind         group by object kind instead of class\n"
	       "  --threads N    decoding threads (default: 2 on a "
	       "multiprocessor)\n"
	       "  --no-progress  never draw a progress bar\n"
	       "  --help         this text\n\n"
	       "Exit status: 0 success, 2 bad usage or an unreadable, "
	       "truncated or corrupt dump.\n",
	       usage_line);
	exit(0);
}

static unsigned long parse_count(const char *opt, const char *arg,
				 unsigned long max)
{
	char *end;
	if (!*arg || *arg == '-' || *arg == '+')
		usage_error(opt, arg);
	unsigned long v = strtoul(arg, &end, 10);
	if (*end || v == 0 || v > max)
		usage_error(opt, arg);
	return v;
}

static void parse_args(int argc, char **argv, struct histo_options *o)
{
	static const struct option longopts[] = {
	    {"sort", required_argument, NULL, 's'},
	    {"top", required_argument, NULL, 't'},
	    {"format", required_argument, NULL, 'f'},
	    {"kind", no_argument, NULL, 'k'},
	    {"threads", required_argument, NULL, 'j'},
	    {"no-progress", no_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	memset(o, 0, sizeof(*o));
	o->progress = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "hk", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (vmheap_sort_parse(optarg, &o->sort) < 0)
				usage_error("unknown sort key '%s' (use count, "
					    "bytes or name)",
					    optarg);
			break;
		case 't':
			o->top = parse_count(
			    "--top needs a positive number, not '%s'", optarg,
			    (unsigned long)-1 >> 1);
			break;
		case 'f':
			if (vmheap_output_format_parse(optarg, &o->format) < 0)
				usage_error("unknown format '%s' (use text, "
					    "json or csv)",
					    optarg);
			break;
		case 'k':
			o->by_kind = 1;
			break;
		case 'j':
			o->threads = (unsigned)parse_count(
			    "--threads needs a number from 1 to 64, not "
			    "'%s'",
			    optarg, 64);
			break;
		case 'P':
			o->progress = 0;
			break;
		case 'h':
			help();
			break;
		default:
			usage_error("unknown or incomplete option '%s'",
				    argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		usage_error("%s", argc - optind < 1
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
	int rc = histo_run(&o, &out, err, sizeof(err));
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
