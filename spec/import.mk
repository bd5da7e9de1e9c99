# Check suite of vmheap-import (spec/import_test.c): the real tool on the
# real VMs' dumps (Debian's ruby; the JVM for HPROF).  main() and the
# harness come from spec/lib.  spec/java/ImportSpecLeak.java is compiled
# into $(SPECDIR)/java.  Under SAN=1 ruby gets the ASan runtime
# through LD_PRELOAD, as in spec/ruby.mk.
IMPORT_SPEC_BIN := $(SPECDIR)/import_test
IMPORT_SPEC_OBJ := $(OBJDIR)/spec/import_test.o $(OBJDIR)/spec/hprof_shape.o
# The JVM's program, compiled here (javac takes seconds: not per test).
IMPORT_SPEC_JAVA := $(SPECDIR)/java/ImportSpecLeak.class
$(IMPORT_SPEC_JAVA): spec/java/ImportSpecLeak.java
	@mkdir -p $(dir $@)
	javac -d $(dir $@) $<

$(eval $(call spec_suite,import_test,$(IMPORT_SPEC_OBJ),\
  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS),\
  $(IMPORT_BIN) $(HISTO_BIN) $(DIFF_BIN) $(IMPORT_SPEC_JAVA)))
$(IMPORT_SPEC_OBJ): private ALL_CFLAGS += $(RUBY_SPEC_ASAN)
