#!/bin/bash
# kbfs-run: kgen, kpart and kbfs for a scale and a grid in one command, the
# files kept and reused when they match; 1x1 without mpirun, larger grids
# under it; options after -- reach kbfs; usage errors in one line.
. "$(dirname "$0")/lib.sh"
need_mpi
export OMP_NUM_THREADS=1
# the script from the source tree, so the programs it runs are the
# bin-wrappers on PATH (KBFS_EXEC)
KR="sh $TOP/share/kbfs-run"
mkdir "$T/w" && cd "$T/w" || exit 3
$KR 8 -- -n 4 >"$T/out" 2>"$T/err"
is "$?" 0 "kbfs-run 8 runs"
ok "... prints the Graph500 block (SCALE 8, 4 roots)" sh -c "grep -q '^SCALE: *8$' '$T/out' && grep -q '^NBFS: *4$' '$T/out'"
is "$(grep '^+ ' "$T/err" | sed 's/^+ \([a-z]*\).*/\1/' | tr '\n' ' ')" "kgen kpart kbfs " "... prints kgen, kpart, kbfs as it runs them, without mpirun"
ok "... keeps g.kg, g.1x1 and the JSON record in kbfs-s8-ef16" \
	sh -c "test -s kbfs-s8-ef16/g.kg && test -s kbfs-s8-ef16/g.1x1/manifest && ls kbfs-s8-ef16/run-1x1-*.json >/dev/null"
is "$(kstat kbfs-s8-ef16/g.kg | sed -n 's/^source: *//p')" "Kronecker scale 8, edgefactor 16, seeds 2 3, generator v3" \
	"... the Graph500 graph of scale 8"
before=$(stat -c '%Y %s' kbfs-s8-ef16/g.kg kbfs-s8-ef16/g.1x1/manifest)
sleep 1
$KR 8 -- -n 4 >"$T/out" 2>"$T/err"
is "$?" 0 "a second run"
is "$(grep '^+ ' "$T/err" | sed 's/^+ \([a-z]*\).*/\1/' | tr '\n' ' ')" "kbfs " "... runs kbfs alone"
ok "... says what it reuses" sh -c "grep -q 'reusing kbfs-s8-ef16/g.kg (scale 8, edge factor 16)' '$T/err' && grep -q 'reusing kbfs-s8-ef16/g.1x1' '$T/err'"
is "$(stat -c '%Y %s' kbfs-s8-ef16/g.kg kbfs-s8-ef16/g.1x1/manifest)" "$before" "... and leaves the files as they were"
is "$(ls kbfs-s8-ef16/run-1x1-*.json | wc -l)" 2 "... with a JSON record of its own"

$KR -g 1x2 8 -- -n 4 >"$T/out" 2>"$T/err"
is "$?" 0 "kbfs-run -g 1x2 8"
is "$(grep '^+ ' "$T/err" | sed 's/^+ //' | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^k(gen|part|bfs)$/) {print $1 "..." $i; next}}' | tr '\n' ' ')" \
	"mpirun...kpart mpirun...kbfs " "... reuses g.kg, partitions for 1x2 and searches under mpirun"
ok "... with mpirun -n 2" grep -q '^+ mpirun .*-n 2 kbfs' "$T/err"
ok "... beside the 1x1 partition" test -s kbfs-s8-ef16/g.1x2/manifest -a -s kbfs-s8-ef16/g.1x1/manifest
$KR -r 4 --dir "$T/d" 7 8 -- -n 2 >"$T/out" 2>"$T/err"
is "$?" 0 "kbfs-run -r 4 --dir D 7 8"
ok "... a 2x2 grid, edge factor 8, in D" sh -c "test -s '$T/d/g.2x2/manifest' && grep -q '^edgefactor: *8$' '$T/out' && grep -q '^num_mpi_processes: *4$' '$T/out'"

# what was made for other parameters is made again
touch -d '+1 min' kbfs-s8-ef16/g.kg
$KR 8 -- -n 2 >"$T/out" 2>"$T/err"
is "$(grep '^+ ' "$T/err" | sed 's/^+ \([a-z]*\).*/\1/' | tr '\n' ' ')" "kgen kpart kbfs " \
	"an edge file changed since kbfs-run wrote it: generated and partitioned again"
$KR 8 -- -n 2 >/dev/null 2>&1
touch -d '+2 min' kbfs-s8-ef16/g.kg
echo "kgen -s 8 -e 16 $(stat -c '%s %Y' kbfs-s8-ef16/g.kg)" >kbfs-s8-ef16/g.kg.params
$KR 8 -- -n 2 >"$T/out" 2>"$T/err"
is "$(grep '^+ ' "$T/err" | sed 's/^+ \([a-z]*\).*/\1/' | tr '\n' ' ')" "kpart kbfs " \
	"a partition older than its edge file: partitioned again"
$KR --new 8 -- -n 2 >"$T/out" 2>"$T/err"
is "$(grep '^+ ' "$T/err" | sed 's/^+ \([a-z]*\).*/\1/' | tr '\n' ' ')" "kgen kpart kbfs " "--new makes both again"

# the installed script runs the programs beside it
env -u MAKEFLAGS -u MFLAGS make -s -C "$TOP" install-files PREFIX=/usr DESTDIR="$T/stage" >/dev/null 2>&1
ok "make install puts kbfs-run beside the programs, and its man page" \
	test -x "$T/stage/usr/bin/kbfs-run" -a -f "$T/stage/usr/share/man/man1/kbfs-run.1"
(cd "$T" && env PATH=/usr/bin:/bin "$T/stage/usr/bin/kbfs-run" -d "$T/inst" 6 -- -n 2) >"$T/out" 2>"$T/err"
is "$?" 0 "... and runs from there with the programs off PATH"

# usage
cd "$T" || exit 3
for bad in "" "abc" "43" "8 0" "-g 2 8" "-g 2x 8" "-g 2x2 -r 4 8" "--bogus 8" "8 16 extra"; do
	# shellcheck disable=SC2086
	must_fail 2 "kbfs-run $bad" $KR $bad
done
$KR 2>"$T/err"
stderr_has "give the SCALE" "... names what is missing"
$KR --help >"$T/out"
ok "--help lists the options" sh -c "grep -q -- '--grid RxC' '$T/out' && grep -q -- '--ranks N' '$T/out' && grep -q -- '--mpirun CMD' '$T/out'"
$KR -d "$T/f" 5 -- --bogus >"$T/out" 2>"$T/err"
is "$?" 2 "a kbfs usage error: kbfs-run exits with kbfs's status"
ok "... after a line naming it" grep -q "kbfs-run: 'kbfs' failed (exit 2)" "$T/err"
done_testing
