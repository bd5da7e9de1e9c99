# Check suite of libvmheap-report (options, escaping, tables).
# main() is spec/lib's.
REPORT_TEST := $(SPECDIR)/report_test
$(eval $(call spec_suite,report_test,$(OBJDIR)/spec/report_test.o,\
  $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS)))
