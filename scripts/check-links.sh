#!/bin/sh
# check-links.sh - fail when a Markdown file of the tree points at
# something that is not there:
#
#   - a relative link [text](path) or [text](path#anchor) whose path does
#     not exist relative to the file, or whose #anchor is no heading of the
#     target Markdown file ([text](#anchor) looks in the file itself);
#   - a bare mention of a Markdown file (`FORMAT.md`, see agent/PROTOCOL.md)
#     that exists neither relative to the file nor from the top of the tree
#     (absolute paths and build/ outputs are not checked).
#
# Links with a scheme (https:, mailto:) are not followed.  Fenced code
# blocks are skipped.  The files are the tracked *.md files (git ls-files)
# or, outside a git work tree, every *.md file below the directory.
#
# usage: check-links.sh [SOURCE_DIR]   prints each broken link as
#        FILE:LINE: TARGET (why); exit 1 if any, 0 if none
cd "${1:-.}" || exit 2

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files '*.md')
else
	files=$(find . -name '*.md' -not -path './build/*' | sed 's|^\./||')
fi

# The GitHub anchors of a Markdown file's headings, one a line.
anchors() {
	awk '
	/^```/ { fence = !fence; next }
	fence { next }
	/^#+[ \t]/ {
		h = $0
		sub(/^#+[ \t]+/, "", h)
		sub(/[ \t]+#*[ \t]*$/, "", h)
		h = tolower(h)
		gsub(/[^a-z0-9 _-]/, "", h)
		gsub(/ /, "-", h)
		print h
	}' "$1"
}

# The links of a file as "LINE<TAB>KIND<TAB>TARGET"; KIND is "link" for
# [text](target) and "bare" for a mention of a *.md path.
links() {
	awk '
	/^```/ { fence = !fence; next }
	fence { next }
	{
		line = $0
		rest = line
		while (match(rest, /\]\([^)]+\)/)) {
			t = substr(rest, RSTART + 2, RLENGTH - 3)
			sub(/[ \t].*$/, "", t)   # drop a "title"
			print NR "\tlink\t" t
			rest = substr(rest, RSTART + RLENGTH)
		}
		# bare mentions: outside links, not part of a URL
		gsub(/\[[^]]*\]\([^)]+\)/, "", line)
		gsub(/[a-z]+:\/\/[^ \t)>]*/, "", line)
		while (match(line, /[A-Za-z0-9_.\/-]+\.md([^A-Za-z0-9_]|$)/)) {
			t = substr(line, RSTART, RLENGTH)
			sub(/[^A-Za-z0-9_]$/, "", t)
			print NR "\tbare\t" t
			line = substr(line, RSTART + RLENGTH)
		}
	}' "$1"
}

bad=0
for f in $files; do
	dir=$(dirname "$f")
	tab=$(printf '\t')
	links "$f" | while IFS="$tab" read -r line kind target; do
		case $target in
		*:*) continue ;; # a scheme: https:, mailto:
		esac
		# a bare absolute path is not relative; build/ is made by make
		case $kind:$target in
		bare:/* | bare:build/*) continue ;;
		esac
		path=${target%%#*}
		anchor=
		case $target in
		*#*) anchor=${target#*#} ;;
		esac
		if [ -z "$path" ]; then
			resolved=$f
		elif [ "$kind" = bare ] && [ ! -e "$dir/$path" ] &&
		     [ -e "$path" ]; then
			resolved=$path
		else
			resolved=$dir/$path
		fi
		if [ ! -e "$resolved" ]; then
			echo "$f:$line: $target (no such file: $resolved)"
			echo x
			continue
		fi
		if [ -n "$anchor" ]; then
			case $resolved in
			*.md)
				if ! anchors "$resolved" | grep -qx -- "$anchor"; then
					echo "$f:$line: $target (no heading #$anchor in $resolved)"
					echo x
				fi
				;;
			esac
		fi
	done
done | {
	n=0
	while IFS= read -r out; do
		if [ "$out" = x ]; then
			n=$((n + 1))
		else
			echo "$out"
		fi
	done
	if [ "$n" -gt 0 ]; then
		echo "check-links: $n broken link(s) in Markdown files"
		exit 1
	fi
	echo "check-links: every relative link in the Markdown files resolves"
}
