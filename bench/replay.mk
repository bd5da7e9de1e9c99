# make bench-replay: vmheap-replay on two recorded Ruby workloads (JSON,
# ERB, Psych, Ripper, Zlib: bench/native_stdlib.rb; a Rack-style request
# loop on 4 threads: bench/replay_rack.rb) under glibc, jemalloc, tcmalloc
# and mimalloc: the table of bench/RESULTS.md, the answer of the README,
# and the replay rate under glibc.  Five runs of each of three ways
# (BENCH_REPLAY_RUNS): about four minutes on the shared 2-core machine.
BENCH_REPLAY_RUNS ?= 5
BENCH_TARGETS += bench-replay
.PHONY: bench-replay
bench-replay: $(REPLAY_BIN) $(REPLAY_ENGINE) $(RUN_BIN) $(NATIVE_SO)
	ruby bench/replay_bench.rb $(BUILD) $(BENCH_REPLAY_RUNS)
