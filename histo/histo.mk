# vmheap-histo: the per-class histogram of one dump.
HISTO_SRCS := $(wildcard histo/*.c)
HISTO_OBJS := $(HISTO_SRCS:%.c=$(OBJDIR)/%.o)
HISTO_BIN  := $(BINDIR)/vmheap-histo
BINS      += $(HISTO_BIN)
MAN_PAGES += man/vmheap-histo.1

$(HISTO_BIN): $(HISTO_OBJS) $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_ANALYSIS_A) \
              $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(HISTO_OBJS) $(LIBVMHEAP_REPORT_A) \
	  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) \
	  $(REPORT_NATIVE_LIBS)
