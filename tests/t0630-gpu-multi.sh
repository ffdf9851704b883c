#!/bin/bash
# Several GPUs.  With one rank a GPU, every grid the GPUs hold (1x2 and
# 2x1 on two; 2x2, 4x1 and 1x4 as well on four; 2x4, 4x2, 8x1 and 1x8 on
# eight) through each transport: peer (the device-resident levels of
# gpu/kgpu_peer.cu), nccl (NCCL alone) and mpi (host staging).  With two
# ranks a GPU (2x2 on two GPUs, 2x4 on four): nccl and mpi, and peer
# refused by name.  The engine (default kernel) against the CPU engine at
# scale 12 on every grid and transport (full configurations for peer on
# 1x2, 2x1 and 2x2 and for nccl with two ranks a GPU, quick ones
# elsewhere), kernels lb and edge at 14; then kbfs --engine cuda end to end
# at scale 14 with peer, nccl and the default (auto: peer where it can
# run), its depths equal to --engine cpu's and its trees validated.
. "$(dirname "$0")/lib.sh"
need_gpu
need_mpi
. "$TOP/tests/gpu/lib-gpu.sh"
ngpu=$(gpu_count)
[ "$ngpu" -ge 2 ] || skip_all "fewer than 2 GPUs"
[ "$ngpu" -ge 8 ] && ngpu=8
[ "$ngpu" -ge 4 ] && [ "$ngpu" -lt 8 ] && ngpu=4
[ "$ngpu" -lt 4 ] && ngpu=2
gpu_only "$ngpu"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} NCCL_NVLS_ENABLE=0
build_gpu_tests || { echo "Bail out! cannot build the CUDA test programs"; exit 1; }
NCCL=0
grep -q 'KBUILD_NCCL 1' "$TOP/build/kbuild.h" && NCCL=1
case $ngpu in
2) ONE="1x2 2x1" TWO=2x2 ;;
4) ONE="1x2 2x1 2x2 4x1 1x4" TWO=2x4 ;;
8) ONE="2x2 4x1 1x4 2x4 4x2 8x1 1x8" TWO=4x4 ;;
esac
echo "# $ngpu GPUs: one rank a GPU on $ONE; two ranks a GPU on $TWO"
fails() { ! "$@" >"$T/out" 2>"$T/err"; }
transports() { # transports GRID: those to try on it
	if [ $NCCL = 0 ]; then
		echo mpi
	elif [ "$1" = "$TWO" ]; then
		echo "nccl mpi"
	else
		echo "peer nccl mpi"
	fi
}

# the engine's kernels are compared one by one on one GPU (t0600): here
# the default kernel, the transports and grids
for g in $ONE $TWO; do
	for tr in $(transports "$g"); do
		part 12 "$g"
		configs=quick
		[ "$tr" = peer ] && case $g in 1x2 | 2x1 | 2x2) configs=full ;; esac
		[ "$g" = "$TWO" ] && [ "$tr" = nccl ] && configs=full
		sub_tap "engine $g scale 12 on $ngpu GPUs, --transport $tr, $configs configurations" \
			prun "$g" "$TB/test_engine" --kernels lb --configs $configs --roots 4 --transport "$tr" "$PART"
		log=$T/sub.$_n.log
		np=$((${g%x*} * ${g#*x}))
		last=$((np < ngpu ? np - 1 : ngpu - 1))
		ok "engine $g: the ranks use GPU 0 and GPU $last" \
			sh -c "grep -q 'gpu 0/$ngpu' '$log' && grep -q 'gpu $last/$ngpu' '$log'"
		[ "$tr" = peer ] && ok "engine $g --transport peer: the peer levels ran" grep -q '(peer transport)' "$log"
	done
	tr=$(transports "$g" | cut -d' ' -f1)
	part 14 "$g"
	sub_tap "engine $g scale 14 on $ngpu GPUs, --transport $tr, kernels lb and edge" \
		prun "$g" "$TB/test_engine" --kernels lb,edge --configs quick --roots 4 --transport "$tr" "$PART"
done
ok "$TWO: the logs show two ranks sharing a GPU" sh -c "cat '$T'/sub.*.log | grep -q 'shared by 2'"
if [ $NCCL = 1 ]; then
	part 12 "$TWO"
	ok "engine $TWO (two ranks a GPU): --transport peer is refused" \
		fails prun "$TWO" "$TB/test_engine" --configs quick --roots 1 --transport peer "$PART"
	ok "... naming the reason" grep -q 'ranks share a GPU' "$T/err"
	part 14 "$TWO"
	ok "kbfs $TWO (two ranks a GPU): --transport peer is refused" \
		fails prun "$TWO" kbfs --engine cuda --transport peer -n 1 "$PART"
	ok "... in one line, naming the reason" sh -c "grep -c 'ranks share a GPU' '$T/err' | grep -qx 1"
fi

if ! kbfs_wired; then
	skip "kbfs has no --kernel/--transport yet (cmd/kbfs.c not wired): kbfs on several GPUs"
	done_testing
	exit
fi
s=14
part $s 1x1
rm -rf "$T/cpu$s"
run_ok "kbfs --engine cpu scale $s (reference depths)" prun 1x1 kbfs --engine cpu -n 8 --depth-out "$T/cpu$s" "$PART"
for g in $ONE $TWO; do
	part "$s" "$g"
	for tr in auto $(transports "$g" | sed 's/ mpi//'); do
		rm -rf "$T/d"
		run_ok "kbfs --engine cuda --transport $tr $g scale $s on $ngpu GPUs: trees validate" \
			prun "$g" kbfs --engine cuda --transport "$tr" -n 8 -v --json "$T/run.json" --depth-out "$T/d" "$PART"
		keep_log "kbfs-multi-$g-s$s-$tr" "$T/err"
		ok "kbfs cuda $tr $g scale $s: depths equal --engine cpu's" same_depths "$T/d" "$T/cpu$s"
		want=$tr
		if [ "$tr" = auto ]; then
			want=peer
			[ "$g" = "$TWO" ] && want=nccl
			[ $NCCL = 0 ] && want=mpi
		fi
		ok "kbfs $tr $g scale $s: the record names transport $want" \
			grep -q "\"transport\": \"$want\"" "$T/run.json"
	done
done
if [ $NCCL = 1 ]; then
	part 14 "${ONE%% *}"
	rm -rf "$T/d"
	run_ok "kbfs --transport peer --dense-push ${ONE%% *} scale 14: trees validate" \
		prun "${ONE%% *}" kbfs --engine cuda --transport peer --dense-push -n 8 --depth-out "$T/d" "$PART"
	ok "... depths equal --engine cpu's" same_depths "$T/d" "$T/cpu14"
	# the rows several ranks found credited to the lowest column, not the
	# owner first (the ablation of the default), on a grid of two columns
	g2=
	for g in $ONE; do case $g in *x1) ;; *) g2=$g && break ;; esac; done
	part 12 "$g2"
	export KBFS_PEER_WON=lowest
	sub_tap "engine $g2 --transport peer, rows credited to the lowest column (KBFS_PEER_WON=lowest)" \
		prun "$g2" "$TB/test_engine" --kernels lb --configs quick --roots 4 --transport peer "$PART"
	export KBFS_PEER_WON=nonsense
	run_ok "KBFS_PEER_WON=nonsense: kbfs $g2 runs" prun "$g2" kbfs --engine cuda --transport peer -n 1 "$PART"
	unset KBFS_PEER_WON
	stderr_has "ignoring KBFS_PEER_WON='nonsense' (want owner or lowest)" "... with a warning naming the variable"
	# the owner's own rows' predecessors decoded after the search, not
	# written in the update (the ablation), and flags a release store each
	export KBFS_PEER_OWN_PRED=decode KBFS_PEER_FLAGS=release
	sub_tap "engine $g2 --transport peer, own predecessors after the search, a release store a flag" \
		prun "$g2" "$TB/test_engine" --kernels lb --configs quick --roots 4 --transport peer "$PART"
	export KBFS_PEER_OWN_PRED=nonsense KBFS_PEER_FLAGS=nonsense KBFS_PEER_CLEAR=nonsense KBFS_PEER_UPDATE_BLOCKS=0 \
		KBFS_PEER_FOLD_BLOCKS=many KBFS_PEER_PRED_BLOCKS=-1
	run_ok "KBFS_PEER_OWN_PRED, _FLAGS, _CLEAR, _UPDATE_BLOCKS, _FOLD_BLOCKS and _PRED_BLOCKS nonsense: kbfs $g2 runs" \
		prun "$g2" kbfs --engine cuda --transport peer -n 1 "$PART"
	unset KBFS_PEER_OWN_PRED KBFS_PEER_FLAGS KBFS_PEER_CLEAR KBFS_PEER_UPDATE_BLOCKS KBFS_PEER_FOLD_BLOCKS \
		KBFS_PEER_PRED_BLOCKS
	stderr_has "ignoring KBFS_PEER_UPDATE_BLOCKS='0' (want 1 to " "... and one naming the fourth"
	stderr_has "ignoring KBFS_PEER_FOLD_BLOCKS='many' (want 1 to " "... and one naming the fifth"
	stderr_has "ignoring KBFS_PEER_PRED_BLOCKS='-1' (want 1 to " "... and one naming the sixth"
	stderr_has "ignoring KBFS_PEER_OWN_PRED='nonsense' (want update or decode)" "... with a warning naming it"
	stderr_has "ignoring KBFS_PEER_FLAGS='nonsense' (want fence or release)" "... and one naming the second"
	stderr_has "ignoring KBFS_PEER_CLEAR='nonsense' (want 0 or 1)" "... and one naming the third"
	# the dense frontier's buffers cleared ahead on the grids of several
	# rows and columns (the fold's and the predecessors' paths too)
	for g in $ONE; do
		case $g in 1x* | *x1) continue ;; esac
		part 12 "$g"
		export KBFS_PEER_CLEAR=1
		sub_tap "engine $g --transport peer, buffers of a dense frontier cleared ahead (KBFS_PEER_CLEAR=1)" \
			prun "$g" "$TB/test_engine" --kernels lb --configs quick --roots 4 --transport peer "$PART"
		unset KBFS_PEER_CLEAR
		# the fold and the predecessor step on 3 blocks (each several turns of words)
		export KBFS_PEER_FOLD_BLOCKS=3 KBFS_PEER_PRED_BLOCKS=3
		sub_tap "engine $g --transport peer, the fold and the predecessor step on 3 blocks (KBFS_PEER_FOLD_BLOCKS=3, KBFS_PEER_PRED_BLOCKS=3)" \
			prun "$g" "$TB/test_engine" --kernels lb --configs quick --roots 4 --transport peer "$PART"
		unset KBFS_PEER_FOLD_BLOCKS KBFS_PEER_PRED_BLOCKS
	done
	part 14 "${ONE%% *}"
	# the transport's trace (logged with -v): each level's update stamped on
	# the GPU, and (grids of several columns) the predecessor step's kernels timed
	export KBFS_PEER_TRACE=1
	run_ok "KBFS_PEER_TRACE=1 kbfs -v --transport peer ${ONE%% *} scale 14: trees validate" \
		prun "${ONE%% *}" kbfs -v --engine cuda --transport peer -n 2 "$PART"
	unset KBFS_PEER_TRACE
	ok "... a line a search: the update of levels 1 and 2 in four parts" \
		grep -Eq 'peer transport: update by level \(us: [^)]*\): 1: [0-9.]+/[0-9.]+/[0-9.]+/[0-9.]+ 2: [0-9.]+/' "$T/err"
	case ${ONE%% *} in
	*x1) ;;
	*) ok "... and the predecessor step's kernels" grep -q 'peer transport: predecessors (us): won ' "$T/err" ;;
	esac
	# the frontier lists of small top-down levels on a one-column grid (the
	# peer update lists each rank's new frontier words for its column):
	# used, off, and overflowing at 2 words (the fallback to the bitmaps)
	RX1=
	for g in $ONE; do case $g in *x1) RX1=$g && break ;; esac; done
	if [ -n "$RX1" ]; then
		part 14 "$RX1"
		rm -rf "$T/d"
		export KBFS_CUDA_KTRACE=1
		run_ok "kbfs --transport peer $RX1 scale 14 (KBFS_CUDA_KTRACE=1): trees validate" \
			prun "$RX1" kbfs --engine cuda --transport peer -n 8 --depth-out "$T/d" "$PART"
		unset KBFS_CUDA_KTRACE
		ok "... depths equal --engine cpu's" same_depths "$T/d" "$T/cpu14"
		ok "... small top-down levels are list levels (k_td_list)" grep -q 'k_td_list ' "$T/err"
		part 12 "$RX1"
		sub_tap "engine $RX1 --transport peer --no-td-lists" \
			prun "$RX1" "$TB/test_engine" --kernels lb --configs quick --roots 4 --transport peer --no-td-lists "$PART"
		export KBFS_CUDA_LIST_CAP=2
		sub_tap "engine $RX1 --transport peer, lists of at most 2 words (KBFS_CUDA_LIST_CAP=2)" \
			prun "$RX1" "$TB/test_engine" --kernels lb --configs full --roots 4 --transport peer "$PART"
		unset KBFS_CUDA_LIST_CAP
		# experiment VAR=1 WHAT: test_engine on $RX1 with it (full
		# configurations), then with lists of at most 2 words too (list
		# levels that overflow mid-search)
		experiment() {
			export "$1"
			sub_tap "engine $RX1 --transport peer, $2 ($1)" \
				prun "$RX1" "$TB/test_engine" --kernels lb --configs full --roots 4 --transport peer "$PART"
			export KBFS_CUDA_LIST_CAP=2
			sub_tap "engine $RX1 --transport peer, $1 with lists of at most 2 words" \
				prun "$RX1" "$TB/test_engine" --kernels lb --configs quick --roots 4 --transport peer "$PART"
			unset KBFS_CUDA_LIST_CAP "${1%%=*}"
		}
		experiment KBFS_PEER_CLEAR=1 "buffers of a dense frontier cleared ahead"
		experiment KBFS_PEER_UPDATE_BLOCKS=3 "the update on 3 blocks (each several turns of words)"
		experiment KBFS_PEER_UPDATE_BLOCKS=all "the update on 8 blocks a multiprocessor (the ablation)"
		experiment KBFS_CUDA_TD_LOOP=1 "small top-down levels in one launch"
		part 14 "$RX1"
		rm -rf "$T/d"
		export KBFS_CUDA_KTRACE=1 KBFS_CUDA_TD_LOOP=1
		run_ok "kbfs --transport peer $RX1 scale 14, KBFS_CUDA_TD_LOOP=1: trees validate" \
			prun "$RX1" kbfs --engine cuda --transport peer -n 8 --depth-out "$T/d" "$PART"
		unset KBFS_CUDA_KTRACE KBFS_CUDA_TD_LOOP
		ok "... depths equal --engine cpu's" same_depths "$T/d" "$T/cpu14"
		ok "... small top-down levels ran in k_td_loop_peer" grep -q 'k_td_loop_peer ' "$T/err"
	fi
	# PRED on the grids of several columns: by default not cleared at each
	# search's start, its unreached entries put right after the levels
	# (peer) or left to the row's reduction (nccl); on the Kronecker graph,
	# and on a graph of several components, whose roots reach different
	# vertices one search after another (a stale entry fails the engine's
	# validation); KBFS_CUDA_PRED_FINISH=0, the ablation, clears it
	kgen -q --from "$FIX/import/components.txt" -o "$T/comp.kg" || { echo "Bail out! kgen components"; exit 1; }
	for g in $ONE; do
		case $g in *x1) continue ;; esac
		part 12 "$g"
		sub_tap "engine $g --transport peer, PRED put right after the search, not cleared (the default)" \
			prun "$g" "$TB/test_engine" --kernels lb --configs full --roots 4 --transport peer "$PART"
		sub_tap "engine $g --transport nccl, PRED written whole by the row's reduction, not cleared" \
			prun "$g" "$TB/test_engine" --kernels lb --configs quick --roots 4 --transport nccl "$PART"
		KBFS_CUDA_PRED_FINISH=0 sub_tap "engine $g --transport peer, PRED cleared at every start (KBFS_CUDA_PRED_FINISH=0)" \
			prun "$g" "$TB/test_engine" --kernels lb --configs quick --roots 4 --transport peer "$PART"
		CP=$T/comp-$g
		[ -d "$CP" ] || kpart -q -R "${g%x*}" -C "${g#*x}" -o "$CP" "$T/comp.kg" ||
			{ echo "Bail out! kpart components $g"; exit 1; }
		sub_tap "engine $g --transport peer, 16 roots in components of several sizes, PRED not cleared" \
			prun "$g" "$TB/test_engine" --kernels lb --configs quick --roots 16 --transport peer "$CP"
	done
fi
done_testing
