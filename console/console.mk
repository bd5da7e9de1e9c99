# vmheap-console: the interactive console to a running VM.
CONSOLE_SRCS := $(wildcard console/*.c)
CONSOLE_OBJS := $(CONSOLE_SRCS:%.c=$(OBJDIR)/%.o)
CONSOLE_BIN  := $(BINDIR)/vmheap-console
MAN_PAGES    += man/vmheap-console.1
BINS         += $(CONSOLE_BIN)

$(CONSOLE_OBJS): private ALL_CFLAGS += $(EDIT_CFLAGS)

$(CONSOLE_BIN): $(CONSOLE_OBJS) $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_AGENT_A) \
                $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(CONSOLE_OBJS) $(LIBVMHEAP_REPORT_A) \
	  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS) $(EDIT_LIBS) -lm \
	  $(REPORT_NATIVE_LIBS)
