# Check suite of libvmheap-analysis (census, diff, identity, tables).
# main() is spec/lib's.
ANALYSIS_TEST := $(SPECDIR)/analysis_test
$(eval $(call spec_suite,analysis_test,$(OBJDIR)/spec/analysis_test.o,\
  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS)))
