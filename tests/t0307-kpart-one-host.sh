#!/bin/bash
# kpart under mpirun on one host: every rank reads the whole edge file and
# keeps its own part's keys (no exchange); KBFS_KPART_EXCHANGE=1 keeps the
# exchange; KBFS_KPART_SHARED=1 (an experiment) reads slices and drops the
# keys into the owners' buckets in shared memory.  All write the very files
# one process writes, and a bad input is refused the same way, once.
. "$(dirname "$0")/lib.sh"
need_mpi
kgen -q -s 12 -o "$T/g.kg" || { echo "Bail out! kgen failed"; exit 1; }

# build NAME NP R C [ENV...]: kpart -v under mpirun, its stderr in $T/NAME.err
build() {
	local name=$1 np=$2 R=$3 C=$4
	shift 4
	MPIRUN "$np" env "$@" kpart -v -R "$R" -C "$C" -o "$T/$name" "$T/g.kg" 2>"$T/$name.err"
}

for g in 2x2 1x3; do
	R=${g%x*} C=${g#*x} np=$((R * C))
	kpart -q -R "$R" -C "$C" -o "$T/s-$g" "$T/g.kg"
	build "a-$g" "$np" "$R" "$C"
	is "$?" 0 "$g: built, every rank reading the whole file"
	ok "... said so, and timed pass 2 under its own name" \
		sh -c "grep -q 'every rank reads the whole input (one host)' '$T/a-$g.err' &&
			grep -q '^kpart\[rank 0\]: pass 2 (read all, keep own, drop) ' '$T/a-$g.err'"
	ok "... the same files as one process" same_partition "$T/s-$g" "$T/a-$g"
	build "x-$g" "$np" "$R" "$C" KBFS_KPART_EXCHANGE=1
	is "$?" 0 "$g: built with KBFS_KPART_EXCHANGE=1"
	ok "... through the exchange" \
		sh -c "! grep -q 'whole input' '$T/x-$g.err' &&
			grep -q '^kpart\[rank 0\]: pass 2 (read, exchange, drop) ' '$T/x-$g.err'"
	ok "... the same files as reading all" same_partition "$T/a-$g" "$T/x-$g"
	build "h-$g" "$np" "$R" "$C" KBFS_KPART_SHARED=1
	is "$?" 0 "$g: built with KBFS_KPART_SHARED=1"
	ok "... every rank its slice, into shared memory" \
		sh -c "grep -q 'drops keys into shared memory' '$T/h-$g.err' &&
			grep -q '^kpart\[rank 0\]: pass 2 (read, drop into shared memory) ' '$T/h-$g.err'"
	ok "... the same files as reading all" same_partition "$T/a-$g" "$T/h-$g"
done
# KBFS_KPART_SHARED=1 on a one-column grid: step 4's degree sums and
# permutation gathers over the processor column go through shared memory too
kpart -q -R 4 -C 1 -o "$T/s-4x1" "$T/g.kg"
build h-4x1 4 4 1 KBFS_KPART_SHARED=1
ok "4x1 with KBFS_KPART_SHARED=1: the same files as one process" same_partition "$T/s-4x1" "$T/h-4x1"
build hp-4x1 4 4 1 KBFS_KPART_SHARED=1 KBFS_KPART_POPULATE=0
ok "... and with the window's pages left to fault (KBFS_KPART_POPULATE=0)" same_partition "$T/s-4x1" "$T/hp-4x1"
# one column: each rank counts its own rows' tuple degrees and degrees
# (KBFS_KPART_ROWDEG=0: summed over the column, the ablation)
build r-4x1 4 4 1
ok "4x1: the degrees counted per row, said so" \
	grep -q 'each rank counts its own vertices. tuple degrees and degrees per row' "$T/r-4x1.err"
ok "... the same files as one process" same_partition "$T/s-4x1" "$T/r-4x1"
build r0-4x1 4 4 1 KBFS_KPART_ROWDEG=0
ok "KBFS_KPART_ROWDEG=0: summed over the column instead" sh -c "! grep -q 'per row' '$T/r0-4x1.err'"
ok "... the same files" same_partition "$T/s-4x1" "$T/r0-4x1"
kpart -q -R 3 -C 1 --relabel none -o "$T/s-3x1n" "$T/g.kg"
MPIRUN 3 kpart -v -R 3 -C 1 --relabel none -o "$T/r-3x1n" "$T/g.kg" 2>"$T/r-3x1n.err"
ok "3x1 --relabel none: the tuple degrees alone counted per row" \
	sh -c "grep -q 'tuple degrees per row' '$T/r-3x1n.err' && ! grep -q 'and degrees' '$T/r-3x1n.err'"
ok "... the same files as one process" same_partition "$T/s-3x1n" "$T/r-3x1n"
# the passes read the input through a shared mapping, whole (one host) or a
# slice each (the exchange); KBFS_KPART_MMAP=0 reads by pread (the ablation)
build m-4x1 4 4 1
ok "4x1: the input read through a shared mapping, said so" grep -q 'the input read through a shared mapping' "$T/m-4x1.err"
ok "... the same files as one process" same_partition "$T/s-4x1" "$T/m-4x1"
build m0-4x1 4 4 1 KBFS_KPART_MMAP=0
ok "4x1 with KBFS_KPART_MMAP=0: by pread, said nothing of a mapping" sh -c "! grep -q 'shared mapping' '$T/m0-4x1.err'"
ok "... the same files" same_partition "$T/s-4x1" "$T/m0-4x1"
build pf-4x1 4 4 1 KBFS_KPART_PREFAULT=1
ok "4x1 with KBFS_KPART_PREFAULT=1 (the keys' pages mapped first): said so" grep -q "the keys' pages mapped before pass 2" "$T/pf-4x1.err"
ok "... the same files as one process" same_partition "$T/s-4x1" "$T/pf-4x1"
build mx-2x2 4 2 2 KBFS_KPART_EXCHANGE=1
ok "2x2, slices and the exchange, through the mapping: the same files" same_partition "$T/s-2x2" "$T/mx-2x2"
build mx0-2x2 4 2 2 KBFS_KPART_MMAP=0 KBFS_KPART_EXCHANGE=1
ok "... and by pread (KBFS_KPART_MMAP=0): the same files" same_partition "$T/s-2x2" "$T/mx0-2x2"
# a file cut short by another process under the mapping (the hook cuts it
# to half once mapped): one line naming it, exit 1, no partition, not a crash
cp "$T/g.kg" "$T/cut.kg"
refuse 1 "input cut short under the mapping: exit 1, one line" \
	"^kpart: '$T/cut.kg': the input was cut short while it was being read\$" \
	env KBFS_TEST_KPART_CUT=1 kpart -R 1 -C 1 -o "$T/cut1" "$T/cut.kg"
ok "... no partition left" test ! -e "$T/cut1"
cp "$T/g.kg" "$T/cut.kg"
MPIRUN 4 env KBFS_TEST_KPART_CUT=1 kpart -R 2 -C 2 -o "$T/cut4" "$T/cut.kg" 2>"$T/cut4.err"
ok "... under mpirun (2x2): fails" test "$?" -ne 0
ok "... a rank says why" grep -Eq "'$T/cut.kg': the input (was cut short|changed) while it was being read" "$T/cut4.err"
ok "... no partition left" test ! -e "$T/cut4"
build r-2x2 4 2 2
ok "2x2 (two columns): summed over the column as before" sh -c "! grep -q 'per row' '$T/r-2x2.err'"
build z0 4 2 2 KBFS_KPART_EXCHANGE=0
ok "KBFS_KPART_EXCHANGE=0: reads all, the same files" \
	sh -c "grep -q 'whole input' '$T/z0.err' && cmp -s '$T/s-2x2/rank-00003.kpart' '$T/z0/rank-00003.kpart'"
MPIRUN 4 kpart -v -R 2 -C 2 -o "$T/st" - <"$T/g.kg" 2>"$T/st.err"
ok "standard input: rank 0 reads it into shared memory, every rank reads it all, no exchange" \
	sh -c "grep -q 'the stream read into shared memory' '$T/st.err' && grep -q 'whole input' '$T/st.err' &&
		grep -q 'pass 2 (read all, keep own, drop)' '$T/st.err' &&
		cmp -s '$T/s-2x2/rank-00000.kpart' '$T/st/rank-00000.kpart'"
KBFS_KPART_STAGE=0 MPIRUN 4 kpart -v -R 2 -C 2 -o "$T/st0" - <"$T/g.kg" 2>"$T/st0.err"
ok "standard input, KBFS_KPART_STAGE=0: rank 0 deals it out, the keys exchanged" \
	sh -c "! grep -q 'whole input' '$T/st0.err' && grep -q 'pass 2 (read, exchange, drop)' '$T/st0.err' &&
		grep -q 'the stream dealt out: KBFS_KPART_STAGE=0' '$T/st0.err' &&
		cmp -s '$T/s-2x2/rank-00000.kpart' '$T/st0/rank-00000.kpart'"

# refusals, reading all and exchanging: the exit code, one line, nothing left
# refused NAME NP MESSAGE CMD...: exit 1, MESSAGE once on stderr, no partition
refused() {
	local name=$1 np=$2 msg=$3
	shift 3
	MPIRUN "$np" "$@" >"$T/out" 2>"$T/err"
	is "$?" 1 "$name: exit 1"
	is "$(grep -F -c -- "]: $msg" "$T/err")" 1 "... said once by one rank: $msg"
	ok "... nothing left" sh -c "! ls -d '$T'/bad* 2>/dev/null | grep -q ."
}
cp "$T/g.kg" "$T/flip.kg"
printf '\001' | dd of="$T/flip.kg" bs=1 seek=100000 conv=notrunc 2>/dev/null
for e in KBFS_KPART_EXCHANGE=0 KBFS_KPART_EXCHANGE=1 KBFS_KPART_SHARED=1; do
	refused "a corrupt edge file (2x2, $e)" 4 \
		"'$T/flip.kg': edge data checksum mismatch (corrupt file)" \
		env $e kpart -R 2 -C 2 -o "$T/bad" "$T/flip.kg"
	refused "... on 1x3" 3 "'$T/flip.kg': edge data checksum mismatch (corrupt file)" \
		env $e kpart -R 1 -C 3 -o "$T/bad" "$T/flip.kg"
done
# a vertex beyond the header's count, under valid checksums (kedge(5)):
# every rank that reads the whole file meets it, one reports it
perl -MCompress::Zlib -e '
	my @e = (0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 99, 6, 7, 7, 8);
	my $p = join "", map { pack("V", $_) } @e;
	my $ne = @e / 2;
	my $h = "\x89KEDG\r\n\x1a" . pack("vvVVQ<Q<V", 1, 0, 1, 4, 16, $ne, 0);
	my $t = "KEND" . pack("Q<V", $ne, crc32($p));
	print $h . pack("V", crc32($h)) . $p . $t . pack("V", crc32($t));' >"$T/beyond.kg" ||
	{ echo "Bail out! perl Compress::Zlib failed"; exit 1; }
must_fail 1 "one process: a vertex beyond nv" kpart -R 2 -C 2 -o "$T/bad" "$T/beyond.kg"
for e in KBFS_KPART_EXCHANGE=0 KBFS_KPART_EXCHANGE=1 KBFS_KPART_SHARED=1; do
	refused "a vertex beyond nv (2x2, $e)" 4 \
		"'$T/beyond.kg': edge 5 has vertex 99, beyond the 16 vertices declared" \
		env $e kpart -R 2 -C 2 -o "$T/bad" "$T/beyond.kg"
done
done_testing
