/*
 * reliability_harness.c - see reliability-internal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reliability-internal.h"
#include "../hosts/sample/sample-internal.h"

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static char *ring(void)
{
	static char bufs[8][1024];
	static int next;

	return bufs[next++ % 8];
}

const char *rl_bin(const char *name)
{
	char *b = ring();

	snprintf(b, 1024, "%s/bin/%s", env_or("VMHEAP_BUILD", "build"), name);
	return b;
}

const char *rl_src(const char *rel)
{
	char *b = ring();

	snprintf(b, 1024, "%s/%s", env_or("VMHEAP_SRC", "."), rel);
	return b;
}

const char *rl_mkdtemp(const char *tag)
{
	static char dirs[16][256];
	static int next;
	char *b = dirs[next++ % 16];

	snprintf(b, 256, "%.200s/vmheap-rl-%.20s-XXXXXX",
		 env_or("TMPDIR", "/tmp"), tag);
	if (!mkdtemp(b)) {
		perror("mkdtemp");
		abort();
	}
	return b;
}

void rl_rmrf(const char *dir)
{
	const char *argv[] = {"/bin/rm", "-rf", dir, NULL};
	struct rl_run r;

	if (rl_run(argv, NULL, NULL, 10000, &r) == 0)
		rl_run_free(&r);
}

int64_t rl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rl_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------ processes */

static int status_of(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int rl_wait(pid_t pid, int timeout_ms)
{
	int64_t end = rl_now_ms() + timeout_ms;
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return status_of(st);
		if (w < 0)
			return -2;
		if (rl_now_ms() > end)
			return -1;
		rl_sleep_ms(5);
	}
}

pid_t rl_spawn(const char *const *argv, const char *out_path,
	       const char *err_path)
{
	pid_t pid = fork();

	if (pid == 0) {
		int o = open(out_path ? out_path : "/dev/null",
			     O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err_path ? err_path : "/dev/null",
			     O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int n = open("/dev/null", O_RDONLY);

		dup2(n, 0);
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static void drain(int fd, char **buf, size_t *len, size_t *cap, int *open_)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n <= 0) {
		*open_ = 0;
		return;
	}
	if (*len + (size_t)n + 1 > *cap) {
		*cap = (*len + (size_t)n + 1) * 2;
		*buf = realloc(*buf, *cap);
	}
	memcpy(*buf + *len, tmp, (size_t)n);
	*len += (size_t)n;
	(*buf)[*len] = '\0';
}

int rl_run(const char *const *argv, const char *const *env, const char *input,
	   int timeout_ms, struct rl_run *r)
{
	int po[2], pe[2], pi[2];
	size_t lo = 0, le = 0, co = 64, ce = 64, inlen, inoff = 0;
	int oo = 1, eo = 1, st;
	int64_t start = rl_now_ms(), end = start + timeout_ms;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->out = calloc(1, co);
	r->err = calloc(1, ce);
	if (pipe(po) < 0 || pipe(pe) < 0 || pipe(pi) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pi[0], 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(pi[1]);
		close(po[0]);
		close(pe[0]);
		for (int i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(pi[0]);
	close(po[1]);
	close(pe[1]);
	inlen = input ? strlen(input) : 0;
	if (inlen == 0) {
		close(pi[1]);
		pi[1] = -1;
	} else {
		fcntl(pi[1], F_SETFL, O_NONBLOCK);
	}
	signal(SIGPIPE, SIG_IGN);
	while (oo || eo) {
		struct pollfd p[3];
		int n = 0, left = (int)(end - rl_now_ms());

		if (left <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (oo)
			p[n++] = (struct pollfd){po[0], POLLIN, 0};
		if (eo)
			p[n++] = (struct pollfd){pe[0], POLLIN, 0};
		if (pi[1] >= 0)
			p[n++] = (struct pollfd){pi[1], POLLOUT, 0};
		if (poll(p, (nfds_t)n, left) <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (!p[i].revents)
				continue;
			if (p[i].fd == po[0])
				drain(po[0], &r->out, &lo, &co, &oo);
			else if (p[i].fd == pe[0])
				drain(pe[0], &r->err, &le, &ce, &eo);
			else {
				ssize_t w =
				    write(pi[1], input + inoff, inlen - inoff);
				if (w > 0)
					inoff += (size_t)w;
				if (w <= 0 || inoff == inlen) {
					close(pi[1]);
					pi[1] = -1;
				}
			}
		}
	}
	if (pi[1] >= 0)
		close(pi[1]);
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &st, 0);
	r->seconds = (double)(rl_now_ms() - start) / 1000.0;
	r->status = rl_now_ms() >= end ? -1 : status_of(st);
	return 0;
}

void rl_run_free(struct rl_run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

char *rl_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

char *rl_ls(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t len = 0;
	char *s = calloc(1, 1);

	if (!d)
		return s;
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		s = realloc(s, len + n + 2);
		memcpy(s + len, de->d_name, n);
		s[len + n] = '\n';
		len += n + 1;
		s[len] = '\0';
	}
	closedir(d);
	return s;
}

int rl_read_dump(const char *path, uint64_t *objects)
{
	struct vmheap_record rec;
	vmheap_reader *r = NULL;
	uint64_t n = 0;
	int rc = vmheap_reader_open_path(&r, path);

	if (rc == 0) {
		while ((rc = vmheap_reader_next(r, &rec)) > 0)
			n += rec.type == VMHEAP_RECORD_OBJECT;
	}
	vmheap_reader_free(r);
	if (objects)
		*objects = n;
	return rc;
}

/* ------------------------------------------------------------- the VMs */

static int read_token(struct rl_vm *vm)
{
	struct vmheap_agent_info info;
	char err[512];

	if (vmheap_discovery_read(vm->discovery, &info, err, sizeof(err)) < 0) {
		fprintf(stderr, "reliability: %s\n", err);
		return -1;
	}
	memcpy(vm->token, info.token, sizeof(vm->token));
	vm->port = info.port;
	return 0;
}

int rl_vm_start(struct rl_vm *vm, const char *tmpdir, const char *dumpdir,
		const char *const *args)
{
	const char *argv[32];
	char line[1024], envt[300], envd[300];
	int p[2], n = 0, pid;
	ssize_t got = 0;

	memset(vm, 0, sizeof(*vm));
	snprintf(vm->tmpdir, sizeof(vm->tmpdir), "%s", tmpdir);
	snprintf(vm->dumpdir, sizeof(vm->dumpdir), "%s", dumpdir);
	argv[n++] = rl_bin("vmheap-sample");
	for (int i = 0; args && args[i] && n < 30; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	snprintf(envt, sizeof(envt), "VMHEAP_AGENT_TMPDIR=%s", tmpdir);
	snprintf(envd, sizeof(envd), "VMHEAP_AGENT_DIR=%s", dumpdir);
	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(p[1], 1);
		close(p[0]);
		putenv(envt);
		putenv(envd);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	vm->pid = pid;
	/* "vmheap-sample: pid P port N discovery PATH\n" */
	while (got < (ssize_t)sizeof(line) - 1) {
		struct pollfd pf = {p[0], POLLIN, 0};
		ssize_t r;

		if (poll(&pf, 1, 10000) <= 0)
			break;
		r = read(p[0], line + got, sizeof(line) - 1 - (size_t)got);
		if (r <= 0)
			break;
		got += r;
		line[got] = '\0';
		if (strchr(line, '\n'))
			break;
	}
	close(p[0]);
	line[got > 0 ? got : 0] = '\0';
	{
		char *d = strstr(line, "discovery ");
		char *nl = strchr(line, '\n');
		if (!d || !nl) {
			fprintf(stderr,
				"reliability: vmheap-sample said \"%s\"\n",
				line);
			rl_vm_stop(vm);
			return -1;
		}
		*nl = '\0';
		snprintf(vm->discovery, sizeof(vm->discovery), "%.500s",
			 d + 10);
	}
	return read_token(vm);
}

/* The embedded VM: the child's body. */
static void embedded_main(const char *tmpdir, const char *dumpdir,
			  const struct rl_embedded *opt, int wfd)
{
	static struct sample_vm svm;
	struct vmheap_agent_host host;
	struct vmheap_agent_config cfg;
	char err[512], msg[700];
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
	if (vmheap_agent_start(&svm.agent, &cfg, &host, err, sizeof(err)) < 0) {
		snprintf(msg, sizeof(msg), "error %s\n", err);
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

int rl_vm_start_embedded(struct rl_vm *vm, const char *tmpdir,
			 const char *dumpdir, const struct rl_embedded *opt)
{
	char line[700];
	int p[2];
	ssize_t got;
	pid_t pid;

	memset(vm, 0, sizeof(*vm));
	snprintf(vm->tmpdir, sizeof(vm->tmpdir), "%s", tmpdir);
	snprintf(vm->dumpdir, sizeof(vm->dumpdir), "%s", dumpdir);
	if (pipe(p) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		embedded_main(tmpdir, dumpdir, opt, p[1]);
	}
	close(p[1]);
	vm->pid = pid;
	got = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	line[got > 0 ? got : 0] = '\0';
	if (strncmp(line, "ok ", 3) != 0 || !strchr(line, '\n')) {
		fprintf(stderr, "reliability: embedded VM: %s\n", line);
		rl_vm_stop(vm);
		return -1;
	}
	*strchr(line, '\n') = '\0';
	snprintf(vm->discovery, sizeof(vm->discovery), "%.500s", line + 3);
	return read_token(vm);
}

int rl_vm_stop(struct rl_vm *vm)
{
	int st;

	if (vm->pid <= 0)
		return -1;
	kill(vm->pid, SIGTERM);
	st = rl_wait(vm->pid, 5000);
	if (st == -1) {
		kill(vm->pid, SIGKILL);
		st = rl_wait(vm->pid, 5000);
	}
	vm->pid = 0;
	return st;
}

vmheap_client *rl_connect(const struct rl_vm *vm, int timeout_ms)
{
	vmheap_client *c = NULL;
	int rc = vmheap_client_connect_addr(&c, "127.0.0.1", vm->port,
					    vm->token, timeout_ms);

	if (rc < 0) {
		fprintf(stderr, "reliability: connect: %s\n",
			c ? vmheap_client_error(c) : vmheap_agent_strerror(rc));
		if (c)
			vmheap_client_close(c);
		return NULL;
	}
	return c;
}

int64_t rl_get_int(vmheap_client *c, const char *var)
{
	struct vmheap_reply rep;
	int64_t v = -1;

	if (vmheap_client_call(c, "get", var, NULL, &rep) < 0) {
		vmheap_reply_release(&rep);
		return -1;
	}
	if (rep.ok && rep.value.type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		v = (int64_t)rep.value.via.u64;
	vmheap_reply_release(&rep);
	return v;
}
