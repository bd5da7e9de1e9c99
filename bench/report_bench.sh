#!/bin/sh
# report_bench.sh BUILD OBJECTS CLASSES DIR - vmheap-report on pairs of
# gen_dump heaps (the second with a 100,000-object leak) and the load time
# of its file in headless Chromium.  See bench/report.mk.  Two pairs:
#   - CLASSES classes, the second dump the first plus the leak;
#   - 10 x CLASSES classes, the second dump from another seed, so that
#     nearly every class changes and every cap of the report is full
#     (5,000 classes, 5,000 diff rows, 4,000 objects of the tree).
# Fails if the tool fails, a file is 5 MB or more, the page shows an error
# or its diff does not start with the leak.
set -eu
build=$1 n=$2 classes=$3 dir=$4
a=$dir/old.vmheap b=$dir/new.vmheap html=$dir/report.html
trap 'rm -f "$a" "$b" "$dir"/out.*' EXIT

# pair CLASSES SEED: make the two dumps, the report, and load it 5 times
pair() {
	"$build/bench/gen_dump" -n "$n" -c "$1" "$a" 2>/dev/null
	"$build/bench/gen_dump" -n "$n" -c "$1" -s "$2" -g 100000 "$b" \
		2>/dev/null
	echo "== vmheap-report on two gen_dump heaps of $n and" \
	     "$((n + 100001)) objects, $1 classes, second seed $2" \
	     "($(du -m "$b" | cut -f1) MB each)"
	/usr/bin/time -f "%e %M" -o "$dir/out.time" \
		"$build/bin/vmheap-report" -o "$html" "$a" "$b" >/dev/null
	set -- $(cat "$dir/out.time")
	size=$(wc -c <"$html")
	echo "vmheap-report: $1 s, peak RSS $2 KB; file $size bytes" \
	     "($((size / 1024)) KiB)"
	if [ "$size" -ge $((5 * 1024 * 1024)) ]; then
		echo "bench-report: the file is 5 MB or more" >&2
		exit 1
	fi
	loads=""
	for i in 1 2 3 4 5; do
		node spec/report_html_browser.js "file://$(realpath "$html")" \
			"eval:document.querySelector('#diff-table td.name').textContent" \
			>"$dir/out.load"
		grep -q '^{"value":"Leak::Message"}$' "$dir/out.load" || {
			echo "bench-report: the diff does not start with the leak" >&2
			cat "$dir/out.load" >&2
			exit 1
		}
		last=$(tail -1 "$dir/out.load")
		case $last in
		*'"rendered":true,"console_errors":[],"exceptions":[],"dialogs":[]}') ;;
		*)
			echo "bench-report: the page did not render cleanly: $last" >&2
			exit 1
			;;
		esac
		load=$(echo "$last" | sed 's/.*"load_ms":\([0-9]*\).*/\1/')
		painted=$(echo "$last" | sed 's/.*"painted_ms":\([0-9]*\).*/\1/')
		echo "chromium load $i: load event $load ms, painted $painted ms"
		loads="$loads $painted"
	done
	median=$(echo $loads | tr ' ' '\n' | sort -n | sed -n 3p)
	echo "chromium: median $median ms from navigation to painted (of 5 loads)"
}

pair "$classes" 1
pair "$((classes * 10))" 2
