# vmheap-replay: replay a malloc trace under several allocators.  Two
# programs: the tool (build/bin/vmheap-replay: options, the trace read and
# checked into a replay program, the children, the table), and the engine
# it starts once per allocator with that allocator in LD_PRELOAD
# (build/libexec/vmheap/vmheap-replay-engine: libc and pthreads only).
REPLAY_ENGINE_SRCS := replay/engine.c replay/engine_main.c replay/program_map.c
REPLAY_SRCS := $(filter-out $(REPLAY_ENGINE_SRCS),$(wildcard replay/*.c))
REPLAY_OBJS := $(REPLAY_SRCS:%.c=$(OBJDIR)/%.o)
REPLAY_BIN  := $(BINDIR)/vmheap-replay
REPLAY_ENGINE := $(BUILD)/libexec/vmheap/vmheap-replay-engine
REPLAY_ENGINE_OBJS := $(REPLAY_ENGINE_SRCS:replay/%.c=$(OBJDIR)/replay-engine/%.o)
BINS      += $(REPLAY_BIN)
MAN_PAGES += man/vmheap-replay.1
EXTRA_ALL += $(REPLAY_ENGINE)

$(REPLAY_BIN): $(REPLAY_OBJS) $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_ANALYSIS_A) \
               $(LIBVMHEAP_A) | $(REPLAY_ENGINE)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(REPLAY_OBJS) $(LIBVMHEAP_REPORT_A) \
	  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) \
	  $(REPORT_NATIVE_LIBS)

# The engine is built without the sanitizers even in build/asan, and
# always optimized: it runs under the allocator it measures (an
# instrumented program would bring ASan's malloc and refuse the
# preload), and its speed is what it reports.
REPLAY_ENGINE_CFLAGS = $(filter-out $(SANITIZE),$(ALL_CFLAGS)) -O2
$(OBJDIR)/replay-engine/%.o: replay/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(REPLAY_ENGINE_CFLAGS) -MMD -MP -c $< -o $@
$(REPLAY_ENGINE): $(REPLAY_ENGINE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -pthread $(LDFLAGS) -o $@ $(REPLAY_ENGINE_OBJS)

# make install: the engine goes to PREFIX/libexec/vmheap, where
# vmheap-replay looks for it (../libexec/vmheap from its own directory).
define REPLAY_INSTALL_LINES

install -d $(DESTDIR)$(PREFIX)/libexec/vmheap
install -m 0755 $(REPLAY_ENGINE) $(DESTDIR)$(PREFIX)/libexec/vmheap/

endef
INSTALL_EXTRA += $(REPLAY_INSTALL_LINES)
