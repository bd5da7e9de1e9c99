#!/bin/sh
# bench/smoke.sh - the smoke run of `make bench-ruby` in `make check`: the
# whole Ruby benchmark at a small heap, once, so that the harness cannot
# rot.  It asserts only that every figure was produced (and that every
# analyzer counted the heap's BenchItem objects), never a time.
#
# Run from the repository root with VMHEAP_BUILD (the build directory)
# and VMHEAP_SRC (the repository root) set, as scripts/run-suites.sh does.
build=${VMHEAP_BUILD:?VMHEAP_BUILD is not set}
src=${VMHEAP_SRC:-$(pwd)}
dir="$build/bench-ruby-smoke"
log="$build/bench-ruby-smoke.log"
mkdir -p "$dir"

BENCH_OBJECTS=${BENCH_SMOKE_OBJECTS:-30000} BENCH_RUNS=1 BENCH_DIR="$dir" \
	VMHEAP_BUILD="$build" VMHEAP_SRC="$src" BENCH_TIMEOUT=120 \
	ruby "$src/bench/run.rb" >"$log" 2>&1
rc=$?

# run.rb's last line: "bench-ruby: N of M figures produced[, K missing] (...)"
summary=$(grep '^bench-ruby: ' "$log" | tail -n 1)
if [ "$rc" -eq 0 ] && [ -n "$summary" ]; then
	echo "bench smoke: ${summary#bench-ruby: }"
	echo "bench smoke: 100%: every figure produced"
	exit 0
fi
echo "bench smoke: run.rb exited $rc; its output ($log):"
sed -n '/^| figure/,$p' "$log" | head -n 40
grep '^bench: .*missing' "$log" | head -n 20
[ -n "$summary" ] || tail -n 20 "$log"
echo "bench smoke: FAILED: ${summary:-no summary line}"
exit 1
