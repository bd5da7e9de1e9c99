/*
 * suite_main.c - the main() of every suite binary (see vmheap_spec.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "vmheap_spec.h"

TCase *spec_tcase(Suite *s, const char *name, int seconds)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, seconds);
	suite_add_tcase(s, tc);
	return tc;
}

int main(void)
{
	Suite *suite;
	SRunner *sr;
	int failed;

	/* lines, not blocks, when the output is a pipe (make check) */
	setvbuf(stdout, NULL, _IOLBF, 0);
	suite = vmheap_spec_suite();
	/* program_invocation_short_name: the suite binary (GNU) */
	spec_root_make(program_invocation_short_name);
	sr = srunner_create(suite);
	/* every test in its own process unless CK_FORK=no asks otherwise:
	 * the processes a test starts die with it */
	if (!getenv("CK_FORK"))
		srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	spec_root_remove();
	return failed ? 1 : 0;
}
