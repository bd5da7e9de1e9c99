# Check suite of `vmheap-console --attach` (spec/attach_test.c): real `ruby`
# processes started without the agent, the real console loading it with
# ptrace.  Under SAN=1 ruby gets the ASan runtime preloaded (the injected
# vmheap_attach.so and vmheap_agent.so carry ASan), as in spec/ruby.mk.
ATTACH_SPEC_BIN := $(SPECDIR)/attach_test
ATTACH_SPEC_OBJ := $(OBJDIR)/spec/attach_test.o
$(eval $(call spec_suite,attach_test,$(ATTACH_SPEC_OBJ),\
  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS)))
$(ATTACH_SPEC_OBJ): private ALL_CFLAGS += \
  $(if $(SAN),-DVMHEAP_ASAN_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"')
# native tracking after attach: the C extension spec/native/leaky/ (built
# by spec/native.mk) and the tracker built for dlopen
$(ATTACH_SPEC_BIN): | $(SPECDIR)/leaky/leaky.so
