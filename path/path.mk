# vmheap-path: shortest paths from the roots to an object or to every
# instance of a class, merged by shape.
PATH_SRCS := $(wildcard path/*.c)
PATH_OBJS := $(PATH_SRCS:%.c=$(OBJDIR)/%.o)
PATH_BIN  := $(BINDIR)/vmheap-path
BINS      += $(PATH_BIN)
MAN_PAGES += man/vmheap-path.1

$(PATH_BIN): $(PATH_OBJS) $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_ANALYSIS_A) \
             $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(PATH_OBJS) $(LIBVMHEAP_REPORT_A) \
	  $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS)
