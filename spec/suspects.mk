# Check suite of libvmheap-analysis's leak suspects (spec/suspects_test.c):
# vmheap_new_objects_mark() and vmheap_suspects_rank() on dumps of the real
# writer, against figures known by construction and brute force.  main()
# is spec/lib's; the dump writer is tools_harness.c's.
SUSPECTS_TEST := $(SPECDIR)/suspects_test
SUSPECTS_TEST_OBJS := $(OBJDIR)/spec/suspects_test.o $(OBJDIR)/spec/tools_harness.o
CHECK_SUITES += $(SUSPECTS_TEST)

$(SUSPECTS_TEST_OBJS): private ALL_CFLAGS += $(CHECK_CFLAGS)

$(SUSPECTS_TEST): $(SUSPECTS_TEST_OBJS) $(SPECDIR)/libvmheap_spec.a \
                  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(SUSPECTS_TEST_OBJS) $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(CHECK_LIBS)
