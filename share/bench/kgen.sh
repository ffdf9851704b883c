#!/bin/sh
# kgen.sh: kgen's generation rate at scale 20 (default), edges per second per core.
# Usage: share/bench/kgen.sh [SCALE]   (run from the repository root after make)
# The Graph500 reference 3.0.1 makes 16.8 M edges in 4.03 s on 2 ranks here:
# about 2.1 M edges/s per core.
set -e
SCALE=${1:-20}
BIN=$(cd "$(dirname "$0")/../../bin" && pwd)
M=$((16 << SCALE))
cores=$(nproc)
for t in 1 $cores; do
	start=$(date +%s.%N)
	OMP_NUM_THREADS=$t "$BIN/kgen" -q -s "$SCALE" -o /dev/null --force
	end=$(date +%s.%N)
	awk -v m="$M" -v s="$start" -v e="$end" -v t="$t" -v sc="$SCALE" 'BEGIN {
		d = e - s; printf "kgen scale %d, %d thread(s): %.3f s, %.1f M edges/s, %.1f M edges/s per core\n",
		sc, t, d, m / d / 1e6, m / d / 1e6 / t }'
done
echo "reference 3.0.1 (2 ranks, this machine class): 4.03 s, 4.2 M edges/s, 2.1 M edges/s per core"
