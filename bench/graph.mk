# bench/graph.mk - the heap graph's dominator tree against a peer
# (networkx.immediate_dominators from Debian's python3-networkx) on the
# same random graph, and its peak RSS per object on a gen_dump heap.
#
#   make bench-graph [GRAPH_BENCH_OBJECTS=1000000] [GRAPH_BENCH_BIG=10000000]
#
# Prints both tools' times and peak RSS (GNU time), and fails if any
# immediate dominator differs.  GRAPH_BENCH_BIG=0 skips the big heap.
GRAPH_BENCH := $(BUILD)/bench/graph_bench
GRAPH_BENCH_OBJECTS ?= 1000000
GRAPH_BENCH_BIG ?= 10000000
GRAPH_BENCH_DIR := $(BUILD)/bench/graph
EXTRA_ALL += $(GRAPH_BENCH)
BENCH_TARGETS += bench-graph

$(GRAPH_BENCH): $(OBJDIR)/bench/graph_bench.o $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS)

.PHONY: bench-graph
# (bench/tools.mk, included after this file, defines GEN_DUMP)
bench-graph: $(GRAPH_BENCH) $(BUILD)/bench/gen_dump
	@/usr/bin/python3 -c 'import networkx' 2>/dev/null || \
	  { echo "bench-graph: needs Debian's python3-networkx"; exit 1; }
	@mkdir -p $(GRAPH_BENCH_DIR)
	@$(GRAPH_BENCH) gen -n $(GRAPH_BENCH_OBJECTS) \
	  $(GRAPH_BENCH_DIR)/random.vmheap $(GRAPH_BENCH_DIR)/random.edges
	@echo "== vmheap graph, $(GRAPH_BENCH_OBJECTS) random objects"
	@/usr/bin/time -f "vmheap: %e s, peak RSS %M KB" $(GRAPH_BENCH) dom \
	  $(GRAPH_BENCH_DIR)/random.vmheap $(GRAPH_BENCH_DIR)/random.idoms
	@echo "== networkx on the same graph"
	@/usr/bin/time -f "networkx: %e s, peak RSS %M KB" /usr/bin/python3 \
	  bench/graph_peer.py $(GRAPH_BENCH_DIR)/random.edges \
	  $(GRAPH_BENCH_DIR)/random.idoms
	@if [ "$(GRAPH_BENCH_BIG)" != 0 ]; then \
	  echo "== vmheap graph, gen_dump heap of $(GRAPH_BENCH_BIG) objects"; \
	  $(GEN_DUMP) -n $(GRAPH_BENCH_BIG) $(GRAPH_BENCH_DIR)/big.vmheap && \
	  /usr/bin/time -f "vmheap: %e s, peak RSS %M KB" $(GRAPH_BENCH) dom \
	    $(GRAPH_BENCH_DIR)/big.vmheap; \
	  rm -f $(GRAPH_BENCH_DIR)/big.vmheap; fi
	@rm -f $(GRAPH_BENCH_DIR)/random.*
