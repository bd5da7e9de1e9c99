# vmheap-diff: what grew between two dumps (by class, by identity, retainers).
DIFF_SRCS := $(wildcard diff/*.c)
DIFF_OBJS := $(DIFF_SRCS:%.c=$(OBJDIR)/%.o)
DIFF_BIN  := $(BINDIR)/vmheap-diff
BINS      += $(DIFF_BIN)
MAN_PAGES += man/vmheap-diff.1

$(DIFF_BIN): $(DIFF_OBJS) $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_ANALYSIS_A) \
             $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(DIFF_OBJS) $(LIBVMHEAP_REPORT_A) \
	  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) \
	  $(REPORT_NATIVE_LIBS)
