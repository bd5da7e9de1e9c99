# The graph tools' suite (spec/graphtools_test.c): vmheap-path,
# vmheap-dominators, vmheap-histo --retained, vmheap-diff --paths and
# --suspects on dumps of the real writer and of a real Ruby VM, and the
# queries of vmheap_graph_query.h, against brute force.  main() and the
# harness come from spec/lib; the dump writer and output parsers from
# tools_harness.c.
GRAPHTOOLS_SPEC_BIN := $(SPECDIR)/graphtools_test
GRAPHTOOLS_SPEC_OBJS := $(OBJDIR)/spec/graphtools_test.o \
                        $(OBJDIR)/spec/tools_harness.o
$(eval $(call spec_suite,graphtools_test,$(GRAPHTOOLS_SPEC_OBJS),\
  $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS),\
  $(PATH_BIN) $(DOMINATORS_BIN) $(HISTO_BIN) $(DIFF_BIN)))
