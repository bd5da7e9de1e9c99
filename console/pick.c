/*
 * pick.c - find the running agents through their discovery files, list
 * them (--ps), and choose the one to talk to.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "console-internal.h"

static const char start_hint[] = "start a VM with the agent, e.g. `ruby -I "
				 "build/ruby -rvmheap_agent app.rb` "
				 "or `vmheap-sample`, and try again";

struct find_state {
	struct console_agents *agents;
	size_t cap;
	int failed;
	int quiet; /* do not report unusable files */
};

static void found_agent(void *arg, const struct vmheap_agent_info *info)
{
	struct find_state *st = arg;
	struct console_agents *a = st->agents;

	if ((size_t)a->count == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 8;
		struct vmheap_agent_info *items =
		    realloc(a->items, cap * sizeof(*items));
		if (!items) {
			st->failed = 1;
			return;
		}
		a->items = items;
		st->cap = cap;
	}
	a->items[a->count++] = *info;
}

static int owned_by_other_user(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && st.st_uid != geteuid();
}

/* The pid in a discovery file's name, or 0. */
static pid_t pid_of_name(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *digits;
	char *end;
	long pid;

	base = base ? base + 1 : path;
	if (strncmp(base, "vmheap-agent.", 13) != 0)
		return 0;
	digits = base + 13;
	pid = strtol(digits, &end, 10);
	return end != digits && !*end && pid > 0 ? (pid_t)pid : 0;
}

static void bad_file(void *arg, const char *path, const char *why)
{
	struct find_state *st = arg;
	pid_t pid = pid_of_name(path);

	/* In a shared /tmp, other users' agents are none of our business
	 * unless nothing else is found (see console_pick_agent). */
	if (owned_by_other_user(path)) {
		st->agents->foreign++;
		return;
	}
	/* A file of ours left by a dead process is stale, readable or not. */
	if (pid && kill(pid, 0) < 0 && errno == ESRCH && unlink(path) == 0)
		return;
	if (st->quiet)
		return;
	/* The library's reason usually names the file already. */
	if (strstr(why, path))
		fprintf(stderr,
			"vmheap-console: skipped a discovery file: %s\n", why);
	else
		fprintf(stderr,
			"vmheap-console: skipped the discovery file %s: %s\n",
			path, why);
}

static int by_pid(const void *a, const void *b)
{
	const struct vmheap_agent_info *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

int console_agents_find(struct console_agents *agents, const char *tmpdir,
			int quiet)
{
	struct find_state st = {agents, 0, 0, quiet};
	int n;

	memset(agents, 0, sizeof(*agents));
	errno = 0;
	n = vmheap_discovery_list(tmpdir, found_agent, bad_file, &st);
	if (n < 0) {
		fprintf(stderr,
			"vmheap-console: cannot read the discovery directory "
			"%s (%s); "
			"check that it exists or give another with --dir.\n",
			tmpdir,
			n == VMHEAP_AGENT_ESYS && errno
			    ? strerror(errno)
			    : vmheap_agent_strerror(n));
		console_agents_free(agents);
		return -1;
	}
	if (st.failed) {
		fprintf(
		    stderr,
		    "vmheap-console: out of memory while listing agents.\n");
		console_agents_free(agents);
		return -1;
	}
	if (agents->count > 1)
		qsort(agents->items, (size_t)agents->count,
		      sizeof(*agents->items), by_pid);
	if (agents->count) {
		agents->procs =
		    calloc((size_t)agents->count, sizeof(*agents->procs));
		if (!agents->procs) {
			fprintf(stderr, "vmheap-console: out of memory while "
					"listing agents.\n");
			console_agents_free(agents);
			return -1;
		}
	}
	for (int i = 0; i < agents->count; i++)
		console_proc_read(&agents->items[i], &agents->procs[i]);
	return 0;
}

void console_agents_free(struct console_agents *agents)
{
	free(agents->items);
	free(agents->procs);
	agents->items = NULL;
	agents->procs = NULL;
	agents->count = 0;
}

static void print_json(const struct console_agents *agents, FILE *out)
{
	fputc('[', out);
	for (int i = 0; i < agents->count; i++) {
		const struct vmheap_agent_info *a = &agents->items[i];
		const struct console_proc *p = &agents->procs[i];

		fprintf(out,
			"%s{\"pid\":%ld,\"ppid\":%ld,\"uid\":%ld,\"user\":",
			i ? "," : "", (long)a->pid, (long)p->ppid,
			p->uid == (uid_t)-1 ? -1L : (long)p->uid);
		console_json_string(out, p->user, strlen(p->user));
		fputs(",\"vm\":", out);
		console_json_string(out, a->vm, strlen(a->vm));
		fputs(",\"address\":", out);
		console_json_string(out, a->address, strlen(a->address));
		fputs(",\"command\":", out);
		console_json_string(out, p->command, strlen(p->command));
		fputs(",\"argv\":", out);
		console_json_string(out, a->argv, strlen(a->argv));
		fputs(",\"exe\":", out);
		console_json_string(out, a->exe, strlen(a->exe));
		fprintf(out, ",\"started\":%lld,\"discovery\":",
			(long long)a->started);
		console_json_string(out, a->path, strlen(a->path));
		fputc('}', out);
	}
	fputs("]\n", out);
}

/*
 * Print the agents as a table; `numbered` adds a "#" column.  COMMAND is
 * the command line as /proc shows it now (a process title included), and
 * PPID tells a master from its forked workers.
 */
static void print_table(const struct console_agents *agents, FILE *out,
			int numbered, const char *indent)
{
	int cols = numbered ? 7 : 6;
	int rows = agents->count + 1;
	const char **cells = calloc((size_t)(rows * cols), sizeof(*cells));
	char(*nums)[3][24] = calloc((size_t)rows, sizeof(*nums));
	int c = 0;

	if (!cells || !nums) {
		free(cells);
		free(nums);
		return;
	}
	if (numbered)
		cells[c++] = "#";
	cells[c++] = "PID";
	cells[c++] = "PPID";
	cells[c++] = "USER";
	cells[c++] = "VM";
	cells[c++] = "ADDRESS";
	cells[c++] = "COMMAND";
	for (int i = 0; i < agents->count; i++) {
		const struct vmheap_agent_info *a = &agents->items[i];
		const struct console_proc *p = &agents->procs[i];

		snprintf(nums[i][0], sizeof(nums[i][0]), "%d)", i + 1);
		snprintf(nums[i][1], sizeof(nums[i][1]), "%ld", (long)a->pid);
		snprintf(nums[i][2], sizeof(nums[i][2]), "%ld", (long)p->ppid);
		if (numbered)
			cells[c++] = nums[i][0];
		cells[c++] = nums[i][1];
		cells[c++] = nums[i][2];
		cells[c++] = p->user;
		cells[c++] = a->vm;
		cells[c++] = a->address;
		cells[c++] = p->command;
	}
	console_print_table(out, cells, rows, cols, indent);
	free(cells);
	free(nums);
}

void console_agents_print(const struct console_agents *agents, FILE *out,
			  int json)
{
	if (json)
		print_json(agents, out);
	else
		print_table(agents, out, 0, "");
}

/* Why the agent with `pid` is not usable, in one sentence. */
static void explain_missing_pid(const char *tmpdir, pid_t pid)
{
	char path[4096];
	struct vmheap_agent_info info;
	char err[512] = "";
	struct stat st;
	int rc;

	snprintf(path, sizeof(path), "%s/vmheap-agent.%ld", tmpdir, (long)pid);
	if (lstat(path, &st) < 0) {
		fprintf(
		    stderr,
		    "vmheap-console: no agent with pid %ld is running (no %s); "
		    "list the running agents with `vmheap-console --ps`.\n",
		    (long)pid, path);
		return;
	}
	if (st.st_uid != geteuid() && geteuid() == 0) {
		fprintf(stderr,
			"vmheap-console: the discovery file %s is owned by uid "
			"%ld, but process %ld is not that user's (or is gone); "
			"the file is stale or not the agent's: remove it.\n",
			path, (long)st.st_uid, (long)pid);
		return;
	}
	if (st.st_uid != geteuid()) {
		fprintf(stderr,
			"vmheap-console: the VM with pid %ld belongs to "
			"another user "
			"(%s is owned by uid %ld); run vmheap-console as that "
			"user.\n",
			(long)pid, path, (long)st.st_uid);
		return;
	}
	rc = vmheap_discovery_read(path, &info, err, sizeof(err));
	if (rc == 0) {
		/* Readable now: it appeared or went stale while we looked. */
		fprintf(stderr,
			"vmheap-console: the agent with pid %ld is not running "
			"(its discovery file %s is stale); restart the VM.\n",
			(long)pid, path);
		return;
	}
	fprintf(stderr,
		"vmheap-console: cannot use the discovery file of pid %ld: %s; "
		"restart the VM to write a new one.\n",
		(long)pid, *err ? err : vmheap_agent_strerror(rc));
}

void console_print_no_agent(const char *tmpdir, int foreign)
{
	if (foreign && geteuid() == 0)
		fprintf(stderr,
			"vmheap-console: no agent is running (%s holds %d "
			"discovery file%s of other users whose processes are "
			"gone or not theirs); %s.\n",
			tmpdir, foreign, foreign == 1 ? "" : "s", start_hint);
	else if (foreign)
		fprintf(
		    stderr,
		    "vmheap-console: no agent of yours is running (%s holds %d "
		    "discovery file%s of other users: run vmheap-console as "
		    "their "
		    "user, or as root, to reach them); %s.\n",
		    tmpdir, foreign, foreign == 1 ? "" : "s", start_hint);
	else
		fprintf(
		    stderr,
		    "vmheap-console: no agent is running (looked in %s); %s; "
		    "a VM started with another TMPDIR or VMHEAP_AGENT_TMPDIR "
		    "is found with --dir DIR.\n",
		    tmpdir, start_hint);
}

/* Show the numbered list and read a choice; returns an index or -1. */
static int ask_which(const struct console_agents *agents)
{
	char line[64];

	printf("%d agents are running:\n", agents->count);
	print_table(agents, stdout, 1, "  ");
	for (;;) {
		char *end;
		long n;

		printf("Which one? [1-%d]: ", agents->count);
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin)) {
			putchar('\n');
			return -1;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (!*line)
			continue;
		n = strtol(line, &end, 10);
		while (*end == ' ' || *end == ')')
			end++;
		if (end != line && !*end) {
			if (n >= 1 && n <= agents->count)
				return (int)n - 1;
			for (int i = 0; i < agents->count; i++)
				if (agents->items[i].pid == n)
					return i;
		}
		printf("Type a number from 1 to %d (or Ctrl-D to give up).\n",
		       agents->count);
	}
}

int console_pick_agent(const struct console_options *opts, int ask,
		       struct vmheap_agent_info *info)
{
	struct console_agents agents;
	int pick = -1;

	/* With -p, only the file of that pid matters, and
	 * explain_missing_pid() says what is wrong with it. */
	if (console_agents_find(&agents, opts->tmpdir, opts->pid != 0) < 0)
		return -1;
	if (opts->pid) {
		for (int i = 0; i < agents.count; i++)
			if (agents.items[i].pid == opts->pid)
				pick = i;
		if (pick < 0)
			explain_missing_pid(opts->tmpdir, opts->pid);
	} else if (agents.count == 0) {
		console_print_no_agent(opts->tmpdir, agents.foreign);
	} else if (agents.count == 1) {
		pick = 0;
	} else if (ask) {
		pick = ask_which(&agents);
		if (pick < 0)
			fprintf(stderr, "vmheap-console: no agent chosen.\n");
	} else {
		fprintf(stderr, "vmheap-console: %d agents are running (pids",
			agents.count);
		for (int i = 0; i < agents.count; i++)
			fprintf(stderr, "%s %ld", i ? "," : "",
				(long)agents.items[i].pid);
		fprintf(stderr, "); choose one with -p PID.\n");
	}
	if (pick >= 0)
		*info = agents.items[pick];
	console_agents_free(&agents);
	return pick >= 0 ? 0 : -1;
}
