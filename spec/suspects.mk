# Check suite of libvmheap-analysis's leak suspects (spec/suspects_test.c):
# vmheap_new_objects_mark() and vmheap_suspects_rank() on dumps of the real
# writer, against figures known by construction and brute force.  main()
# is spec/lib's; the dump writer is tools_harness.c's.
SUSPECTS_TEST := $(SPECDIR)/suspects_test
$(eval $(call spec_suite,suspects_test,\
  $(OBJDIR)/spec/suspects_test.o $(OBJDIR)/spec/tools_harness.o,\
  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS)))
