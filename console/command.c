/*
 * command.c - one command line: parse it, send it, print the reply.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console-internal.h"

const char *const console_command_names[] = {
    "get", "set", "list", "help", "exit", "quit", NULL,
};

void console_command_help(FILE *out)
{
	fputs(
	    "Commands:\n"
	    "  get VAR          print a variable, e.g. get system.memory.rss\n"
	    "  VAR              the same as get VAR\n"
	    "  set VAR VALUE    set a variable; set system.memory.dump FILE "
	    "writes\n"
	    "                   a heap dump into the VM's dump directory\n"
	    "  list [PREFIX]    the variables (under PREFIX)\n"
	    "  help             this text\n"
	    "  exit, quit       leave (or Ctrl-D)\n"
	    "Tab completes commands and variable names.\n",
	    out);
}

/* Split off the next word: returns its start and sets *len and *rest. */
static const char *next_word(const char *p, size_t *len, const char **rest)
{
	const char *start;

	while (isspace((unsigned char)*p))
		p++;
	start = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	*len = (size_t)(p - start);
	while (isspace((unsigned char)*p))
		p++;
	*rest = p;
	return start;
}

static int word_is(const char *w, size_t len, const char *name)
{
	return strlen(name) == len && memcmp(w, name, len) == 0;
}

static enum console_result run_call(struct console_session *s, const char *verb,
				    const char *path, const char *value,
				    int json)
{
	struct vmheap_reply reply;
	enum console_result res = CONSOLE_RESULT_OK;

	memset(&reply, 0, sizeof(reply));
	if (console_session_call(s, verb, path, value, &reply) < 0) {
		vmheap_reply_release(&reply);
		/* the VM exited, but the dump asked for is whole: done */
		return s->dump_saved ? CONSOLE_RESULT_EXIT
				     : CONSOLE_RESULT_GONE;
	}
	if (reply.ok) {
		if (json)
			console_json_print(stdout, &reply.value);
		else
			console_render_reply(stdout, verb, path, &reply.value);
	} else {
		fprintf(stderr, "error (%s): %s\n",
			*reply.code ? reply.code : "error",
			*reply.message ? reply.message : "the command failed");
		res = CONSOLE_RESULT_ERROR;
	}
	fflush(stdout);
	vmheap_reply_release(&reply);
	return res;
}

/* A copy of `s` without trailing white space, or NULL. */
static char *trimmed_copy(const char *s, size_t len)
{
	char *out;

	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	out = malloc(len + 1);
	if (out) {
		memcpy(out, s, len);
		out[len] = '\0';
	}
	return out;
}

static enum console_result usage_error(const char *msg)
{
	fprintf(stderr, "error: %s\n", msg);
	return CONSOLE_RESULT_ERROR;
}

enum console_result console_command_run(struct console_session *s,
					const char *line, int json,
					int *names_changed)
{
	const char *rest, *w, *var, *after;
	size_t wlen, vlen;
	char *path = NULL, *value = NULL;
	enum console_result res;

	w = next_word(line, &wlen, &rest);
	if (!wlen || *w == '#')
		return CONSOLE_RESULT_OK;
	if (word_is(w, wlen, "help") || word_is(w, wlen, "?")) {
		console_command_help(stdout);
		return CONSOLE_RESULT_OK;
	}
	if (word_is(w, wlen, "exit") || word_is(w, wlen, "quit"))
		return CONSOLE_RESULT_EXIT;

	var = next_word(rest, &vlen, &after);
	if (word_is(w, wlen, "get")) {
		if (!vlen || *after)
			return usage_error(
			    "get takes one variable name: get VAR");
		path = trimmed_copy(var, vlen);
		res = path ? run_call(s, "get", path, NULL, json)
			   : usage_error("out of memory");
	} else if (word_is(w, wlen, "set")) {
		if (!vlen || !*after)
			return usage_error(
			    "set takes a variable and a value: set VAR VALUE");
		path = trimmed_copy(var, vlen);
		value = trimmed_copy(after, strlen(after));
		res = path && value ? run_call(s, "set", path, value, json)
				    : usage_error("out of memory");
		if (names_changed)
			*names_changed = 1;
	} else if (word_is(w, wlen, "list")) {
		if (*after)
			return usage_error(
			    "list takes at most one prefix: list [PREFIX]");
		path = trimmed_copy(var, vlen);
		res = path ? run_call(s, "list", path, NULL, json)
			   : usage_error("out of memory");
	} else if (!*rest) {
		path = trimmed_copy(w, wlen);
		res = path ? run_call(s, "get", path, NULL, json)
			   : usage_error("out of memory");
	} else {
		fprintf(stderr,
			"error: unknown command '%.*s'; type help for the "
			"commands.\n",
			(int)wlen, w);
		res = CONSOLE_RESULT_ERROR;
	}
	free(path);
	free(value);
	return res;
}

struct names {
	char **items;
	size_t count, cap;
	int failed;
};

static void add_name(void *arg, const char *name, size_t len)
{
	struct names *n = arg;

	if (n->failed)
		return;
	if (n->count + 2 > n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 64;
		char **items = realloc(n->items, cap * sizeof(*items));

		if (!items) {
			n->failed = 1;
			return;
		}
		n->items = items;
		n->cap = cap;
	}
	n->items[n->count] = malloc(len + 1);
	if (!n->items[n->count]) {
		n->failed = 1;
		return;
	}
	memcpy(n->items[n->count], name, len);
	n->items[n->count][len] = '\0';
	n->items[++n->count] = NULL;
}

char **console_names_fetch(struct console_session *s)
{
	struct vmheap_reply reply;
	struct names n = {0};

	memset(&reply, 0, sizeof(reply));
	if (console_session_call(s, "list", "", NULL, &reply) < 0) {
		vmheap_reply_release(&reply);
		return NULL;
	}
	if (reply.ok)
		console_render_each_name(&reply.value, add_name, &n);
	vmheap_reply_release(&reply);
	if (n.failed) {
		console_names_free(n.items);
		return NULL;
	}
	if (!n.items)
		return calloc(1,
			      sizeof(char *)); /* no variables: an empty list */
	return n.items;
}

void console_names_free(char **names)
{
	if (!names)
		return;
	for (char **p = names; *p; p++)
		free(*p);
	free(names);
}
