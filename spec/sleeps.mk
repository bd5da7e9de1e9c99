# No fixed sleep in a test (scripts/check-sleeps.sh) as a suite of make
# check: a call of sleep, usleep, nanosleep or spec_sleep_ms in spec/*.c
# fails it.  The suite first makes sure that the check itself catches one
# (a fixture tree made on the fly, the call hidden behind a comment and a
# string that must not count), then checks the tree.
SLEEPS_CHECK := $(SPECDIR)/check-sleeps
CHECK_SUITES += $(SLEEPS_CHECK)
EXTRA_ALL    += $(SLEEPS_CHECK)

$(SLEEPS_CHECK): spec/sleeps.mk
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; \
	   echo 'set -e'; \
	   echo 'script="$$VMHEAP_SRC/scripts/check-sleeps.sh"'; \
	   echo 'fix=$$(mktemp -d); trap "rm -rf $$fix" EXIT'; \
	   echo 'mkdir "$$fix/spec"'; \
	   echo 'printf "/* sleep(1) */\nstatic const char *rb = \"sleep(0.1)\";\n" > "$$fix/spec/ok_test.c"'; \
	   echo 'sh "$$script" "$$fix" > /dev/null || { echo "check-sleeps: refused a comment or a string"; exit 1; }'; \
	   echo 'for call in "usleep (50000)" "sleep(1)" "nanosleep(&ts, NULL)" "spec_sleep_ms(300)"; do'; \
	   echo '	printf "void f(void)\n{\n\t%s;\n}\n" "$$call" > "$$fix/spec/bad_test.c"'; \
	   echo '	if sh "$$script" "$$fix" > /dev/null 2>&1; then echo "check-sleeps: accepted $$call"; exit 1; fi'; \
	   echo 'done'; \
	   echo 'exec sh "$$script" "$$VMHEAP_SRC"'; } > $@
	@chmod +x $@
