/*
 * tool_options.c - the option loop of the graph tools: getopt_long() with
 * the shared options applied (part of libvmheap-report).
 */
#include <getopt.h>
#include <stdio.h>

#include "vmheap_report.h"

int vmheap_report_getopt(int argc, char **argv, const struct option *longopts,
			 struct vmheap_report_options *o, char *msg,
			 size_t msgsz)
{
	int ch, i;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", longopts, &i)) == 'R')
		if (vmheap_report_option(o, longopts[i].name, optarg, msg,
					 msgsz) < 0)
			return '?';
	if (ch == '?' || ch == ':')
		snprintf(msg, msgsz, "unknown or incomplete option '%s'",
			 argv[optind - 1]);
	return ch == ':' ? '?' : ch;
}
