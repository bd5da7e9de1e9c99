/*
 * vmheap-run - start a program with the malloc tracker preloaded.
 *
 *   vmheap-run [--track] [--record TRACE] [--] COMMAND [ARGS...]
 *
 * It appends libvmheap-malloc.so to LD_PRELOAD (after any preload the
 * user already has) and, when COMMAND is a ruby, adds `-I DIR
 * -rvmheap_agent` to RUBYOPT so that the VM also runs the agent, with no
 * change to the app; it sets VMHEAP_RUN_PID to its own pid (COMMAND keeps
 * it: vmheap-run executes it in its own place), for the rule that names
 * each process's files (native/output_name.c), and with --record,
 * VMHEAP_NATIVE_RECORD to TRACE made absolute; then it executes COMMAND.  The
 * library is $VMHEAP_MALLOC_LIB, else ../lib/libvmheap-malloc.so next to
 * this program (build/bin -> build/lib, PREFIX/bin -> PREFIX/lib).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmheap_tool.h"

#define PROG "vmheap-run"

static const char usage[] =
	"usage: vmheap-run [--track] [--record TRACE] [--] COMMAND "
	"[ARGS...]\n"
	"Run COMMAND with the vmheap malloc tracker (libvmheap-malloc.so)\n"
	"preloaded, tracking off until the console says\n"
	"`set config.native.track true`.  A ruby COMMAND also loads the\n"
	"vmheap agent (through RUBYOPT).\n"
	"\n"
	"  --track   track from the start (VMHEAP_NATIVE_TRACK=1)\n"
	"  --record TRACE  record every malloc-family call into the trace\n"
	"            TRACE (format/TRACE.md; a forked child writes TRACE.PID)\n"
	"  --help    this text\n"
	"  --version the version\n"
	"\n"
	"Environment: VMHEAP_MALLOC_LIB (the tracker library),\n"
	"VMHEAP_NATIVE_DEPTH (frames per site, 1-32, default 16).\n";

/* The directory of this program, resolved (no trailing slash). */
static int self_dir(char *out, size_t cap)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	if ((size_t)snprintf(out, cap, "%s", dirname(exe)) >= cap)
		return -1;
	return 0;
}

/* NAME=old + sep + add (or add alone). */
static int append_env(const char *name, const char *sep, const char *add)
{
	const char *old = getenv(name);
	if (old == NULL || old[0] == '\0')
		return setenv(name, add, 1);
	size_t len = strlen(old) + strlen(sep) + strlen(add) + 1;
	char *v = malloc(len);
	if (v == NULL)
		return -1;
	snprintf(v, len, "%s%s%s", old, sep, add);
	int r = setenv(name, v, 1);
	free(v);
	return r;
}

/* FILE made absolute from the working directory now (the program may
 * change its own). */
static int absolute_path(const char *opt, const char *file, char *out,
			 size_t cap)
{
	char cwd[PATH_MAX];
	if (file[0] == '/') {
		if ((size_t)snprintf(out, cap, "%s", file) < cap)
			return 0;
	} else if (getcwd(cwd, sizeof cwd) == NULL) {
		fprintf(stderr, "vmheap-run: %s %s: the working directory: %s\n",
			opt, file, strerror(errno));
		return -1;
	} else if ((size_t)snprintf(out, cap, "%s/%s", cwd, file) < cap) {
		return 0;
	}
	fprintf(stderr, "vmheap-run: %s %s: the name is too long\n", opt,
		file);
	return -1;
}

static int is_ruby(const char *cmd)
{
	const char *base = strrchr(cmd, '/');
	base = base != NULL ? base + 1 : cmd;
	return strncmp(base, "ruby", 4) == 0;
}

int main(int argc, char **argv)
{
	int i = 1, track = 0;
	const char *record = NULL;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (strcmp(argv[i], "--track") == 0) {
			track = 1;
		} else if (strcmp(argv[i], "--record") == 0 ||
			   strncmp(argv[i], "--record=", 9) == 0) {
			if (argv[i][8] == '=')
				record = argv[i] + 9;
			else if (i + 1 < argc)
				record = argv[++i];
			if (record == NULL || record[0] == '\0')
				vmheap_tool_usage_error(PROG, usage,
							"--record needs a TRACE");
		} else if (strcmp(argv[i], "--help") == 0 ||
			   strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		} else if (strcmp(argv[i], "--version") == 0) {
			return vmheap_tool_version(PROG);
		} else {
			vmheap_tool_usage_error(PROG, usage,
						"unknown option '%s'", argv[i]);
		}
	}
	if (i >= argc)
		vmheap_tool_usage_error(PROG, usage, "no command given");

	char dir[PATH_MAX], lib[PATH_MAX + 64], ext[PATH_MAX + 64],
		trace[PATH_MAX], pid[24];
	if (self_dir(dir, sizeof dir) != 0) {
		fprintf(stderr, "vmheap-run: cannot find its own directory "
				"(/proc/self/exe)\n");
		return 2;
	}
	const char *env_lib = getenv("VMHEAP_MALLOC_LIB");
	if (env_lib != NULL && env_lib[0] != '\0')
		snprintf(lib, sizeof lib, "%s", env_lib);
	else
		snprintf(lib, sizeof lib, "%s/../lib/libvmheap-malloc.so", dir);
	if (access(lib, R_OK) != 0) {
		fprintf(stderr, "vmheap-run: the tracker library %s is missing "
				"(%s); build it with make, or set "
				"VMHEAP_MALLOC_LIB\n", lib, strerror(errno));
		return 2;
	}
	if (strpbrk(lib, ": ") != NULL) {
		fprintf(stderr, "vmheap-run: %s: LD_PRELOAD cannot hold a path "
				"with a colon or a space\n", lib);
		return 2;
	}
	if (record != NULL &&
	    absolute_path("--record", record, trace, sizeof trace) != 0)
		return 2;
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	if (append_env("LD_PRELOAD", ":", lib) != 0 ||
	    (track && setenv("VMHEAP_NATIVE_TRACK", "1", 1) != 0) ||
	    setenv("VMHEAP_RUN_PID", pid, 1) != 0 ||
	    (record ? setenv("VMHEAP_NATIVE_RECORD", trace, 1)
		    : unsetenv("VMHEAP_NATIVE_RECORD")) != 0) {
		fprintf(stderr, "vmheap-run: cannot set the environment\n");
		return 2;
	}
	if (is_ruby(argv[i])) {
		/* The build tree's extension, else the installed one (on
		 * ruby's load path). */
		char opt[2 * PATH_MAX + 64];
		snprintf(ext, sizeof ext, "%s/../ruby/vmheap_agent.so", dir);
		if (access(ext, R_OK) == 0 && strchr(dir, ' ') == NULL)
			snprintf(opt, sizeof opt, "-I%s/../ruby -rvmheap_agent",
				 dir);
		else
			snprintf(opt, sizeof opt, "-rvmheap_agent");
		if (append_env("RUBYOPT", " ", opt) != 0) {
			fprintf(stderr, "vmheap-run: cannot set RUBYOPT\n");
			return 2;
		}
	}
	execvp(argv[i], &argv[i]);
	fprintf(stderr, "vmheap-run: cannot run %s: %s\n", argv[i],
		strerror(errno));
	return 127;
}
