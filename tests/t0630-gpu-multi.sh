#!/bin/bash
# Two GPUs: grids 1x2, 2x1 (a rank per GPU) and 2x2 (two ranks per GPU: the
# row axis on distinct GPUs goes through NCCL, the column axis shares a GPU
# and falls back to MPI) with --transport nccl and --transport mpi; the
# engine against the CPU engine (full matrix at scale 12, quick at 14), and
# kbfs --engine cuda end to end, depths compared with --engine cpu.
. "$(dirname "$0")/lib.sh"
need_gpu
need_mpi
. "$TOP/tests/gpu/lib-gpu.sh"
[ "$(gpu_count)" -ge 2 ] || skip_all "fewer than 2 GPUs"
gpu_only 2
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
build_gpu_tests || { echo "Bail out! cannot build the CUDA test programs"; exit 1; }
TRANSPORTS=mpi
grep -q 'KBUILD_NCCL 1' "$TOP/build/kbuild.h" && TRANSPORTS="nccl mpi"
for g in 1x2 2x1 2x2; do
	for tr in $TRANSPORTS; do
		part 12 "$g"
		sub_tap "engine $g scale 12 on 2 GPUs, --transport $tr, full configurations" \
			prun "$g" "$TB/test_engine" --configs full --roots 4 --transport "$tr" "$PART"
		ok "engine $g: the ranks use both GPUs" sh -c "grep -q 'gpu 0/2' '$T/sub.$_n.log' && grep -q 'gpu 1/2' '$T/sub.$_n.log'"
		part 14 "$g"
		sub_tap "engine $g scale 14 on 2 GPUs, --transport $tr" \
			prun "$g" "$TB/test_engine" --configs quick --roots 4 --transport "$tr" "$PART"
	done
done
ok "2x2: the logs show two ranks sharing a GPU" sh -c "cat '$T'/sub.*.log | grep -q 'shared by 2'"

if ! kbfs_wired; then
	skip "kbfs has no --kernel/--transport yet (cmd/kbfs.c not wired): kbfs on 2 GPUs"
	done_testing
	exit
fi
for s in 12 14; do
	part "$s" 1x1
	rm -rf "$T/cpu$s"
	run_ok "kbfs --engine cpu scale $s (reference depths)" prun 1x1 kbfs --engine cpu -n 8 --depth-out "$T/cpu$s" "$PART"
	for g in 1x2 2x1 2x2; do
		part "$s" "$g"
		for tr in $TRANSPORTS; do
			rm -rf "$T/d"
			run_ok "kbfs --engine cuda --transport $tr $g scale $s on 2 GPUs: trees validate" \
				prun "$g" kbfs --engine cuda --transport "$tr" -n 8 --depth-out "$T/d" "$PART"
			keep_log "kbfs-2gpu-$g-s$s-$tr" "$T/err"
			ok "kbfs cuda $tr $g scale $s: depths equal --engine cpu's" same_depths "$T/d" "$T/cpu$s"
		done
	done
done
done_testing
