#!/bin/sh
# check-sizes.sh - fail when a product source file is over 800 lines: a
# file that long does more than one job (HACKING.md "Conventions": small files with
# one job).  Product files are the .c files outside spec/, fuzz/, bench/
# and build output; tests and fuzz targets may be longer.  Split a file by
# job (one job per file, a name that says what it is), not by count.
#
# usage: check-sizes.sh [SOURCE_DIR] [MAX_LINES]
#        prints FILE: N lines (over MAX) for each; exit 1 if any
cd "${1:-.}" || exit 2
max=${2:-800}

find . \( -name .git -o -name build -o -name 'build-*' -o -path ./spec \
	-o -path ./fuzz -o -path ./bench \) -prune -o -name '*.c' -type f -print |
	sort | while read -r f; do
		n=$(wc -l < "$f")
		if [ "$n" -gt "$max" ]; then
			echo "check-sizes: ${f#./}: $n lines (over $max: split it by job)"
		fi
	done | awk '{ print } END { exit NR > 0 }'
