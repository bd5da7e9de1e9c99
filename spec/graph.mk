# Check suite of the heap graph (analysis/vmheap_graph.h).
# main() is spec/lib's.
GRAPH_TEST := $(SPECDIR)/graph_test
CHECK_SUITES += $(GRAPH_TEST)

$(OBJDIR)/spec/graph_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS)

$(GRAPH_TEST): $(OBJDIR)/spec/graph_test.o $(SPECDIR)/libvmheap_spec.a \
               $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(CHECK_LIBS)
