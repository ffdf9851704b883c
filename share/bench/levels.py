#!/usr/bin/env python3
"""levels.py RUN.json...: where a kbfs search's time goes, from its JSON.

For each run: the grid, the mean search time, the mean over roots of each
phase summed over a search's levels (expand, local, fold, update, sv,
allreduce), what is left of the search time outside the levels (reset,
the final predecessor step, barriers; the predecessors' own share, pred_time,
in brackets), the levels per search and the
bytes of each exchange; the small levels (every root's levels whose frontier and found
vertices are at most 32768 each, 4 KiB as bits): their count and the median of their local step, of their
exchange phases (expand, fold, update, sv, allreduce: on one GPU the
update alone) and of their whole, a level's fixed cost; then the
per-level table of the median root.
A benchmark aid (share/bench), not used by the tests.
"""
import json
import statistics
import sys

PH = ["expand", "local", "fold", "update", "sv", "allreduce"]
XG = ["expand", "fold", "sv"]


def us(x):
    return "%.1f" % (x * 1e6)


def one(path):
    d = json.load(open(path))
    roots = d.get("roots", [])
    if not roots:
        print("%s: no roots" % path)
        return
    g = d.get("grid", {})
    grid = "%sx%s" % (g.get("R"), g.get("C"))
    tm = statistics.mean(r["time"] for r in roots)
    sums = {p: statistics.mean(sum(l["time"][p] for l in r["levels"]) for r in roots) for p in PH}
    lev = statistics.mean(len(r["levels"]) for r in roots)
    inl = sum(sums.values())
    byt = {x: statistics.mean(sum(l["bytes"][x] for l in r["levels"]) for r in roots) for x in XG}
    hm = len(roots) / sum(1.0 / r["teps"] for r in roots if r["teps"] > 0)
    pt = statistics.mean(r.get("pred_time", 0.0) for r in roots)
    print("%s: grid %s, %s/%s, %d roots, %.1f levels, mean search %s us, harmonic %.1f GTEPS" %
          (path, grid, d.get("engine"), d.get("transport"), len(roots), lev, us(tm), hm / 1e9))
    print("  per search (us): " + "  ".join("%s %s" % (p, us(sums[p])) for p in PH) +
          "  outside levels %s (predecessors %s)" % (us(tm - inl), us(pt)))
    print("  per search (bytes sent per rank, summed over ranks): " +
          "  ".join("%s %.0f" % (x, byt[x]) for x in XG))
    small = [l for r in roots for l in r["levels"] if l["frontier"] <= 32768 and l["found"] <= 32768]
    if small:
        xp = [p for p in PH if p != "local"]
        med = lambda f: us(statistics.median(f(l) for l in small))
        print("  small levels (frontier and found <= 32768): %d of %d, median (us): local %s, exchange phases %s, "
              "whole %s" % (len(small), sum(len(r["levels"]) for r in roots), med(lambda l: l["time"]["local"]),
                            med(lambda l: sum(l["time"][p] for p in xp)),
                            med(lambda l: sum(l["time"][p] for p in PH))))
    rs = sorted(roots, key=lambda r: r["time"])
    r = rs[len(rs) // 2]
    print("  median root %d, %s us:" % (r["root"], us(r["time"])))
    print("    %3s %-9s %11s %11s %11s " % ("lvl", "dir", "frontier", "found", "examined") +
          " ".join("%9s" % p for p in PH) + " " + " ".join("%11s" % ("B_" + x) for x in XG))
    for l in r["levels"]:
        print("    %3d %-9s %11d %11d %11d " % (l["level"], l["direction"], l["frontier"], l["found"],
                                                l["edges_examined"]) +
              " ".join("%9s" % us(l["time"][p]) for p in PH) + " " +
              " ".join("%11d" % l["bytes"][x] for x in XG))


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) >= 2 else 2
    for p in sys.argv[1:]:
        one(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
