#!/bin/sh
# Run every test suite; print each one's output with its Check summary and
# how long it took; fail if any fails.
#
# usage: run-suites.sh BUILD_DIR SUITE...
#
# Suites are independent processes (each has its own root directory under
# $TMPDIR, its own VMs, discovery directories and ports), so they run
# VMHEAP_CHECK_JOBS at a time (default 2, the cores of the CI machine;
# 1 runs them one after another).  A suite's output goes to
# BUILD_DIR/suite-logs/<suite>.log and is printed whole when it ends, so
# the outputs of two suites never mix.  The longest suites start first:
# BUILD_DIR/suite-times keeps each suite's last wall-clock time (seconds,
# by the suite's file name), a build without one (build/asan) starts from
# the times of the build it is in (build), a fresh clone from
# spec/suite-times (committed), and a suite without a time (a new suite)
# counts as long.
# At the end a table of the times, longest first.
build=$1
shift
export VMHEAP_BUILD="$build"
export VMHEAP_SRC="$(pwd)"
jobs=${VMHEAP_CHECK_JOBS:-2}
logs="$build/suite-logs"
times="$build/suite-times"
rm -rf "$logs"
mkdir -p "$logs" || exit 1
if [ ! -f "$times" ]; then
	cp "$(dirname "$build")/suite-times" "$times" 2>/dev/null ||
		grep -v '^#' "$VMHEAP_SRC/spec/suite-times" > "$times" 2>/dev/null ||
		: > "$times"
fi

# the order: the last time of each suite, longest first (none: 100000)
order=$(for s in "$@"; do
	t=$(awk -v s="${s##*/}" '$2 == s { t = $1 } END { print t == "" ? 100000 : t }' "$times")
	printf '%s %s\n' "$t" "$s"
done | sort -s -k1,1nr | cut -d' ' -f2-)

start=$(date +%s)
printf '%s\n' $order | xargs -P "$jobs" -n 1 sh "$VMHEAP_SRC/scripts/run-one-suite.sh" "$logs"
end=$(date +%s)

failed=""
# keep the times of the suites not run this time
for s in "$@"; do echo "${s##*/}"; done |
	awk 'NR == FNR { ran[$1] = 1; next } !($2 in ran)' - "$times" > "$times.new"
for s in "$@"; do
	r="$logs/$(basename "$s").result"
	if [ -f "$r" ]; then
		read -r rc secs < "$r"
	else
		rc=missing secs=0
	fi
	[ "$rc" = 0 ] || failed="$failed $s"
	printf '%s %s\n' "$secs" "${s##*/}" >> "$times.new"
done
mv -f "$times.new" "$times"
echo "== suite times in $build (s, wall clock, $jobs at a time):"
for s in "$@"; do
	awk -v s="${s##*/}" '$2 == s' "$times"
done | sort -k1,1nr | awk '{ printf "  %6s  %s\n", $1, $2 }'
echo "== all suites: $((end - start)) s"
if [ -n "$failed" ]; then
	echo "FAILED suites:$failed"
	exit 1
fi
echo "all suites passed"
