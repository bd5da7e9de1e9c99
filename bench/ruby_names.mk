# bench/ruby_names.mk - what names cost in a Ruby dump (bench/ruby_names.rb): bytes
# per object and fork-dump time with config.dump.names true and false.
#
#   make bench-ruby-names [BENCH_OBJECTS=3000000] [BENCH_RUNS=3]
BENCH_TARGETS += bench-ruby-names

.PHONY: bench-ruby-names
bench-ruby-names:
	BENCH_OBJECTS=$(BENCH_OBJECTS) BENCH_RUNS=$(BENCH_RUNS) \
	  VMHEAP_BUILD=$(abspath $(BUILD)) VMHEAP_SRC=$(CURDIR) \
	  ruby bench/ruby_names.rb
