#!/bin/sh
# Recording malloc traces (issue 31): the same workload with no
# recording, recorded (libvmheap-malloc.so with VMHEAP_NATIVE_RECORD, as
# vmheap-run --record sets it), and under heaptrack (which records every
# call too, with stacks); each figure the median of RUNS interleaved
# runs.  CPU is user + system of the process and its children (the
# recorder's writer thread included).  Then the hold-out's shape: a Ruby
# program under vmheap-run --record (the agent loaded too) against plain
# ruby, with the trace's events and bytes per event.
#
# usage: record_bench.sh BUILD [THREADS OPS RUNS ROUNDS]
build=$1
threads=${2:-4}
ops=${3:-2000000}
runs=${4:-5}
rounds=${5:-20}
bin="$build/bench/native_bench"
stat="$build/bench/trace_stat"
lib="$(cd "$build/lib" && pwd)/libvmheap-malloc.so"
run="$build/bin/vmheap-run"
src=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmheap-record-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
have_heaptrack=0
command -v heaptrack >/dev/null 2>&1 && have_heaptrack=1

# CPU seconds (user + system, with children) of one run of "$@".
cpu() {
	sh -c '"$@" >"$0" 2>&1 || exit 1; times' "$tmp/out" "$@" >"$tmp/times" ||
		{ echo "record bench: failed: $*" >&2; cat "$tmp/out" >&2; exit 1; }
	tail -1 "$tmp/times" | awk '{ split($1, u, "m"); split($2, s, "m"); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }

ruby_work='a = []; 1_200_000.times { |i| a << ("x" * (24 + i % 200)); a.shift if a.size > 20_000 }; h = {}; 600_000.times { |i| h["k#{i % 50_000}"] = [i, i.to_s * 3] }'

for w in c stdlib ruby; do
	case $w in
	c) set -- "$bin" "$threads" "$ops"
	   title="C workload: $threads threads x $ops mallocs (bench/native_bench.c)" ;;
	stdlib) set -- ruby "$src/native_stdlib.rb" "$rounds"
	   title="Ruby stdlib: $rounds rounds of JSON, ERB, Psych, Ripper, Zlib (bench/native_stdlib.rb)" ;;
	ruby) set -- ruby -e "$ruby_work"
	   title="Ruby strings and hashes: 1,200,000 strings, 600,000 hash stores" ;;
	esac
	: >"$tmp/none"; : >"$tmp/rec"; : >"$tmp/ht"; : >"$tmp/htb"
	i=0
	while [ $i -lt "$runs" ]; do
		cpu "$@" >>"$tmp/none"
		rm -rf "$tmp/r" && mkdir "$tmp/r"
		cpu env LD_PRELOAD="$lib" VMHEAP_NATIVE_RECORD="$tmp/r/t" "$@" >>"$tmp/rec"
		mv "$tmp"/r/t.* "$tmp/trace"
		if [ $have_heaptrack = 1 ]; then
			cpu heaptrack -o "$tmp/ht.$i" "$@" >>"$tmp/ht"
			f=$(ls "$tmp"/ht.$i* | head -1)
			allocs=$(heaptrack_print -f "$f" 2>/dev/null |
				sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p')
			echo "$(wc -c <"$f") ${allocs:-0}" >>"$tmp/htb"
			rm -f "$tmp"/ht.$i*
		fi
		i=$((i + 1))
	done
	# The recorder writes NAME.PID: its pid is the workload's, not ours.
	s=$("$stat" "$tmp/trace") || exit 1
	none=$(median <"$tmp/none")
	rec=$(median <"$tmp/rec")
	echo "record bench, $title, median of $runs runs"
	printf '  %-28s cpu %7.3f s  1.00x\n' "no recording" "$none"
	printf '  %-28s cpu %7.3f s  %.2fx   %s events, %.2f bytes/event, %.2f bytes/allocating call\n' \
		"recorded (vmheap)" "$rec" "$(echo "$rec / $none" | bc -l)" \
		"$(echo "$s" | field events)" "$(echo "$s" | field per_event)" \
		"$(echo "$(echo "$s" | field bytes) / $(echo "$s" | field allocs)" | bc -l)"
	if [ $have_heaptrack = 1 ]; then
		ht=$(median <"$tmp/ht")
		hb=$(awk '{print $1}' "$tmp/htb" | median)
		ha=$(awk '{print $2}' "$tmp/htb" | median)
		printf '  %-28s cpu %7.3f s  %.2fx   %s allocating calls, %.2f bytes/allocating call (zstd, with stacks)\n' \
			"heaptrack" "$ht" "$(echo "$ht / $none" | bc -l)" "$ha" \
			"$(echo "$hb / ($ha + 0.0001)" | bc -l)"
	fi
done
[ $have_heaptrack = 1 ] || echo "  (heaptrack not installed: make deps installs it)"

# The hold-out's shape: vmheap-run --record TRACE ruby ... (the agent is
# loaded too) against plain ruby: at least 1M events, at most 8 bytes an
# event and 2x the CPU.
: >"$tmp/none"; : >"$tmp/rec"
i=0
while [ $i -lt "$runs" ]; do
	cpu ruby "$src/native_stdlib.rb" "$rounds" >>"$tmp/none"
	rm -f "$tmp/h.trace"
	cpu "$run" --record "$tmp/h.trace" ruby "$src/native_stdlib.rb" "$rounds" >>"$tmp/rec"
	i=$((i + 1))
done
s=$("$stat" "$tmp/h.trace") || exit 1
none=$(median <"$tmp/none")
rec=$(median <"$tmp/rec")
echo "record bench, vmheap-run --record TRACE ruby native_stdlib.rb $rounds (agent loaded), median of $runs runs"
printf '  plain ruby cpu %.3f s, recorded cpu %.3f s: %.2fx; %s events, %.2f bytes/event, %s threads\n' \
	"$none" "$rec" "$(echo "$rec / $none" | bc -l)" "$(echo "$s" | field events)" \
	"$(echo "$s" | field per_event)" "$(echo "$s" | field threads)"
