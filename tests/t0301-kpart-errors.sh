#!/bin/bash
# kpart: bad input, bad options, damaged partitions and a full disk each give
# one line and a documented exit code, and leave nothing half-written.
. "$(dirname "$0")/lib.sh"
kgen -q -s 10 -o "$T/g.kg" || { echo "Bail out! kgen failed"; exit 1; }
size=$(wc -c <"$T/g.kg")

# nothing DIR: neither DIR nor a temporary DIR.kbfs-tmp-* exists
nothing() { [ ! -e "$1" ] && ! ls -d "$1".kbfs-tmp-* >/dev/null 2>&1; }

# ---- the command line: exit 2
run_ok "--help exits 0" kpart --help
ok "--help lists the options" grep -q -- "--relabel MODE" "$T/out"
run_ok "--version exits 0" kpart --version
ok "--version prints the features" grep -q "features: " "$T/out"
must_fail 2 "no grid" kpart "$T/g.kg"
must_fail 2 "no edge file" kpart -R 1 -C 1
must_fail 2 "R = 0" kpart -R 0 -C 1 "$T/g.kg"
must_fail 2 "C = -1" kpart -R 1 -C -1 "$T/g.kg"
must_fail 2 "R = 12abc" kpart -R 12abc -C 1 "$T/g.kg"
must_fail 2 "an unknown option" kpart --bogus -R 1 -C 1 "$T/g.kg"
must_fail 2 "an unknown relabelling" kpart --relabel random -R 1 -C 1 "$T/g.kg"
must_fail 2 "standard input without -o" kpart -R 1 -C 1 -
must_fail 2 "two edge files" kpart -R 1 -C 1 "$T/g.kg" "$T/g.kg"
kgen -q -s 2 -e 4 -o "$T/tiny.kg"
must_fail 2 "a grid with more blocks than vertices (2x3 > 4)" kpart -R 2 -C 3 -o "$T/d" "$T/tiny.kg"
stderr_has "more blocks than" "names the problem"
ok "nothing left" nothing "$T/d"

# ---- the input: exit 3 when unreadable, 1 when damaged
must_fail 3 "a missing edge file" kpart -R 1 -C 1 -o "$T/d" "$T/nope.kg"
stderr_has "cannot open '.*nope.kg': No such file" "names the file and the reason"
ok "nothing left" nothing "$T/d"
must_fail 3 "a directory as input" kpart -R 1 -C 1 -o "$T/d" "$T"
head -c $((size - 100)) "$T/g.kg" >"$T/trunc.kg"
must_fail 1 "a truncated edge file" kpart -R 1 -C 2 -o "$T/d" "$T/trunc.kg"
stderr_has "truncated" "says truncated"
ok "nothing left" nothing "$T/d"
must_fail 1 "a truncated edge file on standard input" kpart -R 1 -C 2 -o "$T/d" - <"$T/trunc.kg"
ok "nothing left" nothing "$T/d"
# flip the low bit of one id in the middle of the payload: only the CRC can tell
cp "$T/g.kg" "$T/flip.kg"
off=$((size / 2 & ~3))
printf "$(printf '\\%03o' $(($(od -An -tu1 -j$off -N1 "$T/g.kg") ^ 1)))" |
	dd of="$T/flip.kg" bs=1 seek=$off conv=notrunc 2>/dev/null
must_fail 1 "a corrupt edge file (one flipped bit)" kpart -R 2 -C 2 -o "$T/d" "$T/flip.kg"
stderr_has "checksum mismatch" "the CRC catches it"
ok "nothing left" nothing "$T/d"
must_fail 1 "a corrupt edge file on standard input" kpart -R 2 -C 2 -o "$T/d" - <"$T/flip.kg"
printf 'not an edge file\n' >"$T/text.kg"
must_fail 1 "not an edge file" kpart -R 1 -C 1 -o "$T/d" "$T/text.kg"
stderr_has "wrong magic" "says so"

# ---- the output: exit 3
run_ok "a first partition" kpart -R 2 -C 2 -o "$T/p" "$T/g.kg"
must_fail 3 "an existing DIR without --force" kpart -R 2 -C 2 -o "$T/p" "$T/g.kg"
stderr_has "use --force" "suggests --force"
must_fail 1 "--force with a damaged input" kpart --force -R 1 -C 1 -o "$T/p" "$T/flip.kg"
ok "the old partition is kept when the new one fails" sh -c "grep -q '^R = 2$' '$T/p/manifest' && kpart --check '$T/p' >/dev/null"
mkdir "$T/mine" && touch "$T/mine/precious"
must_fail 3 "--force does not replace a directory that is not a partition" kpart --force -R 1 -C 1 -o "$T/mine" "$T/g.kg"
ok "which is left alone" test -f "$T/mine/precious"
must_fail 3 "an output under a missing directory" kpart -R 1 -C 1 -o "$T/no/such/dir" "$T/g.kg"
must_fail 3 "an output under a file" kpart -R 1 -C 1 -o "$T/g.kg/sub" "$T/g.kg"

# ---- a full disk: a 64 KiB tmpfs
mkdir -p "$T/full"
if mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
	must_fail 3 "a full disk" kpart -R 2 -C 2 -o "$T/full/p" "$T/g.kg"
	stderr_has "No space left on device" "names the reason"
	ok "nothing left on the full disk" sh -c "[ -z \"\$(ls -A '$T/full')\" ]"
	umount "$T/full"
else
	skip "a full disk: cannot mount a tmpfs here (not root?)"
fi

# ---- kpart --check: good passes, each kind of damage its own message, exit 1
run_ok "--check: a good partition passes" kpart --check "$T/p"
ok "--check: says ok" grep -q ": ok" "$T/out"
cp -r "$T/p" "$T/b"
r1=$T/b/rank-00001.kpart
printf '\377' | dd of="$r1" bs=1 seek=500 conv=notrunc 2>/dev/null
must_fail 1 "--check: a flipped byte" kpart --check "$T/b"
stderr_has "rank-00001.kpart': checksum mismatch" "--check: 'checksum mismatch' names the file"
rm -r "$T/b" && cp -r "$T/p" "$T/b"
truncate -s -7 "$T/b/rank-00002.kpart"
must_fail 1 "--check: a truncated rank file" kpart --check "$T/b"
stderr_has "rank-00002.kpart': truncated rank file" "--check: 'truncated' names the file"
rm -r "$T/b" && cp -r "$T/p" "$T/b"
rm "$T/b/rank-00003.kpart"
must_fail 1 "--check: a missing rank file" kpart --check "$T/b"
stderr_has "rank-00003.kpart': missing rank file" "--check: 'missing' names the file"
rm -r "$T/b" && cp -r "$T/p" "$T/b"
sed -i 's/^nnz = /nnz = 1/' "$T/b/manifest"
must_fail 1 "--check: an edited manifest" kpart --check "$T/b"
stderr_has "corrupt manifest" "--check: the manifest's own checksum"
must_fail 3 "--check: no such partition" kpart --check "$T/nope"
# format 2 stores the CSR's row offsets, not its column indices: each
# reader makes them from the CSC and checks them against the row offsets
rm -r "$T/b" && cp -r "$T/p" "$T/b"
is "$(sed -n 's/^version = //p' "$T/b/manifest")" "2.0" "the manifest says format 2.0"
nnz0=$(sed -n 's/^rank.00000.nnz = //p' "$T/b/manifest") N=$(sed -n 's/^N = //p' "$T/b/manifest")
is "$(wc -c <"$T/b/rank-00000.kpart" | tr -d ' ')" "$((96 + 4 * (N / 2 + 1) * 2 + 4 * nnz0 + 8 * N / 4 + 8 * N / 4 + 20))" \
	"a rank file's size: the CSC, the row offsets, tdeg and orig (no column indices)"
# a flipped byte in the row offsets (a 1x1 partition, for kbfs and kvalidate
# on one process): the CRC
kpart -q -R 1 -C 1 -o "$T/q" "$T/g.kg"
readers=("kpart --check" "kstat" "kbfs --engine cpu -r 1" "kvalidate")
args() { [ "$1" = kvalidate ] && echo "$FIX/pred/valid-crlf-no-final-newline.txt"; }
rm -r "$T/b" && cp -r "$T/q" "$T/b"
nnz0=$(sed -n 's/^rank.00000.nnz = //p' "$T/b/manifest") N=$(sed -n 's/^N = //p' "$T/b/manifest")
printf '\377' | dd of="$T/b/rank-00000.kpart" bs=1 seek=$((96 + 4 * (N + 1) + 4 * nnz0 + 4 * (N / 2))) conv=notrunc 2>/dev/null
for p in "${readers[@]}"; do
	must_fail 1 "a flipped byte in the row offsets: $p" $p "$T/b" $(args "$p")
	stderr_has "rank-00000.kpart': checksum mismatch" "... the CRC catches it"
done
# one row's entry moved to the row before, every checksum right: the
# transpose of the CSC disagrees (kstat reads no arrays: the CRC is right)
rm -r "$T/b" && cp -r "$T/q" "$T/b"
kpart_rows "$T/b" rank-00000.kpart 'for my $i (1 .. $#r - 1) { if ($r[$i] < $r[$i + 1]) { $r[$i]++; last } }'
# (and with KBFS_SYM=0: the 1x1 block transposed as any other, whose row
# counts then disagree)
for p in "kpart --check" "kbfs --engine cpu -r 1" "kvalidate"; do
	for sym in 1 0; do
		KBFS_SYM=$sym must_fail 1 "row offsets that disagree with the CSC, checksums right, KBFS_SYM=$sym: $p" \
			$p "$T/b" $(args "$p")
		stderr_has "rank-00000.kpart': the row offsets disagree with the rows of the columns (corrupt rank file)" \
			"... names the file and the problem"
	done
done
# one entry of a column moved to the next row, the offsets and every
# checksum right: the 1x1 block is no longer symmetric (an entry without
# its mirror); with KBFS_SYM=0 the transpose's row counts disagree
rm -r "$T/b" && cp -r "$T/q" "$T/b"
kpart_rowidx "$T/b" rank-00000.kpart 'for my $i (0 .. $#r - 1) { if ($r[$i] + 1 < $r[$i + 1]) { $r[$i]++; last } }'
for p in "kpart --check" "kbfs --engine cpu -r 1" "kvalidate"; do
	must_fail 1 "an entry without its mirror in a 1x1 block, checksums right: $p" $p "$T/b" $(args "$p")
	stderr_has "rank-00000.kpart': a 1x1 block whose entries are not symmetric (an entry (r, c) without its (c, r): corrupt rank file)" "... names the file and the problem"
	KBFS_SYM=0 must_fail 1 "... KBFS_SYM=0: $p" $p "$T/b" $(args "$p")
	stderr_has "rank-00000.kpart': the row offsets disagree with the rows of the columns (corrupt rank file)" "... the transpose's row counts"
done
rm -r "$T/b" && cp -r "$T/q" "$T/b"
kpart_rows "$T/b" rank-00000.kpart '$r[$#r]--'
must_fail 1 "row offsets that end short of nnz, checksums right" kpart --check "$T/b"
stderr_has "rank-00000.kpart': offsets or indices out of range" "... out of range"

# ---- format 1 (rank files with the CSR's column indices): refused by every
# reader, naming the file, its version and the command that rebuilds it
V1=$FIX/part/v1-1x2
want="'$V1/manifest': partition format 1.0, which this kbfs no longer reads (it reads 2.0); rebuild it with kpart -R 1 -C 2 --relabel none --force -o $V1 tiny.kg"
for p in "kpart --check" "kpart --dump" kstat "kstat --json" "kbfs --engine cpu -r 1" "kvalidate"; do
	refuse 1 "format 1: $p" "$want" $p "$V1" $(args "$p")
done
if have_mpi; then
	MPIRUN 2 kbfs --engine cpu -r 1 "$V1" >"$T/out" 2>"$T/err"
	is "$?" 1 "format 1: kbfs on its 2 ranks, exit 1"
	is "$(grep -cF "$want" "$T/err")" 1 "... the same line, once"
	MPIRUN 2 kvalidate "$V1" "$FIX/pred/valid-crlf-no-final-newline.txt" >"$T/out" 2>"$T/err"
	is "$?" 1 "format 1: kvalidate on its 2 ranks, exit 1"
	is "$(grep -cF "$want" "$T/err")" 1 "... the same line, once"
else
	for k in 1 2 3 4; do skip "format 1 on 2 ranks: no mpirun"; done
fi
# a manifest of 2.0 over rank files of 1.0: the rank file says so
cp -r "$V1" "$T/v1b"
perl -MCompress::Zlib -e '
	local $/; open(my $m, "<", $ARGV[0]) or die; my $man = <$m>; close $m;
	$man =~ s/^version = 1\.0$/version = 2.0/m; $man =~ s/^checksum = .*\n//m;
	$man .= sprintf("checksum = %08x\n", crc32($man));
	open($m, ">", $ARGV[0]) or die; print $m $man; close $m;' "$T/v1b/manifest"
kpart --check "$T/v1b" >"$T/out" 2>"$T/err"
is "$?" 1 "a rank file of format 1 under a 2.0 manifest: exit 1"
stderr_has "rank-00000.kpart': rank file format 1.0, which this kbfs no longer reads (it reads 2.0); rebuild the partition with kpart -R 1 -C 2 --relabel none --force -o $T/v1b tiny.kg" \
	"... names the file, its version and the command"
# the command it gives rebuilds it (the source beside it)
mkdir -p "$T/rebuild" && cp -r "$V1" "$T/rebuild/v1" && kgen -q --from "$FIX/part/v1-1x2.txt" -o "$T/rebuild/tiny.kg"
run_ok "the rebuild command works" sh -c "cd '$T/rebuild' && kpart -q -R 1 -C 2 --relabel none --force -o v1 tiny.kg"
run_ok "and the partition is read" kpart --check "$T/rebuild/v1"
is "$(sed -n 's/^source_crc32 = //p' "$T/rebuild/v1/manifest")" \
	"$(sed -n 's/^source_crc32 = //p' "$V1/manifest")" "from the same edge file"
printf 'x' >>"$T/p/rank-00000.kpart"
must_fail 1 "--check: a rank file with bytes appended" kpart --check "$T/p"
stderr_has "the manifest says" "--check: names the sizes"
done_testing
