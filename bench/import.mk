# make bench-import: vmheap-import on real dumps (a Ruby's dump_all JSON, a
# JVM's HPROF) against jq and cat; see bench/import_bench.sh.
BENCH_TARGETS += bench-import
.PHONY: bench-import
bench-import: $(BINDIR)/vmheap-import $(SPECDIR)/java/ImportSpecLeak.class
	sh bench/import_bench.sh $(BUILD) $(BENCH_IMPORT_OBJECTS)
