/*
 * tmux.c - a terminal program driven like a person would (see
 * vmheap_spec.h).  Each session has its own tmux server under the suite's
 * root directory (TMUX_TMPDIR), so that spec_root_remove finds them all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmheap_spec.h"

#define PANE_POLL_MS 30

/* Run tmux on t's server with `args`, quietly: its exit code. */
static int tmux(struct spec_tmux *t, const char *const *args)
{
	const char *argv[32] = {"tmux", "-L", t->socket};
	struct spec_run r;
	int n = 3;

	for (; *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	if (spec_run(argv, NULL, NULL, 20000, &r) < 0)
		return -1;
	spec_run_free(&r);
	return r.status;
}

void spec_tmux_start(struct spec_tmux *t, const char *command)
{
	static int counter;
	char wrapped[8192];
	const char *args[] = {"-f", "/dev/null", "new-session", "-d",
			      "-x", "200",	 "-y",		"50",
			      "-s", "main",	 wrapped,	NULL};

	snprintf(t->socket, sizeof(t->socket), "spec%ld-%d", (long)getpid(),
		 ++counter);
	snprintf(wrapped, sizeof(wrapped),
		 "trap : INT; %s; echo \"[exit $?]\"; exec sleep 600", command);
	ck_assert_msg(tmux(t, args) == 0, "tmux new-session failed");
}

void spec_tmux_type(struct spec_tmux *t, const char *text)
{
	const char *args[] = {"send-keys", "-t", "main", "-l", text, NULL};

	ck_assert_msg(tmux(t, args) == 0, "tmux send-keys failed");
}

void spec_tmux_key(struct spec_tmux *t, const char *key)
{
	const char *args[] = {"send-keys", "-t", "main", key, NULL};

	ck_assert_msg(tmux(t, args) == 0, "tmux send-keys %s failed", key);
}

void spec_tmux_line(struct spec_tmux *t, const char *line)
{
	spec_tmux_type(t, line);
	spec_tmux_key(t, "Enter");
}

char *spec_tmux_capture(struct spec_tmux *t)
{
	const char *argv[] = {"tmux", "-L",  t->socket, "capture-pane",
			      "-p",   "-J",  "-S",	"-",
			      "-t",   "main", NULL};
	struct spec_run r;

	ck_assert_int_eq(spec_run(argv, NULL, NULL, 20000, &r), 0);
	free(r.err);
	return r.out;
}

char *spec_tmux_wait_for(struct spec_tmux *t, const char *text,
			 int timeout_ms)
{
	int64_t deadline = spec_now_ms() + timeout_ms;

	for (;;) {
		char *pane = spec_tmux_capture(t);

		if (strstr(pane, text))
			return pane;
		if (spec_now_ms() > deadline) {
			size_t n = strlen(pane);

			while (n && pane[n - 1] == '\n')
				pane[--n] = '\0';
			fprintf(stderr, "--- pane without \"%s\":\n%s\n---\n",
				text, pane);
			free(pane);
			return NULL;
		}
		free(pane);
		spec_sleep_ms(PANE_POLL_MS);
	}
}

char *spec_tmux_expect(struct spec_tmux *t, const char *text, int timeout_ms)
{
	char *pane = spec_tmux_wait_for(t, text, timeout_ms);

	ck_assert_msg(pane != NULL, "the pane never showed \"%s\" (%d ms)",
		      text, timeout_ms);
	return pane;
}

void spec_tmux_see(struct spec_tmux *t, const char *text, int timeout_ms)
{
	free(spec_tmux_expect(t, text, timeout_ms));
}

int spec_tmux_count(struct spec_tmux *t, const char *text)
{
	char *pane = spec_tmux_capture(t);
	int n = spec_count(pane, text);

	free(pane);
	return n;
}

int spec_tmux_wait_count(struct spec_tmux *t, const char *text, int n,
			 int timeout_ms)
{
	int64_t deadline = spec_now_ms() + timeout_ms;

	for (;;) {
		int have = spec_tmux_count(t, text);

		if (have >= n)
			return 1;
		if (spec_now_ms() > deadline) {
			char *pane = spec_tmux_capture(t);

			fprintf(stderr, "--- pane with %d of %d \"%s\":\n%s---\n",
				have, n, text, pane);
			free(pane);
			return 0;
		}
		spec_sleep_ms(PANE_POLL_MS);
	}
}

void spec_tmux_kill(struct spec_tmux *t)
{
	const char *args[] = {"kill-server", NULL};

	tmux(t, args);
}

const char *spec_console_prompt(pid_t pid, const char *typed)
{
	static char ring[8][256];
	static int next;
	char *buf = ring[next++ % 8];

	snprintf(buf, sizeof(ring[0]), "sample %ld> %s", (long)pid, typed);
	return buf;
}

void spec_console_command(char *out, size_t len, const char *dir,
			  const char *args)
{
	snprintf(out, len,
		 "env -u TMPDIR HOME='%s' VMHEAP_AGENT_TMPDIR='%s' '%s' %s",
		 dir, dir, spec_bin("vmheap-console"), args ? args : "");
}
