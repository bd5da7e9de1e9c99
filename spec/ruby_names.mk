# The suite of names in real Ruby dumps (spec/ruby_names_test.c): locals,
# class and module objects, threads, as vmheap-path, vmheap-dominators and
# vmheap-diff show them.  Real `ruby` with build/ruby/vmheap_agent.so, the
# dumps through vmheap-console.  main() and the harness come from spec/lib.
RUBY_NAMES_SPEC_BIN := $(SPECDIR)/ruby_names_test
RUBY_NAMES_SPEC_OBJ := $(OBJDIR)/spec/ruby_names_test.o
$(eval $(call spec_suite,ruby_names_test,$(RUBY_NAMES_SPEC_OBJ),\
  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) \
  $(EVENT_LIBS),\
  $(PATH_BIN) $(DOMINATORS_BIN) $(DIFF_BIN) $(CONSOLE_BIN) $(HTML_BIN) \
  $(RUBY_HOST_SO)))
