# libvmheap-report: what the tools share to show things to people (tables,
# JSON/CSV/text escaping, units, progress, shared options).  A static
# library of the tools, never installed.
REPORT_SRCS := $(wildcard report/*.c)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(OBJDIR)/%.o)
LIBVMHEAP_REPORT_A := $(LIBDIR)/libvmheap-report.a

$(LIBVMHEAP_REPORT_A): $(REPORT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
# What a tool that symbolizes native frames (report/symbols.c) links.
REPORT_NATIVE_LIBS := -ldw -lelf
