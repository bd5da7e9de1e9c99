# Synthetic dumps for benchmarking vmheap-histo and vmheap-diff.
GEN_DUMP := $(BUILD)/bench/gen_dump
EXTRA_ALL += $(GEN_DUMP)

$(GEN_DUMP): $(OBJDIR)/bench/gen_dump.o $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBVMHEAP_A) $(MSGPACK_LIBS)

# make bench-tools: histo against cat, diff, histo's memory at two sizes.
BENCH_TARGETS += bench-tools
.PHONY: bench-tools
bench-tools: $(GEN_DUMP) $(BINDIR)/vmheap-histo $(BINDIR)/vmheap-diff
	sh bench/tools_bench.sh $(BUILD) $(BENCH_TOOLS_OBJECTS)

# make bench-chains: vmheap-path, vmheap-diff --paths and
# vmheap-dominators on linked lists of 10k, 100k and 1M nodes (gen_chain):
# time and peak RSS (paths at any length, issue 24).
GEN_CHAIN := $(BUILD)/bench/gen_chain
EXTRA_ALL += $(GEN_CHAIN)
BENCH_CHAINS_SIZES ?= 10000 100000 1000000

$(GEN_CHAIN): $(OBJDIR)/bench/gen_chain.o $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBVMHEAP_A) $(MSGPACK_LIBS)

BENCH_TARGETS += bench-chains
.PHONY: bench-chains
bench-chains: $(GEN_CHAIN) $(BINDIR)/vmheap-path $(BINDIR)/vmheap-diff \
              $(BINDIR)/vmheap-dominators
	sh bench/chains_bench.sh $(BUILD) $(BENCH_CHAINS_SIZES)
