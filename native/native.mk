# libvmheap-malloc.so: the malloc tracker, loaded with LD_PRELOAD
# (vmheap-run does it).  Not linked by anything of ours: the agent finds
# its API (native/vmheap_native.h) at run time with dlsym.
#
# It exports the allocator's entry points besides the VMHEAP_EXPORT
# functions of its header, so it stays out of SHARED_LIBS (spec/abi.mk's
# rule is for the libraries programs link); spec/native_test.c checks its
# exports instead.  It is built without the sanitizers even in
# build/asan: an instrumented library cannot be preloaded into the
# uninstrumented programs it tracks (ruby, the test's victims).
NATIVE_SRCS := $(wildcard native/*.c)
NATIVE_OBJS := $(NATIVE_SRCS:%.c=$(OBJDIR)/%.o)
# The trace recorder's checksums: libvmheap's CRC32C, compiled in with its
# symbol hidden (the tracker links no library of ours).
NATIVE_OBJS += $(OBJDIR)/native/format_crc32c.o
NATIVE_SO   := $(LIBDIR)/libvmheap-malloc.so
LIBS_OUT    += $(NATIVE_SO)
UNWIND_LIBS := -lunwind

# Its own compile rule rather than target-specific variables, which would
# reach $(FLAGS_STAMP) (a prerequisite) and change the stamp's text.
# Link-time optimisation across the tracker's files: 1.44x against 1.51x
# CPU for the tracked C workload (bench/RESULTS.md, "Native tracker, third
# pass").
NATIVE_CFLAGS = $(filter-out $(SANITIZE),$(ALL_CFLAGS)) \
                -fno-omit-frame-pointer -ftls-model=initial-exec -flto
$(OBJDIR)/native/%.o: native/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -MMD -MP -c $< -o $@

$(OBJDIR)/native/format_crc32c.o: format/crc32c.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -DVMHEAP_EXPORT= -MMD -MP -c $< -o $@

$(NATIVE_SO): $(NATIVE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libvmheap-malloc.so -Wl,--no-undefined \
	  -pthread $(NATIVE_CFLAGS) $(LDFLAGS) \
	  -o $@ $^ $(UNWIND_LIBS) -ldl

# libvmheap-malloc-attach.so: the same sources for a process that runs
# without the preload (the agent dlopen's it when `set config.native.track
# true` comes, and native/got.c routes the allocator's calls to it).  Its
# thread-local variables are global-dynamic with TLS descriptors: the
# preload's 80 KiB of initial-exec TLS do not fit the loader's spare
# static TLS block (native-internal.h, NATIVE_TLS).
NATIVE_ATTACH_OBJS := $(NATIVE_SRCS:native/%.c=$(OBJDIR)/native-attach/%.o) \
                      $(OBJDIR)/native/format_crc32c.o
NATIVE_ATTACH_SO   := $(LIBDIR)/libvmheap-malloc-attach.so
LIBS_OUT           += $(NATIVE_ATTACH_SO)
NATIVE_ATTACH_CFLAGS = $(filter-out -ftls-model=initial-exec,$(NATIVE_CFLAGS)) \
                -ftls-model=global-dynamic -mtls-dialect=gnu2 \
                -DNATIVE_TLS_MODEL='"global-dynamic"'
$(OBJDIR)/native-attach/%.o: native/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_ATTACH_CFLAGS) -MMD -MP -c $< -o $@

$(NATIVE_ATTACH_SO): $(NATIVE_ATTACH_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libvmheap-malloc-attach.so -Wl,--no-undefined \
	  -pthread $(NATIVE_ATTACH_CFLAGS) $(LDFLAGS) \
	  -o $@ $^ $(UNWIND_LIBS) -ldl

# make install: the library goes with LIBS_OUT into PREFIX/lib (where
# vmheap-run looks for it, ../lib from its own directory); the header
# with the others.
define NATIVE_INSTALL_LINES

install -m 0644 native/vmheap_native.h $(DESTDIR)$(PREFIX)/include/vmheap/

endef
INSTALL_EXTRA += $(NATIVE_INSTALL_LINES)
