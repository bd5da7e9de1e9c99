# Check suite of the heap graph (analysis/vmheap_graph.h).
# main() is spec/lib's.
GRAPH_TEST := $(SPECDIR)/graph_test
$(eval $(call spec_suite,graph_test,$(OBJDIR)/spec/graph_test.o,\
  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS)))
