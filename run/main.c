/*
 * vmheap-run - start a program with the malloc tracker preloaded.
 *
 *   vmheap-run [--track] [--record TRACE] [--output FILE] [--no-agent] [--]
 *              COMMAND [ARGS...]
 *
 * It appends libvmheap-malloc.so and libvmheap-native-agent.so (the agent
 * for any program: hosts/native) to LD_PRELOAD (after any preload the
 * user already has), sets VMHEAP_RUN_PID to its own pid (COMMAND keeps it:
 * vmheap-run executes it in its own place) and, with --output,
 * VMHEAP_RUN_OUTPUT to FILE made absolute, which each process writes its
 * dump to at exit (the name rule: native/output_name.c, vmheap-run(1)
 * FILES); with --record, VMHEAP_NATIVE_RECORD to TRACE made absolute.
 * When COMMAND is a ruby, it adds `-I DIR -rvmheap_agent` to
 * RUBYOPT so that the VM runs the Ruby agent, with no change to the app
 * (that agent then takes the native one's place).  The libraries are
 * $VMHEAP_MALLOC_LIB and $VMHEAP_NATIVE_AGENT_LIB, else
 * ../lib/libvmheap-malloc.so and ../lib/libvmheap-native-agent.so next to
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
	"usage: vmheap-run [--track] [--record TRACE] [--output FILE] "
	"[--no-agent] [--] COMMAND [ARGS...]\n"
	"Run COMMAND with the vmheap malloc tracker (libvmheap-malloc.so)\n"
	"and an agent (libvmheap-native-agent.so) preloaded, tracking off\n"
	"until the console says `set config.native.track true`.  A ruby\n"
	"COMMAND loads the Ruby agent instead (through RUBYOPT).\n"
	"\n"
	"  --track        track from the start (VMHEAP_NATIVE_TRACK=1)\n"
	"  --record TRACE record every malloc-family call into the trace\n"
	"                 TRACE (format/TRACE.md; others TRACE.PID)\n"
	"  --output FILE  each process writes a dump (native section, leak\n"
	"                 scan) at exit: the first to FILE, others FILE.PID\n"
	"                 (%p in FILE: the pid, in every process)\n"
	"  --no-agent     no agent for the console (VMHEAP_RUN_AGENT=0)\n"
	"  --help         this text\n"
	"  --version      the version\n"
	"\n"
	"Environment: VMHEAP_MALLOC_LIB (the tracker library),\n"
	"VMHEAP_NATIVE_AGENT_LIB (the agent library), VMHEAP_NATIVE_DEPTH\n"
	"(frames per site, 1-32, default 16), VMHEAP_AGENT_* (the agent's).\n";

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

/* A library to preload: $VAR, else DIR/../lib/NAME; it must be readable
 * and fit in LD_PRELOAD.  0, or -1 after saying why on stderr. */
static int library(char *out, size_t cap, const char *var, const char *dir,
		   const char *name)
{
	const char *env = getenv(var);
	if (env != NULL && env[0] != '\0')
		snprintf(out, cap, "%s", env);
	else
		snprintf(out, cap, "%s/../lib/%s", dir, name);
	if (access(out, R_OK) != 0) {
		fprintf(stderr, "vmheap-run: the %s library %s is missing "
				"(%s); build it with make, or set %s\n",
			strcmp(var, "VMHEAP_MALLOC_LIB") == 0 ? "tracker"
							      : "agent",
			out, strerror(errno), var);
		return -1;
	}
	if (strpbrk(out, ": ") != NULL) {
		fprintf(stderr, "vmheap-run: %s: LD_PRELOAD cannot hold a path "
				"with a colon or a space\n", out);
		return -1;
	}
	return 0;
}

static int is_ruby(const char *cmd)
{
	const char *base = strrchr(cmd, '/');
	base = base != NULL ? base + 1 : cmd;
	return strncmp(base, "ruby", 4) == 0;
}

int main(int argc, char **argv)
{
	int i = 1, track = 0, no_agent = 0;
	const char *output = NULL, *record = NULL;
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
		} else if (strcmp(argv[i], "--no-agent") == 0) {
			no_agent = 1;
		} else if (strcmp(argv[i], "--output") == 0 ||
			   strncmp(argv[i], "--output=", 9) == 0) {
			if (argv[i][8] == '=')
				output = argv[i] + 9;
			else if (i + 1 < argc)
				output = argv[++i];
			else
				vmheap_tool_usage_error(PROG, usage,
							"--output needs a FILE");
			if (output[0] == '\0')
				vmheap_tool_usage_error(PROG, usage,
							"--output needs a FILE");
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

	char dir[PATH_MAX], lib[PATH_MAX + 64], agent[PATH_MAX + 64],
		ext[PATH_MAX + 64], out[PATH_MAX], trace[PATH_MAX], pid[24];
	if (self_dir(dir, sizeof dir) != 0) {
		fprintf(stderr, "vmheap-run: cannot find its own directory "
				"(/proc/self/exe)\n");
		return 2;
	}
	if (library(lib, sizeof lib, "VMHEAP_MALLOC_LIB", dir,
		    "libvmheap-malloc.so") != 0 ||
	    ((!no_agent || output) &&
		     library(agent, sizeof agent, "VMHEAP_NATIVE_AGENT_LIB", dir,
			     "libvmheap-native-agent.so") != 0))
		return 2;
	if (output != NULL &&
	    absolute_path("--output", output, out, sizeof out) != 0)
		return 2;
	if (record != NULL &&
	    absolute_path("--record", record, trace, sizeof trace) != 0)
		return 2;
	snprintf(pid, sizeof pid, "%ld", (long)getpid());
	if (append_env("LD_PRELOAD", ":", lib) != 0 ||
	    ((!no_agent || output) && append_env("LD_PRELOAD", ":", agent) != 0) ||
	    (track && setenv("VMHEAP_NATIVE_TRACK", "1", 1) != 0) ||
	    setenv("VMHEAP_RUN_PID", pid, 1) != 0 ||
	    (no_agent ? setenv("VMHEAP_RUN_AGENT", "0", 1)
		      : unsetenv("VMHEAP_RUN_AGENT")) != 0 ||
	    (output ? setenv("VMHEAP_RUN_OUTPUT", out, 1)
		    : unsetenv("VMHEAP_RUN_OUTPUT")) != 0 ||
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
