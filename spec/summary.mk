# Block summaries (FORMAT.md section 6): written by libvmheap, read by the
# census, skipped by every other reader (spec/summary_test.c).
SUMMARY_TEST := $(SPECDIR)/summary_test
$(eval $(call spec_suite,summary_test,$(OBJDIR)/spec/summary_test.o,\
  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS)))
