#!/bin/bash
# kpart --engine cuda: the GPU's partitions (manifest and every rank file,
# format 2.0: kpart --check reads each back) cmp-identical to --engine
# cpu's on every grid t0300 and t0302 cover,
# relabel degree and none, --wide, an imported graph with an id map, a
# compressed edge file, standard input, one process and mpirun (the ranks
# sharing the GPU); a small device (KBFS_CUDA_FREE_BYTES) sorts in pieces
# with the same files, and so do copies through small pinned buffers
# (KBFS_CUDA_STAGED), with 2 or 2^20 buckets (KBFS_KPART_BUCKET_BITS) and
# with the keys dropped into shared memory (KBFS_KPART_SHARED);
# one too small for a bucket is refused before
# allocating (auto builds there on the host, the same files); auto is the
# GPU; -v reports the device's times; kpart -s generates the graph on the
# GPUs (and on the CPU with KBFS_KPART_GEN=cpu) with the edge file's rank
# files; compute-sanitizer finds nothing.  Without a GPU: test_kpartdev runs the device path on a host
# model of the device (make test), t0300 checks the refusal.
. "$(dirname "$0")/lib.sh"
need_gpu
. "$TOP/tests/gpu/lib-gpu.sh"
need_cuda_build
gpu_only 1

# same NAME GRID INPUT ARGS...: kpart ARGS on the GPU and on the CPU (2
# threads) give the same manifest and rank files; CUDA_ENV goes before the
# GPU run, NP (ranks under mpirun) before both
same() {
	local name=$1 g=$2 in=$3
	shift 3
	local R=${g%x*} C=${g#*x} src=$in
	[ "$in" = - ] && src=$T/s10.kg # standard input: the scale-10 file
	rm -rf "$T/g" "$T/c"
	if [ -n "${NP:-}" ]; then
		MPIRUN "$NP" env ${CUDA_ENV:-} kpart -q --engine cuda -R "$R" -C "$C" "$@" -o "$T/g" "$in" 2>"$T/err" <"$src"
	else
		env ${CUDA_ENV:-} kpart -q --engine cuda -R "$R" -C "$C" "$@" -o "$T/g" "$in" 2>"$T/err" <"$src"
	fi
	local rc=$?
	OMP_NUM_THREADS=2 kpart -q --engine cpu -R "$R" -C "$C" "$@" -o "$T/c" "$in" <"$src"
	# format 2.0 (the CSC and the CSR's row offsets), read back and checked
	if [ "$rc" -eq 0 ] && same_partition "$T/c" "$T/g" && [ "$(sed -n 's/^version = //p' "$T/g/manifest")" = 2.0 ] &&
		kpart --check "$T/g" >/dev/null 2>&1; then
		return 0
	fi
	echo "#   $name: kpart --engine cuda -R $R -C $C $* $in (exit $rc) differs from --engine cpu" >&2
	sed 's/^/#   /' "$T/err" | head -5 >&2
	return 1
}

for s in 10 12 14; do
	graph $s
done
kgen -q -s 11 -z -o "$T/z.kg"
printf '7 42\n42 1000000007\n1000000007 7\n7 7\n9 42\n9 42\n123456789012 5\n5 9\n' >"$T/sparse.txt"
kgen -q --from "$T/sparse.txt" -o "$T/sparse.kg"

# t0300's grids at scales 10 and 14 (12 too), both orderings
for s in 10 12 14; do
	for rel in degree none; do
		bad=
		for g in 1x1 1x2 2x1 2x2 1x4 4x1 2x3 3x2; do
			same "s$s $g $rel" "$g" "$T/s$s.kg" --relabel "$rel" || bad="$bad $g"
		done
		ok "scale $s, --relabel $rel: every grid's files on the GPU equal the CPU's${bad:+ (not:$bad)}" test -z "$bad"
	done
done
ok "--wide (u64 indices), 2x2" same wide 2x2 "$T/s12.kg" --wide
ok "--wide, --relabel none, 1x1" same wide1 1x1 "$T/s12.kg" --wide --relabel none
ok "an imported graph with an id map, 1x2" same sparse 1x2 "$T/sparse.kg"
ok "an imported graph, 1x1, --relabel none" same sparse1 1x1 "$T/sparse.kg" --relabel none
ok "a compressed edge file, 2x2" same z 2x2 "$T/z.kg"
ok "standard input, 2x2" same stdin 2x2 -
CUDA_ENV="KBFS_CUDA_STAGED=4000" ok "copies through pinned buffers of 4000 bytes (KBFS_CUDA_STAGED=4000), 2x2" \
	same staged 2x2 "$T/s12.kg"
CUDA_ENV="KBFS_CUDA_STAGED=0" ok "plain copies (KBFS_CUDA_STAGED=0), 2x2" same plain 2x2 "$T/s12.kg"
CUDA_ENV="KBFS_KPART_BUCKET_BITS=1" ok "2 buckets, 64-bit residuals (KBFS_KPART_BUCKET_BITS=1), 1x1" \
	same bb1 1x1 "$T/s14.kg"
CUDA_ENV="KBFS_KPART_BUCKET_BITS=20" ok "the most buckets (KBFS_KPART_BUCKET_BITS=20), 2x2" same bb20 2x2 "$T/s14.kg"
graph 18
ok "scale 18, 1x1" same s18 1x1 "$T/s18.kg"
ok "scale 18, 2x2, --relabel none" same s18n 2x2 "$T/s18.kg" --relabel none

# t0302's grids under mpirun (every rank on the one GPU)
if have_mpi; then
	for g in 2x2 1x2 2x3 3x1; do
		NP=$((${g%x*} * ${g#*x})) ok "mpirun -np $((${g%x*} * ${g#*x})), $g: the GPU's files equal one CPU process's" \
			same "mpi $g" "$g" "$T/s12.kg"
	done
	NP=6 ok "mpirun -np 6, 2x3, --relabel none" same mpin 2x3 "$T/s12.kg" --relabel none
	NP=4 ok "mpirun -np 4, 2x2, --wide" same mpiw 2x2 "$T/s12.kg" --wide
	NP=4 CUDA_ENV="KBFS_KPART_SHARED=1" ok "mpirun -np 4, 4x1, keys dropped in shared memory (KBFS_KPART_SHARED=1)" \
		same mpish 4x1 "$T/s14.kg"
else
	skip "no mpirun: multi-rank kpart on the GPU"
fi

# -v: the engine, the device's steps and times
run_ok "kpart --engine cuda -v" kpart -v --engine cuda -R 1 -C 1 -o "$T/v" "$T/s14.kg"
stderr_has "engine cuda" "-v: the engine"
stderr_has "bound GPU" "-v: the GPU the rank bound"
stderr_has "CSC (device)" "-v: the CSC step on the device"
stderr_has "computing and" "-v: the device's compute and copy times"
grep -E 'device|total' "$T/err" | sed 's/^/# /'
ok "build-info names the engine" grep -q '^engine = cuda$' "$T/v/build-info"

# memory: pieces on a small device, a refusal on a tiny one
CUDA_ENV="KBFS_CUDA_FREE_BYTES=300000000" ok "300 MB free: scale 18, 1x1 in pieces, the same files" \
	same pieces 1x1 "$T/s18.kg"
KBFS_CUDA_FREE_BYTES=300000000 kpart -v --engine cuda -R 1 -C 1 -o "$T/pc" "$T/s18.kg" 2>"$T/err"
ok "... -v says the CSC took more than one piece" grep -Eq 'CSC in ([2-9]|[1-9][0-9]+) piece' "$T/err"
must_fail 4 "a GPU with 1 MB free: exit 4 before allocating" \
	env KBFS_CUDA_FREE_BYTES=1000000 kpart --engine cuda -R 1 -C 1 -o "$T/none" "$T/s14.kg"
stderr_has "do not fit" "the refusal names what does not fit"
stderr_has "--engine cpu" "the refusal says what to do"
ok "nothing left after the refusal" sh -c "! ls -d '$T'/none* 2>/dev/null | grep -q ."
est=$(kpart --dry-run --json -R 1 -C 1 "$T/s18.kg" | sed -n 's/^ *"build_device_bytes_max": *\([0-9]*\).*/\1/p')
KBFS_CUDA_FREE_BYTES=$est kpart -v --engine cuda -R 1 -C 1 -o "$T/est" "$T/s18.kg" 2>"$T/err"
ok "with --dry-run's estimate free ($est bytes), scale 18 1x1 is built in one piece" grep -q 'CSC in 1 piece' "$T/err"
rm -rf "$T/c" "$T/a"
OMP_NUM_THREADS=2 kpart -q --engine cpu -R 2 -C 2 -o "$T/c" "$T/s14.kg"
KBFS_CUDA_FREE_BYTES=1000000 run_ok "auto with 1 MB free: built on the host" kpart -v -R 2 -C 2 -o "$T/a" "$T/s14.kg"
stderr_has "built on the host (--engine auto)" "... -v names the blocks built on the host"
ok "... the CPU's files" same_partition "$T/c" "$T/a"
run_ok "auto (the default) on the GPU" kpart -v -R 2 -C 2 -o "$T/a2" "$T/s14.kg"
stderr_has "engine cuda" "... -v says it built on the GPU"
ok "... the CPU's files" same_partition "$T/c" "$T/a2"

# kpart -s on the GPU: the graph made by each rank's GPU (kgen's device,
# in chunks: KBFS_KGEN_CHUNK makes many) and built there gives the edge
# file's partition, one process and mpirun: by default made again for each
# pass; with KBFS_KPART_FEED=0 generated once into shared memory (staged
# and, with KBFS_KPART_STAGE=0, in slices); -v names the device;
# KBFS_KPART_GEN=cpu (the CPU's generator, staged) the same files
for g in 1x1 2x2 4x1; do
	R=${g%x*} C=${g#*x} np=$((R * C))
	rm -rf "$T/fs" "$T/gs"
	OMP_NUM_THREADS=2 kpart -q --engine cpu -R "$R" -C "$C" -o "$T/fs" "$T/s14.kg"
	for v in X=0 KBFS_KGEN_CHUNK=5000 KBFS_KPART_FEED=0 "KBFS_KPART_FEED=0 KBFS_KGEN_CHUNK=5000" \
		"KBFS_KPART_FEED=0 KBFS_KPART_STAGE=0" KBFS_KPART_GEN=cpu; do
		rm -rf "$T/gs"
		# shellcheck disable=SC2086
		if [ "$np" = 1 ]; then
			env $v kpart -v --engine cuda -R 1 -C 1 -s 14 -o "$T/gs" >"$T/out" 2>"$T/err"
		else
			MPIRUN "$np" env $v kpart -v --engine cuda -R "$R" -C "$C" -s 14 -o "$T/gs" >"$T/out" 2>"$T/err"
		fi
		is "$?" 0 "kpart -s 14 --engine cuda $g ($v): built"
		ok "... the edge file's rank files" same_but 'source|source_bytes|source_program|source_argv' "$T/fs" "$T/gs"
		case $v in
		KBFS_KPART_GEN=cpu)
			ok "... generated on the CPU" grep -q 'generated into shared memory: .* M edges/s, CPU)' "$T/err" ;;
		"KBFS_KPART_FEED=0 KBFS_KPART_STAGE=0") ;;
		KBFS_KPART_FEED=0*)
			ok "... generated on the GPU into shared memory" \
				grep -q 'generated into shared memory: .* M edges/s, cuda)' "$T/err" ;;
		*)
			ok "... made again for each pass on the GPU (the default)" \
				grep -q 'made again for each pass in .* chunks, on cuda' "$T/err" ;;
		esac
	done
done

# compute-sanitizer: whole block and pieces
CS=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
if [ -x "$CS" ]; then
	kpart -q --engine cpu -R 1 -C 2 -o "$T/c12s" "$T/s12.kg"
	for tool in memcheck initcheck synccheck; do
		rm -rf "$T/s12s"
		run_ok "compute-sanitizer --tool $tool kpart --engine cuda scale 12, 1x2" \
			"$CS" --tool $tool --error-exitcode 99 kpart -q --engine cuda -R 1 -C 2 -o "$T/s12s" "$T/s12.kg"
		ok "... and its files equal the CPU's" same_partition "$T/c12s" "$T/s12s"
	done
else
	skip "no compute-sanitizer"
fi
done_testing
