# The graph tools' suite (spec/graphtools_test.c): vmheap-path,
# vmheap-dominators, vmheap-histo --retained, vmheap-diff --paths and
# --suspects on dumps of the real writer and of a real Ruby VM, and the
# queries of vmheap_graph_query.h, against brute force.  main() and the
# harness come from spec/lib; the dump writer and output parsers from
# tools_harness.c.
GRAPHTOOLS_SPEC_BIN := $(SPECDIR)/graphtools_test
GRAPHTOOLS_SPEC_OBJS := $(OBJDIR)/spec/graphtools_test.o \
                        $(OBJDIR)/spec/tools_harness.o
CHECK_SUITES += $(GRAPHTOOLS_SPEC_BIN)
EXTRA_ALL    += $(GRAPHTOOLS_SPEC_BIN)
$(GRAPHTOOLS_SPEC_OBJS): private ALL_CFLAGS += $(CHECK_CFLAGS)
$(GRAPHTOOLS_SPEC_BIN): $(GRAPHTOOLS_SPEC_OBJS) $(SPECDIR)/libvmheap_spec.a \
                        $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) \
                        | $(PATH_BIN) $(DOMINATORS_BIN) $(HISTO_BIN) $(DIFF_BIN)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(GRAPHTOOLS_SPEC_OBJS) \
	  $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_REPORT_A) \
	  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS) $(CHECK_LIBS)
