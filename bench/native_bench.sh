#!/bin/sh
# The malloc tracker's cost (issues 14 and 25), as ratios in one run:
# the same workload (C; Ruby strings and hashes; Ruby's stdlib) with no
# tracker, with libvmheap-malloc.so loaded but off, on (the default
# stacks), on with frame-pointer stacks, and under heaptrack; then the C workload again with 16 threads (no tracker, on),
# and the tracker's own memory as a share of the tracked heap.  Each
# figure is the median of RUNS runs, the configurations interleaved.
#
# usage: native_bench.sh BUILD [THREADS OPS RUNS]
build=$1
threads=${2:-4}
ops=${3:-4000000}
runs=${4:-5}
bin="$build/bench/native_bench"
lib="$(cd "$build/lib" && pwd)/libvmheap-malloc.so"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmheap-native-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
have_heaptrack=0
command -v heaptrack >/dev/null 2>&1 && have_heaptrack=1

# wall and CPU seconds (user + system, the process and its children) of
# one run of "$@" (the whole process, heaptrack's interpretation
# included).  CPU time moves less than wall time when the shared machine
# is busy.
wall() {
	s=$(date +%s.%N)
	sh -c '"$@" >"$0" 2>&1 || exit 1; times' "$tmp/out" "$@" >"$tmp/times" ||
		{ echo "native bench: failed: $*" >&2; cat "$tmp/out" >&2; exit 1; }
	e=$(date +%s.%N)
	cpu=$(tail -1 "$tmp/times" | awk '{ split($1, u, "m"); split($2, s, "m"); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
	echo "$(echo "$e - $s" | bc -l) $cpu"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col() { awk -v c="$1" '{print $c}' | median; } # median of column $1

ruby_work='a = []; 1_200_000.times { |i| a << ("x" * (24 + i % 200)); a.shift if a.size > 20_000 }; h = {}; 600_000.times { |i| h["k#{i % 50_000}"] = [i, i.to_s * 3] }'

stdlib="$(dirname "$0")/native_stdlib.rb"
for w in c ruby stdlib; do
	: >"$tmp/$w.none"; : >"$tmp/$w.off"; : >"$tmp/$w.on"; : >"$tmp/$w.fp"; : >"$tmp/$w.ht"
	case $w in
	c) set -- "$bin" "$threads" "$ops" ;;
	ruby) set -- ruby -e "$ruby_work" ;;
	stdlib) set -- ruby "$stdlib" 20 ;;
	esac
	i=0
	while [ $i -lt "$runs" ]; do
		wall "$@" >>"$tmp/$w.none"
		wall env LD_PRELOAD="$lib" "$@" >>"$tmp/$w.off"
		wall env LD_PRELOAD="$lib" VMHEAP_NATIVE_TRACK=1 "$@" >>"$tmp/$w.on"
		wall env LD_PRELOAD="$lib" VMHEAP_NATIVE_TRACK=1 VMHEAP_NATIVE_UNWIND=fp "$@" >>"$tmp/$w.fp"
		if [ $have_heaptrack = 1 ]; then
			wall heaptrack -o "$tmp/ht.$w.$i" "$@" >>"$tmp/$w.ht"
			rm -f "$tmp"/ht.$w.$i*
		fi
		i=$((i + 1))
	done
	none=$(col 1 <"$tmp/$w.none")
	none_cpu=$(col 2 <"$tmp/$w.none")
	case $w in
	c) echo "native bench, C workload: $threads threads x $ops mallocs (16 B-64 KiB, window 4096), median of $runs runs" ;;
	ruby) echo "native bench, Ruby workload: 1,200,000 strings and 600,000 hash stores, median of $runs runs" ;;
	stdlib) echo "native bench, Ruby stdlib workload: 20 rounds of JSON, ERB, Psych, Ripper, Zlib (bench/native_stdlib.rb), median of $runs runs" ;;
	esac
	printf '  %-34s %8.3f s  1.00x   cpu %8.3f s  1.00x\n' "no tracker" "$none" "$none_cpu"
	for c in off on fp ht; do
		[ -s "$tmp/$w.$c" ] || continue
		m=$(col 1 <"$tmp/$w.$c")
		mc=$(col 2 <"$tmp/$w.$c")
		case $c in
		off) label="tracker loaded, off" ;;
		on) label="tracker on (default stacks)" ;;
		fp) label="tracker on (frame pointers)" ;;
		ht) label="heaptrack" ;;
		esac
		printf '  %-34s %8.3f s  %.2fx   cpu %8.3f s  %.2fx\n' "$label" "$m" \
			"$(echo "$m / $none" | bc -l)" "$mc" "$(echo "$mc / $none_cpu" | bc -l)"
	done
done
[ $have_heaptrack = 1 ] || echo "  (heaptrack not installed: make deps installs it)"
# More threads than cores: a server's thread pool.  Every thread counts in
# counters of its own, however many there are.
many=16
many_ops=$((ops / 4))
: >"$tmp/many.none"; : >"$tmp/many.on"
i=0
while [ $i -lt "$runs" ]; do
	wall "$bin" $many $many_ops >>"$tmp/many.none"
	wall env LD_PRELOAD="$lib" VMHEAP_NATIVE_TRACK=1 "$bin" $many $many_ops >>"$tmp/many.on"
	i=$((i + 1))
done
none=$(col 1 <"$tmp/many.none"); none_cpu=$(col 2 <"$tmp/many.none")
on=$(col 1 <"$tmp/many.on"); on_cpu=$(col 2 <"$tmp/many.on")
echo "native bench, C workload: $many threads x $many_ops mallocs, median of $runs runs"
printf '  %-34s %8.3f s  1.00x   cpu %8.3f s  1.00x\n' "no tracker" "$none" "$none_cpu"
printf '  %-34s %8.3f s  %.2fx   cpu %8.3f s  %.2fx\n' "tracker on (default stacks)" "$on" \
	"$(echo "$on / $none" | bc -l)" "$on_cpu" "$(echo "$on_cpu / $none_cpu" | bc -l)"
# The tracker's memory against the heap it tracks (C workload, on).
env LD_PRELOAD="$lib" VMHEAP_NATIVE_TRACK=1 "$bin" "$threads" "$ops" >"$tmp/mem"
awk '/^tracked:/ { live=$7; mem=$12;
	printf "  tracker memory: %d bytes for %d live bytes tracked in %s allocations, %.1f%% of the tracked heap\n", mem, live, $4, 100*mem/live }' \
	"$tmp/mem"
