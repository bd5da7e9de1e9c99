/*
 * server.c - the agent's lifecycle: start (after settings.c has set the
 * agent up from its configuration: the listener, libevent's events, the
 * job registry, the discovery file and the loop thread), stop, and what
 * happens in a forked child of the host and at exit.  The connections the
 * loop serves are conn.c's.
 */
#include <arpa/inet.h>
#include <malloc.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>

#include "agent-internal.h"
#include "vmheap_files.h"

/* The process's agent (one at most); read by the fork and exit hooks. */
static struct vmheap_agent *_Atomic the_agent;
/* Agents left behind in forked children: kept reachable, never freed,
 * because the parent's libevent state may be mid-update there. */
static struct vmheap_agent *stale_agents[8];
static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;
static int hooks_error;

/* --------------------------------------------------------- fork & exit */

/*
 * In a child of a host that forked: the agent's threads do not exist
 * there.  Mark it stale and close its sockets, so that the child neither
 * answers for the parent nor keeps the parent's connections open (a
 * client must see EOF when the parent closes).  Only close() is used.
 */
static void atfork_child(void)
{
	struct vmheap_agent *a = the_agent;
	int fd;

	if (!a)
		return;
	atomic_store(&a->stale, 1);
	fd = atomic_exchange(&a->listen_fd, -1);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < a->nslots; i++) {
		fd = atomic_exchange(&a->fd_slots[i], -1);
		if (fd >= 0)
			close(fd);
	}
}

/* At exit: remove the discovery file, but only in the process that
 * wrote it (a forked child that exits leaves the parent's alone). */
static void at_exit(void)
{
	struct vmheap_agent *a = the_agent;

	if (a && !atomic_load(&a->stale))
		agent_discovery_remove(a);
}

/* Keep a stale agent reachable (see stale_agents). */
static void keep_stale(struct vmheap_agent *a)
{
	for (size_t i = 0; i < sizeof(stale_agents) / sizeof(*stale_agents);
	     i++)
		if (!stale_agents[i] || stale_agents[i] == a) {
			stale_agents[i] = a;
			return;
		}
}

static void install_hooks(void)
{
	if (evthread_use_pthreads() < 0 ||
	    pthread_atfork(NULL, NULL, atfork_child) != 0 || atexit(at_exit))
		hooks_error = 1;
}
/* ------------------------------------------------------------ lifecycle */

static void *loop_main(void *arg)
{
	struct vmheap_agent *a = arg;

	agent_block_sigpipe();
	agent_native_own_thread();
	event_base_dispatch(a->base);
	return NULL;
}

static int open_listener(struct vmheap_agent *a, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t sl;
	int fd, one = 1, e;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, a->bind, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(a->port);
		sl = sizeof(*in4);
	} else {
		inet_pton(AF_INET6, a->bind, &in6->sin6_addr);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(a->port);
		sl = sizeof(*in6);
	}
	fd =
	    socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS, "socket: %s",
				  strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		e = errno;
		close(fd);
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot listen on %s port %u: %s%s", a->bind,
				  (unsigned)a->port, strerror(e),
				  e == EADDRINUSE && a->port
				      ? " (another process holds it: choose "
					"another VMHEAP_AGENT_PORT, or 0 to "
					"let the kernel pick a free one)"
				      : "");
	}
	a->port =
	    ntohs(ss.ss_family == AF_INET ? in4->sin_port : in6->sin6_port);
	a->listener = evconnlistener_new(
	    a->base, agent_conn_accept, a,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 128, fd);
	if (!a->listener) {
		close(fd);
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot create the libevent listener");
	}
	atomic_store(&a->listen_fd, fd);
	return 0;
}

static void free_agent(struct vmheap_agent *a)
{
	/* first: a job's thread may still wake the loop through jobs_ev */
	agent_jobs_free(a->jobs);
	agent_conns_free(a);
	if (a->listener)
		evconnlistener_free(a->listener);
	if (a->stop_ev)
		event_free(a->stop_ev);
	if (a->jobs_ev)
		event_free(a->jobs_ev);
	if (a->trim_ev)
		event_free(a->trim_ev);
	if (a->base)
		event_base_free(a->base);
	if (a->dump_dfd >= 0)
		close(a->dump_dfd);
	if (a->tmp_dfd >= 0)
		close(a->tmp_dfd);
	pthread_mutex_destroy(&a->lock);
	free(a->fd_slots);
	free(a);
}
static void stop_cb(int fd, short what, void *arg)
{
	struct vmheap_agent *a = arg;

	(void)fd;
	(void)what;
	agent_jobs_deliver(a->jobs); /* the replies of jobs that just ended */
	agent_conns_flush(a);
	event_base_loopbreak(a->base);
}

/* The loop's state: the fd slots a forked child closes, the event base,
 * its events, and the job registry that wakes it.  0, or a negative code
 * with a message (what was made is freed with the agent). */
static int setup_loop(struct vmheap_agent *a, char *err, size_t errlen)
{
	a->nslots = a->max_clients;
	a->fd_slots = malloc(sizeof(*a->fd_slots) * (size_t)a->nslots);
	a->base = event_base_new();
	if (!a->fd_slots || !a->base)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot create the event base");
	for (int i = 0; i < a->nslots; i++)
		atomic_init(&a->fd_slots[i], -1);
	a->stop_ev = event_new(a->base, -1, 0, stop_cb, a);
	a->jobs_ev = event_new(a->base, -1, 0, agent_conn_jobs_cb, a);
	a->trim_ev = evtimer_new(a->base, agent_conn_trim_cb, a);
	if (!a->stop_ev || !a->jobs_ev || !a->trim_ev)
		return agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				  "cannot create events");
	if (agent_jobs_new(&a->jobs, agent_conn_jobs_wake, agent_conn_job_done,
			   a) < 0)
		return agent_fail(err, errlen, VMHEAP_ENOMEM, "out of memory");
	return 0;
}

/* A failed agent that holds only the reason, or NULL when not even that
 * can be allocated (then VMHEAP_ENOMEM). */
static int start_failed(vmheap_agent **out, int rc, const char *why)
{
	struct vmheap_agent *f = calloc(1, sizeof(*f));

	*out = f;
	if (!f)
		return VMHEAP_ENOMEM;
	f->failed = 1;
	f->pid = getpid();
	snprintf(f->error, sizeof(f->error), "%s", why);
	return rc;
}

static int start(vmheap_agent **out, const struct vmheap_agent_config *cfg,
		 const struct vmheap_agent_host *host, char *err,
		 size_t errlen);

int vmheap_agent_start(vmheap_agent **out,
		       const struct vmheap_agent_config *cfg,
		       const struct vmheap_agent_host *host)
{
	char err[sizeof(((struct vmheap_agent *)0)->error)] = "";
	int rc;

	if (!out)
		return VMHEAP_EINVAL;
	*out = NULL;
	rc = start(out, cfg, host, err, sizeof(err));
	if (rc < 0)
		return start_failed(out, rc,
				    err[0] ? err : vmheap_agent_strerror(rc));
	return rc;
}

const char *vmheap_agent_error(const vmheap_agent *a)
{
	return a ? a->error : "out of memory";
}

static int start(vmheap_agent **out, const struct vmheap_agent_config *cfg,
		 const struct vmheap_agent_host *host, char *err, size_t errlen)
{
	struct vmheap_agent_config def = {0};
	struct vmheap_agent *a, *cur;
	int rc;

	if (!cfg) {
		def.dump_fork = def.dump_gc = -1;
		cfg = &def;
	}
	if (!host || !host->run_stopped || !host->walk_heap)
		return agent_fail(
		    err, errlen, VMHEAP_EINVAL,
		    "the host must provide run_stopped and walk_heap");
	pthread_once(&hooks_once, install_hooks);
	if (hooks_error)
		return agent_fail(
		    err, errlen, VMHEAP_AGENT_ESYS,
		    "cannot set up libevent threads or the fork hook");
	/* vmheap-run's native agent, if it runs here, leaves this process
	 * to this one (run_agent.c) */
	agent_run_agent_yield();
	cur = the_agent;
	if (cur && !atomic_load(&cur->stale))
		return agent_fail(
		    err, errlen, VMHEAP_EINVAL,
		    "an agent is already running in this process");
	if (cur)
		keep_stale(cur);

	a = calloc(1, sizeof(*a));
	if (!a)
		return agent_fail(err, errlen, VMHEAP_ENOMEM, "out of memory");
	pthread_mutex_init(&a->lock, NULL);
	atomic_init(&a->listen_fd, -1);
	a->dump_dfd = a->tmp_dfd = -1;
	a->pid = getpid();
	if ((rc = agent_configure(a, cfg, host, err, errlen)) < 0)
		goto fail;

	if ((rc = setup_loop(a, err, errlen)) < 0)
		goto fail;
	if ((rc = open_listener(a, err, errlen)) < 0)
		goto fail;
	if ((rc = agent_discovery_write(a, err, errlen)) < 0)
		goto fail;
	if (pthread_create(&a->loop_thread, NULL, loop_main, a) != 0) {
		rc = agent_fail(err, errlen, VMHEAP_AGENT_ESYS,
				"cannot start the agent thread");
		goto fail;
	}
	a->loop_running = 1;
	the_agent = a;
	*out = a;
	return 0;
fail:
	agent_discovery_remove(a);
	free_agent(a);
	return rc;
}

void vmheap_agent_stop(vmheap_agent *a)
{
	if (!a)
		return;
	if (a->failed) {
		free(a);
		return;
	}
	if (atomic_load(&a->stale) || getpid() != a->pid) {
		/* A forked child: no threads here, and the parent's file
		 * and libevent state are not ours to touch. */
		atomic_store(&a->stale, 1);
		keep_stale(a);
		if (the_agent == a)
			the_agent = NULL;
		return;
	}
	agent_jobs_stop(a->jobs); /* waits for a running dump */
	if (a->loop_running) {
		event_active(a->stop_ev, EV_READ, 0);
		pthread_join(a->loop_thread, NULL);
		a->loop_running = 0;
	}
	if (the_agent == a)
		the_agent = NULL;
	agent_discovery_remove(a);
	free_agent(a);
}

uint16_t vmheap_agent_port(const vmheap_agent *a)
{
	return a->port;
}

const char *vmheap_agent_discovery_path(const vmheap_agent *a)
{
	return a->discovery_path;
}

int vmheap_agent_is_stale(const vmheap_agent *a)
{
	return atomic_load(&((vmheap_agent *)a)->stale) || getpid() != a->pid;
}
