# The HTML report's suite (spec/report_html_test.c): vmheap-report's file
# loaded in a real headless Chromium (spec/report_html_browser.js, node,
# over the DevTools protocol), on dumps of the real writer and of the real
# sample VM.  main() and the harness come from spec/lib; the dump writer
# and the JSON parser from tools_harness.c.
REPORT_HTML_SPEC_BIN := $(SPECDIR)/report_html_test
REPORT_HTML_SPEC_OBJS := $(OBJDIR)/spec/report_html_test.o \
                         $(OBJDIR)/spec/tools_harness.o
$(eval $(call spec_suite,report_html_test,$(REPORT_HTML_SPEC_OBJS),\
  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS),\
  $(HTML_BIN) $(DIFF_BIN) $(HISTO_BIN) $(VMHEAP_SAMPLE)))
