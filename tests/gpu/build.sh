#!/bin/sh
# build.sh: build the CUDA test programs (tests/gpu/*.c) into build/tests/gpu,
# linked like bin/ against build/libkgpu.a and build/libcommon.a.  Run after
# make; prints what it built.  Exit 3 before make, 4 when the build has no CUDA.
set -e
cd "$(dirname "$0")/../.."
if [ ! -f build/libkgpu.a ] || [ ! -f build/libcommon.a ] || [ ! -f build/kbuild.h ]; then
	echo "tests/gpu/build.sh: run make first" >&2
	exit 3
fi
if ! grep -q 'KBUILD_CUDA 1' build/kbuild.h; then
	echo "tests/gpu/build.sh: this build has no CUDA engine (make CUDA=0, or no nvcc)" >&2
	exit 4
fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$NVCC")")}
LIBDIR=
for d in lib64 targets/x86_64-linux/lib lib; do
	if [ -e "$CUDA_HOME/$d/libcudart.so" ]; then
		LIBDIR=$CUDA_HOME/$d
		break
	fi
done
[ -n "$LIBDIR" ] || { echo "tests/gpu/build.sh: no libcudart.so under $CUDA_HOME" >&2; exit 4; }
NCCL_LIB=
grep -q 'KBUILD_NCCL 1' build/kbuild.h && NCCL_LIB=-lnccl
CC=gcc
grep -q 'KBUILD_MPI 1' build/kbuild.h && CC=mpicc
mkdir -p build/tests/gpu
for t in test_codec test_engine; do
	$CC -std=c11 -O2 -g -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -Ilibcommon -Igpu -Ibuild -fopenmp \
		-c tests/gpu/$t.c -o build/tests/gpu/$t.o
	$CC -fopenmp -o build/tests/gpu/$t build/tests/gpu/$t.o build/libkgpu.a build/libcommon.a build/libkgpu.a \
		-L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lcudart $NCCL_LIB -lstdc++ -lz -lm
	echo "built build/tests/gpu/$t"
done
