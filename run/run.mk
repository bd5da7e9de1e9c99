# vmheap-run: start a program with the malloc tracker preloaded (and, for
# ruby, the agent).
RUN_SRCS := $(wildcard run/*.c)
RUN_OBJS := $(RUN_SRCS:%.c=$(OBJDIR)/%.o)
RUN_BIN  := $(BINDIR)/vmheap-run
BINS      += $(RUN_BIN)
MAN_PAGES += man/vmheap-run.1

$(RUN_BIN): $(RUN_OBJS) | $(NATIVE_SO)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(RUN_OBJS)
