# spec/agent_test: the agent end to end (real vmheap-sample, real sockets).
# Both suites get main() and their harness from spec/lib (spec/lib.mk).
AGENT_TEST := $(SPECDIR)/agent_test
AGENT_TEST_OBJS := $(OBJDIR)/spec/agent_test.o $(OBJDIR)/spec/agent_helpers.o \
                   $(OBJDIR)/spec/agent_ops_test.o $(OBJDIR)/spec/agent_dump_file_test.o
CHECK_SUITES += $(AGENT_TEST)
EXTRA_ALL += $(AGENT_TEST)
$(AGENT_TEST_OBJS): private ALL_CFLAGS += $(CHECK_CFLAGS)
$(AGENT_TEST): $(AGENT_TEST_OBJS) $(SPECDIR)/libvmheap_spec.a \
               $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(VMHEAP_SAMPLE)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(AGENT_TEST_OBJS) $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS) \
	  $(CHECK_LIBS)

# spec/agent_frame_test: the frame codec and token, unit level.
AGENT_FRAME_TEST := $(SPECDIR)/agent_frame_test
CHECK_SUITES += $(AGENT_FRAME_TEST)
EXTRA_ALL += $(AGENT_FRAME_TEST)
$(OBJDIR)/spec/agent_frame_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS)
$(AGENT_FRAME_TEST): $(OBJDIR)/spec/agent_frame_test.o $(SPECDIR)/libvmheap_spec.a \
                     $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS) \
	  $(CHECK_LIBS)
