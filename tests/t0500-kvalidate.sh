#!/bin/bash
# kvalidate: the reference's BFS trees are accepted with the reference's nedge,
# against edge files and partitions; corrupt trees (built here from the
# reference tree, named for their verdict) are refused naming the right rule;
# usage and I/O errors give the documented codes with one line.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-trees.sh"
need_python

command -v kvalidate >/dev/null || skip_all "bin/kvalidate not built"

S10=$VEC/s10
S12=$VEC/s12
nedge_v3() { awk '$1=="0"{print $3}' "$1/nedge_per_root.txt"; }
reached_v3() { awk '$1=="0"{print $6}' "$1/nedge_per_root.txt"; }

# valid_line FILE SDIR ROOT: the line kvalidate prints for a valid tree of SDIR
valid_line() {
	echo "$1: valid, root $3, nedge $(nedge_v3 "$2"), reached $(reached_v3 "$2"), max depth $(awk '$1=="0"{print $5}' "$2/nedge_per_root.txt")"
}

# verdict RULE NAME CMD...: CMD exits 1, prints "invalid: rule (RULE)" on stdout and no
# message of its own on stderr (mpirun may add its notice of a non-zero exit)
verdict() {
	local rule=$1 name=$2
	shift 2
	_n=$((_n + 1))
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ "$rc" -eq 1 ] && grep -q "invalid: rule ($rule)" "$T/out" && ! grep -q kvalidate "$T/err"; then
		echo "ok $_n - $name: $(sed 's/^[^:]*: //' "$T/out")"
	else
		echo "not ok $_n - $name (exit $rc, want 1 and rule ($rule))"
		sed 's/^/#   /' "$T/out" "$T/err" | head -10
		_failed=$((_failed + 1))
	fi
}

ref_edges 3.0.1 10 txt
EDG=$T/kron-v3.0.1-s10-ef16.txt
kgen -s 10 -o "$T/s10.kg" || exit 1
kgen -s 12 -o "$T/s12.kg" || exit 1
R10=$(head -1 "$S10/roots.txt")
R12=$(head -1 "$S12/roots.txt")

# ---- valid trees against edge files ----
run_ok "s10 reference tree, kedge file" kvalidate "$T/s10.kg" "$S10/parent.root0.ref3.0.1.txt"
is "$(cat "$T/out")" "$(valid_line "$S10/parent.root0.ref3.0.1.txt" "$S10" "$R10")" "s10: nedge $(nedge_v3 "$S10") as reference 3.0.1"
run_ok "s12 reference tree, kedge file" kvalidate "$T/s12.kg" "$S12/parent.root0.ref3.0.1.txt"
is "$(cat "$T/out")" "$(valid_line "$S12/parent.root0.ref3.0.1.txt" "$S12" "$R12")" "s12: nedge $(nedge_v3 "$S12") as reference 3.0.1"
run_ok "s10 reference tree, text edge list" kvalidate "$EDG" "$S10/parent.root0.ref3.0.1.txt"
ok "text edge list: same nedge" grep -q "nedge $(nedge_v3 "$S10")," "$T/out"
kgen -s 12 -z -o "$T/s12z.kg"
run_ok "compressed kedge file" kvalidate "$T/s12z.kg" "$S12/parent.root0.ref3.0.1.txt"
ok "compressed: same nedge" grep -q "nedge $(nedge_v3 "$S12")," "$T/out"
{ echo "# a comment"; echo "# root $R10"; cat "$S10/parent.root0.ref3.0.1.txt"; } >"$T/with-root.txt"
run_ok "a '# root' comment and --root agree" kvalidate --root "$R10" "$T/s10.kg" "$T/with-root.txt"
run_ok "--nedge with the right count passes rule (f)" kvalidate --nedge "$(nedge_v3 "$S10")" "$T/s10.kg" "$S10/parent.root0.ref3.0.1.txt"
run_ok "--json" kvalidate --json "$T/s10.kg" "$S10/parent.root0.ref3.0.1.txt"
ok "JSON has valid, root and nedge" python3 -c "
import json; d=json.loads(open('$T/out').readline())
assert d['valid'] is True and d['root']==$R10 and d['nedge']==$(nedge_v3 "$S10"), d"
run_ok "-q prints nothing for a valid tree" kvalidate -q "$T/s10.kg" "$S10/parent.root0.ref3.0.1.txt"
ok "-q: empty output" test ! -s "$T/out"
mkdir "$T/preds"
cp "$S10/parent.root0.ref3.0.1.txt" "$T/preds/pred-0"
cp "$S10/parent.root0.ref3.0.1.txt" "$T/preds/pred-1"
echo junk >"$T/preds/other.txt"
run_ok "a directory: every pred-* file" kvalidate "$T/s10.kg" "$T/preds"
is "$(grep -c ': valid, ' "$T/out")" 2 "two trees checked, other.txt ignored"

# ---- corrupt trees, built from the reference tree ----
PAR=$S10/parent.root0.ref3.0.1.txt
DEP=$S10/depth.root0.txt
C=$T/corrupt
mkdir "$C"
corrupt_trees "$DEP" "$PAR" "$EDG" "$R10" "$C"
for f in "$C"/*.txt; do
	ok "$(basename "$f") differs from the reference in one line" \
		test "$(diff "$PAR" "$f" | grep -c '^>')" -eq 1
done

verdict c "parent changed to a non-neighbour" kvalidate "$T/s10.kg" "$C/rule-c-nonneighbour.txt"
ok "names the missing tree edge" grep -q "not its neighbour" "$T/out"
verdict c "a cycle" kvalidate "$T/s10.kg" "$C/rule-c-cycle.txt"
ok "names the cycle" grep -q "cycle" "$T/out"
verdict d "a skipped level" kvalidate "$T/s10.kg" "$C/rule-d-skipped-level.txt"
verdict e "an unreached vertex of the component" kvalidate "$T/s10.kg" "$C/rule-e-unreached-in-component.txt"
verdict e "a reached vertex outside the component" kvalidate "$T/s10.kg" "$C/rule-e-reached-outside.txt"
verdict b "the root's parent is a child (--root)" kvalidate --root "$R10" "$T/s10.kg" "$C/rule-b-root-parent.txt"
verdict b "the root's parent is a child (no root given)" kvalidate "$T/s10.kg" "$C/rule-b-root-parent.txt"
verdict b "the root unreached (--root)" kvalidate --root "$R10" "$T/s10.kg" "$C/rule-b-root-unreached.txt"
verdict a "a parent that is not a vertex" kvalidate "$T/s10.kg" "$C/rule-a-parent-not-vertex.txt"
verdict f "--nedge with a wrong count" kvalidate --nedge 1 "$T/s10.kg" "$PAR"
verdict b "--root differs from the file's '# root'" kvalidate --root 0 "$T/s10.kg" "$T/with-root.txt"
if have_mpi; then
	for f in "$C"/rule-*.txt; do
		r=$(basename "$f" | sed 's/^rule-\(.\).*/\1/')
		verdict "$r" "edge file on 2 ranks: $(basename "$f")" MPIRUN 2 kvalidate --root "$R10" "$T/s10.kg" "$f"
	done
fi
_n=$((_n + 1))
kvalidate "$T/s10.kg" "$PAR" "$C/rule-c-cycle.txt" "$PAR" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(grep -c ': valid, ' "$T/out")" -eq 2 ] && [ "$(grep -c ': invalid: ' "$T/out")" -eq 1 ]; then
	echo "ok $_n - one invalid tree among three: exit 1, one line each"
else
	echo "not ok $_n - one invalid tree among three (exit $rc)"
	_failed=$((_failed + 1))
fi
is "$(tail -1 "$T/out" | sed 's/ (.*//')" "3 trees: 2 valid, 1 invalid" "... then a summary line"
ok "... with the time spent" grep -q '^3 trees: 2 valid, 1 invalid ([0-9.]* s validating, [0-9.]* s per tree)$' "$T/out"
kvalidate -q "$T/s10.kg" "$PAR" "$C/rule-c-cycle.txt" "$PAR" >"$T/out" 2>"$T/err"
is "$(grep -c . "$T/out") $(grep -c ': invalid: ' "$T/out")" "1 1" "-q: the invalid tree's line alone, no summary"
kvalidate "$T/s10.kg" "$PAR" >"$T/out" 2>"$T/err"
is "$(grep -c . "$T/out")" 1 "one tree: its line, no summary"
kvalidate --help >"$T/out"
is "$(grep -c -- '-q, --quiet' "$T/out")" 1 "--help lists -q once"

# ---- partitions ----
if command -v kpart >/dev/null; then
	run_ok "kpart 1x1 of s10" kpart -R 1 -C 1 -o "$T/p11" "$T/s10.kg"
	run_ok "s10 tree against the 1x1 partition" kvalidate "$T/p11" "$PAR"
	is "$(cat "$T/out")" "$(valid_line "$PAR" "$S10" "$R10")" "1x1: nedge $(nedge_v3 "$S10")"
	run_ok "kpart 2x2 of s10" kpart -R 2 -C 2 -o "$T/p22" "$T/s10.kg"
	run_ok "kpart 2x2 of s12" kpart -R 2 -C 2 -o "$T/p22s12" "$T/s12.kg"
	must_fail 2 "a 2x2 partition on one rank is refused" kvalidate "$T/p22" "$PAR"
	stderr_has "mpirun -np 4" "suggests mpirun -np 4"
	if have_mpi; then
		run_ok "s10 tree against the 2x2 partition (4 ranks)" MPIRUN 4 kvalidate "$T/p22" "$PAR"
		is "$(cat "$T/out")" "$(valid_line "$PAR" "$S10" "$R10")" "2x2: nedge $(nedge_v3 "$S10")"
		run_ok "s12 tree against the 2x2 partition (4 ranks)" MPIRUN 4 kvalidate "$T/p22s12" "$S12/parent.root0.ref3.0.1.txt"
		is "$(cat "$T/out")" "$(valid_line "$S12/parent.root0.ref3.0.1.txt" "$S12" "$R12")" "2x2 s12: nedge $(nedge_v3 "$S12")"
		run_ok "kpart 2x2 --relabel degree of s10" kpart -R 2 -C 2 --relabel degree -o "$T/p22r" "$T/s10.kg"
		run_ok "s10 tree against the relabelled 2x2 partition" MPIRUN 4 kvalidate "$T/p22r" "$PAR"
		is "$(cat "$T/out")" "$(valid_line "$PAR" "$S10" "$R10")" "relabelled 2x2: nedge $(nedge_v3 "$S10")"
		verdict e "relabelled 2x2: the offender is named by its input id" MPIRUN 4 kvalidate "$T/p22r" "$C/rule-e-reached-outside.txt"
		ok "relabelled 2x2: input ids 616 and 708 in the message" grep -q "vertex 616 is not reached but its neighbour 708 " "$T/out"
		run_ok "s10 edge file on 3 ranks" MPIRUN 3 kvalidate "$T/s10.kg" "$PAR"
		ok "3 ranks: same nedge" grep -q "nedge $(nedge_v3 "$S10")," "$T/out"
	else
		skip "no mpirun: 2x2 partition not checked"
	fi
	for f in "$C"/rule-*.txt; do
		r=$(basename "$f" | sed 's/^rule-\(.\).*/\1/')
		verdict "$r" "1x1 partition: $(basename "$f")" kvalidate --root "$R10" "$T/p11" "$f"
		have_mpi && verdict "$r" "2x2 partition: $(basename "$f")" MPIRUN 4 kvalidate --root "$R10" "$T/p22" "$f"
	done
else
	skip "bin/kpart not built: partitions not checked"
fi

# ---- kbfs output ----
if command -v kbfs >/dev/null && command -v kpart >/dev/null && [ -d "$T/p11" ]; then
	if kbfs -q --pred-out "$T/kbfs-pred" --pred-format text "$T/p11" >/dev/null 2>"$T/err"; then
		run_ok "kvalidate accepts kbfs --pred-out trees" kvalidate -q "$T/p11" "$T/kbfs-pred"
	else
		skip "kbfs --pred-out failed: $(head -1 "$T/err")"
	fi
else
	skip "bin/kbfs not built: its trees not checked"
fi

# ---- errors ----
printf '0 0\n1 x\n' >"$T/malformed.txt"
must_fail 1 "a malformed pred file" kvalidate "$T/s10.kg" "$T/malformed.txt"
stderr_has "malformed.txt:2: " "names FILE:LINE"
printf '\211KPRD\r\n\032\001\000' >"$T/truncated.kpred"
must_fail 1 "a truncated binary pred file" kvalidate "$T/s10.kg" "$T/truncated.kpred"
stderr_has "truncated" "names truncation"
must_fail 3 "a missing pred file" kvalidate "$T/s10.kg" "$T/nope.txt"
stderr_has "cannot open '$T/nope.txt'" "names the file"
must_fail 3 "a missing graph" kvalidate "$T/nope.kg" "$PAR"
head -c 3000 "$T/s10.kg" >"$T/trunc.kg"
must_fail 1 "a truncated graph" kvalidate "$T/trunc.kg" "$PAR"
must_fail 2 "no arguments" kvalidate
must_fail 2 "no PRED" kvalidate "$T/s10.kg"
must_fail 2 "an unknown option" kvalidate --bogus "$T/s10.kg" "$PAR"
must_fail 2 "a bad --root" kvalidate --root 12abc "$T/s10.kg" "$PAR"
run_ok "--help exits 0" kvalidate --help
ok "--help shows the usage" grep -q '^Usage: kvalidate' "$T/out"
run_ok "--version exits 0" kvalidate --version
done_testing
