# libvmheap-files (files/): create a file safely (O_EXCL|O_NOFOLLOW, in a
# directory held by fd) and publish it atomically.  A static library of
# the tools, never installed; its objects are linked into libvmheap-agent
# as well (hidden: the agent does not export them).
FILES_SRCS := $(wildcard files/*.c)
FILES_OBJS := $(FILES_SRCS:%.c=$(OBJDIR)/%.o)
LIBVMHEAP_FILES_A := $(LIBDIR)/libvmheap-files.a

$(LIBVMHEAP_FILES_A): $(FILES_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
