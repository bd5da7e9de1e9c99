# Check suite of `vmheap-console --attach` (spec/attach_test.c): real `ruby`
# processes started without the agent, the real console loading it with
# ptrace.  Under SAN=1 ruby gets the ASan runtime preloaded (the injected
# vmheap_attach.so and vmheap_agent.so carry ASan), as in spec/ruby.mk.
ATTACH_SPEC_BIN := $(SPECDIR)/attach_test
ATTACH_SPEC_OBJ := $(OBJDIR)/spec/attach_test.o
ifneq ($(LIBVMHEAP_AGENT_A),)
CHECK_SUITES += $(ATTACH_SPEC_BIN)
EXTRA_ALL += $(ATTACH_SPEC_BIN)
endif
$(ATTACH_SPEC_OBJ): private ALL_CFLAGS += $(CHECK_CFLAGS) \
  $(if $(SAN),-DVMHEAP_ASAN_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"')
$(ATTACH_SPEC_BIN): $(ATTACH_SPEC_OBJ) $(SPECDIR)/libvmheap_spec.a \
                    $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(ATTACH_SPEC_OBJ) $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS) \
	  $(CHECK_LIBS)
# native tracking after attach: the C extension spec/native/leaky/ (built
# by spec/native.mk) and the tracker built for dlopen
ifneq ($(LIBVMHEAP_AGENT_A),)
$(ATTACH_SPEC_BIN): | $(SPECDIR)/leaky/leaky.so
endif
