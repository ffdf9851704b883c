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
printf 'x' >>"$T/p/rank-00000.kpart"
must_fail 1 "--check: a rank file with bytes appended" kpart --check "$T/p"
stderr_has "the manifest says" "--check: names the sizes"
done_testing
