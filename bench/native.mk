# make bench-native: the malloc tracker against no tracker and heaptrack
# (bench/native_bench.sh; heaptrack comes from `make deps`).
NATIVE_BENCH := $(BUILD)/bench/native_bench
EXTRA_ALL += $(NATIVE_BENCH)

$(NATIVE_BENCH): bench/native_bench.c native/vmheap_native.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -pthread $(LDFLAGS) -o $@ $< -ldl

BENCH_TARGETS += bench-native
.PHONY: bench-native
bench-native: $(NATIVE_BENCH) $(NATIVE_SO)
	sh bench/native_bench.sh $(BUILD) $(BENCH_NATIVE_ARGS)

# make bench-native-instr: the tracker's cost, and the recorder's
# (VMHEAP_NATIVE_RECORD), on the C workload in instructions per
# malloc-free pair (cachegrind: the machine's load does not move it;
# bench/native_instr.sh).
BENCH_TARGETS += bench-native-instr
.PHONY: bench-native-instr
bench-native-instr: $(NATIVE_BENCH) $(NATIVE_SO)
	sh bench/native_instr.sh $(BUILD) $(BENCH_NATIVE_INSTR_OPS)

# make bench-leak-scan: the leak scan of a 1 GiB heap in the dump's child
# (its time, its memory, the child's) against valgrind's leak check of the
# same program (bench/leak_scan_bench.sh; BENCH_LEAK_SCAN_MIB=N for
# another size).
BENCH_TARGETS += bench-leak-scan
.PHONY: bench-leak-scan
bench-leak-scan: all $(NATIVE_SCANNED)
	sh bench/leak_scan_bench.sh $(BUILD) $(BENCH_LEAK_SCAN_MIB)
