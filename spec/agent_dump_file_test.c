/*
 * agent_dump_file_test.c - vmheap_agent_dump_file: a host's dump with no
 * agent running (what vmheap-run's agent writes at exit), in this very
 * process, in place and through a forked child, read back with
 * libvmheap; and its refusals (a name taken, a missing directory, no
 * host), each leaving nothing behind.  Part of the agent suite
 * (agent_dump_file_tcases, called from agent_test.c); under ASan too.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_helpers.h"
#include "lib/vmheap_spec.h"

#define OBJECTS 300

static int run_now(void *ctx, int (*fn)(void *arg), void *arg)
{
	(void)ctx;
	return fn(arg);
}

/* One class and OBJECTS objects of 48 bytes, each pointing at the next;
 * the walking process's pid goes to *ctx (shared memory: also from a
 * forked child). */
static int walk(void *ctx, vmheap_writer *w)
{
	*(volatile pid_t *)ctx = getpid();
	int rc = vmheap_writer_add_class(w, 1, "Thing", 5, 0, 0);
	for (uint64_t i = 0; rc == 0 && i < OBJECTS; i++) {
		uint64_t next = 0x1000 + 64 * ((i + 1) % OBJECTS);
		rc = vmheap_writer_add_object(w, 0x1000 + 64 * i, 1, 48, 0,
					      &next, 1);
	}
	return rc;
}

static pid_t fork_now(void *ctx)
{
	(void)ctx;
	return fork();
}

/* The objects of the dump at path (the reader must reach its footer),
 * and its header's pid. */
static long long objects_in(const char *path, uint64_t *pid)
{
	vmheap_reader *r;
	struct vmheap_record rec;
	long long n = 0;
	int rc;
	ck_assert_msg(vmheap_reader_open_path(&r, path) == 0, "%s",
		      vmheap_reader_error(r));
	*pid = vmheap_reader_header(r)->pid;
	while ((rc = vmheap_reader_next(r, &rec)) > 0)
		n += rec.type == VMHEAP_RECORD_OBJECT;
	ck_assert_msg(rc == 0, "%s", vmheap_reader_error(r));
	vmheap_reader_free(r);
	return n;
}

/* Files in dir: all, and those whose names start with ".vmheap-dump."
 * (temporaries). */
static int files_in(const char *dir, int *tmp)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	ck_assert_ptr_nonnull(d);
	*tmp = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' && strncmp(de->d_name, ".vmheap-dump.", 13))
			continue;
		n++;
		*tmp += strncmp(de->d_name, ".vmheap-dump.", 13) == 0;
	}
	closedir(d);
	return n;
}

START_TEST(dump_file_without_an_agent_in_place_and_forked)
{
	const char *dir = spec_mkdtemp("dump-file");
	struct vmheap_agent_host host = {0};
	char path[1200], err[512];
	uint64_t pid;
	int tmp;
	pid_t *walker = mmap(NULL, sizeof(pid_t), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(walker, MAP_FAILED);
	host.vm_name = "test";
	host.run_stopped = run_now;
	host.walk_heap = walk;
	host.ctx = walker;

	/* no fork_stopped: walked in place */
	snprintf(path, sizeof path, "%s/inplace.vmheap", dir);
	ck_assert_msg(vmheap_agent_dump_file(&host, path, err, sizeof err) == 0,
		      "%s", err);
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(objects_in(path, &pid), OBJECTS);
	ck_assert_int_eq(pid, (uint64_t)getpid());
	ck_assert_int_eq(*walker, getpid());
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);

	/* with fork_stopped: walked in a child, the file the same */
	host.fork_stopped = fork_now;
	snprintf(path, sizeof path, "%s/forked.vmheap", dir);
	ck_assert_msg(vmheap_agent_dump_file(&host, path, err, sizeof err) == 0,
		      "%s", err);
	ck_assert_int_eq(objects_in(path, &pid), OBJECTS);
	ck_assert_int_eq(pid, (uint64_t)getpid()); /* the VM's, not the child's */
	ck_assert_int_ne(*walker, getpid());

	/* a relative name is the working directory's */
	char cwd[1024];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	ck_assert_int_eq(chdir(dir), 0);
	int rc = vmheap_agent_dump_file(&host, "relative.vmheap", err,
					sizeof err);
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_msg(rc == 0, "%s", err);
	snprintf(path, sizeof path, "%s/relative.vmheap", dir);
	ck_assert_int_eq(objects_in(path, &pid), OBJECTS);
	ck_assert_int_eq(files_in(dir, &tmp), 3);
	ck_assert_int_eq(tmp, 0);
	munmap(walker, sizeof(pid_t));
}
END_TEST

START_TEST(dump_file_refusals_leave_nothing)
{
	const char *dir = spec_mkdtemp("dump-file-bad");
	struct vmheap_agent_host host = {0};
	char path[1200], err[512];
	int tmp;
	host.vm_name = "test";
	host.run_stopped = run_now;
	host.walk_heap = walk;
	host.fork_stopped = fork_now;
	pid_t walker;
	host.ctx = &walker; /* (a child's store stays in the child) */

	/* a name taken: refused, the file as it was */
	snprintf(path, sizeof path, "%s/taken.vmheap", dir);
	spec_write_file(path, "mine\n", 5);
	ck_assert_int_eq(vmheap_agent_dump_file(&host, path, err, sizeof err),
			 VMHEAP_AGENT_EEXIST);
	ck_assert_msg(strstr(err, path) && strstr(err, "already exists"), "%s",
		      err);
	char *text = spec_read_file(path, NULL);
	ck_assert_str_eq(text, "mine\n");
	free(text);

	/* a missing directory: what and where */
	snprintf(path, sizeof path, "%s/no/such/dir/x.vmheap", dir);
	ck_assert_int_eq(vmheap_agent_dump_file(&host, path, err, sizeof err),
			 VMHEAP_AGENT_EPATH);
	ck_assert_msg(strstr(err, path) &&
			      strstr(err, "No such file or directory"),
		      "%s", err);

	/* a name that is a directory */
	snprintf(path, sizeof path, "%s/", dir);
	ck_assert_int_lt(vmheap_agent_dump_file(&host, path, err, sizeof err),
			 0);
	ck_assert_msg(err[0] != '\0', "no message");

	/* no host, no name */
	ck_assert_int_eq(vmheap_agent_dump_file(NULL, "x", err, sizeof err),
			 VMHEAP_EINVAL);
	ck_assert_msg(strstr(err, "run_stopped and walk_heap"), "%s", err);
	ck_assert_int_eq(vmheap_agent_dump_file(&host, "", err, sizeof err),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(vmheap_agent_dump_file(&host, NULL, err, sizeof err),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(files_in(dir, &tmp), 1);
	ck_assert_int_eq(tmp, 0);
}
END_TEST

void agent_dump_file_tcases(Suite *s)
{
	TCase *t = spec_tcase(s, "dump file", 60);
	tcase_add_test(t, dump_file_without_an_agent_in_place_and_forked);
	tcase_add_test(t, dump_file_refusals_leave_nothing);
}
