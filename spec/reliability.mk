# Reliability suites (issue 8): the load test and the fault tests.  Both
# fork real VMs (vmheap-sample, or the sample VM's code linked in with
# more client slots: spec/lib/embedded_vm.c) and run the real tools.
# main() and the harness come from spec/lib.
RL_SAMPLE_OBJS := $(filter-out %/main.o,$(SAMPLE_OBJS))
RL_FUZZ_OBJS   := $(OBJDIR)/fuzz/reader_fuzz.o $(OBJDIR)/fuzz/protocol_fuzz.o \
                  $(OBJDIR)/fuzz/discovery_fuzz.o $(OBJDIR)/fuzz/client_fuzz.o
RL_LOAD_BIN    := $(SPECDIR)/reliability_test
RL_FAULTS_BIN  := $(SPECDIR)/reliability_faults_test
# the sample host's objects come after the archive's embedded VM needs
# them, and the archive again after them
RL_LINK = $(RL_SAMPLE_OBJS) $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_AGENT_A) \
          $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS)
$(eval $(call spec_suite,reliability_test,$(OBJDIR)/spec/reliability_test.o,\
  $(RL_LINK)))
$(eval $(call spec_suite,reliability_faults_test,\
  $(OBJDIR)/spec/reliability_faults_test.o,$(RL_FUZZ_OBJS) $(RL_LINK)))
