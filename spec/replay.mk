# The replay suite (spec/replay_test.c): vmheap-replay's program builder
# and engine on synthetic traces in memory (the engine compiled here with
# the suite's flags, so the sanitizer build checks it too), and the real
# tool on trace files.
REPLAY_SPEC_BIN := $(SPECDIR)/replay_test
REPLAY_SPEC_OBJS := $(OBJDIR)/spec/replay_test.o $(OBJDIR)/spec/tools_harness.o \
                    $(OBJDIR)/replay/program.o \
                    $(OBJDIR)/replay/engine.o $(OBJDIR)/replay/program_map.o
CHECK_SUITES += $(REPLAY_SPEC_BIN)
EXTRA_ALL    += $(REPLAY_SPEC_BIN)
$(OBJDIR)/spec/replay_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS)
$(REPLAY_SPEC_BIN): $(REPLAY_SPEC_OBJS) $(SPECDIR)/libvmheap_spec.a \
                    $(LIBVMHEAP_A) | $(REPLAY_ENGINE) $(REPLAY_BIN)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(REPLAY_SPEC_OBJS) \
	  $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS) $(EVENT_LIBS) $(CHECK_LIBS)
