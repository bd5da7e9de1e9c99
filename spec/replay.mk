# The replay suite (spec/replay_test.c): vmheap-replay's program builder
# and engine on synthetic traces in memory (the engine compiled here with
# the suite's flags, so the sanitizer build checks it too), and the real
# tool on trace files, and on the trace of a real program (replay_victim).

# The program recorded and replayed, built like the tracker's victims:
# without the sanitizers (it runs under LD_PRELOAD).
REPLAY_VICTIM := $(SPECDIR)/replay_victim
EXTRA_ALL += $(REPLAY_VICTIM)
$(REPLAY_VICTIM): spec/native/replay_victim.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -pthread $(LDFLAGS) -o $@ $<

# The counting "allocator" (spec/native/replay_counter.c), preloaded by
# the suite as --allocator PATH.so.
REPLAY_COUNTER := $(SPECDIR)/replay_counter.so
EXTRA_ALL += $(REPLAY_COUNTER)
$(REPLAY_COUNTER): spec/native/replay_counter.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -shared -pthread $(LDFLAGS) -o $@ $<

REPLAY_SPEC_BIN := $(SPECDIR)/replay_test
REPLAY_SPEC_OBJS := $(OBJDIR)/spec/replay_test.o $(OBJDIR)/spec/tools_harness.o \
                    $(OBJDIR)/replay/program.o \
                    $(OBJDIR)/replay/engine.o $(OBJDIR)/replay/program_map.o
CHECK_SUITES += $(REPLAY_SPEC_BIN)
EXTRA_ALL    += $(REPLAY_SPEC_BIN)
$(OBJDIR)/spec/replay_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS)
$(REPLAY_SPEC_BIN): $(REPLAY_SPEC_OBJS) $(SPECDIR)/libvmheap_spec.a \
                    $(LIBVMHEAP_A) | $(REPLAY_ENGINE) $(REPLAY_BIN) \
                      $(REPLAY_VICTIM) $(REPLAY_COUNTER) $(RUN_BIN) \
                      $(NATIVE_SO)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(REPLAY_SPEC_OBJS) \
	  $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS) $(EVENT_LIBS) $(CHECK_LIBS)
