#!/bin/sh
# check-sleeps.sh - fail when a test file sleeps a fixed time: a call of
# sleep, usleep, nanosleep, clock_nanosleep or spec_sleep_ms in spec/*.c.
# A test waits for the condition it needs instead, through spec/lib's
# wait helpers (spec_wait_begin, SPEC_WAIT_UNTIL, spec_wait_uint; see
# spec/lib/vmheap_spec.h), which are the only code of the tests that
# sleeps, between two looks at a condition.  Comments and string literals
# (a Ruby program's `sleep 0.1`) are not calls and are skipped.
#
# usage: check-sleeps.sh [SOURCE_DIR]    prints FILE:LINE: CALL for each
#                                         one; exit 1 if any
cd "${1:-.}" || exit 2

bad=0
for f in spec/*.c; do
	[ -f "$f" ] || continue
	# the code of the file with comments and literals blanked out,
	# line for line
	hits=$(awk '
	BEGIN { inc = 0 }
	{
		out = ""; n = length($0); i = 1
		while (i <= n) {
			c = substr($0, i, 1); d = substr($0, i, 2)
			if (inc) {
				if (d == "*/") { inc = 0; i += 2 } else i++
				continue
			}
			if (d == "/*") { inc = 1; i += 2; continue }
			if (d == "//") break
			if (c == "\"" || c == "\047") {
				q = c; i++
				while (i <= n && substr($0, i, 1) != q)
					i += (substr($0, i, 1) == "\\") ? 2 : 1
				i++; out = out q q; continue
			}
			out = out c; i++
		}
		if (match(out, /(^|[^A-Za-z0-9_])(sleep|usleep|nanosleep|clock_nanosleep|spec_sleep_ms)[ \t]*\(/)) {
			call = substr(out, RSTART, RLENGTH)
			sub(/^[^A-Za-z_]/, "", call); sub(/[ \t]*\($/, "", call)
			printf "%s:%d: %s()\n", FILENAME, FNR, call
		}
	}' "$f")
	if [ -n "$hits" ]; then
		echo "$hits"
		bad=1
	fi
done
if [ "$bad" = 1 ]; then
	echo "check-sleeps: a test sleeps a fixed time; wait for the condition" \
		"it stands for (spec_wait_begin/SPEC_WAIT_UNTIL in spec/lib)" >&2
	exit 1
fi
echo "check-sleeps: no fixed sleep in spec/*.c"
