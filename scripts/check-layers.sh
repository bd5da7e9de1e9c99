#!/bin/sh
# check-layers.sh - fail when a source file includes a header across a
# forbidden arrow of the layout (HACKING.md, "The layering arrows"):
#
#   format/                  -> nothing else of ours
#   files/                   -> nothing else of ours (safe file creation)
#   analysis/                -> format
#   report/                  -> format, analysis
#   agent/                   -> format, files, native (its public header's
#                               types only: the tracker is found with dlsym)
#   native/                  -> format
#   histo/ diff/ console/ run/ -> report, analysis, format, files, agent
#   replay/                  (vmheap-replay, likewise)
#   path/ dominators/         (the graph tools, likewise)
#   html/                    (vmheap-report, likewise)
#   hosts/*/                 -> agent, format
#   hosts/native/            -> agent, format, native (its public header's
#                               types only: the tracker is found with dlsym)
#   import/                  -> format (the converters: the writer only)
#   import/tool/             -> import, report, analysis, format, files
#
# and no folder includes another folder's private (*-internal.h) header.
# Tests, fuzz targets, benchmarks and examples may include anything.
#
# usage: check-layers.sh [SOURCE_DIR]     prints each violation; exit 1 if any
cd "${1:-.}" || exit 2

allowed() { # folder -> the folders it may include from
	case $1 in
	format) echo "format" ;;
	files) echo "files" ;;
	analysis) echo "analysis format" ;;
	report) echo "report analysis format" ;;
	agent) echo "agent format files native" ;;
	native) echo "native format" ;;
	histo | diff | console | run | path | dominators | html | replay) echo "$1 report analysis format files agent" ;;
	hosts/native) echo "$1 agent format native" ;;
	hosts/*) echo "$1 agent format" ;;
	import) echo "import format" ;;
	import/tool) echo "import/tool import report analysis format files" ;;
	*) echo "" ;;
	esac
}

# header basename -> owning folder
headers=$(find format files analysis report agent native histo diff console run replay path dominators html hosts import \
	-name '*.h' 2>/dev/null)

# (with the shell's own string operations: a basename and dirname process
# per header and include took 20 s of make check)
owner() {
	for h in $headers; do
		case $h in
		*/"$1")
			echo "${h%/*}"
			return
			;;
		esac
	done
}

bad=0
for dir in format files analysis report agent native histo diff console run replay path dominators html hosts/* import \
	import/tool; do
	[ -d "$dir" ] || continue
	ok=$(allowed "$dir")
	for f in "$dir"/*.c "$dir"/*.h; do
		[ -f "$f" ] || continue
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			from=$(owner "${inc##*/}")
			[ -n "$from" ] || continue # a system or generated header
			[ "$from" = "$dir" ] && continue
			case " $ok " in
			*" $from "*) ;;
			*)
				echo "check-layers: $f includes $inc: $dir may not use $from"
				bad=1
				continue
				;;
			esac
			case $inc in
			*-internal.h)
				echo "check-layers: $f includes $inc, a private header of $from"
				bad=1
				;;
			esac
		done
	done
done
if [ $bad = 0 ]; then
	echo "check-layers: every include follows the layout"
fi
exit $bad
