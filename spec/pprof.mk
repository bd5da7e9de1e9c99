# --format pprof (report/pprof.c) read by Debian's `go tool pprof`: the
# encoder alone, and real dumps of the leaker under vmheap-run
# (spec/pprof_test.c); and the hold-out check of issue 27, a Ruby service
# with three leaks read by vmheap-report in Chromium and by pprof
# (spec/report_holdout_test.c).  Their helpers: spec/pprof_harness.c, and
# the JSON and CSV parsers of tools_harness.c.
PPROF_TEST := $(SPECDIR)/pprof_test
PPROF_OWN_OBJS := $(OBJDIR)/spec/pprof_test.o \
                  $(OBJDIR)/spec/report_holdout_test.o \
                  $(OBJDIR)/spec/pprof_harness.o
PPROF_TEST_OBJS := $(PPROF_OWN_OBJS) $(OBJDIR)/spec/tools_harness.o
CHECK_SUITES += $(PPROF_TEST)
EXTRA_ALL    += $(PPROF_TEST)

# Under SAN=1 ruby gets the ASan runtime by LD_PRELOAD (spec/alloc_sites.mk).
# (tools_harness.o has its flags from the suites it was written for.)
$(PPROF_OWN_OBJS): private ALL_CFLAGS += $(CHECK_CFLAGS) \
  $(if $(SAN),-DVMHEAP_ASAN_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"')

$(PPROF_TEST): $(PPROF_TEST_OBJS) $(SPECDIR)/libvmheap_spec.a \
               $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) \
               | $(NATIVE_SO) $(NATIVE_LEAKER) $(RUN_BIN) $(CONSOLE_BIN) \
                 $(HISTO_BIN) $(DIFF_BIN) $(RUBY_HOST_SO) $(HTML_BIN)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(PPROF_TEST_OBJS) $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_REPORT_A) $(AGENT_LINK) $(MSGPACK_LIBS) \
	  $(REPORT_NATIVE_LIBS) $(CHECK_LIBS) -ldl
ifneq ($(RUBY_CFLAGS),)
$(PPROF_TEST): | $(NATIVE_LEAKY)
endif
