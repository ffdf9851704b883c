#!/bin/bash
# kpart under mpirun: the ranks share reading and building, and write the
# very same files as one process does (stdin and compressed input included).
. "$(dirname "$0")/lib.sh"
need_mpi
kgen -q -s 12 -o "$T/g.kg" && kgen -q -s 12 -z -o "$T/z.kg" || { echo "Bail out! kgen failed"; exit 1; }

# mfail CODE NAME CMD...: exit CODE and the reason on stderr (mpirun adds its own lines)
mfail() {
	local code=$1 name=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	is "$?" "$code" "$name: exit $code"
}

for g in 2x2 1x2 2x3 3x1; do
	R=${g%x*} C=${g#*x} np=$((R * C))
	kpart -q -R "$R" -C "$C" -o "$T/s-$g" "$T/g.kg"
	run_ok "mpirun -np $np, $g: built" MPIRUN "$np" kpart -R "$R" -C "$C" -o "$T/m-$g" "$T/g.kg"
	ok "mpirun -np $np, $g: the same files as one process" same_partition "$T/s-$g" "$T/m-$g"
done
# (the exchange: on one host the ranks would read the whole file instead, t0307)
run_ok "mpirun -np 4 with rounds of 1000 tuples" MPIRUN 4 env KBFS_KPART_EXCHANGE=1 kpart --round-tuples 1000 -R 2 -C 2 -o "$T/m-small" "$T/g.kg"
ok "small rounds: the same files" same_partition "$T/s-2x2" "$T/m-small"
run_ok "mpirun -np 4, standard input (rank 0 reads, deals chunks)" MPIRUN 4 kpart -R 2 -C 2 -o "$T/m-stdin" - <"$T/g.kg"
ok "standard input: the same rank files" sh -c "cd '$T/s-2x2' && for f in rank-*; do cmp -s \$f '$T/m-stdin/'\$f || exit 1; done"
run_ok "mpirun -np 4, a compressed edge file" MPIRUN 4 kpart -R 2 -C 2 -o "$T/m-z" "$T/z.kg"
ok "compressed: the same rank files" sh -c "cd '$T/s-2x2' && for f in rank-*; do cmp -s \$f '$T/m-z/'\$f || exit 1; done"
kpart -q -R 2 -C 3 --relabel degree -o "$T/s-rel" "$T/g.kg"
run_ok "mpirun -np 6 --relabel degree" MPIRUN 6 kpart -R 2 -C 3 --relabel degree -o "$T/m-rel" "$T/g.kg"
ok "relabelled: the same files" same_partition "$T/s-rel" "$T/m-rel"
run_ok "--check under mpirun" MPIRUN 2 kpart --check "$T/m-rel"
# the device path (a host model of the device, test_kpartdev) on the ranks' own grids
for np in 4 6; do
	MPIRUN $np "$TOP/build/tests/test_kpartdev" >"$T/tk" 2>"$T/tk.err"
	ok "test_kpartdev on $np ranks: the device path's files equal the CPU's" \
		sh -c "grep -q '^1\.\.[1-9]' '$T/tk' && ! grep -q '^not ok' '$T/tk' && grep -q '^# $np ranks' '$T/tk'"
	grep '^not ok' "$T/tk" | sed 's/^/#   /'
done
OMP_NUM_THREADS=2 MPIRUN 4 kpart -q -R 2 -C 2 -o "$T/m-t2" "$T/g.kg"
ok "2 threads per rank: the same files" same_partition "$T/s-2x2" "$T/m-t2"

mfail 2 "R*C != processes" MPIRUN 3 kpart -R 2 -C 2 -o "$T/x" "$T/g.kg"
stderr_has "a 2x2 grid needs 4 processes, not 3" "names both numbers"
ok "nothing left" sh -c "! ls -d '$T'/x* 2>/dev/null | grep -q ."
cp "$T/g.kg" "$T/flip.kg"
printf '\001' | dd of="$T/flip.kg" bs=1 seek=100000 conv=notrunc 2>/dev/null
mfail 1 "a corrupt slice (combined slice CRCs)" MPIRUN 4 kpart -R 2 -C 2 -o "$T/x" "$T/flip.kg"
stderr_has "checksum mismatch" "the combined CRC catches it"
ok "one rank reports it" test "$(grep -c 'checksum mismatch' "$T/err")" = 1
ok "nothing left" sh -c "! ls -d '$T'/x* 2>/dev/null | grep -q ."
mfail 1 "a corrupt stream under mpirun" MPIRUN 4 kpart -R 2 -C 2 -o "$T/x" - <"$T/flip.kg"
ok "nothing left" sh -c "! ls -d '$T'/x* 2>/dev/null | grep -q ."
done_testing
