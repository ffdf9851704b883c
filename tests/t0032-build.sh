#!/bin/bash
# The build's defaults, read from make itself (a rule that prints them,
# added with a second -f): one job per core unless -j is given; the GPU
# engine when nvcc is found and a GPU is visible, else one line that says
# why not; CUDA=1 and CUDA=0 as asked.
. "$(dirname "$0")/lib.sh"
printf 'show:\n\t@echo "[$(MAKEFLAGS)] CUDA=$(CUDA)"\n' >"$T/show.mk"
mkdir "$T/nogpu" "$T/gpu"
printf '#!/bin/sh\nexit 9\n' >"$T/nogpu/nvidia-smi"
printf '#!/bin/sh\necho "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"\n' >"$T/gpu/nvidia-smi"
chmod +x "$T/nogpu/nvidia-smi" "$T/gpu/nvidia-smi"
# mk [VAR=...] ARGS...: make at the top level, as a user types it
mk() { env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS "$@"; }
# show [ARGS...]: make's flags and CUDA as the last line of stdout; what the
# Makefile says ($(info)) before it
show() { mk make -s -C "$TOP" -f Makefile -f "$T/show.mk" "$@" show; }
said() { sed '$d' "$T/out"; }
cuda() { tail -1 "$T/out" | sed 's/.*CUDA=//'; }
n=$(nproc)
is "$(PATH=$T/nogpu:$PATH show | tail -1 | sed 's/^\[\(.*\)\].*/\1/' | tr ' ' '\n' | grep '^-j')" "-j$n" \
	"make: one job per core (-j$n)"
is "$(PATH=$T/nogpu:$PATH show -j1 | tail -1 | sed 's/^\[\(.*\)\].*/\1/' | tr ' ' '\n' | grep '^-j')" "-j1" \
	"make -j1: one job"
PATH=$T/nogpu:$PATH show NVCC=/bin/true >"$T/out" 2>"$T/err"
is "$(cuda)" 0 "nvcc found, no GPU visible: CUDA=0"
is "$(said)" "kbfs: cuda off (nvcc found but no GPU visible: CUDA=1 builds it for GPUs elsewhere) - the GPU engine is not built" \
	"... said in one line"
PATH=$T/gpu:$PATH show NVCC=/bin/true >"$T/out" 2>"$T/err"
is "$(cuda)" 1 "nvcc found and a GPU visible: CUDA=1"
ok "... and nothing said about CUDA" sh -c "! grep -q 'cuda off' '$T/out'"
PATH=$T/nogpu:$PATH show NVCC=/bin/true CUDA=1 >"$T/out" 2>"$T/err"
is "$(cuda)" 1 "CUDA=1 without a GPU: the GPU engine all the same"
PATH=$T/gpu:$PATH show NVCC=/bin/true CUDA=0 >"$T/out" 2>"$T/err"
is "$(cuda) $(said)" "0 kbfs: cuda off (CUDA=0) - the GPU engine is not built" \
	"CUDA=0 with a GPU: off, and says it was asked"
PATH=$T/gpu:$PATH show NVCC= >"$T/out" 2>"$T/err"
is "$(cuda) $(said)" "0 kbfs: cuda off (no nvcc) - the GPU engine is not built" \
	"no nvcc: off, and says so"

# a build without the CUDA engine on a machine with a GPU warns (the device
# node stands in as KBFS_TEST_GPU_NODE)
if kbfs --version | grep -q 'cuda=no'; then
	kgen -q -s 6 -o "$T/g.kg" && kpart -q -R 1 -C 1 -o "$T/g.1x1" "$T/g.kg"
	touch "$T/nvidia0"
	for c in "kgen -s 6 -o $T/h.kg" "kpart -R 1 -C 1 -o $T/h.1x1 $T/g.kg" "kbfs -n 2 $T/g.1x1"; do
		KBFS_TEST_GPU_NODE=$T/nvidia0 $c >/dev/null 2>"$T/err"
		is "$(grep -c "warning: this build has no CUDA engine, but this machine has a GPU ($T/nvidia0): the CPU engine runs; rebuild with make CUDA=1" "$T/err")" 1 \
			"${c%% *} --engine auto, no CUDA engine, a GPU here: one warning"
	done
	KBFS_TEST_GPU_NODE=$T/none kbfs -n 2 "$T/g.1x1" >/dev/null 2>"$T/err"
	ok "... none without the GPU" sh -c "! grep -q 'no CUDA engine' '$T/err'"
	KBFS_TEST_GPU_NODE=$T/nvidia0 kbfs --engine cpu -n 2 "$T/g.1x1" >/dev/null 2>"$T/err"
	ok "... none with --engine cpu" sh -c "! grep -q 'no CUDA engine' '$T/err'"
else
	skip "bin/kbfs has the CUDA engine: nothing to warn about"
fi
done_testing
