# bench/graphtools.mk - the graph tools on a gen_dump heap (bench/graph.mk
# measures the graph library against networkx):
#
#   make bench-graphtools [GRAPHTOOLS_BENCH_OBJECTS=10000000]
#
# On a heap of GRAPHTOOLS_BENCH_OBJECTS objects (about 2 references each)
# plus a 100,000-object leak held by one Leak::Holder: vmheap-dominators'
# time and peak RSS (and bytes per object), vmheap-path's time for the leak
# class and for the largest class, vmheap-histo --retained's; then the same
# on graph_bench's random heap of as many objects (80% reachable).
GRAPHTOOLS_BENCH_OBJECTS ?= 10000000
GRAPHTOOLS_BENCH_DIR := $(BUILD)/bench/graphtools
BENCH_TARGETS += bench-graphtools

.PHONY: bench-graphtools
bench-graphtools: $(BUILD)/bench/gen_dump $(GRAPH_BENCH) $(BINDIR)/vmheap-dominators \
                  $(BINDIR)/vmheap-path $(BINDIR)/vmheap-histo
	@mkdir -p $(GRAPHTOOLS_BENCH_DIR)
	@sh bench/graphtools_bench.sh $(BUILD) $(GRAPHTOOLS_BENCH_OBJECTS) \
	  $(GRAPHTOOLS_BENCH_DIR)

# Issue 32's figures: vmheap-path and vmheap-dominators on a gen_dump -R
# -N heap of GRAPH_REACHABLE_OBJECTS objects where every object is
# reachable and many are shared (the hard case for both), against cat of
# the same dump in the same run:
#
#   make bench-graph-reachable [GRAPH_REACHABLE_OBJECTS=100000000]
GRAPH_REACHABLE_OBJECTS ?= 10000000
BENCH_TARGETS += bench-graph-reachable

.PHONY: bench-graph-reachable
bench-graph-reachable: $(BUILD)/bench/gen_dump $(BINDIR)/vmheap-dominators \
                       $(BINDIR)/vmheap-path
	@mkdir -p $(GRAPHTOOLS_BENCH_DIR)
	@sh bench/graph_reachable_bench.sh $(BUILD) $(GRAPH_REACHABLE_OBJECTS) \
	  $(GRAPHTOOLS_BENCH_DIR)

# What edge names (format 1.1) cost, on the same gen_dump heap of
# NAMES_BENCH_OBJECTS objects written without and with names (gen_dump
# -N): dump time and bytes per object, vmheap-dominators' and
# vmheap-path's time and peak RSS per object.
#
#   make bench-names [NAMES_BENCH_OBJECTS=10000000]
NAMES_BENCH_OBJECTS ?= 10000000
BENCH_TARGETS += bench-names

.PHONY: bench-names
bench-names: $(BUILD)/bench/gen_dump $(BINDIR)/vmheap-dominators $(BINDIR)/vmheap-path
	@mkdir -p $(GRAPHTOOLS_BENCH_DIR)
	@sh bench/names_bench.sh $(BUILD) $(NAMES_BENCH_OBJECTS) \
	  $(GRAPHTOOLS_BENCH_DIR)
