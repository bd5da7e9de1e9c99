#!/bin/sh
# graphtools_bench.sh BUILD OBJECTS DIR - time and peak RSS of the graph
# tools on a gen_dump heap of OBJECTS objects plus a 100,000-object leak,
# then on graph_bench's random heap of OBJECTS objects (references to any
# object: about 80% of it reachable, where gen_dump's references go only
# backwards and leave most of its heap unreachable).  See
# bench/graphtools.mk.  Fails if a tool fails or its answer is wrong.
set -eu
build=$1 n=$2 dir=$3
bin=$build/bin
dump=$dir/heap.vmheap
leak=100000
random=$dir/random.vmheap
trap 'rm -f "$dump" "$random" "$dir"/out.*' EXIT

"$build/bench/gen_dump" -n "$n" -g "$leak" "$dump"
total=$((n + leak + 1))
echo "== graph tools on a gen_dump heap of $total objects" \
     "($(du -m "$dump" | cut -f1) MB)"

# run NAME CMD...: time, peak RSS and RSS per object of one run
run() {
	name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$dir/out.time" "$@" >"$dir/out.$name"
	set -- $(cat "$dir/out.time")
	echo "$name: $1 s, peak RSS $2 KB ($(( $2 * 1024 / total )) bytes per object)"
}

run dominators "$bin/vmheap-dominators" --top 5 "$dump"
grep -q 'Leak::Holder' "$dir/out.dominators" || {
	echo "bench-graphtools: the leak's holder is not in the top 5" >&2
	cat "$dir/out.dominators" >&2
	exit 1
}
run path-leak "$bin/vmheap-path" "$dump" Leak::Message
grep -q "#1  $leak instances (100.0%)" "$dir/out.path-leak" || {
	echo "bench-graphtools: vmheap-path did not merge the leak" >&2
	cat "$dir/out.path-leak" >&2
	exit 1
}
run path-string "$bin/vmheap-path" "$dump" String
run histo-retained "$bin/vmheap-histo" --retained --top 5 "$dump"
rm -f "$dump"

"$build/bench/graph_bench" gen -n "$n" "$random" /dev/null
total=$n
echo "== graph tools on a random heap of $total objects" \
     "($(du -m "$random" | cut -f1) MB)"
run dominators "$bin/vmheap-dominators" --top 5 "$random"
grep 'unreachable from the roots' "$dir/out.dominators"
cls=$("$bin/vmheap-histo" --format csv --top 1 "$random" | sed -n 2p)
echo "largest class: $cls (count,class,bytes)"
run path-largest "$bin/vmheap-path" "$random" "$(echo "$cls" | cut -d, -f2)"
sed -n 2p "$dir/out.path-largest"
run histo-retained "$bin/vmheap-histo" --retained --top 5 "$random"
