#!/bin/sh
# demo.sh - find the leak in examples/leak.rb, end to end, on a real Ruby VM.
#
#   sh examples/demo.sh [BUILD_DIR]        (what `make demo` runs)
#
# 1. start examples/leak.rb with the agent (dumps and the discovery file go
#    to a fresh temporary directory);
# 2. take two dumps a few seconds apart through vmheap-console -e;
# 3. print vmheap-histo of the first and vmheap-diff of the two;
# 4. stop the VM.
#
# Every command is echoed with "$ " as a person would type it.  Set
# DEMO_GAP (seconds between the dumps, default 3) and DEMO_KEEP=1 to keep
# the temporary directory.  Exits non-zero if any step fails.
set -eu

build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
bin=$build/bin
gap=${DEMO_GAP:-3}

for f in "$build/ruby/vmheap_agent.so" "$bin/vmheap-console" \
	 "$bin/vmheap-histo" "$bin/vmheap-diff"; do
	if [ ! -e "$f" ]; then
		echo "demo: $f is missing: run make first" >&2
		exit 1
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/vmheap-demo.XXXXXX")
pid=
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if [ "${DEMO_KEEP:-}" = 1 ]; then
		echo "demo: kept $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export VMHEAP_AGENT_DIR="$work" VMHEAP_AGENT_TMPDIR="$work"
export PATH="$bin:$PATH"
cd "$work"

say() { printf '$ %s\n' "$*"; }

say "ruby -I build/ruby -rvmheap_agent examples/leak.rb > leak.out &"
ruby -I "$build/ruby" -rvmheap_agent "$src/examples/leak.rb" \
	>leak.out 2>leak.err &
pid=$!

tries=0
while [ ! -f "vmheap-agent.$pid" ]; do
	tries=$((tries + 1))
	if [ $tries -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "demo: leak.rb (pid $pid) did not start its agent:" >&2
		cat leak.err >&2
		exit 1
	fi
	sleep 0.1
done
sleep 1

say "vmheap-console -p $pid -e 'set system.memory.dump heap1.vmheap'"
vmheap-console -p "$pid" -e 'set system.memory.dump heap1.vmheap'
say "sleep $gap"
sleep "$gap"
say "vmheap-console -p $pid -e 'set system.memory.dump heap2.vmheap'"
vmheap-console -p "$pid" -e 'set system.memory.dump heap2.vmheap'

say "vmheap-histo --top 12 heap1.vmheap"
vmheap-histo --top 12 heap1.vmheap
say "vmheap-diff heap1.vmheap heap2.vmheap"
vmheap-diff heap1.vmheap heap2.vmheap

say "kill $pid"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=
say "tail -2 leak.out"
tail -2 leak.out
