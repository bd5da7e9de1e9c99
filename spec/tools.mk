# The tools' suite: the real vmheap-histo and vmheap-diff on dumps written
# by the real writer.  main() and the harness come from spec/lib.
TOOLS_SPEC_SRCS := spec/tools_test.c spec/tools_diff_test.c \
                   spec/tools_errors_test.c spec/tools_harness.c \
                   spec/tools_timeline_test.c
TOOLS_SPEC_OBJS := $(TOOLS_SPEC_SRCS:%.c=$(OBJDIR)/%.o)
TOOLS_SPEC_BIN  := $(SPECDIR)/tools_test
CHECK_SUITES += $(TOOLS_SPEC_BIN)
EXTRA_ALL    += $(TOOLS_SPEC_BIN)
$(TOOLS_SPEC_OBJS): private ALL_CFLAGS += $(CHECK_CFLAGS)
# the suite runs the tools (and --version of every program): build them
# first
$(TOOLS_SPEC_BIN): $(TOOLS_SPEC_OBJS) $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_A) \
                   | $(BINS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(TOOLS_SPEC_OBJS) $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(CHECK_LIBS)
