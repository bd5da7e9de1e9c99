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
