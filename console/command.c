/*
 * command.c - one command line: parse it, send it, print the reply.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console-internal.h"

const char *const console_command_names[] = {
    "get", "set", "list", "top", "help", "exit", "quit", NULL,
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
	    "  list -v [PREFIX] the same with their values\n"
	    "  top [SECONDS [COUNT]]  the live heap's classes by growth since "
	    "top began,\n"
	    "                   refreshed every SECONDS (2), under the RSS and,\n"
	    "                   while tracking, malloc's live bytes; q quits\n"
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

/*
 * Where a dump named `value` will be: the value when absolute, else in
 * the VM's dump directory (config.dump.dir, asked now).
 */
static void dump_target(struct console_session *s, const char *value, char *out,
			size_t len)
{
	struct console_reply reply;

	if (value[0] == '/') {
		snprintf(out, len, "%s", value);
		return;
	}
	memset(&reply, 0, sizeof(reply));
	if (console_session_call(s, "get", "config.dump.dir", NULL, &reply) ==
		0 &&
	    reply.ok && reply.value.type == MSGPACK_OBJECT_STR)
		snprintf(out, len, "%.*s/%s", (int)reply.value.via.str.size,
			 reply.value.via.str.ptr, value);
	else
		snprintf(out, len, "%s in the VM's dump directory", value);
	console_reply_release(&reply);
}

static enum console_result run_call(struct console_session *s, const char *verb,
				    const char *path, const char *value,
				    int json)
{
	struct console_reply reply;
	enum console_result res = CONSOLE_RESULT_OK;
	struct console_dump_guard guard = {0};
	int rc;

	memset(&reply, 0, sizeof(reply));
	if (!strcmp(verb, "set") && !strcmp(path, "system.memory.dump")) {
		char target[1024];

		dump_target(s, value, target, sizeof(target));
		if (s->gone)
			return CONSOLE_RESULT_GONE;
		console_dump_interrupt_begin(&guard, s->info.pid, target);
	}
	rc = console_session_call(s, verb, path, value, &reply);
	console_dump_interrupt_end(&guard);
	if (rc < 0) {
		console_reply_release(&reply);
		/* the VM exited, but the dump asked for is whole: done */
		return s->dump_saved ? CONSOLE_RESULT_EXIT
				     : CONSOLE_RESULT_GONE;
	}
	if (reply.ok) {
		char **named = NULL;
		if (!strcmp(verb, "get") && !strcmp(path, "system.native.sites"))
			named = console_native_sites(&reply.value);
		if (json)
			console_json_print(stdout, &reply.value);
		else
			console_render_reply(stdout, verb, path, &reply.value);
		console_native_sites_free(named);
	} else {
		fprintf(stderr, "error (%s): %s\n",
			*reply.code ? reply.code : "error",
			*reply.message ? reply.message : "the command failed");
		res = CONSOLE_RESULT_ERROR;
	}
	fflush(stdout);
	console_reply_release(&reply);
	return res;
}

static enum console_result usage_error(const char *msg)
{
	fprintf(stderr, "error: %s\n", msg);
	return CONSOLE_RESULT_ERROR;
}

/* One variable of `list -v`: its name, its type (the list reply's
 * value), its value (a get). */
struct listed {
	char *name, *type, *value;
};

static void free_listed(struct listed *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].type);
		free(v[i].value);
	}
	free(v);
}

/* The value of `name` on one line, or "(error CODE)" (malloc'd). */
static char *value_of(struct console_session *s, const char *name, int *gone)
{
	struct console_reply reply;
	char *text = NULL;

	memset(&reply, 0, sizeof(reply));
	if (!strcmp(name, "system.memory.histogram"))
		return strdup("(a walk of the heap: get it, or top)");
	if (console_session_call(s, "get", name, NULL, &reply) < 0) {
		*gone = 1;
	} else if (reply.ok) {
		text = console_render_inline(&reply.value, name);
	} else if (asprintf(&text, "(error %s)",
			    *reply.code ? reply.code : "error") < 0) {
		text = NULL;
	}
	console_reply_release(&reply);
	return text ? text : strdup("");
}

/* list -v [PREFIX]: name, type and value of each variable. */
static enum console_result list_values(struct console_session *s,
				       const char *prefix, int json)
{
	struct console_reply reply;
	struct listed *vars;
	const msgpack_object *m;
	size_t n = 0;
	int gone = 0;

	if (json)
		return usage_error("list -v has no JSON form; use get VAR "
				   "with --json");
	memset(&reply, 0, sizeof(reply));
	if (console_session_call(s, "list", prefix, NULL, &reply) < 0) {
		console_reply_release(&reply);
		return CONSOLE_RESULT_GONE;
	}
	if (!reply.ok || reply.value.type != MSGPACK_OBJECT_MAP) {
		fprintf(stderr, "error (%s): %s\n",
			*reply.code ? reply.code : "error",
			*reply.message ? reply.message
				       : "list did not answer a map");
		console_reply_release(&reply);
		return CONSOLE_RESULT_ERROR;
	}
	m = &reply.value;
	vars = calloc(m->via.map.size + 1, sizeof(*vars));
	for (uint32_t i = 0; vars && i < m->via.map.size && !gone; i++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[i];

		if (kv->key.type != MSGPACK_OBJECT_STR)
			continue;
		vars[n].name =
		    strndup(kv->key.via.str.ptr, kv->key.via.str.size);
		vars[n].type = console_render_inline(&kv->val, NULL);
		n++;
	}
	console_reply_release(&reply);
	if (!vars)
		return usage_error("out of memory");
	for (size_t i = 0; i < n && !gone; i++)
		if (vars[i].name)
			vars[i].value = value_of(s, vars[i].name, &gone);
	if (!gone) {
		const char **cells = calloc(3 * n, sizeof(*cells));
		size_t rows = 0;

		for (size_t i = 0; cells && i < n; i++) {
			if (!vars[i].name || !vars[i].type || !vars[i].value)
				continue;
			cells[3 * rows] = vars[i].name;
			cells[3 * rows + 1] = vars[i].type;
			cells[3 * rows + 2] = vars[i].value;
			rows++;
		}
		if (cells)
			console_print_table(stdout, cells, (int)rows, 3, "");
		free(cells);
		fflush(stdout);
	}
	free_listed(vars, n);
	return gone ? CONSOLE_RESULT_GONE : CONSOLE_RESULT_OK;
}

/* top [SECONDS [COUNT]] */
static enum console_result top_command(struct console_session *s,
				       const char *args, int json)
{
	double interval = 2.0;
	long count = 0;
	char *end;

	if (json)
		return usage_error("top has no JSON form; use get "
				   "system.memory.histogram with --json");
	if (*args) {
		interval = strtod(args, &end);
		if (end == args || interval < 0.1 || interval > 86400)
			return usage_error("top takes a refresh interval in "
					   "seconds, from 0.1 to 86400, and "
					   "a count of refreshes: top "
					   "[SECONDS [COUNT]]");
		args = end;
		while (isspace((unsigned char)*args))
			args++;
		if (*args) {
			count = strtol(args, &end, 10);
			while (isspace((unsigned char)*end))
				end++;
			if (end == args || *end || count < 1)
				return usage_error(
				    "top's COUNT is a number of refreshes, 1 "
				    "or more: top [SECONDS [COUNT]]");
		}
	}
	return console_top(s, interval, count);
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
	} else if (word_is(w, wlen, "list") && word_is(var, vlen, "-v")) {
		var = next_word(after, &vlen, &after);
		if (*after)
			return usage_error("list -v takes at most one prefix: "
					   "list -v [PREFIX]");
		path = trimmed_copy(var, vlen);
		res = path ? list_values(s, path, json)
			   : usage_error("out of memory");
	} else if (word_is(w, wlen, "list")) {
		if (*after)
			return usage_error(
			    "list takes at most one prefix: list [PREFIX]");
		path = trimmed_copy(var, vlen);
		res = path ? run_call(s, "list", path, NULL, json)
			   : usage_error("out of memory");
	} else if (word_is(w, wlen, "top")) {
		res = top_command(s, rest, json);
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
	struct console_reply reply;
	struct names n = {0};

	memset(&reply, 0, sizeof(reply));
	if (console_session_call(s, "list", "", NULL, &reply) < 0) {
		console_reply_release(&reply);
		return NULL;
	}
	if (reply.ok)
		console_render_each_name(&reply.value, add_name, &n);
	console_reply_release(&reply);
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
