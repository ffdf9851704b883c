#!/bin/bash
# CUDA engine on one GPU (ranks of a grid share it): the engine against the
# CPU engine through the level loop (tests/gpu/test_engine) on grids 1x1,
# 1x2, 2x1, 2x2 at scales 10-14 for every kernel, exchange mode, direction,
# compression and shared-visited setting; the rare paths (frontier pieces,
# u64 offsets, u64 indices, warp/thread bottom-up split, vbfs K, the NCCL
# transport falling back to MPI on a shared GPU; the CSR's column indices
# made on the GPU, test_engine --csr-device); then kbfs --engine cuda
# itself: every tree validates and every depth equals --engine cpu's; the
# memory plan (--dry-run, the refusal before allocating), -v reports.
# Two GPUs: t0630-gpu-multi.sh.  Sanitizers: t0620.  Codec: t0610.
# With OUT set, every sub-run's log is kept under $OUT/gpu-tests/.
. "$(dirname "$0")/lib.sh"
need_gpu
. "$TOP/tests/gpu/lib-gpu.sh"
gpu_only 1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
build_gpu_tests || { echo "Bail out! cannot build the CUDA test programs"; exit 1; }

SCALES="10 11 12 13 14"
GRIDS=1x1
have_mpi && GRIDS="1x1 1x2 2x1 2x2"
KERNELS="lb merrill vertex vbfs edge"

# ---- 1. the engine against the CPU engine (full matrix at scale 12) ----
for g in $GRIDS; do
	for s in $SCALES; do
		cfg=quick
		[ "$s" = 12 ] && cfg=full
		part "$s" "$g"
		sub_tap "engine $g scale $s, $cfg configurations, all kernels" \
			prun "$g" "$TB/test_engine" --configs "$cfg" --roots 4 "$PART"
	done
done

# ---- 2. rare paths, scale 12 ----
RARE=1x1
have_mpi && RARE="1x1 2x2"
for g in $RARE; do
	part 12 "$g"
	P12=$PART
	sub_tap "engine $g: frontier in pieces of 1 word (KBFS_CUDA_TD_CHUNK=1)" \
		prun "$g" env KBFS_CUDA_TD_CHUNK=1 "$TB/test_engine" --configs quick --roots 3 "$P12"
	sub_tap "engine $g: pieces of 3 words" \
		prun "$g" env KBFS_CUDA_TD_CHUNK=3 "$TB/test_engine" --configs quick --roots 3 --kernels lb,vbfs "$P12"
	sub_tap "engine $g: u64 offsets on the device (KBFS_CUDA_OFF64=1)" \
		prun "$g" env KBFS_CUDA_OFF64=1 "$TB/test_engine" --configs quick --roots 3 "$P12"
	sub_tap "engine $g: the CSR's column indices made on the GPU (--csr-device): every level record equal" \
		prun "$g" "$TB/test_engine" --csr-device --configs quick --roots 3 "$P12"
	[ "$g" != 1x1 ] ||
		sub_tap "engine 1x1: both orientations kept, the column indices made on the GPU (KBFS_SYM=0)" \
			prun "$g" env KBFS_SYM=0 "$TB/test_engine" --csr-device --configs quick --roots 3 "$P12"
	sub_tap "engine $g: the same with u64 offsets on the device" \
		prun "$g" env KBFS_CUDA_OFF64=1 "$TB/test_engine" --csr-device --configs quick --roots 3 --kernels lb "$P12"
	sub_tap "engine $g: the partition copied through pinned buffers of 4000 bytes (KBFS_CUDA_STAGED=4000)" \
		prun "$g" env KBFS_CUDA_STAGED=4000 "$TB/test_engine" --configs quick --roots 3 "$P12"
	part 12 "$g" --wide
	sub_tap "engine $g: u64 local indices (kpart --wide)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 "$PART"
	sub_tap "engine $g: u64 local indices, the column indices made on the GPU" \
		prun "$g" "$TB/test_engine" --csr-device --configs quick --roots 3 --kernels lb "$PART"
	sub_tap "engine $g: u64 indices and offsets, pieces of 2 words" \
		prun "$g" env KBFS_CUDA_OFF64=1 KBFS_CUDA_TD_CHUNK=2 "$TB/test_engine" --configs quick --roots 3 "$PART"
	sub_tap "engine $g: bottom-up warp per row everywhere (--bu-split 0)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --bu-split 0 "$P12"
	sub_tap "engine $g: bottom-up thread per row everywhere (--bu-split 1000000)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --bu-split 1000000 "$P12"
	sub_tap "engine $g: bottom-up tile kernel without first probes (--no-bu-first)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --no-bu-first "$P12"
	sub_tap "engine $g: tile kernel, no first probes, warp per row everywhere (--no-bu-first --bu-split 0)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --no-bu-first --bu-split 0 "$P12"
	sub_tap "engine $g: small frontiers through the CUB scan (--no-td-small)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --no-td-small "$P12"
	if [ "$g" = 1x1 ]; then
		# the frontier lists of small top-down levels (one rank): off, and
		# overflowing at 2 words (KBFS_CUDA_LIST_CAP), so that list levels
		# fall back to the bitmaps mid-search
		sub_tap "engine $g: small top-down levels over the bitmaps (--no-td-lists)" \
			prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --no-td-lists "$P12"
		export KBFS_CUDA_LIST_CAP=2
		sub_tap "engine $g: frontier lists of at most 2 words (KBFS_CUDA_LIST_CAP=2)" \
			prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb "$P12"
		unset KBFS_CUDA_LIST_CAP
		# the experiment of runs of small top-down levels in one launch
		export KBFS_CUDA_TD_LOOP=1
		sub_tap "engine $g: small top-down levels in one launch (KBFS_CUDA_TD_LOOP=1)" \
			prun "$g" "$TB/test_engine" --configs full --roots 4 --kernels lb "$P12"
		export KBFS_CUDA_LIST_CAP=2
		sub_tap "engine $g: ... with lists of at most 2 words" \
			prun "$g" "$TB/test_engine" --configs quick --roots 4 --kernels lb "$P12"
		unset KBFS_CUDA_LIST_CAP KBFS_CUDA_TD_LOOP
	fi
	# the owner update's tdeg sums one word at a time and four at a time
	# (the default takes eight)
	for tb in 1 4; do
		sub_tap "engine $g: the update's words one batch of $tb (KBFS_CUDA_TDEG_BATCH=$tb)" \
			prun "$g" env KBFS_CUDA_TDEG_BATCH=$tb "$TB/test_engine" --configs quick --roots 3 --kernels lb "$P12"
	done
	sub_tap "engine $g: a wait after every step (--step-sync)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 --step-sync "$P12"
	sub_tap "engine $g: bottom-up word kernel (--bu-kernel word)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --bu-kernel word "$P12"
	sub_tap "engine $g: word kernel, two rows a lane (--bu-kernel word --bu-rows 2)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --bu-kernel word --bu-rows 2 "$P12"
	sub_tap "engine $g: word kernel, 2 probes at a time (--bu-kernel word --bu-batch 2)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --bu-kernel word --bu-batch 2 --bu-split 1000000 "$P12"
	sub_tap "engine $g: word kernel, 8 probes at a time, thread per row everywhere (--bu-batch 8)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --bu-kernel word --bu-batch 8 --bu-split 1000000 "$P12"
	sub_tap "engine $g: vbfs K=1" prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels vbfs --vbfs-k 1 "$P12"
	sub_tap "engine $g: vbfs K=7" prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels vbfs --vbfs-k 7 "$P12"
	part 12 "$g" --relabel none
	sub_tap "engine $g: partition in the input's order (--relabel none)" \
		prun "$g" "$TB/test_engine" --configs quick --roots 3 "$PART"
	if grep -q 'KBUILD_NCCL 1' "$TOP/build/kbuild.h"; then
		sub_tap "engine $g: --transport nccl on one GPU (axes fall back to MPI)" \
			prun "$g" "$TB/test_engine" --configs quick --roots 3 --kernels lb --transport nccl "$P12"
	else
		skip "engine $g: no NCCL in this build"
	fi
done

# ---- 3. kbfs --engine cuda end to end ----
if ! kbfs_wired; then
	_n=$((_n + 1))
	echo "not ok $_n - kbfs --help lists --kernel and --transport (wire gpu/kgpu.h's options into cmd/kbfs.c: see gpu/kgpu.h)"
	_failed=$((_failed + 1))
	done_testing
	exit
fi

# kb RxC ARGS...: kbfs on the grid's ranks
kb() {
	local g=$1
	shift
	prun "$g" kbfs "$@"
}

for s in $SCALES; do
	part "$s" 1x1
	rm -rf "$T/cpu$s"
	run_ok "kbfs --engine cpu scale $s (reference depths)" kb 1x1 --engine cpu -n 8 --depth-out "$T/cpu$s" "$PART"
done
# every grid and scale with the default kernel; every kernel at scale 12
for g in $GRIDS; do
	for s in $SCALES; do
		part "$s" "$g"
		ks=lb
		[ "$s" = 12 ] && ks=$KERNELS
		for k in $ks; do
			rm -rf "$T/d"
			run_ok "kbfs --engine cuda --kernel $k $g scale $s: 8 trees validate" \
				kb "$g" --engine cuda --kernel "$k" -n 8 --depth-out "$T/d" "$PART"
			keep_log "kbfs-$g-s$s-$k" "$T/err"
			ok "kbfs cuda $k $g scale $s: depths equal --engine cpu's" same_depths "$T/d" "$T/cpu$s"
		done
	done
done
kb_host() { KBFS_CUDA_CSR_DEVICE=0 kb "$@"; }
# the CSR's column indices: made on the GPU (the default) or on the host
# and copied (KBFS_CUDA_CSR_DEVICE=0): the same depths
for g in $GRIDS; do
	part 13 "$g"
	rm -rf "$T/d"
	if [ "$g" = 1x1 ]; then
		# a 1x1 block is symmetric: its CSC serves as the CSR, kept once
		run_ok "kbfs cuda 1x1 scale 13: by default, the block kept once (symmetric), 8 trees validate" \
			kb "$g" --engine cuda -v -n 8 --depth-out "$T/d" "$PART"
		ok "... -v says the column indices are the CSC's" grep -q "column indices the CSC's: the block is symmetric" "$T/err"
		ok "... depths equal --engine cpu's" same_depths "$T/d" "$T/cpu13"
		kbfs --engine cuda --dry-run "$PART" >"$T/dry" 2>&1
		ok "... --dry-run plans no second orientation" grep -Eq '^ +colidx=rowidx +0 ' "$T/dry"
		rm -rf "$T/d"
		run_ok "kbfs cuda 1x1 scale 13: KBFS_SYM=0, column indices made on the GPU, 8 trees validate" \
			env KBFS_SYM=0 kbfs --engine cuda -v -n 8 --depth-out "$T/d" "$PART"
		ok "... -v says they were made on the GPU" grep -q "column indices made on the GPU" "$T/err"
	else
		run_ok "kbfs cuda $g scale 13: by default, column indices made on the GPU, 8 trees validate" \
			kb "$g" --engine cuda -v -n 8 --depth-out "$T/d" "$PART"
		ok "... -v says they were made on the GPU" grep -q "column indices made on the GPU" "$T/err"
	fi
	ok "... depths equal --engine cpu's" same_depths "$T/d" "$T/cpu13"
	rm -rf "$T/d"
	run_ok "kbfs cuda $g scale 13: KBFS_CUDA_CSR_DEVICE=0, 8 trees validate" \
		kb_host "$g" --engine cuda -v -n 8 --depth-out "$T/d" "$PART"
	if [ "$g" = 1x1 ]; then
		ok "... -v says the CSC's serve (symmetric block)" grep -q "column indices the CSC's: the block is symmetric" "$T/err"
	else
		ok "... -v says they were copied from the host" grep -q "column indices copied from the host" "$T/err"
	fi
	ok "... depths equal --engine cpu's" same_depths "$T/d" "$T/cpu13"
done
part 13 1x1
rm -rf "$T/d"
run_ok "kbfs cuda 1x1 scale 13: KBFS_SYM=0 KBFS_CUDA_CSR_DEVICE=0, 8 trees validate" \
	env KBFS_SYM=0 KBFS_CUDA_CSR_DEVICE=0 kbfs --engine cuda -v -n 8 --depth-out "$T/d" "$PART"
ok "... -v says they were copied from the host" grep -q "column indices copied from the host" "$T/err"
ok "... depths equal --engine cpu's" same_depths "$T/d" "$T/cpu13"
# row offsets that disagree with the CSC, every checksum right: the GPU's
# scatter finds a row over full (the default), the host's transpose
# (KBFS_CUDA_CSR_DEVICE=0) the same
part 12 1x1
rm -rf "$T/badrows" && cp -r "$PART" "$T/badrows"
kpart_rows "$T/badrows" rank-00000.kpart 'for my $i (1 .. $#r - 1) { if ($r[$i] < $r[$i + 1]) { $r[$i]++; last } }'
must_fail 1 "row offsets that disagree with the CSC: the GPU refuses them (1x1: not the column offsets)" \
	kbfs --engine cuda -r 1 "$T/badrows"
stderr_has "row offsets differ from its column offsets is not symmetric (corrupt rank file)" "... saying so"
KBFS_SYM=0 must_fail 1 "... KBFS_SYM=0: the GPU's scatter refuses them" kbfs --engine cuda -r 1 "$T/badrows"
stderr_has "the row offsets disagree with the rows of the columns (corrupt rank file)" "... saying so"
# a 1x1 block with one entry moved (row offsets right, every checksum
# right): no longer symmetric, refused by the GPU's check of it
rm -rf "$T/asym" && cp -r "$PART" "$T/asym"
kpart_rowidx "$T/asym" rank-00000.kpart 'for my $i (0 .. $#r - 1) { if ($r[$i] + 1 < $r[$i + 1]) { $r[$i]++; last } }'
must_fail 1 "a 1x1 block with an entry without its mirror: refused" kbfs --engine cuda -r 1 "$T/asym"
stderr_has "a 1x1 block whose entries are not symmetric" "... saying so"
KBFS_CUDA_CSR_DEVICE=0 must_fail 1 "... and the host, with KBFS_CUDA_CSR_DEVICE=0" kbfs --engine cuda -r 1 "$T/badrows"
stderr_has "rank-00000.kpart': the row offsets disagree with the rows of the columns" "... naming the file"
# the input's own order (kpart --relabel none) and the step-by-step waits, every grid, scale 12
for g in $GRIDS; do
	part 12 "$g" --relabel none
	for extra in "" "--step-sync" "--bu-kernel word" "--no-bu-first"; do
		rm -rf "$T/d"
		run_ok "kbfs cuda $g scale 12 --relabel none partition $extra: trees validate" \
			kb "$g" --engine cuda $extra -n 8 --depth-out "$T/d" "$PART"
		ok "kbfs cuda $g --relabel none $extra: depths equal --engine cpu's" same_depths "$T/d" "$T/cpu12"
	done
done
# exchange x direction (and no-compress, no-sv) on the square grids, scale 12
MATRIX=1x1
have_mpi && MATRIX="1x1 2x2"
for g in $MATRIX; do
	part 12 "$g"
	for x in bitmap list auto; do
		for d in top-down bottom-up auto; do
			for extra in "" "--no-compress" "--no-sv"; do
				[ -n "$extra" ] && [ "$x$d" != autoauto ] && [ "$x$d" != listbottom-up ] && continue
				rm -rf "$T/d"
				run_ok "kbfs cuda $g scale 12 --exchange $x --direction $d $extra: trees validate" \
					kb "$g" --engine cuda --exchange "$x" --direction "$d" $extra -n 4 --depth-out "$T/d" "$PART"
				ok "kbfs cuda $g --exchange $x --direction $d $extra: depths equal cpu's" same_depths "$T/d" "$T/cpu12"
			done
		done
	done
done
if have_mpi; then
	for g in 1x2 2x2; do
		part 12 "$g"
		for tr in mpi nccl; do
			rm -rf "$T/d"
			run_ok "kbfs cuda $g scale 12 --transport $tr on one GPU" \
				kb "$g" --engine cuda --transport "$tr" -n 4 --depth-out "$T/d" "$PART"
			ok "kbfs cuda $g --transport $tr: depths equal cpu's" same_depths "$T/d" "$T/cpu12"
		done
	done
fi

# --engine auto takes the GPU; -v reports it and NCCL_NVLS_ENABLE
part 12 1x1
run_ok "kbfs --engine auto -v" kb 1x1 --engine auto -v -n 2 "$PART"
stderr_has "GPU" "kbfs -v names the GPU"
stderr_has "GPU-" "kbfs -v gives the GPU's UUID"
if have_mpi; then
	part 12 1x2
	run_ok "kbfs --engine cuda --transport nccl -v (1x2)" kb 1x2 --engine cuda --transport nccl -v -n 2 "$PART"
	stderr_has "NCCL_NVLS_ENABLE=0" "kbfs -v logs NCCL_NVLS_ENABLE=0"
fi
part 12 1x1
run_ok "kbfs --json records the GPU" kb 1x1 --engine cuda -n 2 --json "$T/j.json" "$PART"
ok "the JSON names the GPU's UUID" grep -q 'GPU-' "$T/j.json"
ok "with the phase marks, a level's local step has a time" python3 -c "
import json
d = json.load(open('$T/j.json'))
assert any(l['time']['local'] > 0 for r in d['roots'] for l in r['levels'])"
# the ablation without the phase events: the same trees, the device-timed
# phases 0 (allreduce, the host's wall clock around the counts' reduction
# on a level the host drives, stays timed)
run_ok "KBFS_CUDA_MARKS=0 kbfs: trees validate" env KBFS_CUDA_MARKS=0 kbfs --engine cuda -n 2 --json "$T/nm.json" "$PART"
ok "KBFS_CUDA_MARKS=0: every device-timed phase 0, the search timed" python3 -c "
import json
d = json.load(open('$T/nm.json'))
assert all(v == 0 for r in d['roots'] for l in r['levels'] for k, v in l['time'].items() if k != 'allreduce'), [l['time'] for l in d['roots'][0]['levels']]
assert all(r['time'] > 0 and r['valid'] for r in d['roots'])"
# the host's gaps measured away: each level starts with a 2 ms spin on the
# GPU (KBFS_CUDA_SPIN_US), so a search takes at least 2 ms a level, and the
# trees stay valid
run_ok "KBFS_CUDA_SPIN_US=2000 kbfs: trees validate" env KBFS_CUDA_SPIN_US=2000 kbfs --engine cuda -n 2 --json "$T/sp.json" "$PART"
ok "KBFS_CUDA_SPIN_US=2000: every search at least 2 ms a level" python3 -c "
import json
d = json.load(open('$T/sp.json'))
assert all(r['time'] >= 0.002 * len(r['levels']) and r['valid'] for r in d['roots']), [(r['time'], len(r['levels'])) for r in d['roots']]"
run_ok "KBFS_CUDA_SPIN_US=nonsense: the search runs" env KBFS_CUDA_SPIN_US=nonsense kbfs --engine cuda -n 1 "$PART"
stderr_has "ignoring KBFS_CUDA_SPIN_US" "... with a warning naming the variable"
# each kernel's time (KBFS_CUDA_KTRACE=1): a line a kernel at the end
run_ok "KBFS_CUDA_KTRACE=1 kbfs: the search runs" env KBFS_CUDA_KTRACE=1 KBFS_CUDA_SPIN_US=10 kbfs --engine cuda -n 2 "$PART"
ok "... stderr has a line for the update kernel, with its launches and times" \
	grep -Eq '^ktrace\[rank 0\]: k_update +[1-9][0-9]* launches, mean +[0-9.]+ us, max +[0-9.]+ us, total +[0-9.]+ us$' "$T/err"
ok "... and for the spin" grep -q '^ktrace\[rank 0\]: k_spin ' "$T/err"
ok "... small top-down levels are list levels (k_td_list), without k_td_collect's pass" \
	sh -c "grep -q '^ktrace\[rank 0\]: k_td_list ' '$T/err' && ! grep -q 'k_td_small ' '$T/err'"
run_ok "KBFS_CUDA_KTRACE=1 kbfs --no-td-lists" env KBFS_CUDA_KTRACE=1 kbfs --engine cuda --no-td-lists -n 2 "$PART"
ok "... no list level then: k_td_collect and k_td_small instead" \
	sh -c "! grep -q 'k_td_list ' '$T/err' && grep -q 'k_td_collect ' '$T/err' && grep -q 'k_td_small ' '$T/err'"
run_ok "KBFS_CUDA_TD_LOOP=1 KBFS_CUDA_KTRACE=1 kbfs: the trees validate" \
	env KBFS_CUDA_TD_LOOP=1 KBFS_CUDA_KTRACE=1 kbfs --engine cuda -n 4 "$PART"
ok "... small top-down levels ran in k_td_loop" grep -q '^ktrace\[rank 0\]: k_td_loop ' "$T/err"
# all top-down: the loop declines the levels of more than 1,024 frontier
# vertices, which run level by level between its runs; each keeps its time
run_ok "KBFS_CUDA_TD_LOOP=1 kbfs --direction top-down --json: the trees validate" \
	env KBFS_CUDA_TD_LOOP=1 kbfs --engine cuda --direction top-down -n 4 --json "$T/lp.json" "$PART"
ok "... a level of more than 1,024 frontier vertices ran between the loop's runs, and every level has a time" python3 -c "
import json
d = json.load(open('$T/lp.json'))
lv = [l for r in d['roots'] for l in r['levels']]
assert any(l['frontier'] > 1024 for l in lv), 'no level left to the host'
z = [(r['root'], l['level']) for r in d['roots'] for l in r['levels'] if sum(l['time'].values()) <= 0]
assert not z, 'levels without a time: %s' % z"
run_ok "KBFS_CUDA_LIST_CAP=0 (out of range): the search runs" env KBFS_CUDA_LIST_CAP=0 kbfs --engine cuda -n 1 "$PART"
stderr_has "ignoring KBFS_CUDA_LIST_CAP" "... with a warning naming the variable"
run_ok "KBFS_CUDA_TDEG_BATCH=3 (not 1, 4 or 8): the search runs" env KBFS_CUDA_TDEG_BATCH=3 kbfs --engine cuda -n 1 "$PART"
stderr_has "ignoring KBFS_CUDA_TDEG_BATCH='3' (want 1, 4 or 8)" "... with a warning naming the variable and the values"

# memory plan: --dry-run prints it; a run that does not fit stops before allocating
run_ok "kbfs --engine cuda --dry-run" kb 1x1 --engine cuda --dry-run "$PART"
ok "--dry-run prints the arrays and the free memory" sh -c "grep -q colidx '$T/out' && grep -q free '$T/out'"
must_fail 4 "a GPU with too little free memory: exit 4 before allocating" \
	env KBFS_CUDA_FREE_BYTES=1000000 kbfs --engine cuda -n 1 "$PART"
stderr_has "does not fit" "the refusal names the array that does not fit"
stderr_has "use more ranks or a larger grid" "the refusal says what to do"

# usage errors
must_fail 2 "--kernel nonsense is a usage error" kbfs --engine cuda --kernel nonsense "$PART"
must_fail 2 "--vbfs-k 0 is a usage error" kbfs --engine cuda --kernel vbfs --vbfs-k 0 "$PART"
done_testing
