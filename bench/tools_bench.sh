#!/bin/sh
# bench/tools_bench.sh - vmheap-histo and vmheap-diff on synthetic dumps
# made by bench/gen_dump, against cat (reading the same file).
#
#   sh bench/tools_bench.sh BUILD_DIR [OBJECTS]     (make bench-tools)
#
# Writes two dumps of OBJECTS objects (default 3000000; the second one
# with a tenth more, a leak) under BUILD_DIR/bench-tools, with edge names
# as the Ruby host writes them (format 1.1, gen_dump -N; GEN_FLAGS=
# for none), then prints, as
# the best of RUNS runs (default 5) with a warm page cache:
#   cat DUMP >/dev/null, vmheap-histo DUMP, and their ratio, by wall
#   time and by CPU time (user + system; issue 32's target: 2x);
#   cat OLD NEW against the class diff (vmheap-diff --no-suspects), alike;
#   vmheap-diff OLD NEW and vmheap-diff --objects OLD NEW;
#   the peak RSS of vmheap-histo on a dump a tenth the size and on the full
#   one (it must not grow with the dump);
#   the class diff's leak suspects section: vmheap-diff with and without it
#   (--no-suspects) on a pair a third the size (under the section's limit
#   of 2000000 objects of NEW), and vmheap-diff --suspects on the full pair
#   (what the section would cost there), with their peak RSS.
set -e
build=${1:?usage: tools_bench.sh BUILD_DIR [OBJECTS]}
n=${2:-3000000}
runs=${RUNS:-5}
dir=$build/bench-tools
mkdir -p "$dir"
gen=$build/bench/gen_dump
histo=$build/bin/vmheap-histo
diff=$build/bin/vmheap-diff
old=$dir/old.vmheap
new=$dir/new.vmheap
small=$dir/small.vmheap
mid_old=$dir/mid_old.vmheap
mid_new=$dir/mid_new.vmheap
flags=${GEN_FLAGS--N}
rm -f "$old" "$new" "$small" "$mid_old" "$mid_new"
"$gen" $flags -n "$n" "$old"
"$gen" $flags -n "$n" -g $((n / 10)) "$new"
"$gen" $flags -n $((n / 10)) "$small"
"$gen" $flags -n $((n / 3)) "$mid_old"
"$gen" $flags -n $((n / 3)) -g $((n / 30)) "$mid_new"

now() { date +%s%N; }

# best wall time of $runs runs of "$@", in milliseconds (3 decimals)
best() {
	b=
	i=0
	while [ $i -lt "$runs" ]; do
		t0=$(now)
		"$@" >/dev/null
		t1=$(now)
		t=$((t1 - t0))
		if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
		i=$((i + 1))
	done
	echo "$b"
}
# best CPU time of $runs runs of "$@", in nanoseconds: perf's task-clock
# (all threads; /usr/bin/time's 10 ms steps are too coarse here), or 0
# when perf cannot count
best_cpu() {
	b=
	i=0
	while [ $i -lt "$runs" ]; do
		t=$(perf stat -x, -e task-clock "$@" 2>&1 >/dev/null |
			awk -F, '/task-clock/ { printf "%d", $1 * 1e6 }')
		t=${t:-0}
		if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
		i=$((i + 1))
	done
	echo "$b"
}
ms() { awk -v ns="$1" 'BEGIN { printf "%.1f", ns / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

cat "$old" "$new" "$mid_old" "$mid_new" >/dev/null # warm the page cache
size=$(wc -c <"$old")
c=$(best cat "$old")
h=$(best "$histo" "$old")
h1=$(best "$histo" --threads 1 "$old")
cc=$(best_cpu cat "$old")
hc=$(best_cpu "$histo" "$old")
c2=$(best cat "$old" "$new")
dnw=$(best "$diff" --no-suspects "$old" "$new")
c2c=$(best_cpu cat "$old" "$new")
dnc=$(best_cpu "$diff" --no-suspects "$old" "$new")
d=$(best "$diff" "$old" "$new")
o=$(best "$diff" --objects "$old" "$new")
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
rs=$(rss "$histo" "$small")
rf=$(rss "$histo" "$old")
sm=$(best "$diff" "$mid_old" "$mid_new")
sn=$(best "$diff" --no-suspects "$mid_old" "$mid_new")
sf=$(best "$diff" --suspects "$old" "$new")
dn=$(best "$diff" --no-suspects "$old" "$new")
rsm=$(rss "$diff" "$mid_old" "$mid_new")
rsn=$(rss "$diff" --no-suspects "$mid_old" "$mid_new")
rsf=$(rss "$diff" --suspects "$old" "$new")

echo "vmheap-histo / vmheap-diff on $n objects ($size bytes of dump), best of $runs, $(nproc) CPUs"
echo "  cat DUMP >/dev/null         $(ms "$c") ms"
echo "  vmheap-histo DUMP           $(ms "$h") ms   ratio to cat $(ratio "$h" "$c") (target <= 2)"
echo "  vmheap-histo --threads 1    $(ms "$h1") ms   ratio to cat $(ratio "$h1" "$c")"
echo "  CPU time: cat $(ms "$cc") ms, vmheap-histo $(ms "$hc") ms   ratio $(ratio "$hc" "$cc")"
echo "  cat OLD NEW >/dev/null      $(ms "$c2") ms"
echo "  vmheap-diff --no-suspects   $(ms "$dnw") ms   ratio to cat $(ratio "$dnw" "$c2") (the class diff; target <= 2)"
echo "  CPU time: cat $(ms "$c2c") ms, the class diff $(ms "$dnc") ms   ratio $(ratio "$dnc" "$c2c")"
echo "  vmheap-diff OLD NEW         $(ms "$d") ms"
echo "  vmheap-diff --objects       $(ms "$o") ms"
echo "  histo peak RSS: $rs KB at $((n / 10)) objects, $rf KB at $n objects"
echo "  suspects section, $((n / 3)) objects (NEW $((n / 3 + n / 30))):"
echo "    vmheap-diff OLD NEW       $(ms "$sm") ms, peak RSS $rsm KB (with the section)"
echo "    vmheap-diff --no-suspects $(ms "$sn") ms, peak RSS $rsn KB"
echo "  above the section's limit, $n objects: vmheap-diff --no-suspects $(ms "$dn") ms;"
echo "    vmheap-diff --suspects    $(ms "$sf") ms, peak RSS $rsf KB (what the section would cost)"
