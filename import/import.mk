# libvmheap-import (import/): converters of other VMs' dumps (HPROF, MRI
# dump_all JSON) into vmheap dumps, on libvmheap's writer alone; a static
# library of vmheap-import (import/tool/), never installed.  The JSON
# converter has its own parser of dump_all lines (import/ruby_line.c).
IMPORT_SRCS := $(wildcard import/*.c)
IMPORT_OBJS := $(IMPORT_SRCS:%.c=$(OBJDIR)/%.o)
LIBVMHEAP_IMPORT_A := $(LIBDIR)/libvmheap-import.a

$(LIBVMHEAP_IMPORT_A): $(IMPORT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

IMPORT_TOOL_SRCS := $(wildcard import/tool/*.c)
IMPORT_TOOL_OBJS := $(IMPORT_TOOL_SRCS:%.c=$(OBJDIR)/%.o)
IMPORT_BIN := $(BINDIR)/vmheap-import
BINS += $(IMPORT_BIN)
MAN_PAGES += man/vmheap-import.1

$(IMPORT_BIN): $(IMPORT_TOOL_OBJS) $(LIBVMHEAP_IMPORT_A) \
               $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_ANALYSIS_A) \
               $(LIBVMHEAP_FILES_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(IMPORT_TOOL_OBJS) $(LIBVMHEAP_IMPORT_A) \
	  $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_FILES_A) \
	  $(LIBVMHEAP_A) $(MSGPACK_LIBS)
