/*
 * sample_vm.c - the real vmheap-sample for the tests (see vmheap_spec.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmheap_agent.h"
#include "vmheap_spec.h"

int spec_discovery_wait(const char *tmpdir, pid_t pid,
			struct vmheap_agent_info *info, int timeout_ms,
			char *err, size_t errlen)
{
	char path[512];
	int64_t deadline = spec_now_ms() + timeout_ms;

	snprintf(path, sizeof(path), "%s/vmheap-agent.%ld", tmpdir, (long)pid);
	for (;;) {
		int status;

		if (access(path, F_OK) == 0 &&
		    vmheap_discovery_read(path, info, err, errlen) == 0)
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			snprintf(err, errlen,
				 "pid %ld exited (status %d) before writing %s",
				 (long)pid, spec_exit_code(status), path);
			return -1;
		}
		if (spec_now_ms() > deadline) {
			snprintf(err, errlen, "no discovery file %s after %d ms",
				 path, timeout_ms);
			return -1;
		}
		spec_sleep_ms(5);
	}
}

pid_t spec_vm_spawn(const char *tmpdir, const char *dumpdir,
		    const struct spec_vm_opts *o)
{
	static const struct spec_vm_opts none;
	char envt[300], envd[300], wrap[512];
	const char *argv[40], *env[24];
	struct spec_spawn sp = {0};
	const char *wrapper = getenv("VMHEAP_SAMPLE_WRAPPER");
	int n = 0, ne = 0;

	if (!o)
		o = &none;
	/* VMHEAP_SAMPLE_WRAPPER="valgrind -q --error-exitcode=99" runs the
	 * VM under a tool (the pid stays the same: the tool execs) */
	if (wrapper && *wrapper) {
		char *save = NULL;

		snprintf(wrap, sizeof(wrap), "%s", wrapper);
		for (char *w = strtok_r(wrap, " ", &save); w && n < 8;
		     w = strtok_r(NULL, " ", &save))
			argv[n++] = w;
	}
	argv[n++] = spec_bin("vmheap-sample");
	for (int i = 0; o->args && o->args[i] && n < 38; i++)
		argv[n++] = o->args[i];
	argv[n] = NULL;
	snprintf(envt, sizeof(envt), "VMHEAP_AGENT_TMPDIR=%s", tmpdir);
	snprintf(envd, sizeof(envd), "VMHEAP_AGENT_DIR=%s", dumpdir);
	env[ne++] = envt;
	env[ne++] = envd;
	for (int i = 0; o->env && o->env[i] && ne < 23; i++)
		env[ne++] = o->env[i];
	env[ne] = NULL;
	sp.argv = argv;
	sp.env = env;
	sp.stdout_path = o->log_path;
	sp.stderr_path = o->log_path;
	if (!o->log_path)
		sp.stderr_fd = 2; /* the test's own */
	sp.fsize_limit = o->fsize_limit;
	return spec_spawn(&sp);
}

void spec_vm_start(struct spec_vm *vm, const char *tmpdir,
		   const char *dumpdir, const struct spec_vm_opts *o)
{
	char err[700], fresh[200], dumps[256];
	int own = !tmpdir && !dumpdir;

	ck_assert_msg(own || (tmpdir && dumpdir),
		      "spec_vm_start: give both directories or neither");
	if (own) {
		snprintf(fresh, sizeof(fresh), "%s", spec_mkdtemp("vm"));
		snprintf(dumps, sizeof(dumps), "%s/dumps", fresh);
		ck_assert_msg(mkdir(dumps, 0700) == 0, "mkdir %s: %s", dumps,
			      strerror(errno));
		tmpdir = fresh;
		dumpdir = dumps;
	}
	memset(vm, 0, sizeof(*vm));
	vm->own_dir = own;
	snprintf(vm->tmpdir, sizeof(vm->tmpdir), "%s", tmpdir);
	snprintf(vm->dumpdir, sizeof(vm->dumpdir), "%s", dumpdir);
	vm->pid = spec_vm_spawn(tmpdir, dumpdir, o);
	ck_assert_msg(vm->pid > 0, "fork: %s", strerror(errno));
	snprintf(vm->discovery, sizeof(vm->discovery), "%s/vmheap-agent.%ld",
		 tmpdir, (long)vm->pid);
	if (spec_discovery_wait(tmpdir, vm->pid, &vm->info, 15000, err,
				sizeof(err)) < 0) {
		spec_kill(vm->pid);
		vm->pid = 0;
		ck_abort_msg("vmheap-sample: %s%s%s", err,
			     o && o->log_path ? "; see " : "",
			     o && o->log_path ? o->log_path : "");
	}
}

int spec_vm_run_to_exit(const struct spec_vm_opts *o, char **output)
{
	const char *dir = spec_mkdtemp("vm-exit");
	struct spec_vm_opts vo = {0};
	char log[300];
	int code;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/log", dir);
	if (o)
		vo = *o;
	vo.log_path = log;
	pid = spec_vm_spawn(dir, dir, &vo);
	ck_assert_msg(pid > 0, "fork: %s", strerror(errno));
	code = spec_wait(pid, 15000, NULL);
	if (code == -1) {
		spec_kill(pid);
		ck_abort_msg("vmheap-sample did not exit within 15 s");
	}
	*output = spec_read_file(log, NULL);
	if (!*output)
		*output = calloc(1, 1);
	ck_assert_ptr_nonnull(*output);
	return code;
}

int spec_vm_stop(struct spec_vm *vm)
{
	int st;

	if (vm->pid <= 0)
		return -1;
	st = spec_stop(vm->pid, SIGTERM, 15000);
	vm->pid = 0;
	return st < 0 ? -1 : spec_exit_code(st);
}

void spec_vm_cleanup(struct spec_vm *vm)
{
	if (vm->pid > 0)
		spec_vm_stop(vm);
	if (vm->own_dir && vm->tmpdir[0])
		spec_rmrf(vm->tmpdir);
	vm->own_dir = 0;
}

static struct spec_vm fixture_vm;
static int fixture_started;

void spec_vm_fixture_setup(void)
{
	spec_vm_start(&fixture_vm, NULL, NULL, NULL);
	fixture_started = 1;
}

void spec_vm_fixture_teardown(void)
{
	if (fixture_started)
		spec_vm_cleanup(&fixture_vm);
	fixture_started = 0;
}

struct spec_vm *spec_fixture_vm(void)
{
	ck_assert_msg(fixture_started, "spec_fixture_vm: no "
				       "spec_vm_fixture_setup fixture in this "
				       "TCase");
	return &fixture_vm;
}
