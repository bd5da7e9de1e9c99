#!/bin/sh
# Install the Debian packages vmheap needs to build, test, demo and bench.
# Quiet and idempotent when everything is present.  As root it runs
# apt-get (updating the package lists first: a fresh machine may have
# none); otherwise it prints the exact command to run.
PKGS="build-essential pkg-config libmsgpack-dev libevent-dev check libedit-dev
ruby ruby-dev tmux jq time clang libclang-rt-14-dev valgrind procps
python3-networkx openjdk-17-jdk-headless libunwind-dev libdw-dev heaptrack
chromium nodejs strace libprotobuf-c-dev protobuf-c-compiler zlib1g-dev
golang-go abigail-tools libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0
clang-format-14"
missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)
	[ "$st" = "installed" ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "deps: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || exit 1
	apt-get install -y -qq --no-install-recommends $missing >/dev/null || exit 1
else
	echo "deps: missing packages:$missing"
	echo "deps: run: sudo apt-get update && sudo apt-get install -y$missing"
	exit 1
fi
