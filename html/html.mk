# vmheap-report: one self-contained HTML file about one or more dumps.
# page.html (the page's markup, style and script) is built into the tool
# as a C array.
HTML_SRCS := $(wildcard html/*.c)
HTML_OBJS := $(HTML_SRCS:%.c=$(OBJDIR)/%.o) $(OBJDIR)/html/page_data.o
HTML_BIN  := $(BINDIR)/vmheap-report
BINS      += $(HTML_BIN)
MAN_PAGES += man/vmheap-report.1

$(OBJDIR)/html/page_data.c: html/page.html html/embed.sh
	@mkdir -p $(dir $@)
	sh html/embed.sh html/page.html > $@.new && mv -f $@.new $@

$(OBJDIR)/html/page_data.o: $(OBJDIR)/html/page_data.c $(FLAGS_STAMP)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(HTML_BIN): $(HTML_OBJS) $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_ANALYSIS_A) \
             $(LIBVMHEAP_FILES_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(HTML_OBJS) $(LIBVMHEAP_REPORT_A) \
	  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_FILES_A) $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS) $(REPORT_NATIVE_LIBS)
