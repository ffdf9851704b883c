#!/bin/sh
# kgen.sh: kgen's generation rate at scale 20 (default).
# Usage: share/bench/kgen.sh [--engine cpu|cuda|auto] [SCALE]
#   (run from the repository root after make)
# cpu (default): 1 thread and all cores, edges per second per core.
# cuda / auto: one run on this machine's first GPU (CUDA_VISIBLE_DEVICES
# respected), and the times kgen -v reports: the device's kernels, the
# copies to the host, the writer's wait, the writing (kedge to /dev/null:
# encoding and checksums) and the wall time.
# The Graph500 reference 3.0.1 makes 16.8 M edges in 4.03 s on 2 ranks here:
# about 2.1 M edges/s per core.
set -e
ENGINE=cpu
if [ "${1:-}" = --engine ]; then
	ENGINE=${2:?--engine needs cpu, cuda or auto}
	shift 2
fi
SCALE=${1:-20}
BIN=$(cd "$(dirname "$0")/../../bin" && pwd)
M=$((16 << SCALE))
cores=$(nproc)
if [ "$ENGINE" != cpu ]; then
	err=$(mktemp)
	start=$(date +%s.%N)
	"$BIN/kgen" -q -v --engine "$ENGINE" -s "$SCALE" -o /dev/null --force 2>"$err" || { cat "$err" >&2; exit 1; }
	end=$(date +%s.%N)
	grep -e 'engine' -e 'bound GPU' -e 'generated on' "$err" | grep -v "cannot record" || true
	awk -v m="$M" -v s="$start" -v e="$end" -v sc="$SCALE" -v en="$ENGINE" 'BEGIN {
		d = e - s; printf "kgen --engine %s scale %d (%d edges): %.3f s wall, %.1f M edges/s wall\n", en, sc, m, d, m / d / 1e6 }'
	rm -f "$err"
	exit 0
fi
for t in 1 $cores; do
	start=$(date +%s.%N)
	OMP_NUM_THREADS=$t "$BIN/kgen" -q --engine cpu -s "$SCALE" -o /dev/null --force
	end=$(date +%s.%N)
	awk -v m="$M" -v s="$start" -v e="$end" -v t="$t" -v sc="$SCALE" 'BEGIN {
		d = e - s; printf "kgen scale %d, %d thread(s): %.3f s, %.1f M edges/s, %.1f M edges/s per core\n",
		sc, t, d, m / d / 1e6, m / d / 1e6 / t }'
done
echo "reference 3.0.1 (2 ranks, this machine class): 4.03 s, 4.2 M edges/s, 2.1 M edges/s per core"
