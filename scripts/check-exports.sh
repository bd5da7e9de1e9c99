#!/bin/sh
# check-exports.sh - the shared libraries export exactly the functions that
# the public headers mark VMHEAP_EXPORT, and the Ruby extension only its
# Init_ function.
#
# usage: check-exports.sh CPP HEADER... -- LIB... [-- EXT INIT_NAME]
#
#   CPP        a C preprocessor command with the include flags the headers
#              need, as one word list (e.g. "cc -E -Iformat -Iagent")
#   HEADER     the public headers
#   LIB        the shared libraries built from them: each may export only
#              functions a header declares VMHEAP_EXPORT, and together they
#              must export every one of them
#   EXT        a loadable module (the Ruby extension) that must export
#              INIT_NAME and nothing else
#
# Prints one line per problem and exits 1 if there is any; exits 0 and
# prints the number of names checked otherwise.  `self-test` as the only
# argument runs it against libraries that break each rule and checks that
# every break is caught (spec/abi.mk runs both).
set -u

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmheap-exports.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# The dynamic symbols a shared object defines, one per line, sorted.
exports() {
	nm -D --defined-only "$1" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' |
	    sort -u
}

# The names of the functions the headers mark VMHEAP_EXPORT.  The
# preprocessor drops comments, and defining the macro to a marker keeps
# it in its output.
declared() {
	cpp=$1; shift
	for h in "$@"; do
		$cpp -P -DVMHEAP_EXPORT=__vmheap_export_marker__ "$h" ||
		    { echo "cannot preprocess $h" >&2; return 1; }
	done | tr '\n' ' ' | grep -o '__vmheap_export_marker__[^;({]*(' |
	    sed 's/[[:space:]]*($//; s/.*[^A-Za-z0-9_]//' | sort -u
}

check() {
	cpp=$1; shift
	headers=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		headers="$headers $1"; shift
	done
	[ $# -gt 0 ] && shift
	libs=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		libs="$libs $1"; shift
	done
	[ $# -gt 0 ] && shift
	ext=${1:-}; init=${2:-}
	bad=0; checked=0

	# shellcheck disable=SC2086
	declared "$cpp" $headers > "$tmp/declared" || return 1
	if [ ! -s "$tmp/declared" ]; then
		echo "no VMHEAP_EXPORT declarations found in:$headers"
		return 1
	fi
	while read -r name; do
		case $name in
		vmheap_*) ;;
		*) echo "public header declares $name: exported names start with vmheap_"
		   bad=1 ;;
		esac
	done < "$tmp/declared"

	: > "$tmp/all"
	for lib in $libs; do
		if [ ! -f "$lib" ]; then
			echo "$lib: missing"; bad=1; continue
		fi
		exports "$lib" > "$tmp/lib"
		tee -a "$tmp/all" < "$tmp/lib" > /dev/null
		checked=$((checked + $(wc -l < "$tmp/lib")))
		for name in $(comm -23 "$tmp/lib" "$tmp/declared"); do
			echo "$lib exports $name, which no public header declares VMHEAP_EXPORT"
			bad=1
		done
	done
	sort -u "$tmp/all" -o "$tmp/all"
	for name in $(comm -13 "$tmp/all" "$tmp/declared"); do
		echo "$name is declared VMHEAP_EXPORT but no library exports it:$libs"
		bad=1
	done

	if [ -n "$ext" ]; then
		if [ ! -f "$ext" ]; then
			echo "$ext: missing"; bad=1
		else
			exports "$ext" > "$tmp/ext"
			checked=$((checked + $(wc -l < "$tmp/ext")))
			if [ "$(cat "$tmp/ext")" != "$init" ]; then
				echo "$ext must export only $init; it exports:" $(cat "$tmp/ext")
				bad=1
			fi
		fi
	fi
	[ $bad = 0 ] && echo "exports: $checked names checked in$libs${ext:+ $ext}"
	return $bad
}

# Libraries that break each rule, built from a scratch header and sources;
# each must make check() fail and say why.
self_test() {
	cc=${CC:-cc}
	mkdir -p "$tmp/st" && cd "$tmp/st" || return 1
	cat > pub.h <<-'EOF'
	/* VMHEAP_EXPORT in a comment (int vmheap_in_comment(void);) is no declaration */
	#ifndef VMHEAP_EXPORT
	#define VMHEAP_EXPORT __attribute__((visibility("default")))
	#endif
	VMHEAP_EXPORT int vmheap_one(void);
	VMHEAP_EXPORT
	const char *vmheap_two(int code,
			       int more);
	EOF
	cat > good.c <<-'EOF'
	#include "pub.h"
	int vmheap_hidden_helper(void);
	int vmheap_hidden_helper(void) { return 1; }
	int vmheap_one(void) { return vmheap_hidden_helper(); }
	const char *vmheap_two(int code, int more) { return code + more ? "a" : "b"; }
	EOF
	cat > leak.c <<-'EOF'
	#include "pub.h"
	VMHEAP_EXPORT int mpc_skip(void);
	VMHEAP_EXPORT int vmheap_reader_fail(void);
	int mpc_skip(void) { return 0; }
	int vmheap_reader_fail(void) { return 0; }
	int vmheap_one(void) { return 1; }
	const char *vmheap_two(int code, int more) { return code + more ? "a" : "b"; }
	EOF
	cat > short.c <<-'EOF'
	#include "pub.h"
	int vmheap_one(void) { return 1; }
	EOF
	cat > ext.c <<-'EOF'
	int ext_helper(void);
	int ext_helper(void) { return 1; }
	__attribute__((visibility("default"))) int Init_ext(void);
	int Init_ext(void) { return ext_helper(); }
	EOF
	for lib in good leak short ext; do
		$cc -shared -fPIC -fvisibility=hidden -o lib$lib.so $lib.c ||
		    { echo "self-test: cannot build lib$lib.so"; return 1; }
	done
	fails=0
	expect() { # WANT_RC PATTERN ARGS...: check ARGS gives WANT_RC and says PATTERN
		want=$1 pat=$2; shift 2
		out=$(check "$cc -E" pub.h -- "$@" 2>&1); rc=$?
		if [ $rc != "$want" ] || ! printf '%s\n' "$out" | grep -q -- "$pat"; then
			echo "self-test: check $* gave $rc (want $want) and said:"
			printf '%s\n' "$out" | sed 's/^/    /'
			fails=$((fails + 1))
		fi
	}
	expect 0 "3 names checked" ./libgood.so -- ./libext.so Init_ext
	expect 1 "exports mpc_skip, which" ./libleak.so
	expect 1 "exports vmheap_reader_fail, which" ./libleak.so
	expect 1 "vmheap_two is declared VMHEAP_EXPORT but no library" ./libshort.so
	expect 1 "must export only Init_ext" ./libgood.so -- ./libext.so Init_ext_other
	expect 1 "must export only Init_ext" ./libgood.so -- ./libleak.so Init_ext
	cat > pub2.h <<-'EOF'
	#ifndef VMHEAP_EXPORT
	#define VMHEAP_EXPORT __attribute__((visibility("default")))
	#endif
	VMHEAP_EXPORT int helper_without_prefix(void);
	EOF
	out=$(check "$cc -E" pub2.h -- ./libgood.so 2>&1) &&
	    { echo "self-test: a public function without the vmheap_ prefix passed"; fails=$((fails + 1)); }
	printf '%s\n' "$out" | grep -q "declares helper_without_prefix" ||
	    { echo "self-test: no word on helper_without_prefix: $out"; fails=$((fails + 1)); }
	[ $fails = 0 ] && echo "exports self-test: 7 broken libraries caught"
	[ $fails = 0 ]
}

if [ "${1:-}" = self-test ]; then
	self_test
else
	[ $# -ge 3 ] || { sed -n '6,16p' "$0" >&2; exit 2; }
	check "$@"
fi
