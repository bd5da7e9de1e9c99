# Check suite of the live histogram (get system.memory.histogram) and the
# console's `top`, against the real sample VM (in tmux for top) and a real
# Ruby VM; and a Ruby timeline's growth rate.  main() and the harness come
# from spec/lib.
LIVE_SPEC_BIN := $(SPECDIR)/live_test
LIVE_SPEC_OBJ := $(OBJDIR)/spec/live_test.o
# the suite runs the sample VM, the console, vmheap-histo and vmheap-diff
$(eval $(call spec_suite,live_test,$(LIVE_SPEC_OBJ),\
  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS),$(BINS)))
