#!/bin/sh
# Run the libFuzzer targets: first replay spec/regress/<target>/*, then
# fuzz each target for SECONDS from its seeds and its saved corpus.
#
# usage: fuzz/run.sh BUILD_DIR SRC_DIR SECONDS [TARGET...]
#
# Prints one line per target (executions, seconds, corpus size, result)
# and a closing line "fuzz: P passed, F failed"; exits 1 if any target
# crashed, leaked, hung or failed a regression input.  A crashing input is
# saved as BUILD_DIR/fuzz/crashes/<target>-crash-<sha1>: add it to
# spec/regress/<target>/ once fixed.
build=$1
src=$2
seconds=$3
shift 3
targets=${*:-reader protocol discovery client import_json import_hprof native histogram native_sites cgroup cfa scan trace replay}
fz="$build/fuzz"
passed=0
failed=0
mkdir -p "$fz/crashes" "$fz/logs"
for t in $targets; do
	bin="$fz/fuzz_$t"
	corpus="$fz/corpus/$t"
	log="$fz/logs/$t.$$.log"
	mkdir -p "$corpus"
	if [ ! -x "$bin" ]; then
		echo "fuzz_$t: FAILED (not built: $bin)"
		failed=$((failed + 1))
		continue
	fi
	# the targets' scratch files (discovery files, dumps) stay in here,
	# one directory per run (runs may overlap)
	mkdir -p "$fz/tmp"
	scratch=$(mktemp -d "$fz/tmp/$t.XXXXXX")
	reg="$src/spec/regress/$t"
	nreg=0
	if [ -d "$reg" ] && [ -n "$(ls -A "$reg" 2>/dev/null)" ]; then
		nreg=$(ls -A "$reg" | wc -l)
		if ! TMPDIR="$scratch" "$bin" -runs=1 "$reg"/* >"$fz/logs/$t-regress.$$.log" 2>&1; then
			echo "fuzz_$t: FAILED on a regression input of spec/regress/$t (see $fz/logs/$t-regress.$$.log)"
			tail -n 30 "$fz/logs/$t-regress.$$.log"
			rm -rf "$scratch"
			failed=$((failed + 1))
			continue
		fi
		rm -f "$fz/logs/$t-regress.$$.log"
	fi
	start=$(date +%s)
	TMPDIR="$scratch" "$bin" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$fz/crashes/$t-" \
		"$corpus" "$fz/seeds/$t" >"$log" 2>&1
	rc=$?
	end=$(date +%s)
	rm -rf "$scratch"
	mv "$log" "$fz/logs/$t.log"
	log="$fz/logs/$t.log"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	size=$(ls -A "$corpus" | wc -l)
	if [ $rc -eq 0 ]; then
		echo "fuzz_$t: ok, ${execs:-?} executions in $((end - start)) s, corpus $size inputs, $nreg regression inputs replayed"
		passed=$((passed + 1))
	else
		echo "fuzz_$t: FAILED (exit $rc) after $((end - start)) s; log $log:"
		grep -a -E 'ERROR|SUMMARY|Test unit written|abort|protocol_fuzz|==[0-9]+==' "$log" | head -n 20
		failed=$((failed + 1))
	fi
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
