#!/bin/bash
# Bad input, the second round (issue 21), as a hostile or careless user
# gives it: never lose a user's file, never crash on a setting.  One
# section per finding of the issue; t0140 holds the first round.
. "$(dirname "$0")/lib.sh"
K=$FIX/kedge
I=$FIX/import
TO=20 # seconds: a hang is exit 124
SHM=
trap 'rm -rf "$T" ${SHM:+"$SHM"}' EXIT

kpart -q -R 1 -C 1 -o "$T/good" "$K/good.kedge" ||
	{ echo "Bail out! cannot partition good.kedge"; exit 1; }

# ---- 1. only a temporary that a dead kbfs provably made is removed ----
# old PATH...: untouched for an hour
old() { touch -h -d '1 hour ago' "$@"; }
# decoys OUT: files and directories beside OUT that a user made, named as
# kbfs's temporaries were (NAME.old.XXXXXX, NAME.tmp.XXXXXX) or nearly as
# they are now, old enough to look stale
decoys() {
	local o=$1
	echo mine >"$o.old.backup"
	mkdir -p "$o.tmp.2024ab" && echo mine >"$o.tmp.2024ab/notes"
	echo mine >"$o.kbfs-tmp-Ab12Cd"             # no lock beside it
	echo mine >"$o.kbfs-tmp-Ef34Gh"
	echo mine >"$o.kbfs-tmp-Ef34Gh.lock"        # a lock that is not kbfs's
	echo mine >"$o.kbfs-tmp-Ij56Kl"             # a kbfs lock of a live process
	printf 'kbfs-tmp 1\nkind=file\npid=%d\nhost=%s\nprogram=kgen\n' $$ "$(hostname)" >"$o.kbfs-tmp-Ij56Kl.lock"
	mkdir -p "$o.kbfs-tmp-Mn78Op" && echo mine >"$o.kbfs-tmp-Mn78Op/notes" # a directory, the lock says file
	printf 'kbfs-tmp 1\nkind=file\npid=999999999\nhost=%s\nprogram=kgen\n' "$(hostname)" >"$o.kbfs-tmp-Mn78Op.lock"
	echo mine >"$o.kbfs-tmp-Qr12St"             # a lock like kbfs's, of a dead pid, but not kbfs's first line
	printf 'kind=file\npid=999999999\nhost=%s\nprogram=kgen\n' "$(hostname)" >"$o.kbfs-tmp-Qr12St.lock"
	old "$o".old.backup "$o".tmp.2024ab/notes "$o".tmp.2024ab "$o".kbfs-tmp-*/notes "$o".kbfs-tmp-*
}
# intact OUT: every decoy of OUT is still there, as it was
intact() {
	local o=$1 f
	for f in "$o.old.backup" "$o.tmp.2024ab/notes" "$o.kbfs-tmp-Ab12Cd" "$o.kbfs-tmp-Ef34Gh" \
		"$o.kbfs-tmp-Ef34Gh.lock" "$o.kbfs-tmp-Ij56Kl" "$o.kbfs-tmp-Ij56Kl.lock" "$o.kbfs-tmp-Mn78Op/notes" \
		"$o.kbfs-tmp-Mn78Op.lock" "$o.kbfs-tmp-Qr12St" "$o.kbfs-tmp-Qr12St.lock"; do
		[ -f "$f" ] || { echo "#   $f is gone"; return 1; }
	done
	[ "$(cat "$o.old.backup" "$o.tmp.2024ab/notes")" = "$(printf 'mine\nmine')" ]
}
D=$T/decoy
mkdir -p "$D/pred" "$D/depth"
for o in g.kg m.txt g2.kg p s.svg run.json pred/pred-1.txt depth/depth-1.txt; do
	decoys "$D/$o"
done
run_ok "1: kgen -s with decoys beside its output" kgen -q -s 4 -o "$D/g.kg"
ok "1: ... every decoy beside g.kg is intact" intact "$D/g.kg"
run_ok "1: kgen --from --map" kgen -q --from "$I/snap.txt" --map "$D/m.txt" -o "$D/g2.kg"
ok "1: ... the decoys beside the edge file are intact" intact "$D/g2.kg"
ok "1: ... and beside the map" intact "$D/m.txt"
run_ok "1: kpart" kpart -q -R 1 -C 1 -o "$D/p" "$D/g.kg"
run_ok "1: kpart --force" kpart -q --force -R 1 -C 1 -o "$D/p" "$D/g.kg"
ok "1: ... the decoys beside the partition are intact" intact "$D/p"
run_ok "1: kbfs --json --pred-out --depth-out" kbfs -q -r 1 --json "$D/run.json" --pred-out "$D/pred" \
	--depth-out "$D/depth" "$D/p"
for o in run.json pred/pred-1.txt depth/depth-1.txt; do
	ok "1: ... the decoys beside $o are intact" intact "$D/$o"
done
run_ok "1: kstat --svg" kstat --svg "$D/s.svg" "$D/g.kg"
ok "1: ... the decoys beside the SVG are intact" intact "$D/s.svg"
run_ok "1: kvalidate checks the tree" kvalidate "$D/g.kg" "$D/pred/pred-1.txt"
mkdir "$T/trees" && cp "$D/pred/pred-1.txt" "$T/trees/" && echo 1 >"$T/trees/pred-1.txt.kbfs-tmp-Uv12Wx"
run_ok "1: kvalidate DIR passes over a kbfs temporary in it" kvalidate "$D/g.kg" "$T/trees"
is "$(grep -c ': valid' "$T/out")" 1 "1: ... one tree checked"

# stop_mid_write PID GLOB: SIGSTOP for PID once a file matching GLOB (its
# temporary) is there, as soon as it is seen (no machine is fast enough to
# finish in between); 10 s at most
stop_mid_write() {
	local pid=$1 glob=$2 t0=$SECONDS
	# shellcheck disable=SC2086 # the glob is meant to expand
	until ls -d $glob >/dev/null 2>&1 || [ $((SECONDS - t0)) -ge 10 ]; do :; done
	kill -STOP "$pid" 2>/dev/null
}
# kill_mid_write PID GLOB: the same, then SIGKILL
kill_mid_write() {
	stop_mid_write "$@"
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
# a run killed with SIGKILL leaves its temporary and its lock; the next
# run removes both once they are stale
kgen -q -s 20 -o "$T/big.kg" &
k=$!
kill_mid_write $k "$T/big.kg.kbfs-tmp-??????"
ok "1: kill -9 leaves big.kg.kbfs-tmp-XXXXXX" sh -c "ls '$T'/big.kg.kbfs-tmp-?????? >/dev/null 2>&1"
ok "1: ... and its lock, which names kgen and its pid" \
	sh -c "grep -q '^pid=$k\$' '$T'/big.kg.kbfs-tmp-??????.lock && grep -q '^program=kgen\$' '$T'/big.kg.kbfs-tmp-??????.lock"
run_ok "1: a kgen -o big.kg at once" kgen -q -s 4 -o "$T/big.kg"
ok "1: ... leaves the fresh temporary alone" sh -c "ls '$T'/big.kg.kbfs-tmp-?????? >/dev/null 2>&1"
old "$T"/big.kg.kbfs-tmp-*
run_ok "1: a kgen -o big.kg once it is stale" kgen -q -s 4 -o "$T/big.kg"
ok "1: ... removed the dead run's temporary and lock" sh -c "! ls -d '$T'/big.kg.kbfs-tmp-* 2>/dev/null | grep -q ."
kgen -q -s 17 -o "$T/g17.kg"
kpart -q -R 1 -C 1 -o "$T/p17" "$T/g17.kg" &
kill_mid_write $! "$T/p17.kbfs-tmp-??????"
ok "1: kill -9 of kpart leaves p17.kbfs-tmp-XXXXXX/" test -d "$(ls -d "$T"/p17.kbfs-tmp-?????? | head -1)"
old "$T"/p17.kbfs-tmp-*
run_ok "1: the next kpart -o p17" kpart -q -R 1 -C 1 -o "$T/p17" "$T/g17.kg"
ok "1: ... removed the dead kpart's directory and lock" sh -c "! ls -d '$T'/p17.kbfs-tmp-* 2>/dev/null | grep -q ."
# a lock a live process holds (flock), though its pid is gone: kept
L=$T/held.kg.kbfs-tmp-Qr90St
echo data >"$L"
dead=$(sh -c 'echo $$')
printf 'kbfs-tmp 1\nkind=file\npid=%d\nhost=%s\nprogram=kgen\n' "$dead" "$(hostname)" >"$L.lock"
old "$L" "$L.lock"
if command -v flock >/dev/null; then
	flock -o "$L.lock" sh -c "echo \$\$ >'$T/sleeper'; exec sleep 30" </dev/null >/dev/null 2>&1 &
	holder=$!
	for i in $(seq 50); do [ -s "$T/sleeper" ] && break; sleep 0.1; done
	run_ok "1: kgen -o held.kg beside a held lock" kgen -q -s 4 -o "$T/held.kg"
	ok "1: ... kept the temporary a live writer holds" test -f "$L" -a -f "$L.lock"
	kill $holder "$(cat "$T/sleeper")" 2>/dev/null
	wait $holder 2>/dev/null
else
	skip "no flock(1): a held lock"
fi
run_ok "1: kgen -o held.kg once nobody holds it" kgen -q -s 4 -o "$T/held.kg"
ok "1: ... removed the temporary of the dead pid" test ! -e "$L" -a ! -e "$L.lock"

# ---- 2. kpart --force replaces a partition, nothing else ----
kpart -q -R 1 -C 1 -o "$T/p2" "$K/good.kedge"
echo mine >"$T/p2/notes.txt"
refuse 3 "2: kpart --force over a partition holding a user's file" \
	"refusing to replace '.*p2': not a kbfs partition (it holds 'notes.txt')" \
	kpart -q --force -R 1 -C 1 -o "$T/p2" "$K/good.kedge"
ok "2: ... the file is still there" test -f "$T/p2/notes.txt"
mkdir "$T/p3" && echo "my notes" >"$T/p3/manifest"
refuse 3 "2: kpart --force over a directory with a user's file named manifest" \
	"not a kbfs partition (it holds 'manifest')" kpart -q --force -R 1 -C 1 -o "$T/p3" "$K/good.kedge"
ok "2: ... which is still there" grep -q "my notes" "$T/p3/manifest"
echo mine >"$T/f3"
refuse 3 "2: kpart --force over a regular file" "not a kbfs partition (not a directory)" \
	kpart -q --force -R 1 -C 1 -o "$T/f3" "$K/good.kedge"
ok "2: ... which is still there" grep -q mine "$T/f3"
rm "$T/p2/notes.txt"
run_ok "2: kpart --force over a partition" kpart -q --force -R 1 -C 1 -o "$T/p2" "$K/good.kedge"
# a file a user puts in the partition while kpart --force builds its
# replacement: looked at again before the swap, it is kept
kpart -q -R 1 -C 1 -o "$T/p17b" "$T/g17.kg"
kpart -q --force -R 1 -C 1 -o "$T/p17b" "$T/g17.kg" 2>"$T/err" &
k=$!
stop_mid_write $k "$T/p17b.kbfs-tmp-??????"
echo mine >"$T/p17b/notes.txt"
kill -CONT $k
wait $k
is "$?" 3 "2: kpart --force, a file put in the partition while it builds: exit 3"
stderr_has "refusing to replace '.*p17b': not a kbfs partition (it holds 'notes.txt')" "2: ... naming it"
ok "2: ... the file is still there" grep -q mine "$T/p17b/notes.txt"
ok "2: ... and no temporary is left" sh -c "! ls -d '$T'/p17b.kbfs-tmp-* 2>/dev/null | grep -q ."
mkdir "$T/empty"
run_ok "2: kpart --force over an empty directory" kpart -q --force -R 1 -C 1 -o "$T/empty" "$K/good.kedge"
ok "2: ... now a partition" kpart --check "$T/empty"

# ---- 3. a file under /dev or /proc goes by a temporary too ----
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	SHM=$(mktemp -d /dev/shm/kbfs-test.XXXXXX)
	kgen -q -s 4 -o "$SHM/g.kg" && cp "$SHM/g.kg" "$T/before.kg"
	kgen -q -s 20 -o "$SHM/g.kg" &
	kill_mid_write $! "$SHM/g.kg.kbfs-tmp-??????"
	ok "3: kgen -o /dev/shm/g.kg killed mid-write keeps the previous file" cmp -s "$SHM/g.kg" "$T/before.kg"
	ok "3: ... and wrote to a temporary" sh -c "ls '$SHM'/g.kg.kbfs-tmp-?????? >/dev/null 2>&1"
	run_ok "3: kgen -o /dev/shm/g.kg" kgen -q -s 5 -o "$SHM/g.kg"
	run_ok "3: ... a whole edge file" kstat "$SHM/g.kg"
else
	skip "no writable /dev/shm"
fi
run_ok "3: a character device is written in place (-o /dev/null)" kgen -q -s 4 -o /dev/null
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/from-fifo" &
run_ok "3: so is a fifo" timeout "$TO" kgen -q -s 4 -f text -o "$T/fifo"
wait
ok "3: ... whose reader got the edges" test "$(wc -l <"$T/from-fifo")" -eq 256

# ---- 4. the id 2^64-1, kbfs's padding marker, is refused on import ----
printf '1 2\n2 3\n18446744073709551615 1\n' >"$T/max-id.txt"
refuse 1 "4: kgen --from an edge list with the id 2^64-1" \
	"max-id.txt:3: id 18446744073709551615 is reserved" kgen --from "$T/max-id.txt" -o "$T/x.kg"
ok "4: ... nothing written" test ! -e "$T/x.kg"
refuse 1 "4: kstat of it" "max-id.txt:3: id 18446744073709551615 is reserved" kstat "$T/max-id.txt"
printf '1,2\n18446744073709551615,2\n' >"$T/max-id.csv"
refuse 1 "4: CSV too" "max-id.csv:2: id 18446744073709551615 is reserved" kgen --from "$T/max-id.csv" -o "$T/x.kg"
run_ok "4: --skip-bad skips the line" kgen -q --skip-bad --from "$T/max-id.txt" -o "$T/x.kg"
refuse 1 "4: an edge file whose id map holds 2^64-1 (checksums right)" "id map entry 2 is 2^64-1" \
	kstat "$K/map-reserved-id.kedge"
printf '18446744073709551614 1\n1 2\n' >"$T/max-1.txt"
run_ok "4: 2^64-2 is an id like any other" kgen -q --from "$T/max-1.txt" -o "$T/max-1.kg"
run_ok "4: ... through kpart" kpart -q -R 1 -C 1 -o "$T/max-1" "$T/max-1.kg"
run_ok "4: ... and kbfs from it" kbfs -q -r 18446744073709551614 "$T/max-1"
ok "4: ... which reaches the 3 vertices" grep -q 'reached 3 vertices' "$T/out"

# ---- 5. numbers are decimal everywhere: one parser ----
kgen -q -s 012 -e 4 -o "$T/s12.kg"
run_ok "5: kgen -s 012" kstat "$T/s12.kg"
ok "5: ... is scale 12, not 10" grep -q 'Kronecker scale 12,' "$T/out"
run_ok "5: kpart -R 010 -C 1" kpart -q -R 010 -C 1 -o "$T/r10" "$T/s12.kg"
ok "5: ... is a 10x1 grid, not 8x1" grep -q '^R = 10$' "$T/r10/manifest"
kpart -q -R 1 -C 1 -o "$T/s12" "$T/s12.kg"
run_ok "5: kbfs -r 010" kbfs -r 010 "$T/s12"
ok "5: ... searches from vertex 10, not 8" grep -q '^root 10:' "$T/out"
printf '# roots\n010\n' >"$T/roots-010.txt"
run_ok "5: kbfs --roots with the line 010" kbfs -q --roots "$T/roots-010.txt" --json - "$T/s12"
ok "5: ... searches from vertex 10" grep -q '"root": 10,' "$T/out"
printf '010 1\n1 2\n' >"$T/e010.txt"
run_ok "5: an edge list's 010" kgen -q --from "$T/e010.txt" -f text -o "$T/e010.out"
is "$(head -1 "$T/e010.out")" "10 1" "5: ... is vertex 10, as every number"
refuse 2 "5: kgen -s 0x10 (no hexadecimal)" "'0x10' is not a whole number" kgen -s 0x10 -o "$T/x.kg"
refuse 2 "5: kbfs -r ' 5' (no blank)" "' 5' is not a whole number" kbfs -r ' 5' "$T/s12"
refuse 2 "5: kbfs -r +5 (no sign)" "'+5' is not a whole number" kbfs -r +5 "$T/s12"
refuse 2 "5: kbfs --alpha 0x10 (no hexadecimal float)" "'0x10' is not a number" kbfs --alpha 0x10 "$T/s12"
refuse 2 "5: kbfs --beta inf" "'inf' is not a number" kbfs --beta inf "$T/s12"
run_ok "5: kbfs --alpha 1.5e1 --beta 24" kbfs -q -r 10 --alpha 1.5e1 --beta 24 "$T/s12"
printf '0x10\n' >"$T/roots-hex.txt"
refuse 1 "5: a roots file's 0x10" "roots-hex.txt:1: '0x10' is not a vertex id" kbfs --roots "$T/roots-hex.txt" "$T/s12"
refuse 2 "5: kpart --gpu-memory 0x50G" "'0x50G' is not a size" kpart --dry-run -s 20 -R 1 -C 1 --gpu-memory 0x50G
(cd "$T" && kbfs-run --mpirun echo -g 010x1 04) >"$T/out" 2>&1
ok "5: kbfs-run -g 010x1 04 runs 10 ranks (the shell took 010 for 8)" grep -q -- '-n 10 kpart -R 10 -C 1' "$T/out"
ok "5: ... of scale 4, in kbfs-s4-ef16" grep -q -- 'kgen -s 4 -e 16 --force -o kbfs-s4-ef16/g.kg' "$T/out"

# ---- 6. OMP_NUM_THREADS is bounded as --threads is ----
kbfs -q -r 10 --pred-out "$T/t6" "$T/s12" >/dev/null
for n in 100000 40000 2,100000; do
	for p in kgen kpart kbfs kvalidate kstat; do
		case $p in
		kgen) set -- kgen -s 10 -o "$T/x.kg" ;;
		kpart) set -- kpart -R 1 -C 1 -o "$T/x" "$T/s12.kg" ;;
		kbfs) set -- kbfs -r 10 "$T/s12" ;;
		kvalidate) set -- kvalidate "$T/s12.kg" "$T/t6" ;;
		kstat) set -- kstat "$T/s12.kg" ;;
		esac
		refuse 2 "6: OMP_NUM_THREADS=$n $p" "OMP_NUM_THREADS: '$n' is more than 4096 threads" \
			env OMP_NUM_THREADS=$n "$@"
	done
done
run_ok "6: --threads 2 overrides it" env OMP_NUM_THREADS=100000 kgen -q -s 10 --threads 2 -o "$T/x.kg"
run_ok "6: a list of two levels is taken" env OMP_NUM_THREADS=2,1 kbfs -q -r 10 "$T/s12"
run_ok "6: 4096 threads are (kgen, 1 rank)" env OMP_NUM_THREADS=4096 kgen -q -s 10 -o "$T/x.kg"
refuse 2 "6: --threads 4097" "'4097' is not a whole number from 1 to 4096" kgen -s 10 --threads 4097 -o "$T/x.kg"

# ---- 7. a fifo where kbfs reads a file by name is refused, not waited on ----
cp -r "$T/s12" "$T/fifo-rank" && rm "$T/fifo-rank/rank-00000.kpart" && mkfifo "$T/fifo-rank/rank-00000.kpart"
refuse 3 "7: kbfs, a fifo for a rank file" "rank-00000.kpart': not a regular file (a fifo)" kbfs -r 10 "$T/fifo-rank"
refuse 3 "7: kstat, the same" "rank-00000.kpart': not a regular file" kstat "$T/fifo-rank"
refuse 3 "7: kpart --check, the same" "rank-00000.kpart': not a regular file" kpart --check "$T/fifo-rank"
cp -r "$T/s12" "$T/fifo-man" && rm "$T/fifo-man/manifest" && mkfifo "$T/fifo-man/manifest"
refuse 3 "7: kbfs, a fifo for the manifest" "manifest': not a regular file (a fifo)" kbfs -r 10 "$T/fifo-man"
refuse 3 "7: kvalidate, a partition whose manifest is a fifo" "manifest': not a regular file" \
	kvalidate "$T/fifo-man" "$T/t6"
if have_mpi; then
	kpart -q -R 1 -C 2 -o "$T/s12x2" "$T/s12.kg" && rm "$T/s12x2/rank-00001.kpart" && mkfifo "$T/s12x2/rank-00001.kpart"
	MPI_TIMEOUT=$TO MPIRUN 2 kbfs -q -r 10 "$T/s12x2" >"$T/out" 2>"$T/err"
	is "$?" 3 "7: under mpirun -np 2, rank 1's fifo ends the job (exit 3, no hang)"
	stderr_has "rank-00001.kpart': not a regular file" "7: ... naming the file"
else
	skip "no mpirun"
	skip "no mpirun"
fi
mkdir "$T/trees7" && cp "$T"/t6/pred-* "$T/trees7/" && mkfifo "$T/trees7/pred-3.txt"
timeout "$TO" kvalidate "$T/s12.kg" "$T/trees7" >"$T/out" 2>"$T/err"
is "$?" 3 "7: kvalidate DIR with a fifo named pred-3.txt: exit 3, no hang"
stderr_has "pred-3.txt': not a regular file" "7: ... naming it"
ok "7: ... the regular tree is still checked" grep -q 'pred-10.txt: valid' "$T/out"
# a pipe the user names is read as a stream, once (kmagic and the kedge
# check look at it without consuming it)
run_ok "7: kstat <(cat g.kg), an edge file through a pipe" kstat <(cat "$T/s12.kg")
ok "7: ... read whole" grep -q 'Kronecker scale 12' "$T/out"
run_ok "7: kstat <(cat FILE.txt), a text graph through a pipe" kstat <(cat "$I/snap.txt")
run_ok "7: kgen --from <(cat g.kg)" kgen -q --from <(cat "$T/s12.kg") -o "$T/via-pipe.kg"
run_ok "7: ... the same graph" kstat "$T/via-pipe.kg"
printf '10\n' >"$T/roots10"
run_ok "7: kbfs --roots <(cat FILE)" kbfs -q --roots <(cat "$T/roots10") "$T/s12"
run_ok "7: kgen -o - | kpart - still works" sh -c "kgen -q -s 6 -o - | kpart -q -R 1 -C 1 -o '$T/from-pipe' -"

# ---- 8. a gapbs .sg is read no further than its header's size ----
# (an undirected path 0-1: 2 vertices, 2 entries, 49 bytes as a .sg)
sg2() { perl -e 'print pack("C Q< Q<", 0, 2, 2), pack("Q<*", 0, 1, 2), pack("l<*", 1, 0)'; }
sg2 >"$T/p2.sg"
run_ok "8: a 2-vertex .sg is read" kstat "$T/p2.sg"
{ sg2; head -c 1G /dev/zero; } | gzip -1 >"$T/zeros.sg.gz"
# 200 MB of address space: the whole stream would take 1 GiB (exit 4);
# AddressSanitizer reserves terabytes of it, so under make test SAN=1 the
# message alone is checked
LIMIT="ulimit -v 200000 &&"
[ "${KBFS_SAN:-0}" = 1 ] && LIMIT=
refuse 1 "8: the same followed by 1 GiB of zeros, gzip'd, under ulimit -v 200000" \
	"gapbs serialized graph of 2 vertices and 2 entries: data after its 49 bytes (.sg) or 57 (.wsg)" \
	sh -c "$LIMIT exec kgen --from '$T/zeros.sg.gz' -o '$T/x.kg'"
{ sg2; printf 'junk-junk-junk'; } >"$T/junk.sg"
refuse 1 "8: a .sg with 14 bytes after it" "data after its 49 bytes" kstat "$T/junk.sg"
refuse 1 "8: the same through a pipe" "data after its 49 bytes" sh -c "cat '$T/junk.sg' | kstat -"
head -c 300M /dev/zero | gzip -1 >"$T/nul.gz"
refuse 1 "8: 300 MiB of NUL bytes are called binary within 200 MB" "binary file" \
	sh -c "$LIMIT exec kgen --from '$T/nul.gz' -o '$T/x.kg'"

# ---- 9. an output may be neither an input nor another output ----
cp "$T/s12.kg" "$T/G"
refuse 2 "9: kstat --svg G G" "--svg '.*/G' is the input '.*/G'" kstat --svg "$T/G" "$T/G"
ok "9: ... G is still the graph" cmp -s "$T/G" "$T/s12.kg"
refuse 2 "9: kstat --svg on one of several run records" "--svg '.*/r2.json' is the input" \
	sh -c "kbfs -q -r 10 --json '$T/r1.json' '$T/s12' >/dev/null && cp '$T/r1.json' '$T/r2.json' && kstat --svg '$T/r2.json' '$T/r1.json' '$T/r2.json'"
refuse 2 "9: kgen -o X --map X" "-o '.*/X' and --map '.*/X' are the same file" \
	kgen --from "$I/sparse.txt" -o "$T/X" --map "$T/X"
ok "9: ... X is not made" test ! -e "$T/X"
refuse 2 "9: kgen -o X --map ./X" "are the same file" kgen --from "$I/sparse.txt" -o "$T/X" --map "$T/./X"
cp "$I/sparse.txt" "$T/sparse.txt"
refuse 2 "9: kgen --from F -o F" "-o '.*/sparse.txt' is --from '.*/sparse.txt'" \
	kgen --from "$T/sparse.txt" -f text -o "$T/sparse.txt"
refuse 2 "9: kgen --from F --map F" "--map '.*/sparse.txt' is --from" \
	kgen --from "$T/sparse.txt" --map "$T/sparse.txt" -o "$T/x.kg"
ok "9: ... F is intact" cmp -s "$T/sparse.txt" "$I/sparse.txt"
cp -r "$T/s12" "$T/P"
refuse 2 "9: kbfs --json P/manifest" "--json '.*/P/manifest' is inside the partition '.*/P'" \
	kbfs -r 10 --json "$T/P/manifest" "$T/P"
refuse 2 "9: kbfs --json P/run.json, a new file inside the partition" "is inside the partition" \
	kbfs -r 10 --json "$T/P/run.json" "$T/P"
refuse 2 "9: kbfs --pred-out P" "--pred-out '.*/P' is the partition" kbfs -r 10 --pred-out "$T/P" "$T/P"
refuse 2 "9: kbfs --json D/pred-10.txt --pred-out D" "would write the same file" \
	kbfs -r 10 --json "$T/D9/pred-10.txt" --pred-out "$T/D9" "$T/P"
refuse 2 "9: kbfs --json ROOTS --roots ROOTS" "--json '.*/roots10' is --roots" \
	kbfs --roots "$T/roots10" --json "$T/roots10" "$T/P"
run_ok "9: ... P is still a whole partition" kpart --check "$T/P"
cp "$T/s12.kg" "$T/g.kpart"
refuse 2 "9: kpart g.kpart (whose default output is itself)" "-o '.*/g.kpart' is the edge file" \
	kpart -R 1 -C 1 "$T/g.kpart"
run_ok "9: --pred-out and --depth-out may share a directory" \
	kbfs -q -r 10 --pred-out "$T/D9" --depth-out "$T/D9" --json "$T/D9/run.json" "$T/P"
run_ok "9: two outputs to /dev/null are no clash" kgen -q --from "$I/sparse.txt" --map /dev/null -o /dev/null

# ---- 10. a run's outputs are committed all or none ----
echo "the old map" >"$T/old-map.txt"
must_fail 3 "10: kgen --from --map M -o /dev/full" kgen -q --from "$I/sparse.txt" --map "$T/old-map.txt" -o /dev/full
ok "10: ... M is the old map, not the new one" grep -q "the old map" "$T/old-map.txt"
ok "10: ... and no temporary is left" sh -c "! ls '$T'/old-map.txt.kbfs-tmp-* 2>/dev/null"
must_fail 3 "10: kgen --from --map M -o NODIR/x.kg (an edge file that cannot be made, after the map)" \
	kgen -q --from "$I/sparse.txt" --map "$T/old-map.txt" -o "$T/no-such-dir/x.kg"
ok "10: ... M is still the old map" grep -q "the old map" "$T/old-map.txt"
run_ok "10: kgen --from --map M -o G" kgen -q --from "$I/sparse.txt" --map "$T/old-map.txt" -o "$T/with-map.kg"
ok "10: ... writes both" sh -c "grep -q '^0 7\$' '$T/old-map.txt' && test -s '$T/with-map.kg'"
mkdir "$T/D10" && echo old >"$T/D10/pred-10.txt"
must_fail 3 "10: kbfs --pred-out D --json /dev/full" kbfs -q -r 10 --pred-out "$T/D10" --json /dev/full "$T/P"
is "$(cat "$T/D10/pred-10.txt")" old "10: ... the tree of this run is not committed without its record"
ok "10: ... nor left as a temporary" sh -c "! ls '$T'/D10/*kbfs-tmp* 2>/dev/null"
kbfs -q -n 3 --pred-out "$T/D10b" --json "$T/D10.json" "$T/P" >/dev/null
is "$(ls "$T"/D10b/pred-*.txt | wc -l)" 3 "10: a run that succeeds writes every tree"
# more held outputs than ktemp's first chunk of 64 slots: each one's lock
# goes at the commit too
kbfs -q -n 70 --pred-out "$T/D10d" "$T/P" >/dev/null
is "$(ls "$T"/D10d/pred-*.txt | wc -l) $(ls -a "$T/D10d" | grep -c kbfs-tmp)" "70 0" \
	"10: a run of 70 trees writes them all and leaves no temporary or lock"
# a failed validation is a verdict, not a failed run: its files are the evidence
KBFS_TEST_CORRUPT_PRED=1 kbfs -q -r 10 --pred-out "$T/D10c" --json "$T/D10c.json" "$T/P" >/dev/null 2>"$T/err"
is "$?" 1 "10: a search that fails validation (KBFS_TEST_CORRUPT_PRED): exit 1"
ok "10: ... its tree and its record are kept" test -s "$T/D10c/pred-10.txt" -a -s "$T/D10c.json"

# ---- 11. an id map that lists an id twice is refused ----
for p in kstat kvalidate kpart; do
	case $p in
	kvalidate) refuse 1 "11: $p, an edge file whose map lists id 7 twice" "lists id 7 twice (entries 0 and 1)" \
		kvalidate "$K/map-repeated-id.kedge" "$FIX/pred/valid-crlf-no-final-newline.txt" ;;
	kpart) refuse 1 "11: $p, the same" "lists id 7 twice (entries 0 and 1)" \
		kpart -R 1 -C 1 -o "$T/x" "$K/map-repeated-id.kedge" ;;
	*) refuse 1 "11: $p, the same" "lists id 7 twice (entries 0 and 1)" kstat "$K/map-repeated-id.kedge" ;;
	esac
done
refuse 1 "11: a map out of order" "does not ascend (entry 2, id 8, after id 9)" kstat "$K/map-descending.kedge"
refuse 1 "11: kgen --from converts no such file" "lists id 7 twice" kgen --from "$K/map-repeated-id.kedge" -o "$T/x.kg"
# repeat_orig DIR: in rank 0's file, the second real vertex gets the first's
# input id, every checksum made right again (kpart(5))
repeat_orig() {
	perl -MCompress::Zlib -e '
		my $d = shift; local $/;
		open(my $m, "<", "$d/manifest") or die; my $man = <$m>; close $m;
		my ($nb) = $man =~ /^nb = (\d+)$/m or die;
		my $f = "$d/rank-00000.kpart";
		open(my $r, "<:raw", $f) or die; my $b = <$r>; close $r;
		my $at = length($b) - 20 - 8 * $nb;
		my @o = unpack("Q<*", substr($b, $at, 8 * $nb));
		my @real = grep { $o[$_] != ~0 } 0 .. $#o;
		$o[$real[1]] = $o[$real[0]];
		substr($b, $at, 8 * $nb) = pack("Q<*", @o);
		my $body = substr($b, 0, length($b) - 20);
		my $t = "KEND" . pack("Q<V", unpack("Q<", substr($b, length($b) - 16, 8)), crc32($body));
		$b = $body . $t . pack("V", crc32($t));
		open($r, ">:raw", $f) or die; print $r $b; close $r;
		my $c = sprintf("%08x", crc32($b));
		$man =~ s/^(rank\.00000\.crc32 = )\w+$/$1$c/m;
		$man =~ s/^checksum = .*\n//m;
		$man .= sprintf("checksum = %08x\n", crc32($man));
		open($m, ">", "$d/manifest") or die; print $m $man; close $m;
	' "$1"
}
kgen -q --from "$I/sparse.txt" -o "$T/sparse.kg"
kpart -q -R 1 -C 1 -o "$T/twice" "$T/sparse.kg" && repeat_orig "$T/twice"
must_fail 1 "11: kpart --check finds the input id given twice" kpart --check "$T/twice"
refuse 1 "11: kbfs refuses the partition" "rank file of rank 0 lists input id [0-9]* twice (corrupt partition)" \
	kbfs -r 42 "$T/twice"
refuse 1 "11: kvalidate refuses it as a graph" "lists input id [0-9]* for two vertices (corrupt partition)" \
	kvalidate "$T/twice" "$FIX/pred/valid-crlf-no-final-newline.txt"

# ---- 12. a newline in a file's name adds no provenance key ----
inj=$T/$(printf 'a\nkind=kronecker\nscale=20\n.txt')
cp "$I/snap.txt" "$inj"
run_ok "12: kgen --from a file whose name holds newlines and keys" kgen -q --from "$inj" -o "$T/inj.kg"
run_ok "12: kstat of it" kstat "$T/inj.kg"
ok "12: ... an import, not a Kronecker graph of scale 20" sh -c "grep -q 'imported from .*a\\\\nkind=kronecker' '$T/out' && ! grep -q Kronecker '$T/out'"
ok "12: ... its header's argv line escapes the name as kedge(5) says" \
	grep -aq '^argv=kgen --from .*/a\\nkind=kronecker\\nscale=20\\n\.txt$' "$T/inj.kg"
run_ok "12: kpart of it" kpart -q -R 1 -C 1 -o "$T/inj" "$T/inj.kg"
ok "12: ... its manifest says an import of scale 0" sh -c "grep -q '^source_kind = import\$' '$T/inj/manifest' && grep -q '^scale = 0\$' '$T/inj/manifest'"
cp "$I/snap.txt" "$T/$(printf 'e\033[31m\nx=1.kg')"
kgen -q --from "$I/snap.txt" -o "$T/$(printf 'e\033[31m\nx=1.kg')"
run_ok "12: kpart of an edge file whose name holds a newline and an escape" \
	kpart -q -R 1 -C 1 -o "$T/esc" "$T/$(printf 'e\033[31m\nx=1.kg')"
ok "12: ... the manifest's source is one line, the bytes escaped" grep -q '^source = .*e\\x1b\[31m\\nx=1.kg$' "$T/esc/manifest"
ok "12: ... and no line of its own" sh -c "! grep -q '^x=1' '$T/esc/manifest'"
run_ok "12: ... a partition kpart --check accepts" kpart --check "$T/esc"

# ---- 13. junk after the data is refused ----
{ gzip -c "$I/snap.txt"; printf 'garbage!'; } >"$T/junk.txt.gz"
refuse 1 "13: kgen --from a gzip member followed by garbage" "junk.txt.gz': data after the gzip data" \
	kgen --from "$T/junk.txt.gz" -o "$T/x.kg"
refuse 1 "13: kstat of it" "data after the gzip data" kstat "$T/junk.txt.gz"
refuse 1 "13: the same on standard input" "data after the gzip data" sh -c "kgen --from - -o '$T/x.kg' <'$T/junk.txt.gz'"
{ gzip -c "$I/snap.txt"; gzip -c "$I/snap.txt"; } >"$T/two.txt.gz"
run_ok "13: two gzip members are one stream" kgen --from "$T/two.txt.gz" -o "$T/x.kg"
stderr_has "16 edges kept" "13: ... of both members' edges"
{ printf '10\n' | gzip; printf 'junk'; } >"$T/roots-junk.gz"
refuse 1 "13: a gzip'd roots file followed by junk" "data after the gzip data" kbfs --roots "$T/roots-junk.gz" "$T/s12"
{ gzip -c "$T/t6/pred-10.txt"; printf 'junk'; } >"$T/tree-junk.gz"
refuse 1 "13: a gzip'd tree followed by junk" "data after the gzip data" kvalidate "$T/s12.kg" "$T/tree-junk.gz"
printf '10\0junk\n' >"$T/roots-nul.txt"
refuse 1 "13: a roots line 10<NUL>junk" "roots-nul.txt:1: NUL byte in a text line" kbfs --roots "$T/roots-nul.txt" "$T/s12"
printf '# roots\n10\n\0\n' >"$T/roots-nul2.txt"
refuse 1 "13: a roots file with a NUL line" "roots-nul2.txt:3: NUL byte" kbfs --roots "$T/roots-nul2.txt" "$T/s12"
perl -pe 's/$/\0junk/ if $. == 3' "$T/t6/pred-10.txt" >"$T/tree-nul.txt"
refuse 1 "13: a text tree's line 0 P<NUL>junk" "tree-nul.txt:3: NUL byte in a text line" \
	kvalidate "$T/s12.kg" "$T/tree-nul.txt"
cp -r "$T/s12" "$T/binf" && sed -i 's/^construction_time = .*/construction_time = inf/' "$T/binf/build-info"
kbfs -q -r 10 --json "$T/binf.json" "$T/binf" >/dev/null 2>"$T/err"
stderr_has "build-info': no construction_time" "13: construction_time = inf in build-info is refused, as nan is"
ok "13: ... the run reports the load time instead" grep -q '"construction_time_from": "load"' "$T/binf.json"
sed -i 's/^construction_time = .*/construction_time = 1e999/' "$T/binf/build-info"
kbfs -q -r 10 --json "$T/binf.json" "$T/binf" >/dev/null 2>"$T/err"
ok "13: ... and so is 1e999 (not finite)" grep -q '"construction_time_from": "load"' "$T/binf.json"
printf 'construction_time = 2.5\0junk\n' >"$T/binf/build-info"
kbfs -q -r 10 --json "$T/binf.json" "$T/binf" >/dev/null 2>"$T/err"
stderr_has "build-info:1: NUL byte in a text line" "13: a build-info line 2.5<NUL>junk is refused"
ok "13: ... not read as 2.5" grep -q '"construction_time_from": "load"' "$T/binf.json"
cp -r "$T/s12" "$T/mnul" && perl -0pi -e 's/^(nv = \d+)$/$1\0x/m' "$T/mnul/manifest"
refuse 1 "13: a manifest with a NUL byte" "manifest:[0-9]*: NUL byte in a text line" kstat "$T/mnul"

# ---- 14. messages: the reason for a failed write, a BOM is text ----
refuse 3 "14: kbfs --json /dev/full" "cannot write '/dev/full': No space left on device" \
	sh -c "kbfs -q -r 10 --json /dev/full '$T/s12' >/dev/null"
refuse 3 "14: kstat --svg /dev/full, an edge file" "cannot write '/dev/full': No space left on device" \
	sh -c "kstat --svg /dev/full '$T/s12.kg' >/dev/null"
refuse 3 "14: kstat --svg /dev/full, a partition (it said nothing)" "cannot write '/dev/full': No space" \
	sh -c "kstat --svg /dev/full '$T/s12' >/dev/null"
refuse 3 "14: kstat --svg /dev/full, a run record (it said nothing)" "cannot write '/dev/full': No space" \
	sh -c "kstat --svg /dev/full '$T/r1.json' >/dev/null"
refuse 3 "14: kbfs --pred-out - >/dev/full, said once" "cannot write '-': No space left on device" \
	sh -c "kbfs -q -r 10 --pred-out - '$T/s12' >/dev/full"
refuse 3 "14: kgen -f text -o - >/dev/full, said once" "cannot write '-': No space left on device" \
	sh -c "kgen -q -s 4 -f text -o - >/dev/full"
{ printf '\357\273\277'; cat "$T/t6/pred-10.txt"; } >"$T/bom-tree.txt"
run_ok "14: kvalidate reads a text tree that starts with a UTF-8 BOM" kvalidate "$T/s12.kg" "$T/bom-tree.txt"
ok "14: ... and finds it valid" grep -q 'bom-tree.txt: valid, root 10' "$T/out"
{ printf '\357\273\277'; printf '10\n'; } >"$T/bom-roots.txt"
run_ok "14: kbfs --roots a file that starts with a BOM" kbfs -q --roots "$T/bom-roots.txt" "$T/s12"
{ printf '\357\273\277'; cat "$I/snap.txt"; } >"$T/bom-edges.txt"
run_ok "14: ... as an edge list with one is read" kgen -q --from "$T/bom-edges.txt" -o "$T/x.kg"

done_testing
