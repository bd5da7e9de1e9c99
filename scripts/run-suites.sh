#!/bin/sh
# Run every test suite; print each one's Check summary; fail if any fails.
# usage: run-suites.sh BUILD_DIR SUITE...
build=$1; shift
export VMHEAP_BUILD="$build"
export VMHEAP_SRC="$(pwd)"
failed=""
for s in "$@"; do
	echo "== $s"
	if ! "$s"; then failed="$failed $s"; fi
done
if [ -n "$failed" ]; then
	echo "FAILED suites:$failed"
	exit 1
fi
echo "all suites passed"
