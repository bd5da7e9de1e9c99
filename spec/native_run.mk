# vmheap-run on programs that embed no agent (spec/native_run_test.c):
# --output at exit against valgrind, forks, the native-only agent with the
# console, C++ and (when rustc is on PATH) Rust.  The victims are built
# without the sanitizers (the tracker is preloaded into them) and with
# -rdynamic so that dladdr names their functions; the naming rule
# (native/output_name.c) is compiled into the test.
NATIVE_RUN_TEST  := $(SPECDIR)/native_run_test
NATIVE_LOSE_KEEP := $(SPECDIR)/native_lose_keep
NATIVE_LOSE_KEEP_CXX := $(SPECDIR)/native_lose_keep_cxx
CHECK_SUITES     += $(NATIVE_RUN_TEST)
EXTRA_ALL        += $(NATIVE_RUN_TEST) $(NATIVE_LOSE_KEEP) $(NATIVE_LOSE_KEEP_CXX)
CXX ?= g++

NATIVE_RUN_TEST_OBJS := $(OBJDIR)/spec/native_run_test.o $(OBJDIR)/spec/tools_harness.o \
                        $(OBJDIR)/spec/native_run_output_name.o
$(OBJDIR)/spec/native_run_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS)
$(OBJDIR)/spec/native_run_output_name.o: native/output_name.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@
$(NATIVE_LOSE_KEEP): spec/native/lose_keep.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -flto,$(NATIVE_CFLAGS)) -rdynamic -pthread $(LDFLAGS) -o $@ $<
$(NATIVE_LOSE_KEEP_CXX): spec/native/lose_keep.cc $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g -Wall -Wextra -Werror -rdynamic $(LDFLAGS) -o $@ $<

$(NATIVE_RUN_TEST): $(NATIVE_RUN_TEST_OBJS) $(SPECDIR)/libvmheap_spec.a \
                    $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) | $(NATIVE_SO) $(NATIVE_AGENT_SO) \
                    $(NATIVE_LOSE_KEEP) $(NATIVE_LOSE_KEEP_CXX) $(RUN_BIN) $(CONSOLE_BIN) \
                    $(HISTO_BIN) $(RUBY_HOST_SO) $(NATIVE_SCANNED)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(NATIVE_RUN_TEST_OBJS) $(SPECDIR)/libvmheap_spec.a \
	  $(AGENT_LINK) $(CHECK_LIBS)
