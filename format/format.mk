# libvmheap: the dump format's writer and reader.
FORMAT_SRCS  := $(wildcard format/*.c)
FORMAT_OBJS  := $(FORMAT_SRCS:%.c=$(OBJDIR)/%.o)
LIBVMHEAP_A  := $(LIBDIR)/libvmheap.a
LIBVMHEAP_SO := $(LIBDIR)/libvmheap.so
LIBS_OUT     += $(LIBVMHEAP_A) $(LIBVMHEAP_SO)
PUBLIC_HEADERS += $(wildcard format/vmheap*.h)

$(LIBVMHEAP_A): $(FORMAT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBVMHEAP_SO): $(FORMAT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libvmheap.so $(ALL_LDFLAGS) -o $@ $^ $(MSGPACK_LIBS)
