/*
 * ruby_attach.c - vmheap_attach.so: what `vmheap-console --attach PID`
 * loads into a running MRI Ruby (console/attach_inject.c runs dlopen on
 * the process's main thread).  It starts the agent as `require` would,
 * from a Ruby thread holding the GVL.
 *
 * The constructor runs inside the interrupted main thread, at an
 * arbitrary point of its code (outside the loader and malloc), with or
 * without the GVL: it may not call Ruby's API.  It only registers a
 * postponed job with rb_postponed_job_register_one, which is
 * async-signal-safe (profilers call it from signal handlers) and which, in
 * MRI 3.1, flags the calling thread's execution context: the main thread
 * is always a Ruby thread, so that is right.  The thread runs the job at
 * its next interrupt check, holding the GVL, where Ruby code (trap
 * handlers) may run.  A main thread blocked in a system call (sleep, IO
 * wait, Thread#join) comes back from it with EINTR, as after MRI's own
 * SIGVTALRM (the injector arranges it), and checks its interrupts.
 *
 * The job starts a Ruby thread that requires vmheap_agent.so from the
 * directory of this file (see start_agent for why a thread), under
 * rb_protect: an exception never reaches the program's code.
 *
 * This object does not link libruby: every Ruby function is looked up with
 * dlsym at load, so that loaded into a process without Ruby it does
 * nothing at all (the console refuses such processes before).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ruby/ruby.h>

typedef VALUE rb_value;

static int (*register_one)(unsigned flags, void (*fn)(void *), void *data);
static rb_value (*protect)(rb_value (*fn)(rb_value), rb_value arg, int *state);
static rb_value (*require)(const char *feature);
static void (*set_errinfo)(rb_value err);
static int (*native_thread_p)(void);
static rb_value (*thread_create)(rb_value (*fn)(void *), void *arg);

static char agent_path[4096];

static rb_value require_agent(rb_value unused)
{
	(void)unused;
	return require(agent_path);
}

static void attach_warn(const char *what)
{
	fprintf(
	    stderr,
	    "vmheap_attach: warning: cannot %s %s into pid %ld; the program "
	    "runs on without an agent\n",
	    what, agent_path, (long)getpid());
}

/* The body of the "vmheap-attach" thread: an ordinary Ruby thread, where
 * require may take its locks. */
static rb_value require_thread(void *unused)
{
	int state = 0;

	(void)unused;
	protect(require_agent, 0, &state);
	if (state) {
		set_errinfo(Qnil);
		attach_warn("load");
	}
	return Qnil;
}

static rb_value create_thread(rb_value unused)
{
	(void)unused;
	return thread_create(require_thread, NULL);
}

/*
 * The postponed job.  It runs with the GVL but in MRI's "trap context"
 * (rb_postponed_job_flush masks trap interrupts), where Mutex#lock raises
 * ThreadError and so does require (RubyGems' require takes a Monitor):
 * like a trap handler, it starts a thread that does the work.
 */
static void start_agent(void *unused)
{
	int state = 0;

	(void)unused;
	protect(create_thread, 0, &state);
	if (state) {
		set_errinfo(Qnil);
		attach_warn("start a thread to load");
	}
}

/* The directory of this file + "/vmheap_agent.so". 0 or -1. */
static int find_agent(void)
{
	Dl_info info;
	const char *slash;

	if (!dladdr((void *)find_agent, &info) || !info.dli_fname)
		return -1;
	slash = strrchr(info.dli_fname, '/');
	if (!slash ||
	    (size_t)(slash - info.dli_fname) + 20 >= sizeof(agent_path))
		return -1;
	memcpy(agent_path, info.dli_fname, (size_t)(slash - info.dli_fname));
	strcpy(agent_path + (slash - info.dli_fname), "/vmheap_agent.so");
	return 0;
}

__attribute__((constructor)) static void on_load(void)
{
	register_one = (int (*)(unsigned, void (*)(void *), void *))dlsym(
	    RTLD_DEFAULT, "rb_postponed_job_register_one");
	protect = (rb_value(*)(rb_value(*)(rb_value), rb_value, int *))dlsym(
	    RTLD_DEFAULT, "rb_protect");
	require = (rb_value(*)(const char *))dlsym(RTLD_DEFAULT, "rb_require");
	set_errinfo = (void (*)(rb_value))dlsym(RTLD_DEFAULT, "rb_set_errinfo");
	native_thread_p =
	    (int (*)(void))dlsym(RTLD_DEFAULT, "ruby_native_thread_p");
	thread_create = (rb_value(*)(rb_value(*)(void *), void *))dlsym(
	    RTLD_DEFAULT, "rb_thread_create");
	if (!register_one || !protect || !require || !set_errinfo ||
	    !native_thread_p || !thread_create)
		return; /* not Ruby */
	if (!native_thread_p() || find_agent() < 0)
		return;
	register_one(0, start_agent, NULL);
}
