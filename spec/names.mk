# The names suite (spec/names_test.c): format 1.1 edge and root names
# through the heap graph (vmheap_graph.h) and the graph tools, on dumps of
# the real writer and of the real sample VM (no Ruby).  main() and the
# harness come from spec/lib; the output parsers from tools_harness.c.
NAMES_SPEC_BIN := $(SPECDIR)/names_test
NAMES_SPEC_OBJS := $(OBJDIR)/spec/names_test.o $(OBJDIR)/spec/tools_harness.o
$(eval $(call spec_suite,names_test,$(NAMES_SPEC_OBJS),\
  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) \
  $(EVENT_LIBS),\
  $(PATH_BIN) $(DOMINATORS_BIN) $(DIFF_BIN) $(CONSOLE_BIN) $(VMHEAP_SAMPLE)))
