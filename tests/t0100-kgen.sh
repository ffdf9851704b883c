#!/bin/bash
# kgen: the Graph500 generator, edge for edge; formats; parallel determinism; usage.
. "$(dirname "$0")/lib.sh"

# the reference's edge lists by SHA-256 (tests/vectors/SHA256SUMS)
for s in 10 12; do
	run_ok "kgen -s $s -f text" kgen -s $s -f text -o "$T/v3.txt"
	is "$(sha256_of "$T/v3.txt")" "$(vector_sha kron-v3.0.1-s$s-ef16.txt)" "scale $s text equals the reference 3.0.1 edge list"
	kgen -s $s -f text --g500-version 2 >"$T/v2.txt"
	is "$(sha256_of "$T/v2.txt")" "$(vector_sha kron-v2.1.4-s$s-ef16.txt)" "scale $s --g500-version 2 equals the reference 2.1.4 edge list"
	kgen -s $s -f g500 >"$T/v3.bin"
	is "$(sha256_of "$T/v3.bin")" "$(vector_sha kron-v3.0.1-s$s-ef16.bin)" "scale $s -f g500 equals the 12-byte reference file"
	kgen -s $s -f g500v2 --g500-version 2 >"$T/v2.bin"
	is "$(sha256_of "$T/v2.bin")" "$(vector_sha kron-v2.1.4-s$s-ef16.bin)" "scale $s -f g500v2 equals the 16-byte reference 2.1.4 file"
done

# check values of GRAPH500.md section 1: scale 10, edge 0 is (299, 797)
is "$(kgen -s 10 -f text | head -1)" "299 797" "scale 10 edge 0 scrambled is (299, 797)"
is "$(kgen -s 5 -e 3 -f text | wc -l | tr -d ' ')" "96" "edgefactor x 2^scale edges (3 x 32)"

# other seeds: deterministic, different from the default, same across versions but the rejection limit
a=$(kgen -s 12 --seed1 7 --seed2 11 -f text | cksum)
b=$(kgen -s 12 --seed1 7 --seed2 11 -f text | cksum)
c=$(kgen -s 12 -f text | cksum)
is "$a" "$b" "other seeds are deterministic"
ok "other seeds give another graph" test "$a" != "$c"

# parallel determinism: MPI ranks and OpenMP threads
if have_mpi; then
	MPIRUN 3 kgen -s 16 -o "$T/a.kg" 2>"$T/err"
	OMP_NUM_THREADS=1 kgen -s 16 -o "$T/b.kg"
	OMP_NUM_THREADS=2 kgen -s 16 -o "$T/c.kg"
	ok "mpirun -np 3 equals one thread" cmp -s "$T/a.kg" "$T/b.kg"
	ok "one thread equals two threads" cmp -s "$T/b.kg" "$T/c.kg"
	MPIRUN 2 kgen -s 12 -f text -o "$T/m.txt" 2>"$T/err"
	kgen -s 12 -f text -o "$T/s.txt"
	ok "mpirun -np 2 text equals the serial text" cmp -s "$T/m.txt" "$T/s.txt"
else
	skip "no mpirun: parallel determinism"
fi
OMP_NUM_THREADS=1 kgen -s 14 -z -o "$T/z1.kg"
OMP_NUM_THREADS=2 kgen -s 14 -z -o "$T/z2.kg"
ok "compressed output is deterministic across threads" cmp -s "$T/z1.kg" "$T/z2.kg"
kstat "$T/z1.kg" | grep -v -e '^file:' -e '^format:' >"$T/zs"
kgen -s 14 | kstat - | grep -v -e '^file:' -e '^format:' >"$T/rs"
ok "compressed and raw files hold the same edges" cmp -s "$T/zs" "$T/rs"

# --engine: the CPU engine's file is the default's (the engine is not in
# the file); without a GPU, cuda is refused before anything is written
kgen -s 12 -o "$T/e-default.kg"
run_ok "--engine cpu" kgen --engine cpu -s 12 -o "$T/e-cpu.kg"
ok "--engine cpu writes the same file as the default" cmp -s "$T/e-default.kg" "$T/e-cpu.kg"
run_ok "--engine auto" kgen --engine=auto -s 12 -o "$T/e-auto.kg"
ok "--engine auto writes the same file" cmp -s "$T/e-default.kg" "$T/e-auto.kg"
KBFS_KGEN_CHUNK=1000 kgen -s 12 -o "$T/e-chunk.kg"
ok "chunks of 1000 edges (KBFS_KGEN_CHUNK) give the same file" cmp -s "$T/e-default.kg" "$T/e-chunk.kg"
# chunks of 32 MB are written to a file on all threads at their offsets
# (kio_write_crc); standard output takes the stream: the same bytes
KBFS_KGEN_CHUNK=4194304 kgen -s 18 -o "$T/big.kg"
OMP_NUM_THREADS=1 kgen -s 18 -o - >"$T/big-stream.kg"
ok "chunks written on all threads at their offsets equal the streamed file" cmp -s "$T/big.kg" "$T/big-stream.kg"
run_ok "kstat checks the parallel-written file's checksum" kstat "$T/big.kg"
# on tmpfs the chunks go through a shared mapping by default (KBFS_IO_MMAP=0:
# pwrite); the same bytes either way, and kpart's rank files too
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ]; then
	S=$(mktemp -d /dev/shm/kbfs-t0100.XXXXXX)
	KBFS_KGEN_CHUNK=4194304 kgen -s 18 -o "$S/big.kg"
	ok "on tmpfs (through a mapping): the same file" cmp -s "$T/big.kg" "$S/big.kg"
	KBFS_IO_MMAP=0 KBFS_KGEN_CHUNK=4194304 kgen -s 18 -o "$S/big0.kg"
	ok "on tmpfs with KBFS_IO_MMAP=0 (pwrite): the same file" cmp -s "$T/big.kg" "$S/big0.kg"
	KBFS_IO_MMAP=0 kpart -q --engine cpu -R 1 -C 1 -o "$S/p0" "$S/big.kg"
	kpart -q --engine cpu -R 1 -C 1 -o "$S/p1" "$S/big.kg"
	ok "... kpart's rank file the same bytes both ways" cmp -s "$S/p0/rank-00000.kpart" "$S/p1/rank-00000.kpart"
	run_ok "... and kpart --check passes it" kpart --check "$S/p1"
	rm -rf "$S"
else
	skip "/dev/shm is not a writable tmpfs here: writes through a mapping not tested"
fi
if have_gpu; then
	skip "GPU present: --engine cuda is tested by t0640-gpu-kgen.sh"
else
	must_fail 4 "--engine cuda without a GPU: exit 4" kgen --engine cuda -s 10 -o "$T/e-cuda.kg"
	stderr_has "use --engine cpu" "the refusal says to use --engine cpu"
	ok "the refused run leaves no file" test ! -e "$T/e-cuda.kg"
	run_ok "--engine cuda with --from imports on the CPU" kgen --engine cuda --from "$T/e-cpu.kg" -o "$T/e-imp.kg"
fi
must_fail 2 "--engine gpu is a usage error" kgen --engine gpu -s 5
stderr_has "cpu, cuda, auto" "the usage error lists the engines"
# the generation loop with a device (a mock running the GPU kernel's call
# on the host): alone in make test, here on 3 ranks
if have_mpi; then
	MPIRUN 3 "$TOP/build/tests/test_kgenrun" >"$T/tk" 2>"$T/tk.err"
	ok "test_kgenrun on 3 ranks: the device loop's files equal the CPU's" \
		sh -c "grep -q '^1\.\.24' '$T/tk' && ! grep -q '^not ok' '$T/tk' && grep -q '^# 3 ranks' '$T/tk'"
	grep '^not ok' "$T/tk" | sed 's/^/#   /'
else
	skip "no mpirun: test_kgenrun on 3 ranks"
fi

# (64-bit ids at scale 40 are checked edge by edge in the unit test test_kgen)
must_fail 2 "-s 43 is refused" kgen -s 43
must_fail 2 "-s 12abc is a usage error" kgen -s 12abc
must_fail 2 "-s -1 is a usage error" kgen -s -1
must_fail 2 "-s 99 is a usage error" kgen -s 99
must_fail 2 "-e 0 is a usage error" kgen -s 5 -e 0
must_fail 2 "an unknown option is a usage error" kgen --frobnicate
must_fail 2 "-f nonsense is a usage error" kgen -s 5 -f nonsense
must_fail 2 "no scale and no input is a usage error" kgen
must_fail 2 "--g500-version 4 is a usage error" kgen -s 5 --g500-version 4
must_fail 3 "an unwritable output is an I/O error" kgen -s 5 -o /nonexistent/dir/x.kg
run_ok "--help exits 0" kgen --help
ok "--help names the options" grep -q -- '--g500-version' "$T/out"
ok "--help names --engine and its choices" grep -q -- '--engine E .*cpu, cuda' "$T/out"
run_ok "--version exits 0" kgen --version
ok "--version lists build features" grep -q 'cuda=.* mpi=.* zlib=yes' "$T/out"

# nothing half-written: a failed write leaves no file and no temporary
mkdir "$T/ro" && chmod 555 "$T/ro"
if [ "$(id -u)" != 0 ]; then
	must_fail 3 "unwritable directory" kgen -s 5 -o "$T/ro/x.kg"
fi
ok "no temporary left behind" sh -c "! ls '$T/ro' | grep -q ."
# a full disk: tmpfs of 64 KiB
mkdir -p "$T/full"
if mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
	must_fail 3 "full disk is an I/O error" kgen -s 14 -o "$T/full/x.kg"
	ok "full disk leaves nothing behind" sh -c "! ls -A '$T/full' | grep -q ."
	umount "$T/full"
else
	skip "cannot mount a tmpfs: full-disk case"
fi
# binary data to a terminal is refused (script(1) gives a pty when available)
if command -v script >/dev/null 2>&1; then
	script -qec "kgen -s 4" /dev/null >"$T/tty" 2>&1
	ok "binary output to a terminal is refused" grep -q "refusing to write binary data to a terminal" "$T/tty"
else
	skip "no script(1): terminal refusal"
fi
# SIGPIPE ends quietly
kgen -s 16 -f text 2>"$T/err" | head -1 >/dev/null
is "$(cat "$T/err")" "" "a closed pipe ends kgen quietly"
done_testing
