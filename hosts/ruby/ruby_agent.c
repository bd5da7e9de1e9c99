/*
 * ruby_agent.c - vmheap_agent.so: the agent inside MRI.
 *
 *   ruby -I build/ruby -rvmheap_agent app.rb
 *
 * Loading the extension starts the agent (the VMHEAP_AGENT_* variables
 * apply) and writes its discovery file; at exit (under vmheap-run
 * --output after writing the exit dump: exit_dump below) the agent stops
 * and the file goes.  When the agent cannot start (a bad variable, a missing
 * dump directory, a port in use) one warning line goes to stderr and the
 * program runs on without it; VMHEAP_AGENT_REQUIRED=1 makes that an
 * exception instead.  Nothing is printed on stdout; with VMHEAP_AGENT_VERBOSE
 * set one line on stderr gives the pid and port.
 *
 * Dumps.  run_stopped runs the agent's function on the "vmheap-agent"
 * Ruby thread holding the GVL (ruby_worker.c), so every other Ruby thread
 * is stopped at a GVL release point.  fork_stopped is called from inside
 * that function (see vmheap_agent.h) and is a plain fork(2): the child's
 * only thread is that Ruby thread, it still holds the GVL, so the heap is
 * consistent and the Ruby API works there.  In the child prepare_child
 * runs a full GC (only live objects are dumped) and walk_heap writes the
 * dump; the child never releases the GVL (no other thread exists to take
 * it) and _exit()s.  The parent pauses only for fork().
 *
 * fork in the program (Rubinius #3035).  Process._fork is wrapped (a
 * module prepended to Process's singleton class): in the child, the stale
 * agent, whose threads did not survive the fork, is released without
 * touching the parent's discovery file, and a fresh agent starts with its
 * own discovery file.  Process.daemon gets the same treatment.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ruby/thread.h>
#include <ruby/version.h>

#include "ruby-internal.h"

/* How long a dump waits for the Ruby thread to get the GVL. */
#define SAFE_POINT_TIMEOUT_MS 60000

static vmheap_agent *agent;
static struct vmheap_agent_host host;
static int stopped_by_program; /* VmheapAgent.stop: none in children */

/* ------------------------------------------------------------ host */

static int host_run_stopped(void *ctx, int (*fn)(void *arg), void *arg)
{
	(void)ctx;
	if (ruby_worker_in_job())
		return fn(arg);
	return ruby_worker_run(fn, arg, SAFE_POINT_TIMEOUT_MS);
}

static int host_walk_heap(void *ctx, vmheap_writer *w)
{
	(void)ctx;
	return ruby_walk_heap(w);
}

static pid_t host_fork_stopped(void *ctx)
{
	(void)ctx;
	/* Only the Ruby thread holding the GVL may fork: the child needs a
	 * Ruby thread to GC and walk (see the comment at the top). */
	if (!ruby_worker_in_job()) {
		errno = ENOTSUP;
		return -1;
	}
	return fork();
}

/* For the leak scan, which comes next in a dump's child. */
static void clear_dead_words(void)
{
	ruby_clear_transient_heap(); /* first: it allocates an Array */
	ruby_clear_free_slots();
	ruby_clear_dead_vm_stacks();
	ruby_clear_vm_st_tables();
	ruby_clear_static_st_tables();
	ruby_clear_array_tails();
}

/* A dump's child, before it writes (or, for the exit dump of
 * vmheap-run --output, before the leak scan alone): the GC when asked,
 * then the dead words cleared for the leak scan. */
static int gc_and_clear(void *ctx, int gc)
{
	(void)ctx;
	if (gc) {
		/* The program may have disabled the GC; only the child's copy
		 * is enabled here.  rb_gc() does not run finalizers. */
		rb_gc_enable();
		rb_gc();
	}
	clear_dead_words();
	return 0;
}

static int host_prepare_child(void *ctx, int gc)
{
	ruby_names_prepare_child(); /* its Ruby garbage goes in the GC */
	return gc_and_clear(ctx, gc);
}

static void host_init(void)
{
	memset(&host, 0, sizeof(host));
	host.vm_name = "ruby";
	host.vm_version = ruby_version;
	host.run_stopped = host_run_stopped;
	host.walk_heap = host_walk_heap;
	host.fork_stopped = host_fork_stopped;
	host.prepare_child = host_prepare_child;
	host.kind_names = ruby_kind_names;
	host.kind_count = ruby_kind_count;
	host.sites = 1; /* iseqs always, traced objects (ruby_dump_sites.c) */
	host.list_vars = ruby_vars_list;
	host.get_var = ruby_vars_get;
	host.set_var = ruby_vars_set;
	host.edge_names = 1; /* unless config.dump.names is false */
}

/* ------------------------------------------------------------ start/stop */

/*
 * The agent's threads inherit the signal mask of the thread that creates
 * them: block the asynchronous signals so that Ruby's own threads keep
 * receiving SIGINT, SIGTERM, SIGCHLD and the rest.
 */
static void block_async_signals(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGTRAP);
	sigdelset(&all, SIGSYS);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

/* Start the agent; on failure *required says whether that is fatal
 * (VMHEAP_AGENT_REQUIRED). */
static int start_agent(char *err, size_t errlen, int *required)
{
	struct vmheap_agent_config cfg;
	sigset_t old;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	cfg.dump_fork = -1;
	cfg.dump_gc = -1;
	rc = vmheap_agent_config_from_env(&cfg, err, errlen);
	*required = cfg.required;
	if (rc < 0)
		return rc;
	if (ruby_worker_start() < 0) {
		snprintf(err, errlen, "cannot create the vmheap-agent thread");
		return VMHEAP_AGENT_ESYS;
	}
	block_async_signals(&old);
	rc = vmheap_agent_start(&agent, &cfg, &host);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		snprintf(err, errlen, "%s", vmheap_agent_error(agent));
		vmheap_agent_stop(agent); /* a failed agent holds only that */
		agent = NULL;
		ruby_worker_stop();
		return rc;
	}
	if (getenv("VMHEAP_AGENT_VERBOSE") && *getenv("VMHEAP_AGENT_VERBOSE"))
		fprintf(stderr,
			"vmheap-agent: pid %ld, port %u, discovery %s\n",
			(long)getpid(), (unsigned)vmheap_agent_port(agent),
			vmheap_agent_discovery_path(agent));
	return 0;
}

static void *stop_without_gvl(void *a)
{
	vmheap_agent_stop(a);
	return NULL;
}

/*
 * Stop the agent without holding the GVL: a dump that is running may need
 * the Ruby thread (and so the GVL) to finish.
 */
static void stop_agent(void)
{
	vmheap_agent *a = agent;

	agent = NULL;
	if (a)
		rb_thread_call_without_gvl(stop_without_gvl, a, NULL, NULL);
}

/*
 * Under vmheap-run --output the exit dump is written here, after the
 * program's own end procs (this one was registered first, when the
 * extension loaded) and before the VM is torn down: the preloaded native
 * agent (hosts/native) would write it from its destructor, when Ruby's
 * heap pages are gone and the bodies its objects held read leaked, and
 * with none of the words above cleared.
 */
static void exit_dump(void)
{
	void (*dump)(int (*)(void *, int));

	*(void **)&dump = dlsym(RTLD_DEFAULT, "vmheap_run_exit_dump");
	if (dump)
		dump(gc_and_clear);
}

static void at_exit_stop(VALUE unused)
{
	(void)unused;
	/* first: the agent's Ruby thread still waits for work, its signal
	 * stack named by its rb_thread_t (once killed and joined, the stack
	 * stays until its pthread frees it, held by that pthread's frames) */
	exit_dump();
	ruby_native_stop();
	stop_agent();
}

/* ------------------------------------------------------------ fork */

static void after_fork_child(void)
{
	char err[512];
	int required;

	ruby_worker_after_fork_child();
	if (agent) {
		/* Its threads did not survive the fork: free it and leave the
		 * parent's discovery file alone. */
		vmheap_agent_stop(agent);
		agent = NULL;
	}
	if (stopped_by_program)
		return;
	if (start_agent(err, sizeof(err), &required) < 0)
		rb_warn("vmheap_agent: no agent in the forked child %ld: %s",
			(long)getpid(), err);
}

static VALUE fork_hook(VALUE self)
{
	VALUE pid = rb_call_super(0, NULL);

	(void)self;
	if (pid == INT2FIX(0))
		after_fork_child();
	return pid;
}

/*
 * Process.daemon forks inside Ruby without Process._fork: in the daemon
 * the agent is stale (its threads stayed in the exited parent).
 */
static VALUE daemon_hook(int argc, VALUE *argv, VALUE self)
{
	VALUE r = rb_call_super(argc, argv);

	(void)self;
	if (agent && vmheap_agent_is_stale(agent))
		after_fork_child();
	return r;
}

/* ------------------------------------------------------------ Ruby API */

/* VmheapAgent.port -> Integer or nil */
static VALUE agent_port(VALUE self)
{
	(void)self;
	return agent ? UINT2NUM(vmheap_agent_port(agent)) : Qnil;
}

/* VmheapAgent.discovery_path -> String or nil */
static VALUE agent_discovery_path(VALUE self)
{
	(void)self;
	return agent ? rb_str_new_cstr(vmheap_agent_discovery_path(agent))
		     : Qnil;
}

/* VmheapAgent.stop -> nil: stop the agent now; it does not restart, not
 * even in children forked later. */
static VALUE agent_stop(VALUE self)
{
	(void)self;
	stopped_by_program = 1;
	stop_agent();
	return Qnil;
}

RUBY_FUNC_EXPORTED void Init_vmheap_agent(void)
{
	VALUE mod, hook;
	char err[512];
	int required;

	if (agent)
		return;
	host_init();
	if (ruby_vars_init() < 0)
		rb_raise(rb_eRuntimeError, "vmheap_agent: cannot read GC.stat");

	mod = rb_define_module("VmheapAgent");
	rb_define_module_function(mod, "port", agent_port, 0);
	rb_define_module_function(mod, "discovery_path", agent_discovery_path,
				  0);
	rb_define_module_function(mod, "stop", agent_stop, 0);

	hook = rb_define_module_under(mod, "ForkHook");
	rb_define_method(hook, "_fork", fork_hook, 0);
	rb_define_method(hook, "daemon", daemon_hook, -1);
	rb_prepend_module(rb_singleton_class(rb_mProcess), hook);

	ruby_name_layout_init(); /* before the agent's first dump */
	if (start_agent(err, sizeof(err), &required) < 0) {
		if (required)
			rb_raise(rb_eRuntimeError,
				 "vmheap_agent: cannot start: %s "
				 "(VMHEAP_AGENT_REQUIRED is set)",
				 err);
		/* A diagnostic agent never stops the program that carries
		 * it: one line on stderr, and the program runs on. */
		fprintf(stderr,
			"vmheap_agent: warning: no agent in pid %ld, the "
			"program runs on without it: %s (set "
			"VMHEAP_AGENT_REQUIRED=1 to make this fatal)\n",
			(long)getpid(), err);
		fflush(stderr);
	}
	ruby_native_init(); /* -1: no tracker, nothing to name lines for */
	rb_set_end_proc(at_exit_stop, Qnil);
}
