# The shape of the sources as suites of make check (issue 30):
#   check-sizes        no product .c file over 800 lines
#                      (scripts/check-sizes.sh)
#   check-agent-calls  no circle of calls between agent/*.c files, read
#                      from the built objects (scripts/check-agent-calls.sh)
# Each suite first makes sure that its check catches an injected violation
# (a fixture made on the fly) and passes the fixture without it, then
# checks the tree.
SIZES_CHECK := $(SPECDIR)/check-sizes
AGENT_CALLS_CHECK := $(SPECDIR)/check-agent-calls
CHECK_SUITES += $(SIZES_CHECK) $(AGENT_CALLS_CHECK)
EXTRA_ALL    += $(SIZES_CHECK) $(AGENT_CALLS_CHECK)

$(SIZES_CHECK): spec/structure.mk
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; \
	   echo 'set -e'; \
	   echo 'script="$$VMHEAP_SRC/scripts/check-sizes.sh"'; \
	   echo 'fix=$$(mktemp -d); trap "rm -rf $$fix" EXIT'; \
	   echo 'mkdir "$$fix/agent" "$$fix/spec" "$$fix/fuzz"'; \
	   echo 'seq 800 > "$$fix/agent/full.c"; seq 5000 > "$$fix/spec/long_test.c"; seq 5000 > "$$fix/fuzz/long_fuzz.c"'; \
	   echo 'sh "$$script" "$$fix" > /dev/null || { echo "check-sizes: refused 800 lines, or a test or fuzz file"; exit 1; }'; \
	   echo 'seq 801 > "$$fix/agent/over.c"'; \
	   echo 'if sh "$$script" "$$fix" > /dev/null; then echo "check-sizes: accepted a product file of 801 lines"; exit 1; fi'; \
	   echo 'echo "check-sizes self-test: a file of 801 lines caught"'; \
	   echo 'exec sh "$$script" "$$VMHEAP_SRC"'; } > $@
	@chmod +x $@

$(AGENT_CALLS_CHECK): spec/structure.mk
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; \
	   echo 'set -e'; \
	   echo 'script="$$VMHEAP_SRC/scripts/check-agent-calls.sh"'; \
	   echo 'fix=$$(mktemp -d); trap "rm -rf $$fix" EXIT'; \
	   echo 'cc=$${CC:-cc}'; \
	   echo 'printf "int b1(void);\nint a1(void) { return b1(); }\n" > "$$fix/a.c"'; \
	   echo 'printf "int c1(void);\nint b1(void) { return c1(); }\n" > "$$fix/b.c"'; \
	   echo 'printf "int c1(void) { return 1; }\n" > "$$fix/c.c"'; \
	   echo 'for f in a b c; do $$cc -c -o "$$fix/$$f.o" "$$fix/$$f.c"; done'; \
	   echo 'sh "$$script" "$$fix" > /dev/null || { echo "check-agent-calls: refused a -> b -> c"; exit 1; }'; \
	   echo 'printf "int a1(void);\nint c1(void) { return a1(); }\n" > "$$fix/c.c"'; \
	   echo '$$cc -c -o "$$fix/c.o" "$$fix/c.c"'; \
	   echo 'if sh "$$script" "$$fix" > /dev/null; then echo "check-agent-calls: accepted a -> b -> c -> a"; exit 1; fi'; \
	   echo 'echo "check-agent-calls self-test: the circle a -> b -> c -> a caught"'; \
	   echo 'exec sh "$$script" "$$VMHEAP_BUILD/obj/agent"'; } > $@
	@chmod +x $@
