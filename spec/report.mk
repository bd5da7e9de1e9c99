# Check suite of libvmheap-report (options, escaping, tables).
# main() is spec/lib's.
REPORT_TEST := $(SPECDIR)/report_test
CHECK_SUITES += $(REPORT_TEST)

$(OBJDIR)/spec/report_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS)

$(REPORT_TEST): $(OBJDIR)/spec/report_test.o $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_REPORT_A) \
                $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS) $(CHECK_LIBS)
