# --format pprof (report/pprof.c) read by Debian's `go tool pprof`: the
# encoder alone, and real dumps of the leaker under vmheap-run
# (spec/pprof_test.c).
PPROF_TEST := $(SPECDIR)/pprof_test
$(eval $(call spec_suite,pprof_test,$(OBJDIR)/spec/pprof_test.o,\
  $(LIBVMHEAP_REPORT_A) $(AGENT_LINK) $(MSGPACK_LIBS) $(REPORT_NATIVE_LIBS),\
  $(NATIVE_SO) $(NATIVE_LEAKER) $(RUN_BIN) $(CONSOLE_BIN) $(HISTO_BIN) \
  $(DIFF_BIN) $(RUBY_HOST_SO) $(HTML_BIN)))
$(PPROF_TEST): private CHECK_LIBS += -ldl

# Under SAN=1 ruby gets the ASan runtime by LD_PRELOAD (spec/alloc_sites.mk).
$(OBJDIR)/spec/pprof_test.o: private ALL_CFLAGS += \
  $(if $(SAN),-DVMHEAP_ASAN_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"')
ifneq ($(RUBY_CFLAGS),)
$(PPROF_TEST): | $(NATIVE_LEAKY)
endif
