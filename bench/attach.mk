# make bench-attach: what attaching costs the target (bench/attach_cost.sh):
# a request loop's largest gap before, during and after `vmheap-console
# --attach`, and an attached idle agent's CPU and RSS against a preloaded
# one.  About 2 minutes.
BENCH_TARGETS += bench-attach
.PHONY: bench-attach
bench-attach: $(BUILD)/ruby/vmheap_agent.so $(BUILD)/ruby/vmheap_attach.so \
              $(BUILD)/bin/vmheap-console
	sh bench/attach_cost.sh $(BUILD) $(BENCH_ATTACH_RUNS) $(BENCH_ATTACH_ITERATIONS)
