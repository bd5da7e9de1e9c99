/*
 * session.c - the console's connection to one agent, through the agent's
 * client API.  Every failure becomes one sentence: the cause, then what
 * to do.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "console-internal.h"

#define CONNECT_TIMEOUT_MS 5000
/* get and list answer at once; a set (a dump) may take minutes. */
#define CALL_TIMEOUT_MS 30000

static void explain_connect_failure(const struct vmheap_agent_info *info,
				    int rc, const char *why)
{
	long pid = (long)info->pid;

	if (!why || !*why)
		why = vmheap_agent_strerror(rc);
	switch (rc) {
	case VMHEAP_AGENT_EAUTH:
		fprintf(stderr,
			"vmheap-console: the VM (pid %ld) refused the token "
			"from %s (%s); "
			"the file may be stale or rewritten: restart the VM.\n",
			pid, info->path, why);
		break;
	case VMHEAP_AGENT_ETIMEOUT:
		fprintf(stderr,
			"vmheap-console: the VM (pid %ld) at %s did not answer "
			"within "
			"%d s; it may be stopped or overloaded: try again.\n",
			pid, info->address, CONNECT_TIMEOUT_MS / 1000);
		break;
	case VMHEAP_AGENT_ELIMIT:
		fprintf(stderr,
			"vmheap-console: the VM (pid %ld) turned the "
			"connection away (%s); "
			"close other consoles and try again.\n",
			pid, why);
		break;
	case VMHEAP_AGENT_ECLOSED:
		fprintf(stderr,
			"vmheap-console: the VM (pid %ld) closed the "
			"connection while "
			"greeting (%s); check that it is still running with "
			"`vmheap-console --ps`.\n",
			pid, why);
		break;
	default:
		fprintf(stderr,
			"vmheap-console: cannot connect to the VM (pid %ld) at "
			"%s: %s; "
			"check that it is still running with `vmheap-console "
			"--ps`.\n",
			pid, info->address, why);
		break;
	}
}

static int connect_quietly(struct console_session *s, char *why, size_t len)
{
	vmheap_client *c = NULL;
	int rc = vmheap_client_connect(&c, &s->info, CONNECT_TIMEOUT_MS);

	if (rc < 0) {
		snprintf(why, len, "%s", c ? vmheap_client_error(c) : "");
		if (c)
			vmheap_client_close(c);
		return rc;
	}
	s->client = c;
	return 0;
}

int console_session_open(struct console_session *s,
			 const struct vmheap_agent_info *info)
{
	char why[512];
	int rc;

	memset(s, 0, sizeof(*s));
	s->info = *info;
	rc = connect_quietly(s, why, sizeof(why));
	if (rc < 0) {
		explain_connect_failure(info, rc, why);
		return -1;
	}
	return 0;
}

static int process_exists(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/*
 * The agent closed the connection.  If its VM lives on (an idle
 * connection was dropped), connect again with a fresh read of the
 * discovery file.  Returns 0 when connected again.
 */
static int reconnect(struct console_session *s)
{
	struct vmheap_agent_info fresh;
	char err[512], why[512];

	vmheap_client_close(s->client);
	s->client = NULL;
	if (!process_exists(s->info.pid))
		return -1;
	if (vmheap_discovery_read(s->info.path, &fresh, err, sizeof(err)) < 0 ||
	    fresh.pid != s->info.pid)
		return -1;
	s->info = fresh;
	return connect_quietly(s, why, sizeof(why));
}

static int call_once(struct console_session *s, const char *verb,
		     const char *path, const char *value,
		     struct console_reply *reply)
{
	vmheap_reply *r = NULL;
	int rc;

	/* a dump, and the live histogram (a walk of the heap), take as
	 * long as the heap needs */
	vmheap_client_set_timeout(
	    s->client, strcmp(verb, "set") == 0 ||
			       (path && !strcmp(path, "system.memory.histogram"))
			   ? 0
			   : CALL_TIMEOUT_MS);
	rc = vmheap_client_call_str(s->client, verb, path, value, &r);
	if (console_reply_take(reply, r) < 0 && rc == 0)
		rc = VMHEAP_ENOMEM;
	return rc;
}

int console_session_call(struct console_session *s, const char *verb,
			 const char *path, const char *value,
			 struct console_reply *reply)
{
	int rc;

	if (!s->client) {
		s->gone = 1;
		return -1;
	}
	rc = call_once(s, verb, path, value, reply);
	if (rc == VMHEAP_AGENT_ECLOSED) {
		/* The VM went away, or the agent dropped the connection
		 * (idle timeout) before reading this request: if the VM
		 * lives on, connect again and send it once more. */
		console_reply_release(reply);
		if (reconnect(s) == 0)
			rc = call_once(s, verb, path, value, reply);
		if ((rc == VMHEAP_AGENT_ECLOSED || !s->client) && value &&
		    !strcmp(verb, "set") &&
		    !strcmp(path, "system.memory.dump")) {
			/* a dump was pending: it may be whole on disk */
			s->dump_saved = console_lost_dump(s, value);
			s->gone = 1;
			return -1;
		}
		if (rc == VMHEAP_AGENT_ECLOSED || !s->client) {
			fprintf(stderr,
				"vmheap-console: the VM (pid %ld) went away; "
				"start it "
				"again and reconnect.\n",
				(long)s->info.pid);
			s->gone = 1;
			return -1;
		}
	}
	if (rc == VMHEAP_AGENT_ETIMEOUT) {
		fprintf(
		    stderr,
		    "vmheap-console: the VM (pid %ld) did not answer within %d "
		    "s; "
		    "it may be stopped or stuck: check it, then reconnect with "
		    "`vmheap-console -p %ld`.\n",
		    (long)s->info.pid, CALL_TIMEOUT_MS / 1000,
		    (long)s->info.pid);
		s->gone = 1;
		return -1;
	}
	if (rc < 0) {
		fprintf(stderr,
			"vmheap-console: lost the connection to the VM (pid "
			"%ld): %s; "
			"reconnect with `vmheap-console -p %ld`.\n",
			(long)s->info.pid, vmheap_client_error(s->client),
			(long)s->info.pid);
		s->gone = 1;
		return -1;
	}
	return 0;
}

void console_session_close(struct console_session *s)
{
	if (s->client)
		vmheap_client_close(s->client);
	s->client = NULL;
}
