/*
 * vmheap-report - one self-contained HTML file about one or more dumps:
 * a summary, the classes as a bar chart and a table, with several dumps
 * the growth of the top classes and the diff of the first and last, the
 * dominator tree of the last dump with a treemap, the merged paths to the
 * roots of the classes that grew most, and the native sites when the dump
 * has them.
 *
 * Every dump is read and verified before the file is written; the file
 * is written next to its final name and renamed into place, so a failed
 * run leaves no half report.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html-internal.h"
#include "vmheap_files.h"

#define DEFAULT_OUT "vmheap-report.html"

#define PROG "vmheap-report"

static const char usage_line[] =
    "usage: vmheap-report [-o FILE] [--no-graph] DUMP [DUMP...]";

static _Noreturn void help(void)
{
	printf("%s\n\n"
	       "Write one self-contained HTML file (scripts, styles and data "
	       "inside; no\nnetwork) about vmheap dumps, oldest first: a "
	       "summary, the classes of the\nlast dump as a bar chart and a "
	       "sortable, filterable table; with several\ndumps the growth "
	       "of the classes that grew most and the diff of the first\n"
	       "and the last dump (the figures of vmheap-diff); the "
	       "dominator tree of the\nlast dump with a treemap of retained "
	       "size, the merged paths to the roots\nof the classes that grew "
	       "most, and the native (malloc) sites when the\nlast dump has "
	       "them.  Long lists are cut (see the man page).\n\n"
	       "  -o, --output FILE  write the report to FILE (default %s)\n"
	       "  --no-graph         leave out the dominator tree and the "
	       "paths (faster:\n"
	       "                     the heap graph is not built)\n"
	       "  --help             this text\n"
	       "  --version          the version\n\n"
	       "Exit status: 0 success, 2 bad usage, an unreadable, "
	       "truncated or corrupt\ndump, or a report that could not be "
	       "written.\n",
	       usage_line, DEFAULT_OUT);
	exit(0);
}

static void parse_args(int argc, char **argv, struct html_options *o)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"no-graph", no_argument, NULL, 'g'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	memset(o, 0, sizeof(*o));
	o->out = DEFAULT_OUT;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			if (!*optarg)
				vmheap_tool_usage_error(PROG, usage_line, "%s",
							"-o needs a file name");
			o->out = optarg;
			break;
		case 'g':
			o->no_graph = 1;
			break;
		case 'h':
			help();
		case 'V':
			exit(vmheap_tool_version(PROG));
		case ':':
			vmheap_tool_usage_error(
			    PROG, usage_line, "%s needs a value",
			    argv[optind - 1] ? argv[optind - 1] : "");
		default:
			vmheap_tool_usage_error(
			    PROG, usage_line, "unknown option '%s'",
			    argv[optind - 1] ? argv[optind - 1] : "");
		}
	}
	if (argc - optind < 1)
		vmheap_tool_usage_error(PROG, usage_line, "%s",
					"no dump given");
	o->dumps = argv + optind;
	o->ndumps = (size_t)(argc - optind);
	for (size_t k = 0; k < o->ndumps; k++)
		if (!strcmp(o->dumps[k], "-"))
			vmheap_tool_usage_error(
			    PROG, usage_line, "%s",
			    "dumps are read twice: give files, "
			    "not - (stdin)");
}

/* Write sb to `path` through a new temporary file PATH.tmp-RANDOM in
 * path's directory (created with O_EXCL|O_NOFOLLOW through the
 * directory's fd: a name planted there is never followed) and a rename
 * that replaces `path`, never writing through it.  0, or -1 with err
 * set. */
static int write_file(const char *path, const struct vmheap_strbuf *sb,
		      char *err, size_t errsz)
{
	char tmp[NAME_MAX + 1], prefix[NAME_MAX + 1];
	const char *base;
	int dfd, fd, rc = -1;

	dfd = vmheap_dir_open_parent(path, &base);
	if (dfd < 0) {
		snprintf(err, errsz, "cannot open the directory of %s: %s",
			 path, strerror(errno));
		return -1;
	}
	snprintf(prefix, sizeof(prefix), "%.*s.tmp-", NAME_MAX - 22, base);
	fd = vmheap_file_create_temp(dfd, prefix, "", 0644, tmp, sizeof(tmp));
	if (fd < 0) {
		snprintf(err, errsz, "cannot create a temporary file next to "
			 "%s: %s", path, strerror(errno));
		close(dfd);
		return -1;
	}
	if (vmheap_strbuf_write(sb, fd) < 0 || fsync(fd) < 0) {
		snprintf(err, errsz, "writing %s.tmp-*: %s", path,
			 strerror(errno));
		close(fd);
	} else if (close(fd) < 0 ||
		   vmheap_file_publish(dfd, tmp, base,
				       VMHEAP_PUBLISH_REPLACE) < 0) {
		snprintf(err, errsz, "writing %s: %s", path, strerror(errno));
	} else {
		rc = 0;
	}
	if (rc < 0)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	return rc;
}

/* The report's data: {"tool":..., census members, graph members,
 * "native":...}. */
static int build_json(const struct html_options *o, struct html_report *rep,
		      struct vmheap_strbuf *json, char *err, size_t errsz)
{
	struct vmheap_native *n = NULL;
	int rc = html_read_censuses(o, rep, err, errsz);

	if (rc < 0)
		return rc;
	vmheap_strbuf_addf(json, "{\"tool\":\"vmheap-report %s\",",
			   VMHEAP_VERSION);
	html_census_json(rep, json);
	rc = html_suspects_json(o, rep, json, err, errsz);
	if (rc < 0)
		return rc;
	if (o->no_graph) {
		vmheap_strbuf_add(json, ",\"tree\":null,\"paths\":null", 25);
	} else {
		rc = html_graph_json(o, rep, json, err, errsz);
		if (rc < 0)
			return rc;
	}
	vmheap_strbuf_add(json, ",\"sites\":", 9);
	if (vmheap_reader_totals(rep->dumps[rep->ndumps - 1].reader)->sites) {
		rc = html_sites_json(o->dumps[o->ndumps - 1], json, err, errsz);
		if (rc < 0)
			return rc;
	} else {
		vmheap_strbuf_add(json, "null", 4);
	}
	vmheap_strbuf_add(json, ",\"site_growth\":", 15);
	if (o->ndumps > 1 &&
	    vmheap_reader_totals(rep->dumps[rep->ndumps - 1].reader)->sites) {
		rc = html_site_growth_json(o, json, err, errsz);
		if (rc < 0)
			return rc;
	} else {
		vmheap_strbuf_add(json, "null", 4);
	}
	rc = vmheap_reader_native(rep->dumps[rep->ndumps - 1].reader, &n);
	if (rc < 0) {
		snprintf(
		    err, errsz, "%s",
		    vmheap_reader_error(rep->dumps[rep->ndumps - 1].reader));
		return rc;
	}
	vmheap_strbuf_add(json, ",\"native\":", 10);
	rc = html_native_json(n, json);
	if (rc == 0 && rep->ndumps > 1 && n) {
		struct vmheap_native *n0 = NULL;
		rc = vmheap_reader_native(rep->dumps[0].reader, &n0);
		if (rc < 0) {
			snprintf(err, errsz, "%s",
				 vmheap_reader_error(rep->dumps[0].reader));
			vmheap_native_free(n);
			return rc;
		}
		rc = html_native_growth_json(rep, n0, n, json);
		vmheap_native_free(n0);
	} else if (rc == 0)
		rc = html_native_growth_json(rep, NULL, NULL, json);
	vmheap_native_free(n);
	vmheap_strbuf_add(json, "}", 1);
	if (rc == 0 && json->failed)
		rc = VMHEAP_ENOMEM;
	if (rc < 0)
		snprintf(err, errsz, "out of memory for the report");
	return rc;
}

int main(int argc, char **argv)
{
	struct html_options o;
	struct html_report rep = {0};
	struct vmheap_strbuf json = VMHEAP_STRBUF_INIT;
	struct vmheap_strbuf page = VMHEAP_STRBUF_INIT;
	char err[8192], size[64];
	int rc;

	parse_args(argc, argv, &o);
	rc = build_json(&o, &rep, &json, err, sizeof(err));
	if (rc == 0) {
		html_page(&page, &json);
		if (page.failed) {
			snprintf(err, sizeof(err),
				 "out of memory for the report");
			rc = VMHEAP_ENOMEM;
		}
	}
	if (rc == 0)
		rc = write_file(o.out, &page, err, sizeof(err));
	html_report_release(&rep);
	vmheap_strbuf_release(&json);
	if (rc != 0) {
		vmheap_strbuf_release(&page);
		fprintf(stderr, "vmheap-report: %s\n", err);
		return 2;
	}
	vmheap_format_bytes(size, sizeof(size), page.len);
	printf("report written: %s, %s, %zu dump%s\n", o.out, size, o.ndumps,
	       o.ndumps == 1 ? "" : "s");
	vmheap_strbuf_release(&page);
	return 0;
}
