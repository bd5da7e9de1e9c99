# bench/ruby.mk - vmheap against ObjectSpace.dump_all and the Ruby
# analyzers (bench/run.rb), and its smoke run in `make check`.
#
#   make bench-ruby [BENCH_OBJECTS=3000000] [BENCH_RUNS=3] [BENCH_DIR=...]
#
# It measures whatever is built: a part that is missing (the Ruby agent,
# the console, histo or diff) is reported as missing figures and the
# target fails.  `make bench` builds everything first.
BENCH_OBJECTS ?= 3000000
BENCH_RUNS    ?= 3

BENCH_TARGETS += bench-ruby
CHECK_SUITES  += bench/smoke.sh

.PHONY: bench-ruby bench-fork-dump
bench-ruby:
	BENCH_OBJECTS=$(BENCH_OBJECTS) BENCH_RUNS=$(BENCH_RUNS) \
	  VMHEAP_BUILD=$(abspath $(BUILD)) VMHEAP_SRC=$(CURDIR) \
	  ruby bench/run.rb

# The fork-mode dump against dump_all, taken apart (issue 32 item 4):
#   make bench-fork-dump [BENCH_OBJECTS=3000000] [BENCH_FORK_RUNS=5]
BENCH_FORK_RUNS ?= 5
BENCH_TARGETS += bench-fork-dump

bench-fork-dump:
	BENCH_OBJECTS=$(BENCH_OBJECTS) BENCH_RUNS=$(BENCH_FORK_RUNS) \
	  VMHEAP_BUILD=$(abspath $(BUILD)) VMHEAP_SRC=$(CURDIR) \
	  ruby bench/fork_dump.rb
