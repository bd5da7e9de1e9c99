# vmheap-dominators: the objects that retain the most, with their chain of
# dominators up to the root.
DOMINATORS_SRCS := $(wildcard dominators/*.c)
DOMINATORS_OBJS := $(DOMINATORS_SRCS:%.c=$(OBJDIR)/%.o)
DOMINATORS_BIN  := $(BINDIR)/vmheap-dominators
BINS      += $(DOMINATORS_BIN)
MAN_PAGES += man/vmheap-dominators.1

$(DOMINATORS_BIN): $(DOMINATORS_OBJS) $(LIBVMHEAP_REPORT_A) \
                   $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(DOMINATORS_OBJS) $(LIBVMHEAP_REPORT_A) \
	  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS)
