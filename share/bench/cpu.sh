#!/bin/sh
# cpu.sh: kbfs's CPU engine on the Graph500 benchmark (a benchmark, not a test).
# Usage: share/bench/cpu.sh [SCALE [RANKS]]   (from the repository root, after make)
# Defaults: scale 20, 2 ranks, run on a 1xRANKS and a RANKSx1 grid with the
# 64 reference roots, validation on.  Prints per grid the harmonic-mean TEPS,
# the mean validation time per root and the per-level breakdown of the first
# root (from the JSON record).  Extra kbfs options go in KBFS_OPTS.
# The Graph500 reference 3.0.1 makes 40.3 M TEPS at scale 20 on 2 ranks of
# this machine class (validation 1.28 s per root); kbfs's goal is 5x that.
set -e
SCALE=${1:-20}
NP=${2:-2}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$TOP/bin
W=$(mktemp -d "${TMPDIR:-/tmp}/kbfs-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
command -v mpirun >/dev/null || { echo "cpu.sh: needs mpirun" >&2; exit 3; }
"$BIN/kgen" -q -s "$SCALE" -o "$W/g.kg"
echo "kbfs cpu: scale $SCALE, $NP ranks, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
for grid in "1 $NP" "$NP 1"; do
	set -- $grid
	"$BIN/kpart" -q -R "$1" -C "$2" -o "$W/p$1x$2" "$W/g.kg"
	mpirun -np "$NP" "$BIN/kbfs" -q --json "$W/j$1x$2.json" ${KBFS_OPTS:-} "$W/p$1x$2" >"$W/out$1x$2"
	awk -v g="$1x$2" '
		/harmonic_mean_TEPS/ { teps = $NF }
		/bfs  mean_time:/ { t = $NF }
		/bfs  mean_validate:/ { v = $NF }
		/validation: *skipped/ { v = "skipped" }
		END { printf "grid %s: harmonic-mean TEPS %.4g (%.1f x reference 40.3 M), mean BFS time %.4g s, validation %s s per root\n",
			g, teps, teps / 40.3e6, t, v }' "$W/out$1x$2"
	# per-level breakdown of root 0 (the JSON is pretty-printed, one key a line)
	awk '
		/"levels": \[/ { inlv = 1; next }
		inlv && /^      \]/ { exit }
		inlv && /"level":/ { gsub(/[^0-9]/, ""); l = $0 }
		inlv && /"direction":/ { d = $2; gsub(/[",]/, "", d) }
		inlv && /"frontier":/ { gsub(/[^0-9]/, ""); f = $0 }
		inlv && /"edges_examined":/ { gsub(/[^0-9]/, ""); e = $0 }
		inlv && /"bytes": \{/ { inb = 1; nb = 0; next }
		inb && /\}/ { inb = 0; next }
		inb { v = $2; gsub(/,/, "", v); b[++nb] = v; next }
		inlv && /"time": \{/ { intm = 1; nt = 0; next }
		intm && /\}/ { intm = 0
			if (!hdr) { printf "  %-5s %-9s %10s %11s %10s %10s %10s   %s\n", "level", "direction", "frontier",
				"examined", "B expand", "B fold", "B sv", "ms: expand local fold update sv allreduce"; hdr = 1 }
			printf "  %-5s %-9s %10s %11s %10s %10s %10s  ", l, d, f, e, b[1], b[2], b[3]
			for (k = 1; k <= nt; k++) printf " %.3f", t[k] * 1000
			printf "\n"; next }
		intm { v = $2; gsub(/,/, "", v); t[++nt] = v; next }' "$W/j$1x$2.json"
done
