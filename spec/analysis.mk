# Check suite of libvmheap-analysis (census, diff, identity, tables).
# main() is spec/lib's.
ANALYSIS_TEST := $(SPECDIR)/analysis_test
CHECK_SUITES += $(ANALYSIS_TEST)

$(OBJDIR)/spec/analysis_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS)

$(ANALYSIS_TEST): $(OBJDIR)/spec/analysis_test.o $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_ANALYSIS_A) \
                  $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SPECDIR)/libvmheap_spec.a $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS) $(CHECK_LIBS)
