#!/bin/sh
# check-install.sh - `make install` into a scratch DESTDIR, then check what
# a user gets:
#   - PREFIX/bin holds the tools of BUILD/bin and not the test VM
#     vmheap-sample;
#   - each pkg-config file links only what its use needs: a program that
#     reads dumps, built with `pkg-config --cflags --libs vmheap`, needs
#     libvmheap and not the agent; one that embeds the agent
#     (vmheap-agent) and one that analyses (vmheap-analysis) need their
#     library; all three run against the installed libraries, and
#     compile without msgpack-c's headers.
#
# usage: ABI_MAJOR=N check-install.sh SOURCE_DIR BUILD_DIR   (BUILD_DIR already built)
src=$1
build=$2
cc=${CC:-cc}
cd "$src" || exit 2
dest=$(mktemp -d) || exit 2
trap 'rm -rf "$dest"' EXIT
fail() {
	echo "check-install: $*"
	exit 1
}
# the build as the Makefile names it (relative when inside the tree: the
# same targets as the build, so nothing is rebuilt)
rel=${build#"$src"/}
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s \
	BUILD="$rel" DESTDIR="$dest" PREFIX=/usr install > "$dest.log" 2>&1 ||
	{ cat "$dest.log"; rm -f "$dest.log"; fail "make install failed"; }
rm -f "$dest.log"

# the tools, without the sample VM
[ -e "$dest/usr/bin/vmheap-sample" ] && fail "installed the test VM vmheap-sample"
for b in "$build"/bin/*; do
	n=$(basename "$b")
	[ "$n" = vmheap-sample ] && continue
	[ -x "$dest/usr/bin/$n" ] || fail "did not install $n"
done

# pkg-config: the installed .pc files, their prefix under DESTDIR
export PKG_CONFIG_PATH="$dest/usr/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_LIBDIR="$dest/usr/lib/pkgconfig:/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/share/pkgconfig"
libs=$(pkg-config --libs vmheap) || fail "pkg-config vmheap"
case " $libs " in
*-lvmheap-agent*|*-levent*|*-lvmheap-analysis*) fail "vmheap.pc links more than libvmheap: $libs" ;;
*" -lvmheap "*) ;;
*) fail "vmheap.pc does not link libvmheap: $libs" ;;
esac

w="$dest/work"
mkdir "$w"
printf '%s\n' '#include <stdio.h>' '#include "vmheap.h"' \
	'int main(void) { return puts(vmheap_strerror(0)) < 0; }' > "$w/reader.c"
printf '%s\n' '#include <stdio.h>' '#include "vmheap_agent.h"' \
	'int main(void) { return vmheap_reply_ok(NULL) || puts(vmheap_agent_strerror(0)) < 0; }' > "$w/agent.c"
# the installed headers need nothing of msgpack-c: a <msgpack.h> found
# first on the include path stops the compile
mkdir "$w/poison"
echo '#error "a public vmheap header includes <msgpack.h>"' > "$w/poison/msgpack.h"
printf '%s\n' '#include <stdio.h>' '#include "vmheap_analysis.h"' \
	'int main(void) { return printf("%u\n", vmheap_scan_threads(NULL)) < 0; }' > "$w/analysis.c"
# ABI_MAJOR: the sonames' major (the Makefile's, set by spec/build.mk)
major=${ABI_MAJOR:?ABI_MAJOR is not set}
for p in reader:vmheap:libvmheap.so.$major agent:vmheap-agent:libvmheap-agent.so.$major \
	analysis:vmheap-analysis:libvmheap-analysis.so.$major; do
	prog=${p%%:*}
	rest=${p#*:}
	pc=${rest%%:*}
	need=${rest#*:}
	# shellcheck disable=SC2046
	$cc -Wl,--no-as-needed -I"$w/poison" -o "$w/$prog" "$w/$prog.c" $(pkg-config --cflags --libs "$pc") \
		> "$w/$prog.log" 2>&1 || { cat "$w/$prog.log"; fail "cannot build a program with $pc.pc"; }
	needed=$(readelf -d "$w/$prog" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
	case " $needed " in
	*" $need "*) ;;
	*) fail "a program built with $pc.pc does not need $need: $needed" ;;
	esac
	LD_LIBRARY_PATH="$dest/usr/lib" "$w/$prog" > /dev/null ||
		fail "a program built with $pc.pc does not run"
	echo "check-install: $pc.pc: needs $needed"
	if [ "$pc" = vmheap ]; then
		case "$needed" in
		*vmheap-agent*|*libevent*|*vmheap-analysis*)
			fail "a dump reader built with vmheap.pc needs more than libvmheap: $needed" ;;
		esac
	fi
done
echo "check-install: PREFIX/bin has $(ls "$dest/usr/bin" | wc -l) tools and no vmheap-sample; every .pc links only its library"
