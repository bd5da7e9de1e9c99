#!/bin/sh
# check-abi.sh - the shared libraries keep the ABI recorded in abi/*.abi
# (libabigail's abidw baselines), or say that they broke it by a new
# soname major (ABI_MAJOR in the Makefile).
#
# usage: check-abi.sh dump  DIR HEADER... -- LIB...
#        check-abi.sh check DIR HEADER... -- LIB...
#        check-abi.sh self-test
#
#   dump   write DIR/NAME.abi for each LIB, NAME being its soname without
#          the .so.MAJOR ("libvmheap"): its functions and the types that
#          the public HEADERs declare (`make abi-baseline`)
#   check  compare each LIB with DIR/NAME.abi through abidiff: an
#          incompatible change (a function removed, a parameter or a public
#          struct changed) fails unless the soname differs from the one the
#          baseline records, i.e. ABI_MAJOR was raised; compatible changes
#          (functions added) pass and are listed
#
# Exits 0 when every library passes, 1 on a problem (one line each, then
# abidiff's report), 2 on bad usage.  `self-test` builds a scratch library,
# changes it in the ways above and checks that each verdict is right.
set -u

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmheap-abi.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

command -v abidiff > /dev/null && command -v abidw > /dev/null || {
	echo "check-abi.sh: abidw and abidiff are missing (Debian: abigail-tools; make deps)"
	exit 1
}

soname() {
	readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p'
}

# Splits "HEADER... -- LIB..." into $headers and $libs.
split_args() {
	headers="" libs=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		headers="$headers $1"; shift
	done
	[ $# -gt 0 ] && shift
	libs="$*"
	[ -n "$headers" ] && [ -n "$libs" ]
}

# LIB's ABI as abidw writes it (to OUT), the types of $hf's headers public
# and the others (opaque structs' insides) private.  No paths, no line
# numbers: a baseline changes only when the ABI does, and check() compares
# two such files (abidiff's own header filter does not work between a file
# and a library).
abixml() {
	# shellcheck disable=SC2086
	abidw --no-corpus-path --no-comp-dir-path --drop-private-types $hf \
	    --out-file "$2" "$1" || { echo "$1: abidw failed"; return 1; }
	# abidw knows a header by the path the debug information gives it
	# (format/vmheap.h, relative to the directory the compiler ran in):
	# when none matches, every type is private and nothing is compared.
	for h in $headers; do
		grep "filepath='\([^']*/\)\{0,1\}$h'" "$2" |
		    grep -vq "is-declaration-only='yes'" &&
		    return 0
	done
	echo "$1: abidw found no type defined in:$headers (give them as the compiler saw them, from the directory it ran in)"
	return 1
}

# Whether abidiff's report (status $rc, text in $tmp/report) has a change
# that breaks programs built against the baseline: a function or variable
# removed (status bit 8) or changed (a parameter, a return type, a public
# struct it reaches).  Added ones do not.
breaks() {
	[ $((rc & 8)) != 0 ] ||
	    grep -Eq 'summary:.*[^0-9]([1-9][0-9]*) (Removed|Changed)' "$tmp/report"
}

dump() {
	dir=$1; shift
	split_args "$@" || { sed -n '6,8p' "$0" >&2; return 2; }
	hf=""
	for h in $headers; do hf="$hf --hf $h"; done
	mkdir -p "$dir" || return 1
	for lib in $libs; do
		so=$(soname "$lib")
		[ -n "$so" ] || { echo "$lib: no soname"; return 1; }
		abixml "$lib" "$dir/${so%.so.*}.abi" || return 1
		echo "abi: $dir/${so%.so.*}.abi ($so)"
	done
}

check() {
	dir=$1; shift
	split_args "$@" || { sed -n '6,8p' "$0" >&2; return 2; }
	hf=""
	for h in $headers; do hf="$hf --hf $h"; done
	bad=0 n=0
	for lib in $libs; do
		so=$(soname "$lib")
		base="$dir/${so%.so.*}.abi"
		if [ -z "$so" ] || [ ! -f "$base" ]; then
			echo "$lib: no baseline $base; make abi-baseline writes it (commit abi/)"
			bad=1; continue
		fi
		was=$(sed -n "s/.*<abi-corpus [^>]*soname='\([^']*\)'.*/\1/p" "$base" | head -n 1)
		abixml "$lib" "$tmp/now.abi" || { bad=1; continue; }
		suppr=""
		[ -f "$dir/compatible.suppr" ] && suppr="--suppressions $dir/compatible.suppr"
		# shellcheck disable=SC2086
		abidiff $suppr "$base" "$tmp/now.abi" > "$tmp/report" 2>&1
		rc=$?
		n=$((n + 1))
		if [ $((rc & 3)) != 0 ]; then
			echo "$lib: abidiff failed (status $rc):"
			sed 's/^/    /' "$tmp/report"; bad=1
		elif breaks && [ "$was" = "$so" ]; then
			echo "$lib: incompatible ABI change against $base (soname $so):" \
			    "raise ABI_MAJOR in the Makefile, then make abi-baseline"
			sed 's/^/    /' "$tmp/report"; bad=1
		elif breaks; then
			echo "$lib: incompatible ABI change, allowed: the soname went from $was to $so" \
			    "(make abi-baseline records the new ABI)"
		elif [ $((rc & 4)) != 0 ]; then
			echo "$lib: compatible changes against $base (make abi-baseline records them):"
			sed -n 's/^  \[A\] /    added /p' "$tmp/report"
		fi
	done
	[ $bad = 0 ] && echo "abi: $n libraries compatible with their baselines in $dir"
	return $bad
}

# A scratch library, its baseline, and versions of it that keep or break
# its ABI; check() must give each the right verdict.
self_test() {
	cc=${CC:-cc}
	mkdir -p "$tmp/st" && cd "$tmp/st" || return 1
	cat > pub.h <<-'EOF'
	struct st_point { int x; long y; };
	struct st_obj;
	int st_one(const struct st_point *p);
	int st_two(int a);
	struct st_obj *st_new(void);
	EOF
	cat > v1.c <<-'EOF'
	#include "pub.h"
	struct st_obj { int a; };
	int st_one(const struct st_point *p) { return p->x + (int)p->y; }
	int st_two(int a) { return a + 1; }
	struct st_obj *st_new(void) { static struct st_obj o; return &o; }
	EOF
	# a removed function
	sed '/st_two/d' v1.c > removed.c
	# a public struct changed: a member inserted in the middle (the header
	# keeps its name, as in the tree)
	mkdir -p changed
	sed 's/int x; long y;/int x; int z; long y;/' pub.h > changed/pub.h
	cp v1.c changed/changed.c
	# the inside of an opaque struct (declared in the header, defined in
	# the library) changed: compatible
	sed 's/struct st_obj { int a; }/struct st_obj { double b; int a; }/' v1.c > opaque.c
	# a function added: compatible
	{ cat v1.c; echo 'int st_three(void); int st_three(void) { return 3; }'; } > added.c
	build() { # NAME SONAME
		$cc -g -O0 -shared -fPIC -Wl,-soname,"$2" -o "lib$1.so" "$1.c" ||
		    { echo "self-test: cannot build lib$1.so"; return 1; }
	}
	build v1 libst.so.1 && build removed libst.so.1 && build added libst.so.1 &&
	    build opaque libst.so.1 &&
	    (cd changed && build changed libst.so.1) || return 1
	cp removed.c raised.c && build raised libst.so.2 || return 1
	dump base pub.h -- ./libv1.so > /dev/null || { echo "self-test: dump failed"; return 1; }
	fails=0
	expect() { # WANT_RC PATTERN HEADER LIB [DIR]: check, run in DIR, gives WANT_RC and says PATTERN
		out=$(cd "${5:-.}" && check "$tmp/st/base" "$3" -- "$4" 2>&1); rc=$?
		if [ $rc != "$1" ] || ! printf '%s\n' "$out" | grep -q -- "$2"; then
			echo "self-test: check $4 gave $rc (want $1) and said:"
			printf '%s\n' "$out" | sed 's/^/    /'
			fails=$((fails + 1))
		fi
	}
	expect 0 "1 libraries compatible" pub.h ./libv1.so
	expect 1 "incompatible ABI change against .*/base/libst.abi" pub.h ./libremoved.so
	expect 1 "st_two" pub.h ./libremoved.so
	expect 1 "incompatible ABI change against .*/base/libst.abi" pub.h ./libchanged.so changed
	expect 1 "int z" pub.h ./libchanged.so changed
	expect 0 "1 libraries compatible" pub.h ./libopaque.so
	expect 0 "added .*st_three" pub.h ./libadded.so
	expect 0 "allowed: the soname went from libst.so.1 to libst.so.2" pub.h ./libraised.so
	expect 1 "no baseline" pub.h ./libv1.so.missing
	mkdir -p other && cp pub.h other/pub.h
	expect 1 "abidw found no type defined in" other/pub.h ./libv1.so
	[ $fails = 0 ] && echo "abi self-test: a removed function and a changed struct caught, an addition, an opaque struct and a raised soname let through"
	[ $fails = 0 ]
}

case ${1:-} in
self-test) self_test ;;
dump) shift; [ $# -ge 4 ] || { sed -n '6,8p' "$0" >&2; exit 2; }; dump "$@" ;;
check) shift; [ $# -ge 4 ] || { sed -n '6,8p' "$0" >&2; exit 2; }; check "$@" ;;
*) sed -n '6,8p' "$0" >&2; exit 2 ;;
esac
