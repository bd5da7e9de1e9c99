# make bench-alloc-sites: what allocation tracing costs an allocation loop
# (bench/alloc_trace.rb): untraced, vmheap's config.trace.allocations and
# objspace's trace_object_allocations_start, in one Ruby process, in turn.
# About 30 s.  BENCH_ALLOC_STEPS loop steps (3 allocations each: an object and two strings),
# BENCH_ALLOC_RUNS runs of each.
BENCH_ALLOC_STEPS ?= 1000000
BENCH_ALLOC_RUNS ?= 5
BENCH_TARGETS += bench-alloc-sites
.PHONY: bench-alloc-sites
bench-alloc-sites: $(BUILD)/ruby/vmheap_agent.so $(BUILD)/bin/vmheap-console
	ruby -I $(BUILD)/ruby -rvmheap_agent bench/alloc_trace.rb \
	  $(BUILD)/bin/vmheap-console $(BENCH_ALLOC_STEPS) $(BENCH_ALLOC_RUNS)
