# Check suite of libvmheap (the dump format).  main() is spec/lib's.
FORMAT_TEST := $(SPECDIR)/format_test
$(eval $(call spec_suite,format_test,$(OBJDIR)/spec/format_test.o,\
  $(LIBVMHEAP_A) $(MSGPACK_LIBS)))
