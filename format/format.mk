# libvmheap: the dump format's writer and reader.
#
# Shared library: real file libvmheap.so.$(ABI_VERSION), soname
# libvmheap.so.$(ABI_MAJOR) (a symlink to it), and the libvmheap.so symlink
# that -lvmheap finds.  It exports only the VMHEAP_EXPORT functions of
# format/vmheap.h (ALL_CFLAGS has -fvisibility=hidden).
FORMAT_SRCS  := $(wildcard format/*.c)
FORMAT_OBJS  := $(FORMAT_SRCS:%.c=$(OBJDIR)/%.o)
LIBVMHEAP_A  := $(LIBDIR)/libvmheap.a
LIBVMHEAP_SO := $(LIBDIR)/libvmheap.so
LIBVMHEAP_SO_REAL := $(LIBVMHEAP_SO).$(ABI_VERSION)
LIBVMHEAP_SONAME  := libvmheap.so.$(ABI_MAJOR)
LIBS_OUT     += $(LIBVMHEAP_A) $(LIBVMHEAP_SO_REAL) $(LIBDIR)/$(LIBVMHEAP_SONAME) \
                $(LIBVMHEAP_SO)
SHARED_LIBS  += $(LIBVMHEAP_SO)
PUBLIC_HEADERS += format/vmheap.h format/vmheap_trace.h

$(LIBVMHEAP_A): $(FORMAT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBVMHEAP_SO_REAL): $(FORMAT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(LIBVMHEAP_SONAME) -Wl,--no-undefined \
	  $(ALL_LDFLAGS) -o $@ $^ $(MSGPACK_LIBS)

$(LIBDIR)/$(LIBVMHEAP_SONAME) $(LIBVMHEAP_SO): $(LIBVMHEAP_SO_REAL)
	ln -sf $(notdir $<) $@
