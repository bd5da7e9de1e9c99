# The libraries' ABI (issue 12):
#
#   abi_exports_test  scripts/check-exports.sh: each shared library in
#                     SHARED_LIBS exports only functions that a header in
#                     PUBLIC_HEADERS marks VMHEAP_EXPORT, together they
#                     export all of them, and the Ruby extension exports
#                     Init_vmheap_agent alone; first its self-test, which
#                     shows that a library exporting an internal fails
#   abi_test          the headers' rules for failed constructors and error
#                     buffers, linked against the shared libraries
#   abi_diff_test     scripts/check-abi.sh: each shared library in
#                     SHARED_LIBS against its abidw baseline in abi/
#                     (abigail-tools): a removed function or a changed
#                     signature or public struct fails unless ABI_MAJOR
#                     (the soname's major) was raised; first its
#                     self-test, which shows that such changes are caught.
#                     Only in the plain build: the sanitizers' builds
#                     (build/asan) have the same ABI and their own code.
#
# `make abi-baseline` rewrites abi/*.abi from build/lib (HACKING.md, "The
# ABI"): after raising ABI_MAJOR, or to record added functions.
ABI_EXPORTS_TEST := $(SPECDIR)/abi_exports_test
ABI_TEST := $(SPECDIR)/abi_test
ABI_DIFF_TEST := $(SPECDIR)/abi_diff_test
ABI_DIR := abi
ABI_SHARED_FILES := $(filter $(LIBDIR)/%.so $(LIBDIR)/%.so.$(ABI_MAJOR),$(LIBS_OUT))
ABI_RUBY_EXT := $(filter $(RUBY_HOST_SO),$(EXTRA_ALL))
ABI_CPP := $(CC) -E $(PKG_CFLAGS) -Iformat -Ianalysis -Iagent

CHECK_SUITES += $(ABI_EXPORTS_TEST) $(ABI_TEST)
EXTRA_ALL    += $(ABI_EXPORTS_TEST) $(ABI_TEST)
ifeq ($(SAN),)
CHECK_SUITES += $(ABI_DIFF_TEST)
EXTRA_ALL    += $(ABI_DIFF_TEST)
endif

# The headers as the compiler saw them (relative to the source tree, where
# run-suites.sh runs the script): abidw matches the debug information's
# paths with them.
$(ABI_DIFF_TEST): spec/abi.mk scripts/check-abi.sh $(ABI_SHARED_FILES) \
                  $(wildcard $(ABI_DIR)/*) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; \
	   echo 'sh scripts/check-abi.sh self-test || exit 1'; \
	   echo 'exec sh scripts/check-abi.sh check $(ABI_DIR) $(PUBLIC_HEADERS) -- $(abspath $(SHARED_LIBS))'; \
	 } > $@.tmp && chmod +x $@.tmp && mv -f $@.tmp $@

.PHONY: abi-baseline
abi-baseline: $(ABI_SHARED_FILES)
	sh scripts/check-abi.sh dump $(ABI_DIR) $(PUBLIC_HEADERS) -- $(SHARED_LIBS)

# A script with the paths of this build; run-suites.sh runs it from the
# source tree.
$(ABI_EXPORTS_TEST): spec/abi.mk scripts/check-exports.sh $(ABI_SHARED_FILES) \
                     $(ABI_RUBY_EXT) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; \
	   echo 'sh scripts/check-exports.sh self-test || exit 1'; \
	   echo 'exec sh scripts/check-exports.sh "$(ABI_CPP)" $(PUBLIC_HEADERS) -- $(abspath $(SHARED_LIBS))$(if $(ABI_RUBY_EXT), -- $(abspath $(ABI_RUBY_EXT)) Init_vmheap_agent)'; \
	 } > $@.tmp && chmod +x $@.tmp && mv -f $@.tmp $@

$(OBJDIR)/spec/abi_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS) -DABI_MAJOR='"$(ABI_MAJOR)"'
$(OBJDIR)/spec/abi_test.o: Makefile

# Linked by path against the .so files (their NEEDED entries are the
# sonames), found at run time through the rpath.
$(ABI_TEST): $(OBJDIR)/spec/abi_test.o $(ABI_SHARED_FILES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SHARED_LIBS) \
	  -Wl,-rpath,$(abspath $(LIBDIR)) $(MSGPACK_LIBS) $(CHECK_LIBS)
