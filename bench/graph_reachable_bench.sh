#!/bin/sh
# graph_reachable_bench.sh BUILD OBJECTS DIR - issue 32's graph figures:
# vmheap-path and vmheap-dominators on a heap where every object is
# reachable and many are shared (gen_dump -R: a balanced tree from one
# root plus 0-2 random references per object), with edge names (-N, the
# Ruby host's default) and a 100,000-object leak held by one Leak::Holder.
# Each tool's wall time, CPU time (user + sys), peak RSS and bytes per
# object, against the peer measured in the same run: cat of the dump (the
# time to read the file from the page cache).  See bench/graphtools.mk.
# Fails if a tool fails or its answer is wrong.
set -eu
build=$1 n=$2 dir=$3
bin=$build/bin
dump=$dir/reachable.vmheap
leak=100000
trap 'rm -f "$dump" "$dir"/out.*' EXIT

"$build/bench/gen_dump" -R -N -n "$n" -g "$leak" "$dump"
total=$((n + leak + 1))
echo "== graph tools on a gen_dump -R -N heap of $total objects," \
     "every one reachable ($(du -m "$dump" | cut -f1) MB; load $(cut -d' ' -f1-3 /proc/loadavg))"

# run NAME CMD...: wall and CPU time, peak RSS and RSS per object
run() {
	name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$dir/out.time" "$@" >"$dir/out.$name"
	set -- $(cat "$dir/out.time")
	cpu=$(echo "$2 $3" | awk '{printf "%.2f", $1 + $2}')
	echo "$name: $1 s wall, $cpu s CPU, peak RSS $4 KB" \
	     "($(( $4 * 1024 / total )) bytes per object)"
}

cat "$dump" >/dev/null # into the page cache
run cat cat "$dump"
run path-leak "$bin/vmheap-path" "$dump" Leak::Message
grep -q "#1  $leak instances (100.0%)" "$dir/out.path-leak" || {
	echo "bench-graph-reachable: vmheap-path did not merge the leak" >&2
	cat "$dir/out.path-leak" >&2
	exit 1
}
run path-time "$bin/vmheap-path" "$dump" Time
sed -n 2p "$dir/out.path-time"
run dominators "$bin/vmheap-dominators" --top 5 "$dump"
grep -q 'Leak::Holder' "$dir/out.dominators" || {
	echo "bench-graph-reachable: the leak's holder is not in the top 5" >&2
	cat "$dir/out.dominators" >&2
	exit 1
}
grep -q 'unreachable from the roots: 0 objects' "$dir/out.dominators" || {
	echo "bench-graph-reachable: objects unreachable on a -R heap" >&2
	exit 1
}
echo "targets (issue 32): path of one class within 3 s (goal 1.5 s);" \
     "dominators at most 64 bytes per object, 30 s at 10M objects," \
     "90 s at 100M"
