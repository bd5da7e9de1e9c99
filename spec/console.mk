# The console's suite: the real vmheap-console against the real sample VM.
# main() and the harness (processes, the sample VM, tmux) come from spec/lib.
CONSOLE_SPEC_SRCS := spec/console_test.c spec/console_render_test.c
# the renderer's own objects, tested directly
CONSOLE_SPEC_UNITS := $(OBJDIR)/console/render.o $(OBJDIR)/console/json.o \
                      $(OBJDIR)/console/histogram.o
CONSOLE_SPEC_OBJS := $(CONSOLE_SPEC_SRCS:%.c=$(OBJDIR)/%.o)
CONSOLE_SPEC_BIN  := $(SPECDIR)/console_test
$(eval $(call spec_suite,console_test,$(CONSOLE_SPEC_OBJS),\
  $(CONSOLE_SPEC_UNITS) $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) \
  $(EVENT_LIBS)))
