/*
 * ruby_worker.c - the "vmheap-agent" Ruby thread.
 *
 * Ruby's C API may be called only from a Ruby thread that holds the GVL.
 * The agent's loop and dump threads are plain pthreads, so they post jobs
 * here.  The Ruby thread waits for work WITHOUT the GVL
 * (rb_thread_call_without_gvl, with an unblocking function that wakes it),
 * so an idle agent costs the VM nothing.  When a job arrives the call
 * returns, which re-acquires the GVL; the job runs while every other Ruby
 * thread is stopped at a GVL release point, and its poster is signalled.
 *
 * A job is left on the queue until the thread holds the GVL: if the thread
 * is killed on its way back (VM exit, Thread#kill), the ensure handler
 * fails every queued job so that no poster waits forever.
 */
#include <errno.h>
#include <time.h>

#include <ruby/thread.h>

#include "ruby-internal.h"

enum { JOB_PENDING, JOB_RUNNING, JOB_DONE };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_posted; /* a job was queued, or wake() */
static pthread_cond_t job_done;	   /* CLOCK_MONOTONIC for timed waits */
static int conds_ready;
static struct ruby_job *head, *tail, *current;
static int alive; /* the Ruby thread takes jobs */
static int woken; /* wake() asked the thread to return to Ruby */
static VALUE worker_thread = Qnil;
static _Thread_local int in_job;

static void init_sync(void)
{
	pthread_condattr_t attr;

	pthread_mutex_init(&lock, NULL);
	pthread_cond_init(&work_posted, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&job_done, &attr);
	pthread_condattr_destroy(&attr);
	conds_ready = 1;
}

/* Without the GVL: sleep until a job is queued or Ruby interrupts us. */
static void *wait_for_work(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&lock);
	while (!head && !woken)
		pthread_cond_wait(&work_posted, &lock);
	woken = 0;
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* The unblocking function: Ruby calls it to interrupt wait_for_work. */
static void wake(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&lock);
	woken = 1;
	pthread_cond_broadcast(&work_posted);
	pthread_mutex_unlock(&lock);
}

/* With the GVL: run every queued job. */
static void run_queued_jobs(void)
{
	for (;;) {
		struct ruby_job *job;
		int result;

		pthread_mutex_lock(&lock);
		job = head;
		if (!job) {
			pthread_mutex_unlock(&lock);
			return;
		}
		head = job->next;
		if (!head)
			tail = NULL;
		job->state = JOB_RUNNING;
		current = job;
		pthread_mutex_unlock(&lock);

		in_job = 1;
		result = job->fn(job->arg);
		in_job = 0;

		pthread_mutex_lock(&lock);
		job->result = result;
		job->state = JOB_DONE;
		current = NULL;
		pthread_cond_broadcast(&job_done);
		pthread_mutex_unlock(&lock);
	}
}

static VALUE serve(VALUE unused)
{
	(void)unused;
	for (;;) {
		rb_thread_call_without_gvl(wait_for_work, NULL, wake, NULL);
		run_queued_jobs();
	}
	return Qnil;
}

/* The thread is ending: fail what is queued so that no poster hangs. */
static VALUE serve_end(VALUE unused)
{
	struct ruby_job *job;

	(void)unused;
	pthread_mutex_lock(&lock);
	alive = 0;
	for (job = head; job; job = job->next) {
		job->result = VMHEAP_AGENT_EDUMP;
		job->state = JOB_DONE;
	}
	if (current) {
		current->result = VMHEAP_AGENT_EDUMP;
		current->state = JOB_DONE;
		current = NULL;
	}
	head = tail = NULL;
	pthread_cond_broadcast(&job_done);
	pthread_mutex_unlock(&lock);
	in_job = 0;
	return Qnil;
}

static VALUE worker_main(void *unused)
{
	(void)unused;
	return rb_ensure(serve, Qnil, serve_end, Qnil);
}

int ruby_worker_start(void)
{
	static int registered;

	if (!conds_ready)
		init_sync();
	if (!registered) {
		rb_gc_register_address(&worker_thread);
		registered = 1;
	}
	pthread_mutex_lock(&lock);
	alive = 1;
	woken = 0;
	pthread_mutex_unlock(&lock);

	worker_thread = rb_thread_create(worker_main, NULL);
	if (NIL_P(worker_thread)) {
		pthread_mutex_lock(&lock);
		alive = 0;
		pthread_mutex_unlock(&lock);
		return -1;
	}
	rb_funcall(worker_thread, rb_intern("name="), 1,
		   rb_str_new_cstr("vmheap-agent"));
	/* where rb_thread_t keeps a name, for the dumps' thread names */
	ruby_name_layout_learn_thread(worker_thread);
	return 0;
}

void ruby_worker_stop(void)
{
	VALUE t = worker_thread;

	worker_thread = Qnil;
	if (!NIL_P(t)) {
		rb_funcall(t, rb_intern("kill"), 0);
		rb_funcall(t, rb_intern("join"), 0);
	}
}

static void deadline_after(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void unqueue(struct ruby_job *job)
{
	struct ruby_job **p = &head, *prev = NULL;

	while (*p && *p != job) {
		prev = *p;
		p = &(*p)->next;
	}
	if (!*p)
		return;
	*p = job->next;
	if (tail == job)
		tail = prev;
}

int ruby_worker_run(int (*fn)(void *arg), void *arg, int timeout_ms)
{
	struct ruby_job job = {fn, arg, 0, JOB_PENDING, NULL};
	struct timespec deadline;
	int result;

	if (!conds_ready)
		return VMHEAP_AGENT_EDUMP;
	pthread_mutex_lock(&lock);
	if (!alive) {
		pthread_mutex_unlock(&lock);
		return VMHEAP_AGENT_EDUMP;
	}
	if (tail)
		tail->next = &job;
	else
		head = &job;
	tail = &job;
	pthread_cond_broadcast(&work_posted);

	if (timeout_ms >= 0)
		deadline_after(&deadline, timeout_ms);
	while (job.state != JOB_DONE) {
		if (job.state == JOB_PENDING && timeout_ms >= 0) {
			int rc =
			    pthread_cond_timedwait(&job_done, &lock, &deadline);
			if (rc == ETIMEDOUT && job.state == JOB_PENDING) {
				unqueue(&job);
				pthread_mutex_unlock(&lock);
				return VMHEAP_AGENT_ETIMEOUT;
			}
		} else {
			pthread_cond_wait(&job_done, &lock);
		}
	}
	result = job.result;
	pthread_mutex_unlock(&lock);
	return result;
}

int ruby_worker_in_job(void)
{
	return in_job;
}

void ruby_worker_after_fork_child(void)
{
	/* The lock may have been held by a thread that does not exist here. */
	init_sync();
	head = tail = current = NULL;
	alive = 0;
	woken = 0;
	worker_thread = Qnil;
}
