/*
 * pprof_harness-internal.h - helpers of the pprof suite (pprof_harness.c):
 * a program under vmheap-run (the leaker, real ruby) driven on its
 * standard input and dumped through vmheap-console, the tools run on its
 * dumps, and `go tool pprof`'s output read.  Each helper fails the test
 * when what it waits for does not come.
 */
#ifndef PPROF_HARNESS_INTERNAL_H
#define PPROF_HARNESS_INTERNAL_H

#include <stddef.h>

#include "lib/vmheap_spec.h"

/* A program under test: struct spec_native (spec/lib), started with
 * spec_native_start. */

/* vmheap-console -p PID -e CMD; fails unless it succeeds. */
void pprof_console(struct spec_native *v, const char *cmd);

/* Send a command line, wait for its "ok". */
void pprof_say(struct spec_native *v, const char *cmd);

/* Dump v into v->dir/name through the console (a forked dump). */
void pprof_dump(struct spec_native *v, const char *name);

/* Run a tool (opts: its argv up to the dumps, NULL-terminated) on dumps
 * of v->dir (NULL-terminated names), its stdout into v->dir/out (out may
 * be NULL); the exit status, stderr in err (may be NULL). */
int pprof_tool_to(struct spec_native *v, const char *out,
		  const char *const *opts, const char *const *dumps, char *err,
		  size_t errsz);

/* `go tool pprof ARGS... v->dir/file` (ARGS NULL-terminated): its stdout
 * (free it); fails unless pprof succeeds. */
char *pprof_run(struct spec_native *v, const char *file, ...);

/* The first row of `go tool pprof -top` output (after its header). */
const char *pprof_top_row(const char *out);

/* The row of `-top` output naming `what`, or NULL. */
const char *pprof_row_of(const char *out, const char *what);

/* Fails unless v->dir/file starts as a gzip stream. */
void pprof_gzip_magic(struct spec_native *v, const char *file);

#endif
