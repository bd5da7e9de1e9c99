/*
 * abi_test.c - the public headers' rules for failed constructors and
 * error buffers, tested through the shared libraries (this program is
 * linked against libvmheap.so.ABI_MAJOR and libvmheap-agent.so.ABI_MAJOR, not
 * the .a files, so it also shows that they export what a caller needs).
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmheap.h"
#include "vmheap_agent.h"

/* Not NULL, not a real object: shows whether a call set *out. */
#define UNSET ((void *)1)

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && strcmp(s + n - m, tail) == 0;
}

/* The file the dynamic linker loaded `fn` from. */
static const char *library_of(void *fn)
{
	Dl_info info;

	ck_assert(dladdr(fn, &info) != 0);
	return info.dli_fname;
}

START_TEST(test_linked_through_sonames)
{
	const char *f = library_of((void *)vmheap_strerror);
	const char *a = library_of((void *)vmheap_agent_strerror);

	ck_assert_msg(ends_with(f, "/libvmheap.so." ABI_MAJOR), "%s", f);
	ck_assert_msg(ends_with(a, "/libvmheap-agent.so." ABI_MAJOR), "%s", a);
}
END_TEST

/* ---------------------------------------------------- failed constructors */

START_TEST(test_writer_open_failures_give_a_failed_writer)
{
	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	vmheap_writer *w = UNSET;

	ck_assert_int_eq(vmheap_writer_open(NULL, 1, NULL), VMHEAP_EINVAL);
	ck_assert_int_eq(vmheap_writer_open(&w, -1, NULL), VMHEAP_EINVAL);
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_ne(w, UNSET);
	/* the caller's pattern: report, then free, also after a failure */
	ck_assert_msg(strstr(vmheap_writer_error(w), "-1"), "%s",
		      vmheap_writer_error(w));
	/* a failed writer writes nothing: its calls return the code */
	ck_assert_int_eq(vmheap_writer_add_class(w, 1, "A", 1, 0, 0),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(vmheap_writer_finish(w), VMHEAP_EINVAL);
	vmheap_writer_free(w);

	/* bad options: the reason is in the failed writer */
	w = UNSET;
	opt.kind_names = NULL;
	opt.kind_count = 1;
	ck_assert_int_eq(vmheap_writer_open(&w, 1, &opt), VMHEAP_EINVAL);
	ck_assert_ptr_ne(w, UNSET);
	ck_assert_msg(strstr(vmheap_writer_error(w), "kind_names is NULL"),
		      "%s", vmheap_writer_error(w));
	vmheap_writer_free(w);

	ck_assert_str_eq(vmheap_writer_error(NULL), "out of memory");
	vmheap_writer_free(NULL);
}
END_TEST

START_TEST(test_reader_open_failures_give_a_failed_reader)
{
	char dir[] = "/tmp/vmheap-abi.XXXXXX", path[64];
	vmheap_reader *r = UNSET;
	int fd;

	ck_assert_int_eq(vmheap_reader_open_path(NULL, "x"), VMHEAP_EINVAL);
	ck_assert_int_eq(vmheap_reader_open_fd(NULL, 0, "x"), VMHEAP_EINVAL);

	ck_assert_int_eq(vmheap_reader_open_path(&r, NULL), VMHEAP_EINVAL);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_ne(r, UNSET);
	ck_assert_msg(strstr(vmheap_reader_error(r), "no path given"), "%s",
		      vmheap_reader_error(r));
	vmheap_reader_free(r);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/missing.vmheap", dir);
	r = UNSET;
	ck_assert_int_eq(vmheap_reader_open_path(&r, path), VMHEAP_EIO);
	ck_assert_ptr_ne(r, UNSET);
	ck_assert_msg(strstr(vmheap_reader_error(r), "cannot open") &&
			  strstr(vmheap_reader_error(r), path),
		      "%s", vmheap_reader_error(r));
	vmheap_reader_free(r);

	r = UNSET;
	ck_assert_int_eq(vmheap_reader_open_fd(&r, -1, "stdin"), VMHEAP_EINVAL);
	ck_assert_ptr_ne(r, UNSET);
	ck_assert_msg(strstr(vmheap_reader_error(r), "bad file descriptor"),
		      "%s", vmheap_reader_error(r));
	vmheap_reader_free(r);

	/* not a dump at all */
	snprintf(path, sizeof(path), "%s/text", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "hello, not a heap dump\n", 23), 23);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	r = UNSET;
	ck_assert_int_eq(vmheap_reader_open_fd(&r, fd, "text-file"),
			 VMHEAP_EMAGIC);
	ck_assert_ptr_ne(r, UNSET);
	ck_assert_msg(strstr(vmheap_reader_error(r), "text-file"), "%s",
		      vmheap_reader_error(r));
	vmheap_reader_free(r);
	close(fd);

	ck_assert_str_eq(vmheap_reader_error(NULL), "out of memory");
	vmheap_reader_free(NULL);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* A loopback port that nothing listens on (bound, then closed). */
static uint16_t closed_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

START_TEST(test_client_connect_failures_give_a_failed_client)
{
	vmheap_client *c = UNSET;
	int rc;

	ck_assert_int_eq(vmheap_client_connect(NULL, NULL, 0), VMHEAP_EINVAL);
	ck_assert_int_eq(
	    vmheap_client_connect_addr(NULL, "127.0.0.1", 1, "", 1000),
	    VMHEAP_EINVAL);

	ck_assert_int_eq(vmheap_client_connect(&c, NULL, 1000), VMHEAP_EINVAL);
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_ne(c, UNSET);
	ck_assert_msg(strstr(vmheap_client_error(c), "no agent info given"),
		      "%s", vmheap_client_error(c));
	vmheap_client_close(c);

	c = UNSET;
	ck_assert_int_eq(vmheap_client_connect_addr(&c, NULL, 1, "", 1000),
			 VMHEAP_EINVAL);
	ck_assert_ptr_ne(c, UNSET);
	ck_assert_msg(strstr(vmheap_client_error(c), "no host given"), "%s",
		      vmheap_client_error(c));
	vmheap_client_close(c);

	c = UNSET;
	rc = vmheap_client_connect_addr(&c, "127.0.0.1", closed_port(),
					"00000000000000000000000000000000",
					5000);
	ck_assert_int_eq(rc, VMHEAP_AGENT_ECONNECT);
	ck_assert_ptr_ne(c, UNSET);
	ck_assert_msg(strstr(vmheap_client_error(c), "127.0.0.1"), "%s",
		      vmheap_client_error(c));
	vmheap_client_close(c);
	vmheap_client_close(NULL);
}
END_TEST

static int run_now(void *ctx, int (*fn)(void *arg), void *arg)
{
	(void)ctx;
	return fn(arg);
}

static int walk_nothing(void *ctx, vmheap_writer *w)
{
	(void)ctx;
	return vmheap_writer_add_class(w, 1, "Object", 6, 0, 0);
}

START_TEST(test_agent_start_failure_gives_a_failed_agent)
{
	struct vmheap_agent_host host = {.vm_name = "abi"};
	vmheap_agent *a = UNSET;

	ck_assert_int_eq(vmheap_agent_start(NULL, NULL, &host), VMHEAP_EINVAL);

	ck_assert_int_eq(vmheap_agent_start(&a, NULL, &host), VMHEAP_EINVAL);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_ne(a, UNSET);
	ck_assert_msg(strstr(vmheap_agent_error(a), "run_stopped"), "%s",
		      vmheap_agent_error(a));
	vmheap_agent_stop(a);
	ck_assert_str_eq(vmheap_agent_error(NULL), "out of memory");
	vmheap_agent_stop(NULL);
}
END_TEST

/* --------------------------------------------------------- error buffers */

START_TEST(test_error_buffer_is_cut_and_terminated)
{
	struct vmheap_agent_config cfg;
	char err[16];

	setenv("VMHEAP_AGENT_PORT", "not-a-port", 1);
	memset(err, '#', sizeof(err));
	ck_assert_int_eq(vmheap_agent_config_from_env(&cfg, err, 8),
			 VMHEAP_EINVAL);
	/* 7 bytes of "VMHEAP_AGENT_PORT=not-a-port is not ...", then NUL,
	 * and nothing written past errlen */
	ck_assert_str_eq(err, "VMHEAP_");
	for (size_t i = 8; i < sizeof(err); i++)
		ck_assert_int_eq(err[i], '#');

	/* errlen 0: no message, err may be NULL */
	ck_assert_int_eq(vmheap_agent_config_from_env(&cfg, NULL, 0),
			 VMHEAP_EINVAL);
	memset(err, '#', sizeof(err));
	ck_assert_int_eq(vmheap_agent_config_from_env(&cfg, err, 0),
			 VMHEAP_EINVAL);
	ck_assert_int_eq(err[0], '#');

	/* a whole message fits a large buffer */
	{
		char big[256];

		ck_assert_int_eq(
		    vmheap_agent_config_from_env(&cfg, big, sizeof(big)),
		    VMHEAP_EINVAL);
		ck_assert_str_eq(big, "VMHEAP_AGENT_PORT=not-a-port is not a "
				      "port number (0-65535)");
	}

	/* success leaves "" */
	setenv("VMHEAP_AGENT_PORT", "0", 1);
	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(vmheap_agent_config_from_env(&cfg, err, sizeof(err)),
			 0);
	ck_assert_str_eq(err, "");
	unsetenv("VMHEAP_AGENT_PORT");
}
END_TEST

START_TEST(test_discovery_read_error_buffer)
{
	struct vmheap_agent_info info;
	char err[12];

	memset(err, '#', sizeof(err));
	ck_assert_int_lt(vmheap_discovery_read("/nonexistent/vmheap-agent.1",
					       &info, err, sizeof(err)),
			 0);
	ck_assert_uint_le(strlen(err), sizeof(err) - 1);
	ck_assert_uint_gt(strlen(err), 0);

	ck_assert_int_eq(vmheap_discovery_read(NULL, &info, err, sizeof(err)),
			 VMHEAP_EINVAL);
	ck_assert_str_eq(err, "no discover"); /* 11 bytes and the NUL */
}
END_TEST

/* A real agent in this process, started, found and connected to through
 * the shared libraries; every successful call leaves its buffer "". */
START_TEST(test_success_leaves_error_buffers_empty)
{
	char dir[] = "/tmp/vmheap-abi.XXXXXX", err[256];
	struct vmheap_agent_host host = {.vm_name = "abi",
					 .run_stopped = run_now,
					 .walk_heap = walk_nothing};
	struct vmheap_agent_config cfg = {.dump_fork = 0, .dump_gc = 0};
	struct vmheap_agent_info info;
	vmheap_agent *a = UNSET;
	vmheap_client *c = UNSET;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	cfg.dump_dir = dir;
	cfg.tmpdir = dir;
	ck_assert_int_eq(vmheap_agent_start(&a, &cfg, &host), 0);
	ck_assert_ptr_ne(a, UNSET);
	ck_assert_str_eq(vmheap_agent_error(a), "");

	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(vmheap_discovery_read(vmheap_agent_discovery_path(a),
					       &info, err, sizeof(err)),
			 0);
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(info.port, vmheap_agent_port(a));

	ck_assert_int_eq(vmheap_client_connect(&c, &info, 10000), 0);
	ck_assert_str_eq(vmheap_client_error(c), "");
	ck_assert_str_eq(vmheap_client_vm(c), "abi");
	vmheap_client_close(c);

	vmheap_agent_stop(a);
	ck_assert_int_eq(rmdir(dir), 0); /* the discovery file is gone */
}
END_TEST

static Suite *abi_suite(void)
{
	Suite *s = suite_create("abi");
	TCase *t;

	t = tcase_create("shared libraries");
	tcase_add_test(t, test_linked_through_sonames);
	suite_add_tcase(s, t);

	t = tcase_create("failed constructors");
	tcase_add_test(t, test_writer_open_failures_give_a_failed_writer);
	tcase_add_test(t, test_reader_open_failures_give_a_failed_reader);
	tcase_add_test(t, test_client_connect_failures_give_a_failed_client);
	tcase_add_test(t, test_agent_start_failure_gives_a_failed_agent);
	suite_add_tcase(s, t);

	t = tcase_create("error buffers");
	tcase_set_timeout(t, 30);
	tcase_add_test(t, test_error_buffer_is_cut_and_terminated);
	tcase_add_test(t, test_discovery_read_error_buffer);
	tcase_add_test(t, test_success_leaves_error_buffers_empty);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(abi_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
