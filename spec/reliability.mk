# Reliability suites (issue 8): the load test and the fault tests.  Both
# fork real VMs (vmheap-sample, or the sample VM's code linked in with
# more client slots: spec/lib/embedded_vm.c) and run the real tools.
# main() and the harness come from spec/lib.
RL_SAMPLE_OBJS := $(filter-out %/main.o,$(SAMPLE_OBJS))
RL_FUZZ_OBJS   := $(OBJDIR)/fuzz/reader_fuzz.o $(OBJDIR)/fuzz/protocol_fuzz.o \
                  $(OBJDIR)/fuzz/discovery_fuzz.o $(OBJDIR)/fuzz/client_fuzz.o
RL_LOAD_BIN    := $(SPECDIR)/reliability_test
RL_FAULTS_BIN  := $(SPECDIR)/reliability_faults_test
RL_LIBS = $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_AGENT_A) \
          $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) \
          $(MSGPACK_LIBS) $(EVENT_LIBS) $(CHECK_LIBS)
ifneq ($(LIBVMHEAP_AGENT_A),)
CHECK_SUITES += $(RL_LOAD_BIN) $(RL_FAULTS_BIN)
EXTRA_ALL    += $(RL_LOAD_BIN) $(RL_FAULTS_BIN)
endif
$(OBJDIR)/spec/reliability_%.o: private ALL_CFLAGS += $(CHECK_CFLAGS)
# the sample host's objects come after the archive's embedded VM needs them
$(RL_LOAD_BIN): $(OBJDIR)/spec/reliability_test.o $(SPECDIR)/libvmheap_spec.a \
                $(RL_SAMPLE_OBJS) $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SPECDIR)/libvmheap_spec.a \
	  $(RL_SAMPLE_OBJS) $(RL_LIBS)
$(RL_FAULTS_BIN): $(OBJDIR)/spec/reliability_faults_test.o \
                  $(SPECDIR)/libvmheap_spec.a $(RL_SAMPLE_OBJS) $(RL_FUZZ_OBJS) \
                  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(RL_FUZZ_OBJS) $(SPECDIR)/libvmheap_spec.a \
	  $(RL_SAMPLE_OBJS) $(RL_LIBS)
