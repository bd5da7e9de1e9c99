# The build's own rules as suites of make check (issue 30):
#   check-includes  no `-include` of a fragment in the Makefile or a *.mk
#                   (scripts/check-includes.sh): a required fragment is
#                   read with `include`; only the compiler's .d files may
#                   be missing
# The suite first runs the check's self-test (an injected violation in a
# fixture made on the fly is caught), then checks the tree.
INCLUDES_CHECK := $(SPECDIR)/check-includes
CHECK_SUITES += $(INCLUDES_CHECK)
EXTRA_ALL    += $(INCLUDES_CHECK)

$(INCLUDES_CHECK): spec/build.mk
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; \
	   echo 'sh "$$VMHEAP_SRC/scripts/check-includes.sh" self-test || exit 1'; \
	   echo 'exec sh "$$VMHEAP_SRC/scripts/check-includes.sh" "$$VMHEAP_SRC"'; } > $@
	@chmod +x $@
