# libvmheap-report: what the tools share to show things to people (tables,
# JSON/CSV/text escaping, units, progress, shared options).  A static
# library of the tools, never installed.
REPORT_SRCS := $(wildcard report/*.c)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(OBJDIR)/%.o)

# pprof's messages (report/profile.proto, a subset of the public
# profile.proto) in C, made by protobuf-c's compiler at build time; the
# encoder (report/pprof.c) packs them, zlib gzips the result.
PPROF_GEN   := $(BUILD)/gen/report
PPROF_PB_C  := $(PPROF_GEN)/profile.pb-c.c
PPROF_PB_H  := $(PPROF_GEN)/profile.pb-c.h
PPROF_PB_O  := $(OBJDIR)/gen/report/profile.pb-c.o
REPORT_OBJS += $(PPROF_PB_O)

$(PPROF_PB_C): report/profile.proto
	@mkdir -p $(PPROF_GEN)
	protoc-c --proto_path=report --c_out=$(PPROF_GEN) report/profile.proto
$(PPROF_PB_H): $(PPROF_PB_C)
$(PPROF_PB_O): $(PPROF_PB_C) $(PPROF_PB_H) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(PPROF_GEN) -MMD -MP -c $< -o $@
$(OBJDIR)/report/pprof.o: $(PPROF_PB_H)
$(OBJDIR)/report/pprof.o: private ALL_CFLAGS += -I$(PPROF_GEN)
LIBVMHEAP_REPORT_A := $(LIBDIR)/libvmheap-report.a

$(LIBVMHEAP_REPORT_A): $(REPORT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
# What a tool that symbolizes native frames (report/symbols.c) links.
# and what one that writes pprof (report/pprof.c) links.
REPORT_NATIVE_LIBS := -ldw -lelf -lprotobuf-c -lz
