# make bench-record: recording malloc traces (vmheap-run --record, issue
# 31) against no recording and against heaptrack, on the C workload
# (bench/native_bench.c) and Ruby (bench/native_stdlib.rb and a strings
# and hashes loop): trace bytes per event and CPU ratios, medians of
# interleaved runs (bench/record_bench.sh).
TRACE_STAT := $(BUILD)/bench/trace_stat
EXTRA_ALL  += $(TRACE_STAT)

$(TRACE_STAT): bench/trace_stat.c $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIBVMHEAP_A)

BENCH_TARGETS += bench-record
.PHONY: bench-record
bench-record: $(TRACE_STAT) $(NATIVE_BENCH) $(NATIVE_SO) $(RUN_BIN)
	sh bench/record_bench.sh $(BUILD) $(BENCH_RECORD_ARGS)
