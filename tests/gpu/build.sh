#!/bin/sh
# build.sh: build the CUDA test programs (tests/gpu/*.c) into build/tests/gpu
# with `make gpu-tests` (linked like bin/ against build/libkgpu.a and
# build/libcommon.a); prints what it built.  Exit 3 before make, 4 when the
# build has no CUDA engine.
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
${MAKE:-make} --no-print-directory gpu-tests
for t in tests/gpu/*.c; do
	t=$(basename "$t" .c)
	echo "built build/tests/gpu/$t"
done
