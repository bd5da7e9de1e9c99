#!/bin/sh
# One suite of run-suites.sh: run SUITE with its output in
# LOG_DIR/<name>.log, write "EXIT_CODE SECONDS" to LOG_DIR/<name>.result,
# then print the log whole (under a lock: suites end at the same time).
#
# usage: run-one-suite.sh LOG_DIR SUITE
logs=$1
s=$2
name=$(basename "$s")
t0=$(date +%s%N)
"$s" > "$logs/$name.log" 2>&1
rc=$?
t1=$(date +%s%N)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
{
	flock 9
	echo "== $s ($secs s)"
	cat "$logs/$name.log"
	[ $rc -eq 0 ] || echo "== $s: FAILED (exit $rc)"
} 9> "$logs/.lock"
echo "$rc $secs" > "$logs/$name.result"
