#!/bin/bash
# kgen --engine cuda: the GPU's edge files cmp-identical to --engine cpu's
# for scales 1..16, edgefactors 1, 3 and 16, both generator versions, other
# seeds, several thread counts and chunk sizes (KBFS_KGEN_CHUNK: many
# chunks through both slots), every output format, 1 and 3 ranks under
# mpirun; the reference's edge lists (tests/vectors); --engine auto takes
# the GPU; -v reports the device's generation and copy times; the memory
# plan refuses before allocating; compute-sanitizer finds nothing.
# Without a GPU: t0100 checks the refusal, test_kgenrun the generation
# loop with a mock device.
. "$(dirname "$0")/lib.sh"
need_gpu
. "$TOP/tests/gpu/lib-gpu.sh"
need_cuda_build
gpu_only 1

# same NAME ARGS...: kgen ARGS on the GPU and on the CPU (2 threads) give
# the same file; CUDA_ENV, when set, goes before the GPU run
same() {
	local name=$1
	shift
	rm -f "$T/g" "$T/c"
	env ${CUDA_ENV:-} kgen -q --engine cuda "$@" -o "$T/g" 2>"$T/err"
	local rc=$?
	OMP_NUM_THREADS=2 kgen -q --engine cpu "$@" -o "$T/c"
	if [ "$rc" -eq 0 ] && cmp -s "$T/g" "$T/c"; then
		return 0
	fi
	echo "#   $name: kgen --engine cuda $* (exit $rc) differs from --engine cpu" >&2
	sed 's/^/#   /' "$T/err" | head -5 >&2
	return 1
}

# every scale 1..16 for one edgefactor and version, in one TAP line
all_scales() {
	local ef=$1 v=$2 s bad=
	for s in $(seq 1 16); do
		same "scale $s" -s "$s" -e "$ef" --g500-version "$v" || bad="$bad $s"
	done
	[ -z "$bad" ] || { echo "#   scales that differ:$bad"; return 1; }
}
for ef in 16 1 3; do
	for v in 3 2; do
		ok "edgefactor $ef, version $v: scales 1..16 on the GPU equal the CPU's" all_scales "$ef" "$v"
	done
done

# the reference's own files
for s in 10 12; do
	kgen --engine cuda -s $s -f text -o "$T/v3.txt"
	is "$(sha256_of "$T/v3.txt")" "$(vector_sha kron-v3.0.1-s$s-ef16.txt)" "cuda scale $s text equals the reference 3.0.1 edge list"
	kgen --engine cuda -s $s -f g500v2 --g500-version 2 -o "$T/v2.bin"
	is "$(sha256_of "$T/v2.bin")" "$(vector_sha kron-v2.1.4-s$s-ef16.bin)" "cuda scale $s -f g500v2 --g500-version 2 equals the reference 2.1.4 file"
	kgen --engine cuda -s $s -f g500 -o "$T/v3.bin"
	is "$(sha256_of "$T/v3.bin")" "$(vector_sha kron-v3.0.1-s$s-ef16.bin)" "cuda scale $s -f g500 equals the reference 3.0.1 12-byte file"
done

# other seeds, formats, compression
ok "seeds 7, 11 (scale 14)" same seeds -s 14 --seed1 7 --seed2 11
ok "seeds 0, 2^64-1 (scale 13, v2)" same seeds2 -s 13 --seed1 0 --seed2 18446744073709551615 --g500-version 2
ok "seed1 2^62 (scale 15, edgefactor 3)" same seeds3 -s 15 -e 3 --seed1 4611686018427387904
for f in text g500 g500v2; do
	ok "-f $f (scale 12)" same "f $f" -s 12 -f "$f"
done
ok "-z (scale 16)" same z -s 16 -z

# thread counts (the host side of the GPU run) and chunk sizes: one edge,
# under a thread's run (64), odd, a few chunks, one chunk
for t in 1 2 4; do
	CUDA_ENV="OMP_NUM_THREADS=$t" ok "$t OpenMP thread(s), scale 16" same "threads $t" -s 16
done
for c in 1 63 64 1000 65537 262144; do
	s=16
	[ "$c" -lt 64 ] && s=10
	CUDA_ENV="KBFS_KGEN_CHUNK=$c" ok "chunks of $c edges (KBFS_KGEN_CHUNK), scale $s" same "chunk $c" -s $s
done
CUDA_ENV="KBFS_KGEN_CHUNK=777" ok "chunks of 777 edges, scale 14, edgefactor 3, v2" same c777 -s 14 -e 3 --g500-version 2
ok "scale 20 (16 M edges, one chunk)" same s20 -s 20

# 3 ranks on the GPU (sharing it) against 1 CPU rank
if have_mpi; then
	kgen -q --engine cpu -s 16 -o "$T/c16"
	for c in "" 1000 99999; do
		rm -f "$T/m16"
		MPIRUN 3 env ${c:+KBFS_KGEN_CHUNK=$c} kgen -q --engine cuda -s 16 -o "$T/m16" 2>"$T/err"
		ok "mpirun -np 3 --engine cuda (chunks of ${c:-the default} edges) equals one CPU rank" cmp -s "$T/m16" "$T/c16"
	done
	kgen -q --engine cpu -s 12 -e 3 --g500-version 2 -f text -o "$T/c12"
	MPIRUN 3 kgen -q --engine cuda -s 12 -e 3 --g500-version 2 -f text -o "$T/m12" 2>"$T/err"
	ok "mpirun -np 3 --engine cuda text, edgefactor 3, v2, equals the CPU's" cmp -s "$T/m12" "$T/c12"
	MPIRUN 3 kgen -q --engine cpu -s 12 -e 3 --g500-version 2 -f text -o "$T/p12" 2>"$T/err"
	ok "mpirun -np 3 --engine cpu equals it too" cmp -s "$T/p12" "$T/c12"
else
	skip "no mpirun: 3 ranks"
fi

# auto takes the GPU; -v reports the engine and the device's times
run_ok "kgen --engine auto -v" kgen --engine auto -v -s 16 -o "$T/a16"
stderr_has "engine cuda" "-v: auto chose the cuda engine"
stderr_has "bound GPU" "-v: the GPU the rank bound"
stderr_has "generated on the cuda device in" "-v: the device's generation time"
stderr_has "copied to the host in" "-v: the copy time, apart"
stderr_has "written in" "-v: the write time, apart"
grep 'generated on' "$T/err" | sed 's/^/# /'
ok "auto's file equals the CPU's" cmp -s "$T/a16" "$T/c16"

# the memory plan: refused before allocating, nothing written
must_fail 4 "a GPU with 1 MB free: exit 4 before allocating" \
	env KBFS_CUDA_FREE_BYTES=1000000 kgen --engine cuda -s 16 -o "$T/none.kg"
stderr_has "do not fit" "the refusal names the edge buffers that do not fit"
stderr_has "--engine cpu" "the refusal says what to do"
ok "no file after the refusal" test ! -e "$T/none.kg"
CUDA_ENV="KBFS_CUDA_FREE_BYTES=300000000" ok "300 MB free is enough for chunks of 1 M edges (scale 16)" same fit -s 16

# compute-sanitizer: the kernel and both slots (chunks of 5000 edges)
CS=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
if [ -x "$CS" ]; then
	kgen -q --engine cpu -s 12 -o "$T/c12s"
	for tool in memcheck initcheck synccheck; do
		rm -f "$T/s12"
		run_ok "compute-sanitizer --tool $tool kgen --engine cuda scale 12, chunks of 5000 edges" \
			env KBFS_KGEN_CHUNK=5000 "$CS" --tool $tool --error-exitcode 99 kgen -q --engine cuda -s 12 -o "$T/s12"
		ok "... and its file equals the CPU's" cmp -s "$T/s12" "$T/c12s"
	done
else
	skip "no compute-sanitizer"
fi
done_testing
