# vmheap-sample: a small C VM that embeds the agent (tests and docs).  It
# is built into $(BINDIR) with the tools but not installed (NOINST_BINS):
# it is the test VM, and hosts/sample/ the example of embedding the agent.
SAMPLE_SRCS := $(wildcard hosts/sample/*.c)
SAMPLE_OBJS := $(SAMPLE_SRCS:%.c=$(OBJDIR)/%.o)
VMHEAP_SAMPLE := $(BINDIR)/vmheap-sample
BINS += $(VMHEAP_SAMPLE)
NOINST_BINS += $(VMHEAP_SAMPLE)

$(VMHEAP_SAMPLE): $(SAMPLE_OBJS) $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(SAMPLE_OBJS) $(LIBVMHEAP_AGENT_A) \
	  $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS)

# --version prints the release version that report/vmheap_tool.h keeps
# (the Makefile reads it into VMHEAP_VERSION; a host may not include
# report/ headers).
$(OBJDIR)/hosts/sample/main.o: private ALL_CFLAGS += -DVMHEAP_VERSION='"$(VMHEAP_VERSION)"'
$(OBJDIR)/hosts/sample/main.o: $(VERSION_H)
