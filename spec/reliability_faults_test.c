/*
 * reliability_faults_test.c - faults, each with the outcome a user must
 * see and a check that nothing is lost (earlier dumps untouched, no
 * temporary file left): the console killed mid-dump, a client stopped
 * with a request half-sent, a full disk, the dump directory removed, the
 * VM exiting during a console session, unsafe or stale discovery files,
 * a corrupt block in the middle of a dump.  Also: the tools under
 * valgrind memcheck, and the fuzzers' regression inputs (spec/regress/)
 * replayed through the fuzz targets' own entry points.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "../fuzz/fuzz-internal.h"
#include "lib/vmheap_spec.h"

/* ------------------------------------------------------------ helpers */

static char pidbuf[32];

static const char *pid_str(pid_t pid)
{
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	return pidbuf;
}

/* Run vmheap-console --tmpdir T -p PID with one or more -e commands. */
static void console_e(const struct spec_vm *vm, const char *tmpdir, pid_t pid,
		      const char *const *cmds, struct spec_run *r)
{
	const char *argv[24];
	char p[32];
	int n = 0;

	snprintf(p, sizeof(p), "%d", (int)pid);
	argv[n++] = spec_bin("vmheap-console");
	argv[n++] = "--tmpdir";
	argv[n++] = tmpdir ? tmpdir : vm->tmpdir;
	argv[n++] = "-p";
	argv[n++] = p;
	for (int i = 0; cmds[i] && n < 22; i++) {
		argv[n++] = "-e";
		argv[n++] = cmds[i];
	}
	argv[n] = NULL;
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 30000, r), 0);
}

static int wait_dumping(vmheap_client *c, int want, int timeout_ms)
{
	struct spec_wait w;

	spec_wait_begin(&w, timeout_ms);
	w.interval_ms = 20;
	do {
		struct spec_reply rep;
		int rc = spec_client_call(c, "get", "system.memory.dumping",
					  NULL, &rep);
		int v = rc == 0 && rep.ok &&
			rep.value.type == MSGPACK_OBJECT_BOOLEAN &&
			rep.value.via.boolean;

		spec_reply_release(&rep);
		if (rc < 0)
			return -1;
		if (v == want)
			return 0;
	} while (spec_wait_next(&w));
	return -1;
}

/* Take a dump through the client API; 0 when the reply is ok. */
static int client_dump(vmheap_client *c, const char *name, char *msg,
		       size_t msglen)
{
	struct spec_reply rep;
	int rc;

	vmheap_client_set_timeout(c, 30000);
	rc = spec_client_call_str(c, "set", "system.memory.dump", name, &rep);
	if (rc == 0 && !rep.ok)
		snprintf(msg, msglen, "%s: %s", rep.code, rep.message);
	rc = rc < 0 ? rc : rep.ok ? 0 : -1;
	spec_reply_release(&rep);
	return rc;
}

static const char *join(const char *dir, const char *name)
{
	static char bufs[4][1024];
	static int next;
	char *b = bufs[next++ % 4];

	snprintf(b, 1024, "%s/%s", dir, name);
	return b;
}

/* Read a whole dump with vmheap_reader_next: 0 when complete, else the
 * error code; objects counted into *objects (may be NULL). */
static int read_dump(const char *path, uint64_t *objects)
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

/* ------------------------------------------------- console killed mid-dump */

START_TEST(console_killed_mid_dump_leaves_a_whole_dump_or_none)
{
	const char *tmp = spec_mkdtemp("kill"), *dir = spec_mkdtemp("killd");
	const char *args[] = {"--walk-delay-ms", "800", NULL};
	const char *argv[10];
	struct spec_vm vm;
	vmheap_client *c;
	char msg[600] = "", *a_before, *a_after, *left, p[32];
	size_t alen, alen2;
	uint64_t nobj;
	pid_t con;
	int st;

	spec_vm_start(&vm, tmp, dir,
		      &(struct spec_vm_opts){.args = args});
	c = spec_connect(&vm, 10000);
	ck_assert_ptr_nonnull(c);
	ck_assert_msg(client_dump(c, "a.vmheap", msg, sizeof(msg)) == 0, "%s",
		      msg);
	a_before = spec_read_file(join(dir, "a.vmheap"), &alen);
	ck_assert_ptr_nonnull(a_before);

	snprintf(p, sizeof(p), "%d", (int)vm.pid);
	argv[0] = spec_bin("vmheap-console");
	argv[1] = "--tmpdir";
	argv[2] = tmp;
	argv[3] = "-p";
	argv[4] = p;
	argv[5] = "-e";
	argv[6] = "set system.memory.dump b.vmheap";
	argv[7] = NULL;
	con = spec_spawn(&(struct spec_spawn){.argv = argv});
	ck_assert_int_eq(wait_dumping(c, 1, 5000), 0);
	kill(con, SIGKILL);
	st = spec_wait(con, 5000, NULL);
	ck_assert_int_eq(st, 128 + SIGKILL);
	/* the dump goes on without its client, and ends */
	ck_assert_int_eq(wait_dumping(c, 0, 10000), 0);

	left = spec_ls(dir, '\n');
	printf("console killed mid-dump: the dump directory holds: %s", left);
	ck_assert_msg(!strcmp(left, "a.vmheap\nb.vmheap\n") ||
			  !strcmp(left, "b.vmheap\na.vmheap\n") ||
			  !strcmp(left, "a.vmheap\n"),
		      "unexpected files: %s", left);
	if (strstr(left, "b.vmheap"))
		ck_assert_int_eq(read_dump(join(dir, "b.vmheap"), &nobj), 0);
	free(left);
	a_after = spec_read_file(join(dir, "a.vmheap"), &alen2);
	ck_assert(alen == alen2 && !memcmp(a_before, a_after, alen));
	/* not stuck in "busy": the next dump works */
	ck_assert_msg(client_dump(c, "c.vmheap", msg, sizeof(msg)) == 0, "%s",
		      msg);
	ck_assert_int_eq(read_dump(join(dir, "c.vmheap"), NULL), 0);
	free(a_before);
	free(a_after);
	vmheap_client_close(c);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	spec_rmrf(tmp);
	spec_rmrf(dir);
}
END_TEST

/* ------------------------------------- a client stopped mid-request */

/* [0, "auth", token] by hand: a raw client that can stop mid-frame. */
static size_t auth_frame(unsigned char *buf, const char *token)
{
	size_t n = 0, payload = 1 + 1 + 5 + 2 + 32;

	buf[n++] = 0;
	buf[n++] = 0;
	buf[n++] = 0;
	buf[n++] = (unsigned char)payload;
	buf[n++] = 0x93;
	buf[n++] = 0x00;
	buf[n++] = 0xa4;
	memcpy(buf + n, "auth", 4);
	n += 4;
	buf[n++] = 0xd9;
	buf[n++] = 32;
	memcpy(buf + n, token, 32);
	return n + 32;
}

START_TEST(client_stopped_with_a_request_half_sent_does_not_hold_others)
{
	const char *tmp = spec_mkdtemp("stop");
	struct spec_vm vm;
	vmheap_client *c[5];
	int64_t t0, t1, tk0, tk1;
	pid_t child;
	int st;

	spec_vm_start(&vm, tmp, tmp, NULL);
	child = fork();
	if (child == 0) {
		unsigned char buf[128],
		    half[] = {0, 0, 0, 30, 0x94, 0x01, 0xa3, 'g'};
		int fd = spec_tcp_connect(vm.info.port);
		size_t n = auth_frame(buf, vm.info.token);

		if (fd < 0 || write(fd, buf, n) != (ssize_t)n ||
		    write(fd, half, sizeof(half)) != (ssize_t)sizeof(half))
			_exit(1);
		raise(SIGSTOP);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(child, &st, WUNTRACED), child);
	ck_assert(WIFSTOPPED(st));

	tk0 = -1;
	t0 = spec_now_ms();
	for (int i = 0; i < 5; i++) {
		c[i] = spec_connect(&vm, 3000);
		ck_assert_ptr_nonnull(c[i]);
	}
	tk0 = spec_get_uint(c[0], "sample.ticks");
	for (int round = 0; round < 20; round++)
		for (int i = 0; i < 5; i++)
			ck_assert_int_eq(spec_get_uint(c[i], "system.pid"),
					 vm.pid);
	/* the VM ticks on while that client is stopped */
	spec_wait_uint(c[0], "sample.ticks", tk0 + 1, 30000);
	tk1 = spec_get_uint(c[0], "sample.ticks");
	t1 = spec_now_ms();
	printf("client stopped mid-frame: 5 other clients made 100 requests in "
	       "%lld ms; VM ticks %lld -> %lld\n",
	       (long long)(t1 - t0), (long long)tk0, (long long)tk1);
	/* they were answered while the agent still held the stopped
	 * client's half frame: it has not closed that connection (its
	 * frame timeout, 10 s, would) */
	ck_assert_int_eq(spec_tcp_count(vm.info.port, 0, SPEC_TCP_CLOSE_WAIT),
			 0);
	ck_assert_int_gt(tk1, tk0);
	for (int i = 0; i < 5; i++)
		vmheap_client_close(c[i]);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	spec_rmrf(tmp);
}
END_TEST

/* ------------------------------------------------------------ disk full */

/*
 * The VM leaks 400 objects per tick: let it tick flat out for 200 ticks
 * (80,000 more objects, a dump well past 256 KiB), then slow it back.
 */
static void grow_heap(vmheap_client *c)
{
	struct spec_reply rep;
	int64_t t0 = spec_get_uint(c, "sample.ticks");

	ck_assert_int_ge(t0, 0);
	ck_assert_int_eq(
	    spec_client_call_str(c, "set", "sample.tick_ms", "0", &rep), 0);
	ck_assert(rep.ok);
	spec_reply_release(&rep);
	spec_wait_uint(c, "sample.ticks", t0 + 200, 20000);
	ck_assert_int_eq(
	    spec_client_call_str(c, "set", "sample.tick_ms", "1000", &rep), 0);
	spec_reply_release(&rep);
	ck_assert_int_ge(spec_get_uint(c, "sample.ticks"), t0 + 200);
}

START_TEST(disk_full_on_a_small_tmpfs_during_a_dump_is_a_clear_error)
{
	const char *tmp = spec_mkdtemp("full"), *dir = spec_mkdtemp("fulld");
	/* slow ticks until grow_heap: the first dump stays small */
	const char *args[] = {"--leak", "Blob:400", "--tick-ms", "1000", NULL};
	const char *cmds[] = {"set system.memory.dump b.vmheap", NULL};
	struct spec_vm vm;
	struct spec_run r;
	vmheap_client *c;
	char msg[600] = "", *a_before, *a_after, *left;
	size_t alen, alen2;
	int a_ok, a_read, c_rc;
	char cmsg[600] = "";

	if (mount("tmpfs", dir, "tmpfs", 0, "size=256k,mode=0755") < 0) {
		printf("disk full: SKIPPED: cannot mount a small tmpfs here "
		       "(%s)\n",
		       strerror(errno));
		spec_rmrf(tmp);
		spec_rmrf(dir);
		return;
	}
	spec_vm_start(&vm, tmp, dir,
		      &(struct spec_vm_opts){.args = args});
	c = spec_connect(&vm, 10000);
	ck_assert_ptr_nonnull(c);
	a_ok = client_dump(c, "a.vmheap", msg, sizeof(msg));
	a_before = spec_read_file(join(dir, "a.vmheap"), &alen);
	grow_heap(c);
	console_e(&vm, NULL, vm.pid, cmds, &r);
	/* and the same without fork: the VM's own process writes */
	{
		struct spec_reply rep;
		ck_assert_int_eq(spec_client_call_str(c, "set",
						      "config.dump.fork",
						      "false", &rep),
				 0);
		ck_assert(rep.ok);
		spec_reply_release(&rep);
	}
	c_rc = client_dump(c, "c.vmheap", cmsg, sizeof(cmsg));
	left = spec_ls(dir, '\n');
	a_after = spec_read_file(join(dir, "a.vmheap"), &alen2);
	a_read = read_dump(join(dir, "a.vmheap"), NULL);
	ck_assert_int_eq(spec_get_uint(c, "system.pid"), vm.pid);
	vmheap_client_close(c);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	umount(dir);

	printf("disk full: console exit %d, said: %s%s", r.status, r.out,
	       r.err);
	ck_assert_msg(a_ok == 0, "%s", msg);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(
	    strstr(r.out, "No space left") || strstr(r.err, "No space left") ||
		strstr(r.out, "no space") || strstr(r.err, "no space"),
	    "no clear error: %s%s", r.out, r.err);
	printf("disk full, dump in the VM's process: %s\n", cmsg);
	ck_assert_int_ne(c_rc, 0);
	ck_assert_msg(strstr(cmsg, "No space left"), "no clear error: %s",
		      cmsg);
	ck_assert_msg(!strcmp(left, "a.vmheap\n"), "files left: %s", left);
	ck_assert(a_before && a_after && alen == alen2 &&
		  !memcmp(a_before, a_after, alen));
	ck_assert_int_eq(a_read, 0);
	free(left);
	free(a_before);
	free(a_after);
	spec_run_free(&r);
	spec_rmrf(tmp);
	spec_rmrf(dir);
}
END_TEST

/*
 * The same with a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) on the
 * VM, which is what a machine without a mountable tmpfs can do.
 */
START_TEST(file_size_limit_during_a_dump_is_a_clear_error)
{
	const char *tmp = spec_mkdtemp("fsize");
	struct spec_embedded opt = {.max_clients = 8,
				  .fsize_limit = 256 * 1024,
				  .leak_class = "Blob",
				  .leak_per_tick = 400};
	struct spec_vm vm;
	vmheap_client *c;
	char msg[600] = "", bmsg[600] = "", *a_before, *left;
	size_t alen;
	int brc;

	spec_vm_start_embedded(&vm, tmp, tmp, &opt);
	c = spec_connect(&vm, 10000);
	ck_assert_ptr_nonnull(c);
	{
		/* slow ticks until grow_heap: the first dump stays small */
		struct spec_reply rep;
		ck_assert_int_eq(spec_client_call_str(
				     c, "set", "sample.tick_ms", "1000", &rep),
				 0);
		spec_reply_release(&rep);
	}
	ck_assert_msg(client_dump(c, "a.vmheap", msg, sizeof(msg)) == 0, "%s",
		      msg);
	a_before = spec_read_file(join(tmp, "a.vmheap"), &alen);
	grow_heap(c);
	brc = client_dump(c, "b.vmheap", bmsg, sizeof(bmsg));
	printf("file size limit: %s\n", bmsg);
	ck_assert_int_ne(brc, 0);
	ck_assert_msg(strstr(bmsg, "too large") ||
			  strstr(bmsg, "File too large"),
		      "no clear error: %s", bmsg);
	ck_assert_int_eq(spec_get_uint(c, "system.pid"), vm.pid);
	vmheap_client_close(c);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	left = spec_ls(tmp, '\n');
	ck_assert_msg(!strcmp(left, "a.vmheap\n"), "files left: %s", left);
	{
		size_t alen2;
		char *a_after = spec_read_file(join(tmp, "a.vmheap"), &alen2);
		ck_assert(a_after && alen == alen2 &&
			  !memcmp(a_before, a_after, alen));
		free(a_after);
	}
	ck_assert_int_eq(read_dump(join(tmp, "a.vmheap"), NULL), 0);
	free(left);
	free(a_before);
	spec_rmrf(tmp);
}
END_TEST

/* --------------------------------------------- dump directory removed */

START_TEST(dump_directory_removed_is_a_clear_error)
{
	const char *tmp = spec_mkdtemp("rmd"), *dir = spec_mkdtemp("rmdd");
	const char *cmds[] = {"set system.memory.dump b.vmheap", NULL};
	const char *cmds2[] = {"set system.memory.dump c.vmheap", NULL};
	struct spec_vm vm;
	struct spec_run r, r2;

	spec_vm_start(&vm, tmp, dir, NULL);
	spec_rmrf(dir);
	console_e(&vm, NULL, vm.pid, cmds, &r);
	printf("dump directory removed: console exit %d, said: %s%s", r.status,
	       r.out, r.err);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.out, dir) || strstr(r.err, dir),
		      "the error does not name the directory: %s%s", r.out,
		      r.err);
	ck_assert_msg(strstr(r.out, "No such file") ||
			  strstr(r.err, "No such file"),
		      "the error does not say why: %s%s", r.out, r.err);
	ck_assert_int_ne(access(dir, F_OK), 0); /* not re-created */
	/* the VM is fine, and dumps again once the directory is back */
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	console_e(&vm, NULL, vm.pid, cmds2, &r2);
	ck_assert_msg(r2.status == 0, "%s%s", r2.out, r2.err);
	ck_assert_int_eq(read_dump(join(dir, "c.vmheap"), NULL), 0);
	{
		char *left = spec_ls(dir, '\n');
		ck_assert_msg(!strcmp(left, "c.vmheap\n"), "files: %s", left);
		free(left);
	}
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	spec_run_free(&r);
	spec_run_free(&r2);
	spec_rmrf(tmp);
	spec_rmrf(dir);
}
END_TEST

/* ------------------------------------------ VM exits during a session */

START_TEST(vm_exit_during_a_console_session_is_reported)
{
	const char *tmp = spec_mkdtemp("exit");
	const char *errp = join(tmp, "console.err");
	struct spec_vm vm;
	struct spec_proc con;
	struct spec_spawn sp = {0};
	char p[32], *err;
	int st;

	spec_vm_start(&vm, tmp, tmp, NULL);
	snprintf(p, sizeof(p), "%d", (int)vm.pid);
	/* the console on pipes, its stderr in a file */
	sp.argv = ARGS(spec_bin("vmheap-console"), "--tmpdir", tmp, "-p", p);
	sp.stderr_path = errp;
	spec_proc_start(&con, &sp, 0);
	spec_proc_write(&con, "get system.pid\n");
	ck_assert_msg(spec_proc_wait_for(&con, p, 30000), "no answer: %s",
		      con.buf);
	/* the VM dies under the console's feet */
	kill(vm.pid, SIGKILL);
	ck_assert_int_eq(spec_wait(vm.pid, 5000, NULL), 128 + SIGKILL);
	vm.pid = 0;
	/* it may have gone already: a write that fails is no failure */
	if (write(con.in, "get system.pid\n", 15) < 0)
		(void)0;
	st = spec_proc_wait_exit(&con, 10000);
	err = spec_read_file(errp, NULL);
	printf("VM exited during a session: console exit %d, said: %s", st,
	       err);
	ck_assert_int_eq(st, 2);
	ck_assert_msg(err && strstr(err, p),
		      "the console did not say which VM went away: %s",
		      err ? err : "");
	free(err);
	spec_rmrf(tmp);
}
END_TEST

/* ------------------------------------------------ unsafe discovery files */

START_TEST(discovery_symlink_is_not_followed)
{
	const char *tmp = spec_test_dir();
	const char *cmds[] = {"get system.pid", NULL};
	struct spec_vm vm;
	struct spec_run r;
	char real[600];

	spec_vm_start(&vm, tmp, tmp, NULL);
	snprintf(real, sizeof(real), "%s/elsewhere", tmp);
	ck_assert_int_eq(rename(vm.discovery, real), 0);
	ck_assert_int_eq(symlink(real, vm.discovery), 0);
	console_e(&vm, NULL, vm.pid, cmds, &r);
	printf("discovery symlink: console exit %d, said: %s%s", r.status,
	       r.out, r.err);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(!strstr(r.out, pid_str(vm.pid)),
		      "it followed the link: %s", r.out);
	ck_assert_msg(strstr(r.err, "symbolic link"), "no reason given: %s",
		      r.err);
	spec_run_free(&r);
	unlink(vm.discovery);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	spec_rmrf(tmp);
}
END_TEST

START_TEST(discovery_file_of_another_user_is_not_followed)
{
	const char *tmp = spec_test_dir();
	const char *cmds[] = {"get system.pid", NULL};
	struct spec_vm vm;
	struct spec_run r;

	spec_vm_start(&vm, tmp, tmp, NULL);
	if (chown(vm.discovery, 65534, 65534) < 0) {
		printf("discovery of another user: SKIPPED: cannot chown to "
		       "nobody (%s; not root?)\n",
		       strerror(errno));
		spec_vm_stop(&vm);
		spec_rmrf(tmp);
		return;
	}
	console_e(&vm, NULL, vm.pid, cmds, &r);
	printf("discovery owned by nobody: console exit %d, said: %s%s",
	       r.status, r.out, r.err);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(!strstr(r.out, pid_str(vm.pid)), "it used the file: %s",
		      r.out);
	ck_assert_msg(strstr(r.err, "owned by"), "no reason given: %s", r.err);
	spec_run_free(&r);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	spec_rmrf(tmp);
}
END_TEST

/*
 * A stale discovery file whose pid now belongs to another process (a
 * `sleep`), and whose address and token are those of a live VM: the
 * console must not talk to that VM as if it were the `sleep`.
 */
static void stale_case(int keep_proc_start)
{
	const char *tmp = spec_mkdtemp("stale"), *other = spec_mkdtemp("stale2");
	const char *sleep_argv[] = {"/bin/sleep", "30", NULL};
	const char *cmds[] = {"get system.pid", NULL};
	char *body, *ps, fake[1200], path[600], *nl;
	struct spec_vm vm;
	struct spec_run r;
	pid_t sl;
	int fd;

	spec_vm_start(&vm, other, other, NULL);
	sl = spec_spawn(&(struct spec_spawn){.argv = sleep_argv});
	ck_assert_int_gt(sl, 0);
	body = spec_read_file(vm.discovery, NULL);
	ck_assert_ptr_nonnull(body);
	/* the same file, as if written by the sleep's pid long ago */
	nl = strchr(body, '\n');
	ck_assert_ptr_nonnull(nl);
	ps = strstr(body, "proc_start=");
	if (!keep_proc_start && ps)
		*ps = '\0';
	snprintf(fake, sizeof(fake), "pid=%d%s", (int)sl, nl);
	snprintf(path, sizeof(path), "%s/vmheap-agent.%d", tmp, (int)sl);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, fake, strlen(fake)), (ssize_t)strlen(fake));
	close(fd);

	console_e(&vm, tmp, sl, cmds, &r);
	printf("stale discovery (%s proc_start) naming a sleep: console exit "
	       "%d, said: %s%s",
	       keep_proc_start ? "with" : "without", r.status, r.out, r.err);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(!strstr(r.out, pid_str(vm.pid)),
		      "it talked to the wrong VM: %s", r.out);
	spec_run_free(&r);
	kill(sl, SIGKILL);
	spec_wait(sl, 5000, NULL);
	free(body);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	spec_rmrf(tmp);
	spec_rmrf(other);
}

START_TEST(stale_discovery_file_naming_a_reused_pid_is_not_followed)
{
	stale_case(1);
	stale_case(0);
}
END_TEST

/* ---------------------------------------------- a corrupt block mid-dump */

static void write_test_dump(const char *path, int nobj, uint64_t grow)
{
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	opt.vm_name = "faults";
	opt.block_bytes = 512;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	vmheap_writer_add_class(w, 1, "Order", 5, 0, 0);
	vmheap_writer_add_class(w, 2, "Session", 7, 0, 0);
	for (int i = 0; i < nobj; i++) {
		uint64_t ref = 0x1000;
		vmheap_writer_add_object(w, 0x1000 + 16u * (uint64_t)i,
					 1 + (uint64_t)(i % 2), 40 + grow, 0,
					 &ref, 1);
	}
	ck_assert_int_eq(vmheap_writer_finish(w), 0);
	vmheap_writer_free(w);
	close(fd);
}

START_TEST(corrupt_block_in_the_middle_is_reported_with_its_offset)
{
	const char *tmp = spec_mkdtemp("crc");
	const char *good = join(tmp, "good.vmheap"),
		   *bad = join(tmp, "bad.vmheap");
	const char *histo[] = {spec_bin("vmheap-histo"), bad, NULL};
	const char *diff1[] = {spec_bin("vmheap-diff"), good, bad, NULL};
	const char *diff2[] = {spec_bin("vmheap-diff"), bad, good, NULL};
	const char *const *runs[] = {histo, diff1, diff2};
	struct vmheap_block blk;
	vmheap_reader *r;
	uint64_t offs[256], lens[256];
	int nblk = 0, mid, rc;
	char *file, *payload, want[32];
	size_t flen;

	write_test_dump(good, 600, 0);
	ck_assert_int_eq(vmheap_reader_open_path(&r, good), 0);
	file = spec_read_file(good, &flen);
	payload = NULL;
	while ((rc = vmheap_reader_next_block(r, &blk)) > 0 && nblk < 256) {
		offs[nblk] = blk.offset;
		lens[nblk] = blk.length;
		nblk++;
		if (nblk == 1)
			continue;
	}
	ck_assert_int_eq(rc, 0);
	vmheap_reader_free(r);
	ck_assert_int_ge(nblk, 5);
	mid = nblk / 2;
	/* flip a byte inside the middle block's payload: the payload ends
	 * where the next section begins */
	ck_assert_uint_lt(offs[mid] + 1, offs[mid + 1]);
	payload = file + offs[mid + 1] - lens[mid] / 2;
	*payload ^= 0x5a;
	{
		int fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		ck_assert_int_eq(write(fd, file, flen), (ssize_t)flen);
		close(fd);
	}
	snprintf(want, sizeof(want), "%llu", (unsigned long long)offs[mid]);
	for (int i = 0; i < 3; i++) {
		struct spec_run rr;

		ck_assert_int_eq(spec_run(runs[i], NULL, NULL, 30000, &rr), 0);
		printf("corrupt block at %s: %s exit %d, said: %s", want,
		       strrchr(runs[i][0], '/') + 1, rr.status, rr.err);
		ck_assert_int_ne(rr.status, 0);
		ck_assert_msg(strstr(rr.err, "bad.vmheap"), "no file name: %s",
			      rr.err);
		ck_assert_msg(strstr(rr.err, want),
			      "the block's offset %s is not named: %s", want,
			      rr.err);
		/* no partial histogram or diff printed as if it were whole */
		ck_assert_msg(!strstr(rr.out, "Order") &&
				  !strstr(rr.out, "Session"),
			      "partial output: %s", rr.out);
		spec_run_free(&rr);
	}
	free(file);
	spec_rmrf(tmp);
}
END_TEST

/* ------------------------------------------- the dump names the VM's pid */

/*
 * The sample VM dumps from a forked child: the header must still name the
 * VM's pid (the one a user passes to -p, and that vmheap-diff compares),
 * not the short-lived child's.
 */
START_TEST(forked_dump_header_names_the_vm_pid_not_its_child)
{
	const char *tmp = spec_mkdtemp("pid");
	struct spec_vm vm;
	vmheap_client *c;
	vmheap_reader *r;
	char msg[600] = "";
	uint64_t pid;
	pid_t vm_pid;

	spec_vm_start(&vm, tmp, tmp, NULL);
	vm_pid = vm.pid;
	c = spec_connect(&vm, 10000);
	ck_assert_ptr_nonnull(c);
	ck_assert_msg(client_dump(c, "p.vmheap", msg, sizeof(msg)) == 0, "%s",
		      msg);
	vmheap_client_close(c);
	ck_assert_int_eq(vmheap_reader_open_path(&r, join(tmp, "p.vmheap")), 0);
	pid = vmheap_reader_header(r)->pid;
	vmheap_reader_free(r);
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	spec_rmrf(tmp);
	ck_assert_msg(pid == (uint64_t)vm_pid,
		      "the dump header says pid %llu, the VM is pid %d",
		      (unsigned long long)pid, (int)vm_pid);
}
END_TEST

/* ------------------------------------------------------------- valgrind */

static int have_valgrind(void)
{
	return access("/usr/bin/valgrind", X_OK) == 0;
}

/* Run argv under memcheck; the tool's own exit status must be `want`. */
static void under_valgrind(const char *const *argv, int want, const char *log)
{
	const char *v[20];
	char logopt[600];
	struct spec_run r;
	char *text;
	int n = 0;

	snprintf(logopt, sizeof(logopt), "--log-file=%s", log);
	v[n++] = "/usr/bin/valgrind";
	v[n++] = "--leak-check=full";
	v[n++] = "--error-exitcode=99";
	v[n++] = "--errors-for-leak-kinds=definite,indirect";
	v[n++] = logopt;
	for (int i = 0; argv[i]; i++)
		v[n++] = argv[i];
	v[n] = NULL;
	ck_assert_int_eq(spec_run(v, NULL, NULL, 60000, &r), 0);
	text = spec_read_file(log, NULL);
	printf("valgrind %s: exit %d, %s\n", strrchr(argv[0], '/') + 1,
	       r.status,
	       text && strstr(text, "ERROR SUMMARY: 0 errors") ? "0 errors"
							       : "ERRORS");
	ck_assert_msg(r.status == want,
		      "exit %d (99: memcheck errors); log:\n%s", r.status,
		      text ? text : "");
	ck_assert_msg(text && strstr(text, "ERROR SUMMARY: 0 errors"), "%s",
		      text ? text : "no log");
	ck_assert_msg(strstr(text, "definitely lost: 0 bytes") ||
			  strstr(text, "All heap blocks were freed"),
		      "%s", text);
	ck_assert_msg(!strstr(text, "indirectly lost:") ||
			  strstr(text, "indirectly lost: 0 bytes"),
		      "%s", text);
	free(text);
	spec_run_free(&r);
}

START_TEST(tools_run_clean_under_valgrind)
{
	const char *tmp, *d1, *d2, *bad, *log;
	struct spec_vm vm;
	char p[32];

	if (SPEC_SANITIZED) {
		printf("valgrind: SKIPPED in the sanitizer build (valgrind and "
		       "ASan do not mix; the normal pass runs it)\n");
		return;
	}
	if (!have_valgrind()) {
		printf(
		    "valgrind: SKIPPED: /usr/bin/valgrind is not installed\n");
		return;
	}
	tmp = spec_mkdtemp("vg");
	d1 = join(tmp, "one.vmheap");
	d2 = join(tmp, "two.vmheap");
	write_test_dump(d1, 300, 0);
	write_test_dump(d2, 400, 8);
	bad = join(tmp, "cut.vmheap");
	{
		size_t n;
		char *f = spec_read_file(d1, &n);
		int fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		ck_assert_int_eq(write(fd, f, n / 2), (ssize_t)(n / 2));
		close(fd);
		free(f);
	}
	log = join(tmp, "vg.log");
	{
		const char *a[] = {spec_bin("vmheap-histo"), d1, NULL};
		under_valgrind(a, 0, log);
	}
	{
		const char *a[] = {spec_bin("vmheap-histo"),
				   "--format",
				   "json",
				   "--sort",
				   "bytes",
				   d2,
				   NULL};
		under_valgrind(a, 0, log);
	}
	{
		const char *a[] = {spec_bin("vmheap-histo"), bad, NULL};
		struct spec_run rr;
		const char *plain[] = {spec_bin("vmheap-histo"), bad, NULL};
		ck_assert_int_eq(spec_run(plain, NULL, NULL, 30000, &rr), 0);
		ck_assert_int_ne(rr.status, 0);
		under_valgrind(a, rr.status, log); /* the error path too */
		spec_run_free(&rr);
	}
	{
		const char *a[] = {spec_bin("vmheap-diff"), d1, d2, NULL};
		under_valgrind(a, 0, log);
	}
	{
		const char *a[] = {
		    spec_bin("vmheap-diff"), "--format", "csv", d2, d1, NULL};
		under_valgrind(a, 0, log);
	}
	spec_vm_start(&vm, tmp, tmp, NULL);
	snprintf(p, sizeof(p), "%d", (int)vm.pid);
	{
		const char *a[] = {spec_bin("vmheap-console"),
				   "--tmpdir",
				   tmp,
				   "-p",
				   p,
				   "-e",
				   "get system.pid",
				   "-e",
				   "list system.",
				   "-e",
				   "set system.memory.dump vg.vmheap",
				   "-e",
				   "get system.memory.rss",
				   NULL};
		under_valgrind(a, 0, log);
	}
	{
		const char *a[] = {spec_bin("vmheap-console"), "--tmpdir", tmp,
				   "--ps", NULL};
		under_valgrind(a, 0, log);
	}
	ck_assert_int_eq(spec_vm_stop(&vm), 0);
	{
		/* and when it cannot connect */
		const char *a[] = {
		    spec_bin("vmheap-console"), "--tmpdir", tmp, "-e",
		    "get system.pid",	      NULL};
		under_valgrind(a, 2, log);
	}
	spec_rmrf(tmp);
}
END_TEST

/* ---------------------------------------------- fuzz regression inputs */

static int replay_dir(const char *target, int (*one)(const uint8_t *, size_t))
{
	char dir[1024], path[2048];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s", spec_src("spec/regress/"));
	strncat(dir, target, sizeof(dir) - strlen(dir) - 1);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t len;
		char *data;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		data = spec_read_file(path, &len);
		ck_assert_ptr_nonnull(data);
		one((const uint8_t *)data, len);
		free(data);
		n++;
	}
	closedir(d);
	return n;
}

START_TEST(fuzz_regression_inputs_replay_cleanly)
{
	int a = replay_dir("reader", fuzz_reader_one);
	int b = replay_dir("protocol", fuzz_protocol_one);
	int c = replay_dir("discovery", fuzz_discovery_one);
	int d = replay_dir("client", fuzz_client_one);

	fuzz_protocol_shutdown();
	printf("fuzz regressions: %d reader, %d protocol, %d discovery, %d "
	       "client inputs replayed\n",
	       a, b, c, d);
	ck_assert_int_gt(a + b + c + d, 0);
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("reliability_faults");
	TCase *t;

	t = spec_tcase(s, "console killed mid-dump", 120);
	tcase_add_test(t, console_killed_mid_dump_leaves_a_whole_dump_or_none);

	t = spec_tcase(s, "a client stopped mid-request", 120);
	tcase_add_test(
	    t, client_stopped_with_a_request_half_sent_does_not_hold_others);

	t = spec_tcase(s, "disk full", 120);
	tcase_add_test(
	    t, disk_full_on_a_small_tmpfs_during_a_dump_is_a_clear_error);
	tcase_add_test(t, file_size_limit_during_a_dump_is_a_clear_error);

	t = spec_tcase(s, "dump directory removed", 120);
	tcase_add_test(t, dump_directory_removed_is_a_clear_error);

	t = spec_tcase(s, "VM exits during a session", 120);
	tcase_add_test(t, vm_exit_during_a_console_session_is_reported);

	/* each test finds a directory of its own at spec_test_dir() (the
	 * stale case, run twice in its test, makes one per run) */
	t = spec_tcase(s, "unsafe discovery files", 120);
	tcase_add_checked_fixture(t, spec_test_dir_setup, NULL);
	tcase_add_test(t, discovery_symlink_is_not_followed);
	tcase_add_test(t, discovery_file_of_another_user_is_not_followed);
	tcase_add_test(
	    t, stale_discovery_file_naming_a_reused_pid_is_not_followed);

	t = spec_tcase(s, "a corrupt block mid-dump", 120);
	tcase_add_test(
	    t, corrupt_block_in_the_middle_is_reported_with_its_offset);

	t = spec_tcase(s, "the dump names the VM's pid", 120);
	tcase_add_test(t, forked_dump_header_names_the_vm_pid_not_its_child);

	t = spec_tcase(s, "valgrind", 300);
	tcase_add_test(t, tools_run_clean_under_valgrind);

	t = spec_tcase(s, "fuzz regression inputs", 120);
	tcase_add_test(t, fuzz_regression_inputs_replay_cleanly);
	return s;
}
