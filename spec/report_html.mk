# The HTML report's suite (spec/report_html_test.c): vmheap-report's file
# loaded in a real headless Chromium (spec/report_html_browser.js, node,
# over the DevTools protocol), on dumps of the real writer and of the real
# sample VM.  main() and the harness come from spec/lib; the dump writer
# and the JSON parser from tools_harness.c.
REPORT_HTML_SPEC_BIN := $(SPECDIR)/report_html_test
REPORT_HTML_SPEC_OBJS := $(OBJDIR)/spec/report_html_test.o \
                         $(OBJDIR)/spec/tools_harness.o
CHECK_SUITES += $(REPORT_HTML_SPEC_BIN)
EXTRA_ALL    += $(REPORT_HTML_SPEC_BIN)
$(REPORT_HTML_SPEC_OBJS): private ALL_CFLAGS += $(CHECK_CFLAGS)
$(REPORT_HTML_SPEC_BIN): $(REPORT_HTML_SPEC_OBJS) $(SPECDIR)/libvmheap_spec.a \
                         $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) \
                         | $(HTML_BIN) $(DIFF_BIN) $(HISTO_BIN) $(VMHEAP_SAMPLE)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(REPORT_HTML_SPEC_OBJS) \
	  $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS) $(EVENT_LIBS) $(CHECK_LIBS)
