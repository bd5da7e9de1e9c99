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
