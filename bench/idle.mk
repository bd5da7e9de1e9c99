# make bench-idle: the cost of a loaded, idle agent in a busy Ruby
# program (bench/idle_cost.sh): CPU, wall time and peak RSS over a fixed
# amount of work, with and without RUBYOPT=-rvmheap_agent.  About 30 s.
BENCH_TARGETS += bench-idle
.PHONY: bench-idle
bench-idle: $(BUILD)/ruby/vmheap_agent.so
	sh bench/idle_cost.sh $(BUILD) $(BENCH_IDLE_ITERATIONS) $(BENCH_IDLE_RUNS)
