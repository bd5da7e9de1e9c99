# The console's operations suite (spec/console_ops_test.c): VMs of other
# users as root, --dir, zombie VMs, live titles and parent pids in --ps,
# Ctrl-C during a dump.  Real sample VMs, real ruby with the agent, tmux.
# Under SAN=1 ruby gets the ASan runtime through LD_PRELOAD, as in
# spec/ruby.mk.
CONSOLE_OPS_SPEC_BIN := $(SPECDIR)/console_ops_test
CONSOLE_OPS_SPEC_OBJ := $(OBJDIR)/spec/console_ops_test.o
CONSOLE_OPS_SPEC_ASAN := $(if $(SAN),-DVMHEAP_ASAN_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"')
$(eval $(call spec_suite,console_ops_test,$(CONSOLE_OPS_SPEC_OBJ),\
  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS)))
$(CONSOLE_OPS_SPEC_OBJ): private ALL_CFLAGS += $(CONSOLE_OPS_SPEC_ASAN)
