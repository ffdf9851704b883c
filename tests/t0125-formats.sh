#!/bin/bash
# Formats in and out: an edge file back to text (and to any kgen format);
# DIMACS .gr/.col and gapbs .sg/.wsg/.el imported; kstat on every format kgen
# reads; a binary file where text is expected is called a binary file.
. "$(dirname "$0")/lib.sh"
need_python
I=$FIX/import

# ---- an edge file is an input like any other ----
kgen -s 10 -o "$T/s10.kg"
kgen --from "$T/s10.kg" -f text -o "$T/back.txt" 2>"$T/err"
is "$(sha256_of "$T/back.txt")" "$(vector_sha kron-v3.0.1-s10-ef16.txt)" \
	"kgen --from g.kg -f text gives the reference's edge list back"
stderr_has "(kedge): 16384 edges" "... and says it read an edge file"
kgen -q --from - -f g500 -o "$T/back.bin" <"$T/s10.kg"
is "$(sha256_of "$T/back.bin")" "$(vector_sha kron-v3.0.1-s10-ef16.bin)" "an edge file on standard input, to the 12-byte layout"
kgen -s 10 | kgen -q --from - -z -o "$T/z.kg"
kstat "$T/z.kg" | grep -v -e '^file:' -e '^format:' >"$T/a"
kstat "$T/s10.kg" | grep -v -e '^file:' -e '^format:' >"$T/b"
ok "a pipe into kgen --from -z: same graph, provenance kept (Kronecker scale 10)" \
	sh -c "cmp -s '$T/a' '$T/b' && grep -q 'Kronecker scale 10' '$T/a'"
kgen -q --from "$I/sparse.txt" -o "$T/sparse.kg"
kgen -q --from "$T/sparse.kg" -f text -o "$T/sparse.out"
is "$(cksum <"$T/sparse.out")" "$(awk '{print $1, $2}' "$I/sparse.txt" | cksum)" "an imported file's own ids come back in text"

# ---- out to Matrix Market and gapbs .sg, and back ----
# stats GRAPH: kstat's figures without the file's name, format, source and
# the top vertex's id (Matrix Market numbers from 1)
stats() { kstat "$1" | grep -v -e '^file:' -e '^format:' -e '^source:' | sed 's/ (vertex [0-9]*)$//'; }
# edges GRAPH: the undirected tuples, each smaller id first, sorted
edges() { kgen -q --from "$1" -f text -o - | awk '{print ($1 < $2 ? $1 " " $2 : $2 " " $1)}' | sort; }
kgen -q --from "$T/s10.kg" -f mtx -o "$T/s10.mtx"
is "$(sed -n '1p;3p' "$T/s10.mtx" | tr '\n' ' ')" "%%MatrixMarket matrix coordinate pattern symmetric 1024 1024 16384 " \
	"-f mtx: a symmetric pattern matrix, nv x nv, an entry per tuple"
is "$(awk 'NR > 3 && ($1 < $2 || $2 < 1 || $1 > 1024)' "$T/s10.mtx" | wc -l)" 0 "... in the lower triangle, ids 1..1024"
kgen -q --from "$T/s10.mtx" -o "$T/m.kg" && kgen -q --from "$T/m.kg" -f mtx -o "$T/m.mtx"
ok "... imported and exported again: the same file" cmp -s "$T/s10.mtx" "$T/m.mtx"
ok "... the same graph (kstat's figures)" cmp -s <(stats "$T/s10.kg") <(stats "$T/m.kg")
is "$(edges "$T/m.kg" | awk '{print $1 - 1, $2 - 1}' | sort | cksum)" "$(edges "$T/s10.kg" | cksum)" "... the same tuples (ids one up)"
kgen -q --from "$T/s10.kg" -f sg -o "$T/s10.sg"
m=$(kstat "$T/s10.kg" | awk '/^edges:/ {e = $2} /^self-loops:/ {s = $2} END {print 2 * e - s}')
is "$(stat -c %s "$T/s10.sg")" "$((17 + 8 * 1025 + 4 * m))" "-f sg: an undirected gapbs graph, 2 entries per edge, 1 per self-loop"
is "$(head -c 1 "$T/s10.sg" | od -An -tu1 | tr -d ' ')" 0 "... marked undirected"
kgen -q --from "$T/s10.sg" -o "$T/sg.kg" && kgen -q --from "$T/sg.kg" -f sg -o "$T/sg.sg"
ok "... imported and exported again: the same file" cmp -s "$T/s10.sg" "$T/sg.sg"
ok "... the same graph (kstat's figures)" cmp -s <(stats "$T/s10.kg") <(stats "$T/sg.kg")
is "$(edges "$T/sg.kg" | cksum)" "$(edges "$T/s10.kg" | cksum)" "... the same tuples"
kgen --from "$I/sparse.txt" -f sg -o "$T/sparse.sg" 2>"$T/err"
stderr_has "has vertex ids of its own: the sg file numbers the vertices 0..nv-1 (--map FILE writes which is which)" \
	"a graph with its own ids: kgen says the export renumbers them"
must_fail 2 "-f sg of more than 2^31 vertices" kgen -s 32 -e 1 -f sg -o "$T/big.sg"
stderr_has "at most 2^31" "... says the format's limit"
ok "... and writes nothing" test ! -e "$T/big.sg"

# ---- kstat reads what kgen reads ----
kgen -s 10 -f text -o "$T/s10.el"
run_ok "kstat on a text edge list" kstat "$T/s10.el"
grep -v -e '^file:' -e '^format:' -e '^source:' "$T/out" >"$T/a"
kstat "$T/s10.kg" | grep -v -e '^file:' -e '^format:' -e '^source:' >"$T/b"
ok "... the same statistics as on the edge file" cmp -s "$T/a" "$T/b"
is "$(kstat - <"$T/s10.el" | sed -n 's/^format: *//p')" "edgelist" "kstat - reads text on standard input"
is "$(kstat "$I/mtx-sym.mtx" | sed -n 's/^edges: *//p')" 6 "kstat on Matrix Market"
is "$(kstat --json "$I/dimacs.gr" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["format"], d["vertices"], d["edges"])')" \
	"dimacs 4 6" "kstat --json on DIMACS names the format"

# ---- DIMACS ----
for f in dimacs.gr dimacs.gr.gz; do
	kgen --from "$I/$f" -o "$T/d.kg" 2>"$T/err"
	stderr_has "(dimacs): 9 lines read, 6 edges kept, 0 self-loops, 0 malformed lines skipped, 4 vertices" "$f: counts"
done
is "$(kgen -q --from "$I/dimacs.gr" -f text | tr '\n' ,)" "1 2,2 1,2 3,3 2,3 4,4 3," ".gr: every arc a tuple, 1-based ids kept"
is "$(kgen -q --from "$I/dimacs.col" -f text | tr '\n' ,)" "1 2,2 3,3 1,4 5," ".col ('p edge', 'e U V')"
must_fail 1 "a .gr with fewer arcs than its problem line" kgen --from "$I/dimacs-arc-count.gr" -o "$T/x.kg"
stderr_has "declares 3 arcs, the file has 2" "... says both counts"
must_fail 1 "a .gr arc out of range" kgen --from "$I/dimacs-out-of-range.gr" -o "$T/x.kg"
stderr_has "dimacs-out-of-range.gr:3: arc (1, 4) out of range 1..3" "... names the line"
must_fail 1 "--import-format dimacs on an edge list" kgen --import-format dimacs --from "$I/snap.txt" -o "$T/x.kg"

# ---- gapbs: .el is a text edge list; .sg/.wsg serialized CSR ----
printf '1 2\n2 3\n3 1\n4 5\n' >"$T/g.el"
is "$(kgen -q --from "$T/g.el" -f text | tr '\n' ,)" "1 2,2 3,3 1,4 5," "gapbs .el (as gapbs writes it, 1-based)"
# sg FILE DIRECTED ESZ OFFSETS... -- NEIGHBOURS... [-- IN-OFFSETS... -- IN-NEIGHBOURS...]:
# a serialized graph by its layout (header: u8 directed, i64 entries, i64 vertices)
sg() {
	local f=$1 dir=$2 esz=$3
	shift 3
	perl -e '
		my ($dir, $esz, @a) = @ARGV; my @parts = ([]); for (@a) { $_ eq "--" ? push(@parts, []) : push(@{$parts[-1]}, $_) }
		my ($off, $nb) = @parts; my $m = scalar @$nb; my $n = @$off - 1;
		print pack("C q< q<", $dir, $m, $n);
		for (my $k = 0; $k < @parts; $k += 2) {
			print pack("q<*", @{$parts[$k]});
			print map { $esz == 4 ? pack("l<", $_) : pack("l< l<", $_, 7) } @{$parts[$k + 1]};
		}' "$dir" "$esz" "$@" >"$f"
}
# a triangle 0-1-2 and an edge 3-4
sg "$T/u.sg" 0 4 0 2 4 6 7 8 -- 1 2 0 2 0 1 4 3
kgen --from "$T/u.sg" -f text -o "$T/u.txt" 2>"$T/err"
stderr_has "(sg): .*4 edges kept, 0 self-loops, 0 malformed lines skipped, 5 vertices" "an undirected .sg is detected"
is "$(tr '\n' , <"$T/u.txt")" "0 1,0 2,1 2,3 4," "... each edge once, 0-based ids kept"
sg "$T/u.wsg" 0 8 0 2 4 6 7 8 -- 1 2 0 2 0 1 4 3
is "$(kgen -q --from "$T/u.wsg" -f text | tr '\n' ,)" "0 1,0 2,1 2,3 4," "a .wsg: the weights are skipped"
gzip -n <"$T/u.sg" >"$T/u.sg.gz"
is "$(kgen -q --from - -f text <"$T/u.sg.gz" | tr '\n' ,)" "0 1,0 2,1 2,3 4," "a gzip'd .sg on standard input"
# directed 0->1, 1->2, 2->0, 3->4, with its in-neighbour lists
sg "$T/d.sg" 1 4 0 1 2 3 4 4 -- 1 2 0 4 -- 0 1 2 3 3 4 -- 2 0 1 3
is "$(kgen -q --from "$T/d.sg" -f text | tr '\n' ,)" "0 1,1 2,2 0,3 4," "a directed .sg: one tuple per arc"
run_ok "kstat on a .sg" kstat "$T/u.sg"
ok "... 5 vertices, 4 edges" sh -c "grep -q '^vertices: *5$' '$T/out' && grep -q '^edges: *4$' '$T/out'"
sg "$T/asym.sg" 0 4 0 2 3 4 5 6 -- 1 2 2 0 4 3
must_fail 1 "an undirected .sg whose lists are not symmetric" kgen --from "$T/asym.sg" -o "$T/x.kg"
stderr_has "not symmetric" "... says so"
sg "$T/range.sg" 0 4 0 1 2 2 2 2 -- 1 9
must_fail 1 "a .sg neighbour out of range" kgen --from "$T/range.sg" -o "$T/x.kg"
stderr_has "neighbour 9 of vertex 1 is not a vertex" "... names it"
head -c -4 "$T/u.sg" >"$T/short.sg"
must_fail 1 "a truncated .sg" kgen --from "$T/short.sg" -o "$T/x.kg"
stderr_has "should have 97 bytes (.sg) or 129 (.wsg), not 93" "... says the sizes"
sg "$T/notT.sg" 1 4 0 1 2 3 4 4 -- 1 2 0 4 -- 0 1 2 3 3 4 -- 2 0 0 3
must_fail 1 "a directed .sg whose in-lists are not the transpose" kgen --from "$T/notT.sg" -o "$T/x.kg"
must_fail 1 "--import-format sg on text" kgen --import-format sg --from "$I/snap.txt" -o "$T/x.kg"
stderr_has "not a gapbs serialized graph" "... says what it is not"

# ---- binary where text is expected ----
kgen -s 6 -f g500 -o "$T/g.g500"
must_fail 1 "kgen --from a binary file that is no graph" kgen --from "$T/g.g500" -o "$T/x.kg"
stderr_has "g.g500': binary file, neither a kbfs edge file nor a text graph" "... 'binary file'"
must_fail 1 "kstat on a binary file" kstat "$T/g.g500"
stderr_has "binary file" "... 'binary file'"
must_fail 1 "--import-format edgelist on an edge file" kgen --import-format edgelist --from "$T/s10.kg" -o "$T/x.kg"
stderr_has "binary file (a kbfs edge file)" "... names what it is"
printf '1 2\n3 \001\002\n' >"$T/ctl.txt"
must_fail 1 "control bytes in a text edge list" kgen --from "$T/ctl.txt" -o "$T/x.kg"
ok "... are shown escaped, not echoed" sh -c "grep -q \"id '.x01.x02'\" '$T/err' && ! grep -q \"\$(printf '\\001')\" '$T/err'"
done_testing
