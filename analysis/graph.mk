# libvmheap-graph: the heap graph of a dump, dominators and retained sizes,
# shortest paths from the roots (analysis/vmheap_graph.h).  A static archive
# for now; it joins libvmheap-analysis when analysis/ is merged.
GRAPH_SRCS := $(wildcard analysis/graph*.c)
GRAPH_OBJS := $(GRAPH_SRCS:%.c=$(OBJDIR)/%.o)
LIBVMHEAP_GRAPH_A := $(LIBDIR)/libvmheap-graph.a
LIBS_OUT += $(LIBVMHEAP_GRAPH_A)

$(GRAPH_OBJS): ALL_CFLAGS += -Ianalysis -fvisibility=hidden

$(LIBVMHEAP_GRAPH_A): $(GRAPH_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
