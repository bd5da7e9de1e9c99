/*
 * tool.c - the programs of the build run to completion: the one way a
 * test runs vmheap-histo, vmheap-diff, ... (see vmheap_spec.h).
 */
#include <check.h>
#include <string.h>

#include "vmheap_spec.h"

/* spec_bin(name) and args into argv[64] */
static void tool_argv(const char **argv, const char *name,
		      const char *const *args)
{
	size_t n = 0;

	argv[n++] = spec_bin(name);
	for (; args && *args; args++) {
		ck_assert_msg(n < 63, "%s: more than 62 arguments", name);
		argv[n++] = *args;
	}
	argv[n] = NULL;
}

struct spec_run spec_tool_with(const char *name, const char *const *args,
			       const struct spec_tool_opts *o)
{
	static const struct spec_tool_opts none;
	const char *argv[64];
	struct spec_spawn sp = {0};
	struct spec_run r;
	int timeout_ms;

	if (!o)
		o = &none;
	timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : SPEC_TOOL_TIMEOUT_MS;
	tool_argv(argv, name, args);
	sp.argv = argv;
	sp.env = o->env;
	sp.stdin_path = o->stdin_path;
	ck_assert_msg(
	    spec_run_spawn(&sp, o->input, o->stderr_tty, timeout_ms, &r) == 0,
	    "cannot start %s", argv[0]);
	ck_assert_msg(r.status != -1, "%s ran for more than %d ms: %s%s", name,
		      timeout_ms, r.out, r.err);
	ck_assert_msg(r.status != 127, "cannot run %s: %s", argv[0], r.err);
	return r;
}

struct spec_run spec_tool(const char *name, const char *const *args)
{
	return spec_tool_with(name, args, NULL);
}

struct spec_run spec_tool_ok(const char *name, const char *const *args)
{
	struct spec_run r = spec_tool(name, args);

	ck_assert_msg(r.status == 0, "%s exited %d: %s%s", name, r.status,
		      r.out, r.err);
	return r;
}

char *spec_tool_stdout(const char *name, const char *const *args,
		       int timeout_ms)
{
	struct spec_tool_opts o = {.timeout_ms = timeout_ms};
	struct spec_run r = spec_tool_with(name, args, &o);
	char *out;

	ck_assert_msg(r.status == 0, "%s exited %d: %s%s", name, r.status,
		      r.out, r.err);
	out = r.out;
	r.out = NULL;
	spec_run_free(&r);
	return out;
}
