#!/usr/bin/env python3
"""finders.py EDGES.txt DEPTHDIR [RxC...]: how many parents travel after a
search on grids of several columns, under both crediting rules of the peer
transport (kbfs(1) KBFS_PEER_WON).

EDGES.txt: the graph as 'u v' lines in input ids (kgen -f text, or kgen
--from g.kg -f text); DEPTHDIR: kbfs --depth-out's files (input ids too),
one search a file.  A vertex found at depth d is found by every rank of its
grid row whose column block holds one of its neighbours at depth d - 1 (a
top-down level expands every frontier column; a bottom-up level scans the
row against each rank's columns).  Rule 'lowest': the lowest such column
is credited; 'owner': the vertex's owner when it is one of them.  A parent
credited away from the owner is sent to it after the search.  As kpart(5)
lays a grid out, v's owner sits in the processor column of v's own column
block (v // (N / C)): the owner finds v when one of v's frontier
neighbours lies in that block.  Pure Python: scale 18 takes seconds.
A benchmark aid (share/bench), not used by the tests.
"""
import glob
import os
import sys


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    edges, ddir = argv[1], argv[2]
    grids = [tuple(int(x) for x in g.split("x")) for g in argv[3:]] or [(1, 2), (2, 2), (1, 4)]
    pairs = []
    n = 0
    with open(edges) as f:
        for line in f:
            if not line.strip() or line.startswith(("#", "%")):
                continue
            u, v = (int(x) for x in line.split()[:2])
            if u != v:
                pairs.append((u, v))
            n = max(n, u + 1, v + 1)
    files = sorted(glob.glob(os.path.join(ddir, "depth-*")))
    if not files:
        sys.stderr.write("finders.py: no depth-* files in '%s'\n" % ddir)
        return 1
    # N: the next power of two (a Kronecker graph's vertex count)
    N = 1
    while N < n:
        N *= 2
    adj = [[] for _ in range(N)]
    for u, v in pairs:
        adj[u].append(v)
        adj[v].append(u)
    for f in files:
        dep = [-1] * N
        with open(f) as fh:
            for line in fh:
                a, b = line.split()[:2]
                dep[int(a)] = int(b)
        for R, C in grids:
            if N % (R * C):
                continue
            cb = N // C
            found = lowest = owner = 0
            for v in range(N):
                d = dep[v]
                if d <= 0:
                    continue
                fs = {u // cb for u in adj[v] if dep[u] == d - 1}
                if not fs:
                    continue
                found += 1
                jo = v // cb
                lowest += min(fs) != jo
                owner += jo not in fs
            if found:
                print("%s %dx%d: %d found; parents sent: lowest %d (%.1f%%), owner first %d (%.1f%%)" %
                      (os.path.basename(f), R, C, found, lowest, 100.0 * lowest / found, owner,
                       100.0 * owner / found))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
