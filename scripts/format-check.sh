#!/bin/sh
# format-check.sh - fail when a line of C changed since the format base does
# not match .clang-format (clang-format-14, through git-clang-format-14):
# only the lines changed since then, so that older code, formatted or not,
# does not fail it.  The base is the commit in .format-base (the last
# commit of main known green; HACKING.md "Formatting"), or BASE; the
# changes are those of the working tree (committed or not) since the
# merge-base of HEAD and the base.
#
# usage: format-check.sh [SOURCE_DIR [BASE]]
#        prints the changes clang-format asks for; exit 1 if any
#        format-check.sh --fix [SOURCE_DIR [BASE]]
#        applies them to the working tree (make format-changed)
#        format-check.sh self-test
#        shows in a scratch repository that a badly formatted changed
#        line fails, and an old one and a well formatted change pass
gcf=git-clang-format-14
cf=clang-format-14
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
if [ "$1" = self-test ]; then
	d=$(mktemp -d) || exit 2
	trap 'rm -rf "$d"' EXIT
	cd "$d" || exit 2
	git init -q . && git config user.email t@t && git config user.name t || exit 2
	cp "$(dirname "$self")/../.clang-format" . || exit 2
	printf 'int  old_badly_formatted( void ) {return 1;}\n' > a.c
	git add . && git commit -qm base && base=$(git rev-parse HEAD)
	echo "$base" > .format-base
	printf 'int well(void)\n{\n\treturn 2;\n}\n' > b.c
	git add b.c && git commit -qm good
	if ! sh "$self" "$d" > out 2>&1; then
		cat out
		echo "format-check self-test: refused an old badly formatted line or a good change"
		exit 1
	fi
	printf 'int  bad( void ) {return 3;}\n' >> b.c
	if sh "$self" "$d" > out 2>&1; then
		echo "format-check self-test: accepted a badly formatted new line"
		exit 1
	fi
	sh "$self" --fix "$d" > /dev/null 2>&1
	if ! sh "$self" "$d" > out 2>&1; then
		cat out
		echo "format-check self-test: --fix did not fix it"
		exit 1
	fi
	echo "format-check self-test: a badly formatted changed line caught, old lines left alone"
	exit 0
fi
fix=
if [ "$1" = --fix ]; then
	fix=1
	shift
fi
cd "${1:-.}" || exit 2
if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	echo "format-check: not a git checkout: nothing to compare with (skipped)"
	exit 0
fi
base=${2:-$(cat .format-base 2>/dev/null)}
[ -n "$base" ] || { echo "format-check: no base (.format-base)"; exit 2; }
mb=$(git merge-base HEAD "$base" 2>/dev/null) ||
	{ echo "format-check: the base $base is not in this history (.format-base)"; exit 2; }
command -v $gcf > /dev/null || { echo "format-check: $gcf missing (make deps)"; exit 2; }
if [ -n "$fix" ]; then
	$gcf --binary $cf --extensions c,h -f "$mb"
	exit 0
fi
# (git-clang-format-14 exits 0 with or without changes to ask for: its
# output tells, a diff or one of its two "nothing to do" lines)
out=$($gcf --binary $cf --diff --extensions c,h "$mb" 2>&1)
rc=$?
short=$(git rev-parse --short "$mb")
if [ $rc -ne 0 ]; then
	printf '%s\n' "$out"
	echo "format-check: $gcf failed (exit $rc)"
	exit 2
fi
if printf '%s\n' "$out" | grep -q '^diff --git'; then
	printf '%s\n' "$out"
	echo "format-check: the lines above, changed since $short (.format-base), do not match .clang-format: make format-changed"
	exit 1
fi
case $out in
"no modified files to format" | "clang-format did not modify any files")
	echo "format-check: the C lines changed since $short match .clang-format"
	exit 0
	;;
esac
printf '%s\n' "$out"
echo "format-check: unexpected output of $gcf"
exit 2
