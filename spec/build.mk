# The build's own rules as suites of make check (issue 30):
#   check-includes  no `-include` of a fragment in the Makefile or a *.mk
#                   (scripts/check-includes.sh): a required fragment is
#                   read with `include`; only the compiler's .d files may
#                   be missing
#   check-install   `make install` into a scratch DESTDIR
#                   (scripts/check-install.sh): the tools without the test
#                   VM vmheap-sample, and pkg-config files that link only
#                   what each use needs (a dump reader built with
#                   vmheap.pc needs libvmheap and not the agent); only in
#                   the plain build (installing is the same under SAN=1)
#   format-check    the C lines changed since the commit in .format-base
#                   match .clang-format (scripts/format-check.sh, with
#                   clang-format-14); only in the plain build
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

INSTALL_CHECK := $(SPECDIR)/check-install
ifeq ($(SAN),)
CHECK_SUITES += $(INSTALL_CHECK)
EXTRA_ALL    += $(INSTALL_CHECK)
endif
$(INSTALL_CHECK): spec/build.mk Makefile
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; \
	   echo 'ABI_MAJOR=$(ABI_MAJOR) exec sh "$$VMHEAP_SRC/scripts/check-install.sh" "$$VMHEAP_SRC" "$$VMHEAP_BUILD"'; } > $@
	@chmod +x $@

FORMAT_CHECK := $(SPECDIR)/format-check
ifeq ($(SAN),)
CHECK_SUITES += $(FORMAT_CHECK)
EXTRA_ALL    += $(FORMAT_CHECK)
endif
$(FORMAT_CHECK): spec/build.mk
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; \
	   echo 'sh "$$VMHEAP_SRC/scripts/format-check.sh" self-test || exit 1'; \
	   echo 'exec sh "$$VMHEAP_SRC/scripts/format-check.sh" "$$VMHEAP_SRC"'; } > $@
	@chmod +x $@
