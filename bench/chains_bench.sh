#!/bin/sh
# bench/chains_bench.sh BUILD SIZE... - the graph tools on linked lists
# of SIZE nodes (bench/gen_chain.c): wall time and peak RSS of
# vmheap-path DUMP Node, vmheap-path --retainers, vmheap-diff --paths
# (a list of SIZE/2 nodes against one of SIZE) and vmheap-dominators.
set -eu
build=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/vmheap-chains.XXXXXX")
trap 'rm -rf "$dir"' EXIT

measure() { # label command...
	label=$1
	shift
	/usr/bin/time -f "%e %M" -o "$dir/time" "$@" >/dev/null
	read -r secs kib <"$dir/time"
	printf '%-44s %8s s %10s KiB peak RSS\n' "$label" "$secs" "$kib"
}

for n in "$@"; do
	"$build/bench/gen_chain" $((n / 2)) "$dir/half-$n.vmheap"
	"$build/bench/gen_chain" "$n" "$dir/chain-$n.vmheap"
	echo "== linked list of $n nodes"
	measure "vmheap-path DUMP Node" "$build/bin/vmheap-path" \
		"$dir/chain-$n.vmheap" Node
	measure "vmheap-path --retainers DUMP Node" "$build/bin/vmheap-path" \
		--retainers "$dir/chain-$n.vmheap" Node
	# (two processes: the diff warns that ids are addresses; not shown)
	measure "vmheap-diff --paths HALF DUMP" "$build/bin/vmheap-diff" \
		--paths "$dir/half-$n.vmheap" "$dir/chain-$n.vmheap" 2>/dev/null
	measure "vmheap-dominators DUMP" "$build/bin/vmheap-dominators" \
		"$dir/chain-$n.vmheap"
	rm -f "$dir/chain-$n.vmheap" "$dir/half-$n.vmheap"
done
