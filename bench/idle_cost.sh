#!/bin/sh
# bench/idle_cost.sh - what a loaded but idle agent costs a busy Ruby
# program: bench/busy.rb does a fixed amount of work with and without
# RUBYOPT="-I BUILD/ruby -rvmheap_agent" (nothing connects to the agent),
# RUNS times each, alternating so that the machine's drift hits both.
# Prints, and writes to BUILD/bench-idle/idle.md, the median CPU time
# (user + system), wall time and peak RSS of each, and their ratios.
#
# usage: idle_cost.sh BUILD [ITERATIONS] [RUNS]
#   ITERATIONS  requests of busy.rb per run (default 2500000, about 5 s)
#   RUNS        runs of each (default 3)
set -e
build=$(cd "$1" && pwd)
iters=${2:-2500000}
runs=${3:-3}
out=$build/bench-idle
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
busy=$(pwd)/bench/busy.rb

# one run: "cpu_seconds wall_seconds max_rss_kb" appended to $1
run() {
	file=$1
	shift
	/usr/bin/time -f '%U %S %e %M' -o "$work/t" "$@" ruby "$busy" \
	    "$iters" > /dev/null
	awk '{ printf "%.2f %.2f %d\n", $1 + $2, $3, $4 }' "$work/t" >> "$file"
}

: > "$work/without"
: > "$work/with"
i=0
while [ "$i" -lt "$runs" ]; do
	run "$work/without" env -u RUBYOPT
	run "$work/with" env RUBYOPT="-I$build/ruby -rvmheap_agent" \
	    VMHEAP_AGENT_DIR="$work" VMHEAP_AGENT_TMPDIR="$work"
	i=$((i + 1))
done

# median of column $2 of file $1
median() {
	cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 }
	    END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# least of column $2 of file $1 (the run the machine disturbed least)
least() {
	cut -d' ' -f"$2" "$1" | sort -n | head -1
}

cpu0=$(median "$work/without" 1); cpu1=$(median "$work/with" 1)
wall0=$(median "$work/without" 2); wall1=$(median "$work/with" 2)
rss0=$(median "$work/without" 3); rss1=$(median "$work/with" 3)
min0=$(least "$work/without" 1); min1=$(least "$work/with" 1)
{
	echo "| busy.rb $iters requests, $runs runs | CPU s, median | CPU s, least | wall s, median | peak RSS MiB, median |"
	echo "| --- | --- | --- | --- | --- |"
	awk -v c="$cpu0" -v m="$min0" -v w="$wall0" -v r="$rss0" \
	    'BEGIN { printf "| without the agent | %.2f | %.2f | %.2f | %.1f |\n", c, m, w, r / 1024 }'
	awk -v c="$cpu1" -v m="$min1" -v w="$wall1" -v r="$rss1" \
	    'BEGIN { printf "| with the agent loaded, idle | %.2f | %.2f | %.2f | %.1f |\n", c, m, w, r / 1024 }'
	awk -v c0="$cpu0" -v c1="$cpu1" -v m0="$min0" -v m1="$min1" \
	    -v w0="$wall0" -v w1="$wall1" -v r0="$rss0" -v r1="$rss1" \
	    'BEGIN { printf "| ratio | %.3f | %.3f | %.3f | %.3f (%+.1f MiB) |\n", c1 / c0, m1 / m0, w1 / w0, r1 / r0, (r1 - r0) / 1024 }'
	echo
	echo "Every run (CPU s, wall s, peak RSS KiB): without: $(tr '\n' ';' < "$work/without")" \
	     "with: $(tr '\n' ';' < "$work/with")"
} > "$out/idle.md"
cat "$out/idle.md"
