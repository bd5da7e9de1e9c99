# Check suite of vmheap-import (spec/import_test.c): the real tool on the
# real VMs' dumps (Debian's ruby; the JVM for HPROF).  main() and the
# harness come from spec/lib.  Under SAN=1 ruby gets the ASan runtime
# through LD_PRELOAD, as in spec/ruby.mk.
IMPORT_SPEC_BIN := $(SPECDIR)/import_test
IMPORT_SPEC_OBJ := $(OBJDIR)/spec/import_test.o
ifneq ($(LIBVMHEAP_AGENT_A),)
CHECK_SUITES += $(IMPORT_SPEC_BIN)
EXTRA_ALL += $(IMPORT_SPEC_BIN)
endif
$(IMPORT_SPEC_OBJ): ALL_CFLAGS += $(CHECK_CFLAGS) $(RUBY_SPEC_ASAN)
$(IMPORT_SPEC_BIN): $(IMPORT_SPEC_OBJ) $(SPECDIR)/libvmheap_spec.a \
                    $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) \
                    | $(IMPORT_BIN) $(HISTO_BIN)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(IMPORT_SPEC_OBJ) $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS) \
	  $(CHECK_LIBS)
