# The safety suite (spec/safety_test.c, issue 28): files created with
# O_EXCL|O_NOFOLLOW in directories held by fd (libvmheap-files, the agent,
# vmheap-report and vmheap-import under strace), a fork dump's child that
# dies with its VM.  Real vmheap-sample, real tools; main() and the harness
# from spec/lib, the sample helpers from spec/agent_helpers.c.  Also: the
# memory bounds before and after auth, the fork-estimate job, the cgroup
# guard (a real cgroup where the machine allows one), the console's
# escaping of VM strings (a real Ruby VM) and top under busy.
SAFETY_SPEC_BIN := $(SPECDIR)/safety_test
SAFETY_SPEC_OBJS := $(OBJDIR)/spec/safety_test.o $(OBJDIR)/spec/agent_helpers.o
$(eval $(call spec_suite,safety_test,$(SAFETY_SPEC_OBJS),\
  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS),\
  $(VMHEAP_SAMPLE) $(HTML_BIN) $(IMPORT_BIN) $(CONSOLE_BIN) $(RUBY_HOST_SO)))
