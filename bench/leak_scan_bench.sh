#!/bin/sh
# The leak scan's cost (issue 25, item 6): spec/native/scanned.c with MIB
# MiB more in 1 KiB blocks (half kept, half forgotten) under vmheap-run
# --track, dumped through the console: the scan's time in the dump's
# child and its memory (the dump's `leaks` key), and the child's own
# memory (the pages it faulted in: the agent's fork cost, `get
# system.fork_estimate` child_bytes after the dump); then the same
# program under valgrind --leak-check=full, the time from its heap
# summary at exit to its leak summary (its leak check) and its whole run.
#
# usage: leak_scan_bench.sh BUILD [MIB]
build=$(cd "$1" && pwd)
mib=${2:-1024}
scanned="$build/spec/native_scanned"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmheap-leak-scan-bench.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
chmod 700 "$tmp"
mkfifo "$tmp/in"
(cd "$tmp" && VMHEAP_AGENT_TMPDIR="$tmp" VMHEAP_AGENT_DIR="$tmp" \
	SCANNED_BULK_MIB="$mib" exec "$build/bin/vmheap-run" --track "$scanned" \
	<"$tmp/in" >"$tmp/out" 2>"$tmp/err") &
pid=$!
exec 3>"$tmp/in"
n=0
until grep -q ready "$tmp/out" 2>/dev/null; do
	n=$((n + 1))
	[ $n -gt 6000 ] && { echo "leak scan bench: scanned did not start" >&2; cat "$tmp/err" >&2; exit 1; }
	kill -0 "$pid" 2>/dev/null || { echo "leak scan bench: scanned died" >&2; cat "$tmp/err" >&2; exit 1; }
	sleep 0.1
done
con="$build/bin/vmheap-console -p $pid --tmpdir $tmp --json"
$con -e 'set system.memory.dump scan.vmheap' >"$tmp/dump.json" ||
	{ echo "leak scan bench: the dump failed" >&2; cat "$tmp/dump.json" >&2; exit 1; }
$con -e 'get system.fork_estimate' >"$tmp/estimate.json"
exec 3>&-
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=
"$build/bin/vmheap-histo" --native --leaks --format json --top 1 "$tmp/scan.vmheap" >"$tmp/leaks.json"
num() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" "$2" | head -1; }
blocks=$(num blocks "$tmp/leaks.json")
scan_ns=$(num scan_ns "$tmp/leaks.json")
scan_mem=$(num memory_bytes "$tmp/leaks.json")
child=$(num child_bytes "$tmp/estimate.json")
rss=$(num rss "$tmp/estimate.json")
printf 'leak scan, %s MiB more in 1 KiB blocks: %s blocks\n' "$mib" "$blocks"
printf '  vmheap, in the dump child: scan %.3f s, scan memory %.1f MiB, child memory %.1f MiB (process RSS %.1f MiB)\n' \
	"$(echo "$scan_ns / 1000000000" | bc -l)" "$(echo "$scan_mem / 1048576" | bc -l)" \
	"$(echo "${child:-0} / 1048576" | bc -l)" "$(echo "${rss:-0} / 1048576" | bc -l)"

if ! command -v valgrind >/dev/null 2>&1; then
	echo "  valgrind: not installed (make deps)"
	exit 0
fi
s=$(date +%s.%N)
SCANNED_BULK_MIB="$mib" /usr/bin/time -f '%M' -o "$tmp/vg.time" \
	valgrind --time-stamp=yes --leak-check=full "$scanned" exit 2>"$tmp/vg.err" >/dev/null
e=$(date +%s.%N)
# "==DD:HH:MM:SS.mmm PID== ..." -> seconds
ts() { grep "$1" "$tmp/vg.err" | head -1 | sed 's/^==\([0-9]*\):\([0-9]*\):\([0-9]*\):\([0-9.]*\) .*/\1 \2 \3 \4/' |
	awk '{ print $1 * 86400 + $2 * 3600 + $3 * 60 + $4 }'; }
heap=$(ts 'HEAP SUMMARY')
leak=$(ts 'LEAK SUMMARY')
printf '  valgrind --leak-check=full: leak check %.3f s, whole run %.1f s, peak RSS %.1f MiB\n' \
	"$(echo "$leak - $heap" | bc -l)" "$(echo "$e - $s" | bc -l)" \
	"$(echo "$(cat "$tmp/vg.time" | tail -1) / 1024" | bc -l)"
grep 'definitely lost:' "$tmp/vg.err" | sed 's/^==[^=]*== */  valgrind /'
