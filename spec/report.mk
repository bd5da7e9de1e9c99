# Check suite of libvmheap-report (options, escaping, tables).
REPORT_TEST := $(SPECDIR)/report_test
CHECK_SUITES += $(REPORT_TEST)

$(OBJDIR)/spec/report_test.o: ALL_CFLAGS += $(CHECK_CFLAGS)

$(REPORT_TEST): $(OBJDIR)/spec/report_test.o $(LIBVMHEAP_REPORT_A) \
                $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS) $(CHECK_LIBS)
