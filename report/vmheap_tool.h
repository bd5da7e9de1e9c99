/*
 * vmheap_tool.h - what every command-line tool (vmheap-histo, -diff, -path,
 * -dominators, -report, -import, -console, -run) prints the same way: its
 * version and a usage error.  Part of the tools' static library
 * (libvmheap-report, report/); vmheap-run, built without the sanitizers,
 * compiles report/tool.c into itself (run/run.mk).
 *
 * The shapes (spec/tools_shape_test.sh checks them for every tool):
 *   --version     "vmheap-TOOL VERSION" on stdout, exit status 0
 *   a bad option  "vmheap-TOOL: WHAT IS WRONG" on stderr, then the usage
 *                 lines, exit status 2
 */
#ifndef VMHEAP_TOOL_H
#define VMHEAP_TOOL_H

/* The version of vmheap, kept in this one place: every tool prints it for
 * --version through vmheap_tool_version(), the Makefile reads it from here
 * (the .pc files, the sample VM), and every binary depends on this file. */
#define VMHEAP_VERSION "0.1.0"

/*
 * Print "PROG VERSION\n" on stdout (PROG is the tool's name, e.g.
 * "vmheap-histo", never argv[0]).  Returns 0, or 1 when stdout could not
 * be written (the exit status for the caller to return).
 */
int vmheap_tool_version(const char *prog);

/*
 * Report a usage error and exit with status 2: "PROG: " and the message
 * made from FMT (printf) on stderr, then USAGE (one or more lines; a
 * final newline is added when it lacks one).  Does not return.
 */
_Noreturn void vmheap_tool_usage_error(const char *prog, const char *usage,
				       const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
