#!/bin/bash
# gpu.sh: kbfs --engine cuda on Kronecker graphs: generation, partition and
# 64 validated searches per scale, as a table.  Builds nothing: run `make`
# first.  Run from anywhere; files go to $KBFS_BENCH_DIR (default
# /tmp/kbfs-bench: scale 26 needs ~30 GB of local disk) and results (a
# table, each run's stdout/stderr and kbfs JSON) to ${OUT:-share/bench/out}.
#
#   share/bench/gpu.sh [SCALE...]           scales (default 20 22 24 26), grid 1x1, one GPU
#   share/bench/gpu.sh --ablation SCALE     each optimisation off in turn (grid: --grid, default 1x1)
#   share/bench/gpu.sh --two-gpu [SCALE...] grids 1x2 and 2x1 on two GPUs against 1x1 (default 24)
#   share/bench/gpu.sh --multi [SCALE...]   one rank a GPU on every grid of --grids that the GPUs
#                                           hold (default '1x1 2x1 1x2 4x1 2x2 1x4'), the 1x1 row
#                                           first; a speed-up column against it (default 26)
#   share/bench/gpu.sh --multi --runs 'S:RxC ...'  exactly these runs (weak scaling: '26:1x1
#                                           27:2x1 28:4x1'), speed-ups against the first row
#   share/bench/gpu.sh --multi --weak [SCALE...]  also the weak-scaling runs S:1x1,
#                                           S+1:2x1, S+2:4x1 (S the first scale, as the
#                                           GPUs allow), each partition built once
# --multi also writes each run's per-level summary (levels.py) beside its JSON,
# ends with three tables (strong scaling: the best grid a GPU count against
# the same scale's 1x1; grid shapes against the best; with --weak, GTEPS a
# GPU against the first weak run) and, with --svg, a kstat --svg scaling
# plot of all its runs.  The strong, weak and grid-shape tables of one
# device call: gpu.sh --multi --weak --shm --drop --svg FILE 26 28.
# The ablation: the input's order (a kpart --relabel none partition), the
# default validated and not, then without the phase marks (KBFS_CUDA_MARKS=0:
# what their events cost), the update's degree sums a word at a time
# (KBFS_CUDA_TDEG_BATCH=1), then one option off at a time: --step-sync,
# --no-bu-first, --no-td-small, --no-td-lists, --bu-kernel word, the first
# issue's path, --kernel edge (word kernel and
# step waits), the directions, the exchanges (grids of several ranks: the
# wire forms, KBFS_PEER_WON=lowest on grids of several columns, then the
# peer transport's --dense-push, --bu-substeps (on:
# experimental, grids of several columns) and --transport nccl
# and mpi; as many GPUs as the grid has ranks, at most what is visible), the
# other kernels.
# Options: --grid RxC (ablation grid), --roots N (default 64), --fresh
# (regenerate graphs and partitions), --drop (delete each partition once its
# runs are done: scale 28 leaves room for one ~70 GB partition at a time),
# --no-mpi (--two-gpu: skip the MPI-transport and 2x2 rows), --also 'ARGS'
# (scales and --two-gpu: after each validated row, one more on the same
# partition with --no-validate ARGS, e.g. an A/B of one option), --core
# (--ablation: not the top-down kernel alternatives nor the word kernel's
# --bu-rows/--bu-batch rows), --grids 'LIST' (--two-gpu:
# the two-GPU grids, default '1x2 2x1'; --multi: the grids, default
# '1x1 2x1 1x2 4x1 2x2 1x4'), --runs 'S:RxC ...' (--multi), --svg FILE (--multi),
# --shm (files in /dev/shm/kbfs-bench: memory, not the disk, is measured).
# Grids of several ranks are partitioned under mpirun (the ranks share the
# work); every mpirun runs with --bind-to none so a rank's threads spread.
# Environment: KBFS_BENCH_DIR, OUT, THREADS (default nproc), KBFS_BENCH_ENGINE
# (default cuda; cpu for a comparison row, or to try --multi without GPUs:
# KBFS_BENCH_NGPU ranks, default 4, stand for the GPUs), KBFS_BENCH_GPUS (CUDA_VISIBLE_DEVICES), KBFS_ARGS
# (extra kbfs options for every run).
set -u
set -o pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$TOP/bin
export PATH=$BIN:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
WORK=${KBFS_BENCH_DIR:-/tmp/kbfs-bench}
OUTD=${OUT:-$TOP/share/bench/out}
THREADS=${THREADS:-$(nproc)}
ENGINE=${KBFS_BENCH_ENGINE:-cuda}
ROOTS=64
MODE=scales
GRID=1x1
FRESH=0
DROP=0
NOMPI=0
ALSO=
CORE=0
GRIDS=
RUNS=
SVG=
WEAK=0
WEAKRUNS=
SCALES=()
while [ $# -gt 0 ]; do
	case $1 in
	--ablation) MODE=ablation; shift; [ $# -gt 0 ] && SCALES+=("$1") ;;
	--two-gpu) MODE=two ;;
	--multi) MODE=multi ;;
	--weak) WEAK=1 ;;
	--runs) shift; RUNS=$1; RUNS_GIVEN=1 ;;
	--svg) shift; SVG=$1 ;;
	--shm) WORK=/dev/shm/kbfs-bench ;;
	--grid) shift; GRID=$1 ;;
	--roots) shift; ROOTS=$1 ;;
	--fresh) FRESH=1 ;;
	--drop) DROP=1 ;;
	--no-mpi) NOMPI=1 ;;
	--also) shift; ALSO=$1 ;;
	--core) CORE=1 ;;
	--grids) shift; GRIDS=$1 ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
	[0-9]*) SCALES+=("$1") ;;
	*) echo "gpu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
if [ ${#SCALES[@]} -eq 0 ]; then
	case $MODE in
	scales) SCALES=(20 22 24 26) ;;
	ablation) SCALES=(24) ;;
	two) SCALES=(24) ;;
	multi) SCALES=(26) ;;
	esac
fi
[ -n "$GRIDS" ] || { [ $MODE = multi ] && GRIDS="1x1 2x1 1x2 4x1 2x2 1x4" || GRIDS="1x2 2x1"; }
for p in kgen kpart kbfs; do
	[ -x "$BIN/$p" ] || { echo "gpu.sh: $BIN/$p missing: run make first" >&2; exit 3; }
done
# the GPUs: nvidia-smi's, or KBFS_BENCH_NGPU ranks of the CPU engine (a
# try of the script's logic on a machine without GPUs)
if [ "$ENGINE" = cpu ]; then
	NGPU=${KBFS_BENCH_NGPU:-4}
	GPULIST() { echo "CPU engine, $NGPU ranks at most"; }
else
	command -v nvidia-smi >/dev/null && nvidia-smi -L | grep -q GPU || { echo "gpu.sh: no GPU visible" >&2; exit 4; }
	NGPU=$(nvidia-smi -L | grep -c '^GPU')
	GPULIST() { nvidia-smi -L; }
fi
mkdir -p "$WORK" "$OUTD"
TABLE=$OUTD/gpu-bench-$MODE.txt
ROWS=$OUTD/gpu-bench-$MODE.rows
: >"$ROWS"
{
	echo "# gpu.sh $MODE ${SCALES[*]} on $(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# $(kbfs --version 2>&1 | tr '\n' ' ')"
	GPULIST | sed 's/^/# /'
	echo "# threads $THREADS, roots $ROOTS, work dir $WORK"
} | tee "$TABLE"
wired=0
kbfs --help 2>&1 | grep -q -- '--kernel' && wired=1
[ $wired = 1 ] || echo "# note: kbfs has no --kernel/--transport yet: kernel and transport variants are skipped" | tee -a "$TABLE"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# gen SCALE: $WORK/sS.kg, sets GEN_S (seconds, or "cached")
gen() {
	local s=$1 f=$WORK/s$1.kg
	GEN_S=cached
	if [ $FRESH = 1 ] || [ ! -s "$f" ]; then
		local t0
		t0=$(now)
		OMP_NUM_THREADS=$THREADS kgen -q -s "$s" -o "$f.tmp" --force && mv "$f.tmp" "$f" || { echo "gpu.sh: kgen -s $s failed" >&2; exit 1; }
		GEN_S=$(secs "$t0" "$(now)")
	fi
}
# partition SCALE RxC [KPART-ARGS...]: $WORK/sS-RxC[ARGS], sets PART_S
partition() {
	local s=$1 g=$2 d
	shift 2
	d=$WORK/s$s-$g$(echo "$*" | tr -d ' -')
	PART_S=cached
	if [ $FRESH = 1 ] || [ ! -f "$d/manifest" ]; then
		local t0
		local np=$((${g%x*} * ${g#*x}))
		t0=$(now)
		if [ "$np" -eq 1 ]; then
			OMP_NUM_THREADS=$THREADS kpart -v -R 1 -C 1 "$@" --force -o "$d" "$WORK/s$s.kg" 2>"$OUTD/part-s$s-$g.err"
		else
			OMP_NUM_THREADS=$((THREADS / np > 0 ? THREADS / np : 1)) mpirun --allow-run-as-root --oversubscribe \
				--bind-to none -np "$np" -x OMP_NUM_THREADS kpart -v -R "${g%x*}" -C "${g#*x}" "$@" --force -o "$d" \
				"$WORK/s$s.kg" 2>"$OUTD/part-s$s-$g.err"
		fi || { tail -3 "$OUTD/part-s$s-$g.err" >&2; echo "gpu.sh: kpart $g scale $s failed" >&2; exit 1; }
		PART_S=$(secs "$t0" "$(now)")
	fi
	PART=$d
}
# search NAME RxC NGPU KBFS-ARGS...: one kbfs run, appends a table row
search() {
	local name=$1 g=$2 ngpu=$3
	shift 3
	local np=$((${g%x*} * ${g#*x})) log=$OUTD/$name
	local cvd
	cvd=$(seq -s, 0 $((ngpu - 1)))
	local t0 rc
	t0=$(now)
	if [ "$np" -eq 1 ]; then
		CUDA_VISIBLE_DEVICES=${KBFS_BENCH_GPUS:-$cvd} OMP_NUM_THREADS=$THREADS \
			kbfs --engine "$ENGINE" -v --json "$log.json" "$@" ${KBFS_ARGS:-} "$PART" >"$log.out" 2>"$log.err"
	else
		CUDA_VISIBLE_DEVICES=${KBFS_BENCH_GPUS:-$cvd} OMP_NUM_THREADS=$((THREADS / np > 0 ? THREADS / np : 1)) \
			mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" -x CUDA_VISIBLE_DEVICES -x OMP_NUM_THREADS \
			kbfs --engine "$ENGINE" -v --json "$log.json" "$@" ${KBFS_ARGS:-} "$PART" >"$log.out" 2>"$log.err"
	fi
	rc=$?
	local wall
	wall=$(secs "$t0" "$(now)")
	local hm mt mv
	hm=$(awk '/harmonic_mean_TEPS/ { print $NF }' "$log.out" | head -1)
	mt=$(awk '/^bfs  mean_time:/ { print $NF }' "$log.out" | head -1)
	mv=$(awk '/^bfs  mean_validate:/ { print $NF }' "$log.out" | head -1)
	local status=ok
	[ $rc -eq 0 ] || status="FAIL(exit $rc)"
	awk -v n="$name" -v s="$SCALE" -v g="$g" -v ng="$ngpu" -v hm="${hm:-0}" -v mt="${mt:-0}" -v mv="${mv:--}" \
		-v gs="$GEN_S" -v ps="$PART_S" -v w="$wall" -v st="$status" -v a="$*" 'BEGIN {
		printf "%-28s %5s %5s %4s %10.3f %10.3f %10s %8s %8s %8s  %-10s %s\n", n, s, g, ng, hm / 1e9, mt * 1e3,
			(mv == "-" ? "-" : sprintf("%.3f", mv)), gs, ps, w, st, a }' | tee -a "$TABLE"
	[ $rc -eq 0 ] || sed 's/^/#   /' "$log.err" | tail -5 | tee -a "$TABLE"
	LAST_GTEPS=$(awk -v hm="${hm:-0}" 'BEGIN { printf "%.3f", hm / 1e9 }')
	[ $rc -eq 0 ] && [ -s "$log.json" ] && python3 "$TOP/share/bench/levels.py" "$log.json" >"$log.levels" 2>&1
	return 0
}
# also NAME RxC NGPU: with --also, the extra row
also() {
	[ -n "$ALSO" ] || return 0
	# shellcheck disable=SC2086
	search "$1-also" "$2" "$3" -n "$ROOTS" --no-validate $ALSO
}
# drop: with --drop, delete the partition just searched (disk space)
drop() {
	[ $DROP = 1 ] && rm -rf "$PART"
	return 0
}
header() {
	printf "%-28s %5s %5s %4s %10s %10s %10s %8s %8s %8s  %-10s %s\n" run scale grid gpus GTEPS "BFS ms" \
		"valid. s" "gen s" "part s" "kbfs s" status options | tee -a "$TABLE"
}

# summary ROWS WEAKRUNS: the strong-scaling, grid-shape and weak-scaling
# tables of a --multi run, from its rows (scale grid ranks GTEPS)
summary() {
	awk -v weak="$2" '
	{ S[NR] = $1; G[NR] = $2; N[NR] = $3; T[NR] = $4; n = NR
	  if ($3 == 1) one[$1] = $4
	  k = $1 " " $3; if (!(k in best) || $4 > best[k]) { best[k] = $4; bestg[k] = $2 } }
	END {
		print "# strong scaling: GTEPS by GPUs, the best grid, x the same scale on one GPU"
		for (i = 1; i <= n; i++) {
			k = S[i] " " N[i]
			if (done[k]++ || !(S[i] in one)) continue
			printf "#   scale %s, %d GPU%s: %.1f (%s, %.2fx)\n", S[i], N[i], (N[i] > 1 ? "s" : ""), best[k], bestg[k], best[k] / one[S[i]]
		}
		print "# grid shapes: each grid x the best of its scale and GPUs"
		for (i = 1; i <= n; i++) {
			k = S[i] " " N[i]
			if (N[i] > 1 && best[k] > 0) printf "#   scale %s, %s: %.1f (%.2f of %s)\n", S[i], G[i], T[i], T[i] / best[k], bestg[k]
		}
		m = split(weak, W, " ")
		if (m) {
			print "# weak scaling: GTEPS a GPU, % of the first run"
			for (w = 1; w <= m; w++) {
				split(W[w], p, ":")
				for (i = 1; i <= n; i++)
					if (S[i] == p[1] && G[i] == p[2]) {
						if (!b) b = T[i] / N[i]
						printf "#   %s: %.1f GTEPS, %.1f a GPU (%.0f%%)\n", W[w], T[i], T[i] / N[i], 100 * T[i] / N[i] / b
						break
					}
			}
		}
	}' "$1"
}

case $MODE in
scales)
	header
	for SCALE in "${SCALES[@]}"; do
		gen "$SCALE"
		partition "$SCALE" 1x1
		[ $wired = 1 ] && kbfs --engine cuda --dry-run "$PART" >"$OUTD/s$SCALE-dry-run.txt" 2>&1
		search "s$SCALE-1x1" 1x1 1 -n "$ROOTS"
		also "s$SCALE-1x1" 1x1 1
	done
	;;
ablation)
	SCALE=${SCALES[0]}
	header
	gen "$SCALE"
	ng=1
	np=$((${GRID%x*} * ${GRID#*x}))
	avail=$(nvidia-smi -L | grep -c '^GPU')
	[ "$GRID" != 1x1 ] && ng=$((np < avail ? np : avail))
	# the input's order first (kpart --relabel none), then the default partition
	partition "$SCALE" "$GRID" --relabel none
	search "s$SCALE-$GRID-relabel-none" "$GRID" $ng -n "$ROOTS" --no-validate
	drop
	GEN_S=cached
	partition "$SCALE" "$GRID"
	[ "$GRID" = 1x1 ] && echo "# grid 1x1 exchanges nothing: --exchange, --no-compress and --no-sv change nothing there (use --grid 1x2)" | tee -a "$TABLE"
	search "s$SCALE-$GRID-baseline" "$GRID" $ng -n "$ROOTS"
	search "s$SCALE-$GRID-default" "$GRID" $ng -n "$ROOTS" --no-validate
	if [ $wired = 1 ]; then
		# what the phase marks cost (their events; the phase times are then 0)
		KBFS_CUDA_MARKS=0 search "s$SCALE-$GRID-no-marks" "$GRID" $ng -n "$ROOTS" --no-validate
		# the update's degree sums one word at a time (the default: eight)
		KBFS_CUDA_TDEG_BATCH=1 search "s$SCALE-$GRID-tdeg-batch-1" "$GRID" $ng -n "$ROOTS" --no-validate
		search "s$SCALE-$GRID-step-sync" "$GRID" $ng -n "$ROOTS" --no-validate --step-sync
		search "s$SCALE-$GRID-no-bu-first" "$GRID" $ng -n "$ROOTS" --no-validate --no-bu-first
		search "s$SCALE-$GRID-no-td-small" "$GRID" $ng -n "$ROOTS" --no-validate --no-td-small
		search "s$SCALE-$GRID-no-td-lists" "$GRID" $ng -n "$ROOTS" --no-validate --no-td-lists
		search "s$SCALE-$GRID-bu-word" "$GRID" $ng -n "$ROOTS" --no-validate --bu-kernel word
		search "s$SCALE-$GRID-first-issue" "$GRID" $ng -n "$ROOTS" --no-validate --bu-kernel word --step-sync
		search "s$SCALE-$GRID-kernel-edge" "$GRID" $ng -n "$ROOTS" --no-validate --kernel edge
	fi
	search "s$SCALE-$GRID-top-down" "$GRID" $ng -n "$ROOTS" --no-validate --direction top-down
	search "s$SCALE-$GRID-bottom-up" "$GRID" $ng -n "$ROOTS" --no-validate --direction bottom-up
	if [ "$GRID" != 1x1 ]; then
		search "s$SCALE-$GRID-x-bitmap" "$GRID" $ng -n "$ROOTS" --no-validate --exchange bitmap
		search "s$SCALE-$GRID-x-list" "$GRID" $ng -n "$ROOTS" --no-validate --exchange list
		search "s$SCALE-$GRID-no-compress" "$GRID" $ng -n "$ROOTS" --no-validate --no-compress
		# grids of several columns: rows credited to the lowest column, not the owner first
		case $GRID in *x1) ;; *) KBFS_PEER_WON=lowest search "s$SCALE-$GRID-won-lowest" "$GRID" $ng -n "$ROOTS" --no-validate ;; esac
		# ... and the owner's own predecessors decoded after the search, not written in the update
		case $GRID in *x1) ;; *) KBFS_PEER_OWN_PRED=decode search "s$SCALE-$GRID-own-pred-decode" "$GRID" $ng -n "$ROOTS" --no-validate ;; esac
		# the peer transport's flags a release store each, not all after one fence
		KBFS_PEER_FLAGS=release search "s$SCALE-$GRID-flags-release" "$GRID" $ng -n "$ROOTS" --no-validate
		# the experiment: a dense frontier's buffers cleared a level ahead (grids of several rows)
		case $GRID in 1x*) ;; *) KBFS_PEER_CLEAR=1 search "s$SCALE-$GRID-peer-clear" "$GRID" $ng -n "$ROOTS" --no-validate ;; esac
		# the update on the engine's whole grid (8 blocks an SM), not two blocks an SM
		KBFS_PEER_UPDATE_BLOCKS=all search "s$SCALE-$GRID-update-all-blocks" "$GRID" $ng -n "$ROOTS" --no-validate
		# the experiment: the fold on two blocks an SM of an H100 or H200 (grids of several columns)
		case $GRID in *x1) ;; *) KBFS_PEER_FOLD_BLOCKS=264 search "s$SCALE-$GRID-fold-264-blocks" "$GRID" $ng -n "$ROOTS" --no-validate ;; esac
		# ... and the predecessor step's four kernels on two blocks an SM
		case $GRID in *x1) ;; *) KBFS_PEER_PRED_BLOCKS=264 search "s$SCALE-$GRID-pred-264-blocks" "$GRID" $ng -n "$ROOTS" --no-validate ;; esac
		# PRED cleared whole at every search's start, not its unreached entries put right after it
		case $GRID in *x1) ;; *) KBFS_CUDA_PRED_FINISH=0 search "s$SCALE-$GRID-pred-clear" "$GRID" $ng -n "$ROOTS" --no-validate ;; esac
		search "s$SCALE-$GRID-no-sv" "$GRID" $ng -n "$ROOTS" --no-validate --no-sv
	fi
	if [ $wired = 1 ] && [ $CORE = 0 ]; then
		for k in merrill vertex vbfs; do
			search "s$SCALE-$GRID-kernel-$k" "$GRID" $ng -n "$ROOTS" --no-validate --kernel $k
		done
		for k in 8 128; do
			search "s$SCALE-$GRID-vbfs-k$k" "$GRID" $ng -n "$ROOTS" --no-validate --kernel vbfs --vbfs-k $k
		done
		search "s$SCALE-$GRID-bu-word-rows2" "$GRID" $ng -n "$ROOTS" --no-validate --bu-kernel word --bu-rows 2
		search "s$SCALE-$GRID-bu-word-batch4" "$GRID" $ng -n "$ROOTS" --no-validate --bu-kernel word --bu-batch 4
	fi
	if [ $wired = 1 ] && [ "$GRID" != 1x1 ]; then
		# the peer transport's mechanisms off in turn (where it runs: a GPU a rank)
		search "s$SCALE-$GRID-dense-push" "$GRID" $ng -n "$ROOTS" --no-validate --dense-push
		# off by default until measured: the 2D bottom-up in sub-steps (grids of several columns)
		case $GRID in *x1) ;; *) search "s$SCALE-$GRID-bu-substeps" "$GRID" $ng -n "$ROOTS" --no-validate --bu-substeps ;; esac
		search "s$SCALE-$GRID-transport-nccl" "$GRID" $ng -n "$ROOTS" --no-validate --transport nccl
		search "s$SCALE-$GRID-transport-mpi" "$GRID" $ng -n "$ROOTS" --no-validate --transport mpi
	fi
	;;
two)
	[ "$(nvidia-smi -L | grep -c '^GPU')" -ge 2 ] || { echo "gpu.sh: --two-gpu needs two GPUs" >&2; exit 4; }
	header
	for SCALE in "${SCALES[@]}"; do
		gen "$SCALE"
		partition "$SCALE" 1x1
		search "s$SCALE-1x1" 1x1 1 -n "$ROOTS"
		also "s$SCALE-1x1" 1x1 1
		drop
		for g in $GRIDS; do
			GEN_S=cached
			partition "$SCALE" "$g"
			search "s$SCALE-$g" "$g" 2 -n "$ROOTS"
			also "s$SCALE-$g" "$g" 2
			[ $wired = 1 ] && [ $NOMPI = 0 ] && search "s$SCALE-$g-mpi" "$g" 2 -n "$ROOTS" --no-validate --transport mpi
			drop
		done
		if [ $NOMPI = 0 ]; then
			GEN_S=cached
			partition "$SCALE" 2x2
			search "s$SCALE-2x2-2gpu" 2x2 2 -n "$ROOTS" --no-validate
			drop
		fi
	done
	;;
multi)
	ngpu=$NGPU
	if [ -z "$RUNS" ]; then
		for SCALE in "${SCALES[@]}"; do
			for g in $GRIDS; do
				[ $((${g%x*} * ${g#*x})) -le "$ngpu" ] && RUNS="$RUNS $SCALE:$g"
			done
		done
		if [ $WEAK = 1 ]; then
			# S:1x1, S+1:2x1, S+2:4x1 ... from the first scale, as the GPUs allow
			s=${SCALES[0]} n=1
			while [ $n -le "$ngpu" ]; do
				WEAKRUNS="$WEAKRUNS $s:${n}x1"
				s=$((s + 1)) n=$((n * 2))
			done
			# in order of scale (one scale's files at a time), each run once
			RUNS=$(for r in $RUNS $WEAKRUNS; do echo "$r"; done | awk -F: '!seen[$0]++ { print $1, NR, $0 }' |
				sort -n -k1,1 -k2,2 | awk '{ print $3 }' | tr '\n' ' ')
		fi
	fi
	header
	base=
	jsons=()
	prev_scale=
	for run in $RUNS; do
		SCALE=${run%%:*}
		g=${run#*:}
		np=$((${g%x*} * ${g#*x}))
		[ "$np" -le "$ngpu" ] || { echo "# $run: $np ranks, $ngpu GPUs: skipped" | tee -a "$TABLE"; continue; }
		if [ -n "$prev_scale" ] && [ "$prev_scale" != "$SCALE" ]; then
			# one scale's files at a time: the next graph needs the room
			[ $DROP = 1 ] && rm -f "$WORK/s$prev_scale.kg"
			[ -z "${RUNS_GIVEN:-}" ] && base=
		fi
		prev_scale=$SCALE
		gen "$SCALE"
		partition "$SCALE" "$g"
		search "s$SCALE-$g-multi" "$g" "$np" -n "$ROOTS"
		jsons+=("$OUTD/s$SCALE-$g-multi.json")
		echo "$SCALE $g $np $LAST_GTEPS" >>"$ROWS"
		# the first row of a scale (or of --runs) is the base of the speed-ups
		if [ -z "$base" ] || { [ -z "${RUNS_GIVEN:-}" ] && [ "$g" = 1x1 ]; }; then base=$LAST_GTEPS; fi
		awk -v a="$LAST_GTEPS" -v b="$base" -v r="$run" 'BEGIN { if (b > 0) printf "#   %s: %.2fx the base row\n", r, a / b }' | tee -a "$TABLE"
		also "s$SCALE-$g-multi" "$g" "$np"
		drop
		GEN_S=cached
	done
	[ -n "$SVG" ] && [ ${#jsons[@]} -gt 0 ] && kstat --svg "$SVG" "${jsons[@]}" >"$OUTD/multi-kstat.txt" 2>&1
	cat "$OUTD"/*-multi.levels >"$OUTD/multi-levels.txt" 2>/dev/null
	summary "$ROWS" "$WEAKRUNS" | tee -a "$TABLE"
	;;
esac
echo "# table: $TABLE; logs and JSON: $OUTD" | tee -a "$TABLE"
