#!/bin/bash
# The CUDA engine's wire codec (pack/unpack) against libcommon's host codec,
# byte for byte both ways, over segment geometries (1..8 segments, 1 to 2^20
# words, aligned and odd capacities) and bit patterns (empty, boundaries,
# sparse, dense, runs, 4-byte gaps, full), every exchange mode and merge.
. "$(dirname "$0")/lib.sh"
need_gpu
. "$TOP/tests/gpu/lib-gpu.sh"
gpu_only 1
build_gpu_tests || { echo "Bail out! cannot build the CUDA test programs"; exit 1; }
sub_tap "device pack/unpack == kbfs_encode/kbfs_decode, every geometry and pattern" "$TB/test_codec"
sub_tap "the same, quick set, second run (no state left behind)" "$TB/test_codec" --quick
done_testing
