/*
 * embedded_vm.c - a sample VM forked from the test with options
 * vmheap-sample does not have (see vmheap_spec.h).  It links the sample
 * host's heap, mutator and callbacks (hosts/sample), so only suites that
 * link those objects may call spec_vm_start_embedded.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../../hosts/sample/sample-internal.h"
#include "vmheap_spec.h"

/* The child's body: start the agent, say "ok PATH\n" or "error WHY\n" on
 * `wfd`, run until SIGTERM or SIGINT. */
static void embedded_main(const char *tmpdir, const char *dumpdir,
			  const struct spec_embedded *opt, int wfd)
{
	static struct sample_vm svm;
	struct vmheap_agent_host host;
	struct vmheap_agent_config cfg;
	char msg[700];
	sigset_t sigs;
	int sig;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	sample_heap_init(&svm);
	if (opt->leak_class) {
		svm.leak[0].cls =
		    sample_class_find_or_add(&svm, opt->leak_class);
		svm.leak[0].per_tick = opt->leak_per_tick;
		svm.nleak = 1;
	}
	if (opt->fsize_limit > 0) {
		struct rlimit rl = {(rlim_t)opt->fsize_limit,
				    (rlim_t)opt->fsize_limit};
		signal(SIGXFSZ, SIG_IGN); /* write() then fails with EFBIG */
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	atomic_store(&svm.tick_ms, 10);
	atomic_store(&svm.fork_status, -1);
	sample_host_init(&host, &svm);
	memset(&cfg, 0, sizeof(cfg));
	cfg.tmpdir = tmpdir;
	cfg.dump_dir = dumpdir;
	cfg.max_clients = opt->max_clients;
	cfg.dump_fork = -1;
	cfg.dump_gc = -1;
	if (vmheap_agent_start(&svm.agent, &cfg, &host) < 0) {
		snprintf(msg, sizeof(msg), "error %s\n",
			 vmheap_agent_error(svm.agent));
		if (write(wfd, msg, strlen(msg)) < 0)
			_exit(1);
		_exit(1);
	}
	if (pthread_create(&svm.mutator, NULL, sample_mutator_main, &svm)) {
		vmheap_agent_stop(svm.agent);
		_exit(1);
	}
	snprintf(msg, sizeof(msg), "ok %s\n",
		 vmheap_agent_discovery_path(svm.agent));
	if (write(wfd, msg, strlen(msg)) < 0)
		_exit(1);
	close(wfd);
	while (sigwait(&sigs, &sig) != 0)
		;
	atomic_store(&svm.stop, 1);
	pthread_join(svm.mutator, NULL);
	vmheap_agent_stop(svm.agent);
	sample_heap_free(&svm);
	_exit(0);
}

void spec_vm_start_embedded(struct spec_vm *vm, const char *tmpdir,
			    const char *dumpdir,
			    const struct spec_embedded *opt)
{
	char line[700], err[512];
	pid_t parent = getpid();
	int p[2];
	ssize_t got;

	memset(vm, 0, sizeof(*vm));
	snprintf(vm->tmpdir, sizeof(vm->tmpdir), "%s", tmpdir);
	snprintf(vm->dumpdir, sizeof(vm->dumpdir), "%s", dumpdir);
	ck_assert_int_eq(pipe(p), 0);
	fflush(NULL);
	vm->pid = fork();
	ck_assert_int_ge(vm->pid, 0);
	if (vm->pid == 0) {
		spec_die_with_parent(parent);
		close(p[0]);
		embedded_main(tmpdir, dumpdir, opt, p[1]);
	}
	close(p[1]);
	got = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	line[got > 0 ? got : 0] = '\0';
	if (strncmp(line, "ok ", 3) != 0 || !strchr(line, '\n')) {
		spec_vm_stop(vm);
		ck_abort_msg("the embedded VM said \"%s\"", line);
	}
	*strchr(line, '\n') = '\0';
	snprintf(vm->discovery, sizeof(vm->discovery), "%.500s", line + 3);
	if (vmheap_discovery_read(vm->discovery, &vm->info, err,
				  sizeof(err)) < 0) {
		spec_vm_stop(vm);
		ck_abort_msg("the embedded VM's discovery file: %s", err);
	}
}
