#!/bin/bash
# compute-sanitizer over the CUDA engine at scale 12: memcheck, racecheck
# (shared memory of the lb and merrill kernels), synccheck and initcheck on
# the codec and engine tests; memcheck and racecheck of the CSR made on the
# GPU; memcheck on a 2x2 grid sharing the GPU; and
# memcheck/racecheck of kbfs --engine cuda itself.  Any report fails
# (--error-exitcode 99); the sanitizer's lines are shown.
. "$(dirname "$0")/lib.sh"
need_gpu
. "$TOP/tests/gpu/lib-gpu.sh"
CS=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
[ -x "$CS" ] || skip_all "no compute-sanitizer"
gpu_only 1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
build_gpu_tests || { echo "Bail out! cannot build the CUDA test programs"; exit 1; }
part 12 1x1
P=$PART
for tool in memcheck racecheck synccheck initcheck; do
	sub_tap "compute-sanitizer --tool $tool: codec (quick set)" \
		"$CS" --tool $tool --error-exitcode 99 "$TB/test_codec" --quick
	sub_tap "compute-sanitizer --tool $tool: engine 1x1 scale 12, every kernel" \
		"$CS" --tool $tool --error-exitcode 99 "$TB/test_engine" --configs quick --roots 2 "$P"
done
sub_tap "compute-sanitizer memcheck: engine with pieces of 1 word and u64 offsets" \
	env KBFS_CUDA_TD_CHUNK=1 KBFS_CUDA_OFF64=1 "$CS" --tool memcheck --error-exitcode 99 \
	"$TB/test_engine" --configs quick --roots 2 "$P"
for tool in memcheck racecheck; do
	sub_tap "compute-sanitizer --tool $tool: the CSR's column indices made on the GPU (test_engine --csr-device)" \
		"$CS" --tool $tool --error-exitcode 99 "$TB/test_engine" --csr-device --configs quick --roots 2 --kernels lb "$P"
done
sub_tap "compute-sanitizer memcheck: engine with the partition copied through pinned buffers of 4000 bytes" \
	env KBFS_CUDA_STAGED=4000 "$CS" --tool memcheck --error-exitcode 99 \
	"$TB/test_engine" --configs quick --roots 2 "$P"
if have_mpi; then
	part 12 2x2
	sub_tap "compute-sanitizer memcheck: engine 2x2 scale 12 (4 ranks on one GPU)" \
		prun 2x2 "$CS" --tool memcheck --error-exitcode 99 "$TB/test_engine" --configs quick --roots 2 "$PART"
fi
if kbfs_wired; then
	for tool in memcheck racecheck; do
		run_ok "compute-sanitizer --tool $tool kbfs --engine cuda scale 12" \
			"$CS" --tool $tool --error-exitcode 99 kbfs --engine cuda -n 2 "$P"
		keep_log "sanitizer-kbfs-$tool" "$T/out"
	done
else
	skip "kbfs has no --kernel/--transport yet (cmd/kbfs.c not wired): kbfs under the sanitizer"
fi
done_testing
