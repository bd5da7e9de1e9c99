#!/bin/sh
# check-includes.sh - fail when the Makefile or a *.mk fragment reads a
# fragment with `-include` (or `sinclude`): a missing fragment is then
# skipped in silence and what it builds and tests drops out of the build
# (without agent/agent.mk the Ruby extension did).  Required fragments are
# read with `include`, which fails on a missing file.  The one allowed
# `-include` is of the dependency files the compiler writes (-MMD): a line
# whose file pattern names '*.d' (they do not exist before the first
# build).
#
# usage: check-includes.sh [SOURCE_DIR]
#        prints FILE:LINE: TEXT for each; exit 1 if any
#        check-includes.sh self-test
#        shows on a fixture tree that the check passes `include` and the
#        -include of .d files, and catches `-include` and `sinclude` of a
#        fragment
if [ "$1" = self-test ]; then
	fix=$(mktemp -d) || exit 2
	trap 'rm -rf "$fix"' EXIT
	mkdir "$fix/lib"
	printf '%s\n' 'include lib/lib.mk' \
		"-include \$(shell find obj -name '*.d' 2>/dev/null)" > "$fix/Makefile"
	: > "$fix/lib/lib.mk"
	if ! sh "$0" "$fix"; then
		echo "check-includes self-test: refused include or the -include of .d files"
		exit 1
	fi
	for bad in '-include lib/other.mk' ' sinclude $(wildcard x/*.mk)'; do
		printf '%s\n' "$bad" > "$fix/lib/lib.mk"
		if sh "$0" "$fix" > /dev/null; then
			echo "check-includes self-test: accepted '$bad'"
			exit 1
		fi
	done
	echo "check-includes self-test: -include and sinclude of a fragment caught"
	exit 0
fi
cd "${1:-.}" || exit 2
find . \( -name .git -o -name build -o -name 'build-*' \) -prune -o \
	\( -name Makefile -o -name '*.mk' \) -type f -print | sort |
	while read -r f; do
		grep -n -E '^[[:space:]]*(-include|sinclude)[[:space:]]' "$f" |
			grep -v -F "'*.d'" |
			sed "s|^|check-includes: ${f#./}:|; s|\$| (use include: a fragment must not be skipped when missing)|"
	done | awk '{ print } END { exit NR > 0 }'
