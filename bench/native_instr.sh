#!/bin/sh
# The malloc tracker's cost on the C workload in instructions, which the
# load of a shared machine does not move (its CPU times spread by +-10%
# from one run to the next there: bench/HISTORY.md, "Native tracker,
# seventh pass").  cachegrind counts every instruction of
# bench/native_bench with one thread, untracked and tracked, at OPS and at
# 2 x OPS malloc-free pairs; the difference of the two runs divided by OPS
# is the cost of one pair, without start-up.  Then the tracker's
# functions of the longer tracked run, per pair.  The same for recording
# a malloc trace (vmheap-run --record's VMHEAP_NATIVE_RECORD; the writer
# thread's instructions counted too) and its functions.
#
# usage: native_instr.sh BUILD [OPS]
build=$1
ops=${2:-100000}
bin="$build/bench/native_bench"
lib="$(cd "$build/lib" && pwd)/libvmheap-malloc.so"
command -v valgrind >/dev/null 2>&1 ||
	{ echo "native instr bench: valgrind not installed (make deps)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmheap-native-instr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# The instructions of one run of N pairs: count OUT N, or count OUT N
# track, or count OUT N record.  The tracker goes in valgrind's
# environment: valgrind hands LD_PRELOAD on to the program it runs.
count() {
	if [ "$3" = track ]; then
		set -- "$1" "$2" env LD_PRELOAD="$lib" VMHEAP_NATIVE_TRACK=1
	elif [ "$3" = record ]; then
		rm -rf "$tmp/trace" && mkdir "$tmp/trace"
		set -- "$1" "$2" env LD_PRELOAD="$lib" \
			VMHEAP_NATIVE_RECORD="$tmp/trace/t"
	else
		set -- "$1" "$2" env
	fi
	out=$1
	n=$2
	shift 2
	"$@" valgrind --tool=cachegrind --cache-sim=no \
		--cachegrind-out-file="$out" "$bin" 1 "$n" >/dev/null \
		2>"$tmp/err" ||
		{ echo "native instr bench: failed ($n pairs)" >&2; cat "$tmp/err" >&2; exit 1; }
	awk '/^summary:/ { print $2 }' "$out"
}

twice=$((ops * 2))
p1=$(count "$tmp/p1" "$ops")
p2=$(count "$tmp/p2" "$twice")
t1=$(count "$tmp/t1" "$ops" track)
t2=$(count "$tmp/t2" "$twice" track)
r1=$(count "$tmp/r1" "$ops" record)
r2=$(count "$tmp/r2" "$twice" record)
plain=$(( (p2 - p1) / ops ))
tracked=$(( (t2 - t1) / ops ))
recorded=$(( (r2 - r1) / ops ))
echo "native instr bench: C workload, 1 thread, instructions per malloc-free pair ($ops and $twice pairs, cachegrind)"
printf '  %-28s %6d\n' "no tracker" "$plain"
printf '  %-28s %6d  (%d more, %.2fx)\n' "tracker on" "$tracked" \
	$((tracked - plain)) "$(echo "$tracked / $plain" | bc -l)"
echo "  the tracker's functions, per pair (the longer run, start-up included):"
cg_annotate "$tmp/t2" 2>/dev/null |
	awk -v n="$twice" '/native\/[a-z_]+\.c:/ { gsub(",", "", $1);
		sub(".*native/", "", $NF);
		if ($1 / n >= 1) printf "    %-40s %6.1f\n", $NF, $1 / n }' |
	head -12
printf '  %-28s %6d  (%d more, %.2fx)\n' "recording on" "$recorded" \
	$((recorded - plain)) "$(echo "$recorded / $plain" | bc -l)"
echo "  the recorder's functions, per pair (the longer run, start-up included):"
cg_annotate "$tmp/r2" 2>/dev/null |
	awk -v n="$twice" '/native\/[a-z_]+\.c:/ { gsub(",", "", $1);
		sub(".*native/", "", $NF);
		if ($1 / n >= 1) printf "    %-40s %6.1f\n", $NF, $1 / n }' |
	head -12
