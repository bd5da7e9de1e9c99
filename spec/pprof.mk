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
$(eval $(call spec_suite,pprof_test,$(PPROF_TEST_OBJS),\
  $(LIBVMHEAP_REPORT_A) $(AGENT_LINK) $(MSGPACK_LIBS) $(REPORT_NATIVE_LIBS),\
  $(NATIVE_SO) $(NATIVE_LEAKER) $(RUN_BIN) $(CONSOLE_BIN) $(HISTO_BIN) \
  $(DIFF_BIN) $(RUBY_HOST_SO) $(HTML_BIN)))
$(PPROF_TEST): private CHECK_LIBS += -ldl

# Under SAN=1 ruby gets the ASan runtime by LD_PRELOAD (spec/alloc_sites.mk).
$(PPROF_OWN_OBJS): private ALL_CFLAGS += \
  $(if $(SAN),-DVMHEAP_ASAN_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"')
ifneq ($(RUBY_CFLAGS),)
$(PPROF_TEST): | $(NATIVE_LEAKY)
endif
