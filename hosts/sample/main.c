/*
 * main.c - vmheap-sample: a small C "VM" that embeds the vmheap agent.
 *
 *   vmheap-sample [--leak CLASS:N]... [--ticks N] [--tick-ms MS]
 *                 [--walk-delay-ms MS] [--no-agent]
 *   vmheap-sample --version
 *
 * It runs a mutator thread (see heap.c), starts the agent from the
 * VMHEAP_AGENT_* environment, prints "vmheap-sample: pid P port N" on
 * stdout, and runs until SIGTERM or SIGINT, when it stops the agent
 * (which removes its discovery file) and exits 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sample-internal.h"

static pid_t main_pid;

/*
 * LeakSanitizer's hook: no leak check in a forked child (sample.fork).
 * There the threads that own memory (the mutator, the agent's) are gone,
 * so whatever only their stacks pointed to looks leaked.  The parent is
 * checked as usual.
 */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
	return main_pid && getpid() != main_pid;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vmheap-sample [--leak CLASS:N]... [--ticks N] [--tick-ms "
	    "MS]\n"
	    "                     [--walk-delay-ms MS] [--no-agent]\n"
	    "  --leak CLASS:N      keep N objects of CLASS per tick (a leak)\n"
	    "  --ticks N           stop the mutator after N ticks (0: never)\n"
	    "  --tick-ms MS        sleep between ticks (default 10)\n"
	    "  --walk-delay-ms MS  pause inside every heap walk (tests)\n"
	    "  --no-agent          run without the agent\n"
	    "  --version           the version\n"
	    "The agent reads VMHEAP_AGENT_BIND, _PORT, _DIR, _TMPDIR,\n"
	    "_MAX_CLIENTS, _IDLE_TIMEOUT_MS and _REQUIRED.\n");
}

static int parse_num(const char *opt, const char *s, long long max,
		     long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	if (errno || *end || end == s || *out < 0 || *out > max) {
		fprintf(stderr,
			"vmheap-sample: %s wants a number from 0 to %lld, not "
			"\"%s\"\n",
			opt, max, s);
		return -1;
	}
	return 0;
}

static int parse_args(struct sample_vm *vm, int argc, char **argv,
		      int *no_agent)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		long long v;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		}
		if (!strcmp(a, "--version")) {
			printf("vmheap-sample %s\n", VMHEAP_VERSION);
			exit(0);
		}
		if (!strcmp(a, "--no-agent")) {
			*no_agent = 1;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr,
				"vmheap-sample: unknown option or missing "
				"value: %s\n",
				a);
			usage(stderr);
			return -1;
		}
		if (!strcmp(a, "--leak")) {
			char name[48];
			const char *colon = strrchr(argv[++i], ':');
			size_t nl = colon ? (size_t)(colon - argv[i]) : 0;

			if (!colon || nl == 0 || nl >= sizeof(name) ||
			    vm->nleak ==
				(int)(sizeof(vm->leak) / sizeof(*vm->leak)) ||
			    parse_num("--leak", colon + 1, 100000, &v) < 0) {
				fprintf(stderr,
					"vmheap-sample: --leak wants CLASS:N, "
					"not \"%s\"\n",
					argv[i]);
				return -1;
			}
			memcpy(name, argv[i], nl);
			name[nl] = '\0';
			vm->leak[vm->nleak].cls =
			    sample_class_find_or_add(vm, name);
			if (!vm->leak[vm->nleak].cls) {
				fprintf(stderr,
					"vmheap-sample: too many classes\n");
				return -1;
			}
			vm->leak[vm->nleak++].per_tick = (unsigned)v;
		} else if (!strcmp(a, "--ticks")) {
			if (parse_num(a, argv[++i], 1LL << 40, &v) < 0)
				return -1;
			vm->max_ticks = (uint64_t)v;
		} else if (!strcmp(a, "--tick-ms")) {
			if (parse_num(a, argv[++i], 60000, &v) < 0)
				return -1;
			atomic_store(&vm->tick_ms, (int)v);
		} else if (!strcmp(a, "--walk-delay-ms")) {
			if (parse_num(a, argv[++i], 600000, &v) < 0)
				return -1;
			vm->walk_delay_ms = (int)v;
		} else {
			fprintf(stderr, "vmheap-sample: unknown option: %s\n",
				a);
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct sample_vm vm;
	struct vmheap_agent_host host;
	struct vmheap_agent_config cfg;
	char err[512];
	sigset_t sigs;
	int no_agent = 0, sig, rc;

	main_pid = getpid();
	sample_heap_init(&vm);
	pthread_mutex_init(&vm.write_lock, NULL);
	atomic_store(&vm.tick_ms, 10);
	atomic_store(&vm.fork_status, -1);
	if (parse_args(&vm, argc, argv, &no_agent) < 0)
		return 2;

	/* Signals are taken by sigwait() below; every thread inherits
	 * this mask, so none of them is interrupted by them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	if (!no_agent) {
		sample_host_init(&host, &vm);
		vm.host = &host;
		if (vmheap_agent_config_from_env(&cfg, err, sizeof(err)) == 0)
			vm.cfg = cfg;
		int rc = vmheap_agent_config_from_env(&cfg, err, sizeof(err));

		if (rc == 0 &&
		    (rc = vmheap_agent_start(&vm.agent, &cfg, &host)) < 0) {
			snprintf(err, sizeof(err), "%s",
				 vmheap_agent_error(vm.agent));
			vmheap_agent_stop(vm.agent);
			vm.agent = NULL;
		}
		if (rc < 0) {
			if (cfg.required) {
				fprintf(stderr,
					"vmheap-sample: cannot start the "
					"agent: %s (VMHEAP_AGENT_REQUIRED is "
					"set)\n",
					err);
				return 1;
			}
			/* the agent never stops the VM: warn, run on */
			fprintf(stderr,
				"vmheap-sample: warning: no agent in pid %d, "
				"the VM runs on without it: %s (set "
				"VMHEAP_AGENT_REQUIRED=1 to make this "
				"fatal)\n",
				(int)getpid(), err);
			vm.agent = NULL;
			vm.host = NULL;
			printf("vmheap-sample: pid %d (no agent)\n",
			       (int)getpid());
		} else {
			printf("vmheap-sample: pid %d port %u discovery %s\n",
			       (int)getpid(),
			       (unsigned)vmheap_agent_port(vm.agent),
			       vmheap_agent_discovery_path(vm.agent));
		}
	} else {
		printf("vmheap-sample: pid %d (no agent)\n", (int)getpid());
	}
	fflush(stdout);

	if ((rc =
		 pthread_create(&vm.mutator, NULL, sample_mutator_main, &vm))) {
		fprintf(stderr, "vmheap-sample: cannot start the mutator: %s\n",
			strerror(rc));
		vmheap_agent_stop(vm.agent);
		return 1;
	}
	for (;;) {
		if (sigwait(&sigs, &sig) != 0)
			continue;
		if (sig == SIGCHLD) {
			/* reap only our own test child: the agent waits for
			 * its dump children itself */
			pid_t child = atomic_load(&vm.fork_child);
			int status;
			if (child > 0 &&
			    waitpid(child, &status, WNOHANG) == child)
				atomic_store(&vm.fork_status,
					     WIFEXITED(status)
						 ? WEXITSTATUS(status)
						 : 128 + WTERMSIG(status));
			continue;
		}
		break;
	}
	atomic_store(&vm.stop, 1);
	pthread_join(vm.mutator, NULL);
	sample_writer_stop(&vm);
	vmheap_agent_stop(vm.agent);
	sample_heap_free(&vm);
	return 0;
}
