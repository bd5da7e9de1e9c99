# bench/format.mk - size and speed of the dump format (bench/format_bench.c).
#
#   make bench-format [FORMAT_BENCH_OBJECTS=3000000] [FORMAT_BENCH_RUNS=5]
#
# Prints bytes per object, writer objects/s, and the reader's full decode
# time as a ratio to `cat FILE >/dev/null` (with the typed decoder and with
# msgpack-c's generic unpacker).  Figures are kept in bench/RESULTS.md.
FORMAT_BENCH := $(BUILD)/bench/format_bench
FORMAT_BENCH_OBJECTS ?= 3000000
FORMAT_BENCH_RUNS ?= 5
EXTRA_ALL += $(FORMAT_BENCH)
BENCH_TARGETS += bench-format

$(FORMAT_BENCH): $(OBJDIR)/bench/format_bench.o $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIBVMHEAP_A) $(MSGPACK_LIBS)

.PHONY: bench-format
bench-format: $(FORMAT_BENCH)
	$(FORMAT_BENCH) $(FORMAT_BENCH_OBJECTS) $(FORMAT_BENCH_RUNS)
