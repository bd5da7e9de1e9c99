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
# The version line and the usage error are report/tool.c's, compiled here
# with these flags (libvmheap-report is built with the sanitizers in
# build/asan); -MMD makes the objects depend on report/vmheap_tool.h.
RUN_OBJS += $(OBJDIR)/run/tool.o
$(OBJDIR)/run/%.o: run/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -MMD -MP -c $< -o $@
$(OBJDIR)/run/tool.o: report/tool.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -MMD -MP -c $< -o $@

$(RUN_BIN): $(RUN_OBJS) | $(NATIVE_SO)
	@mkdir -p $(dir $@)
	$(CC) -pthread $(LDFLAGS) -o $@ $(RUN_OBJS)
