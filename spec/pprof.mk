# --format pprof (report/pprof.c) read by Debian's `go tool pprof`: the
# encoder alone, and real dumps of the leaker under vmheap-run
# (spec/pprof_test.c).
PPROF_TEST := $(SPECDIR)/pprof_test
CHECK_SUITES += $(PPROF_TEST)
EXTRA_ALL    += $(PPROF_TEST)

# Under SAN=1 ruby gets the ASan runtime by LD_PRELOAD (spec/alloc_sites.mk).
$(OBJDIR)/spec/pprof_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS) \
  $(if $(SAN),-DVMHEAP_ASAN_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"')

$(PPROF_TEST): $(OBJDIR)/spec/pprof_test.o $(SPECDIR)/libvmheap_spec.a \
               $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) \
               | $(NATIVE_SO) $(NATIVE_LEAKER) $(RUN_BIN) $(CONSOLE_BIN) \
                 $(HISTO_BIN) $(DIFF_BIN) $(RUBY_HOST_SO) $(HTML_BIN)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_REPORT_A) $(AGENT_LINK) $(MSGPACK_LIBS) \
	  $(REPORT_NATIVE_LIBS) $(CHECK_LIBS) -ldl
ifneq ($(RUBY_CFLAGS),)
$(PPROF_TEST): | $(NATIVE_LEAKY)
endif
