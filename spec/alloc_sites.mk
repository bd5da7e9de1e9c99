# Check suite of allocation sites and imemo kinds on the real `ruby`
# (spec/alloc_sites_test.c): Ruby programs drive their own agent with
# vmheap-console and are checked with vmheap-histo, -diff and -path
# against MRI's own counts.  main() and the harness come from spec/lib.
# Under SAN=1 ruby gets the ASan runtime by LD_PRELOAD, as in spec/ruby.mk.
ALLOC_SITES_SPEC_BIN := $(SPECDIR)/alloc_sites_test
ALLOC_SITES_SPEC_OBJ := $(OBJDIR)/spec/alloc_sites_test.o
$(eval $(call spec_suite,alloc_sites_test,$(ALLOC_SITES_SPEC_OBJ),\
  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS)))
ALLOC_SITES_SPEC_ASAN := $(if $(SAN),-DVMHEAP_ASAN_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"')
$(ALLOC_SITES_SPEC_OBJ): private ALL_CFLAGS += $(ALLOC_SITES_SPEC_ASAN)
