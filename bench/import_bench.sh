#!/bin/sh
# bench/import_bench.sh - vmheap-import's throughput on real dumps of a
# real Ruby and a real JVM, against jq (over the same JSON) and cat (of
# the same HPROF).
#
#   sh bench/import_bench.sh BUILD_DIR [OBJECTS]     (make bench-import)
#
# Makes a dump_all JSON of a Ruby heap holding OBJECTS (default 300000)
# extra strings and arrays, and an HPROF of spec/java/ImportSpecLeak holding
# OBJECTS sessions (each a Session and its String and byte[]), under
# BUILD_DIR/bench-import; then prints, as the best of RUNS runs (default 3)
# with a warm page cache, the wall time, MB/s and objects/s of:
#   jq -c . JSON >/dev/null  and  vmheap-import JSON OUT
#   cat HPROF >/dev/null     and  vmheap-import HPROF OUT
#   jmap -histo:live PID     (the JVM's own class histogram of the same
#                             heap, taken before the HPROF; its MB/s are of
#                             the HPROF's size, for comparison)
# (vmheap-import's time includes writing OUT and its fsync), and
# vmheap-import's peak RSS on each.
set -e
build=${1:?usage: import_bench.sh BUILD_DIR [OBJECTS]}
n=${2:-300000}
runs=${RUNS:-3}
dir=$build/bench-import
import=$build/bin/vmheap-import
mkdir -p "$dir"
json=$dir/heap.json
hprof=$dir/heap.hprof
out=$dir/out.vmheap
rm -f "$json" "$hprof" "$out"

ruby -robjspace -e '
n = Integer(ARGV[0])
$keep = Array.new(n) { |i| i.even? ? "s#{i}" : [i] }
File.open(ARGV[1], "w") { |f| ObjectSpace.dump_all(output: f) }' "$n" "$json"

# the program runs until its stdin (a fifo held open here) closes
rm -f "$dir/stdin"
mkfifo "$dir/stdin"
java -Xshare:off -cp "$build/spec/java" ImportSpecLeak "$n" \
	<"$dir/stdin" >"$dir/java.out" &
jpid=$!
exec 3>"$dir/stdin"
while ! grep -q ready "$dir/java.out" 2>/dev/null; do sleep 0.2; done
jmap_best=
i=0
while [ $i -lt "$runs" ]; do
	t0=$(date +%s%N)
	jmap -histo:live "$jpid" >/dev/null
	t=$((($(date +%s%N) - t0) / 1000))
	if [ -z "$jmap_best" ] || [ $t -lt "$jmap_best" ]; then jmap_best=$t; fi
	i=$((i + 1))
done
jcmd "$jpid" GC.heap_dump "$hprof" >/dev/null
exec 3>&-
wait "$jpid"
rm -f "$dir/stdin"

now() { date +%s%N; }

# best wall time of $runs runs of "$@", in ms; OUT removed before each
best() {
	b=
	i=0
	while [ $i -lt "$runs" ]; do
		rm -f "$out"
		t0=$(now)
		"$@" >/dev/null
		t1=$(now)
		t=$(((t1 - t0) / 1000))
		if [ -z "$b" ] || [ $t -lt "$b" ]; then b=$t; fi
		i=$((i + 1))
	done
	echo "$b"
}

size() { stat -c %s "$1"; }

# objects in a dump, from vmheap-import's summary line
objects() {
	rm -f "$out"
	"$import" --no-progress "$1" "$out" | sed -n 's/.*: \([0-9]*\) objects,.*/\1/p'
}

row() { # name bytes objects microseconds
	awk -v name="$1" -v b="$2" -v o="$3" -v us="$4" 'BEGIN {
		s = us / 1e6
		printf "%-28s %9.3f s %9.1f MB/s %12.0f objects/s\n",
		    name, s, b / 1e6 / s, o / s }'
}

cat "$json" "$hprof" >/dev/null # warm the page cache
jb=$(size "$json")
jo=$(objects "$json")
hb=$(size "$hprof")
ho=$(objects "$hprof")
echo "dump_all JSON: $jb bytes, $jo objects; HPROF: $hb bytes, $ho objects"
echo "(best of $runs runs, warm page cache)"
row "jq -c . JSON >/dev/null" "$jb" "$jo" "$(best jq -c . "$json")"
row "vmheap-import JSON" "$jb" "$jo" "$(best "$import" --no-progress "$json" "$out")"
row "cat HPROF >/dev/null" "$hb" "$ho" "$(best cat "$hprof")"
row "vmheap-import HPROF" "$hb" "$ho" "$(best "$import" --no-progress "$hprof" "$out")"
row "jmap -histo:live (same heap)" "$hb" "$ho" "$jmap_best"
for f in "$json" "$hprof"; do
	rm -f "$out"
	/usr/bin/time -f "%M" -o "$dir/rss" "$import" --no-progress "$f" "$out" >/dev/null
	echo "vmheap-import $(basename "$f"): peak RSS $(cat "$dir/rss") KB"
done
rm -f "$out"
