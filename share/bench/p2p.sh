#!/bin/sh
# p2p.sh [NGPU]: build share/bench/p2p.cu with nvcc and run it: the host
# round trip of a launch, the launch gap, the one-way flag latency between
# two GPUs, a flag barrier and a host-launched push exchange of 8 B to
# 32 MiB a peer over 2, 4 (and 8) GPUs, and the copy engine's, for the model
# of the multi-GPU level loop (share/bench/NOTES.md).  Output on stdout.
set -e
TOP=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-nvcc}
BIN=${TMPDIR:-/tmp}/kbfs-p2p.$$
trap 'rm -f "$BIN"' EXIT
command -v "$NVCC" >/dev/null || { echo "p2p.sh: no nvcc" >&2; exit 2; }
"$NVCC" -O3 -std=c++17 ${NVCC_GENCODE:--arch=sm_90} -o "$BIN" "$TOP/share/bench/p2p.cu" -lpthread
export NCCL_NVLS_ENABLE=0
"$BIN" "$@"
