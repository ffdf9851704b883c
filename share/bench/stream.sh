#!/bin/bash
# stream.sh: the edge file on disk or never there (a benchmark, not a test).
#
#   share/bench/stream.sh [--grid RxC] [--runs N] SCALE...
#
# For each scale, N times (default 3) in turn:
#   file    kgen -s S -o DIR/g.kg, then kpart -v DIR/g.kg
#   stream  kgen -s S -o - | kpart -v -
#   cat     cat DIR/g.kg | kpart -v -   (kpart's own work on a stream
#           whose writer is never the bottleneck)
# and prints the best wall time of each, with kpart -v's steps (the best of
# each step).  kpart runs under mpirun -np R*C --bind-to none when R*C > 1.
# Files go to $KBFS_BENCH_DIR (default /tmp/kbfs-stream).  Builds nothing:
# run make first.  Environment: THREADS (default nproc).
set -u
set -o pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=$TOP/bin:$PATH
WORK=${KBFS_BENCH_DIR:-/tmp/kbfs-stream}
THREADS=${THREADS:-$(nproc)}
R=1 C=1 RUNS=3
SCALES=()
while [ $# -gt 0 ]; do
	case $1 in
	--grid) shift; R=${1%%x*} C=${1#*x} ;;
	--runs) shift; RUNS=${1:-} ;;
	-h | --help) sed -n '2,15p' "$0"; exit 0 ;;
	[0-9]*) SCALES+=("$1") ;;
	*) echo "stream.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
[ ${#SCALES[@]} -gt 0 ] || { echo "stream.sh: give at least one SCALE (see --help)" >&2; exit 2; }
case "$R$C$RUNS" in *[!0-9]* | "") echo "stream.sh: --grid RxC and --runs N take numbers" >&2; exit 2 ;; esac
NP=$((R * C))
MPI=()
if [ "$NP" -gt 1 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
	MPI=(mpirun -np "$NP" --bind-to none)
	THREADS=$(( THREADS / NP > 0 ? THREADS / NP : 1 ))
fi
export OMP_NUM_THREADS=$THREADS
mkdir -p "$WORK"
now() { date +%s.%N; }
# kpart -v's step lines as "STEP;SECONDS"
steps() { sed -n 's/^kpart: \(open, pass 1\|pass 2\|sort, dedup\|tdeg\|CSR, rank files\|total\)\([^0-9]*\) \([0-9.]*\) s.*/\1;\3/p' "$1"; }

printf '# stream.sh on %s, %s; %dx%d grid, %s thread(s) a process, %s cores, load %s\n' "$(hostname)" \
	"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$R" "$C" "$THREADS" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)"
printf '# %s\n' "$(kpart --version 2>&1 | head -1)"
for s in "${SCALES[@]}"; do
	g=$WORK/g.kg p=$WORK/p log=$WORK/log
	: >"$log.all"
	for _ in $(seq "$RUNS"); do
		for how in file stream cat; do
			rm -rf "$p"
			t0=$(now)
			# shellcheck disable=SC2002
			case $how in
			file) kgen -q -s "$s" -o "$g" --force && t1=$(now) &&
				"${MPI[@]}" kpart -v -R "$R" -C "$C" -o "$p" "$g" 2>"$log.$how" ;;
			stream) kgen -q -s "$s" -o - | "${MPI[@]}" kpart -v -R "$R" -C "$C" -o "$p" - 2>"$log.$how" ;;
			cat) cat "$g" | "${MPI[@]}" kpart -v -R "$R" -C "$C" -o "$p" - 2>"$log.$how" ;;
			esac || { echo "stream.sh: scale $s, $how failed (see $log.$how)" >&2; exit 1; }
			t2=$(now)
			echo "$how;wall;$(awk -v a="$t0" -v b="$t2" 'BEGIN { print b - a }')" >>"$log.all"
			[ "$how" != file ] || echo "$how;kgen;$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" >>"$log.all"
			steps "$log.$how" | sed "s/^/$how;/" >>"$log.all"
		done
	done
	echo "scale $s: best of $RUNS, seconds"
	awk -F';' '{ k = $1 ";" $2; if (!(k in best) || $3 < best[k]) best[k] = $3; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
		END { for (i = 1; i <= n; i++) { split(order[i], a, ";"); printf "  %-7s %-34s %8.3f\n", a[1], a[2], best[order[i]] } }' "$log.all"
done
