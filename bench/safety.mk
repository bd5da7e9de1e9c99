# make bench-safety: the time figures of the attacks of issue 28, which
# spec/safety_test measures but may not assert (RELIABILITY.md, 4a): how
# long another client waits while one pipelines `get system.fork_estimate`,
# and the memory figures alongside.  Runs the suite's "loop" and "memory"
# cases BENCH_SAFETY_RUNS times (default 3) and prints their figure lines.
BENCH_SAFETY_RUNS ?= 3
BENCH_TARGETS += bench-safety
.PHONY: bench-safety
bench-safety: $(SAFETY_SPEC_BIN) $(BINS)
	@for i in $$(seq $(BENCH_SAFETY_RUNS)); do \
	  for c in loop memory; do \
	    VMHEAP_BUILD=$(abspath $(BUILD)) VMHEAP_SRC=$(CURDIR) CK_RUN_CASE=$$c \
	      $(SAFETY_SPEC_BIN) | grep '^issue 28:' || exit 1; \
	  done; \
	done
