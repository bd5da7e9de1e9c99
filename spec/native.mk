# The malloc tracker's suite (spec/native_test.c): real processes under
# LD_PRELOAD; spec/native_rates_test.c: the native timeline's rates and
# the hint that growth is outside the heap (tools_harness.c parses JSON).  The victim is built without the sanitizers (the tracker is
# preloaded into it) and with -rdynamic so that dladdr names its functions.
NATIVE_TEST   := $(SPECDIR)/native_test
NATIVE_VICTIM := $(SPECDIR)/native_victim
EXTRA_ALL     += $(NATIVE_VICTIM)

NATIVE_TEST_OBJS := $(OBJDIR)/spec/native_test.o $(OBJDIR)/spec/native_format_test.o \
                    $(OBJDIR)/spec/native_leaks_test.o \
                    $(OBJDIR)/spec/native_rates_test.o $(OBJDIR)/spec/tools_harness.o
$(eval $(call spec_suite,native_test,$(NATIVE_TEST_OBJS),$(AGENT_LINK),\
  $(NATIVE_SO) $(NATIVE_VICTIM) $(RUN_BIN) $(CONSOLE_BIN) $(RUBY_HOST_SO)))
$(NATIVE_VICTIM): spec/native/victim.c native/vmheap_native.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -rdynamic -pthread $(LDFLAGS) -o $@ $< -ldl

# The tracker dlopen'ed and routed to through the GOT while threads
# allocate (spec/native/routed.c): no preload, lazy binding (the default
# link), -rdynamic so that dladdr names made_after.
NATIVE_ROUTED := $(SPECDIR)/native_routed
EXTRA_ALL     += $(NATIVE_ROUTED)
$(NATIVE_ROUTED): spec/native/routed.c native/vmheap_native.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -rdynamic -pthread $(LDFLAGS) -o $@ $< -ldl
$(NATIVE_TEST): | $(NATIVE_ROUTED) $(LIBDIR)/libvmheap-malloc-attach.so

# glibc's promises, printed the same without and under the tracker, and
# a library opened with RTLD_DEEPBIND (its free and realloc are glibc's).
NATIVE_SEMANTICS := $(SPECDIR)/native_semantics
NATIVE_DEEPLIB   := $(SPECDIR)/native_deeplib.so
EXTRA_ALL        += $(NATIVE_SEMANTICS) $(NATIVE_DEEPLIB)
$(NATIVE_SEMANTICS): spec/native/semantics.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) $(LDFLAGS) -o $@ $< -ldl
$(NATIVE_DEEPLIB): spec/native/deeplib.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $<
$(NATIVE_TEST): | $(NATIVE_SEMANTICS) $(NATIVE_DEEPLIB)

# The leaker: a C "VM" with the agent (spec/native/leaker.c), tracked
# under vmheap-run; its dumps' native sections are what the tests diff.
NATIVE_LEAKER := $(SPECDIR)/native_leaker
EXTRA_ALL     += $(NATIVE_LEAKER)
$(NATIVE_TEST): | $(NATIVE_LEAKER) $(HISTO_BIN) $(DIFF_BIN)
$(NATIVE_LEAKER): $(OBJDIR)/spec/native/leaker.o $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(AGENT_LINK)

# The scanned program: blocks of each leak class (spec/native/scanned.c),
# dumped by spec/native_leaks_test.c and run under valgrind there.
NATIVE_SCANNED := $(SPECDIR)/native_scanned
EXTRA_ALL      += $(NATIVE_SCANNED)
$(NATIVE_TEST): | $(NATIVE_SCANNED)
$(NATIVE_SCANNED): $(OBJDIR)/spec/native/scanned.o $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(AGENT_LINK) -ldl

# A C extension that leaks, loaded into real ruby (spec/native/leaky/);
# built without the sanitizers like everything the tracker is preloaded
# into.  Only where ruby's headers are (RUBY_CFLAGS).
NATIVE_LEAKY := $(SPECDIR)/leaky/leaky.so
ifneq ($(RUBY_CFLAGS),)
EXTRA_ALL += $(NATIVE_LEAKY)
$(NATIVE_TEST): | $(NATIVE_LEAKY)
$(NATIVE_LEAKY): spec/native/leaky/leaky.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Wextra,$(NATIVE_CFLAGS)) $(RUBY_CFLAGS) -shared \
	  -o $@ $< $(RUBY_LIBS)
endif

# The hold-out shape of the leak scan (spec/native/holdout/): blocks of
# 24 to 72 bytes written by snprintf and forgotten, a list kept.
NATIVE_HOLDOUT := $(SPECDIR)/holdout/holdout.so
ifneq ($(RUBY_CFLAGS),)
EXTRA_ALL += $(NATIVE_HOLDOUT)
$(NATIVE_TEST): | $(NATIVE_HOLDOUT)
$(NATIVE_HOLDOUT): spec/native/holdout/holdout.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Wextra,$(NATIVE_CFLAGS)) $(RUBY_CFLAGS) -shared \
	  -o $@ $< $(RUBY_LIBS)
endif

# The live table (native/live.c) on its own, against a brute-force record
# (spec/native_live_test.c); compiled into the test, with the sanitizers
# in build/asan.
NATIVE_LIVE_TEST := $(SPECDIR)/native_live_test
CHECK_SUITES     += $(NATIVE_LIVE_TEST)
EXTRA_ALL        += $(NATIVE_LIVE_TEST)
$(NATIVE_LIVE_TEST): spec/native_live_test.c native/live.c native/native-internal.h \
                     native/vmheap_native.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(ALL_LDFLAGS) -o $@ \
	  spec/native_live_test.c native/live.c $(CHECK_LIBS)
