# Block summaries (FORMAT.md section 6): written by libvmheap, read by the
# census, skipped by every other reader (spec/summary_test.c).
SUMMARY_TEST := $(SPECDIR)/summary_test
CHECK_SUITES += $(SUMMARY_TEST)

$(OBJDIR)/spec/summary_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS)

$(SUMMARY_TEST): $(OBJDIR)/spec/summary_test.o $(SPECDIR)/libvmheap_spec.a \
                 $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(CHECK_LIBS)
