/*
 * pprof_harness.c - what the pprof suite's tests share: a program under
 * vmheap-run driven line by line on its standard input and dumped
 * through vmheap-console, the tools run on its dumps, and Debian's
 * `go tool pprof` read back (spec/pprof_test.c, spec/report_holdout_test.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof_harness-internal.h"

void pprof_console(struct spec_native *v, const char *cmd)
{
	char pid[32];
	struct spec_run o;
	snprintf(pid, sizeof pid, "%d", (int)v->p.pid);
	const char *argv[] = {spec_bin("vmheap-console"),
			      "-p",
			      pid,
			      "--tmpdir",
			      v->dir,
			      "--json",
			      "-e",
			      cmd,
			      NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 30000, &o), 0);
	ck_assert_msg(o.status == 0, "%s: %s%s", cmd, o.out, o.err);
	spec_run_free(&o);
}

/* Start argv (vmheap-run ...) in v->dir, wait for "ready" and the agent. */
/* Send a command line, wait for its "ok". */
void pprof_say(struct spec_native *v, const char *cmd)
{
	v->p.len = 0;
	v->p.buf[0] = '\0';
	spec_proc_write(&v->p, cmd);
	spec_proc_write(&v->p, "\n");
	ck_assert_msg(spec_proc_wait_for(&v->p, "ok\n", 60000), "%s", v->p.buf);
}

void pprof_dump(struct spec_native *v, const char *name)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "set system.memory.dump %s", name);
	pprof_console(v, cmd);
}

/* Run a tool on dumps of v->dir (argv: the tool's options then NULL,
 * dumps appended from `dumps`), its stdout into v->dir/out; the exit
 * status, stderr in err (may be NULL). */
int pprof_tool_to(struct spec_native *v, const char *out,
		  const char *const *opts, const char *const *dumps, char *err,
		  size_t errsz)
{
	const char *argv[16];
	char paths[6][700];
	size_t k = 0;
	for (size_t i = 0; opts[i]; i++)
		argv[k++] = opts[i];
	for (size_t i = 0; dumps[i] && i < 6; i++) {
		snprintf(paths[i], sizeof paths[i], "%s/%s", v->dir, dumps[i]);
		argv[k++] = paths[i];
	}
	argv[k] = NULL;
	struct spec_run o;
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &o), 0);
	if (out) {
		char path[700];
		snprintf(path, sizeof path, "%s/%s", v->dir, out);
		spec_write_file(path, o.out, o.out_len);
	}
	if (err)
		snprintf(err, errsz, "%s", o.err);
	int status = o.status;
	spec_run_free(&o);
	return status;
}

/* `go tool pprof ARGS... v->dir/file` (ARGS NULL-terminated): its
 * stdout (free it). */
char *pprof_run(struct spec_native *v, const char *file, ...)
{
	char path[700], home[600], tmp[600], all[512] = "";
	const char *argv[16] = {"go", "tool", "pprof"};
	size_t k = 3;
	va_list ap;
	va_start(ap, file);
	for (const char *a; (a = va_arg(ap, const char *)) && k < 14;) {
		argv[k++] = a;
		snprintf(all + strlen(all), sizeof all - strlen(all), " %s", a);
	}
	va_end(ap);
	snprintf(path, sizeof path, "%s/%s", v->dir, file);
	argv[k++] = path;
	argv[k] = NULL;
	snprintf(home, sizeof home, "HOME=%s", v->dir);
	snprintf(tmp, sizeof tmp, "PPROF_TMPDIR=%s", v->dir);
	const char *env[] = {home, tmp, "PPROF_BINARY_PATH", NULL};
	struct spec_run o;
	ck_assert_msg(spec_run(argv, env, NULL, 120000, &o) == 0,
		      "go tool pprof did not start (make deps: golang-go)");
	ck_assert_msg(o.status == 0, "go tool pprof%s %s: %.2000s%.2000s", all,
		      file, o.out, o.err);
	char *s = strdup(o.out);
	spec_run_free(&o);
	return s;
}

/* The first row of `go tool pprof -top` output (after the header line
 * "      flat  flat%   sum%        cum   cum%"). */
const char *pprof_top_row(const char *out)
{
	const char *h = strstr(out, "flat  flat%");
	ck_assert_msg(h != NULL, "%s", out);
	const char *nl = strchr(h, '\n');
	ck_assert_ptr_nonnull(nl);
	return nl + 1;
}

/* The row of `-top` output naming `what`, or NULL. */
const char *pprof_row_of(const char *out, const char *what)
{
	for (const char *l = pprof_top_row(out); l && *l;) {
		const char *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l) : strlen(l);
		const char *w = strstr(l, what);
		if (w && (size_t)(w - l) < len)
			return l;
		l = eol ? eol + 1 : NULL;
	}
	return NULL;
}

void pprof_gzip_magic(struct spec_native *v, const char *file)
{
	char path[700];
	size_t len;
	snprintf(path, sizeof path, "%s/%s", v->dir, file);
	unsigned char *b = (unsigned char *)spec_read_file(path, &len);
	ck_assert_msg(len > 20 && b[0] == 0x1f && b[1] == 0x8b,
		      "%s is not gzip (%zu bytes)", file, len);
	free(b);
}
