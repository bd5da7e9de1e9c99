/*
 * job.c - the registry of long jobs: work that a request starts and that
 * ends later (a dump now; the native tracker and a live histogram later).
 *
 * Each job runs on a thread of its own and at most one job of a kind runs
 * at a time (a second one is refused as busy).  When a job ends, its
 * result (a packed value, or an error code and message) is kept in the
 * registry and the owner is woken; the owner then calls
 * agent_jobs_deliver() on its own thread, which hands each result to the
 * completion callback.  The registry knows nothing of connections: who
 * is owed a reply is the owner's business (conn.c).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent-internal.h"

enum job_state {
	JOB_RUNNING, /* its thread runs the body */
	JOB_ENDED,   /* the result is ready; the thread has returned or is
			about to */
};

struct job {
	uint64_t handle;
	char kind[32];
	enum job_state state;
	int told; /* the owner was woken: the thread touches nothing more */
	pthread_t thread;
	struct agent_jobs *registry;
	agent_job_run_fn run;
	void *arg; /* a copy of the caller's bytes */
	int code;
	char message[AGENT_JOB_MESSAGE_MAX];
	msgpack_sbuffer value;
	struct job *next;
};

struct agent_jobs {
	pthread_mutex_t lock;
	pthread_cond_t told; /* a job's owner was told (agent_jobs_stop) */
	struct job *jobs;    /* running and ended, not yet delivered */
	uint64_t last_handle;
	int stopping;
	void (*wake)(void *arg);
	agent_job_done_fn done;
	void *arg;
};

void agent_block_sigpipe(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int agent_jobs_new(struct agent_jobs **out, void (*wake)(void *arg),
		   agent_job_done_fn done, void *arg)
{
	struct agent_jobs *j = calloc(1, sizeof(*j));

	*out = NULL;
	if (!j)
		return VMHEAP_ENOMEM;
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->told, NULL);
	j->wake = wake;
	j->done = done;
	j->arg = arg;
	*out = j;
	return 0;
}

static void job_free(struct job *job)
{
	msgpack_sbuffer_destroy(&job->value);
	free(job->arg);
	free(job);
}

static void *job_main(void *p)
{
	struct job *job = p;
	struct agent_jobs *j = job->registry;
	msgpack_packer pk;
	char err[AGENT_JOB_MESSAGE_MAX];
	int code;

	agent_block_sigpipe();
	agent_native_own_thread();
	msgpack_packer_init(&pk, &job->value, msgpack_sbuffer_write);
	err[0] = '\0';
	code = job->run(job->arg, &pk, err, sizeof(err));
	pthread_mutex_lock(&j->lock);
	job->code = code < 0 ? code : 0;
	memcpy(job->message, err, sizeof(job->message));
	job->message[sizeof(job->message) - 1] = '\0';
	if (job->code == 0 && job->value.size == 0)
		msgpack_pack_nil(&pk); /* a body that packed nothing */
	/* no longer running: a job of the same kind may start now, before
	 * the owner has even been told */
	job->state = JOB_ENDED;
	pthread_mutex_unlock(&j->lock);
	if (j->wake)
		j->wake(j->arg);
	pthread_mutex_lock(&j->lock);
	job->told = 1;
	pthread_cond_broadcast(&j->told);
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

int agent_job_start(struct agent_jobs *j, const char *kind,
		    agent_job_run_fn run, const void *arg, size_t arg_size,
		    uint64_t *handle)
{
	struct job *job;
	int rc;

	*handle = 0;
	job = calloc(1, sizeof(*job));
	if (!job)
		return VMHEAP_ENOMEM;
	job->arg = malloc(arg_size ? arg_size : 1);
	if (!job->arg) {
		free(job);
		return VMHEAP_ENOMEM;
	}
	memcpy(job->arg, arg, arg_size);
	msgpack_sbuffer_init(&job->value);
	snprintf(job->kind, sizeof(job->kind), "%s", kind);
	job->run = run;
	job->registry = j;
	job->state = JOB_RUNNING;

	pthread_mutex_lock(&j->lock);
	if (j->stopping) {
		rc = VMHEAP_AGENT_EBUSY;
		goto refused;
	}
	for (struct job *o = j->jobs; o; o = o->next)
		if (o->state == JOB_RUNNING && !strcmp(o->kind, job->kind)) {
			rc = VMHEAP_AGENT_EBUSY;
			goto refused;
		}
	job->handle = ++j->last_handle;
	rc = pthread_create(&job->thread, NULL, job_main, job);
	if (rc != 0) {
		rc = VMHEAP_AGENT_ESYS;
		goto refused;
	}
	job->next = j->jobs;
	j->jobs = job;
	*handle = job->handle;
	pthread_mutex_unlock(&j->lock);
	return 0;
refused:
	pthread_mutex_unlock(&j->lock);
	job_free(job);
	return rc;
}

int agent_job_running(struct agent_jobs *j, const char *kind)
{
	int running = 0;

	pthread_mutex_lock(&j->lock);
	for (struct job *o = j->jobs; o; o = o->next)
		if (o->state == JOB_RUNNING && !strcmp(o->kind, kind))
			running = 1;
	pthread_mutex_unlock(&j->lock);
	return running;
}

/* Unlink and return one ended job, or NULL. */
static struct job *take_ended(struct agent_jobs *j)
{
	struct job **pp, *job = NULL;

	pthread_mutex_lock(&j->lock);
	for (pp = &j->jobs; *pp; pp = &(*pp)->next)
		if ((*pp)->state == JOB_ENDED) {
			job = *pp;
			*pp = job->next;
			break;
		}
	pthread_mutex_unlock(&j->lock);
	return job;
}

int agent_jobs_deliver(struct agent_jobs *j)
{
	struct agent_job_result res;
	struct job *job;
	int n = 0;

	while ((job = take_ended(j))) {
		/* its thread has nothing left to do but return */
		pthread_join(job->thread, NULL);
		res.code = job->code;
		res.message = job->message;
		res.value = job->code == 0 ? job->value.data : NULL;
		res.value_len = job->code == 0 ? job->value.size : 0;
		if (j->done)
			j->done(j->arg, job->handle, &res);
		job_free(job);
		n++;
	}
	return n;
}

void agent_jobs_stop(struct agent_jobs *j)
{
	int waiting;

	pthread_mutex_lock(&j->lock);
	j->stopping = 1;
	do {
		waiting = 0;
		for (struct job *o = j->jobs; o; o = o->next)
			if (!o->told)
				waiting = 1;
		if (waiting)
			pthread_cond_wait(&j->told, &j->lock);
	} while (waiting);
	pthread_mutex_unlock(&j->lock);
}

void agent_jobs_free(struct agent_jobs *j)
{
	struct job *job;

	if (!j)
		return;
	agent_jobs_stop(j);
	/* results nobody collected are dropped */
	while ((job = j->jobs)) {
		j->jobs = job->next;
		pthread_join(job->thread, NULL);
		job_free(job);
	}
	pthread_mutex_destroy(&j->lock);
	pthread_cond_destroy(&j->told);
	free(j);
}

int agent_job_start_for_reply(struct agent_jobs *j, const char *kind,
			      agent_job_run_fn run, const void *arg,
			      size_t arg_size, uint64_t *handle,
			      const char *busy, char *err, size_t errlen)
{
	int rc = agent_job_start(j, kind, run, arg, arg_size, handle);

	if (rc == VMHEAP_AGENT_EBUSY)
		return agent_fail(err, errlen, rc, "%s", busy);
	if (rc < 0)
		return agent_fail(err, errlen, rc, "cannot start the %s: %s",
				  kind, vmheap_agent_strerror(rc));
	return AGENT_PENDING;
}
