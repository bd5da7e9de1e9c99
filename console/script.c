/*
 * script.c - the console without a prompt: the -e commands, or commands
 * read from stdin one a line.  Exit status: 0 when every command
 * succeeded, 1 when one failed, 2 when the VM could not be reached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console-internal.h"

/* Run one line; returns 1 to go on, 0 to stop.  Updates *status. */
static int run_line(struct console_session *s, const char *line, int json,
		    int *status)
{
	switch (console_command_run(s, line, json, NULL)) {
	case CONSOLE_RESULT_OK:
		return 1;
	case CONSOLE_RESULT_ERROR:
		*status = CONSOLE_ECOMMAND;
		return 1;
	case CONSOLE_RESULT_EXIT:
		return 0;
	case CONSOLE_RESULT_GONE:
	default:
		*status = CONSOLE_ECONNECT;
		return 0;
	}
}

int console_script_commands(struct console_session *s,
			    const struct console_options *opts)
{
	int status = CONSOLE_OK;

	for (int i = 0; i < opts->ncommands; i++)
		if (!run_line(s, opts->commands[i], opts->json, &status))
			break;
	return status;
}

int console_script_stream(struct console_session *s, FILE *in,
			  const struct console_options *opts)
{
	int status = CONSOLE_OK;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, in)) >= 0) {
		if (n > 0 && line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (!run_line(s, line, opts->json, &status))
			break;
	}
	free(line);
	return status;
}
