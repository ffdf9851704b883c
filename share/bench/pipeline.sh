#!/bin/bash
# pipeline.sh: the whole Graph500 run, stage by stage, as a user runs it:
# kgen -s SCALE, kpart -R 1 -C 1 (the default order), kbfs -n ROOTS with
# validation; one table row per stage with its wall time, the generation
# and writing times kgen -v reports, and the search and validation totals
# kbfs reports.  --engine goes to kgen, kpart and kbfs (kpart's auto is the
# CPU until its device path is verified: give --engine cuda to time it).
# Builds nothing: run `make` first.
#
#   share/bench/pipeline.sh [--engine cpu|cuda|auto] [--roots N] SCALE...
#
# Files go to $KBFS_BENCH_DIR (default /tmp/kbfs-pipeline; scale 26 needs
# ~25 GB), each run's output to ${OUT:-share/bench/out}/pipeline-sS.*.
# Environment: THREADS (default nproc), KBFS_ARGS (extra kbfs options).
set -u
set -o pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=$TOP/bin:$PATH
WORK=${KBFS_BENCH_DIR:-/tmp/kbfs-pipeline}
OUTD=${OUT:-$TOP/share/bench/out}
THREADS=${THREADS:-$(nproc)}
ENGINE=auto
ROOTS=64
SCALES=()
while [ $# -gt 0 ]; do
	case $1 in
	--engine) shift; ENGINE=${1:-} ;;
	--roots) shift; ROOTS=${1:-} ;;
	-h | --help) sed -n '2,12p' "$0"; exit 0 ;;
	[0-9]*) SCALES+=("$1") ;;
	*) echo "pipeline.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[ ${#SCALES[@]} -gt 0 ] || { echo "pipeline.sh: give at least one SCALE (see --help)" >&2; exit 2; }
for p in kgen kpart kbfs; do
	command -v "$p" >/dev/null || { echo "pipeline.sh: $TOP/bin/$p missing: run make first" >&2; exit 3; }
done
mkdir -p "$WORK" "$OUTD"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# field NAME FILE: the value of a reference-format statistics line
field() { awk -v k="$2" '$0 ~ "^" k ":" { print $NF; exit }' "$1"; }

printf '# pipeline.sh on %s, %s; engine %s, %s roots, %s threads\n' "$(hostname)" \
	"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$ENGINE" "$ROOTS" "$THREADS"
printf '# %s\n' "$(kbfs --version 2>&1 | head -1)"
printf '%-6s %-26s %10s  %s\n' scale stage seconds detail
for s in "${SCALES[@]}"; do
	g=$WORK/s$s.kg p=$WORK/s$s.kpart log=$OUTD/pipeline-s$s
	rm -rf "$g" "$p"
	t0=$(now)
	OMP_NUM_THREADS=$THREADS kgen -q -v --engine "$ENGINE" -s "$s" -o "$g" 2>"$log.kgen.err" || { echo "pipeline.sh: kgen -s $s failed (see $log.kgen.err)" >&2; exit 1; }
	t1=$(now)
	OMP_NUM_THREADS=$THREADS kpart -q -v --engine "$ENGINE" -R 1 -C 1 -o "$p" "$g" 2>"$log.kpart.err" || { echo "pipeline.sh: kpart failed (see $log.kpart.err)" >&2; exit 1; }
	t2=$(now)
	# shellcheck disable=SC2086
	OMP_NUM_THREADS=$THREADS kbfs --engine "$ENGINE" -n "$ROOTS" ${KBFS_ARGS:-} "$p" >"$log.kbfs.out" 2>"$log.kbfs.err" ||
		{ echo "pipeline.sh: kbfs failed (see $log.kbfs.err)" >&2; exit 1; }
	t3=$(now)
	nb=$(field "$log.kbfs.out" NBFS)
	mt=$(field "$log.kbfs.out" "bfs  mean_time")
	mv=$(field "$log.kbfs.out" "bfs  mean_validate")
	hm=$(field "$log.kbfs.out" "bfs  harmonic_mean_TEPS")
	printf '%-6s %-26s %10s  %s\n' "$s" "kgen" "$(secs "$t0" "$t1")" "$(sed -n 's/^kgen: engine //p' "$log.kgen.err")"
	# kgen -v: "N edges generated on the WHERE in G s (R M edges/s)...; written in W s; ..."
	sed -n 's/.* generated on the \(.*\) in \([0-9.]*\) s (\([0-9.]*\) M edges\/s).* written in \([0-9.]*\) s.*/\1;\2;\3;\4/p' \
		"$log.kgen.err" | awk -F';' -v s="$s" '{
		printf "%-6s %-26s %10s  %s M edges/s, %s\n", s, "  of which generation", $2, $3, $1
		printf "%-6s %-26s %10s\n", s, "  of which writing", $4 }'
	printf '%-6s %-26s %10s  %s\n' "$s" "kpart 1x1" "$(secs "$t1" "$t2")" "$(sed -n 's/^kpart: engine //p' "$log.kpart.err")"
	# kpart -v: its steps, "kpart: STEP   T s"
	sed -n 's/^kpart: \(open, pass 1\|pass 2\|sort, dedup\|tdeg\|CSR, rank files\)\([^0-9]*\) \([0-9.]*\) s.*/\1\2;\3/p' "$log.kpart.err" |
		awk -F';' -v s="$s" '{ sub(/ +$/, "", $1); printf "%-6s %-26s %10s\n", s, "  " substr($1, 1, 24), $2 }'
	printf '%-6s %-26s %10s  load, %s searches, validation\n' "$s" "kbfs" "$(secs "$t2" "$t3")" "$nb"
	awk -v s="$s" -v n="$nb" -v t="$mt" -v v="$mv" -v h="$hm" 'BEGIN {
		printf "%-6s %-26s %10.3f  %.3f ms each, %.1f GTEPS\n", s, "  of which searches", n * t, t * 1e3, h / 1e9
		printf "%-6s %-26s %10.3f  %.3f s each\n", s, "  of which validation", n * v, v }'
	printf '%-6s %-26s %10s\n' "$s" "total" "$(secs "$t0" "$t3")"
done
