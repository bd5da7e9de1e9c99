/*
 * procinfo.c - what /proc says about a VM's process now: its command line
 * as it reads today (a process title set with setproctitle is written
 * over it), its parent, and whose it is.  The discovery file keeps the
 * argv of the moment the agent started; --ps and the chooser show this.
 */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "console-internal.h"

/* /proc/PID/cmdline as one line: arguments joined by spaces, trailing
 * padding dropped, control characters shown as spaces.  0, or -1. */
static int read_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\0' || buf[n - 1] == ' '))
		n--;
	for (ssize_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = ' ';
	buf[n] = '\0';
	return n > 0 ? 0 : -1;
}

/* The parent pid: the "PPid:" line of /proc/PID/status, or 0. */
static pid_t read_ppid(pid_t pid)
{
	char path[64], line[256];
	long ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %ld", &ppid) == 1)
			break;
	fclose(f);
	return (pid_t)ppid;
}

void console_proc_read(const struct vmheap_agent_info *info,
		       struct console_proc *proc)
{
	char path[64];
	struct stat st;
	struct passwd *pw;

	memset(proc, 0, sizeof(*proc));
	proc->uid = (uid_t)-1;
	if (read_cmdline(info->pid, proc->command, sizeof(proc->command)) < 0)
		snprintf(proc->command, sizeof(proc->command), "%s",
			 info->argv);
	proc->ppid = read_ppid(info->pid);
	snprintf(path, sizeof(path), "/proc/%ld", (long)info->pid);
	if (stat(path, &st) == 0)
		proc->uid = st.st_uid;
	else if (lstat(info->path, &st) == 0)
		proc->uid = st.st_uid;
	if (proc->uid == (uid_t)-1) {
		snprintf(proc->user, sizeof(proc->user), "?");
		return;
	}
	pw = getpwuid(proc->uid);
	if (pw && strlen(pw->pw_name) < sizeof(proc->user))
		snprintf(proc->user, sizeof(proc->user), "%s", pw->pw_name);
	else
		snprintf(proc->user, sizeof(proc->user), "%ld",
			 (long)proc->uid);
}
