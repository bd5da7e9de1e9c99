#!/bin/sh
# names_bench.sh BUILD OBJECTS DIR - what format 1.1 edge names cost: the
# same gen_dump heap (OBJECTS objects plus a 100,000-object leak) written
# without and with names (gen_dump -N: every reference and root named),
# its dump time and bytes per object, then vmheap-dominators' and
# vmheap-path's time and peak RSS on each.  See bench/graphtools.mk.
# Fails if a tool fails or the named dump's leak path has no names.
set -eu
build=$1 n=$2 dir=$3
bin=$build/bin
leak=100000
total=$((n + leak + 1))
trap 'rm -f "$dir"/plain.vmheap "$dir"/named.vmheap "$dir"/out.*' EXIT

# per_object BYTES: BYTES / total, two decimals
per_object() {
	awk -v b="$1" -v n="$total" 'BEGIN { printf "%.2f", b / n }'
}

# run NAME CMD...: time and peak RSS of one run, output in out.NAME
run() {
	name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$dir/out.time" "$@" \
		>"$dir/out.$name" 2>"$dir/out.$name.err"
	set -- $(tail -n 1 "$dir/out.time")
	echo "$name: $1 s (user $2 s, system $3 s), peak RSS $4 KB" \
	     "($(per_object $(( $4 * 1024 ))) bytes per object)"
}

echo "== edge names on a gen_dump heap of $total objects"
for v in plain named; do
	flag=
	[ "$v" = named ] && flag=-N
	run "dump-$v" "$build/bench/gen_dump" -n "$n" -g "$leak" $flag \
		"$dir/$v.vmheap"
	size=$(stat -c %s "$dir/$v.vmheap")
	echo "dump-$v: $size bytes of dump ($(per_object "$size") bytes per object)"
done
echo "names add $(per_object $(( $(stat -c %s "$dir/named.vmheap") - \
	$(stat -c %s "$dir/plain.vmheap") ))) bytes per object to the dump"
for v in plain named; do
	run "dominators-$v" "$bin/vmheap-dominators" --top 5 "$dir/$v.vmheap"
	run "path-$v" "$bin/vmheap-path" "$dir/$v.vmheap" Leak::Message
done
grep -q "Leak::Message .* Leak::Holder\[0\] .* root vm \$root" \
	"$dir/out.path-named" || {
	echo "bench-names: the named leak's path shows no names" >&2
	cat "$dir/out.path-named" >&2
	exit 1
}
