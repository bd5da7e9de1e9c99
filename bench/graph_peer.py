#!/usr/bin/python3
"""graph_peer.py - the peer of vmheap's dominator tree: networkx's
immediate_dominators (Debian's python3-networkx) on the same graph.

  graph_peer.py EDGES IDOMS

EDGES: "SOURCE TARGET" per reference, SOURCE -1 for the virtual root (as
written by graph_bench gen).  IDOMS: "OBJECT IDOM" per reachable object from
graph_bench dom.  Prints the peer's time and peak RSS, and whether every
immediate dominator agrees; exits 1 if one does not.
"""
import resource
import sys
import time

import networkx

edges_path, ours_path = sys.argv[1], sys.argv[2]
t0 = time.monotonic()
g = networkx.DiGraph()
with open(edges_path) as f:
    g.add_edges_from(tuple(map(int, line.split())) for line in f)
g.add_node(-1)
t1 = time.monotonic()
idom = networkx.immediate_dominators(g, -1)
t2 = time.monotonic()
rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

ours = {}
with open(ours_path) as f:
    for line in f:
        v, d = line.split()
        ours[int(v)] = int(d)
theirs = {v: d for v, d in idom.items() if v != -1}
disagree = [v for v in theirs if ours.get(v) != theirs[v]]
extra = [v for v in ours if v not in theirs]
print("networkx %s: load %.2f s, immediate_dominators %.2f s, peak RSS %d KB"
      % (networkx.__version__, t1 - t0, t2 - t1, rss_kb))
print("reachable: networkx %d, vmheap %d; disagreeing idoms: %d; "
      "reachable only for vmheap: %d"
      % (len(theirs), len(ours), len(disagree), len(extra)))
sys.exit(1 if disagree or extra else 0)
