/*
 * main.c - vmheap-console's command line: read the options, find the
 * agent, and hand over to -e, stdin or the interactive prompt.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach-internal.h"
#include "console-internal.h"

/* How long --attach waits for an injected agent's discovery file. */
#define ATTACH_TIMEOUT_MS 30000

#define PROG "vmheap-console"

/* clang-format off */
static const char usage_lines[] =
	"usage: vmheap-console [-p PID] [--dir DIR] [--json] [-e COMMAND]...\n"
	"       vmheap-console --attach PID [--json] [-e COMMAND]...\n"
	"       vmheap-console --ps [--dir DIR] [--json]\n";

static void help(void)
{
	printf("%s"
		"\n"
		"Talk to a VM running the vmheap agent.  With no -e and a terminal,\n"
		"opens a prompt named after the VM (`ruby 4242> `); without a terminal,\n"
		"reads commands from stdin, one a line.\n"
		"\n"
		"  -p, --pid PID     the agent of this process (default: the only one,\n"
		"                    or ask when several are running)\n"
		"  -e, --eval CMD    run CMD and exit (repeatable); exit status 0 when\n"
		"                    all succeed, 1 on a command error, 2 when the VM\n"
		"                    cannot be reached\n"
		"      --attach PID  the agent of this process; when it runs none,\n"
		"                    load one into it (MRI Ruby 3.1, with ptrace)\n"
		"      --ps          list the running agents\n"
		"      --json        print reply values as JSON\n"
		"      --dir DIR     where discovery files are (default:\n"
		"                    $VMHEAP_AGENT_TMPDIR, else $TMPDIR, else /tmp);\n"
		"                    --tmpdir is the same\n"
		"  -h, --help        this text\n"
		"      --version     the version\n"
		"\n"
		"Commands: get VAR, set VAR VALUE, list [PREFIX], VAR, help, exit.\n",
		usage_lines);
}
/* clang-format on */

static int parse_pid(const char *arg, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > INT_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static const char *default_tmpdir(void)
{
	const char *dir = getenv("VMHEAP_AGENT_TMPDIR");

	if (dir && *dir)
		return dir;
	return vmheap_discovery_default_dir();
}

static int list_agents(const struct console_options *opts)
{
	struct console_agents agents;

	if (console_agents_find(&agents, opts->tmpdir, 0) < 0)
		return CONSOLE_ECONNECT;
	if (agents.count == 0 && !opts->json)
		console_print_no_agent(opts->tmpdir, agents.foreign);
	else
		console_agents_print(&agents, stdout, opts->json);
	console_agents_free(&agents);
	return CONSOLE_OK;
}

/* --attach: reuse or load the agent, then read its directory. */
static int attach(struct console_options *opts, char *dir, size_t len)
{
	char err[1024];
	int injected;

	if (attach_agent(opts->pid, ATTACH_TIMEOUT_MS, dir, len, &injected,
			 err, sizeof(err)) < 0) {
		fprintf(stderr, "vmheap-console: cannot attach to pid %ld: %s.\n",
			(long)opts->pid, err);
		return -1;
	}
	if (injected)
		fprintf(stderr, "vmheap-console: loaded the agent into pid %ld.\n",
			(long)opts->pid);
	opts->tmpdir = dir;
	return 0;
}

static int run(struct console_options *opts)
{
	struct vmheap_agent_info info;
	struct console_session session;
	int interactive = isatty(STDIN_FILENO);
	int status;
	static char attach_dir[PATH_MAX + 64];

	if (opts->attach && attach(opts, attach_dir, sizeof(attach_dir)) < 0)
		return CONSOLE_ECONNECT;
	if (opts->ps)
		return list_agents(opts);
	if (console_pick_agent(opts, opts->ncommands == 0 && interactive,
			       &info) < 0)
		return CONSOLE_ECONNECT;
	if (console_session_open(&session, &info) < 0)
		return CONSOLE_ECONNECT;
	if (opts->ncommands)
		status = console_script_commands(&session, opts);
	else if (!interactive)
		status = console_script_stream(&session, stdin, opts);
	else
		status = console_repl(&session, opts);
	console_session_close(&session);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"eval", required_argument, NULL, 'e'},
	    {"ps", no_argument, NULL, 'P'},
	    {"attach", required_argument, NULL, 'A'},
	    {"json", no_argument, NULL, 'j'},
	    {"tmpdir", required_argument, NULL, 't'},
	    {"dir", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct console_options opts = {0};
	int c, status;

	opts.commands = calloc((size_t)argc, sizeof(*opts.commands));
	if (!opts.commands) {
		fprintf(stderr, "vmheap-console: out of memory\n");
		return CONSOLE_ECONNECT;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:e:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pid(optarg, &opts.pid) < 0)
				vmheap_tool_usage_error(
				    PROG, usage_lines,
				    "-p needs a process id, not '%s'", optarg);
			break;
		case 'A':
			if (parse_pid(optarg, &opts.pid) < 0)
				vmheap_tool_usage_error(
				    PROG, usage_lines,
				    "--attach needs a process id, not '%s'",
				    optarg);
			opts.attach = 1;
			break;
		case 'e':
			opts.commands[opts.ncommands++] = optarg;
			break;
		case 'P':
			opts.ps = 1;
			break;
		case 'j':
			opts.json = 1;
			break;
		case 't':
			opts.tmpdir = optarg;
			break;
		case 'h':
			help();
			free(opts.commands);
			return 0;
		case 'V':
			free(opts.commands);
			return vmheap_tool_version(PROG);
		default:
			free(opts.commands);
			vmheap_tool_usage_error(PROG, usage_lines,
						"unknown or incomplete option "
						"'%s'",
						argv[optind - 1]);
		}
	}
	if (optind < argc)
		vmheap_tool_usage_error(PROG, usage_lines,
					"unexpected argument '%s'; commands "
					"go after -e",
					argv[optind]);
	if (opts.attach && opts.ps) {
		fprintf(stderr,
			"vmheap-console: --attach and --ps do not go together.\n");
		free(opts.commands);
		return CONSOLE_ECONNECT;
	}
	if (!opts.tmpdir)
		opts.tmpdir = default_tmpdir();

	/* A VM that goes away must give an error, not kill the console. */
	signal(SIGPIPE, SIG_IGN);

	status = run(&opts);
	free(opts.commands);
	return status;
}
