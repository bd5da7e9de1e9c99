# The tools' suite: the real vmheap-histo and vmheap-diff on dumps written
# by the real writer.  main() and the harness come from spec/lib.
TOOLS_SPEC_SRCS := spec/tools_test.c spec/tools_diff_test.c \
                   spec/tools_errors_test.c spec/tools_harness.c \
                   spec/tools_timeline_test.c
TOOLS_SPEC_OBJS := $(TOOLS_SPEC_SRCS:%.c=$(OBJDIR)/%.o)
TOOLS_SPEC_BIN  := $(SPECDIR)/tools_test
# the suite runs the tools (and --version of every program): build them
# first
$(eval $(call spec_suite,tools_test,$(TOOLS_SPEC_OBJS),\
  $(LIBVMHEAP_A) $(MSGPACK_LIBS),$(BINS)))
