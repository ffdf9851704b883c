#!/bin/bash
# pipeline.sh: the whole Graph500 run, stage by stage, as a user runs it:
# kgen -s SCALE, kpart -R R -C C (the default order), kbfs -n ROOTS with
# validation; one table row per stage with its wall time, the generation
# and writing times kgen -v reports, kpart -v's steps, and kbfs's load,
# copy to the GPU, search and validation totals.  Builds nothing: run
# `make` first.
#
#   share/bench/pipeline.sh [--grid RxC] [--stream|--generate] [--shm] [--engine E]
#                           [--kgen-engine E] [--kpart-engine E] [--kbfs-engine E]
#                           [--validator V] [--roots N] SCALE...
#
# --grid RxC (default 1x1): the partition's grid, one rank a GPU: R*C is
# the number of GPUs; kpart and kbfs run under
# `mpirun -np R*C --bind-to none $MPIRUN_ARGS` when R*C > 1.
# --stream: `kgen -o - | kpart -`, the edge file never on disk (one row,
# "kgen | kpart", for both; kgen's writing is then its time blocked on the
# pipe, kpart's pass 1 its wait for kgen); under mpirun through a named
# pipe in the work directory, which rank 0 opens (mpirun's forwarding of
# its standard input is slower).  --generate: `kpart -s SCALE`, no kgen at
# all (kpart generates the graph, on the GPUs when it builds there; one
# row, "kpart -s").  --shm:
# the files (edge file, partition) in /dev/shm/kbfs-pipeline, memory, not a
# disk.
# --engine (cpu|cuda|auto, default auto) goes to the three programs, the
# --STAGE-engine options to one; --validator to kbfs (auto|device|host).
# The state of 2026-11-23 (before issue 13) is
#   --kgen-engine cpu --kpart-engine cpu --kbfs-engine cuda --validator host
# Files go to $KBFS_BENCH_DIR (default /tmp/kbfs-pipeline; scale 26 needs
# ~27 GB), each run's output to ${OUT:-share/bench/out}/pipeline-sS.*.
# Environment: THREADS (default: nproc for kgen, nproc / (R*C) for a rank
# of kpart and kbfs), KBFS_ARGS (extra kbfs options), MPIRUN_ARGS (extra
# mpirun options, e.g. --oversubscribe).
set -u
set -o pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=$TOP/bin:$PATH
WORK=${KBFS_BENCH_DIR:-/tmp/kbfs-pipeline}
OUTD=${OUT:-$TOP/share/bench/out}
ENGINE=auto
GE= PE= BE= VALIDATOR=auto
ROOTS=64 R=1 C=1 STREAM=0
SCALES=()
while [ $# -gt 0 ]; do
	case $1 in
	--grid) shift; R=${1:-}; C=${R#*x}; R=${R%%x*} ;;
	--stream) STREAM=1 ;;
	--generate) STREAM=2 ;;
	--shm) WORK=/dev/shm/kbfs-pipeline ;;
	--engine) shift; ENGINE=${1:-} ;;
	--kgen-engine) shift; GE=${1:-} ;;
	--kpart-engine) shift; PE=${1:-} ;;
	--kbfs-engine) shift; BE=${1:-} ;;
	--validator) shift; VALIDATOR=${1:-} ;;
	--roots) shift; ROOTS=${1:-} ;;
	-h | --help) sed -n '2,33p' "$0"; exit 0 ;;
	[0-9]*) SCALES+=("$1") ;;
	*) echo "pipeline.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
GE=${GE:-$ENGINE} PE=${PE:-$ENGINE} BE=${BE:-$ENGINE}
case "$R.$C" in
[1-9]*.[1-9]*) case "$R$C" in *[!0-9]*) R= ;; esac ;;
*) R= ;;
esac
[ -n "$R" ] || { echo "pipeline.sh: --grid takes RxC (like 2x2)" >&2; exit 2; }
[ ${#SCALES[@]} -gt 0 ] || { echo "pipeline.sh: give at least one SCALE (see --help)" >&2; exit 2; }
for p in kgen kpart kbfs; do
	command -v "$p" >/dev/null || { echo "pipeline.sh: $TOP/bin/$p missing: run make first" >&2; exit 3; }
done
NP=$((R * C))
GT=${THREADS:-$(nproc)}
RT=${THREADS:-$(( $(nproc) / NP > 0 ? $(nproc) / NP : 1 ))}
MPI=()
if [ "$NP" -gt 1 ]; then
	command -v mpirun >/dev/null || { echo "pipeline.sh: a ${R}x$C grid needs mpirun" >&2; exit 3; }
	[ "$(id -u)" != 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	# shellcheck disable=SC2206
	MPI=(mpirun -np "$NP" --bind-to none ${MPIRUN_ARGS:-} -x OMP_NUM_THREADS)
fi
mkdir -p "$WORK" "$OUTD"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# field NAME FILE: the value of a reference-format statistics line
field() { awk -v k="$2" '$0 ~ "^" k ":" { print $NF; exit }' "$1"; }

where=$([ "$NP" -gt 1 ] && echo "mpirun -np $NP" || echo "one process")
printf '# pipeline.sh on %s, %s; engines kgen %s, kpart %s, kbfs %s; validator %s; %s roots; grid %dx%d (%s), %s thread(s) a rank, kgen %s; %s; files in %s\n' \
	"$(hostname)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$GE" "$PE" "$BE" "$VALIDATOR" "$ROOTS" "$R" "$C" "$where" "$RT" "$GT" \
	"$(case $STREAM in 1) echo "kgen -o - | kpart -" ;; 2) echo "kpart -s, no kgen" ;; *) echo "an edge file" ;; esac)" "$WORK"
printf '# %s\n' "$(kbfs --version 2>&1 | head -1)"
printf '%-6s %-26s %10s  %s\n' scale stage seconds detail
for s in "${SCALES[@]}"; do
	g=$WORK/s$s.kg p=$WORK/s$s.kpart log=$OUTD/pipeline-s$s
	rm -rf "$g" "$p"
	t0=$(now)
	if [ $STREAM = 2 ]; then
		: >"$log.kgen.err"
		OMP_NUM_THREADS=$RT "${MPI[@]}" kpart -q -v --engine "$PE" -R "$R" -C "$C" -o "$p" -s "$s" 2>"$log.kpart.err" ||
			{ echo "pipeline.sh: kpart -s $s failed (see $log.kpart.err)" >&2; exit 1; }
		t1=$t0
	elif [ $STREAM = 1 ] && [ "$NP" -gt 1 ]; then
		# under mpirun the stream goes through a named pipe that rank 0
		# opens: mpirun forwards its own standard input to rank 0 at a
		# fraction of a pipe's rate (here 0.3 against 0.8 GB/s)
		f=$WORK/s$s.fifo
		rm -f "$f" && mkfifo "$f" || { echo "pipeline.sh: cannot make the named pipe $f" >&2; exit 1; }
		# (kgen failing before it opens the pipe opens and closes it, so
		# that kpart reads an empty input and stops instead of waiting)
		(
			OMP_NUM_THREADS=$GT kgen -q -v --engine "$GE" -s "$s" -o "$f" 2>"$log.kgen.err"
			r=$?
			[ $r = 0 ] || : >"$f"
			exit $r
		) &
		kg=$!
		OMP_NUM_THREADS=$RT "${MPI[@]}" kpart -q -v --engine "$PE" -R "$R" -C "$C" -o "$p" "$f" 2>"$log.kpart.err"
		kr=$?
		[ $kr = 0 ] || kill "$kg" 2>/dev/null
		wait "$kg"
		gr=$?
		rm -f "$f"
		[ $kr = 0 ] && [ $gr = 0 ] ||
			{ echo "pipeline.sh: kgen -s $s | kpart failed (see $log.kgen.err, $log.kpart.err)" >&2; exit 1; }
		t1=$t0
	elif [ $STREAM = 1 ]; then
		OMP_NUM_THREADS=$GT kgen -q -v --engine "$GE" -s "$s" -o - 2>"$log.kgen.err" |
			OMP_NUM_THREADS=$RT "${MPI[@]}" kpart -q -v --engine "$PE" -R "$R" -C "$C" -o "$p" - 2>"$log.kpart.err" ||
			{ echo "pipeline.sh: kgen -s $s | kpart failed (see $log.kgen.err, $log.kpart.err)" >&2; exit 1; }
		t1=$t0
	else
		OMP_NUM_THREADS=$GT kgen -q -v --engine "$GE" -s "$s" -o "$g" 2>"$log.kgen.err" || { echo "pipeline.sh: kgen -s $s failed (see $log.kgen.err)" >&2; exit 1; }
		t1=$(now)
		OMP_NUM_THREADS=$RT "${MPI[@]}" kpart -q -v --engine "$PE" -R "$R" -C "$C" -o "$p" "$g" 2>"$log.kpart.err" || { echo "pipeline.sh: kpart failed (see $log.kpart.err)" >&2; exit 1; }
	fi
	t2=$(now)
	# shellcheck disable=SC2086
	OMP_NUM_THREADS=$RT "${MPI[@]}" kbfs -v --engine "$BE" --validator "$VALIDATOR" -n "$ROOTS" --json "$log.kbfs.json" \
		${KBFS_ARGS:-} "$p" >"$log.kbfs.out" 2>"$log.kbfs.err" ||
		{ echo "pipeline.sh: kbfs failed (see $log.kbfs.err)" >&2; exit 1; }
	t3=$(now)
	nb=$(field "$log.kbfs.out" NBFS)
	mt=$(field "$log.kbfs.out" "bfs  mean_time")
	mv=$(field "$log.kbfs.out" "bfs  mean_validate")
	hm=$(field "$log.kbfs.out" "bfs  harmonic_mean_TEPS")
	if [ $STREAM = 2 ]; then
		printf '%-6s %-26s %10s  kpart %s\n' "$s" "kpart -s ${R}x$C" "$(secs "$t0" "$t2")" \
			"$(sed -n 's/^kpart\(\[rank 0\]\)\{0,1\}: engine //p' "$log.kpart.err" | head -1)"
		sed -n 's/.*the graph generated [a-z ]* memory: .* in \([0-9.]*\) s (\([0-9.]*\) M edges\/s).*/\1;\2/p' "$log.kpart.err" |
			awk -F';' -v s="$s" '{ printf "%-6s %-26s %10s  %s M edges/s\n", s, "  of which generation", $1, $2 }'
	elif [ $STREAM = 1 ]; then
		printf '%-6s %-26s %10s  kgen %s; kpart %s\n' "$s" "kgen | kpart ${R}x$C" "$(secs "$t0" "$t2")" \
			"$(sed -n 's/^kgen: engine //p' "$log.kgen.err")" "$(sed -n 's/^kpart\(\[rank 0\]\)\{0,1\}: engine //p' "$log.kpart.err" | head -1)"
	else
		printf '%-6s %-26s %10s  %s\n' "$s" "kgen" "$(secs "$t0" "$t1")" "$(sed -n 's/^kgen: engine //p' "$log.kgen.err")"
	fi
	# kgen -v: "N edges generated on the WHERE in G s (R M edges/s)...; written in W s; ..."
	sed -n 's/.* generated on the \(.*\) in \([0-9.]*\) s (\([0-9.]*\) M edges\/s).* written in \([0-9.]*\) s.*/\1;\2;\3;\4/p' \
		"$log.kgen.err" | awk -F';' -v s="$s" '{
		printf "%-6s %-26s %10s  %s M edges/s, %s\n", s, "  of which generation", $2, $3, $1
		printf "%-6s %-26s %10s\n", s, "  of which writing", $4 }'
	[ $STREAM != 0 ] ||
		printf '%-6s %-26s %10s  %s\n' "$s" "kpart ${R}x$C" "$(secs "$t1" "$t2")" "$(sed -n 's/^kpart\(\[rank 0\]\)\{0,1\}: engine //p' "$log.kpart.err" | head -1)"
	# kpart -v: its steps, "kpart: STEP   T s"
	sed -n 's/^kpart\(\[rank 0\]\)\{0,1\}: \(open, pass 1\|pass 2\|sort, dedup\|tdeg\|CSR, rank files\)\([^0-9]*\) \([0-9.]*\) s.*/\2\3;\4/p' "$log.kpart.err" |
		awk -F';' -v s="$s" '{ sub(/ +$/, "", $1); printf "%-6s %-26s %10s\n", s, "  " substr($1, 1, 24), $2 }'
	sed -n 's/.*the chunks waited for in pass \([12]\): \([0-9.]*\) s.*/\1;\2/p' "$log.kpart.err" |
		awk -F';' -v s="$s" '{ printf "%-6s %-26s %10s\n", s, "  pass " $1 ": chunk waits", $2 }'
	sed -n 's/.* \([0-9.]*\) s computing and \([0-9.]*\) s copying.*/\1;\2/p' "$log.kpart.err" |
		awk -F';' -v s="$s" '{ printf "%-6s %-26s %10s\n%-6s %-26s %10s\n", s, "  device: computing", $1, s, "  device: copies", $2 }'
	printf '%-6s %-26s %10s  load, %s searches, validation\n' "$s" "kbfs ${R}x$C" "$(secs "$t2" "$t3")" "$nb"
	lt=$(sed -n 's/^ *"load_time": *\([0-9.e+-]*\),*$/\1/p' "$log.kbfs.json" | head -1)
	printf '%-6s %-26s %10.3f  read, check\n' "$s" "  of which loading" "${lt:-0}"
	ct=$(sed -n 's/.*partition copied in \([0-9.]*\) s.*/\1/p' "$log.kbfs.err" | head -1)
	[ -z "$ct" ] || printf '%-6s %-26s %10.3f\n' "$s" "  of which copy to GPU" "$ct"
	# kbfs -v: "set-up in T s: load L, engine E (...), transport X, roots R, the rest O (...)"
	sed -n 's/.*set-up in \([0-9.]*\) s: load [0-9.]*, engine \([0-9.]*\) .*transport \([0-9.]*\), roots \([0-9.]*\), the rest \([0-9.]*\).*/\1;\2;\3;\4;\5/p' \
		"$log.kbfs.err" | head -1 | awk -F';' -v s="$s" '{
		printf "%-6s %-26s %10.3f  engine %s, transport %s, roots %s, other %s\n", s, "  set-up (load included)", $1, $2, $3, $4, $5 }'
	awk -v s="$s" -v n="$nb" -v t="$mt" -v v="$mv" -v h="$hm" 'BEGIN {
		printf "%-6s %-26s %10.3f  %.3f ms each, %.1f GTEPS\n", s, "  of which searches", n * t, t * 1e3, h / 1e9
		printf "%-6s %-26s %10.3f  %.3f s each\n", s, "  of which validation", n * v, v }'
	printf '%-6s %-26s %10s\n' "$s" "total" "$(secs "$t0" "$t3")"
done
