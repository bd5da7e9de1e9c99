# The malloc trace suite (spec/trace_test.c): format/TRACE.md's worked
# example byte for byte (spec/trace_example.c builds it with the
# tracker's encoder), the reader's refusals, and real programs recorded
# by vmheap-run --record (spec/native/trace_victim.c, built without the
# sanitizers: the tracker is preloaded into it), and real ruby with the
# agent (RUBY_HOST_SO), as vmheap-run starts it.
TRACE_TEST   := $(SPECDIR)/trace_test
TRACE_VICTIM := $(SPECDIR)/trace_victim
CHECK_SUITES += $(TRACE_TEST)
EXTRA_ALL    += $(TRACE_TEST) $(TRACE_VICTIM)

TRACE_TEST_OBJS := $(OBJDIR)/spec/trace_test.o $(OBJDIR)/spec/trace_example.o
$(TRACE_TEST_OBJS): private ALL_CFLAGS += $(CHECK_CFLAGS)
$(TRACE_VICTIM): spec/native/trace_victim.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -pthread $(LDFLAGS) -o $@ $< -ldl

$(TRACE_TEST): $(TRACE_TEST_OBJS) $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_A) \
               | $(NATIVE_SO) $(TRACE_VICTIM) $(RUN_BIN) $(RUBY_HOST_SO)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(TRACE_TEST_OBJS) $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_A) $(CHECK_LIBS)
