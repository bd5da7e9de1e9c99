# Check suite of the live histogram (get system.memory.histogram) and the
# console's `top`, against the real sample VM (in tmux for top) and a real
# Ruby VM; and a Ruby timeline's growth rate.  main() and the harness come
# from spec/lib.
LIVE_SPEC_BIN := $(SPECDIR)/live_test
LIVE_SPEC_OBJ := $(OBJDIR)/spec/live_test.o
ifneq ($(LIBVMHEAP_AGENT_A),)
CHECK_SUITES += $(LIVE_SPEC_BIN)
EXTRA_ALL += $(LIVE_SPEC_BIN)
endif
$(LIVE_SPEC_OBJ): private ALL_CFLAGS += $(CHECK_CFLAGS)
# the suite runs the sample VM, the console, vmheap-histo and vmheap-diff
$(LIVE_SPEC_BIN): $(LIVE_SPEC_OBJ) $(SPECDIR)/libvmheap_spec.a \
                  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) | $(BINS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(LIVE_SPEC_OBJ) $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS) \
	  $(CHECK_LIBS)
