# spec/lib: the one test harness of the Check suites (spec/lib/vmheap_spec.h),
# a static archive: a suite links $(SPECDIR)/libvmheap_spec.a (written out,
# since fragments are read in any order) and gets main() from it.  The
# sample VM part needs libvmheap_agent; the others only Check.
SPEC_LIB_SRCS := $(wildcard spec/lib/*.c)
SPEC_LIB_OBJS := $(SPEC_LIB_SRCS:%.c=$(OBJDIR)/%.o)
$(SPEC_LIB_OBJS): private ALL_CFLAGS += $(CHECK_CFLAGS)
$(SPECDIR)/libvmheap_spec.a: $(SPEC_LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
# the Ruby VM of ruby_vm.c preloads the ASan runtime under SAN=1 (as in
# spec/ruby.mk)
$(OBJDIR)/spec/lib/ruby_vm.o: private ALL_CFLAGS += $(if $(SAN),-DVMHEAP_ASAN_RUNTIME='"$(shell $(CC) -print-file-name=libasan.so)"')

# The rule of a Check suite, generated: a fragment of spec/ declares its
# suite in one line,
#
#	$(eval $(call spec_suite,NAME,OBJS,LINK,NEEDS))
#
#   NAME   the binary $(SPECDIR)/NAME; it joins CHECK_SUITES (make check)
#   OBJS   the suite's own objects, compiled with Check's flags
#   LINK   what it links after spec/lib's archive, in order: our archives
#          and other objects (prerequisites too) and -l flags; Check's
#          libraries come last
#   NEEDS  the programs its tests run: built before it (order-only)
#
# A suite that needs more (other flags for an object, a program built
# only where ruby is) adds rules of its own next to the line.  This
# fragment is read before the others (the Makefile includes it first).
define spec_suite
CHECK_SUITES += $$(SPECDIR)/$(1)
EXTRA_ALL    += $$(SPECDIR)/$(1)
$(2): private ALL_CFLAGS += $$(CHECK_CFLAGS)
$$(SPECDIR)/$(1): $(2) $$(SPECDIR)/libvmheap_spec.a $(filter %.a %.o,$(3)) $(if $(strip $(4)),| $(4))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $(2) $$(SPECDIR)/libvmheap_spec.a $(3) $$(CHECK_LIBS)
endef
