/*
 * native_agent.c - libvmheap-native-agent.so: the agent for any program.
 *
 * vmheap-run preloads this library after the malloc tracker into the
 * program it starts (C, C++, Rust: anything dynamically linked), so that
 * `vmheap-console -p PID` reaches a program that embeds no agent: `get
 * system.native.*`, `set config.native.track`, `set system.memory.dump
 * FILE` (a dump whose heap is empty and whose native section carries the
 * tracker's native stacks and, the dump being forked, the leak scan).  And when
 * vmheap-run was given `--output NAME` (VMHEAP_RUN_OUTPUT), the process
 * writes such a dump when it exits.
 *
 * The host: there is no managed heap, so no world to stop (run_stopped
 * runs the agent's function at once; the program's threads run on and the
 * fork of a dump is their only pause), an empty heap walk, and fork(2).
 *
 * The agent starts from this library's constructor, before the program's
 * own constructors and main, with the settings of a preloaded Ruby agent
 * (VMHEAP_AGENT_*: loopback, a token in a discovery file of mode 0600),
 * its threads created with every asynchronous signal blocked: no signal
 * is taken from the program (SIGINT, SIGTERM, SIGUSR2 and the rest reach
 * the program's threads as without it), and none is handled.  It does
 * not start when vmheap-run was given --no-agent (VMHEAP_RUN_AGENT=0).
 *
 * One agent per process.  An agent that starts later in the process (the
 * Ruby extension that vmheap-run loads into ruby, a program that embeds
 * libvmheap-agent) calls vmheap_run_agent_yield first (agent/run_agent.c):
 * this one stops, removes its discovery file and never starts again; the
 * dump at exit is still written here.  A forked child has no agent (its
 * threads did not survive the fork: the stale one is let go without
 * touching the parent's discovery file), and writes its own file at exit;
 * a program executed later loads this library again and has its own.
 *
 * At exit: the destructor runs after the program's atexit handlers and
 * the main program's own destructors (its C++ static objects), so blocks
 * they free are not counted; the libraries the program links (libstdc++,
 * any DT_NEEDED library) are finalized after it, so what their own
 * destructors would free is still live in the dump.  It stops the agent
 * (waiting for a dump it runs), then, with --output, writes the dump
 * (unless a VM wrote it at its end: vmheap_run_exit_dump)
 * (vmheap_agent_dump_file) to the name the tracker gives
 * (vmheap_native_output_name: vmheap-run(1) FILES), and says on stderr
 * why when it cannot; the exit status stays the program's.  _exit(),
 * _Exit(), quick_exit(), a fatal signal and exec run no destructor: no
 * file is written for them.
 */
#include <gnu/libc-version.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmheap_agent.h"
#include "vmheap_native.h"

#define PUBLIC __attribute__((visibility("default")))

static struct vmheap_agent_host host;
static vmheap_agent *agent;
/* VMHEAP_RUN_OUTPUT, made absolute by vmheap-run */
static char output[PATH_MAX];

static int run_now(void *ctx, int (*fn)(void *arg), void *arg)
{
	(void)ctx;
	return fn(arg);
}

static int walk_nothing(void *ctx, vmheap_writer *w)
{
	(void)ctx, (void)w;
	return 0;
}

static pid_t fork_now(void *ctx)
{
	(void)ctx;
	return fork();
}

/* Asynchronous signals stay the program's: the agent's threads are
 * created with them blocked (they inherit the mask). */
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

static void start_agent(void)
{
	struct vmheap_agent_config cfg;
	char err[1024];
	sigset_t old;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	rc = vmheap_agent_config_from_env(&cfg, err, sizeof(err));
	if (rc == 0) {
		block_async_signals(&old);
		rc = vmheap_agent_start(&agent, &cfg, &host);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc < 0) {
			snprintf(err, sizeof(err), "%s",
				 vmheap_agent_error(agent));
			vmheap_agent_stop(agent); /* the failed agent */
		}
	}
	if (rc < 0) {
		agent = NULL;
		fprintf(stderr, "vmheap-run: no agent in pid %ld: %s\n",
			(long)getpid(), err);
		if (cfg.required)
			exit(2);
		return;
	}
	if (getenv("VMHEAP_AGENT_VERBOSE") && *getenv("VMHEAP_AGENT_VERBOSE"))
		fprintf(stderr,
			"vmheap-agent: pid %ld, port %u, discovery %s\n",
			(long)getpid(), (unsigned)vmheap_agent_port(agent),
			vmheap_agent_discovery_path(agent));
}

__attribute__((constructor)) static void native_agent_init(void)
{
	const char *out = getenv("VMHEAP_RUN_OUTPUT");
	const char *on = getenv("VMHEAP_RUN_AGENT");

	host.vm_name = "native";
	host.vm_version = gnu_get_libc_version(); /* the allocator's */
	host.run_stopped = run_now;
	host.walk_heap = walk_nothing;
	host.fork_stopped = fork_now;
	if (out && *out && strlen(out) < sizeof(output))
		memcpy(output, out, strlen(out) + 1);
	if (!on || strcmp(on, "0") != 0)
		start_agent();
}

/* Called by an agent that starts in this process (agent/run_agent.c). */
PUBLIC void vmheap_run_agent_yield(void)
{
	vmheap_agent *a = agent;

	agent = NULL;
	vmheap_agent_stop(a);
}

/*
 * Overwrite 64 KiB of the unused stack below this frame: the frames of
 * the dump that follow would otherwise hold, in their unwritten slots,
 * stale pointers that the program's calls left there, which the leak
 * scan reads as roots (native/README.md, "The leak scan").  Only where
 * 96 KiB are left below (exit may run on a thread with a small stack).
 */
#define SCRUB_BYTES (64 * 1024)

static __attribute__((noinline)) void scrub_stack(void)
{
	volatile char buf[SCRUB_BYTES];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 0;
}

static int stack_has_room(void)
{
	pthread_attr_t attr;
	void *lo;
	size_t size;
	char here;
	int room = 0;

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return 0;
	if (pthread_attr_getstack(&attr, &lo, &size) == 0)
		room = (uintptr_t)&here - (uintptr_t)lo >
		       (uintptr_t)SCRUB_BYTES + 32 * 1024;
	pthread_attr_destroy(&attr);
	return room;
}

/* Not inlined: its frame (a path and a message buffer, 5 KiB the dump
 * mostly leaves unwritten) lies in the stack that scrub_then_write
 * zeroed. */
static __attribute__((noinline)) void write_output(void)
{
	vmheap_native_output_name_fn name_of;
	char name[PATH_MAX], err[1024];

	*(void **)&name_of = dlsym(RTLD_DEFAULT, "vmheap_native_output_name");
	if (!name_of) {
		fprintf(stderr,
			"vmheap-run: pid %ld wrote no dump to %s: the malloc "
			"tracker (libvmheap-malloc.so) is not loaded\n",
			(long)getpid(), output);
		return;
	}
	if (name_of(output, name, sizeof(name)) != 0) {
		fprintf(stderr,
			"vmheap-run: pid %ld wrote no dump: the name %s is too "
			"long\n",
			(long)getpid(), output);
		return;
	}
	if (vmheap_agent_dump_file(&host, name, err, sizeof(err)) < 0)
		fprintf(stderr, "vmheap-run: pid %ld wrote no dump: %s\n",
			(long)getpid(), err);
}

/* The stack below the caller zeroed first, then the exit dump written
 * in frames that begin there: write_output's own buffers held the
 * program's stale pointers when it scrubbed below itself (in 3 of 5
 * Ruby runs 2-4 of 10,000 forgotten blocks read possibly leaked or
 * reachable from its unwritten path buffer). */
static __attribute__((noinline)) void scrub_then_write(void)
{
	if (stack_has_room())
		scrub_stack();
	write_output();
}

/* The exit dump, once a process: from a VM's end (vmheap_run_exit_dump)
 * or from the destructor below. */
static int exit_written;

/*
 * Called by a VM's agent when its program is done but the VM still
 * stands (the Ruby agent's end proc, hosts/ruby/ruby_agent.c): with
 * --output, the exit dump is written now, and `prepare` (may be NULL)
 * runs in its forked child before the leak scan, as a host's
 * prepare_child does (it clears the words the VM keeps but never reads).
 * The destructor then writes none.  After the VM is torn down its heap
 * is gone: every body its objects held would read leaked, and its dead
 * words (the transient heap, deleted table entries) are no longer
 * there to be told from live ones.
 */
PUBLIC void vmheap_run_exit_dump(int (*prepare)(void *ctx, int gc))
{
	vmheap_agent *a = agent;

	agent = NULL;
	vmheap_agent_stop(a);
	if (!output[0] || exit_written)
		return;
	exit_written = 1;
	host.prepare_child = prepare;
	scrub_then_write();
	host.prepare_child = NULL;
}

__attribute__((destructor)) static void native_agent_fini(void)
{
	vmheap_agent *a = agent;

	agent = NULL;
	vmheap_agent_stop(a); /* in a forked child: lets the stale one go */
	if (output[0] && !exit_written)
		scrub_then_write();
}
