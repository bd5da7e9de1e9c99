/*
 * repl.c - the interactive prompt: libedit line editing, history kept in
 * ~/.vmheap_history (plain text, one command a line), and tab completion
 * of command words and the agent's variable names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include "console-internal.h"
#include "vmheap_files.h"

#define HISTORY_KEEP 1000

/* Completion needs these; readline's callbacks take no context. */
static char **var_names;

static const char *history_path(char *buf, size_t len)
{
	const char *home = getenv("HOME");

	if (!home || !*home) {
		struct passwd *pw = getpwuid(getuid());

		home = pw ? pw->pw_dir : NULL;
	}
	if (!home)
		return NULL;
	snprintf(buf, len, "%s/.vmheap_history", home);
	return buf;
}

/* Rewrite the history file with its last HISTORY_KEEP lines, through a
 * fresh temporary file next to it (libvmheap-files: O_EXCL|O_NOFOLLOW in
 * the directory opened once) and a rename. */
static void trim_history_file(const char *path, char **lines, size_t n)
{
	char tmp[NAME_MAX + 1];
	size_t from = n > HISTORY_KEEP ? n - HISTORY_KEEP : 0;
	const char *base;
	FILE *f;
	int dfd, fd;

	dfd = vmheap_dir_open_parent(path, &base);
	if (dfd < 0)
		return;
	fd = vmheap_file_create_temp(dfd, ".vmheap_history.", ".tmp", 0600, tmp,
				     sizeof(tmp));
	if (fd < 0) {
		close(dfd);
		return;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlinkat(dfd, tmp, 0);
		close(dfd);
		return;
	}
	for (size_t i = from; i < n; i++)
		fprintf(f, "%s\n", lines[i]);
	if (fclose(f) != 0 ||
	    vmheap_file_publish(dfd, tmp, base, VMHEAP_PUBLISH_REPLACE) != 0)
		unlinkat(dfd, tmp, 0);
	close(dfd);
}

static void load_history(const char *path)
{
	FILE *f = fopen(path, "r");
	char **lines = NULL;
	size_t n = 0, cap = 0;
	char *line = NULL;
	size_t linecap = 0;
	ssize_t len;

	if (!f)
		return;
	while ((len = getline(&line, &linecap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			char **nl = realloc(lines, ncap * sizeof(*nl));

			if (!nl)
				break;
			lines = nl;
			cap = ncap;
		}
		lines[n] = strdup(line);
		if (!lines[n])
			break;
		n++;
	}
	free(line);
	fclose(f);
	for (size_t i = n > HISTORY_KEEP ? n - HISTORY_KEEP : 0; i < n; i++)
		add_history(lines[i]);
	if (n > 2 * HISTORY_KEEP)
		trim_history_file(path, lines, n);
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

/* Append one command to the history file at once, so that it survives
 * whatever ends the session. */
static void save_history_line(const char *path, const char *line, int *warned)
{
	int fd;
	size_t len = strlen(line);
	char *buf;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	buf = malloc(len + 1);
	if (fd >= 0 && buf) {
		memcpy(buf, line, len);
		buf[len] = '\n';
		if (write(fd, buf, len + 1) == (ssize_t)(len + 1)) {
			free(buf);
			close(fd);
			return;
		}
	}
	if (!*warned)
		fprintf(stderr,
			"vmheap-console: cannot save history to %s (%s); "
			"commands of this session will not be remembered.\n",
			path, strerror(errno));
	*warned = 1;
	free(buf);
	if (fd >= 0)
		close(fd);
}

/* ------------------------------------------------------------ completion */

struct completion_state {
	size_t index;
	int commands_done;
};
static struct completion_state comp;
static int comp_with_commands;

static char *next_match(const char *text, int state)
{
	size_t len = strlen(text);

	if (state == 0) {
		comp.index = 0;
		comp.commands_done = !comp_with_commands;
	}
	while (!comp.commands_done) {
		const char *w = console_command_names[comp.index];

		if (!w) {
			comp.commands_done = 1;
			comp.index = 0;
			break;
		}
		comp.index++;
		if (strncmp(w, text, len) == 0)
			return strdup(w);
	}
	while (var_names && var_names[comp.index]) {
		const char *w = var_names[comp.index++];

		if (strncmp(w, text, len) == 0)
			return strdup(w);
	}
	return NULL;
}

static char **complete(const char *text, int start, int end)
{
	const char *line = rl_line_buffer;
	int i = 0, words_before = 0;

	(void)end;
	rl_attempted_completion_over = 1; /* never complete file names */

	/* Which word is being completed? */
	while (i < start) {
		while (i < start && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i >= start)
			break;
		words_before++;
		while (i < start && line[i] != ' ' && line[i] != '\t')
			i++;
	}
	if (words_before == 0) {
		comp_with_commands = 1;
	} else if (words_before == 1) {
		size_t n;
		int takes_var;

		while (*line == ' ' || *line == '\t')
			line++;
		n = strcspn(line, " \t");
		takes_var = (n == 3 && (strncmp(line, "get", 3) == 0 ||
					strncmp(line, "set", 3) == 0)) ||
			    (n == 4 && strncmp(line, "list", 4) == 0);
		if (!takes_var)
			return NULL;
		comp_with_commands = 0;
	} else {
		return NULL;
	}
	return rl_completion_matches(text, next_match);
}

static void refresh_names(struct console_session *s)
{
	char **names = console_names_fetch(s);

	if (names) {
		console_names_free(var_names);
		var_names = names;
	}
}

/* ------------------------------------------------------------ the loop */

/*
 * Ctrl-C at the prompt drops the line being typed, as in a shell; while
 * a command runs it ends the console as usual (the VM is not harmed).
 */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* The prompt names the VM: "ruby 4242> " (the VM name's first word). */
static void make_prompt(char *buf, size_t len, const struct console_session *s)
{
	const char *vm = *s->info.vm ? s->info.vm : vmheap_client_vm(s->client);
	size_t n = vm ? strcspn(vm, " \t") : 0;

	if (n == 0 || n > 40)
		snprintf(buf, len, "vm %ld> ", (long)s->info.pid);
	else
		snprintf(buf, len, "%.*s %ld> ", (int)n, vm, (long)s->info.pid);
}

static char *read_line(const char *prompt, int *eof)
{
	struct sigaction sa, old;
	char *line;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint; /* no SA_RESTART: the read must stop */
	sigemptyset(&sa.sa_mask);
	for (;;) {
		interrupted = 0;
		sigaction(SIGINT, &sa, &old);
		line = readline(prompt);
		sigaction(SIGINT, &old, NULL);
		if (line || !interrupted)
			break;
		fputs("^C\n", stdout);
		fflush(stdout);
	}
	*eof = line == NULL;
	return line;
}

static int is_blank(const char *s)
{
	return s[strspn(s, " \t")] == '\0';
}

int console_repl(struct console_session *s, const struct console_options *opts)
{
	char pathbuf[4096];
	const char *hist = history_path(pathbuf, sizeof(pathbuf));
	char *line, *last = NULL, prompt[64], owner[64] = "";
	struct console_proc proc;
	int status = CONSOLE_OK, warned = 0, eof = 0;

	make_prompt(prompt, sizeof(prompt), s);
	console_proc_read(&s->info, &proc);
	if (proc.uid != geteuid() && proc.uid != (uid_t)-1)
		snprintf(owner, sizeof(owner), ", user %s", proc.user);
	printf("Connected to %s (pid %ld%s) at %s.\n"
	       "Type help for the commands; exit or Ctrl-D leaves.\n",
	       *s->info.vm ? s->info.vm : vmheap_client_vm(s->client),
	       (long)s->info.pid, owner, s->info.address);
	fflush(stdout);

	rl_readline_name = "vmheap-console";
	rl_attempted_completion_function = complete;
	rl_basic_word_break_characters = " \t";
	rl_catch_signals = 0;
	using_history();
	stifle_history(HISTORY_KEEP);
	if (hist)
		load_history(hist);

	refresh_names(s);
	if (s->gone)
		status = CONSOLE_ECONNECT;

	while (status == CONSOLE_OK) {
		int changed = 0;
		enum console_result res;

		line = read_line(prompt, &eof);
		if (!line)
			break;

		if (!is_blank(line) && (!last || strcmp(last, line) != 0)) {
			add_history(line);
			save_history_line(hist, line, &warned);
			free(last);
			last = strdup(line);
		}
		res = console_command_run(s, line, opts->json, &changed);
		free(line);
		if (res == CONSOLE_RESULT_GONE) {
			status = CONSOLE_ECONNECT;
			break;
		}
		if (res == CONSOLE_RESULT_EXIT)
			break;
		if (changed)
			refresh_names(s);
		if (s->gone)
			status = CONSOLE_ECONNECT;
	}
	if (eof)
		putchar('\n'); /* Ctrl-D: end the prompt's line */
	free(last);
	console_names_free(var_names);
	var_names = NULL;
	clear_history();
	return status;
}
