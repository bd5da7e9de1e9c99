# Check suite of libvmheap (the dump format).  main() is spec/lib's.
FORMAT_TEST := $(SPECDIR)/format_test
CHECK_SUITES += $(FORMAT_TEST)

$(OBJDIR)/spec/format_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS)

$(FORMAT_TEST): $(OBJDIR)/spec/format_test.o $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS) $(CHECK_LIBS)
