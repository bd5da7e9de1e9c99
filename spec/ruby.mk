# Check suite of the Ruby host (spec/ruby_test.c): real `ruby` processes
# load build/ruby/vmheap_agent.so; the suite talks to them with the client
# API and reads their dumps with libvmheap and vmheap-diff.  It also runs
# examples/demo.sh.  main() and the harness come from spec/lib.
#
# Under SAN=1 the extension carries ASan, which must be the first library
# in a process: the suite starts ruby with LD_PRELOAD of the compiler's
# libasan.so (and ASAN_OPTIONS=detect_leaks=0: ruby itself frees nothing
# at exit).
RUBY_SPEC_BIN := $(SPECDIR)/ruby_test
RUBY_SPEC_OBJ := $(OBJDIR)/spec/ruby_test.o
RUBY_SPEC_ASAN := $(if $(SAN),-DVMHEAP_ASAN_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"')
$(eval $(call spec_suite,ruby_test,$(RUBY_SPEC_OBJ),\
  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS)))
$(RUBY_SPEC_OBJ): private ALL_CFLAGS += $(RUBY_SPEC_ASAN)
