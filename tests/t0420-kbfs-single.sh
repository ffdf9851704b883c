#!/bin/bash
# One search from one vertex: depths or parents on standard output (-), a
# one-line summary for -r instead of the 64-root block; a line per root and
# per kpart step on a terminal; the grid message's wording.
. "$(dirname "$0")/lib.sh"
need_mpi
export OMP_NUM_THREADS=1
kgen -s 10 -o "$T/g.kg" && kpart -q -R 1 -C 1 -o "$T/p" "$T/g.kg" && kpart -q -R 1 -C 2 -o "$T/p12" "$T/g.kg" ||
	{ echo "Bail out! kgen/kpart"; exit 1; }
R0=$(head -1 "$VEC/s10/roots.txt")
read -r _ _ NE3 _ DMAX REACHED < <(awk -v r="$R0" '$2 == r' "$VEC/s10/nedge_per_root.txt")

# ---- depths and parents on standard output ----
kbfs -r "$R0" --depth-out - "$T/p" >"$T/d.txt" 2>"$T/err"
is "$?" 0 "kbfs -r ROOT --depth-out - exits 0"
ok "the depths on stdout are the reference's depth.root0.txt" cmp -s "$T/d.txt" "$VEC/s10/depth.root0.txt"
ok "... and the summary went to stderr" grep -q "^root $R0: reached $REACHED vertices, depth $DMAX, nedge $NE3, .* TEPS, valid$" "$T/err"
kbfs -q -r "$R0" --depth-out - "$T/p" >"$T/d2.txt" 2>"$T/err"
ok "-q: the depths only, nothing on stderr" sh -c "cmp -s '$T/d.txt' '$T/d2.txt' && test ! -s '$T/err'"
MPIRUN 2 kbfs -q -r "$R0" --depth-out - "$T/p12" >"$T/d3.txt" 2>"$T/err"
ok "on two ranks too" cmp -s "$T/d3.txt" "$VEC/s10/depth.root0.txt"
kbfs -q -r "$R0" --pred-out - "$T/p" >"$T/pred.txt"
run_ok "the parents on stdout form a tree kvalidate accepts" kvalidate "$T/g.kg" "$T/pred.txt"
ok "... with the reference's nedge" grep -q "valid, root $R0, nedge $NE3," "$T/out"
kbfs -q -r "$R0" --pred-out - --pred-format bin "$T/p" | head -c 5 | tail -c 4 >"$T/magic"
is "$(cat "$T/magic")" "KPRD" "--pred-format bin to a pipe"

# ---- -r: a line per search instead of the block ----
kbfs -r "$R0" "$T/p" >"$T/out" 2>"$T/err"
is "$(wc -l <"$T/out" | tr -d ' ')" 1 "-r ROOT prints one line"
ok "... reached vertices, depth, nedge, time, TEPS, validity" grep -q "^root $R0: reached $REACHED vertices, depth $DMAX, nedge $NE3, [0-9.]* s, [0-9.e+]* TEPS, valid$" "$T/out"
ok "... not the statistics block" sh -c "! grep -q harmonic_mean_TEPS '$T/out'"
R1=$(sed -n 2p "$VEC/s10/roots.txt")
kbfs -r "$R0" -r "$R1" --no-validate "$T/p" >"$T/out"
is "$(cut -d: -f1 "$T/out" | tr '\n' ,)" "root $R0,root $R1," "-r twice: a line each, in order"
ok "--no-validate says so on the line" grep -q ', not validated$' "$T/out"
kbfs -n 2 "$T/p" >"$T/out"
ok "-n keeps the statistics block" grep -q '^bfs  harmonic_mean_TEPS: ' "$T/out"

# ---- usage ----
must_fail 2 "--depth-out - with two roots" kbfs -n 2 --depth-out - "$T/p"
stderr_has "one root's file goes to standard output" "... says why"
must_fail 2 "--depth-out - and --pred-out - together" kbfs -r "$R0" --depth-out - --pred-out - "$T/p"
must_fail 2 "--json - and --depth-out -" kbfs -r "$R0" --json - --depth-out - "$T/p"

# ---- progress on a terminal (script(1) gives one) ----
if command -v script >/dev/null; then
	script -qc "kbfs -n 3 '$T/p'" /dev/null 2>&1 | tr -d '\r' >"$T/tty"
	ok "on a terminal: one line per root as it finishes" sh -c "grep -q '^kbfs: 1/3 root ' '$T/tty' && grep -q '^kbfs: 3/3 root .*valid$' '$T/tty'"
	ok "... after a line saying the partition is loaded" grep -q "^kbfs: '.*' (1x1) loaded in " "$T/tty"
	kbfs -n 3 "$T/p" 2>"$T/err" | cat >/dev/null
	ok "not on a pipe" test ! -s "$T/err"
	script -qc "mpirun --allow-run-as-root --oversubscribe -np 2 kbfs -n 2 '$T/p12'" /dev/null 2>&1 | tr -d '\r' >"$T/tty"
	ok "under mpirun started from a terminal too" grep -q '^kbfs: 2/2 root ' "$T/tty"
	setsid -w mpirun --allow-run-as-root --oversubscribe -np 2 kbfs -n 2 "$T/p12" >"$T/out" 2>"$T/err" </dev/null
	ok "not under mpirun started without one (setsid)" sh -c "! grep -q '^kbfs: 2/2 root ' '$T/err'"
	script -qc "kpart -R 2 -C 1 -o '$T/p21' '$T/g.kg'" /dev/null 2>&1 | tr -d '\r' >"$T/tty"
	ok "kpart on a terminal: its five steps, each with its time" \
		sh -c "grep -q '^kpart: 1/5 pass 1: read, check, count ... [0-9.]* s$' '$T/tty' && grep -q '^kpart: 5/5 .* s$' '$T/tty'"
else
	skip "no script(1): no terminal to test progress on"
fi

# ---- the grid message ----
MPIRUN 2 kbfs "$T/p" >"$T/out" 2>"$T/err"
ok "a 1x1 partition under mpirun -np 2: 'one rank (1x1)', no '1 ranks'" \
	sh -c "grep -q 'partitioned for one rank (1x1) but this job has 2 ranks; run it without mpirun' '$T/err' && ! grep -q '1 ranks' '$T/err'"

# ---- a file where the partition goes: the command that makes one ----
must_fail 1 "kbfs on an edge file" kbfs "$T/g.kg"
stderr_has "'$T/g.kg' is an edge file, not a partition: make one with kpart -R 1 -C 1 -o $T/g.1x1 $T/g.kg (for one rank" \
	"... names the kpart command"
# the command it gives works, and kbfs runs on what it makes
(cd "$T" && kpart -q -R 1 -C 1 -o g.1x1 g.kg && kbfs -q -n 2 g.1x1 >/dev/null)
is "$?" 0 "... which makes a partition kbfs runs on"
kgen -q --from "$T/g.kg" -f text -o "$T/graph.txt"
must_fail 1 "kbfs on a text graph" kbfs "$T/graph.txt"
stderr_has "'$T/graph.txt' is not a partition: if it is a graph, import and partition it with kgen --from $T/graph.txt -o $T/graph.kg && kpart -R 1 -C 1 -o $T/graph.1x1 $T/graph.kg" \
	"... names the kgen and kpart commands"
done_testing
