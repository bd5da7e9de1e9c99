/*
 * native_run_test.c - vmheap-run on programs that embed no agent: plain
 * C (spec/native/lose_keep.c), C++ with new and delete (lose_keep.cc)
 * and Rust (lose_keep.rs, built here when rustc is on PATH), leaking
 * through real malloc.  `vmheap-run --track --output FILE` writes FILE
 * when the program exits (the leak scan in it, against valgrind's
 * "definitely lost" for the same program), a forking program writes a
 * file per process by vmheap-run(1)'s naming rule, the native-only agent
 * serves the console while the program runs and steps aside for ruby's,
 * and an output that cannot be written is said on stderr with the
 * program's exit status kept.  Also the naming rule itself
 * (native/output_name.c, compiled in).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/vmheap_spec.h"
#include "tools_harness-internal.h"

int native_output_name(const char *name, const char *run_pid, long pid,
		       char *out, size_t outsz); /* native/output_name.c */

#define N 2000

/* VMHEAP_AGENT_TMPDIR and VMHEAP_AGENT_DIR in dir (env[0], env[1]). */
struct run_env {
	char tmp[600], dumps[600];
	const char *env[4];
};

static void run_env(struct run_env *e, const char *dir)
{
	snprintf(e->tmp, sizeof e->tmp, "VMHEAP_AGENT_TMPDIR=%s", dir);
	snprintf(e->dumps, sizeof e->dumps, "VMHEAP_AGENT_DIR=%s", dir);
	e->env[0] = e->tmp;
	e->env[1] = e->dumps;
	e->env[2] = "VMHEAP_AGENT_PORT";
	e->env[3] = NULL;
}

/* vmheap-run --track --output OUT PROG ARGS... (up to 3 args) in dir. */
static void run_tracked(const char *dir, const char *out, const char *prog,
			const char *a1, const char *a2, struct spec_run *r)
{
	struct run_env e;
	run_env(&e, dir);
	struct spec_spawn sp = {.argv = ARGS(spec_bin("vmheap-run"), "--track",
					     "--output", out, prog, a1, a2),
				.env = e.env,
				.dir = dir};
	ck_assert_int_eq(spec_run_spawn(&sp, NULL, 0, 120000, r), 0);
}

static int exists(const char *dir, const char *name)
{
	char p[1200];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

/* The files of dir whose names start with prefix. */
static int count_files(const char *dir, const char *prefix)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

/* The TCP sockets of process pid that listen (one per agent): its fds'
 * socket inodes against /proc/net/tcp's and tcp6's LISTEN rows. */
static int listening_sockets(pid_t pid)
{
	char path[64], link[128], line[512];
	unsigned long inodes[256];
	int ninodes = 0, n = 0;
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	struct dirent *de;
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL && ninodes < 256) {
		char fd[600];
		snprintf(fd, sizeof fd, "%s/%s", path, de->d_name);
		ssize_t len = readlink(fd, link, sizeof link - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%lu]", &inodes[ninodes]) == 1)
			ninodes++;
	}
	closedir(d);
	const char *tables[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	for (int t = 0; t < 2; t++) {
		FILE *f = fopen(tables[t], "r");
		if (!f)
			continue;
		while (fgets(line, sizeof line, f)) {
			char st[8];
			unsigned long inode;
			if (sscanf(line,
				   "%*s %*s %*s %7s %*s %*s %*s %*s %*s %lu",
				   st, &inode) != 2 ||
			    strcmp(st, "0A") != 0)
				continue;
			for (int i = 0; i < ninodes; i++)
				n += inodes[i] == inode;
		}
		fclose(f);
	}
	return n;
}

/* vmheap-histo --native --leaks --format json DIR/FILE, parsed. */
static struct jval *leaks_of(const char *dir, const char *file)
{
	char path[1200];
	struct spec_run o;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	const char *argv[] = {spec_bin("vmheap-histo"), "--native", "--leaks",
			      "--top",		       "1000",	   "--format",
			      "json",		       path,	   NULL};
	ck_assert_int_eq(spec_run(argv, NULL, NULL, 60000, &o), 0);
	ck_assert_msg(o.status == 0, "%s%s", o.out, o.err);
	struct jval *j = json_parse(o.out);
	ck_assert_msg(j != NULL, "%s", o.out);
	spec_run_free(&o);
	return j;
}

/* The sum of `key` over the sites whose name holds `fn`, followed by " ("
 * (C: "lose_here (", C++: "_Z9lose_herei ("). */
static long long of(const struct jval *j, const char *fn, const char *key)
{
	const struct jval *sites = json_get(j, "sites");
	char want[128];
	long long sum = 0;
	ck_assert_ptr_nonnull(sites);
	snprintf(want, sizeof want, "%s (", fn);
	for (size_t i = 0; i < sites->n; i++) {
		const char *site = json_get(sites->items[i], "site")->str;
		const char *hit = strstr(site, want);
		/* the whole name (not thread_lose_here for lose_here) */
		while (hit && hit != site && hit[-1] != ' ')
			hit = strstr(hit + 1, want);
		/* the function allocating: before any later " < " */
		if (!hit)
			continue;
		const char *lt = strstr(site, " < ");
		const char *lt2 = lt ? strstr(lt + 3, " < ") : NULL;
		if (hit > (lt2 ? lt2 : site + strlen(site)))
			continue;
		const struct jval *v = json_get(sites->items[i], key);
		ck_assert_msg(v != NULL, "no %s", key);
		sum += v->inum;
	}
	return sum;
}

/* valgrind's "definitely lost" blocks whose first "by" frame is fn. */
static long long valgrind_lost(const char *out, const char *fn)
{
	long long sum = 0;
	char by[128];
	snprintf(by, sizeof by, "by 0x");
	for (const char *p = strstr(out, "are definitely lost in loss record");
	     p; p = strstr(p + 1, "are definitely lost in loss record")) {
		const char *line = p;
		while (line > out && line[-1] != '\n')
			line--;
		const char *in = strstr(line, " bytes in ");
		ck_assert_ptr_nonnull(in);
		long long blocks = 0;
		for (const char *d = in + 10; *d != ' '; d++)
			if (*d >= '0' && *d <= '9')
				blocks = blocks * 10 + (*d - '0');
		/* "at malloc", then the first "by 0x...: FN (" */
		const char *first = strstr(p, by);
		const char *eol = first ? strchr(first, '\n') : NULL;
		char want[128];
		snprintf(want, sizeof want, ": %s (", fn);
		const char *hit = first ? strstr(first, want) : NULL;
		if (hit && hit < eol)
			sum += blocks;
	}
	return sum;
}

/* A C program forgets N blocks at lose_here and keeps N at keep_here,
 * and a second thread, still alive when main returns, forgets N at
 * thread_lose_here; vmheap-run --output writes the file at exit with the
 * leak scan: N leaked at each losing function as valgrind's definitely
 * lost there (within 3 stale stack slots: the live thread's stack is read
 * whole), none at keep_here. */
START_TEST(output_at_exit_counts_as_valgrind)
{
	if (SPEC_SANITIZED)
		return; /* ASan's malloc would come first */
	const char *dir = spec_mkdtemp("run-out");
	struct spec_run r;
	char n[16];
	snprintf(n, sizeof n, "%d", N);
	run_tracked(dir, "out.vmheap", spec_build("spec/native_lose_keep"), n,
		    "thread", &r);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_msg(r.err[0] == '\0', "%s", r.err);
	spec_run_free(&r);
	struct jval *j = leaks_of(dir, "out.vmheap");
	long long lost = of(j, "lose_here", "leaked_count");
	ck_assert_msg(lost >= N - 3 && lost <= N, "lose_here leaked %lld",
		      lost);
	ck_assert_int_eq(of(j, "lose_here", "leaked_bytes"), lost * 40);
	ck_assert_int_eq(of(j, "lose_here", "leaked_count") +
				 of(j, "lose_here", "indirect_count") +
				 of(j, "lose_here", "possible_count") +
				 of(j, "lose_here", "reachable_count"),
			 N);
	ck_assert_int_eq(of(j, "keep_here", "leaked_count"), 0);
	ck_assert_int_eq(of(j, "keep_here", "reachable_count"), N);
	ck_assert_int_eq(of(j, "keep_here", "reachable_bytes"), N * 56);
	long long tlost = of(j, "thread_lose_here", "leaked_count");
	ck_assert_msg(tlost >= N - 3 && tlost <= N, "thread_lose_here %lld",
		      tlost);
	ck_assert_int_eq(of(j, "thread_lose_here", "leaked_bytes"), tlost * 32);
	/* no temporary left, one file */
	ck_assert_int_eq(count_files(dir, ".vmheap-dump."), 0);
	ck_assert_int_eq(count_files(dir, "out.vmheap"), 1);

	const char *vg[] = {"valgrind", "--leak-check=full",
			    spec_build("spec/native_lose_keep"), n, "thread",
			    NULL};
	ck_assert_int_eq(spec_run(vg, NULL, NULL, 300000, &r), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	long long v = valgrind_lost(r.err, "lose_here");
	ck_assert_msg(v >= N - 3 && lost >= v - 3 && lost <= v + 3,
		      "vmheap %lld leaked at lose_here, valgrind %lld "
		      "definitely lost:\n%s",
		      lost, v, r.err);
	v = valgrind_lost(r.err, "thread_lose_here");
	ck_assert_msg(v >= N - 3 && tlost >= v - 3 && tlost <= v + 3,
		      "vmheap %lld leaked at thread_lose_here, valgrind %lld "
		      "definitely lost:\n%s",
		      tlost, v, r.err);
	ck_assert_int_eq(valgrind_lost(r.err, "keep_here"), 0);
	spec_run_free(&r);
	json_free(j);
}
END_TEST

/* exit() from inside a function and a plain non-zero return write the
 * file and keep the status; _exit() runs no destructor: no file, the
 * status kept. */
START_TEST(exit_paths_keep_the_status)
{
	if (SPEC_SANITIZED)
		return;
	const char *dir = spec_mkdtemp("run-exit");
	const char *prog = spec_build("spec/native_lose_keep");
	struct spec_run r;
	run_tracked(dir, "exit.vmheap", prog, "100", "exit", &r);
	ck_assert_msg(r.status == 3, "%d %s", r.status, r.err);
	spec_run_free(&r);
	struct jval *j = leaks_of(dir, "exit.vmheap");
	ck_assert_int_eq(of(j, "lose_here", "leaked_count") +
				 of(j, "lose_here", "possible_count") +
				 of(j, "lose_here", "reachable_count"),
			 100);
	ck_assert_int_ge(of(j, "lose_here", "leaked_count"), 97);
	json_free(j);
	run_tracked(dir, "status.vmheap", prog, "100", "status", &r);
	ck_assert_msg(r.status == 7, "%d %s", r.status, r.err);
	spec_run_free(&r);
	ck_assert(exists(dir, "status.vmheap"));
	run_tracked(dir, "_exit.vmheap", prog, "100", "_exit", &r);
	ck_assert_msg(r.status == 4, "%d %s", r.status, r.err);
	spec_run_free(&r);
	ck_assert(!exists(dir, "_exit.vmheap"));
}
END_TEST

/* A program that forks: the process vmheap-run started writes FILE, the
 * child FILE.PID, each with its own blocks; with "%p" each writes its
 * pid into the name. */
START_TEST(forking_program_writes_a_file_per_process)
{
	if (SPEC_SANITIZED)
		return;
	const char *dir = spec_mkdtemp("run-fork");
	const char *prog = spec_build("spec/native_lose_keep");
	struct spec_run r;
	char child_file[64];
	long child;
	run_tracked(dir, "fork.vmheap", prog, "300", "fork", &r);
	ck_assert_msg(r.status == 5, "%d %s", r.status, r.err);
	ck_assert_msg(sscanf(r.out, "child %ld", &child) == 1, "%s", r.out);
	spec_run_free(&r);
	snprintf(child_file, sizeof child_file, "fork.vmheap.%ld", child);
	ck_assert_int_eq(count_files(dir, "fork.vmheap"), 2);
	struct jval *p = leaks_of(dir, "fork.vmheap");
	struct jval *c = leaks_of(dir, child_file);
	ck_assert_int_ge(of(p, "lose_here", "leaked_count"), 297);
	ck_assert_int_eq(of(p, "child_lose_here", "leaked_count") +
				 of(p, "child_lose_here", "reachable_count"),
			 0);
	ck_assert_int_ge(of(c, "lose_here", "leaked_count"), 297);
	ck_assert_int_ge(of(c, "child_lose_here", "leaked_count"), 297);
	ck_assert_int_eq(of(c, "keep_here", "reachable_count"), 300);
	json_free(p);
	json_free(c);

	run_tracked(dir, "p.%p.vmheap", prog, "10", "fork", &r);
	ck_assert_msg(r.status == 5, "%d %s", r.status, r.err);
	ck_assert_msg(sscanf(r.out, "child %ld", &child) == 1, "%s", r.out);
	spec_run_free(&r);
	snprintf(child_file, sizeof child_file, "p.%ld.vmheap", child);
	ck_assert(exists(dir, child_file));
	ck_assert_int_eq(count_files(dir, "p."), 2);
}
END_TEST

/* A plain C program under vmheap-run serves the console while it runs:
 * a native agent (vm "native"), its variables and a dump with the leak
 * scan; its discovery file goes at exit.  --no-agent: none. */
START_TEST(console_dumps_a_plain_program)
{
	if (SPEC_SANITIZED)
		return;
	const char *dir = spec_mkdtemp("run-console");
	struct run_env e;
	struct spec_native vm;
	struct spec_proc *p = &vm.p;
	const struct vmheap_agent_info *info = &vm.info;
	char pid[32], n[16];
	run_env(&e, dir);
	snprintf(n, sizeof n, "%d", N);
	const char *argv[] = {spec_bin("vmheap-run"), "--track",
			      spec_build("spec/native_lose_keep"), n, "wait",
			      NULL};
	spec_native_start(&vm, dir, argv, NULL);
	ck_assert_msg(strncmp(info->vm, "native ", 7) == 0, "vm %s", info->vm);
	ck_assert_int_eq(listening_sockets(p->pid), 1);
	snprintf(pid, sizeof pid, "%d", (int)p->pid);
	const char *con[] = {spec_bin("vmheap-console"), "-p", pid, "--tmpdir",
			     dir, "-e", "get system.native.bytes", "-e",
			     "set system.memory.dump live.vmheap", NULL};
	struct spec_run r;
	ck_assert_int_eq(spec_run(con, NULL, NULL, 60000, &r), 0);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	ck_assert_msg(strstr(r.out, "dump written: ") != NULL, "%s", r.out);
	spec_run_free(&r);
	struct jval *j = leaks_of(dir, "live.vmheap");
	long long lost = of(j, "lose_here", "leaked_count");
	ck_assert_msg(lost >= N - 3 && lost <= N, "lose_here %lld", lost);
	ck_assert_int_eq(of(j, "keep_here", "reachable_count"), N);
	ck_assert_int_eq(of(j, "keep_here", "leaked_count"), 0);
	json_free(j);
	spec_proc_write(p, "bye\n");
	ck_assert_int_eq(spec_proc_wait_exit(p, 30000), 0);
	ck_assert_msg(!exists(dir, strrchr(info->path, '/') + 1), "%s left",
		      info->path);

	/* --no-agent: the program runs, and no discovery file appears */
	const char *quiet[] = {spec_bin("vmheap-run"), "--no-agent",
			       spec_build("spec/native_lose_keep"), "10",
			       "wait", NULL};
	struct spec_spawn o = {.argv = quiet, .env = e.env, .dir = dir};
	spec_proc_start(p, &o, 1);
	ck_assert_msg(spec_proc_wait_for(p, "ready\n", 30000), "%s", p->buf);
	ck_assert_int_eq(count_files(dir, "vmheap-agent."), 0);
	spec_proc_write(p, "bye\n");
	ck_assert_int_eq(spec_proc_wait_exit(p, 30000), 0);
}
END_TEST

/* ruby under vmheap-run: one agent, ruby's (the native one stepped
 * aside: its discovery file was the same name); likewise a C program
 * that embeds the agent (spec/native/scanned.c). */
START_TEST(one_agent_in_ruby)
{
	if (SPEC_SANITIZED)
		return; /* the instrumented extension needs ASan first */
	const char *dir = spec_mkdtemp("run-ruby");
	struct run_env e;
	run_env(&e, dir);
	const char *argv[] = {spec_bin("vmheap-run"), "ruby", "-e",
		"d = ENV['VMHEAP_AGENT_TMPDIR']; f = File.join(d, \"vmheap-agent.#{$$}\"); "
		"50.times { break if File.exist?(f); sleep 0.1 }; "
		"puts Dir.children(d).grep(/vmheap-agent/).size; "
		"puts File.read(f)[/^vm=.*/]; "
		/* the listening sockets of this process: one per agent */
		"ino = Dir.children('/proc/self/fd').map { |x| File.readlink(\"/proc/self/fd/#{x}\") rescue '' }"
		".grep(/socket:\\[(\\d+)\\]/) { $1 }; "
		"puts %w[/proc/net/tcp /proc/net/tcp6].sum { |t| File.readlines(t).drop(1).map(&:split)"
		".count { |r| r[3] == '0A' && ino.include?(r[9]) } }", NULL};
	struct spec_run r;
	ck_assert_int_eq(spec_run(argv, e.env, NULL, 30000, &r), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strncmp(r.out, "1\nvm=ruby ", 10) == 0 &&
			      strcmp(strrchr(r.out, '\n') - 2, "\n1\n") == 0,
		      "%s", r.out);
	spec_run_free(&r);
	/* a C program that embeds the agent: its agent, alone */
	struct spec_native vm;
	const char *scanned[] = {spec_bin("vmheap-run"), "--track",
				 spec_build("spec/native_scanned"), NULL};
	spec_native_start(&vm, dir, scanned, NULL);
	ck_assert_msg(strncmp(vm.info.vm, "scanned", 7) == 0, "vm %s",
		      vm.info.vm);
	ck_assert_int_eq(count_files(dir, "vmheap-agent."), 1);
	ck_assert_int_eq(listening_sockets(vm.p.pid), 1);
	spec_kill(vm.p.pid);

	/* the library exports its yield and the exit dump for a VM alone */
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "nm -D --defined-only %s | awk 'NF >= 3 {print $3}'",
		 spec_build("lib/libvmheap-native-agent.so"));
	const char *nm[] = {"sh", "-c", cmd, NULL};
	ck_assert_int_eq(spec_run(nm, NULL, NULL, 20000, &r), 0);
	ck_assert_str_eq(r.out,
			 "vmheap_run_agent_yield\nvmheap_run_exit_dump\n");
	spec_run_free(&r);
}
END_TEST

/* An output that cannot be written: the reason on stderr with the path,
 * the program's status kept, an existing file left as it was. */
START_TEST(unwritable_output_keeps_the_status)
{
	if (SPEC_SANITIZED)
		return;
	const char *dir = spec_mkdtemp("run-bad");
	const char *prog = spec_build("spec/native_lose_keep");
	struct spec_run r;
	run_tracked(dir, "/nonexistent-vmheap/x.vmheap", prog, "10", "status",
		    &r);
	ck_assert_msg(r.status == 7, "%d %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "/nonexistent-vmheap/x.vmheap") != NULL &&
			      strstr(r.err, "No such file or directory") != NULL,
		      "%s", r.err);
	spec_run_free(&r);

	char path[1200];
	snprintf(path, sizeof path, "%s/taken.vmheap", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("mine\n", f);
	fclose(f);
	run_tracked(dir, "taken.vmheap", prog, "10", "status", &r);
	ck_assert_msg(r.status == 7, "%d %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "taken.vmheap already exists") != NULL,
		      "%s", r.err);
	spec_run_free(&r);
	char *text = spec_read_file(path, NULL);
	ck_assert_str_eq(text, "mine\n");
	free(text);
	ck_assert_int_eq(count_files(dir, ".vmheap-dump."), 0);
}
END_TEST

/* C++: new'd Nodes forgotten at lose_here are leaked (as many as
 * valgrind's definitely lost), those kept in a static array reachable;
 * the ones deleted, and those a global vector's owner deletes at exit (a
 * static destructor, before the dump), are not live. */
START_TEST(cxx_new_and_delete)
{
	if (SPEC_SANITIZED)
		return;
	const char *dir = spec_mkdtemp("run-cxx");
	struct spec_run r;
	run_tracked(dir, "cxx.vmheap", spec_build("spec/native_lose_keep_cxx"),
		    "1000", NULL, &r);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	spec_run_free(&r);
	struct jval *j = leaks_of(dir, "cxx.vmheap");
	long long lost = of(j, "_Z9lose_herei", "leaked_count");
	ck_assert_msg(lost >= 997 && lost <= 1000, "%lld", lost);
	ck_assert_int_eq(of(j, "_Z9lose_herei", "leaked_bytes"), lost * 32);
	ck_assert_int_eq(of(j, "_Z9keep_herei", "reachable_count"), 1000);
	ck_assert_int_eq(of(j, "_Z9keep_herei", "leaked_count"), 0);
	ck_assert_int_eq(of(j, "_Z10churn_herei", "reachable_count") +
				 of(j, "_Z10churn_herei", "leaked_count"),
			 0);
	ck_assert_int_eq(of(j, "_Z11global_herei", "reachable_count") +
				 of(j, "_Z11global_herei", "leaked_count"),
			 0);
	json_free(j);
	/* valgrind on the same program: as many definitely lost there */
	const char *vg[] = {"valgrind", "--leak-check=full",
			    spec_build("spec/native_lose_keep_cxx"), "1000",
			    NULL};
	ck_assert_int_eq(spec_run(vg, NULL, NULL, 300000, &r), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	long long v = valgrind_lost(r.err, "lose_here(int)");
	ck_assert_msg(v >= 997 && lost >= v - 3 && lost <= v + 3,
		      "vmheap %lld, valgrind %lld:\n%s", lost, v, r.err);
	ck_assert_int_eq(valgrind_lost(r.err, "keep_here(int)"), 0);
	spec_run_free(&r);
}
END_TEST

/* Rust (when rustc is on PATH): Boxes forgotten leaked, kept reachable. */
START_TEST(rust_boxes)
{
	if (SPEC_SANITIZED)
		return;
	if (system("command -v rustc >/dev/null 2>&1") != 0) {
		fprintf(stderr, "rust_boxes: no rustc on PATH, not run\n");
		return;
	}
	const char *dir = spec_mkdtemp("run-rust");
	char bin[1200];
	snprintf(bin, sizeof bin, "%s/lose_keep_rs", dir);
	const char *rc[] = {"rustc", "-O", "-g", "-o", bin,
			    spec_src("spec/native/lose_keep.rs"), NULL};
	struct spec_run r;
	ck_assert_int_eq(spec_run(rc, NULL, NULL, 300000, &r), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	spec_run_free(&r);
	run_tracked(dir, "rs.vmheap", bin, "1000", NULL, &r);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	spec_run_free(&r);
	struct jval *j = leaks_of(dir, "rs.vmheap");
	long long lost = of(j, "lose_here", "leaked_count");
	ck_assert_msg(lost >= 997 && lost <= 1000, "%lld", lost);
	ck_assert_int_eq(of(j, "lose_here", "leaked_bytes"), lost * 40);
	ck_assert_int_eq(of(j, "keep_here", "reachable_count"), 1000);
	ck_assert_int_eq(of(j, "keep_here", "leaked_count"), 0);
	json_free(j);
}
END_TEST

/* The naming rule (native/output_name.c), every branch. */
START_TEST(output_name_rule)
{
	char out[64];
	ck_assert_int_eq(native_output_name("d.vmheap", "42", 42, out, sizeof out), 0);
	ck_assert_str_eq(out, "d.vmheap");
	ck_assert_int_eq(native_output_name("d.vmheap", "42", 43, out, sizeof out), 0);
	ck_assert_str_eq(out, "d.vmheap.43");
	ck_assert_int_eq(native_output_name("d.vmheap", NULL, 43, out, sizeof out), 0);
	ck_assert_str_eq(out, "d.vmheap.43");
	ck_assert_int_eq(native_output_name("d.%p.vmheap", "42", 42, out, sizeof out), 0);
	ck_assert_str_eq(out, "d.42.vmheap");
	ck_assert_int_eq(native_output_name("%p-%%-%p", "1", 7, out, sizeof out), 0);
	ck_assert_str_eq(out, "7-%-7");
	ck_assert_int_eq(native_output_name("", "1", 7, out, sizeof out),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(native_output_name(NULL, "1", 7, out, sizeof out),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(native_output_name("abcdefgh", "1", 12345, out, 12),
			 VMHEAP_ELIMIT);
	ck_assert_int_eq(native_output_name("abcdefgh", "1", 123, out, 13), 0);
	ck_assert_str_eq(out, "abcdefgh.123");
	ck_assert_int_eq(native_output_name("ab%pcd", "1", 123, out, 7),
			 VMHEAP_ELIMIT);
	ck_assert_int_eq(native_output_name("ab%pcd", "1", 123, out, 8), 0);
	ck_assert_str_eq(out, "ab123cd");
}
END_TEST

Suite *vmheap_spec_suite(void)
{
	Suite *s = suite_create("native_run");
	TCase *t = spec_tcase(s, "output", 300);
	tcase_add_test(t, output_name_rule);
	tcase_add_test(t, output_at_exit_counts_as_valgrind);
	tcase_add_test(t, exit_paths_keep_the_status);
	tcase_add_test(t, forking_program_writes_a_file_per_process);
	tcase_add_test(t, unwritable_output_keeps_the_status);
	tcase_add_test(t, cxx_new_and_delete);
	tcase_add_test(t, rust_boxes);
	TCase *a = spec_tcase(s, "agent", 120);
	tcase_add_test(a, console_dumps_a_plain_program);
	tcase_add_test(a, one_agent_in_ruby);
	return s;
}
