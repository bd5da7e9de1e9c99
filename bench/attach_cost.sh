#!/bin/sh
# bench/attach_cost.sh - what `vmheap-console --attach` costs the program
# it attaches to (issue 26, item 5).
#
# 1. The pause.  bench/attach_loop.rb serves requests back to back for 8 s
#    and records when each ended; 3 s in, `vmheap-console --attach PID -e
#    'get system.gc.count'` injects the agent and asks it one thing.  The
#    largest gap between two requests' ends before the attach, during it
#    (from the console's start to 0.5 s after its end) and after, and the
#    median request, per run.  The issue's bound: at most 50 ms during.
# 2. The idle cost.  bench/busy.rb's fixed work (as in bench-idle) run
#    without an agent, with a preloaded one (RUBYOPT=-rvmheap_agent), and
#    plain with the agent attached 0.3 s after it started (nothing talks
#    to it afterwards): median CPU time and peak RSS of each.
#
# 3. Native tracking after attaching.  bench/attach_native.rb's Ruby work
#    (bench-native's "ruby" workload) with no tracker, with the preloaded
#    tracker on from the start (VMHEAP_NATIVE_TRACK=1), and with
#    libvmheap-malloc-attach.so loaded by the script, routed and started:
#    median CPU time of each.
#
# Prints, and writes to BUILD/bench-attach/attach.md.
# usage: attach_cost.sh BUILD [RUNS] [ITERATIONS]
set -e
build=$(cd "$1" && pwd)
runs=${2:-3}
iters=${3:-1500000}
out=$build/bench-attach
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$(pwd)
console=$build/bin/vmheap-console
now() { date +%s.%N; }
# The machine is shared: its load makes gaps of its own (over 100 ms at a
# load of 20 on 2 cores).  So each run is made twice: at normal priority,
# and, when `chrt -f` works (root), with the loop and the console both
# SCHED_FIFO, so that other processes' load does not read as the attach's
# pause (the loop waits 1 ms a request and ends after 8 s).

# ---------------------------------------------------------------- pause
: > "$work/pause"
pause() {
	prio=$1
	tag=$2
	d=$work/p$tag$i
	mkdir -p "$d"
	(cd "$d" && env -u RUBYOPT -u LD_PRELOAD TMPDIR="$d" \
	    $prio ruby "$src/bench/attach_loop.rb" 8 "$d/ends" > "$d/out") &
	lp=$!
	until grep -q ready "$d/out" 2>/dev/null; do sleep 0.05; done
	rpid=$(pgrep -n -P "$lp" ruby || echo "$lp")
	sleep 3
	t0=$(now)
	TMPDIR="$d" $prio "$console" --attach "$rpid" \
	    -e 'get system.gc.count' > /dev/null 2> "$d/err"
	t1=$(now)
	wait "$lp"
	med=$(awk 'NR > 1 { printf "%.3f\n", ($1 - prev) * 1000 } { prev = $1 }' \
	    "$d/ends" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	awk -v a="$t0" -v b="$t1" -v run="$((i + 1))" -v med="$med" -v tag="$tag" '
	    NR > 1 { g = ($1 - prev) * 1000; n++
		     if ($1 < a) { if (g > before) before = g }
		     else if ($1 <= b + 0.5) { if (g > during) during = g }
		     else if (g > after) after = g }
	    { prev = $1 }
	    END { printf "| %s %d | %.1f | %.1f | %.1f | %s | %.0f | %d |\n",
		  tag, run, before, during, after, med, (b - a) * 1000, n }
	' "$d/ends" >> "$work/pause"
}
rt=""
if chrt -f 10 true 2>/dev/null; then rt="chrt -f 10"; fi
i=0
while [ "$i" -lt "$runs" ]; do
	pause "" normal
	[ -n "$rt" ] && pause "$rt" fifo
	i=$((i + 1))
done

# ------------------------------------------------------------ idle cost
# one run: "cpu_seconds max_rss_kb" appended to $1; $2: none, preload,
# attach
idle() {
	file=$1
	mode=$2
	d=$work/idle
	mkdir -p "$d"
	if [ "$mode" = preload ]; then
		set -- env RUBYOPT="-I$build/ruby -rvmheap_agent" \
		    VMHEAP_AGENT_DIR="$d" VMHEAP_AGENT_TMPDIR="$d"
	else
		set -- env -u RUBYOPT TMPDIR="$d"
	fi
	/usr/bin/time -f '%U %S %M' -o "$work/t" "$@" \
	    ruby "$src/bench/busy.rb" "$iters" > /dev/null &
	tp=$!
	if [ "$mode" = attach ]; then
		sleep 0.3
		rpid=$(pgrep -n -P "$(pgrep -n -P "$tp")" ruby ||
		       pgrep -n -P "$tp" ruby)
		TMPDIR="$d" "$console" --attach "$rpid" \
		    -e 'get system.gc.count' > /dev/null 2>> "$d/err"
	fi
	wait "$tp"
	awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$work/t" >> "$file"
}
: > "$work/none"; : > "$work/preload"; : > "$work/attach"
i=0
while [ "$i" -lt "$runs" ]; do
	idle "$work/none" none
	idle "$work/preload" preload
	idle "$work/attach" attach
	i=$((i + 1))
done
# ------------------------------------------------- tracking after attach
track() {
	file=$1
	mode=$2
	if [ "$mode" = preload ]; then
		set -- env LD_PRELOAD="$build/lib/libvmheap-malloc.so" \
		    VMHEAP_NATIVE_TRACK=1 ruby "$src/bench/attach_native.rb"
	elif [ "$mode" = attach ]; then
		set -- env -u LD_PRELOAD ruby "$src/bench/attach_native.rb" \
		    attach "$build/lib/libvmheap-malloc-attach.so"
	else
		set -- env -u LD_PRELOAD ruby "$src/bench/attach_native.rb"
	fi
	/usr/bin/time -f '%U %S %M' -o "$work/t" "$@" > /dev/null
	awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$work/t" >> "$file"
}
: > "$work/tnone"; : > "$work/tpreload"; : > "$work/tattach"
i=0
while [ "$i" -lt "$runs" ]; do
	track "$work/tnone" none
	track "$work/tpreload" preload
	track "$work/tattach" attach
	i=$((i + 1))
done

median() {
	cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 }
	    END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
{
	echo "| priority, run | largest gap before, ms | during the attach, ms | after, ms | median request, ms | console wall, ms | requests |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	cat "$work/pause"
	echo
	echo "| busy.rb $iters requests, $runs runs | CPU s, median | peak RSS MiB, median |"
	echo "| --- | --- | --- |"
	for m in none preload attach; do
		awk -v m="$m" -v c="$(median "$work/$m" 1)" -v r="$(median "$work/$m" 2)" \
		    'BEGIN { printf "| %s | %.2f | %.1f |\n", m, c, r / 1024 }'
	done
	echo
	echo "Every run (CPU s, peak RSS KiB): none: $(tr '\n' ';' < "$work/none")" \
	     "preload: $(tr '\n' ';' < "$work/preload")" \
	     "attach: $(tr '\n' ';' < "$work/attach")"
	echo
	echo "| attach_native.rb, $runs runs | CPU s, median | ratio | peak RSS MiB, median |"
	echo "| --- | --- | --- | --- |"
	c0=$(median "$work/tnone" 1)
	for m in none preload attach; do
		awk -v m="$m" -v c="$(median "$work/t$m" 1)" -v c0="$c0" \
		    -v r="$(median "$work/t$m" 2)" \
		    'BEGIN { printf "| tracking: %s | %.2f | %.2fx | %.1f |\n", m, c, c / c0, r / 1024 }'
	done
	echo
	echo "Every run (CPU s, peak RSS KiB): none: $(tr '\n' ';' < "$work/tnone")" \
	     "preload: $(tr '\n' ';' < "$work/tpreload")" \
	     "attach: $(tr '\n' ';' < "$work/tattach")"
} > "$out/attach.md"
cat "$out/attach.md"
