/*
 * output_name.c - the name of the file a process under vmheap-run writes
 * at exit: a dump (`--output`, issue 25) or a malloc trace (`--record`,
 * issue 31).  One rule for both, documented in vmheap-run(1) FILES:
 *
 *   - "%p" in NAME is replaced by the process's pid in every process
 *     ("%%" is one "%"), as valgrind's --log-file does;
 *   - otherwise the process vmheap-run started (its pid is in
 *     VMHEAP_RUN_PID) writes NAME as given, and every other process that
 *     inherited the tracker (a forked child, or a program it ran) writes
 *     NAME.PID, so that no two processes write one file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "native-internal.h"

/* VMHEAP_RUN_PID as it was when the tracker loaded (the program may
 * change its environment later; a forked child keeps its parent's copy,
 * a program it executes reads the variable again). */
static char run_pid[24];

static int put(char *out, size_t outsz, size_t *at, const char *s, size_t n)
{
	if (*at + n >= outsz)
		return -1;
	memcpy(out + *at, s, n);
	*at += n;
	out[*at] = '\0';
	return 0;
}

int native_output_name(const char *name, const char *run_pid, long pid,
		       char *out, size_t outsz)
{
	char num[24];
	size_t at = 0;
	int n = snprintf(num, sizeof num, "%ld", pid);

	if (name == NULL || *name == '\0' || outsz == 0 || n < 0)
		return VMHEAP_EINVAL;
	out[0] = '\0';
	if (strstr(name, "%p") != NULL) {
		for (const char *s = name; *s != '\0'; s++) {
			int r;
			if (s[0] == '%' && s[1] == 'p') {
				r = put(out, outsz, &at, num, (size_t)n);
				s++;
			} else if (s[0] == '%' && s[1] == '%') {
				r = put(out, outsz, &at, "%", 1);
				s++;
			} else {
				r = put(out, outsz, &at, s, 1);
			}
			if (r != 0)
				return VMHEAP_ELIMIT;
		}
		return 0;
	}
	if (put(out, outsz, &at, name, strlen(name)) != 0)
		return VMHEAP_ELIMIT;
	if (run_pid != NULL && strcmp(run_pid, num) == 0)
		return 0;
	if (put(out, outsz, &at, ".", 1) != 0 ||
	    put(out, outsz, &at, num, (size_t)n) != 0)
		return VMHEAP_ELIMIT;
	return 0;
}

void native_output_init(void)
{
	const char *v = getenv("VMHEAP_RUN_PID");

	if (v != NULL && strlen(v) < sizeof run_pid)
		memcpy(run_pid, v, strlen(v) + 1);
}

VMHEAP_EXPORT int vmheap_native_output_name(const char *name, char *out,
					    size_t outsz)
{
	return native_output_name(name, run_pid[0] ? run_pid : NULL,
				  (long)getpid(), out, outsz);
}
