# vmheap-run: start a program with the malloc tracker preloaded (and, for
# ruby, the agent).
RUN_SRCS := $(wildcard run/*.c)
RUN_OBJS := $(RUN_SRCS:%.c=$(OBJDIR)/%.o)
RUN_BIN  := $(BINDIR)/vmheap-run
BINS      += $(RUN_BIN)
MAN_PAGES += man/vmheap-run.1

# Built without the sanitizers even in build/asan, like the tracker: it
# starts under the user's LD_PRELOAD, which an instrumented program
# refuses ("ASan runtime does not come first").
$(OBJDIR)/run/%.o: run/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -DVMHEAP_VERSION='"$(VMHEAP_VERSION)"' -MMD -MP -c $< -o $@

$(RUN_BIN): $(RUN_OBJS) | $(NATIVE_SO)
	@mkdir -p $(dir $@)
	$(CC) -pthread $(LDFLAGS) -o $@ $(RUN_OBJS)
