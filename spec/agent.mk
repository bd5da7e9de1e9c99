# spec/agent_test: the agent end to end (real vmheap-sample, real sockets).
# Both suites get main() and their harness from spec/lib (spec/lib.mk).
AGENT_TEST := $(SPECDIR)/agent_test
AGENT_TEST_OBJS := $(OBJDIR)/spec/agent_test.o $(OBJDIR)/spec/agent_helpers.o \
                   $(OBJDIR)/spec/agent_ops_test.o $(OBJDIR)/spec/agent_dump_file_test.o \
                   $(OBJDIR)/spec/agent_reply_test.o
$(eval $(call spec_suite,agent_test,$(AGENT_TEST_OBJS),\
  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS),\
  $(VMHEAP_SAMPLE)))

# spec/agent_frame_test: the frame codec and token, unit level.
AGENT_FRAME_TEST := $(SPECDIR)/agent_frame_test
$(eval $(call spec_suite,agent_frame_test,$(OBJDIR)/spec/agent_frame_test.o,\
  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS)))
