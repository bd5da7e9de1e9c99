#!/bin/sh
# check-agent-calls.sh - fail when files of the agent call one another in
# a circle: a.c calls a function defined in b.c, which (through any number
# of other agent files) calls one defined in a.c.  The calls are read from
# the built objects with nm: a file calls another when one of its
# undefined symbols (U) is a function the other defines (T).  Each file's
# direct callees are printed with -v; a circle is printed as the files it
# joins.
#
# usage: check-agent-calls.sh [-v] OBJECT_DIR   (e.g. build/obj/agent)
#        exit 1 if there is a circle, 2 if OBJECT_DIR has no objects
verbose=0
if [ "$1" = -v ]; then verbose=1; shift; fi
dir=${1:?usage: check-agent-calls.sh [-v] OBJECT_DIR}
set -- "$dir"/*.o
[ -f "$1" ] || { echo "check-agent-calls: no objects in $dir" >&2; exit 2; }

for o in "$@"; do
	f=$(basename "$o" .o)
	nm "$o" | awk -v f="$f" '$1 == "U" { print "U", f, $2 } $2 == "T" { print "T", f, $3 }'
done | awk -v verbose="$verbose" '
$1 == "T" { def[$3] = $2; files[$2] = 1; next }
$1 == "U" { use[++n] = $2 SUBSEP $3; files[$2] = 1 }
END {
	for (i = 1; i <= n; i++) {
		split(use[i], p, SUBSEP)
		if ((p[2] in def) && def[p[2]] != p[1]) {
			e = p[1] SUBSEP def[p[2]]
			if (!(e in edge)) { edge[e] = p[2]; reach[e] = 1 }
		}
	}
	if (verbose) {
		for (e in edge) { split(e, p, SUBSEP); print p[1] ".c -> " p[2] ".c (" edge[e] ")" }
	}
	# transitive closure (Warshall): a few dozen files
	for (k in files) for (i in files) if ((i SUBSEP k) in reach)
		for (j in files) if ((k SUBSEP j) in reach) reach[i SUBSEP j] = 1
	bad = 0
	for (i in files) {
		if (!((i SUBSEP i) in reach) || (i in seen)) continue
		ring = ""
		for (j in files) if ((i SUBSEP j) in reach && (j SUBSEP i) in reach) {
			seen[j] = 1; ring = ring " " j ".c"
		}
		print "check-agent-calls: these files call one another in a circle:" ring
		bad = 1
	}
	exit bad
}'
